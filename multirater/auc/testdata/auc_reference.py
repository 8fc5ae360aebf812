#!/usr/bin/python3
"""Independent references for the linear AUC pseudo-posterior (issue 17).

Ridgway, Alquier, Chopin & Liang (2016), PAC-Bayesian AUC classification and
scoring: for linear scores s(x) = <theta, x>, prior theta ~ N(0, V I) and the
pseudo-likelihood of sec. 3.3,

    prod_{i pos, j neg} exp(-gamma' 1{<theta, x_i - x_j> < 0}),  gamma' = gamma / (n+ n-),

this script computes, from the paper and standard EP/Monte Carlo theory only
(no code shared with concord's Go):

1. EP with one Gaussian site per pair (parallel updates with damping, sec.
   3.3, van Gerven et al. 2010), tilted moments from the two truncated
   normals of the step, and log Z_EP = log of the integral of the prior times
   the normalised sites (each site scaled so that cavity x site integrates to
   the tilted normaliser Z_k). Optionally sequential (one site at a time)
   updates, to check that both schedules reach the same fixed point.

2. The exact log Z and posterior moments by importance sampling on the
   direction u = theta / |theta|: the risk depends on theta's direction only,
   so Z = E_{u ~ uniform sphere}[exp(-gamma R_n(u))], and under the exact
   pseudo-posterior |theta| / sqrt(V) ~ chi_d independently of u, so
   E[theta] = sqrt(V) E[chi_d] E[u] and E[theta theta'] = V d E[u u'].
   The proposal is the direction of theta drawn from a mixture of
   N(m, s S), s in --scales (heavier tails than one Gaussian); its density on
   the sphere, int_0^inf N(r u; m, s S) r^(d-1) dr, is computed by
   quadrature. (m, S) are the posterior moments of a pilot run whose
   proposal is built on EP's (population Monte Carlo). The report gives the
   ESS and standard errors from the spread of 50 batches. At gamma = 0 the
   estimator returns log Z = 0 and the prior's moments to within its
   standard errors; at gamma 10 it agrees with plain Monte Carlo from the
   prior (log Z -3.7676 +- 0.0012 with 2e6 prior draws).

Usage:
    /usr/bin/python3 auc_reference.py [--gamma 10,1000] [--draws 2000000] [--seed 1] [--sequential] [--csv F]
        [--rwm STEPS,CHAINS]

3. With --rwm, random-walk Metropolis on theta (many independent chains) for
   the posterior moments, a check of the importance sampler's.

pima_is_reference.csv was written by
    /usr/bin/python3 auc_reference.py --gamma 10,50,200,1000 --draws 2000000 --seed 1 --csv pima_is_reference.csv

Prints, per gamma, EP's log Z, means and sds, and the IS reference's log Z
+- se, means and sds (+- se), in z-scored (sample sd, n - 1) Pima.tr units.
"""
import argparse
import csv
import math
import os
import sys
import time

import numpy as np
from scipy.special import gammaln, log_ndtr

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path=os.path.join(HERE, "pima_tr.csv")):
    with open(path) as f:
        rows = list(csv.reader(f))
    head, rows = rows[0], rows[1:]
    x = np.array([[float(v) for v in r[:-1]] for r in rows])
    y = np.array([r[-1] == "Yes" for r in rows])
    return head[:-1], x, y


def zscore(x, ddof=1):
    return (x - x.mean(0)) / x.std(0, ddof=ddof)


def pair_matrix(x, y):
    pos, neg = x[y], x[~y]
    return (pos[:, None, :] - neg[None, :, :]).reshape(-1, x.shape[1])


def lognormpdf(z):
    return -0.5 * z * z - 0.5 * math.log(2 * math.pi)


def tilted(mc, vc, c):
    """log Z, mean and variance of N(x; mc, vc) exp(-c 1{x < 0}), from the two
    truncated normals (x > 0 with weight Phi(z), x < 0 with e^-c Phi(-z))."""
    s = np.sqrt(vc)
    z = mc / s
    lp, ln = log_ndtr(z), log_ndtr(-z) - c
    lz = np.logaddexp(lp, ln)
    wp, wn = np.exp(lp - lz), np.exp(ln - lz)
    lam_p = np.exp(lognormpdf(z) - log_ndtr(z))  # phi(z)/Phi(z)
    lam_n = np.exp(lognormpdf(z) - log_ndtr(-z))  # phi(z)/Phi(-z)
    mp, mn = mc + s * lam_p, mc - s * lam_n
    vp = vc * (1 - z * lam_p - lam_p ** 2)
    vn = vc * (1 + z * lam_n - lam_n ** 2)
    mean = wp * mp + wn * mn
    var = wp * (vp + mp ** 2) + wn * (vn + mn ** 2) - mean ** 2
    return lz, mean, var


def ep(a, gamma, v=1.0, damp=0.5, tol=1e-9, max_sweeps=5000, sequential=False, verbose=False, init=None):
    """EP with a Gaussian site exp(-tau x^2/2 + nu x) on each x_k = a_k'theta,
    starting from the sites init = (tau, nu) (default 0)."""
    m, d = a.shape
    c = gamma / m
    tau, nu = np.zeros(m), np.zeros(m)
    if init is not None:
        tau, nu = np.array(init[0], dtype=float), np.array(init[1], dtype=float)

    def posterior(tau, nu):
        prec = np.eye(d) / v + (a * tau[:, None]).T @ a
        cov = np.linalg.inv(prec)
        cov = 0.5 * (cov + cov.T)
        return cov, cov @ (a.T @ nu)

    cov, mu = posterior(tau, nu)
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        if sequential:
            # One site at a time, rank-one updates of (cov, mu).
            prevmu, prevcov = mu.copy(), cov.copy()
            for k in np.random.default_rng(sweeps).permutation(m):
                ak = a[k]
                ca = cov @ ak
                vk, mk = ak @ ca, ak @ mu
                ct, cn = 1 / vk - tau[k], mk / vk - nu[k]
                if ct <= 0:
                    continue
                _, tm, tv = tilted(cn / ct, 1 / ct, c)
                nt = damp * (1 / tv - ct) + (1 - damp) * tau[k]
                nn = damp * (tm / tv - cn) + (1 - damp) * nu[k]
                dt, dn = nt - tau[k], nn - nu[k]
                den = 1 + dt * vk
                if den <= 0:
                    continue
                cov = cov - np.outer(ca, ca) * (dt / den)
                tau[k], nu[k] = nt, nn
                mu = cov @ (a.T @ nu)
            cov, mu = posterior(tau, nu)
            change = max(np.max(np.abs(mu - prevmu)), np.max(np.abs(cov - prevcov)))
            if verbose:
                print(f"  sweep {sweeps}: change {change:.3g}", file=sys.stderr)
            if change < tol:
                break
            continue
        pv = np.einsum("kd,de,ke->k", a, cov, a)
        pm = a @ mu
        ct = 1 / pv - tau
        cn = pm / pv - nu
        if np.any(ct <= 0):
            raise RuntimeError("improper cavity")
        _, tm, tv = tilted(cn / ct, 1 / ct, c)
        nt = damp * (1 / tv - ct) + (1 - damp) * tau
        nn = damp * (tm / tv - cn) + (1 - damp) * nu
        change = max(np.max(np.abs(nt - tau) * pv), np.max(np.abs(nn - nu) * np.sqrt(pv)))
        tau, nu = nt, nn
        cov, mu = posterior(tau, nu)
        if np.min(np.linalg.eigvalsh(cov)) <= 0:
            raise RuntimeError("posterior not positive definite")
        if change < tol:
            break
    # log Z_EP.
    pv = np.einsum("kd,de,ke->k", a, cov, a)
    pm = a @ mu
    ct = 1 / pv - tau
    cn = pm / pv - nu
    vc, mc = 1 / ct, cn / ct
    lzk, _, _ = tilted(mc, vc, c)
    # log of int N(x; mc, vc) exp(-tau x^2/2 + nu x) dx.
    lg = -0.5 * np.log1p(tau * vc) + 0.5 * (mc / vc + nu) ** 2 / (1 / vc + tau) - 0.5 * mc ** 2 / vc
    s = (a * tau[:, None]).T @ a
    b = a.T @ nu
    sign, logdet = np.linalg.slogdet(np.eye(d) + v * s)
    lzg = -0.5 * logdet + 0.5 * b @ cov @ b
    return dict(logz=float(np.sum(lzk - lg) + lzg), mean=mu, sd=np.sqrt(np.diag(cov)), cov=cov,
                sweeps=sweeps, negative=int(np.sum(tau < 0)), tau=tau, nu=nu)


def misordered(x, y, theta, batch=20000):
    """Number of (positive i, negative j) pairs with <theta, x_i - x_j> < 0 for
    each row of theta, by sorting the scores (ties have probability 0)."""
    out = np.empty(len(theta), dtype=np.int64)
    nneg = int(np.sum(~y))
    for s in range(0, len(theta), batch):
        sc = theta[s:s + batch] @ x.T
        lab = y[np.argsort(sc, axis=1)]
        # Negatives at or below each position; a positive there is misordered
        # with every negative above it.
        below = np.cumsum(~lab, axis=1)
        out[s:s + batch] = np.sum(np.where(lab, nneg - below, 0), axis=1)
    return out


def log_radial(a_, b_, k, npts=401):
    """log int_0^inf r^k exp(-a r^2/2 + b r) dr for arrays a > 0, b, by the
    trapezoidal rule around the integrand's peak (t = r sqrt(a))."""
    s = b_ / np.sqrt(a_)
    peak = 0.5 * (s + np.sqrt(s * s + 4 * k))
    lo = np.maximum(peak - 14, 0)
    hi = peak + 14
    t = lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, npts)[None, :]
    with np.errstate(divide="ignore"):
        lf = k * np.log(t) - 0.5 * t * t + s[:, None] * t
    mx = np.max(lf, axis=1, keepdims=True)
    f = np.exp(lf - mx)
    h = (hi - lo) / (npts - 1)
    integ = h * (np.sum(f, axis=1) - 0.5 * (f[:, 0] + f[:, -1]))
    return np.log(integ) + mx[:, 0] - 0.5 * (k + 1) * np.log(a_)


def direction_is(x, y, gamma, mq, sq, draws, rng, batch=20000, scales=(1.0,), probs=None):
    """Importance sampling of the direction u; returns log weights and u.

    The proposal is the direction of theta drawn from the mixture of
    N(mq, s sq) over s in scales (weights probs, default equal): the wider
    components give it heavier tails than one Gaussian's."""
    d = x.shape[1]
    c = gamma / (np.sum(y) * np.sum(~y))
    scales = np.asarray(scales, dtype=float)
    probs = np.full(len(scales), 1 / len(scales)) if probs is None else np.asarray(probs, dtype=float)
    comps = []
    for sc in scales:
        s2 = sc * sq
        prec = np.linalg.inv(s2)
        _, logdet = np.linalg.slogdet(s2)
        comps.append((np.linalg.cholesky(s2), prec, logdet, mq @ prec @ mq))
    log_area = math.log(2) + 0.5 * d * math.log(math.pi) - gammaln(0.5 * d)
    lw, us = [], []
    for s in range(0, draws, batch):
        nb = min(batch, draws - s)
        which = rng.choice(len(scales), size=nb, p=probs)
        z = rng.standard_normal((nb, d))
        th = np.empty((nb, d))
        for j, (lq, _, _, _) in enumerate(comps):
            sel = which == j
            th[sel] = mq + z[sel] @ lq.T
        u = th / np.linalg.norm(th, axis=1, keepdims=True)
        logps = []
        for j, (_, prec, logdet, cq) in enumerate(comps):
            qa = np.einsum("nd,de,ne->n", u, prec, u)
            qb = u @ (prec @ mq)
            logps.append(math.log(probs[j]) - 0.5 * d * math.log(2 * math.pi) - 0.5 * logdet - 0.5 * cq
                         + log_radial(qa, qb, d - 1))
        logp = np.logaddexp.reduce(np.array(logps), axis=0)
        lw.append(-c * misordered(x, y, u) - log_area - logp)
        us.append(u)
    return np.concatenate(lw), np.concatenate(us)


def rwm(x, y, gamma, e, steps, chains, rng, v=1.0):
    """Random-walk Metropolis on theta (independent chains, started
    over-dispersed around EP's posterior, proposal 2.38^2/d times twice EP's
    covariance); returns the means and sds after the first fifth and their
    standard errors over 20 groups of chains."""
    d = x.shape[1]
    c = gamma / (np.sum(y) * np.sum(~y))
    lc = np.linalg.cholesky(e["cov"])
    th = e["mean"] + 1.5 * rng.standard_normal((chains, d)) @ lc.T
    lp_ = np.linalg.cholesky((2.38 ** 2 / d) * 2.0 * e["cov"])
    logt = lambda t: -0.5 * np.sum(t * t, axis=1) / v - c * misordered(x, y, t)
    lp = logt(th)
    burn = steps // 5
    s1, s2 = np.zeros((chains, d)), np.zeros((chains, d))
    acc = 0.0
    for it in range(steps):
        pr = th + rng.standard_normal((chains, d)) @ lp_.T
        lq = logt(pr)
        ok = np.log(rng.random(chains)) < lq - lp
        th[ok], lp[ok] = pr[ok], lq[ok]
        acc += ok.mean() / steps
        if it >= burn:
            s1 += th
            s2 += th * th
    n = steps - burn
    mean = s1.sum(0) / (n * chains)
    sd = np.sqrt(s2.sum(0) / (n * chains) - mean ** 2)
    g1 = np.array([b.sum(0) / (n * len(b)) for b in np.array_split(s1, 20)])
    g2 = np.array([b.sum(0) / (n * len(b)) for b in np.array_split(s2, 20)])
    gsd = np.sqrt(g2 - g1 ** 2)
    return dict(mean=mean, sd=sd, mean_se=g1.std(0, ddof=1) / math.sqrt(20), sd_se=gsd.std(0, ddof=1) / math.sqrt(20),
                acc=acc)


def summarise(lw, u, v, nbatch=50):
    """log Z, theta means and sds, with standard errors over nbatch batches."""
    d = u.shape[1]
    er = math.sqrt(2) * math.exp(gammaln(0.5 * (d + 1)) - gammaln(0.5 * d))  # E chi_d

    def est(lw, u):
        mx = lw.max()
        w = np.exp(lw - mx)
        logz = math.log(w.mean()) + mx
        w = w / w.sum()
        eu = w @ u
        euu = (u * w[:, None]).T @ u
        mean = math.sqrt(v) * er * eu
        second = v * d * np.diag(euu)
        return logz, mean, np.sqrt(second - mean ** 2), w

    logz, mean, sd, w = est(lw, u)
    ess = 1 / np.sum(w ** 2)
    parts = [est(lb, ub) for lb, ub in zip(np.array_split(lw, nbatch), np.array_split(u, nbatch))]
    # Standard errors of the full-sample estimates from the batch spread.
    se = lambda xs: np.std(np.array(xs), axis=0, ddof=1) / math.sqrt(nbatch)
    return dict(logz=logz, logz_se=float(se([p[0] for p in parts])), mean=mean, mean_se=se([p[1] for p in parts]),
                sd=sd, sd_se=se([p[2] for p in parts]), ess=ess, n=len(lw))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gamma", default="10,1000")
    ap.add_argument("--draws", type=int, default=2000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sequential", action="store_true", help="also run sequential EP")
    ap.add_argument("--ddof", type=int, default=1, help="z-scoring: 1 sample sd, 0 population sd")
    ap.add_argument("--scales", default="1.5,4,16",
                    help="the proposal mixes N(m, s S) over these s, (m, S) the pilot's posterior moments")
    ap.add_argument("--csv", help="also write the numbers to this CSV file")
    ap.add_argument("--rwm", default="", help="also run random-walk Metropolis: STEPS,CHAINS (e.g. 25000,400)")
    args = ap.parse_args()
    out = []
    names, x, y = load()
    x = zscore(x, args.ddof)
    a = pair_matrix(x, y)
    print(f"Pima.tr: {len(y)} rows, {y.sum()} positive, {a.shape[0]} pairs, d = {a.shape[1]}")
    rng = np.random.default_rng(args.seed)
    for gamma in [float(g) for g in args.gamma.split(",")]:
        t0 = time.time()
        e = ep(a, gamma)
        print(f"\ngamma {gamma:g}: EP (parallel, damping 0.5) log Z {e['logz']:.4f}, {e['sweeps']} sweeps, "
              f"{e['negative']} negative sites, {time.time() - t0:.1f} s")
        if args.sequential:
            t0 = time.time()
            es = ep(a, gamma, damp=1.0, sequential=True, tol=1e-10)
            print(f"  sequential EP log Z {es['logz']:.4f} ({es['sweeps']} sweeps, {time.time() - t0:.1f} s); "
                  f"max |mean diff| {np.max(np.abs(es['mean'] - e['mean'])):.2e}, "
                  f"max |sd diff| {np.max(np.abs(es['sd'] - e['sd'])):.2e}")
        # Pilot: proposal from EP, inflated; then refit from the pilot's
        # weighted theta moments (at radius E[chi_d]).
        t0 = time.time()
        d = a.shape[1]
        lw, u = direction_is(x, y, gamma, e["mean"], e["cov"], 200000, rng, scales=(2, 8))
        mx = lw.max()
        w = np.exp(lw - mx)
        w /= w.sum()
        pm = w @ u
        er = math.sqrt(2) * math.exp(gammaln(0.5 * (d + 1)) - gammaln(0.5 * d))
        mq = er * pm
        sq = d * ((u * w[:, None]).T @ u) - np.outer(mq, mq)
        lw, u = direction_is(x, y, gamma, mq, sq, args.draws, rng, scales=[float(v) for v in args.scales.split(",")])
        r = summarise(lw, u, 1.0)
        print(f"  IS on directions ({r['n']} draws, ESS {r['ess']:.0f}, {time.time() - t0:.0f} s): "
              f"log Z {r['logz']:.4f} +- {r['logz_se']:.4f}; EP - IS {e['logz'] - r['logz']:+.4f}")
        print(f"  {'':5s} {'EP mean':>9s} {'EP sd':>7s} {'IS mean':>9s} {'+-':>6s} {'IS sd':>7s} {'+-':>6s} "
              f"{'diff/sd':>8s} {'sd ratio':>8s}")
        for k, nm in enumerate(names):
            print(f"  {nm:5s} {e['mean'][k]:9.4f} {e['sd'][k]:7.4f} {r['mean'][k]:9.4f} {r['mean_se'][k]:6.4f} "
                  f"{r['sd'][k]:7.4f} {r['sd_se'][k]:6.4f} {(e['mean'][k] - r['mean'][k]) / r['sd'][k]:+8.3f} "
                  f"{e['sd'][k] / r['sd'][k]:8.3f}")
        if args.rwm:
            steps, chains = (int(v) for v in args.rwm.split(","))
            t0 = time.time()
            m = rwm(x, y, gamma, e, steps, chains, rng)
            print(f"  random-walk Metropolis, {chains} chains x {steps} steps (first fifth dropped), "
                  f"acceptance {m['acc']:.3f}, {time.time() - t0:.0f} s")
            for k, nm in enumerate(names):
                print(f"  {nm:5s} mean {m['mean'][k]:8.4f} +- {m['mean_se'][k]:.4f}  sd {m['sd'][k]:.4f} +- {m['sd_se'][k]:.4f}")
        out.append((gamma, "log_z", "", e["logz"], r["logz"], r["logz_se"]))
        for k, nm in enumerate(names):
            out.append((gamma, "mean", nm, e["mean"][k], r["mean"][k], r["mean_se"][k]))
            out.append((gamma, "sd", nm, e["sd"][k], r["sd"][k], r["sd_se"][k]))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["gamma", "quantity", "coefficient", "ep", "is", "is_se"])
            for g, q, nm, ev, rv, se in out:
                wr.writerow([f"{g:g}", q, nm, f"{ev:.6f}", f"{rv:.6f}", f"{se:.6f}"])


if __name__ == "__main__":
    main()
