#!/usr/bin/python3
"""statsmodels' cohens_kappa with user-given weights (a 2-D weight matrix, or
a 1-D vector with wt='toeplitz') as reference numbers for concord's custom
weight matrix (agreement --weights-file, TableOptions.WeightMatrix; issue 34).

Run from raters/testdata with Debian's python3 (bookworm: python3-statsmodels
0.13.5, python3-numpy 1.24, python3-scipy 1.10):

    /usr/bin/python3 make_reference_statsmodels_weights.py > reference_statsmodels_weights.csv

statsmodels' weights are disagreement weights d (0 on the diagonal): its
kappa is 1 - sum(d p) / sum(d p_e) and its variances use w = 1 - d (SAS's
agreement weights). concord takes agreement weights, so the Go test passes
w = 1 - d (toeplitz: w_kl = 1 - v[|k-l|]). The tables are those of
make_reference_statsmodels.py (SAS's table10, irr's anxiety raters 2-3);
the weights are those of statsmodels' own tests (test_cohenskappa_weights,
test_cohens_kappa_irr: 2*arange, arange**2, 4*arange**2, [0,0,1,1,2]) and
two symmetric matrices of our own.

Output columns: case, input (JSON table), weights (JSON), wt (toeplitz or
matrix), stat, value.
"""
import csv
import json
import sys

import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa

from statsmodels_tables import anxiety23, table10

cases = [
    ('sas_table10', table10, [0, 1, 2], 'toeplitz'),
    ('sas_table10', table10, [0, 1, 4], 'toeplitz'),
    ('sas_table10', table10, [0, 2, 4], 'toeplitz'),
    ('sas_table10', table10, [[0, 0.5, 1], [0.5, 0, 0.3], [1, 0.3, 0]], 'matrix'),
    ('irr_anxiety23', anxiety23, list(range(5)), 'toeplitz'),
    ('irr_anxiety23', anxiety23, [0, 0, 1, 1, 2], 'toeplitz'),
    ('irr_anxiety23', anxiety23, (np.arange(5)**2).tolist(), 'toeplitz'),
    ('irr_anxiety23', anxiety23, (4 * np.arange(5)**2).tolist(), 'toeplitz'),
    ('irr_anxiety23', anxiety23, (2 * np.arange(5)).tolist(), 'toeplitz'),
    ('irr_anxiety23', anxiety23, [[0, 0.2, 0.6, 0.9, 1], [0.2, 0, 0.3, 0.7, 0.8], [0.6, 0.3, 0, 0.1, 0.5],
                                  [0.9, 0.7, 0.1, 0, 0.4], [1, 0.8, 0.5, 0.4, 0]], 'matrix'),
]

out = csv.writer(sys.stdout, lineterminator='\n')
out.writerow(['case', 'input', 'weights', 'wt', 'stat', 'value'])
for name, tab, w, wt in cases:
    tab = np.asarray(tab, float)
    res = cohens_kappa(tab, weights=np.asarray(w, float), wt=wt if wt == 'toeplitz' else None)
    for stat in ['kappa', 'std_kappa', 'std_kappa0', 'z_value', 'pvalue_two_sided']:
        out.writerow([name, json.dumps(tab.tolist()), json.dumps(w), wt, stat, repr(float(res[stat]))])
