#!/usr/bin/env python3
# Reference values of log(Phi(b) - Phi(a)) in 50-digit arithmetic (mpmath,
# Debian python3-mpmath), for numeric.LogPhiDiff. Run:
#   /usr/bin/python3 make_ref.py > logphidiff_ref.csv
import mpmath as mp
mp.mp.dps = 50
def Phi(x):
    return mp.ncdf(x)
def logdiff(a, b):
    a, b = mp.mpf(a), mp.mpf(b)
    if a > 0:  # same value, computed where it is not a difference of numbers near 1
        return mp.log(Phi(-a) - Phi(-b))
    return mp.log(Phi(b) - Phi(a))
cases = [(-1, 1), (-0.5, 0.25), (0, 1e-9), (-1e-9, 1e-9), (1, 2), (5, 6), (10, 10.5), (30, 40), (-40, -30),
         (-10, -9.5), (-3, 8), (-8, 3), (2.5, 2.500001), (-37.5, -37.4), (0.1, 0.2), (-0.2, -0.1), (20, 1e30), (-1e30, -20)]
print("a,b,logdiff")
for a, b in cases:
    print("%r,%r,%s" % (a, b, mp.nstr(logdiff(a, b), 20)))
# Infinite bounds: log Phi(b) and log(1 - Phi(a)).
for b in (-30, -2, 0, 3):
    print("-inf,%r,%s" % (b, mp.nstr(mp.log(Phi(b)), 20)))
for a in (-3, 0, 2, 30):
    print("%r,inf,%s" % (a, mp.nstr(mp.log(1 - Phi(a)) if a < 5 else mp.log(Phi(-a)), 20)))
