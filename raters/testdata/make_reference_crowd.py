#!/usr/bin/python3
"""Independent numpy implementations of Wawa, GLAD and MACE, for the tests.

Run from raters/testdata with Debian's python3 (python3-numpy 1.24,
python3-scipy 1.10):

    /usr/bin/python3 make_reference_crowd.py > reference_crowd.csv

Written from the papers and crowd-kit's documentation (crowd-kit itself
cannot be installed here), vectorised over the list of labels, not from the
Go code:

- Wawa (crowd-kit's documentation): majority vote; each worker's skill = the
  share of the worker's labels equal to the majority vote; weighted majority
  vote with the skills. Ties (in either vote) go to the class with the most
  labels overall, then the lowest class (concord's documented rule).
- GLAD (Whitehill et al. 2009, K classes as crowd-kit): P(correct) =
  sigmoid(alpha_j * exp(logbeta_i)), a wrong label uniform over the other
  K - 1 classes, uniform fixed class priors, alpha ~ N(1, 1), logbeta ~
  N(1, 1), start alpha = logbeta = 1. EM whose M-step maximises Q fully with
  scipy's L-BFGS-B (gradient tolerance 1e-12), until no parameter moves by
  more than 1e-10 in an iteration (at most 5000 iterations): the MAP fixed
  point.
- MACE (Hovy et al. 2013, crowd-kit's defaults): P(a | t) = theta_j [a = t]
  + (1 - theta_j) xi_ja; variational Bayes with Beta(0.5, 0.5) and
  Dirichlet(10) priors (weights exp(digamma(count + prior) - digamma(sum))),
  and plain EM smoothed by 0.01/K; start theta = 1/2, xi uniform; exactly 50
  M-step/E-step iterations after the first E-step. Competence: (E[knowing] +
  0.5) / (n + 1) under VB, the knowing weight under EM.

Datasets (copies of the shared data, see README.md): the Dawid & Skene (1979)
anaesthesia labels (rater 1 labelled every patient three times: repeated
labels as separate observations), face4 (4 classes, 27 workers, sparse) and
RTE (2 classes). Items and raters are numbered by first appearance, classes
sorted numerically.

Output rows: dataset,method,what,key,value with what = post (key
item|class), class (key item), skill (key rater), easiness (key item),
loglik, iterations.
"""
import csv
import sys

import numpy as np
from scipy.optimize import minimize
from scipy.special import digamma, logsumexp

out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["dataset", "method", "what", "key", "value"])


def load(path):
    rows = list(csv.DictReader(open(path)))
    items, raters = [], []
    ix, jx = {}, {}
    for r in rows:
        if r["item_id"] not in ix:
            ix[r["item_id"]] = len(items)
            items.append(r["item_id"])
        if r["rater_id"] not in jx:
            jx[r["rater_id"]] = len(raters)
            raters.append(r["rater_id"])
    classes = sorted({r["label"] for r in rows}, key=float)
    cx = {c: k for k, c in enumerate(classes)}
    it = np.array([ix[r["item_id"]] for r in rows])
    wk = np.array([jx[r["rater_id"]] for r in rows])
    lab = np.array([cx[r["label"]] for r in rows])
    return items, raters, classes, it, wk, lab


def pick(score, total):
    """Argmax with ties to the larger total, then the lower class."""
    m = score.max()
    best = None
    for c in range(len(score)):
        if m - score[c] <= 1e-12 * abs(m):
            if best is None or total[c] > total[best]:
                best = c
    return best


def wawa(N, R, K, it, wk, lab):
    total = np.bincount(lab, minlength=K)
    counts = np.zeros((N, K))
    np.add.at(counts, (it, lab), 1)
    mv = np.array([pick(counts[i], total) for i in range(N)])
    hits = np.bincount(wk, weights=(lab == mv[it]).astype(float), minlength=R)
    skill = hits / np.bincount(wk, minlength=R)
    score = np.zeros((N, K))
    np.add.at(score, (it, lab), skill[wk])
    post = score / score.sum(axis=1, keepdims=True)
    cls = np.array([pick(post[i], total) for i in range(N)])
    return post, cls, skill


def glad(N, R, K, it, wk, lab):
    logp = np.full(K, -np.log(K))
    lk1 = np.log(K - 1)
    onehot = np.zeros((len(lab), K))
    onehot[np.arange(len(lab)), lab] = 1

    def logprior(a, t):
        return (-0.5 * np.sum((a - 1) ** 2) - 0.5 * np.sum((t - 1) ** 2)
                - 0.5 * (R + N) * np.log(2 * np.pi))

    def estep(a, t):
        z = a[wk] * np.exp(t[it])
        ls = -np.logaddexp(0, -z)
        lw = -np.logaddexp(0, z) - lk1
        per = lw[:, None] + onehot * (ls - lw)[:, None]
        L = np.tile(logp, (N, 1))
        np.add.at(L, it, per)
        lse = logsumexp(L, axis=1)
        return np.exp(L - lse[:, None]), lse.sum()

    def negq(x, w):
        a, t = x[:R], x[R:]
        b = np.exp(t[it])
        z = a[wk] * b
        q = np.sum(w * -np.logaddexp(0, -z) + (1 - w) * (-np.logaddexp(0, z) - lk1)) + logprior(a, t)
        g = w - 1 / (1 + np.exp(-z))
        ga = np.bincount(wk, weights=g * b, minlength=R) - (a - 1)
        gt = np.bincount(it, weights=g * a[wk] * b, minlength=N) - (t - 1)
        return -q, -np.concatenate([ga, gt])

    x = np.ones(R + N)
    post, ll = estep(x[:R], x[R:])
    for n in range(1, 5001):
        w = post[it, lab]
        res = minimize(negq, x, args=(w,), jac=True, method="L-BFGS-B",
                       options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
        step = np.max(np.abs(res.x - x))
        x = res.x
        post, ll = estep(x[:R], x[R:])
        lp = ll + logprior(x[:R], x[R:])
        if step < 1e-10:
            break
    return post, x[:R], np.exp(x[R:]), lp, n


def mace(N, R, K, it, wk, lab, vb):
    spam = np.full(R, 0.5)
    know = np.full(R, 0.5)
    xi = np.full((R, K), 1.0 / K)
    eps = 0.01 / K

    def estep():
        ps = spam[wk] * xi[wk, lab]
        L = np.full((N, K), -np.log(K))
        np.add.at(L, it, np.log(ps)[:, None] * np.ones(K))
        np.add.at(L, (it, lab), np.log(ps + know[wk]) - np.log(ps))
        lse = logsumexp(L, axis=1)
        post = np.exp(L - lse[:, None])
        pk = post[it, lab] * know[wk] / (ps + know[wk])
        nk = np.bincount(wk, weights=pk, minlength=R)
        ns = np.bincount(wk, weights=1 - pk, minlength=R)
        nstrat = np.zeros((R, K))
        np.add.at(nstrat, (wk, lab), 1 - pk)
        return post, lse.sum(), nk, ns, nstrat

    post, ll, nk, ns, nstrat = estep()
    for _ in range(50):
        if vb:
            tot = digamma(nk + ns + 1.0)
            spam = np.exp(digamma(ns + 0.5) - tot)
            know = np.exp(digamma(nk + 0.5) - tot)
            xi = np.exp(digamma(nstrat + 10.0) - digamma(nstrat.sum(axis=1) + 10.0 * K)[:, None])
        else:
            tot = nk + ns + 2 * eps
            spam, know = (ns + eps) / tot, (nk + eps) / tot
            xi = (nstrat + eps) / (nstrat.sum(axis=1) + K * eps)[:, None]
        post, ll, nk, ns, nstrat = estep()
    comp = (nk + 0.5) / (nk + ns + 1.0) if vb else know
    return post, comp, ll


def emit(ds, method, items, raters, classes, post, skill, lab, easiness=None, ll=None, iters=None):
    total = np.bincount(lab, minlength=len(classes))
    for i, name in enumerate(items):
        for c, cn in enumerate(classes):
            out.writerow([ds, method, "post", f"{name}|{cn}", repr(float(post[i, c]))])
        out.writerow([ds, method, "class", name, classes[pick(post[i], total)]])
        if easiness is not None:
            out.writerow([ds, method, "easiness", name, repr(float(easiness[i]))])
    for j, name in enumerate(raters):
        out.writerow([ds, method, "skill", name, repr(float(skill[j]))])
    if ll is not None:
        out.writerow([ds, method, "loglik", "", repr(float(ll))])
    if iters is not None:
        out.writerow([ds, method, "iterations", "", iters])


for ds, path in [("anaesthesia", "dawid_skene_1979_ratings.csv"), ("face4", "face4_ratings.csv"), ("rte", "rte_ratings.csv")]:
    items, raters, classes, it, wk, lab = load(path)
    N, R, K = len(items), len(raters), len(classes)
    post, cls, skill = wawa(N, R, K, it, wk, lab)
    emit(ds, "wawa", items, raters, classes, post, skill, lab)
    post, alpha, beta, lp, n = glad(N, R, K, it, wk, lab)
    emit(ds, "glad", items, raters, classes, post, alpha, lab, easiness=beta, ll=lp, iters=n)
    for vb in (True, False):
        post, comp, ll = mace(N, R, K, it, wk, lab, vb)
        emit(ds, "mace_vb" if vb else "mace_em", items, raters, classes, post, comp, lab, ll=ll)
