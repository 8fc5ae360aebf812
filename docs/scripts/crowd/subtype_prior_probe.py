#!/usr/bin/python3
"""Subtype rows centred on the rater's own row (issue 29, branch c29sub;
README.md, "A prior that centres the subtype rows on the rater's own row"):
does a hierarchical prior make the evidence choose the subtypes rater model
(multirater/confusion/subtypes.go, subVB) only where it helps?

    /usr/bin/python3 docs/scripts/crowd/subtype_prior_probe.py [--concord BIN] [--S 1,2,4] DIR...
    /usr/bin/python3 docs/scripts/crowd/subtype_prior_probe.py --write-bloc OUT   # OUT/bloc_s1..s3

--write-bloc writes three bloc crowds of subtypes_test.go's blocCrowd
(TestSubtypesEvidence's: 800 binary items, a quarter class 1; 10 good raters,
each labelling an item with probability .3, right with .85; 3 bloc raters who
label every item, right with .85 except on 40% of the class-0 items, which
each calls 1 with probability .9), drawn here with numpy's PCG64(seed).

Each DIR is a dataset folder (ratings.csv: item_id, rater_id, label, every
label kept; items.csv with a gold or truth column, read only to print the
accuracy). Fitted by variational Bayes, all with subVB's priors (class
shares Dirichlet(1), subtype shares Dirichlet(0.1/M), rows Dirichlet(s mu_k),
s = 4, mu_k = .7 on the class, the rest spread evenly), subVB's start (each
item's majority-vote share split by how contested it is) and M = 2:

  flat   subVB: pi_l[k, m] ~ Dir(s mu_k) for every subtype m. Its bound
         equals concord's `--rater-model subtypes` log_evidence (ZenCrowd:
         -10,715.4 both).
  hier   every subtype row centred on the rater's own row pi_l[k]:
         pi_l[k] ~ Dir(s mu_k), x_lkm ~ Mult(S, pi_l[k]),
         pi_l[k, m] | x_lkm ~ Dir(s mu_k + x_lkm): the usual prior plus S
         pseudo-labels that the rater's own row gives (a Polya-urn form of
         pi_l[k, m] ~ Dir(S pi_l[k]) that stays conjugate: q(x_lkm) is exact
         over the compositions of S into K parts, so the bound is a true
         lower bound and coordinate ascent never lowers it).
  hier0  subtype 0 is the rater's own row, pi_l[k, 0] = pi_l[k]; the other
         subtypes' rows centred on it as in hier (one set of rows fewer).
  switch subtype rows only for the raters the evidence puts in a bloc: each
         rater is in it with probability omega ~ Beta(1, 1) (b_l = 1); a
         rater outside it uses its own row pi_l[k] ~ Dir(s mu_k) on both
         subtypes, one in it pi_l[k] on subtype 0 and phi_l[k] ~ Dir(s mu_k)
         on subtype 1; q(b_l) Bernoulli, q(omega) Beta (conjugate).

With --concord, concord fits each set with defaults (`fit --model confusion
--duplicates keep`; its choice and accuracy are printed) and the margin of each
subtypes fit is its bound less the score of the candidate that auto chose (positive: the evidence would choose
subtypes, unless the held-out check excluded it).
"""
import argparse, csv, itertools, json, math, os, subprocess, sys, tempfile
import numpy as np
from scipy.special import gammaln

from bloc_probe import kl_dir, elog, acc, mvacc, subtype_items
from dependence_probe import load


# MAXCOMP is the most compositions of S into K parts that a hierarchical fit
# enumerates (K = 10 at S = 4: 715; at S = 8: 24,310, skipped, printed "-").
MAXCOMP = 5000


def compositions(S, K):
    """Every x in N^K with sum S (C(S+K-1, K-1) rows)."""
    out = []
    for c in itertools.combinations(range(S + K - 1), K - 1):
        b = (-1,) + c + (S + K - 1,)
        out.append([b[i + 1] - b[i] - 1 for i in range(K)])
    return np.array(out, float)


def fit(I, R, Y, N, L, K, prior="flat", S=4, s=4.0, diag=0.7, M=2, iters=1000, tol=1e-9, start=None):
    mv = np.zeros((N, K))
    np.add.at(mv, (I, Y), 1)
    mv /= mv.sum(1, keepdims=True)
    h = np.clip(1 - mv.max(1), 0.1, 0.9)
    if start is not None:  # the class shares to split (else majority vote's)
        mv = start
    q = np.stack([mv * (1 - h)[:, None], mv * h[:, None]], 2) if M == 2 else mv[:, :, None].copy()
    mu = np.full((K, K), (1 - diag) / (K - 1))
    np.fill_diagonal(mu, diag)
    a0 = s * mu
    a0b = a0[None, :, None, :]
    tau0 = np.ones(K)
    if prior == "switch":  # q(b_l = 1), q(omega)
        r = np.full(L, 0.5)
        aw = np.array([1 + L / 2, 1 + L / 2])
    elif prior != "flat":
        X = compositions(S, K)
        lnC = gammaln(S + 1) - gammaln(X + 1).sum(1)
        lnGa = gammaln(a0[:, None, :] + X[None]).sum(2)  # K x C: sum_j lnGamma(a0_kj + x_j)
        Ex = np.broadcast_to((S * mu)[None, :, None, :], (L, K, M, K)).copy()
        lo = 1 if prior == "hier0" else 0  # the subtypes whose rows are centred on pi_l[k]
        if lo:
            Ex[:, :, 0] = 0
    old = -np.inf
    for it in range(iters):
        qz = q.sum(2)
        at = tau0 + qz.sum(0)
        an = 0.1 / M + q.sum(0)
        kl = kl_dir(at, tau0) + kl_dir(an, np.full_like(an, 0.1 / M))
        w = q[I]
        cnt = np.zeros((L, K, M, K))
        for y in range(K):
            np.add.at(cnt[:, :, :, y], R[Y == y], w[Y == y])
        if prior == "flat":
            ar = a0b + cnt
            El = elog(ar)
            kl += kl_dir(ar, np.broadcast_to(a0b, ar.shape))
        elif prior == "switch":
            for _ in range(2):
                rb = r[:, None, None]
                ag = a0[None] + cnt[:, :, 0] + (1 - rb) * cnt[:, :, 1]
                af = a0[None] + rb * cnt[:, :, 1]
                Elpi, Elphi = elog(ag), elog(af)
                ew = elog(aw)
                t = ew[0] - ew[1] + (cnt[:, :, 1] * (Elphi - Elpi)).sum((1, 2))
                r = 1 / (1 + np.exp(-t))
                aw = np.array([1 + r.sum(), 1 + (1 - r).sum()])
            rb = r[:, None, None]
            ag = a0[None] + cnt[:, :, 0] + (1 - rb) * cnt[:, :, 1]
            af = a0[None] + rb * cnt[:, :, 1]
            Elpi, Elphi = elog(ag), elog(af)
            ew = elog(aw)
            kl += kl_dir(ag, np.broadcast_to(a0[None], ag.shape)) + kl_dir(af, np.broadcast_to(a0[None], af.shape))
            kl += kl_dir(aw, np.ones(2))
            rc = np.clip(r, 1e-300, 1)
            r0 = np.clip(1 - r, 1e-300, 1)
            kl += float((r * (np.log(rc) - ew[0]) + (1 - r) * (np.log(r0) - ew[1])).sum())
            El = np.stack([Elpi, (1 - rb) * Elpi + rb * Elphi], 2)
        else:
            # q(pi), q(phi) and q(x) in turn (each exact given the others)
            for _ in range(2):
                ag = a0[None] + Ex[:, :, lo:].sum(2) + (cnt[:, :, 0] if lo else 0)
                Elpi = elog(ag)
                ar = a0b + Ex + cnt
                El = elog(ar)
                lg = lnC - lnGa[None, :, None, :] + np.einsum("lkmj,cj->lkmc", El + Elpi[:, :, None, :], X)
                qx = np.exp(lg - lg.max(-1, keepdims=True))
                qx /= qx.sum(-1, keepdims=True)
                Ex[:, :, lo:] = np.einsum("lkmc,cj->lkmj", qx, X)[:, :, lo:]
            ag = a0[None] + Ex[:, :, lo:].sum(2) + (cnt[:, :, 0] if lo else 0)
            Elpi = elog(ag)
            ar = a0b + Ex + cnt
            El = elog(ar)
            kl += kl_dir(ag, np.broadcast_to(a0[None], ag.shape))
            # KL(q(x) || p(x | pi)) + E_x KL(q(phi) || Dir(a0 + x)), over the centred subtypes
            Elx = lnC - lnGa[None, :, None, :] + np.einsum("lkj,cj->lkc", Elpi, X)[:, :, None, :]
            kl += (qx * (np.log(np.maximum(qx, 1e-300)) - Elx))[:, :, lo:].sum()
            a1 = ar[:, :, lo:]
            kl += (gammaln(a1.sum(-1)) - gammaln(a1).sum(-1) - gammaln(a0.sum(-1) + S)[None, :, None]).sum()
            kl += ((a1 - a0b - Ex[:, :, lo:]) * El[:, :, lo:]).sum()
            if lo:
                El[:, :, 0] = Elpi
        q, elbo = subtype_items(I, R, Y, at, an, El, kl)
        if abs(elbo - old) < tol * abs(elbo):
            break
        old = elbo
    return elbo, q.sum(2)


def default_fit(concord, d, items, labels, g):
    """The score, model and accuracy of the rater model that concord's auto
    chose (items and labels in load's order, g its gold)."""
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "fit.json")
        subprocess.run([concord, "fit", "--labels", d + "/ratings.csv", "--duplicates", "keep", "--model", "confusion",
                        "--out", out], check=True, capture_output=True)
        doc = json.load(open(out))
    c = [c for c in doc["model"]["confusion"]["rater_model_candidates"] if c.get("chosen")][0]
    cls = {it["id"]: it.get("class") for it in doc["items"]}
    li = {x: i for i, x in enumerate(labels)}
    z = np.array([li.get(cls.get(i), -1) for i in items])
    m = g >= -1
    return c["score"], c["model"], float((z[m] == g[m]).mean())


def write_bloc(out, N=800, good=10, bloc=3, pos=0.25, cover=0.3, accuracy=0.85, hard=0.4, fool=0.9):
    for seed in (1, 2, 3):
        rng = np.random.Generator(np.random.PCG64(seed))
        d = os.path.join(out, "bloc_s%d" % seed)
        os.makedirs(d, exist_ok=True)
        with open(d + "/ratings.csv", "w") as f, open(d + "/items.csv", "w") as gf:
            f.write("item_id,rater_id,label\n")
            gf.write("item_id,gold\n")
            for i in range(N):
                z = int(rng.random() < pos)
                h = z == 0 and rng.random() < hard
                gf.write("i%d,%d\n" % (i, z))
                for r in range(good + bloc):
                    if r >= good:
                        y = (1 if rng.random() < fool else 0) if h else (z if rng.random() < accuracy else 1 - z)
                    elif rng.random() < cover:
                        y = z if rng.random() < accuracy else 1 - z
                    else:
                        continue
                    f.write("i%d,r%d,%d\n" % (i, r, y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write-bloc", default="")
    ap.add_argument("--concord", default="")
    ap.add_argument("--S", default="1,2,4")
    ap.add_argument("dirs", nargs="*")
    a = ap.parse_args()
    if a.write_bloc:
        return write_bloc(a.write_bloc)
    variants = [("flat", 0), ("switch", 0)] + [(p, int(S)) for p in ("hier", "hier0") for S in a.S.split(",") if S]
    print("%-36s %-12s %6s %6s | " % ("set", "default", "acc", "MV1/t") +
          " | ".join("%-6s%-3s%8s" % (p, S or "", "margin") for p, S in variants))
    for d in a.dirs:
        I, R, Y, N, L, K, g = load(d)
        ref, model, dacc = 0.0, "-", float("nan")
        if a.concord:
            rows = list(csv.DictReader(open(d + "/ratings.csv")))
            items, labels = sorted({r["item_id"] for r in rows}), sorted({r["label"] for r in rows})
            ref, model, dacc = default_fit(a.concord, d, items, labels, g)
        row = []
        for p, S in variants:
            if S and math.comb(S + K - 1, K - 1) > MAXCOMP:
                row.append("%6s %8s" % ("-", "-"))
                continue
            e, q = fit(I, R, Y, N, L, K, prior=p, S=max(S, 1))
            row.append("%s %8.1f" % ("%.4f" % acc(q, g), e - ref))
        name = "/".join(d.rstrip("/").split("/")[-2:])
        print("%-36s %-12s %.4f %.4f | %s" % (name[-36:], model, dacc, mvacc(I, Y, N, K, g), " | ".join(row)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
