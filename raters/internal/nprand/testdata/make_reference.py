#!/usr/bin/python3
"""numpy's legacy generator (numpy.random.RandomState: MT19937, Debian
bookworm's python3-numpy 1.24.2) on several seeds and lengths, the
reference of nprand_test.go. Run from this folder:

    /usr/bin/python3 make_reference.py > reference.csv

Columns: seed, call (the RandomState method and its arguments, called in
the order listed on one generator per seed), index (the draw's position in
the call's output), value (repr, which round-trips the double exactly).
The calls cover MT19937's state regeneration (past 624 and 1248 32-bit
words), the polar Box-Muller pairs of standard_normal with the cached
second value carried across calls (odd lengths), random_sample between two
normal calls (it leaves the cached value alone), np.random.seed on the
global generator (as crowd-kit's KOS seeds it) and scipy.stats.uniform.rvs
with an integer random_state (as crowd-kit's M-MSR draws its start).
"""
import sys

import numpy as np
import scipy.stats as sps

out = sys.stdout
out.write("seed,call,index,value\n")


def emit(seed, call, values):
    for i, v in enumerate(np.ravel(values)):
        out.write("%d,%s,%d,%r\n" % (seed, call, i, float(v)))


for seed in [0, 1, 42, 12345, 4294967295]:
    rs = np.random.RandomState(seed)
    n = 630 if seed == 0 else 7
    emit(seed, "random_sample(%d)" % n, rs.random_sample(n))
    emit(seed, "standard_normal(3)", rs.standard_normal(3))
    emit(seed, "random_sample(2)", rs.random_sample(2))
    emit(seed, "standard_normal(4)", rs.standard_normal(4))
    emit(seed, "normal(1;2;5)", rs.normal(1, 2, 5))
    emit(seed, "uniform(-3;5;3)", rs.uniform(-3, 5, 3))
    # a fresh generator: normals first (crowd-kit's KOS)
    np.random.seed(seed)
    m = 321 if seed == 0 else 9
    emit(seed, "seed;normal(1;1;%d)" % m, np.random.normal(loc=1, scale=1, size=m))
    # crowd-kit's M-MSR start: uniform.rvs(size=(n, 1), random_state=seed)
    emit(seed, "uniform.rvs(6;1)", sps.uniform.rvs(size=(6, 1), random_state=seed))
