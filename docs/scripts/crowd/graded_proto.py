#!/usr/bin/env python3
"""Prototype of a graded rater model for the crowd consensus (issue 29, branch c29ord).

The clamped-shift model: rater l reports the true grade c moved by a shift s drawn from the rater's own shift
distribution w_l over -(K-1)..K-1, clamped to the scale,

    y = min(max(c + s, 0), K - 1),   s ~ Cat(w_l),   w_l ~ Dirichlet(S nu),

so pi_l[c, j] = sum over s with clamp(c + s) = j of w_l[s]: 2K - 1 weights per rater (a bias, a spread and the
shape of the errors by distance) against the K(K - 1) of a full confusion matrix, shared by every true grade, so
that a rater with few labels of a rare grade does not get a flat row there. nu is learnt by empirical Bayes (the
fixed-total Dirichlet fit of concord's fitMean, floors 1e-2) at S = 4 (concord's Concentration); nu starts with
0.7 (Diagonal) at s = 0 and the rest spread evenly.

Variational Bayes as concord's coin.go (one-coin, also here, to check that the bound is concord's): q(z) q(rho)
q(w) with the shift indicators exact given z (structured mean field, as the spammer's competence), so

    ln pi~_l[c, j] = ln sum_{s: clamp(c+s) = j} exp(E[ln w_l[s]])

and the evidence lower bound is that of the same labels under the same class prior (Dirichlet(c0), c0 =
max(1, N/K max(0, 2 - m)), m labels per item), comparable with concord's candidates' `elbo`; the score is
ELBO - (d/2) ln L with d = 2K - 2 hyperparameters (nu's free means).

Beside it (README, "A graded rater model"): shiftB, a shared K x K confusion (point estimate, K(K - 1) more
hyperparameters) before the rater's shift; OrdFit, ordered probit with each rater's bias and noise on a 9 x 7 grid
under a discretised normal prior, shared cut points, grade locations and lapse rate (2K + 2 hyperparameters); and
SpamShiftFit, MACE with the shift model as its competent part (3K - 2). Sets whose labels are not numbers are
skipped (no order to use).

Usage: graded_proto.py --concord BIN [--work DIR] DIR...   (DIR with ratings.csv and items.csv, whose gold is
read only to score; BIN's default fit gives the candidates' scores compared against)
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

import numpy as np
from scipy.special import digamma, gammaln, polygamma, logsumexp

MIN_PSEUDO = 1e-2


def inv_digamma(y):
    x = np.where(y >= -2.22, np.exp(y) + 0.5, -1.0 / (y - digamma(1.0)))
    for _ in range(6):
        x = x - (digamma(x) - y) / polygamma(1, x)
    return x


def fit_mean(t, s):
    """a = s m maximising sum_j (a_j - 1) t_j - ln Gamma(a_j) with sum a = s, a_j >= MIN_PSEUDO (bisection on nu)."""
    def g(nu):
        a = np.maximum(inv_digamma(t - nu), MIN_PSEUDO)
        return a.sum() - s, a
    lo, hi = t.max() - digamma(s) - 1, t.max() - digamma(s / len(t)) + 1
    while g(lo)[0] < 0:
        lo -= 2 * (hi - lo)
    while g(hi)[0] > 0:
        hi += 2 * (hi - lo)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        f, a = g(mid)
        if abs(f) < 1e-12 * s:
            break
        if f > 0:
            lo = mid
        else:
            hi = mid
    return a * s / a.sum()


def lnB(a):
    return gammaln(a).sum(-1) - gammaln(a.sum(-1))


def kl_dir(a, a0):
    ps = digamma(a.sum(-1, keepdims=True))
    return lnB(a0) - lnB(a) + ((a - a0) * (digamma(a) - ps)).sum(-1)


def load(d):
    rows = list(csv.DictReader(open(os.path.join(d, "ratings.csv"))))
    items = sorted({r["item_id"] for r in rows})
    raters = sorted({r["rater_id"] for r in rows})
    labs = sorted({r["label"] for r in rows})
    try:
        labs = sorted(labs, key=float)
    except ValueError:
        pass
    ii = {x: i for i, x in enumerate(items)}
    ri = {x: i for i, x in enumerate(raters)}
    yi = {x: i for i, x in enumerate(labs)}
    n = np.array([ii[r["item_id"]] for r in rows])
    l = np.array([ri[r["rater_id"]] for r in rows])
    y = np.array([yi[r["label"]] for r in rows])
    gold = {}
    ip = os.path.join(d, "items.csv")
    if os.path.exists(ip):
        for r in csv.DictReader(open(ip)):
            if r.get("gold", "") != "" and r["gold"] in yi:
                gold[r["item_id"]] = yi[r["gold"]]
            elif r.get("gold", "") != "":
                gold[r["item_id"]] = -1
    g = np.full(len(items), -2)
    for it, v in gold.items():
        if it in ii:
            g[ii[it]] = v
    ngold = sum(1 for _ in gold)
    return n, l, y, len(items), len(raters), len(labs), g, ngold, labs


class Fit:
    def __init__(self, n, l, y, N, L, K, model, S=4.0, diag=0.7):
        self.n, self.l, self.y, self.N, self.L, self.K, self.model = n, l, y, N, L, K, model
        m = len(y) / N
        self.c0 = max(1.0, N / K * max(0.0, 2 - m))
        q = np.full((N, K), 0.5)
        np.add.at(q, (n, y), 1)
        self.q = q / q.sum(1, keepdims=True)
        self.S = S
        if model == "onecoin":
            self.ab0 = np.array([S * diag, S * (1 - diag)])
            self.ab = np.tile(self.ab0, (L, 1))
        else:
            M = 2 * K - 1
            A = np.zeros((K, K, M))
            for c in range(K):
                for s in range(M):
                    A[c, min(max(c + s - (K - 1), 0), K - 1), s] = 1
            self.A = A
            nu0 = np.full(M, S * (1 - diag) / (M - 1))
            nu0[K - 1] = S * diag
            self.w0 = nu0
            self.w = np.tile(nu0, (L, 1))
            self.B = np.eye(K)
            if model == "shiftB":
                self.B = 0.8 * np.eye(K) + 0.2 / K
        self.cnt = np.bincount(l, minlength=L)

    def elogT(self):
        K = self.K
        if self.model == "onecoin":
            ps = digamma(self.ab.sum(1))
            ea, eb = digamma(self.ab[:, 0]) - ps, digamma(self.ab[:, 1]) - ps - math.log(K - 1)
            T = np.repeat(eb[:, None, None], K, 1).repeat(K, 2)
            T[:, np.arange(K), np.arange(K)] = ea[:, None]
            return T  # [l, c, j]
        elw = digamma(self.w) - digamma(self.w.sum(1, keepdims=True))  # [l, s]
        mx = elw.max(1)
        e = np.exp(elw - mx[:, None])
        U = np.einsum("cjs,ls->lcj", self.A, e)  # [l, c', j]
        return np.log(np.einsum("cd,ldj->lcj", self.B, U)) + mx[:, None, None]

    def raters(self, eb):
        K, L = self.K, self.L
        # Q[l, c, j] = sum over rater l's labels j of q(z_n = c)
        Q = np.zeros((L, K, K))
        np.add.at(Q, (self.l, slice(None), self.y), self.q[self.n])
        if self.model == "onecoin":
            corr = np.einsum("lcc->l", Q)
            if eb:
                ps = digamma(self.ab.sum(1))
                t = np.array([(digamma(self.ab[:, 0]) - ps).mean(), (digamma(self.ab[:, 1]) - ps).mean()])
                self.ab0 = fit_mean(t, self.S)
            self.ab = self.ab0[None, :] + np.stack([corr, self.cnt - corr], 1)
            self.kl = kl_dir(self.ab, self.ab0[None, :]).sum()
            return
        if eb:
            t = (digamma(self.w) - digamma(self.w.sum(1, keepdims=True))).mean(0)
            self.w0 = fit_mean(t, self.S)
        for _ in range(5):
            elw = digamma(self.w) - digamma(self.w.sum(1, keepdims=True))
            T = self.elogT()
            # cnt[l, s] = sum_{c,j} Q[l,c,j] sum_c' B[c,c'] A[c',j,s] exp(elw[l,s] - T[l,c,j])
            R = Q * np.exp(-T)
            RB = np.einsum("lcj,cd->ldj", R, self.B)
            c = np.einsum("ldj,djs->ls", RB, self.A) * np.exp(elw)
            if self.model == "shiftB" and eb:
                U = np.einsum("cjs,ls->lcj", self.A, np.exp(elw))
                Nb = np.einsum("lcj,ldj->cd", R, U) * self.B
                self.B = Nb / Nb.sum(1, keepdims=True)
                self.B = np.maximum(self.B, 1e-6)
                self.B /= self.B.sum(1, keepdims=True)
            w = self.w0[None, :] + c
            ch = np.abs(w - self.w).max() / 1.0
            self.w = w
            if ch < 1e-6:
                break
        self.kl = kl_dir(self.w, self.w0[None, :]).sum()

    def bound(self):
        """The evidence lower bound at the current factors and q(z), and the items' unnormalised ln q(z)."""
        beta = self.c0 + self.q.sum(0)
        elr = digamma(beta) - digamma(beta.sum())
        klr = kl_dir(beta, np.full(self.K, self.c0))
        T = self.elogT()
        lq = elr[None, :] + np.zeros((self.N, self.K))
        np.add.at(lq, self.n, T[self.l, :, self.y])
        lnq = np.log(np.maximum(self.q, 1e-300))
        return -self.kl - klr + (self.q * (lq - lnq)).sum(), lq

    def hyperparameters(self):
        d = 1 if self.model == "onecoin" else 2 * self.K - 2
        if self.model == "shiftB":
            d += self.K * (self.K - 1)
        return d

    def run(self, maxit=1000, tol=1e-6, etol=1e-6):
        prev = -np.inf
        for it in range(1, maxit + 1):
            self.raters(it > 1)
            e, lq = self.bound()
            qn = np.exp(lq - logsumexp(lq, 1, keepdims=True))
            ch = np.abs(qn - self.q).max()
            self.q = qn
            self.elbo = e
            if ch < tol or (it > 2 and abs(e - prev) <= etol * abs(e)):
                break
            prev = e
        # finish as coin.go: factors, the bound at the final q
        self.raters(True)
        self.elbo, _ = self.bound()
        self.iters = it
        self.score = self.elbo - 0.5 * self.hyperparameters() * math.log(max(self.L, 2))
        return self


class SpamShiftFit(Fit):
    """MACE with a graded competent part: a label is competent with probability theta_l, then the true grade
    moved by the rater's clamped shift (w_l), else a draw from the rater's spam distribution xi_l:
    pi_l[c, j] = theta_l sum_{s: clamp(c+s)=j} w_l[s] + (1 - theta_l) xi_l[j]; theta_l ~ Beta(S m, S (1 - m)),
    w_l ~ Dirichlet(S nu), xi_l ~ Dirichlet(K nu'), m, nu, nu' by empirical Bayes (3K - 2 hyperparameters)."""

    def __init__(self, n, l, y, N, L, K, S=4.0, diag=0.7):
        super().__init__(n, l, y, N, L, K, "graded", S, diag)
        # the competent part starts exact (w at s = 0 mostly), theta at Diagonal
        self.w0 = np.full(2 * K - 1, S * 0.1 / (2 * K - 2))
        self.w0[K - 1] = S * 0.9
        self.w = np.tile(self.w0, (L, 1))
        self.ab0 = np.array([S * diag, S * (1 - diag)])
        self.ab = np.tile(self.ab0, (L, 1))
        self.xi0 = np.ones(K)
        self.xi = np.ones((L, K))

    def logs(self):
        elw = digamma(self.w) - digamma(self.w.sum(1, keepdims=True))
        ps = digamma(self.ab.sum(1))
        et, ef = digamma(self.ab[:, 0]) - ps, digamma(self.ab[:, 1]) - ps
        ex = digamma(self.xi) - digamma(self.xi.sum(1, keepdims=True))
        mx = elw.max(1)
        U = np.log(np.einsum("cjs,ls->lcj", self.A, np.exp(elw - mx[:, None]))) + mx[:, None, None]
        return elw, et, ef, ex, U

    def elogT(self):
        elw, et, ef, ex, U = self.logs()
        return np.logaddexp(et[:, None, None] + U, (ef[:, None] + ex)[:, None, :])

    def raters(self, eb):
        K, L = self.K, self.L
        Q = np.zeros((L, K, K))
        np.add.at(Q, (self.l, slice(None), self.y), self.q[self.n])
        if eb:
            elw, et, ef, ex, U = self.logs()
            self.w0 = fit_mean(elw.mean(0), self.S)
            self.ab0 = fit_mean(np.array([et.mean(), ef.mean()]), self.S)
            self.xi0 = fit_mean(ex.mean(0), float(K))
        for _ in range(5):
            elw, et, ef, ex, U = self.logs()
            T = np.logaddexp(et[:, None, None] + U, (ef[:, None] + ex)[:, None, :])
            R = Q * np.exp(-T)
            cw = np.einsum("lcj,cjs->ls", R, self.A) * np.exp(elw + et[:, None])
            cx = R.sum(1) * np.exp(ef[:, None] + ex)
            w = self.w0[None, :] + cw
            ab = self.ab0[None, :] + np.stack([cw.sum(1), cx.sum(1)], 1)
            xi = self.xi0[None, :] + cx
            ch = max(np.abs(w - self.w).max(), np.abs(ab - self.ab).max())
            self.w, self.ab, self.xi = w, ab, xi
            if ch < 1e-6:
                break
        self.kl = kl_dir(self.w, self.w0[None, :]).sum() + kl_dir(self.ab, self.ab0[None, :]).sum() + \
            kl_dir(self.xi, self.xi0[None, :]).sum()

    def hyperparameters(self):
        return 3 * self.K - 2


class OrdFit(Fit):
    """The ordered-probit rater model on a grid (see the module doc's second model)."""

    def __init__(self, n, l, y, N, L, K, nb=9, ns=7):
        from scipy.stats import norm
        self.norm = norm
        self.n, self.l, self.y, self.N, self.L, self.K = n, l, y, N, L, K
        m = len(y) / N
        self.c0 = max(1.0, N / K * max(0.0, 2 - m))
        q = np.full((N, K), 0.5)
        np.add.at(q, (n, y), 1)
        self.q = q / q.sum(1, keepdims=True)
        bb, ls = np.meshgrid(np.linspace(-2, 2, nb), np.linspace(math.log(0.15), math.log(3), ns), indexing="ij")
        self.gb, self.gls = bb.ravel(), ls.ravel()
        self.hyp = np.array([0.0, 1.0, math.log(0.5), 1.0])  # m_b, sd_b, m_ls, sd_ls
        self.tau = np.arange(1, K) - 0.5
        self.eps = 0.05
        self.mu = np.arange(K, dtype=float)
        self.qg = None

    def omega(self, h=None):
        h = self.hyp if h is None else h
        lw = -0.5 * ((self.gb - h[0]) / h[1]) ** 2 - 0.5 * ((self.gls - h[2]) / h[3]) ** 2
        return lw - logsumexp(lw)

    def P(self, tau=None, eps=None, mu=None):
        tau = self.tau if tau is None else tau
        mu = self.mu if mu is None else mu
        eps = self.eps if eps is None else eps
        K = self.K
        cuts = np.concatenate([[-np.inf], tau, [np.inf]])
        s = np.exp(self.gls)
        c = np.arange(K)
        z = (cuts[None, None, :] - mu[None, :, None] - self.gb[:, None, None]) / s[:, None, None]
        cdf = self.norm.cdf(z)
        pr = np.diff(cdf, axis=2)  # [g, c, j]
        return np.log((1 - eps) * np.maximum(pr, 0) + eps / K)

    def raters(self, eb):
        K, L = self.K, self.L
        Q = np.zeros((L, K, K))
        np.add.at(Q, (self.l, slice(None), self.y), self.q[self.n])
        self.Q = Q
        if eb and self.qg is not None:
            from scipy.optimize import minimize
            qg = self.qg
            W = qg.sum(0)

            def fprior(h):
                hh = np.array([h[0], math.exp(h[1]), h[2], math.exp(h[3])])
                return -(W * self.omega(hh)).sum()
            r = minimize(fprior, [self.hyp[0], math.log(self.hyp[1]), self.hyp[2], math.log(self.hyp[3])],
                         method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-6, "maxiter": 400})
            h = r.x
            self.hyp = np.array([h[0], min(max(math.exp(h[1]), 0.05), 10), h[2], min(max(math.exp(h[3]), 0.05), 10)])
            G2 = np.einsum("lg,lcj->gcj", qg, Q)

            def flik(x):
                tau = x[0] + np.concatenate([[0], np.cumsum(np.exp(x[1:K - 1]))])
                eps = 1 / (1 + math.exp(-x[K - 1]))
                mu = np.concatenate([[0, 1], x[K:]])
                return -(G2 * self.P(tau, eps, mu)).sum()
            x0 = np.concatenate([[self.tau[0]], np.log(np.maximum(np.diff(self.tau), 1e-6)), [math.log(self.eps / (1 - self.eps))], self.mu[2:]])
            r = minimize(flik, x0, method="Nelder-Mead", options={"xatol": 1e-5, "fatol": 1e-6, "maxiter": 2000})
            x = r.x
            self.tau = x[0] + np.concatenate([[0], np.cumsum(np.exp(x[1:K - 1]))])
            self.eps = min(max(1 / (1 + math.exp(-x[K - 1])), 1e-4), 0.5)
            self.mu = np.concatenate([[0, 1], x[K:]])
        lP = self.P()  # [g, c, j]
        self.lP = lP
        lw = self.omega()
        a = np.einsum("lcj,gcj->lg", Q, lP) + lw[None, :]
        lz = logsumexp(a, 1, keepdims=True)
        self.qg = np.exp(a - lz)
        # sum_l [E ln omega + E ln p(labels) + H] = sum_l lz at the exact q(g)
        self.rterm = lz.sum()
        # rterm = E[ln p(labels | g)] - KL(q(g) || omega): the KL terms of Fit.bound
        self.kl = (Q * self.elogT()).sum() - self.rterm

    def elogT(self):
        return np.einsum("lg,gcj->lcj", self.qg, self.lP)

    def hyperparameters(self):
        return 2 * self.K + 2

    def run(self, **kw):
        return super().run(maxit=500, etol=1e-7)


def acc(q, g):
    m = g >= -1
    return float((q.argmax(1)[m] == g[m]).mean())


def concord_cands(bin_, d, work):
    d = d.rstrip("/")
    out = os.path.join(work, os.path.basename(os.path.dirname(d)) + "_" + os.path.basename(d) + ".json")
    if not os.path.exists(out):
        subprocess.run([bin_, "fit", "--labels", os.path.join(d, "ratings.csv"), "--duplicates", "keep", "--model",
                        "confusion", "--out", out], check=True, capture_output=True)
    j = json.load(open(out))
    c = j["model"]["confusion"]
    lv = j["levels"]
    cands = {x["model"]: x for x in c["rater_model_candidates"]}
    # the default's accuracy
    return cands, c.get("rater_model"), j, lv


def default_acc(j, d):
    gold = {}
    for r in csv.DictReader(open(os.path.join(d, "items.csv"))):
        if r.get("gold", "") != "":
            gold[r["item_id"]] = r["gold"]
    got = {it["id"]: it.get("class") for it in j["items"]}
    return sum(1 for k, v in gold.items() if got.get(k) == v) / len(gold)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--concord", required=True)
    ap.add_argument("--work", default="/tmp/c29ord/proto")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print("%-34s %2s %6s | %-11s %7s %9s | %9s %6s | %9s %6s | %9s %6s" % (
        "set", "K", "labels", "chosen", "default", "best scr", "shift", "acc", "shiftB", "acc", "probit", "acc"))
    for d in a.dirs:
        n, l, y, N, L, K, g, ngold, labs = load(d)
        try:
            [float(x) for x in labs]
        except ValueError:
            continue  # not graded: the candidate is not tried
        if K < 3:
            continue
        cands, chosen, j, lv = concord_cands(a.concord, d, a.work)
        best = max(c["score"] for c in cands.values() if not c.get("failed") and not c.get("excluded"))
        name = os.path.basename(os.path.dirname(d.rstrip("/"))) + "/" + os.path.basename(d.rstrip("/"))
        row = "%-34s %2d %6d | %-11s %7.4f %9.1f" % (name[-34:], K, len(y), chosen, default_acc(j, d), best)
        for m in ("shift", "shiftB", "probit"):
            f = OrdFit(n, l, y, N, L, K).run() if m == "probit" else Fit(n, l, y, N, L, K, "graded" if m == "shift" else "shiftB").run()
            row += " | %+9.1f %6.4f" % (f.score - best, acc(f.q, g))
        print(row, flush=True)


if __name__ == "__main__":
    import warnings
    warnings.filterwarnings("ignore")
    main()
