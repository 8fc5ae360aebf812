#!/usr/bin/python3
"""statsmodels' inter-rater cases as reference numbers for the table, counts,
normal-interval and test options (issue 34).

Run from raters/testdata with Debian's python3 (bookworm: python3-statsmodels
0.13.5, python3-numpy 1.24):

    /usr/bin/python3 make_reference_statsmodels.py > reference_statsmodels.csv

The inputs are the tables of statsmodels' own test suite
(statsmodels/stats/tests/test_inter_rater.py: SAS's table10, the Wikipedia
Fleiss table, Randolph's online-calculator tables, irr's anxiety table and
Fleiss's 1971 diagnoses), written into the output as JSON so that the Go
test reads the same input. Cases:

  table   cohens_kappa(table, wt=None|'linear'|'quadratic'): kappa,
          std_kappa, kappa_low, kappa_upp (normal, 95%), std_kappa0,
          z_value (= kappa / std_kappa0), pvalue_two_sided.
          statsmodels' 'linear' and 'quadratic' weights are on the category
          positions 0..q-1, concord's table weights on 1..q: the same
          weights.
  counts  fleiss_kappa(table, method='fleiss'|'randolph').
  pairs   cohens_kappa(to_table(two raters of the diagnoses)) for every
          pair of raters, unweighted: the raw-label path (Analyze) with
          --ci normal.

Output columns: case, kind, input (JSON), weights, stat, value.
"""
import csv
import itertools
import json
import sys

import numpy as np
from statsmodels.stats.inter_rater import (aggregate_raters, cohens_kappa,
                                           fleiss_kappa, to_table)

from statsmodels_tables import anxiety23, table10

table0 = np.asarray('''\
1 	0 	0 	0 	0 	14 	1.000
2 	0 	2 	6 	4 	2 	0.253
3 	0 	0 	3 	5 	6 	0.308
4 	0 	3 	9 	2 	0 	0.440
5 	2 	2 	8 	1 	1 	0.330
6 	7 	7 	0 	0 	0 	0.462
7 	3 	2 	6 	3 	0 	0.242
8 	2 	5 	3 	2 	2 	0.176
9 	6 	5 	2 	1 	0 	0.286
10 	0 	2 	2 	3 	7 	0.286'''.split(), float).reshape(10, -1)
table1 = table0[:, 1:-1]


def read_diagnoses():
    by_item = {}
    with open('fleiss1971_ratings.csv') as f:
        for row in csv.DictReader(f):
            by_item.setdefault(int(row['item_id']), {})[int(row['rater_id'])] = int(row['label'])
    items = sorted(by_item)
    raters = sorted({r for v in by_item.values() for r in v})
    return np.array([[by_item[i][r] for r in raters] for i in items]), raters


out = csv.writer(sys.stdout, lineterminator='\n')
out.writerow(['case', 'kind', 'input', 'weights', 'stat', 'value'])


def table_case(name, tab, wt):
    tab = np.asarray(tab, float)
    res = cohens_kappa(tab, wt=wt) if wt else cohens_kappa(tab)
    inp = json.dumps(tab.tolist())
    for stat in ['kappa', 'std_kappa', 'kappa_low', 'kappa_upp', 'std_kappa0', 'z_value', 'pvalue_two_sided']:
        out.writerow([name, 'table', inp, wt or 'unweighted', stat, repr(float(res[stat]))])


for wt in [None, 'linear', 'quadratic']:
    table_case('sas_table10', table10, wt)
    table_case('irr_anxiety23', anxiety23, wt)


def counts_case(name, tab):
    inp = json.dumps(np.asarray(tab, float).tolist())
    for method in ['fleiss', 'randolph']:
        out.writerow([name, 'counts', inp, 'unweighted', method, repr(float(fleiss_kappa(np.asarray(tab, float), method=method)))])


counts_case('wikipedia_table1', table1)
counts_case('randolph_699', [[6.99, 0.01], [6.99, 0.01]])
counts_case('randolph_7135', [[7, 1], [3, 5]])
counts_case('randolph_77', [[7, 0], [0, 7]])
counts_case('randolph_610', [[6, 1, 0], [0, 7, 0]])
diag, raters = read_diagnoses()
counts_case('fleiss1971_diagnoses', aggregate_raters(diag - 1, n_cat=5)[0])

for a, b in itertools.combinations(range(len(raters)), 2):
    tab = to_table(diag[:, [a, b]] - 1, 5)[0]
    res = cohens_kappa(tab)
    inp = json.dumps([raters[a], raters[b]])
    for stat in ['kappa', 'std_kappa', 'kappa_low', 'kappa_upp', 'std_kappa0', 'z_value', 'pvalue_two_sided']:
        out.writerow(['fleiss1971_pair', 'pairs', inp, 'unweighted', stat, repr(float(res[stat]))])
