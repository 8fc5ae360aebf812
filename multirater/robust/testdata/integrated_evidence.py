"""Importance-sampling estimate of the robust model's evidence with the error
rate integrated over its uniform prior on [0, 1/2] (the evidence --select
compares with the plain model's), at a fixed latent noise s:

    log Z_int = log E_{eps ~ U(0, 1/2)} E_{f ~ N(0, C)} [ prod_i (eps + (1 - 2 eps) Phi(y_i f_i / s)) ]

on ionosphere40.csv (C as in ep_reference.py: RBF, gamma = 1/32, + 1e-8 I), for
s = 1 and s = 0.5.  Joint importance sampling of (eps, f): eps from its prior
(uniform on [0, 1/2]) and f from a multivariate Student-t with 5 degrees of
freedom at the EP posterior for eps = 0.05 (ep_reference.py) with its covariance
widened by 1.3^2, so the weight is p(f) p(y | f, eps) / q(f).  M = 2,000,000
draws (numpy default_rng(20261125)); Monte Carlo standard error by the delta
method; the estimates of 4 quarters of the draws are printed too.

Run from this folder:  /usr/bin/python3 integrated_evidence.py
Writes ref_integrated_logz.csv (s, logz_int, mc_se, ess, draws).
"""
import numpy as np
from scipy.special import log_ndtr

from ep_reference import cov, ep, load
from is_evidence import M, is_log_weights, is_summary

WIDEN = 1.3


def main():
    X, y = load()
    C = cov(X)
    n = len(y)
    LC = np.linalg.cholesky(C)
    lprior_const = -n / 2 * np.log(2 * np.pi) - np.sum(np.log(np.diag(LC)))
    rng = np.random.default_rng(20261125)
    with open("ref_integrated_logz.csv", "w") as fh:
        fh.write("s,logz_int,mc_se,ess,draws\n")
        for s in (1.0, 0.5):
            r = ep(C, y, 0.05, s)

            def loglik(f):
                # eps ~ U(0, 1/2), drawn after the batch's f (eps > 0 almost surely).
                e = rng.uniform(0, 0.5, len(f))[:, None]
                return np.sum(np.logaddexp(np.log(e), np.log1p(-2 * e) + log_ndtr(y[None, :] * f / s)), axis=1)
            lw = is_log_weights(rng, r, LC, lprior_const, WIDEN, loglik)
            lz, se, ess, quarters = is_summary(lw)
            print("s=%g: log Z_int = %.5f +- %.5f (ESS %.0f of %d; quarters %s)"
                  % (s, lz, se, ess, M, " ".join("%.4f" % q for q in quarters)))
            fh.write("%g,%.8f,%.3g,%.0f,%d\n" % (s, lz, se, ess, M))


if __name__ == "__main__":
    main()
