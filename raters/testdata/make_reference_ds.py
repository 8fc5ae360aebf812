#!/usr/bin/python3
"""Independent Dawid & Skene (1979) EM for the anaesthesia data, in numpy.

Run from raters/testdata with Debian's python3 (python3-numpy 1.24):

    /usr/bin/python3 make_reference_ds.py > reference_ds.csv

Written from the paper's equations (2.3)-(2.5), not from the Go code:
vectorised over a (patients x raters x classes) count array n[i, j, l] (rater
1 labelled every patient three times, so counts go up to 3). Start: T_ik =
share of patient i's labels in class k (the paper's start). Maximum
likelihood (no smoothing); iterate until the log-likelihood changes by less
than 1e-15 relative, at most 10000 iterations.

Output: priors p_k, confusion matrices pi[j, k, l] and posteriors T[i, k],
the final log-likelihood and the iteration count.
"""
import csv
import sys

import numpy as np

rows = list(csv.DictReader(open("dawid_skene_1979_ratings.csv")))
items = sorted({int(r["item_id"]) for r in rows})
raters = sorted({int(r["rater_id"]) for r in rows})
K = 4
n = np.zeros((len(items), len(raters), K))
for r in rows:
    n[items.index(int(r["item_id"])), raters.index(int(r["rater_id"])), int(r["label"]) - 1] += 1

T = n.sum(axis=1)
T = T / T.sum(axis=1, keepdims=True)
prev = -np.inf
for it in range(1, 10001):
    p = T.mean(axis=0)
    # pi[j, k, l] = sum_i T[i, k] n[i, j, l] / sum_l ...
    pi = np.einsum("ik,ijl->jkl", T, n)
    pi = pi / pi.sum(axis=2, keepdims=True)
    with np.errstate(divide="ignore"):
        logpi = np.log(pi)
    # log p_k + sum_j sum_l n[i, j, l] log pi[j, k, l]; 0 * log 0 = 0
    contrib = np.einsum("ijl,jkl->ik", n, np.where(np.isfinite(logpi), logpi, 0.0))
    impossible = np.einsum("ijl,jkl->ik", n, np.where(np.isfinite(logpi), 0.0, 1.0)) > 0
    lt = np.log(p)[None, :] + contrib
    lt[impossible] = -np.inf
    m = lt.max(axis=1, keepdims=True)
    e = np.exp(lt - m)
    ll = float((m[:, 0] + np.log(e.sum(axis=1))).sum())
    T = e / e.sum(axis=1, keepdims=True)
    if abs(ll - prev) < 1e-15 * (1 + abs(ll)):
        break
    prev = ll

out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["what", "i", "j", "k", "value"])
out.writerow(["loglik", "", "", "", repr(ll)])
out.writerow(["iterations", "", "", "", it])
for k in range(K):
    out.writerow(["prior", "", "", k, repr(float(p[k]))])
for j in range(len(raters)):
    for k in range(K):
        for l in range(K):
            out.writerow(["pi", "", raters[j], f"{k}:{l}", repr(float(pi[j, k, l]))])
for i in range(len(items)):
    for k in range(K):
        out.writerow(["posterior", items[i], "", k, repr(float(T[i, k]))])
