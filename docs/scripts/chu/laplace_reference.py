#!/usr/bin/python3
"""Independent numpy/scipy reference for Chu & Ghahramani (2005), sec. 3.1:
the Laplace (MAP) evidence, eq. 11 = eq. 21, of the single-rater ordinal
probit GP, written from the paper (not from concord's Go code).

Model (Chu sec. 2): f ~ N(0, Sigma), Sigma_ij = exp(-kappa/2 |x_i - x_j|^2)
(no amplitude; concord's rbf gamma = kappa/2); P(y_i | f_i) =
Phi((b_y - f_i)/sigma) - Phi((b_{y-1} - f_i)/sigma), b_0 = -inf, b_r = +inf,
b_j = b_1 + sum_{i<=j} Delta_i.  Hyperparameters (Appendix A):
theta = (ln kappa, ln sigma, b_1, ln Delta_2 .. ln Delta_{r-1}).

-ln P(D|theta) ~= sum_i l(y_i, f_MAP) + 1/2 f' Sigma^-1 f + 1/2 ln|I + Sigma Lambda|
is computed in the B = I + W^1/2 K W^1/2 form (W = Lambda_MAP), with
Sigma^-1 f_MAP = a from the Newton iteration (never inverting Sigma).

Also here: Chu's printed Appendix-A gradient (eq. 22-25 and the bullet
list), checked against central finite differences of eq. 21; EP (log Z_EP,
GPML-style) and the exact evidence (Gaussian box probability through R's
mvtnorm::pmvnorm) for comparing hyperparameter points.

Subcommands (see README.md beside this file):
  fit      optimum of eq. 11 from footnote-6 and other starts, per partition
  gradcheck Appendix-A printed gradient vs finite differences
  profile  evidence profile over a sigma grid (rest re-optimised), test errors
  compare  Laplace / EP / exact evidence at the optimum and at larger sigma
  table    20-partition test errors with a chosen optimiser variant
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import linalg, optimize
from scipy.special import log_ndtr, ndtr

LOG2PI = np.log(2 * np.pi)


# ---------------------------------------------------------------- data
def load(data_dir, bins, part):
    d = os.path.join(data_dir, "chu_ordinal_pyrimidines")
    with open(os.path.join(d, "data.csv")) as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    ncol = len(header) - 4  # row_id + inputs + target, y_bin5, y_bin10
    X = {r[0]: np.array([float(v) for v in r[1:1 + ncol]]) for r in rows[1:]}
    tr, te = [], []
    with open(os.path.join(d, "chu_partitions.csv")) as fh:
        for r in csv.DictReader(fh):
            if int(r["bins"]) != bins or int(r["partition"]) != part:
                continue
            (tr if r["set"] == "train" else te).append((r["row_id"], int(r["chu_label"])))
    Xtr = np.array([X[i] for i, _ in tr])
    Xte = np.array([X[i] for i, _ in te])
    mu = Xtr.mean(0)
    sd = Xtr.std(0, ddof=1)
    ok = sd > 0
    Ztr = np.zeros_like(Xtr)
    Zte = np.zeros_like(Xte)
    Ztr[:, ok] = (Xtr[:, ok] - mu[ok]) / sd[ok]
    Zte[:, ok] = (Xte[:, ok] - mu[ok]) / sd[ok]
    return Ztr, np.array([y for _, y in tr]), Zte, np.array([y for _, y in te])


def sqdist(A, B):
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.maximum(d, 0)


# ---------------------------------------------------------------- parameters
def unpack(theta, r):
    kappa = np.exp(theta[0])
    sigma = np.exp(theta[1])
    b = np.empty(r - 1)
    b[0] = theta[2]
    if r > 2:
        b[1:] = theta[2] + np.cumsum(np.exp(theta[3:]))
    return kappa, sigma, b


def pack(kappa, sigma, b):
    return np.concatenate([[np.log(kappa), np.log(sigma), b[0]], np.log(np.diff(b))])


def bounds_of(y, b):
    bb = np.concatenate([[-np.inf], b, [np.inf]])
    return bb[y], bb[y - 1]  # upper b_y, lower b_{y-1}  (y in 1..r)


# ---------------------------------------------------------------- likelihood
def log_diff_ndtr(z1, z2):
    """ln(Phi(z1) - Phi(z2)) for z1 > z2, stable in both tails."""
    out = np.empty_like(z1)
    up = z2 > 0  # both in the upper tail: use Phi(-z2) - Phi(-z1)
    hi, lo = np.where(up, -z2, z1), np.where(up, -z1, z2)
    lh, ll = log_ndtr(hi), log_ndtr(lo)
    d = ll - lh  # <= 0
    out = lh + np.where(d > -0.693, np.log(-np.expm1(d)), np.log1p(-np.exp(d)))
    return out


def box_ratios(z1, z2):
    """N(z1)/Z and N(z2)/Z with Z = Phi(z1) - Phi(z2) (0 for infinite z), z1 and
    z2 with infinities set to 0 and clipped, so that |z| > 40 (N(z)/Z = 0 in
    double precision) never gives 0 * inf, and log Z."""
    lZ = log_diff_ndtr(z1, z2)

    def ratio(z):
        with np.errstate(invalid="ignore", over="ignore"):
            r = np.exp(-0.5 * z * z - 0.5 * LOG2PI - lZ)
        return np.where(np.isfinite(z), r, 0.0)
    zz1 = np.clip(np.where(np.isfinite(z1), z1, 0.0), -1e6, 1e6)
    zz2 = np.clip(np.where(np.isfinite(z2), z2, 0.0), -1e6, 1e6)
    return ratio(z1), ratio(z2), zz1, zz2, lZ


def lik_terms(f, y, b, sigma):
    """Chu's per-item quantities: loss l, v0..v3, s0..s2 (Appendix A),
    with N(z)/Z computed in logs; z = +-inf terms are 0."""
    u, lo = bounds_of(y, b)
    z1 = (u - f) / sigma
    z2 = (lo - f) / sigma
    r1, r2, zz1, zz2, lZ = box_ratios(z1, z2)
    v = [r1 * zz1 ** p - r2 * zz2 ** p for p in range(4)]
    s = [r1 * zz1 ** p for p in range(3)]
    return -lZ, v, s


def newton(K, y, b, sigma, f0=None, tol=1e-12, maxit=200):
    """f_MAP by Newton (R&W Alg. 3.1 form with backtracking).  Returns f, a
    (= Sigma^-1 f), W, L (chol of B), nlZ (eq. 21)."""
    n = len(y)
    f = np.zeros(n) if f0 is None else f0.copy()
    a = np.zeros(n) if f0 is None else linalg.solve(K + 1e-10 * np.eye(n), f0, assume_a="pos")
    def psi(a, f):
        l, _, _ = lik_terms(f, y, b, sigma)
        return 0.5 * a @ f + l.sum()
    obj = psi(a, f)
    for it in range(maxit):
        l, v, _ = lik_terms(f, y, b, sigma)
        g = v[0] / sigma  # dl/df (eq. 6)
        W = (v[0] ** 2 + v[1]) / sigma ** 2  # eq. 7
        W = np.clip(W, 1e-300, 1 / sigma ** 2)  # 0 < Lambda_ii < 1/sigma^2 (sec. 2.2); guards rounding
        sW = np.sqrt(W)
        L = linalg.cholesky(np.eye(n) + sW[:, None] * K * sW[None, :], lower=True)
        bvec = W * f - g
        t = linalg.cho_solve((L, True), sW * (K @ bvec))
        a_new = bvec - sW * t
        da = a_new - a
        step = 1.0
        while True:
            a_try = a + step * da
            f_try = K @ a_try
            o = psi(a_try, f_try)
            if o <= obj + 1e-14 * abs(obj) or step < 1e-8:
                break
            step *= 0.5
        conv = obj - o < tol
        a, f, obj = a_try, f_try, o
        if conv and it > 0:
            break
    l, v, _ = lik_terms(f, y, b, sigma)
    W = np.clip((v[0] ** 2 + v[1]) / sigma ** 2, 0, 1 / sigma ** 2)
    sW = np.sqrt(W)
    L = linalg.cholesky(np.eye(n) + sW[:, None] * K * sW[None, :], lower=True)
    nlZ = l.sum() + 0.5 * a @ f + np.log(np.diag(L)).sum()
    return f, a, W, L, nlZ


class Problem:
    def __init__(self, X, y, r):
        self.X, self.y, self.r = X, y, r
        D2 = sqdist(X, X)
        self.D2 = 0.5 * (D2 + D2.T)
        np.fill_diagonal(self.D2, 0.0)
        self.f = None  # warm start

    def K(self, kappa):
        return np.exp(-0.5 * kappa * self.D2)

    def nlz(self, theta, warm=True):
        kappa, sigma, b = unpack(theta, self.r)
        K = self.K(kappa)
        f, a, W, L, nlZ = newton(K, self.y, b, sigma, self.f if warm else None)
        if warm:
            self.f = f
        return nlZ

    def fd_grad(self, theta, h=1e-5):
        g = np.zeros_like(theta)
        for k in range(len(theta)):
            e = np.zeros_like(theta)
            e[k] = h
            g[k] = (self.nlz(theta + e, False) - self.nlz(theta - e, False)) / (2 * h)
        return g

    def chu_grad(self, theta, variant="printed"):
        """Gradient of eq. 21 by Chu's Appendix A formulas, literally.
        variant 'printed': as printed, with Lambda^-1 (Lambda^-1 + Sigma)^-1
        evaluated stably as (I + Sigma Lambda)^-1 = I - Sigma A, A =
        W^1/2 B^-1 W^1/2 = (Lambda^-1 + Sigma)^-1 (no Lambda^-1 formed);
        'literal': as printed, forming Lambda^-1 and inverting
        (Lambda^-1 + Sigma) directly (what a direct C transcription does):
        when a Lambda_ii underflows to 0 this gives inf/NaN;
        'noimplicit': the implicit terms (dLambda/df df/dtheta) dropped."""
        r = self.r
        kappa, sigma, b = unpack(theta, r)
        K = self.K(kappa)
        y = self.y
        f, a, Lam, L, nlZ = newton(K, y, b, sigma, None)
        n = len(y)
        _, v, s = lik_terms(f, y, b, sigma)
        v0, v1, v2, v3 = v
        s0, s1, s2 = s
        # (Lambda^-1 + Sigma)^-1 and M = Lambda^-1 (Lambda^-1 + Sigma)^-1 Sigma
        #   = (Sigma^-1 + Lambda)^-1 = K - K sW B^-1 sW K
        sW = np.sqrt(Lam)
        Binv = linalg.cho_solve((L, True), np.eye(n))
        A = sW[:, None] * Binv * sW[None, :]  # (Lambda^-1 + Sigma)^-1
        M = K - K @ A @ K  # (Sigma^-1 + Lambda)^-1
        IpSL = np.eye(n) - K @ A  # Lambda^-1 (Lambda^-1 + Sigma)^-1 = (I + Sigma Lambda)^-1
        if variant == "literal":
            with np.errstate(all="ignore"):
                Linv = 1.0 / Lam
                try:
                    A = np.linalg.inv(np.diag(Linv) + K)
                except np.linalg.LinAlgError:
                    A = np.full((n, n), np.nan)
                IpSL = Linv[:, None] * A
                M = IpSL @ K
        dLdf = (2 * v0 ** 3 + 3 * v0 * v1 + v2 - v0) / sigma ** 3
        imp = 0.0 if variant == "noimplicit" else 1.0
        dM = np.diag(M)
        g = np.zeros(len(theta))
        # eq. 22, kappa
        dK = -0.5 * self.D2 * K  # dSigma/dkappa
        df = IpSL @ (dK @ a)  # Lambda^-1(Lambda^-1+Sigma)^-1 dSigma Sigma^-1 f
        dLam = imp * dLdf * df
        g[0] = kappa * (0.5 * np.sum(A * dK) - 0.5 * a @ dK @ a + 0.5 * dM @ dLam)
        # eq. 23, sigma
        dl = v1 / sigma
        psi = (v0 - v0 * v1 - v2) / sigma ** 2
        df = M @ psi
        dLam = -2 / sigma * Lam + (2 * v0 * v2 + 2 * v0 ** 2 * v1 - v1 + v1 ** 2 + v3) / sigma ** 3 + imp * dLdf * df
        g[1] = sigma * dl.sum() + 0.5 * sigma * dM @ dLam
        # eq. 24, b1
        dl = -v0 / sigma
        df = M @ Lam
        dLam = -dLdf + imp * dLdf * df
        g[2] = dl.sum() + 0.5 * dM @ dLam
        # eq. 25, Delta_iota, iota = 2..r-1
        for k, iota in enumerate(range(2, r)):
            D = np.exp(theta[3 + k])
            gt, eq = y > iota, y == iota
            dl = np.where(gt, -v0 / sigma, np.where(eq, -s0 / sigma, 0.0))
            psiD = np.where(gt, Lam, np.where(eq, (v0 * s0 + s1) / sigma ** 2, 0.0))
            phi = (s0 - 2 * v0 * s1 - 2 * v0 ** 2 * s0 - s2 - v1 * s0) / sigma ** 3
            df = M @ psiD
            dLam = np.where(gt, -dLdf, np.where(eq, phi, 0.0)) + imp * dLdf * df
            g[3 + k] = D * dl.sum() + 0.5 * D * dM @ dLam
        return g, nlZ

    def predict(self, theta, Xte):
        kappa, sigma, b = unpack(theta, self.r)
        K = self.K(kappa)
        f, a, W, L, _ = newton(K, self.y, b, sigma, None)
        Ks = np.exp(-0.5 * kappa * sqdist(Xte, self.X))
        mu = Ks @ a  # eq. 16
        sW = np.sqrt(W)
        V = linalg.solve_triangular(L, sW[:, None] * Ks.T, lower=True)
        var = 1.0 - (V * V).sum(0)
        sd = np.sqrt(sigma ** 2 + var)
        bb = np.concatenate([[-np.inf], b, [np.inf]])
        P = ndtr((bb[None, 1:] - mu[:, None]) / sd[:, None]) - ndtr((bb[None, :-1] - mu[:, None]) / sd[:, None])
        return P.argmax(1) + 1  # eq. 18


def errors(pred, yte):
    return float(np.mean(pred != yte)), float(np.mean(np.abs(pred - yte)))


# ---------------------------------------------------------------- EP and exact
def ep_nlz(K, y, b, sigma, maxit=200, tol=1e-9):
    """-log Z_EP of the ordinal probit GP (parallel-free sequential EP, GPML
    infEP's marginal likelihood formula with zero mean)."""
    n = len(y)
    u, lo = bounds_of(y, b)
    ttau, tnu = np.zeros(n), np.zeros(n)
    Sigma, mu = K.copy(), np.zeros(n)
    def site_moments(mc, vc, idx=slice(None)):
        s = np.sqrt(sigma ** 2 + vc)
        z1, z2 = (u[idx] - mc) / s, (lo[idx] - mc) / s
        r1, r2, zz1, zz2, lZ = box_ratios(z1, z2)
        m = mc + vc / s * (r2 - r1)
        v = vc - vc ** 2 / s ** 2 * ((zz1 * r1 - zz2 * r2) + (r1 - r2) ** 2)
        return lZ, m, v
    old = np.inf
    for sweep in range(maxit):
        for i in np.random.default_rng(0).permutation(n) if sweep == 0 else range(n):
            tau_c = 1 / Sigma[i, i] - ttau[i]
            nu_c = mu[i] / Sigma[i, i] - tnu[i]
            _, mh, vh = site_moments(np.array([nu_c / tau_c]), np.array([1 / tau_c]), [i])
            dt = max(1 / vh[0] - tau_c - ttau[i], -ttau[i] + 1e-12)
            ttau[i] += dt
            tnu[i] = mh[0] / vh[0] - nu_c
            si = Sigma[:, i].copy()
            Sigma -= dt / (1 + dt * si[i]) * np.outer(si, si)
            mu = Sigma @ tnu
        # recompute and evaluate
        sW = np.sqrt(ttau)
        L = linalg.cholesky(np.eye(n) + sW[:, None] * K * sW[None, :], lower=True)
        V = linalg.solve_triangular(L, sW[:, None] * K, lower=True)
        Sigma = K - V.T @ V
        mu = Sigma @ tnu
        tau_n = 1 / np.diag(Sigma) - ttau
        nu_n = mu / np.diag(Sigma) - tnu
        lZ, _, _ = site_moments(nu_n / tau_n, 1 / tau_n)
        nlZ = (np.log(np.diag(L)).sum() - lZ.sum() - tnu @ Sigma @ tnu / 2
               - nu_n @ ((ttau / tau_n * nu_n - 2 * tnu) / (ttau + tau_n)) / 2
               + np.sum(tnu ** 2 / (tau_n + ttau)) / 2 - np.sum(np.log1p(ttau / tau_n)) / 2)
        if abs(nlZ - old) < tol:
            break
        old = nlZ
    return nlZ


def exact_logz(K, y, b, sigma, reps=5):
    """ln P(b_{y-1} < g <= b_y), g ~ N(0, K + sigma^2 I), by R's
    mvtnorm::pmvnorm (Genz-Bretz, relative error control); returns the
    mean and sd of ln P over `reps` independent runs."""
    u, lo = bounds_of(y, b)
    C = K + sigma ** 2 * np.eye(len(y))
    C = 0.5 * (C + C.T)
    with tempfile.TemporaryDirectory() as td:
        np.savetxt(os.path.join(td, "C.txt"), C)
        np.savetxt(os.path.join(td, "b.txt"), np.column_stack([lo, u]))
        code = f"""
suppressMessages(library(mvtnorm))
C <- unname(as.matrix(read.table('{td}/C.txt'))); b <- unname(as.matrix(read.table('{td}/b.txt')))
set.seed(1)
for (k in 1:{reps}) {{
  p <- pmvnorm(lower=b[,1], upper=b[,2], sigma=C,
               algorithm=GenzBretz(maxpts=2000000, abseps=0, releps=1e-3))
  cat(log(p[1]), attr(p, 'error') / p[1], '\\n')
}}
"""
        out = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, check=True).stdout
    vals = np.array([[float(t) for t in line.split()] for line in out.strip().splitlines()])
    return float(vals[:, 0].mean()), float(vals[:, 0].std()), float(vals[:, 1].max())


# ---------------------------------------------------------------- optimisation
def footnote6(d, r):
    # footnote 6: sigma^2 = 1, kappa = 1/d, b_1 = -1, Delta = 2/r
    return pack(1.0 / d, 1.0, -1 + 2.0 / r * np.arange(r - 1))


def starts(d, r):
    s = {"footnote6": footnote6(d, r)}
    s["sigma0.3"] = pack(1.0 / d, 0.3, -1 + 2.0 / r * np.arange(r - 1))
    s["wide"] = pack(0.1 / d, 2.0, -2 + 4.0 / r * np.arange(r - 1))
    s["narrow"] = pack(3.0 / d, 0.5, -1 + 1.0 / r * np.arange(r - 1))
    return s


def minimise(P, theta0, grad="fd", fixed=None, maxiter=500, bounds=None):
    """L-BFGS-B on eq. 21.  grad: 'fd' (scipy's own forward differences on a
    cold-started Newton), 'chu' (Appendix A as printed), 'chu-noimplicit'.
    fixed: {index: value} held constant."""
    free = [k for k in range(len(theta0)) if not fixed or k not in fixed]
    def full(x):
        t = np.array(theta0, float)
        t[free] = x
        if fixed:
            for k, v in fixed.items():
                t[k] = v
        return t
    if grad == "fd":
        fun = lambda x: P.nlz(full(x), warm=False)
        jac = None
    else:
        variant = dict(chu="printed", **{"chu-literal": "literal", "chu-noimplicit": "noimplicit"})[grad]
        def fun(x):
            g, v = P.chu_grad(full(x), variant)
            return v, g[free]
        jac = True
    if bounds is None:  # wide box, never active at an optimum; keeps line searches finite
        bounds = [(-12, 4), (-9, 3), (-20, 20)] + [(-9, 4)] * (len(theta0) - 3)
    bnds = [bounds[k] for k in free]
    res = optimize.minimize(fun, np.asarray(theta0, float)[free], jac=jac, method="L-BFGS-B",
                            bounds=bnds, options=dict(maxiter=maxiter, ftol=1e-12, gtol=1e-7))
    return full(res.x), float(res.fun), int(res.nit), res.message if isinstance(res.message, str) else res.message.decode()


def describe(theta, r):
    kappa, sigma, b = unpack(theta, r)
    return dict(kappa=kappa, gamma=kappa / 2, sigma=sigma, b=[round(x, 4) for x in b])


# ---------------------------------------------------------------- commands
def cmd_fit(args):
    out = []
    for p in args.partitions:
        Xtr, ytr, Xte, yte = load(args.data, args.bins, p)
        P = Problem(Xtr, ytr, args.bins)
        for name, t0 in starts(Xtr.shape[1], args.bins).items():
            th, v, nit, msg = minimise(P, t0, grad=args.grad)
            zo, mae = errors(P.predict(th, Xte), yte)
            rec = dict(partition=p, start=name, logZ=-v, iters=nit, msg=msg, zero_one=zo, mae=mae, **describe(th, args.bins),
                       theta=th.tolist())
            out.append(rec)
            print(f"p{p} {name:10s} logZ {-v:9.4f} gamma {rec['gamma']:.5f} sigma {rec['sigma']:.4f} b {rec['b']} "
                  f"zo {zo:.3f} mae {mae:.3f} it {nit} {msg}", flush=True)
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)


def cmd_gradcheck(args):
    for p in args.partitions:
        Xtr, ytr, _, _ = load(args.data, args.bins, p)
        P = Problem(Xtr, ytr, args.bins)
        d = Xtr.shape[1]
        pts = {"footnote6": footnote6(d, args.bins)}
        if args.json_in:
            for rec in json.load(open(args.json_in)):
                if rec["partition"] == p and rec["start"] == "footnote6":
                    pts["optimum"] = np.array(rec["theta"])
        pts["sigma0.3"] = starts(d, args.bins)["sigma0.3"]
        for name, th in pts.items():
            fd = P.fd_grad(th)
            gc, _ = P.chu_grad(th, "printed")
            gn, _ = P.chu_grad(th, "noimplicit")
            gl, _ = P.chu_grad(th, "literal")
            np.set_printoptions(precision=5, suppress=False, linewidth=200)
            print(f"p{p} at {name}: finite diff {fd}\n   printed  {gc}\n   no-implicit {gn}\n"
                  f"   literal (explicit Lambda^-1) {gl}\n"
                  f"   max |printed - fd| = {np.abs(gc - fd).max():.2e}", flush=True)


def cmd_profile(args):
    out = []
    for p in args.partitions:
        Xtr, ytr, Xte, yte = load(args.data, args.bins, p)
        P = Problem(Xtr, ytr, args.bins)
        th = footnote6(Xtr.shape[1], args.bins)
        for s in args.sigmas:
            th0 = th.copy()
            th0[1] = np.log(s)
            best = None
            for t0 in [th0, np.concatenate([[th0[0], np.log(s)], footnote6(Xtr.shape[1], args.bins)[2:]])]:
                cand = minimise(P, t0, grad="fd", fixed={1: np.log(s)})
                if best is None or cand[1] < best[1]:
                    best = cand
            th = best[0]
            zo, mae = errors(P.predict(th, Xte), yte)
            rec = dict(partition=p, sigma_fixed=s, logZ=-best[1], zero_one=zo, mae=mae, **describe(th, args.bins), theta=th.tolist())
            out.append(rec)
            print(f"p{p} sigma {s:6.3f} logZ {-best[1]:9.4f} gamma {rec['gamma']:.5f} b {rec['b']} zo {zo:.3f} mae {mae:.3f}", flush=True)
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)


def cmd_compare(args):
    prof = json.load(open(args.profile))
    opt = {rec["partition"]: rec for rec in json.load(open(args.fitjson)) if rec["start"] == "footnote6"}
    for p in args.partitions:
        Xtr, ytr, Xte, yte = load(args.data, args.bins, p)
        P = Problem(Xtr, ytr, args.bins)
        pts = [("laplace-opt", opt[p])] + [(f"sigma={r['sigma_fixed']}", r) for r in prof
                                           if r["partition"] == p and r["sigma_fixed"] in args.sigmas]
        # the maximiser of log Z_EP (numerical gradient), from the footnote-6 start
        def ep_obj(t):
            kappa, sigma, b = unpack(t, args.bins)
            return ep_nlz(P.K(kappa), ytr, b, sigma)
        res = optimize.minimize(ep_obj, footnote6(Xtr.shape[1], args.bins), method="L-BFGS-B",
                                options=dict(maxiter=200, ftol=1e-10, gtol=1e-5))
        zo, mae = errors(P.predict(res.x, Xte), yte)
        pts.append(("EP-opt", dict(theta=res.x.tolist(), zero_one=zo, mae=mae)))
        for name, rec in pts:
            th = np.array(rec["theta"])
            kappa, sigma, b = unpack(th, args.bins)
            K = P.K(kappa)
            lap = -P.nlz(th, warm=False)
            ep = -ep_nlz(K, ytr, b, sigma)
            ex, exsd, rel = exact_logz(K, ytr, b, sigma, reps=args.reps)
            print(f"p{p} {name:14s} sigma {sigma:.4f} gamma {kappa / 2:.5f}  laplace {lap:9.4f}  EP {ep:9.4f}  "
                  f"exact {ex:9.4f} (sd {exsd:.4f}, Genz rel.err {rel:.1e})  zo {rec['zero_one']:.3f} mae {rec['mae']:.3f}", flush=True)


def cmd_table(args):
    zo, mae = [], []
    for p in args.partitions:
        Xtr, ytr, Xte, yte = load(args.data, args.bins, p)
        P = Problem(Xtr, ytr, args.bins)
        t0 = footnote6(Xtr.shape[1], args.bins)
        fixed = {1: np.log(args.fix_sigma)} if args.fix_sigma else None
        if args.ep_hyper:  # hyperparameters maximising log Z_EP, then Chu's MAP predictor (eq. 16, 18)
            def ep_obj(t):
                kappa, sigma, b = unpack(t, args.bins)
                try:
                    with np.errstate(all="ignore"):
                        v = ep_nlz(P.K(kappa), ytr, b, sigma)
                except (ValueError, linalg.LinAlgError):
                    v = np.nan
                # failed EP (non-finite, or -ln Z < 0, impossible for a probability): reject the trial point
                return v if np.isfinite(v) and v > 0 else 1e10
            res = optimize.minimize(ep_obj, t0, method="L-BFGS-B", bounds=[(-12, 4), (np.log(1e-3), 3), (-20, 20)] + [(-9, 4)] * (len(t0) - 3),
                                    options=dict(maxiter=200, ftol=1e-10, gtol=1e-5))
            th, v, nit, msg = res.x, P.nlz(res.x, warm=False), res.nit, "EP evidence %.4f" % -res.fun
        else:
            bounds = None
            if args.min_sigma:  # L-BFGS-B box with ln sigma >= ln min_sigma
                bounds = [(-12, 4), (np.log(args.min_sigma), 3), (-20, 20)] + [(-9, 4)] * (len(t0) - 3)
            th, v, nit, msg = minimise(P, t0, grad=args.grad, fixed=fixed, maxiter=args.maxiter, bounds=bounds)
        e = errors(P.predict(th, Xte), yte)
        zo.append(e[0])
        mae.append(e[1])
        dd = describe(th, args.bins)
        print(f"p{p} logZ {-v:9.4f} gamma {dd['gamma']:.5f} sigma {dd['sigma']:.4f} zo {e[0]:.3f} mae {e[1]:.3f} it {nit} {msg}", flush=True)
    print(f"{'ep-hyper' if args.ep_hyper else args.grad} fix_sigma={args.fix_sigma} min_sigma={args.min_sigma} maxiter={args.maxiter}: zero-one {100 * np.mean(zo):.2f}±{100 * np.std(zo, ddof=1):.2f}%  "
          f"MAE {100 * np.mean(mae):.2f}±{100 * np.std(mae, ddof=1):.2f}%  over {len(zo)} partitions")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["fit", "gradcheck", "profile", "compare", "table"])
    ap.add_argument("-data", default="/work/shared/data")
    ap.add_argument("-bins", type=int, default=5)
    ap.add_argument("-partitions", default="1-4", help="e.g. 1-4 or 1,3")
    ap.add_argument("-grad", default="fd", choices=["fd", "chu", "chu-literal", "chu-noimplicit"])
    ap.add_argument("-sigmas", default="0.05,0.07,0.1,0.15,0.2,0.3,0.4,0.5,0.7,1.0")
    ap.add_argument("-fix-sigma", dest="fix_sigma", type=float, default=None)
    ap.add_argument("-json", default=None, help="write results here")
    ap.add_argument("-json-in", dest="json_in", default=None)
    ap.add_argument("-profile", default=None, help="profile json (compare)")
    ap.add_argument("-fitjson", default=None, help="fit json (compare)")
    ap.add_argument("-reps", type=int, default=3)
    ap.add_argument("-min-sigma", dest="min_sigma", type=float, default=None, help="table: lower bound on sigma")
    ap.add_argument("-ep-hyper", dest="ep_hyper", action="store_true", help="table: hyperparameters from log Z_EP")
    ap.add_argument("-maxiter", type=int, default=500, help="L-BFGS-B iteration cap (table)")
    args = ap.parse_args()
    ps = args.partitions
    args.partitions = list(range(int(ps.split("-")[0]), int(ps.split("-")[1]) + 1)) if "-" in ps else [int(x) for x in ps.split(",")]
    args.sigmas = [float(s) for s in args.sigmas.split(",")]
    dict(fit=cmd_fit, gradcheck=cmd_gradcheck, profile=cmd_profile, compare=cmd_compare, table=cmd_table)[args.cmd](args)


if __name__ == "__main__":
    main()
