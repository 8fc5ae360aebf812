#!/usr/bin/python3
"""Reference numbers for the agreement tables (raters.AgreementTables).

Run from raters/testdata with Debian's python3 (bookworm: python3-sklearn
1.2.1, python3-numpy 1.24):

    /usr/bin/python3 make_reference_tables.py > reference_tables.csv

For each dataset (face4: nominal, 4 classes; sirt1_k1: ordinal 0..3;
anger: bounded 0..100 with integer values) it writes

  - per rater, pooled_kappa: scikit-learn's cohen_kappa_score of the rater's
    labels against the other raters' labels of the same items, one pair per
    (item, other rater) (unweighted for nominal data, weights="quadratic"
    otherwise, with labels= every category / every integer 0..100 so that
    sklearn's index-based weights are the values' weights);
  - per rater, mean_kappa: the mean of cohen_kappa_score over the rater's
    partners (items both rated; undefined kappas left out);
  - per rater, agreement, items, pairs, partners: counted here from the
    definitions (mean weight of the rater's pairs, w = [x == y] for nominal
    data, 1 - |x - y| / range otherwise);
  - per item, agreement and labels: the mean of the same weight over the
    item's pairs, by itertools.combinations.

Output columns: dataset, table, id, field, value, tool.
"""
import csv
import itertools
import sys
import warnings
from collections import defaultdict

import numpy as np
from sklearn.metrics import cohen_kappa_score

warnings.simplefilter("ignore")  # sklearn warns on undefined kappas (nan)


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.append((r["item_id"], r["rater_id"], float(r["label"])))
    return rows


DATASETS = [
    # name, file, nominal, labels (categories), range
    ("face4", "face4_ratings.csv", True, [0, 1, 2, 3], None),
    ("sirt1_k1", "sirt1_k1_ratings.csv", False, [0, 1, 2, 3], 3.0),
    ("anger", "affect_anger_ratings.csv", False, list(range(101)), 100.0),
]

out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["dataset", "table", "id", "field", "value", "tool"])
SK = "sklearn 1.2.1 cohen_kappa_score"
DEF = "python itertools, from the definition"

for name, path, nominal, labels, span in DATASETS:
    rows = load(path)
    by_item = defaultdict(dict)
    for i, r, v in rows:
        by_item[i].setdefault(r, v)  # first label of a repeated (item, rater)
    weights = None if nominal else "quadratic"

    def w(x, y):
        if nominal:
            return 1.0 if x == y else 0.0
        return 1.0 - abs(x - y) / span

    for i, labs in by_item.items():
        vals = list(labs.values())
        out.writerow([name, "item", i, "labels", len(vals), DEF])
        if len(vals) >= 2:
            ws = [w(a, b) for a, b in itertools.combinations(vals, 2)]
            out.writerow([name, "item", i, "agreement", repr(float(np.mean(ws))), DEF])

    raters = sorted({r for labs in by_item.values() for r in labs})
    for r in raters:
        mine, theirs, ws = [], [], []
        items, partners = 0, set()
        for labs in by_item.values():
            if r not in labs or len(labs) < 2:
                continue
            items += 1
            for o, v in labs.items():
                if o == r:
                    continue
                partners.add(o)
                mine.append(labs[r])
                theirs.append(v)
                ws.append(w(labs[r], v))
        out.writerow([name, "rater", r, "items", items, DEF])
        out.writerow([name, "rater", r, "pairs", len(mine), DEF])
        out.writerow([name, "rater", r, "partners", len(partners), DEF])
        if mine:
            out.writerow([name, "rater", r, "agreement", repr(float(np.mean(ws))), DEF])
            k = cohen_kappa_score(mine, theirs, labels=labels, weights=weights)
            if not np.isnan(k):
                out.writerow([name, "rater", r, "pooled_kappa", repr(float(k)), SK])
        ks = []
        for o in partners:
            a = [labs[r] for labs in by_item.values() if r in labs and o in labs]
            b = [labs[o] for labs in by_item.values() if r in labs and o in labs]
            k = cohen_kappa_score(a, b, labels=labels, weights=weights)
            if not np.isnan(k):
                ks.append(k)
        if ks:
            out.writerow([name, "rater", r, "mean_kappa", repr(float(np.mean(ks))), SK])
