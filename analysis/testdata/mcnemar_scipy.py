# Reference p-values of TestMcNemarExact (analysis/eval_metrics_test.go):
# the exact two-sided McNemar test is the binomial test of min(b, c)
# discordant pairs out of b + c at p = 1/2. Run with Debian's python3-scipy:
#   python3 analysis/testdata/mcnemar_scipy.py
from scipy.stats import binomtest

for b, c in [(13, 26), (0, 5), (7, 7), (61, 40), (1, 0), (120, 95)]:
    print(b, c, repr(binomtest(min(b, c), b + c, 0.5).pvalue))
