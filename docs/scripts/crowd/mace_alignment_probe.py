#!/usr/bin/python3
"""Why crowd-kit's published MACE accuracy on D_Product (0.929, Ustalov et al.,
JOSS 2024, table "categorical") is above concord's (0.827): a probe.

    /usr/bin/python3 docs/scripts/crowd/mace_alignment_probe.py

MACE by variational Bayes (Hovy et al. 2013; crowd-kit's defaults: Beta(0.5,
0.5), Dirichlet(10), 50 iterations), written from the paper in numpy, on
wang2012_product_matching (= Zheng et al.'s D_Product), from the uniform start
and from a random one, each (a) as the model says and (b) with the per-worker
strategy counts taken in sorted-worker-name order but used in
first-appearance order, which is how we read crowd-kit's M-step (a groupby
table used by position against factorize codes). (b) reproduces crowd-kit's
~0.93 at a far lower log marginal likelihood (about -12850 against -8940):
the higher accuracy comes from the misalignment, not from the model. This is
our reading of crowd-kit's source, checked only by this reproduction, since
crowd-kit cannot be installed here.
"""
import csv, sys
import numpy as np
from scipy.special import digamma, logsumexp
d = "/work/shared/data/wang2012_product_matching/"
rows = list(csv.DictReader(open(d + "ratings.csv")))
gold = {r["item_id"]: r["truth"] for r in csv.DictReader(open(d + "items.csv"))}
def fact(vals):
    ix = {}
    for v in vals:
        ix.setdefault(v, len(ix))
    return ix
ix = fact(r["item_id"] for r in rows); jx = fact(r["rater_id"] for r in rows); cx = fact(r["label"] for r in rows)
it = np.array([ix[r["item_id"]] for r in rows]); wk = np.array([jx[r["rater_id"]] for r in rows]); lab = np.array([cx[r["label"]] for r in rows])
N, R, K = len(ix), len(jx), len(cx)
classes = sorted(cx, key=lambda c: cx[c])
items = sorted(ix, key=lambda c: ix[c])
workers = sorted(jx, key=lambda c: jx[c])
sorted_pos = np.argsort(np.array(workers))  # row r of a sorted table is worker sorted_pos[r]
def run(init, misalign, iters=50, seed=0):
    rng = np.random.RandomState(seed)
    if init == "uniform":
        sp = np.full((R, 2), 0.5); xi = np.full((R, K), 1.0 / K)
    else:
        sp = rng.uniform(1, 2.5, size=(R, 2)); xi = rng.uniform(1, 2.5, size=(R, K))
        sp /= sp.sum(1, keepdims=True); xi /= xi.sum(1, keepdims=True)
    for n in range(iters + 1):
        ps = sp[wk, 0] * xi[wk, lab]
        L = np.full((N, K), -np.log(K))
        np.add.at(L, it, np.log(ps)[:, None] * np.ones(K))
        np.add.at(L, (it, lab), np.log(ps + sp[wk, 1]) - np.log(ps))
        lse = logsumexp(L, 1); post = np.exp(L - lse[:, None])
        if n == iters:
            break
        pk = post[it, lab] * sp[wk, 1] / (ps + sp[wk, 1])
        nk = np.bincount(wk, pk, R); ns = np.bincount(wk, 1 - pk, R)
        nst = np.zeros((R, K)); np.add.at(nst, (wk, lab), 1 - pk)
        if misalign:
            # rows of the strategy table in sorted worker order, used positionally
            nst = nst[np.argsort(np.array(workers))]
        tot = digamma(nk + ns + 1.0)
        sp = np.stack([np.exp(digamma(ns + 0.5) - tot), np.exp(digamma(nk + 0.5) - tot)], 1)
        xi = np.exp(digamma(nst + 10.0) - digamma(nst.sum(1) + 10.0 * K)[:, None])
    pred = post.argmax(1)
    acc = np.mean([classes[pred[ix[i]]] == gold[i] for i in items if i in gold])
    return acc, lse.sum()
for init in ("uniform", "random"):
    for mis in (False, True):
        print(init, "misaligned" if mis else "aligned", run(init, mis))
print("workers sorted == first appearance:", workers == sorted(workers))
