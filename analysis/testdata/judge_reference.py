# Reference numbers of analysis's TestJudgeReport: the alternative annotator
# test (Calderon, Reichart & Dror, ACL 2025) written from the paper's
# description with numpy and scipy (Debian python3-numpy, python3-scipy):
#   /usr/bin/python3 analysis/testdata/judge_reference.py
# It writes judges.csv (60 items, 4 humans who are right 80% of the time on
# three classes, a judge "good" right 90% of the time, a judge "coin" right
# 40%) and prints each judge's p-values, winning rate and advantage
# probability at epsilon 0.15, FDR 0.05.
import csv
import numpy as np
from scipy.stats import ttest_1samp

rng = np.random.default_rng(7)
K, N = 3, 60
truth = rng.integers(0, K, N)


def noisy(acc):
    out = truth.copy()
    flip = rng.random(N) > acc
    out[flip] = (truth[flip] + rng.integers(1, K, flip.sum())) % K
    return out


raters = {f"h{j}": noisy(0.8) for j in range(1, 5)}
raters["good"] = noisy(0.9)
raters["coin"] = noisy(0.4)
with open("analysis/testdata/judges.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["item_id", "rater_id", "label"])
    for i in range(N):
        for r, lab in raters.items():
            w.writerow([f"i{i}", r, "abc"[lab[i]]])


def by(p, q):
    m = len(p)
    order = np.argsort(p, kind="stable")
    h = np.sum(1.0 / np.arange(1, m + 1))
    k = -1
    for r, i in enumerate(order):
        if p[i] <= (r + 1) / m * q / h:
            k = r
    rej = np.zeros(m, bool)
    rej[order[: k + 1]] = True
    return rej


humans = ["h1", "h2", "h3", "h4"]
for judge in ["good", "coin"]:
    pvals, adv = [], []
    for h in humans:
        d, wins = [], []
        for i in range(N):
            others = [raters[o][i] for o in humans if o != h]
            sj = np.mean([raters[judge][i] == o for o in others])
            sh = np.mean([raters[h][i] == o for o in others])
            wj, vh = float(sj >= sh), float(sh >= sj)
            d.append(vh - wj)
            wins.append(wj)
        pvals.append(ttest_1samp(d, 0.15, alternative="less").pvalue)
        adv.append(np.mean(wins))
    rej = by(np.array(pvals), 0.05)
    print(judge, "pvalues", " ".join(repr(float(p)) for p in pvals))
    print(judge, "winning_rate", rej.mean(), "advantage_prob", repr(float(np.mean(adv))))
