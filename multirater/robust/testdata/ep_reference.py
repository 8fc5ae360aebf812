"""Independent EP reference for Kim & Ghahramani's robust GP classifier at FIXED
hyperparameters, written from GPML's infEP / Rasmussen & Williams (2006)
Algorithms 3.5 and 3.6, generalised to the likelihood

    p(y | f) = eps + (1 - 2 eps) Phi(y f / s),  y in {-1, +1},  f ~ N(0, C).

Used by reference_test.go (the numbers it writes: ref_ep.csv, ref_ep_logz.csv;
ref_thyroid_ep.csv, ref_thyroid_ep_logz.csv).
Run from this folder:  /usr/bin/python3 ep_reference.py [ionosphere|thyroid]
(default ionosphere).

Data (see README.md and DATASETS below): ionosphere40.csv with
C = exp(-gamma |x - x'|^2) + jitter I, gamma = 1/32 (1 / number of inputs), or
thyroid40.csv with gamma = 0.05 (Kim & Ghahramani's thyroid kernel); jitter = 1e-8.

Tilted moments in closed form.  For the cavity N(f | m, v):
    Z   = eps + (1 - 2 eps) Phi(z),  z = y m / sqrt(s^2 + v),  k = 1 / sqrt(s^2 + v)
    q   = (1 - 2 eps) phi(z) / Z
    d1  = d log Z / dm   = y k q
    d2  = d^2 log Z / dm^2 = -k^2 q (z + q)
    tilted mean m + v d1, tilted variance v + v^2 d2,
so the new site is  tau = -d2 / (1 + v d2),  nu = (d1 - m d2) / (1 + v d2).
For eps > 0 the likelihood is not log-concave: z + q < 0 far on the wrong side,
d2 > 0 and the site precision tau < 0.  Such sites are KEPT (Minka's EP).  An
update whose cavity would be improper (1/Sigma_ii - tau_i <= 0) or whose tilted
variance would be non-positive (1 + v d2 <= 0) is skipped and counted (neither
happened on these cases: the counts are printed).  Sequential (GPML order 1..n)
rank-one updates of Sigma; Sigma is recomputed from scratch after every sweep as
Sigma = (I + C T)^{-1} C, which needs no square root of T (T may be negative).
Damping: the new site is delta * (new) + (1 - delta) * (old) in natural
parameters with delta = 1 for eps = 0 (GPML) and delta = 0.5 for eps > 0; the
fixed point does not depend on delta.  Convergence: every site's change below
1e-13 and log Z_EP's below 1e-13 between sweeps.

log Z_EP (the EP evidence, R&W eq. 3.65 rewritten with log-partition functions so
that it holds for negative site precisions):
    log Z_EP = 1/2 nu' mu - 1/2 log det(I + C T)
               + sum_i [ log Zhat_i + 1/2 m_i^2 / v_i + 1/2 log v_i
                         - 1/2 mu_i^2 / Sigma_ii - 1/2 log Sigma_ii ]
with (m_i, v_i) the cavities and (mu, Sigma) the posterior at the fixed point.
It is checked against the GPML formula (the sW form) where every tau > 0.

concord's prior factor.  concord's robust.Fit does not factor C exactly: it
uses a pivoted partial Cholesky factor C ~ G G' (gp.NewPivotedFactor: greedy
pivot on the largest residual variance, the first such item on ties) that
stops once the residual trace tr(C - G G') is at most a quarter of
Problem.FactorTol = 1e-2 s^2, i.e. at most 0.0025 s^2.  On ionosphere40 that
factor has full rank 40 in every case; on thyroid40 (gamma = 0.05, 5 inputs,
a kernel matrix of fast-decaying spectrum) it has rank 25 (s = 1) or 28
(s = 0.5).  Where the factor's rank is below N, this script also runs the same
EP with the prior G G' and writes it to <prefix>ep_factor.csv (case, item,
mean, sd, logz_ep, rank, residual): the fixed point concord computes, to the
EP tolerance.
"""
import csv
import sys

import numpy as np
from scipy.special import log_ndtr

GAMMA = 1.0 / 32
JITTER = 1e-8
CASES = [("A", 0.0, 1.0), ("B", 0.1, 1.0), ("C", 0.05, 0.5), ("D", 0.1, 0.5)]
# Data set name -> (data file, RBF gamma, prefix of the reference files written).
DATASETS = {
    "ionosphere": ("ionosphere40.csv", 1.0 / 32, "ref_"),
    "thyroid": ("thyroid40.csv", 0.05, "ref_thyroid_"),
}


def dataset(argv=None):
    """The data set named by the first command-line argument (default
    ionosphere): (data file, gamma, output prefix)."""
    argv = sys.argv[1:] if argv is None else argv
    name = argv[0] if argv else "ionosphere"
    if name not in DATASETS:
        sys.exit("unknown data set %r (want one of %s)" % (name, ", ".join(DATASETS)))
    return DATASETS[name]


def load(path="ionosphere40.csv"):
    with open(path) as fh:
        rows = list(csv.reader(fh))
    head = rows[0]
    data = np.array([[float(v) for v in r] for r in rows[1:]])
    y = data[:, head.index("y")]
    X = data[:, 2:]
    return X, y


def cov(X, gamma=GAMMA, jitter=JITTER):
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    C = np.exp(-gamma * d2)
    C[np.diag_indices_from(C)] += jitter
    return C


def log_lik_tilted(y, m, v, eps, s):
    """log Z, d1, d2 of the tilted normaliser (vectorised)."""
    k = 1.0 / np.sqrt(s * s + v)
    z = y * m * k
    lphi = log_ndtr(z)
    lw = np.log1p(-2 * eps) + lphi
    logZ = np.logaddexp(np.log(eps), lw) if eps > 0 else lw
    q = np.exp(np.log1p(-2 * eps) - 0.5 * z * z - 0.5 * np.log(2 * np.pi) - logZ)
    return logZ, y * k * q, -k * k * q * (z + q)


def log_lik(y, f, eps, s):
    """log p(y | f) (vectorised over f)."""
    lw = np.log1p(-2 * eps) + log_ndtr(y * f / s)
    return np.logaddexp(np.log(eps), lw) if eps > 0 else lw


def posterior(C, tau, nu):
    n = len(tau)
    Sigma = np.linalg.solve(np.eye(n) + C * tau[None, :], C)
    Sigma = 0.5 * (Sigma + Sigma.T)
    return Sigma, Sigma @ nu


def log_z_ep(C, y, tau, nu, eps, s):
    Sigma, mu = posterior(C, tau, nu)
    d = np.diag(Sigma)
    tc = 1 / d - tau
    vc = 1 / tc
    mc = vc * (mu / d - nu)
    lZ, _, _ = log_lik_tilted(y, mc, vc, eps, s)
    sign, ld = np.linalg.slogdet(np.eye(len(y)) + C * tau[None, :])
    assert sign > 0
    out = 0.5 * nu @ mu - 0.5 * ld + np.sum(lZ + 0.5 * mc * mc / vc + 0.5 * np.log(vc) - 0.5 * mu * mu / d - 0.5 * np.log(d))
    if np.all(tau > 0):
        # GPML infEP's formula (R&W 3.65 with the sW trick), as a check.
        n = len(y)
        sW = np.sqrt(tau)
        L = np.linalg.cholesky(np.eye(n) + sW[:, None] * C * sW[None, :])
        ttau, tnu = tau, nu
        # GPML 4 infEP (R&W eq. 3.65), prior mean 0, cavities' natural parameters tau_n, nu_n:
        #   p = tnu, q = nu_n, v = diag(Sigma)
        #   nlZ = sum log diag L - sum lZ - p' Sigma p / 2 + diag(Sigma)' p.^2 / 2
        #         - q' ((ttau ./ tau_n .* q - 2 p) .* v) / 2 - sum log(1 + ttau ./ tau_n) / 2
        tau_n, nu_n = tc, mc / vc
        p, q, v = tnu, nu_n, d
        nlZ = (np.sum(np.log(np.diag(L))) - np.sum(lZ) - p @ Sigma @ p / 2 + d @ (p ** 2) / 2
               - q @ ((ttau / tau_n * q - 2 * p) * v) / 2 - np.sum(np.log(1 + ttau / tau_n)) / 2)
        assert abs(-nlZ - out) < 1e-8, (-nlZ, out)
    return out, mu, np.sqrt(d)


def ep(C, y, eps, s, delta=None, tol=1e-13, max_sweeps=2000):
    n = len(y)
    if delta is None:
        delta = 1.0 if eps == 0 else 0.5
    tau = np.zeros(n)
    nu = np.zeros(n)
    Sigma, mu = C.copy(), np.zeros(n)
    skipped = 0
    old = None
    for sweep in range(max_sweeps):
        tau_old, nu_old = tau.copy(), nu.copy()
        for i in range(n):
            tc = 1 / Sigma[i, i] - tau[i]
            if tc <= 0:
                skipped += 1
                continue
            nc = mu[i] / Sigma[i, i] - nu[i]
            vc, mc = 1 / tc, nc / tc
            _, d1, d2 = log_lik_tilted(y[i], mc, vc, eps, s)
            den = 1 + vc * d2
            if den <= 0:
                skipped += 1
                continue
            tn = -d2 / den
            nn = (d1 - mc * d2) / den
            tn = delta * tn + (1 - delta) * tau[i]
            nn = delta * nn + (1 - delta) * nu[i]
            dt = tn - tau[i]
            si = Sigma[:, i].copy()
            Sigma -= dt / (1 + dt * si[i]) * np.outer(si, si)
            tau[i], nu[i] = tn, nn
            mu = Sigma @ nu
        Sigma, mu = posterior(C, tau, nu)
        lz, _, _ = log_z_ep(C, y, tau, nu, eps, s)
        change = max(np.max(np.abs(tau - tau_old)), np.max(np.abs(nu - nu_old)))
        if old is not None and change < tol and abs(lz - old) < tol:
            break
        old = lz
    else:
        raise RuntimeError("EP did not converge")
    lz, mu, sd = log_z_ep(C, y, tau, nu, eps, s)
    return dict(logz=lz, mean=mu, sd=sd, tau=tau, nu=nu, sweeps=sweep + 1, skipped=skipped,
                negative=int(np.sum(tau < 0)), Sigma=Sigma)


def pivoted_factor(C, tol):
    """concord's gp.NewPivotedFactor: G with G G' ~ C, pivoting on the largest
    residual variance (the first such item on ties), stopping once the
    residual trace is at most tol (at least one column).  Returns G and the
    residual trace."""
    n = len(C)
    d = np.diag(C).copy()
    floor = n * 2.0 ** -52 * d.max()
    G = np.zeros((n, 0))
    piv = np.zeros(n, bool)
    while G.shape[1] < n:
        free = np.where(~piv)[0]
        p = free[np.argmax(d[free])]
        if (G.shape[1] > 0 and d[free].sum() <= tol) or d[p] <= floor:
            break
        g = (C[:, p] - G @ G[p]) / np.sqrt(d[p])
        g[piv] = 0
        g[p] = np.sqrt(d[p])
        G = np.column_stack([G, g])
        d = d - g * g
        d[p] = 0
        piv[p] = True
    return G, d[~piv].sum()


def factor_tol(s):
    """The residual trace concord's robust.Fit lets its factor leave out at
    latent noise s: a quarter of Problem.FactorTol = 1e-2 max(s^2, 1e-4)."""
    return 1e-2 * max(s * s, 1e-4) / 4


def main():
    path, gamma, prefix = dataset()
    X, y = load(path)
    C = cov(X, gamma)
    factored = []
    with open(prefix + "ep_logz.csv", "w") as fz, open(prefix + "ep.csv", "w") as fm:
        fz.write("case,eps,s,logz_ep,sweeps,negative_sites,skipped\n")
        fm.write("case,item,mean,sd\n")
        for name, eps, s in CASES:
            r = ep(C, y, eps, s)
            # A second run with another damping and order must land on the same point.
            r2 = ep(C, y, eps, s, delta=0.3)
            assert abs(r2["logz"] - r["logz"]) < 1e-10 and np.max(np.abs(r2["mean"] - r["mean"])) < 1e-9
            print("case %s eps=%g s=%g: log Z_EP = %.12f  (%d sweeps, %d negative sites, %d skipped; "
                  "|mean| max %.3f, sd range %.3f..%.3f)" % (name, eps, s, r["logz"], r["sweeps"], r["negative"],
                                                          r["skipped"], np.max(np.abs(r["mean"])), r["sd"].min(), r["sd"].max()))
            fz.write("%s,%g,%g,%.15g,%d,%d,%d\n" % (name, eps, s, r["logz"], r["sweeps"], r["negative"], r["skipped"]))
            for i in range(len(y)):
                fm.write("%s,%d,%.15g,%.15g\n" % (name, i, r["mean"][i], r["sd"][i]))
            G, res = pivoted_factor(C, factor_tol(s))
            if G.shape[1] < len(y):
                rf = ep(G @ G.T, y, eps, s)
                rf2 = ep(G @ G.T, y, eps, s, delta=0.3)
                assert abs(rf2["logz"] - rf["logz"]) < 1e-10 and np.max(np.abs(rf2["mean"] - rf["mean"])) < 1e-9
                print("  with concord's prior factor (rank %d, residual trace %.3g <= %.3g): log Z_EP = %.12f "
                      "(%d sweeps, %d negative sites, %d skipped); against the exact C: max |mean diff| %.2g, "
                      "max |sd diff| %.2g" % (G.shape[1], res, factor_tol(s), rf["logz"], rf["sweeps"], rf["negative"],
                                              rf["skipped"], np.max(np.abs(rf["mean"] - r["mean"])),
                                              np.max(np.abs(rf["sd"] - r["sd"]))))
                factored.append((name, rf, G.shape[1], res))
    if factored:
        with open(prefix + "ep_factor.csv", "w") as ff:
            ff.write("case,item,mean,sd,logz_ep,rank,residual\n")
            for name, rf, rank, res in factored:
                for i in range(len(y)):
                    ff.write("%s,%d,%.15g,%.15g,%.15g,%d,%.6g\n" % (name, i, rf["mean"][i], rf["sd"][i], rf["logz"], rank, res))


if __name__ == "__main__":
    main()
