#!/usr/bin/python3
"""A rater model with confusable items (issue 29, branch c29bloc; README.md,
"A confusable-item candidate"): can a model of correlated errors make the
evidence choose well on zencrowd_entity_linking without losing elsewhere?

    /usr/bin/python3 docs/scripts/crowd/bloc_probe.py [--iters 300] DIR...
    /usr/bin/python3 docs/scripts/crowd/bloc_probe.py --subtypes 2 DIR...   # EBCC (fit_ebcc)

Each DIR is a dataset folder of this benchmark (ratings.csv: item_id,
rater_id, label, every label kept; items.csv: item_id, gold, read only to
print the accuracy after the fits). Three rater models are fitted by
variational Bayes with the same fixed priors and the same class prior, so that
their evidence lower bounds (ELBO) are comparable:

  one-coin   y_il | z_i = k ~ Cat(a_l on k, (1 - a_l)/(K-1) elsewhere),
             a_l ~ Beta(2, 1)
  confusion  y_il | z_i = k ~ Cat(pi_l[k]), pi_l[k] ~ Dir(1 + [j = k])
             (Dawid and Skene 1979 with Dirichlet rows; Kim and Ghahramani
             2012's IBCC with fixed hyperparameters)
  confusable confusion, and in addition each item is confusable (h_i = 1)
             with probability eta_k given its class k ~ Beta(1, 9); on a
             confusable item of class k each label is, independently, with
             the rater's probability f_l ~ Beta(1, 2), "fooled": drawn from a
             distribution psi[k] ~ Dir(1) shared by every rater, and otherwise
             from the rater's own row pi_l[k]:

               p(y_il | z_i = k, h_i = 1) = (1 - f_l) pi_l[k, y] + f_l psi[k, y].

             Raters who are fooled on the same items make correlated errors;
             the item (h_i), not the class, explains them. h_i = 0 for every
             item gives the confusion model, so the ELBOs are nested.

With --subtypes M, instead: one-coin, the confusion model and item subtypes
(fit_ebcc; Li, Rubinstein and Cohn, ICML 2019, EBCC) at M = 1 (the confusion
model with rows ~ Dir(4 on the class, 1 elsewhere)) and M, from the contested
split of the majority-vote shares (seed 0) and seeded random splits 1-3.

The class shares tau ~ Dir(1) in all three. Variational family: q(z_i, h_i)
joint per item, q(g_il | z_i, h_i = 1) per label (structured), Dirichlet and
Beta factors for the parameters; coordinate ascent from majority vote. The
ELBO is sum_i ln Z_i - sum KL(q(theta) || p(theta)), Z_i the item's
normaliser over its (z, h) states at the optimal local factors.
"""
import argparse, csv, time
import numpy as np
from scipy.special import digamma as psi_fn, gammaln

from dependence_probe import load  # the benchmark's folders, as dependence_probe reads them


def kl_dir(a, a0):
    """KL(Dir(a) || Dir(a0)) over the last axis, summed."""
    s = a.sum(-1)
    return float((gammaln(s) - gammaln(a0.sum(-1)) - (gammaln(a) - gammaln(a0)).sum(-1)
                  + ((a - a0) * (psi_fn(a) - psi_fn(s)[..., None])).sum(-1)).sum())


def normalise(lp, kl):
    """q(z, h) from its unnormalised logs lp (items x K x H) and the ELBO,
    sum_i ln Z_i - kl."""
    mx = lp.max((1, 2), keepdims=True)
    Z = np.exp(lp - mx)
    s = Z.sum((1, 2), keepdims=True)
    return Z / s, float((np.log(s[:, 0, 0]) + mx[:, 0, 0]).sum()) - kl


def elog(a):
    return psi_fn(a) - psi_fn(a.sum(-1, keepdims=True))


def fit(I, R, Y, N, L, K, model, iters=300, tol=1e-7, eta0=(1.0, 9.0), f0=(1.0, 2.0)):
    mv = np.zeros((N, K))
    np.add.at(mv, (I, Y), 1)
    mv /= mv.sum(1, keepdims=True)
    H = 2 if model.startswith("confusable") else 1
    coin = model in ("one-coin", "confusable-1coin")
    q = np.zeros((N, K, H))
    q[:, :, 0] = mv
    if H == 2:  # start with every item a little confusable
        q[:, :, 1] = 0.2 * mv
        q[:, :, 0] = 0.8 * mv
    gq = np.full((len(I), K), 0.5)  # q(g = 1 | z = k, h = 1) per label
    tau0 = np.ones(K)
    rows0 = np.ones((K, K)) + np.eye(K)
    old = -np.inf
    for it in range(iters):
        # global factors
        qz = q.sum(2)
        at = tau0 + qz.sum(0)
        Elt = elog(at)
        kl = kl_dir(at, tau0)
        if H == 2:
            w0 = q[:, :, 0][I]
            w1 = q[:, :, 1][I]
            w0 = w0 + w1 * (1 - gq)
            wf = w1 * gq
        else:
            w0 = qz[I]
        if coin:
            c = w0[np.arange(len(Y)), Y]
            n = np.bincount(R, weights=w0.sum(1), minlength=L)
            c = np.bincount(R, weights=c, minlength=L)
            a = np.stack([2 + c, 1 + n - c], 1)
            ea = elog(a)
            El = np.empty((L, K, K))
            El[:] = (ea[:, 1] - np.log(K - 1))[:, None, None]
            for k in range(K):
                El[:, k, k] = ea[:, 0]
            kl += kl_dir(a, np.array([2.0, 1.0]))
        else:
            cnt = np.zeros((L, K, K))
            for k in range(K):
                np.add.at(cnt, (R, k, Y), w0[:, k])
            ar = rows0[None] + cnt
            El = elog(ar)
            kl += kl_dir(ar, np.broadcast_to(rows0, ar.shape))
        if H == 2:
            cp = np.zeros((K, K))
            for k in range(K):
                np.add.at(cp[k], Y, wf[:, k])
            ap = 1 + cp
            Elp = elog(ap)
            kl += kl_dir(ap, np.ones_like(ap))
            fo = np.bincount(R, weights=wf.sum(1), minlength=L)
            nf = np.bincount(R, weights=(w1 * (1 - gq)).sum(1), minlength=L)
            af = np.stack([f0[0] + fo, f0[1] + nf], 1)
            Elf = elog(af)
            kl += kl_dir(af, np.broadcast_to(np.array(f0), af.shape))
            ae = np.stack([eta0[0] + q[:, :, 1].sum(0), eta0[1] + q[:, :, 0].sum(0)], 1)
            Ele = elog(ae)
            kl += kl_dir(ae, np.broadcast_to(np.array(eta0), ae.shape))
        # local factors
        lp = np.zeros((N, K, H))
        lp[:] = Elt[:, None]
        ll0 = El[R, :, Y]  # labels x K
        np.add.at(lp[:, :, 0], I, ll0)
        if H == 2:
            lp[:, :, 0] += Ele[:, 1]
            lp[:, :, 1] += Ele[:, 0]
            a0 = Elf[R, 1][:, None] + ll0
            a1 = Elf[R, 0][:, None] + Elp[:, Y].T
            m = np.maximum(a0, a1)
            lse = m + np.log(np.exp(a0 - m) + np.exp(a1 - m))
            gq = np.exp(a1 - lse)
            np.add.at(lp[:, :, 1], I, lse)
        q, elbo = normalise(lp, kl)
        if abs(elbo - old) < tol * abs(elbo):
            break
        old = elbo
    out = {"elbo": elbo, "its": it + 1, "q": q.sum(2)}
    if H == 2:
        out["hard"] = q[:, :, 1].sum(1)
        out["eta"] = ae[:, 0] / ae.sum(1)
        out["psi"] = ap / ap.sum(1, keepdims=True)
        out["f"] = af[:, 0] / af.sum(1)
    return out


def acc(q, g):
    m = g >= -1
    return float((q.argmax(1)[m] == g[m]).mean())


def mvacc(I, Y, N, K, g):
    c = np.zeros((N, K))
    np.add.at(c, (I, Y), 1)
    top = c == c.max(1, keepdims=True)
    m = g >= -1
    hit = np.where(g[m] >= 0, top[m, np.clip(g[m], 0, K - 1)], False)
    return float((hit / top[m].sum(1)).sum() / m.sum())


MODELS = ("one-coin", "confusion", "confusable-1coin", "confusable")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--subtypes", type=int, default=0)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    if a.subtypes:
        for d in a.dirs:
            I, R, Y, N, L, K, g = load(d)
            out = ["MV1/t %.4f" % mvacc(I, Y, N, K, g)]
            r = fit_ebcc(I, R, Y, N, L, K, M=1, iters=a.iters)
            out.append("M1 %.4f %.1f" % (acc(r["q"], g), r["elbo"]))
            for init, seed in (("contested", 0), ("random", 1), ("random", 2), ("random", 3)):
                r = fit_ebcc(I, R, Y, N, L, K, M=a.subtypes, seed=seed, init=init, iters=a.iters)
                out.append("M%d %s%d %.4f %.1f" % (a.subtypes, init[0], seed, acc(r["q"], g), r["elbo"]))
            print(d.rstrip("/").split("/")[-1], " | ".join(out), flush=True)
        return
    print("%-28s %7s %7s %7s %7s %7s | %9s %9s %9s %9s | %-16s %s" % (
        "dataset", "1coin", "conf", "cfs1c", "cfs", "MV1/t", "elbo 1c", "conf", "cfs1c", "cfs", "chosen",
        "share of class 0 (gold): 1c conf cfs1c cfs; hard share cfs1c cfs; cpu s cfs1c cfs conf"))
    for d in a.dirs:
        name = d.rstrip("/").split("/")[-1]
        I, R, Y, N, L, K, g = load(d)
        res, cpu = {}, {}
        for m in MODELS:
            t = time.process_time()
            res[m] = fit(I, R, Y, N, L, K, m, a.iters)
            cpu[m] = time.process_time() - t
        e = {m: res[m]["elbo"] for m in res}
        ch = max(e, key=e.get)
        sh = [float((res[m]["q"].argmax(1) == 0).mean()) for m in MODELS]
        print("%-28s %s %7.4f | %s | %-16s %s (%.3f); %.3f %.3f; %.1f %.1f %.1f" % (
            name, " ".join("%7.4f" % acc(res[m]["q"], g) for m in MODELS), mvacc(I, Y, N, K, g),
            " ".join("%9.1f" % e[m] for m in MODELS), ch, " ".join("%.3f" % x for x in sh), float((g == 0).mean()),
            res["confusable-1coin"]["hard"].mean(), res["confusable"]["hard"].mean(),
            cpu["confusable-1coin"], cpu["confusable"], cpu["confusion"]), flush=True)



def subtype_items(I, R, Y, at, an, El, kl):
    """q(z, m) of every item (items x K x M) and the ELBO, from q(tau)'s
    Dirichlet at, q(nu)'s an (K x M), the rows' E-logs El (raters x K x M x K)
    and the KL terms kl."""
    lp = np.zeros((I.max() + 1,) + an.shape)
    lp[:] = elog(at)[:, None] + elog(an)
    np.add.at(lp, I, El[R, :, :, Y])
    return normalise(lp, kl)


def fit_ebcc(I, R, Y, N, L, K, M=10, a_pi=0.1, a_v=4.0, b_v=1.0, seed=1234, iters=300, tol=1e-7, init="random", c0=1.0):
    """Item subtypes within each class (Li, Rubinstein and Cohn, ICML 2019, EBCC):
    z_i ~ Cat(tau), m_i | z_i = k ~ Cat(nu_k), nu_k ~ Dir(a_pi / M),
    y_il | z_i = k, m_i = m ~ Cat(pi_l[k, m]), pi_l[k, m] ~ Dir(b_v + (a_v - b_v)[j = k]).
    M = 1 is the confusion model with that row prior. ELBO as fit()'s."""
    mv = np.zeros((N, K))
    np.add.at(mv, (I, Y), 1)
    mv /= mv.sum(1, keepdims=True)
    rng = np.random.Generator(np.random.PCG64(seed))
    q = rng.dirichlet(np.ones(M), (N, K)) * mv[:, :, None]
    if init == "contested" and M == 2:
        # deterministic: an item's second subtype has the weight of the
        # labels that disagree with its majority (at least .1, at most .9)
        h = np.clip(1 - mv.max(1), 0.1, 0.9)
        q = np.stack([mv * (1 - h)[:, None], mv * h[:, None]], 2)
    tau0 = np.full(K, c0)
    rows0 = np.eye(K) * (a_v - b_v) + b_v
    old = -np.inf
    for it in range(iters):
        qz = q.sum(2)
        at = tau0 + qz.sum(0)
        kl = kl_dir(at, tau0)
        an = a_pi / M + q.sum(0)  # K x M
        kl += kl_dir(an, np.full_like(an, a_pi / M))
        w = q[I]  # labels x K x M
        cnt = np.zeros((L, K, M, K))
        for y in range(K):
            sel = Y == y
            np.add.at(cnt[:, :, :, y], R[sel], w[sel])
        ar = rows0[None, :, None, :] + cnt
        El = elog(ar)
        kl += kl_dir(ar, np.broadcast_to(rows0[None, :, None, :], ar.shape))
        q, elbo = subtype_items(I, R, Y, at, an, El, kl)
        if abs(elbo - old) < tol * abs(elbo):
            break
        old = elbo
    return {"elbo": elbo, "its": it + 1, "q": q.sum(2), "sub": q.sum(0)}


if __name__ == "__main__":
    main()
