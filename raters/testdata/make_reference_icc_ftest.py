"""The ICCs' F tests (F, df1, df2, p) as psych::ICC defines them, from the
mean squares psych::ICC reported (reference_icc.csv), with scipy's F
distribution. Run from raters/testdata with Debian bookworm's python3-scipy
1.10:

    /usr/bin/python3 make_reference_icc_ftest.py > reference_icc_ftest.csv

psych::ICC (psych 2.2.9, ICC.R): ICC1 and ICC1k test F = MSB/MSW on n-1 and
n(k-1) degrees of freedom, ICC2, ICC3, ICC2k, ICC3k F = MSB/MSE on n-1 and
(n-1)(k-1); p = 1 - pf(F, df1, df2) (scipy's f.sf here: the same
probability without 1 - F's cancellation).
"""
import csv
import sys

from scipy.stats import f as fdist

w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["dataset", "method", "type", "f", "df1", "df2", "p"])
with open("reference_icc.csv") as fh:
    for r in csv.DictReader(fh):
        n, k = float(r["n"]), float(r["k"])
        msb, mse, msw = float(r["msb"]), float(r["mse"]), float(r["msw"])
        if r["type"] in ("ICC1", "ICC1k"):
            F, d1, d2 = msb / msw, n - 1, n * (k - 1)
        else:
            F, d1, d2 = msb / mse, n - 1, (n - 1) * (k - 1)
        w.writerow([r["dataset"], r["method"], r["type"], repr(F), repr(d1), repr(d2), repr(fdist.sf(F, d1, d2))])
