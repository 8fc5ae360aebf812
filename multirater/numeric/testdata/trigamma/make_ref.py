#!/usr/bin/env python3
# Reference values of the trigamma function psi_1(x) = d^2/dx^2 ln Gamma(x)
# in 50-digit arithmetic (mpmath.psi(1, x), Debian python3-mpmath), for
# numeric.Trigamma. Run:
#   /usr/bin/python3 make_ref.py > trigamma_ref.csv
import mpmath as mp
mp.mp.dps = 50
xs = [1e-8, 1e-4, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 3.7, 4.999, 5.5, 6, 7.25,
      9.99, 10, 10.01, 12.5, 17, 25, 40, 63.5, 100, 250, 1e3, 1e4, 1e6, 1e9]
print("x,trigamma")
for x in xs:
    print("%r,%s" % (x, mp.nstr(mp.psi(1, mp.mpf(x)), 25)))
