"""Compare two concord auc fit documents of the same items (issue 35: the
sampled pair sites against every pair): Spearman correlation of the
items' scores, the training AUC of each, and the AUC of each fit's scores
against the synthetic truth (the ladder's gold.csv, column gold).

usage: python3 compare.py EXACT.json APPROX.json [gold.csv]
"""
import csv
import json
import sys



def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5


def roc_auc(y, s):
    # Mann-Whitney: the mean rank of the positives.
    r = ranks(s)
    npos = sum(y)
    nneg = len(y) - npos
    return (sum(ri for ri, yi in zip(r, y) if yi) - npos * (npos - 1) / 2) / (npos * nneg)


def scores(path):
    d = json.load(open(path))
    return d, {it["id"]: it["score"]["mean"] for it in d["items"] if it.get("score")}


def main():
    a, sa = scores(sys.argv[1])
    b, sb = scores(sys.argv[2])
    ids = sorted(set(sa) & set(sb))
    rho = spearman([sa[i] for i in ids], [sb[i] for i in ids])
    print(f"items {len(ids)}  Spearman {rho:.4f}")
    for name, d in (("exact", a), ("approx", b)):
        au = d["auc"]
        print(f"{name}: gamma {au['gamma']}, pair sites {au.get('pair_sites', au['pairs'])} of {au['pairs']}, "
              f"rank {au.get('rank', 0)}, train AUC {d['train_auc']:.4f}")
    if len(sys.argv) > 3:
        gold = {r["item_id"]: int(r["gold"]) for r in csv.DictReader(open(sys.argv[3]))}
        g = [i for i in ids if i in gold]
        for name, s in (("exact", sa), ("approx", sb)):
            print(f"{name}: AUC against the synthetic truth {roc_auc([gold[i] for i in g], [s[i] for i in g]):.4f}")


if __name__ == "__main__":
    main()
