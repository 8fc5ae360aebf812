# Reference numbers of analysis's TestNextItems: the mutual information
# between one more label and the class, and the expected gain in the
# consensus's accuracy, for a confusion matrix and a one-coin rater.
# Debian python3-numpy and python3-scipy: /usr/bin/python3 analysis/testdata/next_reference.py
import numpy as np
from scipy.stats import entropy


def scores(q, pi):
    joint = q[:, None] * pi
    py = joint.sum(0)
    info = entropy(q, base=2) - sum(py[y] * entropy(joint[:, y] / py[y], base=2) for y in range(len(q)))
    return info, joint.max(0).sum() - q.max()


print(*scores(np.array([.6, .4]), np.array([[.8, .2], [.3, .7]])))
a, K = .75, 3
pi = np.full((K, K), (1 - a) / (K - 1))
np.fill_diagonal(pi, a)
print(*scores(np.array([.5, .3, .2]), pi))


# The two-model average (fit's rater model and the class-symmetric one-coin
# model, equal weights) of items that carry their labels.
def one_coin(a, K):
    pi = np.full((K, K), (1 - a) / (K - 1))
    np.fill_diagonal(pi, a)
    return pi


def symmetric(labels, K):
    # labels: (class index, rater accuracy) of each label; uniform prior.
    logq = np.zeros(K)
    for y, a in labels:
        logq += np.log(np.where(np.arange(K) == y, a, (1 - a) / (K - 1)))
    q = np.exp(logq - logq.max())
    return q / q.sum()


def pooled(q, pis, ws):
    s = [scores(q, pi) for pi in pis]
    w = np.array(ws, float) / sum(ws)
    return sum(w[i] * s[i][0] for i in range(len(s))), sum(w[i] * s[i][1] for i in range(len(s)))


# Confusion rater r (rows .8/.2 and .3/.7: accuracy (.8 + .7)/2 = .75), one label a.
fit = scores(np.array([.6, .4]), np.array([[.8, .2], [.3, .7]]))
sym = scores(symmetric([(0, .75)], 2), one_coin(.75, 2))
print(*((f + s) / 2 for f, s in zip(fit, sym)))
# Two one-coin raters (agreement .75, 3 labels; .6, 1 label), labels a and b, K = 3.
pis = [one_coin(.75, 3), one_coin(.6, 3)]
fit = pooled(np.array([.5, .3, .2]), pis, [3, 1])
sym = pooled(symmetric([(0, .75), (1, .6)], 3), pis, [3, 1])
print(*((f + s) / 2 for f, s in zip(fit, sym)))
