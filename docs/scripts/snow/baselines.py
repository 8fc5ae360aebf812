"""Simple consensus estimators on Snow et al.'s affect ratings against the
experts' scores (Pearson), for docs/scripts/snow/README.md: the raters' mean,
median (the usual one: the mean of the two middle ratings of ten), 10% and 20%
trimmed means, and two linear rater models y = a_l + b_l f_n + e fitted by EM
on the raw scale (f_n ~ N(0, 1)): additive bias with one noise sd, and bias,
slope and each rater's own noise sd.

Run:  /usr/bin/python3 docs/scripts/snow/baselines.py [../shared/data/snow2008_affect]
"""
import csv
import os
import sys

import numpy as np
from scipy.stats import trim_mean

folder = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/snow2008_affect"
items = {r["item_id"]: r for r in csv.DictReader(open(os.path.join(folder, "items.csv")))}
ratings = list(csv.DictReader(open(os.path.join(folder, "ratings.csv"))))
DIMS = ["anger", "disgust", "fear", "joy", "sadness", "surprise", "valence"]


def linear_raters(Y, M, slope, own_sd, iters=300):
    """EM for y_nl = a_l + b_l f_n + e_nl, e_nl ~ N(0, s2_l), f_n ~ N(0, 1);
    returns the posterior means of f. Without slope b_l = 1; without own_sd one
    s2 for all raters (with own_sd each s2_l is shrunk to the mean by one
    pseudo-rating)."""
    N, L = Y.shape
    a = np.array([Y[M[:, l], l].mean() for l in range(L)])
    b = np.ones(L)
    s2 = np.full(L, Y[M].var())
    for _ in range(iters):
        prec = 1 + (M * (b**2 / s2)).sum(1)
        m = (M * (b / s2) * (Y - a)).sum(1) / prec
        v = 1 / prec
        for l in range(L):
            idx = M[:, l]
            if idx.sum() < 2:
                continue
            Ef, Ef2, y, n = m[idx], m[idx] ** 2 + v[idx], Y[idx, l], idx.sum()
            if slope:
                A = np.array([[n, Ef.sum()], [Ef.sum(), Ef2.sum() + 1.0]])
                a[l], b[l] = np.linalg.solve(A, np.array([y.sum(), (y * Ef).sum()]))
            else:
                a[l] = (y - b[l] * Ef).sum() / n
            if own_sd:
                r = ((y - a[l] - b[l] * Ef) ** 2 + b[l] ** 2 * v[idx]).sum()
                s2[l] = (r + s2.mean()) / (n + 1.0)
        if not own_sd:
            tot = sum((((Y[M[:, l], l] - a[l] - b[l] * m[M[:, l]]) ** 2) + b[l] ** 2 * v[M[:, l]]).sum() for l in range(L))
            s2[:] = tot / M.sum()
    return m


print("%-9s %6s %6s %6s %6s %6s %6s" % ("dimension", "mean", "median", "trim10", "trim20", "bias", "slope"))
for d in DIMS:
    rs = [r for r in ratings if r["dimension"] == d]
    ids = sorted({r["item_id"] for r in rs})
    rids = sorted({r["rater_id"] for r in rs})
    I = {k: i for i, k in enumerate(ids)}
    R = {k: i for i, k in enumerate(rids)}
    Y = np.zeros((len(ids), len(rids)))
    M = np.zeros_like(Y, bool)
    for r in rs:
        Y[I[r["item_id"]], R[r["rater_id"]]] = float(r["label"])
        M[I[r["item_id"]], R[r["rater_id"]]] = True
    gold = np.array([float(items[k]["gold_" + d]) for k in ids])
    rows = [Y[n, M[n]] for n in range(len(ids))]
    est = [
        np.array([np.mean(v) for v in rows]),
        np.array([np.median(v) for v in rows]),
        np.array([trim_mean(v, 0.1) for v in rows]),
        np.array([trim_mean(v, 0.2) for v in rows]),
        linear_raters(Y, M, slope=False, own_sd=False),
        linear_raters(Y, M, slope=True, own_sd=True),
    ]
    # The slope model's sign is not identified: report |r|.
    cors = [np.corrcoef(e, gold)[0, 1] for e in est]
    cors[-1] = abs(cors[-1])
    print("%-9s " % d + " ".join("%6.3f" % c for c in cors))
