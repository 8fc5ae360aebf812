#!/usr/bin/python3
"""Why crowd-kit 1.4.1's OneCoinDawidSkene scores .8623 on ZenCrowd entity
linking where concord's one-coin candidate scores .8456: a probe (issue 29,
branch c29corr; see README.md, "One-coin: crowd-kit stops after two EM steps").

    PYTHONPATH=/tmp/crowdkit-1.4.1 /usr/bin/python3 docs/scripts/crowd/onecoin_stop_probe.py [--converged] DIR...

For each dataset folder (ratings.csv, items.csv with gold, as in this
benchmark) it prints the accuracy of

  ck default   crowd-kit's OneCoinDawidSkene() with its defaults (n_iter 100,
               tol 1e-5) and the EM iterations it ran;
  ck bound     the same with its bound corrected: DawidSkene._evidence_lower_bound
               (which OneCoinDawidSkene inherits) adds ln(prior_k) to every
               LABEL's row before weighting by the item's class probabilities,
               so the class prior is counted once per label instead of once per
               item. That sum is not a lower bound of the likelihood and falls
               while EM raises the likelihood (on ZenCrowd from iteration 2);
               fit() stops at the first step whose "bound" rises by less than
               tol (new_loss - loss < tol, no absolute value), that is at the
               first fall. Here ln(prior) is counted once per item;
  EM 2, EM conv  the same EM written in numpy (majority-vote start, priors =
               mean of the class probabilities, skill = mean probability of
               the rater's labels, no smoothing) after 2 iterations and after
               1000: "EM 2" equals "ck default" where crowd-kit stops at 2;
  log-lik      the labels' log likelihood per label at EM 2 and at EM conv
               (EM raises it: the later iterate is the better fit);
  ck conv      with --converged (slow: minutes per set): crowd-kit's own
               OneCoinDawidSkene(n_iter=1000, tol=-1e9), run to the end.
"""
import csv, sys
import numpy as np
import pandas as pd
from crowdkit.aggregation import OneCoinDawidSkene


def bound_prior_once(self, data, probas, priors, errors):
    """crowd-kit's _evidence_lower_bound with ln(prior) once per item."""
    joined = data.join(np.log(errors), on=["worker", "label"]).set_index(["task", "worker"])[list(priors.index)]
    p = probas[list(priors.index)].reindex(joined.index.get_level_values(0))
    lab = (p.to_numpy() * joined.to_numpy()).sum()
    pri = (probas[list(priors.index)].to_numpy() * np.log(priors.clip(lower=1e-12)).to_numpy()).sum()
    pc = probas.clip(lower=1e-12)
    return float(lab + pri - (np.log(pc) * pc).sum().sum())


def em(df, iters):
    items, I = np.unique(df.task.to_numpy(), return_inverse=True)
    _, R = np.unique(df.worker.to_numpy(), return_inverse=True)
    labs, Y = np.unique(df.label.to_numpy(), return_inverse=True)
    N, L, K = len(items), R.max() + 1, len(labs)
    q = np.zeros((N, K))
    np.add.at(q, (I, Y), 1)
    q /= q.sum(1, keepdims=True)
    ll = 0.0
    for _ in range(iters):
        rho = q.mean(0)
        s = np.clip(np.bincount(R, weights=q[I, Y], minlength=L) / np.bincount(R, minlength=L), 1e-10, 1 - 1e-10)
        m = np.repeat(np.log((1 - s) / (K - 1))[R][:, None], K, 1)
        m[np.arange(len(Y)), Y] = np.log(s)[R]
        lp = np.tile(np.log(np.clip(rho, 1e-300, 1)), (N, 1))
        np.add.at(lp, I, m)
        mx = lp.max(1, keepdims=True)
        ll = (mx[:, 0] + np.log(np.exp(lp - mx).sum(1))).sum() / len(Y)
        q = np.exp(lp - mx)
        q /= q.sum(1, keepdims=True)
    return pd.Series(labs[q.argmax(1)], index=items), ll


def main():
    args = sys.argv[1:]
    converged = "--converged" in args
    args = [a for a in args if a != "--converged"]
    print("%-30s %10s %4s %10s %4s %8s %8s %9s %9s%s" % ("dataset", "ck default", "its", "ck bound", "its", "EM 2", "EM conv", "ll EM 2", "ll conv",
                                                       "  ck conv" if converged else ""))
    original = OneCoinDawidSkene._evidence_lower_bound
    for d in args:
        df = pd.read_csv(d + "/ratings.csv").rename(columns={"item_id": "task", "rater_id": "worker"})
        gold = pd.read_csv(d + "/items.csv").dropna().set_index("item_id")["gold"]
        acc = lambda lab: (lab.reindex(gold.index) == gold).mean()
        OneCoinDawidSkene._evidence_lower_bound = original
        m0 = OneCoinDawidSkene().fit(df)
        OneCoinDawidSkene._evidence_lower_bound = bound_prior_once
        m1 = OneCoinDawidSkene().fit(df)
        e2, l2 = em(df, 2)
        ec, lc = em(df, 1000)
        conv = ""
        if converged:
            OneCoinDawidSkene._evidence_lower_bound = original
            conv = "  %7.4f" % acc(OneCoinDawidSkene(n_iter=1000, tol=-1e9).fit(df).labels_)
        print("%-30s %10.4f %4d %10.4f %4d %8.4f %8.4f %9.5f %9.5f%s" % (d.rstrip("/").split("/")[-1], acc(m0.labels_), len(m0.loss_history_),
                                                                  acc(m1.labels_), len(m1.loss_history_), acc(e2), acc(ec), l2, lc, conv))
        sys.stdout.flush()
    OneCoinDawidSkene._evidence_lower_bound = original


if __name__ == "__main__":
    main()
