#!/usr/bin/env python3
"""Dawid-Skene by other inference schemes, with a flat prior (issue 29, stop 48).

For every dataset folder (ratings.csv; items.csv with a gold or truth column, read only to score) it fits the
Dawid-Skene model (a full confusion matrix per rater, rows ~ Dirichlet(1), class shares ~ Dirichlet(1)) and prints
the accuracy of:

  vb(mv)     variational Bayes from majority vote (E ln pi in the item update), and its bound;
  mean       the item update with the posterior mean, ln E pi, instead (EM with add-one counts; not a bound);
  vb(mean)   variational Bayes started from mean's solution, and its bound;
  vb(gold)   variational Bayes started from the gold labels (where given), and its bound: whether vb(mv) is the
             optimum the data give or a local one;
  cg         collapsed Gibbs over the items' classes (rows and shares integrated out), the classes' posterior
             averaged over 200 sweeps after 100; cg2 the same with 2 on the rows' diagonal.

It is a probe, not concord's model (whose prior is pooled and learnt; see the README, last section).

    python3 docs/scripts/crowd/ds_inference_probe.py [--no-gibbs] DIR...
"""
import argparse
import csv
import os

import numpy as np
from scipy.special import digamma, gammaln


def load(d):
    rows = list(csv.DictReader(open(os.path.join(d, "ratings.csv"), newline="")))
    items, raters = {}, {}
    for r in rows:
        items.setdefault(r["item_id"].strip(), len(items))
        raters.setdefault(r["rater_id"].strip(), len(raters))

    def order(v):
        try:
            return (0, float(v), v)
        except ValueError:
            return (1, 0.0, v)

    codes = sorted({r["label"].strip() for r in rows}, key=order)
    li = {v: i for i, v in enumerate(codes)}
    I = np.array([items[r["item_id"].strip()] for r in rows])
    L = np.array([raters[r["rater_id"].strip()] for r in rows])
    Y = np.array([li[r["label"].strip()] for r in rows])
    gold = np.full(len(items), -1)
    ngold = 0
    for r in csv.DictReader(open(os.path.join(d, "items.csv"), newline="")):
        v = (r.get("gold") or r.get("truth") or "").strip()
        if v:
            ngold += 1
            if r["item_id"].strip() in items and v in li:
                gold[items[r["item_id"].strip()]] = li[v]
    return I, L, Y, len(items), len(raters), len(codes), gold, ngold


def votes(I, Y, N, K):
    c = np.zeros((N, K))
    np.add.at(c, (I, Y), 1)
    return c


def accuracy(q, gold, ngold):
    m = gold >= 0
    return (q.argmax(1)[m] == gold[m]).sum() / ngold


def counts(I, L, Y, R, K, q):
    c = np.zeros((R * K, K))
    for k in range(K):
        np.add.at(c, (L * K + k, Y), q[I, k])
    return c.reshape(R, K, K)


def step(I, L, Y, N, R, K, q, A, mode):
    a = counts(I, L, Y, R, K, q) + A[None]
    rho = q.sum(0) + 1
    if mode == "vb":
        W = digamma(a) - digamma(a.sum(2, keepdims=True))
        lr = digamma(rho) - digamma(rho.sum())
    else:
        W = np.log(a / a.sum(2, keepdims=True))
        lr = np.log(rho / rho.sum())
    lq = np.zeros((N, K)) + lr
    np.add.at(lq, I, W[L, :, Y])
    lq -= lq.max(1, keepdims=True)
    q = np.exp(lq)
    return q / q.sum(1, keepdims=True)


def run(I, L, Y, N, R, K, q, A, mode="vb", iters=2000):
    for _ in range(iters):
        qn = step(I, L, Y, N, R, K, q, A, mode)
        if np.abs(qn - q).max() < 1e-8:
            return qn
        q = qn
    return q


def lnB(a):
    return gammaln(a).sum(-1) - gammaln(a.sum(-1))


def bound(I, L, Y, N, R, K, q, A):
    """The evidence lower bound with q(pi), q(rho) optimal given q(z)."""
    a = counts(I, L, Y, R, K, q) + A[None]
    rho = q.sum(0) + 1
    e = (lnB(a) - lnB(np.broadcast_to(A, a.shape))).sum() + lnB(rho) - lnB(np.ones(K))
    return e - (q * np.log(np.maximum(q, 1e-300))).sum()


def collapsed_gibbs(I, L, Y, N, R, K, diag=1.0, sweeps=300, burn=100, seed=1):
    rng = np.random.default_rng(seed)
    A = np.ones((K, K))
    np.fill_diagonal(A, diag)
    As = A.sum(1)
    z = (votes(I, Y, N, K) + rng.random((N, K)) * 1e-3).argmax(1)
    Nc = np.zeros((R, K, K))
    np.add.at(Nc, (L, z[I], Y), 1)
    Nr = Nc.sum(2)
    m = np.bincount(z, minlength=K).astype(float)
    order = np.argsort(I, kind="stable")
    starts = np.searchsorted(I[order], np.arange(N + 1))
    lab = [(L[order[starts[n]:starts[n + 1]]], Y[order[starts[n]:starts[n + 1]]]) for n in range(N)]
    P = np.zeros((N, K))
    for s in range(sweeps):
        for n in range(N):
            ll, yy = lab[n]
            k0 = z[n]
            np.subtract.at(Nc, (ll, k0, yy), 1)
            np.subtract.at(Nr, (ll, k0), 1)
            m[k0] -= 1
            lp = np.log(m + 1) + (np.log(Nc[ll, :, yy] + A[:, yy].T) - np.log(Nr[ll, :] + As[None, :])).sum(0)
            p = np.exp(lp - lp.max())
            p /= p.sum()
            if s >= burn:
                P[n] += p
            z[n] = k = rng.choice(K, p=p)
            np.add.at(Nc, (ll, k, yy), 1)
            np.add.at(Nr, (ll, k), 1)
            m[k] += 1
    return P / (sweeps - burn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-gibbs", action="store_true", help="skip the collapsed Gibbs runs (minutes on large sets)")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    for d in a.dirs:
        I, L, Y, N, R, K, gold, ng = load(d)
        A = np.ones((K, K))
        c = votes(I, Y, N, K)
        q0 = c / c.sum(1, keepdims=True)
        qa = run(I, L, Y, N, R, K, q0, A)
        qm = run(I, L, Y, N, R, K, q0, A, "mean", 500)
        qb = run(I, L, Y, N, R, K, qm, A)
        qg = np.where((gold >= 0)[:, None], np.eye(K)[np.maximum(gold, 0)], q0)
        qc = run(I, L, Y, N, R, K, qg, A)
        out = "%-32s K=%-2d vb(mv) %.4f %.1f | mean %.4f | vb(mean) %.4f %.1f | vb(gold) %.4f %.1f" % (
            os.path.basename(d.rstrip("/"))[-32:], K, accuracy(qa, gold, ng), bound(I, L, Y, N, R, K, qa, A),
            accuracy(qm, gold, ng), accuracy(qb, gold, ng), bound(I, L, Y, N, R, K, qb, A),
            accuracy(qc, gold, ng), bound(I, L, Y, N, R, K, qc, A))
        if not a.no_gibbs:
            out += " | cg %.4f cg2 %.4f" % (accuracy(collapsed_gibbs(I, L, Y, N, R, K), gold, ng),
                                           accuracy(collapsed_gibbs(I, L, Y, N, R, K, diag=2.0), gold, ng))
        print(out, flush=True)


if __name__ == "__main__":
    main()
