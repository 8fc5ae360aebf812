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
