#!/usr/bin/python3
"""Reference moments and CDF values of truncated normal distributions.

Produces truncnorm_ref.csv for multirater/truncnorm_test.go with Debian's
SciPy (apt-get install python3-scipy; run with /usr/bin/python3):

    /usr/bin/python3 truncnorm_ref.py > truncnorm_ref.csv

Columns: mu, sigma, lo, hi (the interval of N(mu, sigma^2)), mean, sd of the
truncated distribution (scipy.stats.truncnorm.stats), and three points
x10, x50, x90 with their CDF values p10, p50, p90 (x = ppf(p) for p = 0.1,
0.5, 0.9, then p = cdf(x) recomputed so that the pair is self-consistent).
"""
import math

import numpy as np
import scipy
from scipy.stats import truncnorm

CASES = [
    # mu, sigma, lo, hi
    (0, 1, -math.inf, math.inf),
    (0, 1, 0, math.inf),
    (0, 1, -math.inf, 0),
    (0, 1, -1, 1),
    (0, 1, -0.5, 3),
    (0, 1, -3, -0.2),
    (0, 1, -2.5, 0.1),
    (0, 1, -1e-3, math.inf),
    (0, 1, 0.1, 0.4),
    (0, 1, 0, 1e-3),
    (0, 1, 0.2, 2),
    (0, 1, 0.29, math.inf),
    (0, 1, 0.31, 1.3),
    (0, 1, 1, 1.5),
    (0, 1, 1, math.inf),
    (0, 1, 2, 2.3),
    (0, 1, 2, 3),
    (0, 1, 8, 9),
    (0, 1, -math.inf, -10),
    (0, 1, 5, 5.001),
    (0, 1, -9, -8.5),
    (0, 1, 30, math.inf),
    (0, 1, -40, -39.5),
    (3, 2, 10, math.inf),
    (-1, 0.5, -1.2, -1.1),
    (100, 1e-3, 99.9, 100.0005),
]


def main():
    print("# scipy %s, numpy %s" % (scipy.__version__, np.__version__))
    print("mu,sigma,lo,hi,mean,sd,x10,p10,x50,p50,x90,p90")
    for mu, sigma, lo, hi in CASES:
        a, b = (lo - mu) / sigma, (hi - mu) / sigma
        d = truncnorm(a, b, loc=mu, scale=sigma)
        m, v = d.stats(moments="mv")
        row = [mu, sigma, lo, hi, float(m), math.sqrt(float(v))]
        for p in (0.1, 0.5, 0.9):
            x = float(d.ppf(p))
            row += [x, float(d.cdf(x))]
        print(",".join(repr(float(v)) for v in row))


if __name__ == "__main__":
    main()
