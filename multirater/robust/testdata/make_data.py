"""Writes ionosphere40.csv: the fixed 40-row subset of the Ionosphere data used
by the EP references (ep_reference.py, exact_evidence.R, is_evidence.py,
nuts_reference.R) and by reference_test.go.

Run from this folder:  /usr/bin/python3 make_data.py [/work/shared/data/bench_ionosphere/data.csv]

Selection rule: rows 0, 8, 16, ..., 312 (0-based data rows of data.csv, i.e. every
8th row starting at the first; 40 rows).  Inputs: the 32 continuous columns
V3..V34 (V1 is binary, V2 is constant 0: both dropped), each z-scored over the
40 selected rows (mean and sd with denominator n - 1).  Label y = +1 for
Class "good", -1 for "bad".  Written with 17 significant digits, so every tool
reads the same doubles.
"""
import csv
import sys

import numpy as np

src = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/bench_ionosphere/data.csv"
with open(src) as fh:
    rows = list(csv.DictReader(fh))
sel = list(range(0, len(rows), 8))[:40]
assert len(sel) == 40 and sel[-1] == 312
cols = ["V%d" % k for k in range(3, 35)]
X = np.array([[float(rows[r][c]) for c in cols] for r in sel])
mu = X.mean(axis=0)
sd = X.std(axis=0, ddof=1)
assert np.all(sd > 0)
Z = (X - mu) / sd
y = [1 if rows[r]["Class"] == "good" else -1 for r in sel]
with open("ionosphere40.csv", "w") as fh:
    fh.write(",".join(["row", "y"] + ["x%d" % (k - 2) for k in range(3, 35)]) + "\n")
    for i, r in enumerate(sel):
        fh.write(",".join([str(r), str(y[i])] + ["%.17g" % v for v in Z[i]]) + "\n")
print("rows", sel[0], "...", sel[-1], "n =", len(sel), "good =", y.count(1), "bad =", y.count(-1))
