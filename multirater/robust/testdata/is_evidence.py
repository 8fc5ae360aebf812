"""Importance-sampling estimate of the exact log evidence
    log Z = log E_prior[ prod_i (eps + (1 - 2 eps) Phi(y_i f_i / s)) ],  f ~ N(0, C),
for the cases of reference_test.go on ionosphere40.csv or thyroid40.csv (C as in
ep_reference.py: RBF, gamma = 1/32 or 0.05, + 1e-8 I).  Case A (eps = 0) is included as a check of the
method against the orthant probability of exact_evidence.R.

Proposal: multivariate Student-t with 5 degrees of freedom, located at the EP
posterior mean (ep_reference.py) with scale matrix 1.2^2 times the EP posterior
covariance (the EP approximation widened, with heavy tails so that the weights
have finite variance).  M = 2,000,000 draws (numpy default_rng(20240616), in
batches).  Estimate log(mean w); Monte Carlo standard error of log Z by the delta
method, se = sd(w) / (mean(w) sqrt(M)).  Also printed: the effective sample size
(sum w)^2 / sum w^2 and the estimates of 4 quarters of the draws (the spread
gives a check of the error).

Run from this folder:  /usr/bin/python3 is_evidence.py [ionosphere|thyroid]
(default ionosphere).
Writes ref_is_logz.csv (ionosphere) or ref_thyroid_is_logz.csv (thyroid), with
columns case, eps, s, logz_is, mc_se, ess, draws.
"""
import numpy as np
from scipy.special import gammaln, logsumexp

from ep_reference import CASES, cov, dataset, ep, load, log_lik

M = 2_000_000
BATCH = 100_000
DF = 5.0
WIDEN = 1.2


def mvt_logpdf(x, mean, L, df):
    """log density of the multivariate t with location mean and scale L L'."""
    n = len(mean)
    r = np.linalg.solve(L, (x - mean).T)  # n x B
    maha = np.sum(r * r, axis=0)
    return (gammaln((df + n) / 2) - gammaln(df / 2) - n / 2 * np.log(df * np.pi)
            - np.sum(np.log(np.diag(L))) - (df + n) / 2 * np.log1p(maha / df))


def is_log_weights(rng, r, LC, lprior_const, widen, loglik):
    """Log importance weights of M draws of f (in batches) from the
    multivariate t with DF degrees of freedom at the EP posterior r, its
    covariance widened by widen^2: log N(f; 0, C) (C = LC LC', lprior_const
    its constant) + loglik(f) - log q(f).  loglik may draw from rng after the
    batch's f."""
    n = len(r["mean"])
    L = np.linalg.cholesky(widen ** 2 * r["Sigma"])
    lw = np.empty(M)
    for b in range(0, M, BATCH):
        zz = rng.standard_normal((BATCH, n))
        u = rng.chisquare(DF, BATCH)
        f = r["mean"] + (zz @ L.T) * np.sqrt(DF / u)[:, None]
        a = np.linalg.solve(LC, f.T)
        lp = lprior_const - 0.5 * np.sum(a * a, axis=0)
        lw[b:b + BATCH] = lp + loglik(f) - mvt_logpdf(f, r["mean"], L, DF)
    return lw


def is_summary(lw):
    """The estimate log(mean w), its Monte Carlo standard error (delta
    method), the effective sample size and the estimates of 4 quarters of
    the draws."""
    lz = logsumexp(lw) - np.log(M)
    w = np.exp(lw - lw.max())
    se = np.std(w) / (np.mean(w) * np.sqrt(M))
    ess = w.sum() ** 2 / np.sum(w * w)
    quarters = [logsumexp(q) - np.log(len(q)) for q in np.split(lw, 4)]
    return lz, se, ess, quarters


def main():
    path, gamma, prefix = dataset()
    X, y = load(path)
    C = cov(X, gamma)
    n = len(y)
    LC = np.linalg.cholesky(C)
    lprior_const = -n / 2 * np.log(2 * np.pi) - np.sum(np.log(np.diag(LC)))
    rng = np.random.default_rng(20240616)
    with open(prefix + "is_logz.csv", "w") as fh:
        fh.write("case,eps,s,logz_is,mc_se,ess,draws\n")
        for name, eps, s in CASES:
            r = ep(C, y, eps, s)
            lw = is_log_weights(rng, r, LC, lprior_const, WIDEN,
                                lambda f: np.sum(log_lik(y[None, :], f, eps, s), axis=1))
            lz, se, ess, quarters = is_summary(lw)
            print("case %s eps=%g s=%g: log Z_IS = %.5f +- %.5f (ESS %.0f of %d; quarters %s); log Z_EP = %.5f, EP - IS = %.4f"
                  % (name, eps, s, lz, se, ess, M, " ".join("%.4f" % q for q in quarters), r["logz"], r["logz"] - lz))
            fh.write("%s,%g,%g,%.8f,%.3g,%.0f,%d\n" % (name, eps, s, lz, se, ess, M))


if __name__ == "__main__":
    main()
