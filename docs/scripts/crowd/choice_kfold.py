#!/usr/bin/env python3
"""How concord's rater-model choice would fare with other criteria (issue 29, branch c29grade).

For every dataset folder given (ratings.csv: item_id, rater_id, label; items.csv: item_id and a gold or truth
column), this runs `concord fit --model confusion --duplicates keep` with defaults (auto: the evidence chooses)
and with each rater model forced (--rater-model one-coin|confusion|communities|spammer), and then scores the
three candidates that auto compares (one-coin, communities, spammer) by K-fold cross-validation over the labels:
the labels are split into K folds by a seeded permutation (random.Random(12345)), each candidate is fitted on
the other K-1 folds, and a held-out label (item n, rater l, label y) scores
ln sum_c q_train(z_n = c) E_train[pi_l[c, y]], q_train the item's class posterior of that fit (the class
proportions if all of the item's labels are held out) and E_train the rater's posterior mean confusion row (the
mean of the raters' rows for a rater with no training label). It prints per dataset: each forced model's
accuracy, the default's choice and accuracy, the candidate the K-fold score would choose and its accuracy,
Bayesian model averaging of the three candidates' item posteriors with weights exp(score) (score = ELBO less the
hyperparameters' cost, the fit document's model.confusion.rater_model_candidates), the choice by the fit's own
leave-one-label-out estimate (held_out), and majority vote of every label with ties counted 1/t.
Gold labels are read only to score; the fits never see them.

    python3 docs/scripts/crowd/choice_kfold.py --concord /tmp/concord --work /tmp/c29kf DIR...

Fits are cached under --work (delete it to refit). -j sets the number of concurrent fits.
"""
import argparse, concurrent.futures as cf, csv, json, math, os, random, subprocess
from collections import Counter, defaultdict

FORCED = ["one-coin", "confusion", "communities", "spammer"]
AUTO = ["one-coin", "communities", "spammer"]  # the candidates auto compares


def fit(binary, labels, out, model=None):
    if os.path.exists(out) or os.path.exists(out + ".err"):
        return
    args = [binary, "fit", "--labels", labels, "--duplicates", "keep", "--model", "confusion", "--out", out]
    if model:
        args += ["--rater-model", model]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        with open(out + ".err", "w") as fh:
            fh.write(r.stderr)


def load(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def read_gold(d):
    g = {}
    with open(os.path.join(d, "items.csv"), newline="") as fh:
        for row in csv.DictReader(fh):
            v = (row.get("gold") or row.get("truth") or "").strip()
            if v:
                g[row["item_id"].strip()] = v
    return g


def read_rows(d):
    with open(os.path.join(d, "ratings.csv"), newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def accuracy(doc, gold):
    if doc is None:
        return float("nan")
    cl = {it["id"]: it.get("class") for it in doc["items"]}
    return sum(cl.get(i) == y for i, y in gold.items()) / len(gold)


def tied_majority(rows, gold):
    c = defaultdict(Counter)
    for r in rows:
        c[r[0]][r[2]] += 1
    s = 0.0
    for i, y in gold.items():
        if i in c:
            m = max(c[i].values())
            t = [k for k, v in c[i].items() if v == m]
            s += (y in t) / len(t)
    return s / len(gold)


def heldout_score(doc, rows, fold, f):
    """Sum of ln p(held-out label) for the labels of fold f under the fit doc."""
    lev = [str(x) for x in doc["levels"]]
    li = {x: i for i, x in enumerate(lev)}
    k = len(lev)
    q = {it["id"]: [it["class_probs"][x] for x in lev] for it in doc["items"]}
    cp = [x["mean"] for x in doc["class_proportions"]]
    rt = {r["id"]: [[c["mean"] for c in row] for row in r["confusion_probs"]] for r in doc["raters"]}
    avg = [[sum(m[a][b] for m in rt.values()) / len(rt) for b in range(k)] for a in range(k)]
    tot = 0.0
    for i, r in enumerate(rows):
        if fold[i] != f:
            continue
        if r[2] not in li:
            tot += math.log(1e-300)
            continue
        qi, pi, j = q.get(r[0], cp), rt.get(r[1], avg), li[r[2]]
        tot += math.log(max(sum(qi[c] * pi[c][j] for c in range(k)), 1e-300))
    return tot


def prepare(d, work, k):
    """Writes the K training files of d and returns the jobs, rows and folds."""
    name = os.path.basename(os.path.normpath(d))
    o = os.path.join(work, name)
    os.makedirs(o, exist_ok=True)
    head, rows = read_rows(d)
    idx = list(range(len(rows)))
    random.Random(12345).shuffle(idx)
    fold = [0] * len(rows)
    for rank, i in enumerate(idx):
        fold[i] = rank % k
    jobs = [(os.path.join(d, "ratings.csv"), os.path.join(o, "auto.json"), None)]
    jobs += [(os.path.join(d, "ratings.csv"), os.path.join(o, m + ".json"), m) for m in FORCED]
    for f in range(k):
        p = os.path.join(o, f"train{f}.csv")
        if not os.path.exists(p):
            with open(p, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(head)
                w.writerows(r for i, r in enumerate(rows) if fold[i] != f)
        jobs += [(p, os.path.join(o, f"{m}.fold{f}.json"), m) for m in AUTO]
    return name, o, rows, fold, jobs


def bma_accuracy(docs, cands, gold):
    sc = {c["model"]: c["score"] for c in cands if not c.get("failed") and not c.get("excluded")}
    mx = max(sc.values())
    w = {m: math.exp(s - mx) for m, s in sc.items() if docs.get(m)}
    z = sum(w.values())
    post = defaultdict(lambda: defaultdict(float))
    for m, wm in w.items():
        for it in docs[m]["items"]:
            for c, p in it["class_probs"].items():
                post[it["id"]][c] += wm / z * p
    return sum(i in post and max(post[i], key=post[i].get) == y for i, y in gold.items()) / len(gold)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--concord", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("-k", type=int, default=3)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    sets = [prepare(d, a.work, a.k) for d in a.dirs]
    with cf.ThreadPoolExecutor(a.j) as ex:
        list(ex.map(lambda j: fit(a.concord, *j), [j for s in sets for j in s[4]]))
    print(f"{'dataset':34s} {'1coin':>6s} {'conf':>6s} {'comm':>6s} {'spam':>6s} | {'auto':>6s} {'chosen':11s} | "
          f"{'kfold':11s} {'acc':>6s} {'margin':>7s} | {'bma':>6s} | {'loo':11s} {'acc':>6s} | {'MV 1/t':>6s}")
    for (name, o, rows, fold, _), d in zip(sets, a.dirs):
        gold = read_gold(d)
        docs = {m: load(os.path.join(o, m + ".json")) for m in FORCED + ["auto"]}
        if docs["auto"] is None or not gold:
            print(f"{name:34.34s} auto fit failed or no gold")
            continue
        acc = {m: accuracy(docs[m], gold) for m in docs}
        cands = docs["auto"]["model"]["confusion"].get("rater_model_candidates", [])
        chosen = next((c["model"] for c in cands if c.get("chosen")), "")
        kf = {}
        for m in AUTO:
            fd = [load(os.path.join(o, f"{m}.fold{f}.json")) for f in range(a.k)]
            kf[m] = float("nan") if None in fd else sum(heldout_score(fd[f], rows, fold, f) for f in range(a.k))
        kch = max(kf, key=lambda m: -math.inf if math.isnan(kf[m]) else kf[m])
        s = sorted(kf.values())
        ok = [c for c in cands if not c.get("failed")]
        loo = max(ok, key=lambda c: c["held_out"])["model"] if ok else ""
        print(f"{name:34.34s} {acc['one-coin']:6.4f} {acc['confusion']:6.4f} {acc['communities']:6.4f} {acc['spammer']:6.4f} | "
              f"{acc['auto']:6.4f} {chosen:11s} | {kch:11s} {acc[kch]:6.4f} {s[-1] - s[-2]:7.1f} | "
              f"{bma_accuracy(docs, cands, gold):6.4f} | {loo:11s} {acc.get(loo, float('nan')):6.4f} | {tied_majority(rows, gold):6.4f}")


if __name__ == "__main__":
    main()
