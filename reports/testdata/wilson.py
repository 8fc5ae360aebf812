# Wilson score intervals for reports' TestWilsonInterval (gold accuracy per
# rater), from scipy (Debian python3-scipy 1.10.1):
#   /usr/bin/python3 reports/testdata/wilson.py
import scipy.stats as s

for k, n in [(7, 9), (0, 5), (5, 5), (1, 1), (38, 50), (412, 500)]:
    r = s.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    print(k, n, repr(r.low), repr(r.high))
