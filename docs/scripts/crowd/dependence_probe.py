#!/usr/bin/python3
"""Residual dependence of the labels under the one-coin and the full confusion
(Dawid-Skene) rater models: does the richer model absorb the raters' correlated
errors? (issue 29, branch c29corr; see README.md, "Correlated errors".)

    /usr/bin/python3 docs/scripts/crowd/dependence_probe.py [--seed 1] [--sims 20] DIR...

Each DIR is a dataset folder of this benchmark (ratings.csv: item_id,
rater_id, label; items.csv: item_id, gold, read only to print the accuracy).
Both models are fitted by EM with point estimates from majority vote (add-one
smoothing of the counts and of the class shares; 300 iterations), so that the
check is the same for both and cheap. Then, for every pair of labels of one
item by two different raters a, b, the probability that they agree under the
fitted model and conditional independence, given the item's other labels:

    P(agree) = sum_k q_-ab(k) sum_j pi_a[k, j] pi_b[k, j],

q_-ab the item's class posterior without the two labels (the leave-pair-out
analogue of the leave-one-label-out score the rater-model choice uses), and

    z = (observed agreements - sum P) / sqrt(sum P (1 - P))

over every such pair (positive: raters agree more than the model predicts),
and chi2 = sum over rater pairs of (O - E)^2 / V. The null is calibrated by
simulation, seeded (numpy PCG64(seed)): labels drawn from the fitted model at
the same design (each item's class from its fitted posterior, each label from
its rater's fitted row), scored with the same fitted parameters (no refit);
the table gives the observed z and chi2 and the simulated mean and sd.

A guard against a rich model absorbing dependence (issue 29 (b)) would prefer
one-coin where the confusion model's residual is far above its null while
one-coin's is not, or take from the confusion model's score the chi2 it
absorbs (chi2(one-coin) - chi2(confusion)) / 2 nats. The table prints both.
"""
import argparse, csv, sys
import numpy as np


def load(d):
    rows = list(csv.DictReader(open(d + "/ratings.csv")))
    gold = {}
    try:
        # "gold" in this benchmark's folders, "truth" in ../shared/data's
        gold = {r["item_id"]: r.get("gold", r.get("truth", "")) for r in csv.DictReader(open(d + "/items.csv"))}
        gold = {k: v for k, v in gold.items() if v not in ("", None)}
    except FileNotFoundError:
        pass
    items = sorted({r["item_id"] for r in rows})
    raters = sorted({r["rater_id"] for r in rows})
    labs = sorted({r["label"] for r in rows})
    ii = {x: i for i, x in enumerate(items)}
    ri = {x: i for i, x in enumerate(raters)}
    li = {x: i for i, x in enumerate(labs)}
    I = np.array([ii[r["item_id"]] for r in rows])
    R = np.array([ri[r["rater_id"]] for r in rows])
    Y = np.array([li[r["label"]] for r in rows])
    g = np.array([li.get(gold[x], -1) if x in gold else -2 for x in items])
    return I, R, Y, len(items), len(raters), len(labs), g


def fit(I, R, Y, N, L, K, model, iters=300):
    q = np.zeros((N, K))
    np.add.at(q, (I, Y), 1)
    q /= q.sum(1, keepdims=True)
    for _ in range(iters):
        rho = (q.sum(0) + 1) / (N + K)
        if model == "one-coin":
            c = np.bincount(R, weights=q[I, Y], minlength=L) + 1
            s = c / (np.bincount(R, minlength=L) + 2)
            pi = np.repeat(((1 - s) / (K - 1))[:, None, None], K, 1).repeat(K, 2)
            for k in range(K):
                pi[:, k, k] = s
        else:
            cnt = np.ones((L, K, K))
            for k in range(K):
                np.add.at(cnt, (R, k, Y), q[I, k])
            pi = cnt / cnt.sum(2, keepdims=True)
        lp = np.tile(np.log(rho), (N, 1))
        np.add.at(lp, I, np.log(pi[R, :, Y]))
        q = np.exp(lp - lp.max(1, keepdims=True))
        q /= q.sum(1, keepdims=True)
    return q, pi, rho


def pairs(I, R):
    """Index pairs (a, b) of labels of one item by two different raters."""
    order = np.argsort(I, kind="stable")
    pa, pb = [], []
    start = 0
    Is = I[order]
    for e in range(1, len(order) + 1):
        if e == len(order) or Is[e] != Is[start]:
            ix = order[start:e]
            if len(ix) > 1:
                a, b = np.triu_indices(len(ix), 1)
                pa.append(ix[a])
                pb.append(ix[b])
            start = e
    if not pa:
        return np.zeros(0, int), np.zeros(0, int)
    pa, pb = np.concatenate(pa), np.concatenate(pb)
    keep = R[pa] != R[pb]
    return pa[keep], pb[keep]


def residual(I, R, Y, N, K, pi, rho, pa, pb):
    lp = np.tile(np.log(rho), (N, 1))
    lpi = np.log(pi)
    np.add.at(lp, I, lpi[R, :, Y])
    l = lp[I[pa]] - lpi[R[pa], :, Y[pa]] - lpi[R[pb], :, Y[pb]]
    qq = np.exp(l - l.max(1, keepdims=True))
    qq /= qq.sum(1, keepdims=True)
    p = np.einsum("pk,pkj,pkj->p", qq, pi[R[pa]], pi[R[pb]])
    o = (Y[pa] == Y[pb]).astype(float)
    z = (o.sum() - p.sum()) / np.sqrt((p * (1 - p)).sum())
    key = np.minimum(R[pa], R[pb]) * (R.max() + 1) + np.maximum(R[pa], R[pb])
    _, inv = np.unique(key, return_inverse=True)
    O, E, V = (np.bincount(inv, weights=w) for w in (o, p, p * (1 - p)))
    chi = ((O - E) ** 2 / np.maximum(V, 1e-9)).sum()
    return z, chi


def simulate(rng, I, R, N, K, q, pi):
    z = (rng.random(N)[:, None] > np.cumsum(q, 1)).sum(1).clip(0, K - 1)
    rows = pi[R, z[I]]
    return (rng.random(len(I))[:, None] > np.cumsum(rows, 1)).sum(1).clip(0, K - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sims", type=int, default=20)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    print("%-30s %-9s %7s %8s %14s %9s %16s" % ("dataset", "model", "acc", "z", "z null", "chi2", "chi2 null"))
    for d in a.dirs:
        name = d.rstrip("/").split("/")[-1]
        I, R, Y, N, L, K, g = load(d)
        pa, pb = pairs(I, R)
        if len(pa) == 0:
            print("%-30s no item has labels by two raters: nothing to check" % name)
            continue
        chis = {}
        for m in ("one-coin", "confusion"):
            q, pi, rho = fit(I, R, Y, N, L, K, m)
            z, chi = residual(I, R, Y, N, K, pi, rho, pa, pb)
            rng = np.random.Generator(np.random.PCG64(a.seed))
            null = np.array([residual(I, R, simulate(rng, I, R, N, K, q, pi), N, K, pi, rho, pa, pb) for _ in range(a.sims)])
            has = g != -2
            acc = np.mean(q.argmax(1)[has] == g[has]) if has.any() else float("nan")
            chis[m] = chi
            print("%-30s %-9s %7.4f %8.1f %6.1f +- %4.1f %9.0f %8.0f +- %5.0f" % (name, m, acc, z, null[:, 0].mean(), null[:, 0].std(), chi, null[:, 1].mean(), null[:, 1].std()))
        print("%-30s absorbed by confusion: (chi2 one-coin - chi2 confusion)/2 = %.0f nats; %d label pairs" % (name, (chis["one-coin"] - chis["confusion"]) / 2, len(pa)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
