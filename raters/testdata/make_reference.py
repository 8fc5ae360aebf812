#!/usr/bin/python3
"""Reference agreement coefficients from Debian-packaged tools.

Run from raters/testdata with Debian's python3 (bookworm: python3-nltk 3.8,
python3-statsmodels 0.13.5, python3-sklearn 1.2.1):

    /usr/bin/python3 make_reference.py > reference_python.csv

Tools and what they give:
  - NLTK AnnotationTask.alpha: Krippendorff's alpha by the coincidence method,
    any number of coders, missing values; nominal (binary_distance), interval
    (interval_distance) and, passed as distance functions, Krippendorff's
    ordinal metric (from the pairable-value frequencies, as in his 2011 paper)
    and ratio metric.
  - NLTK pi / S / multi_kappa / kappa: complete data only.
  - statsmodels fleiss_kappa (method fleiss and randolph): complete data only.
  - statsmodels cohens_kappa on each pair's contingency table (items both
    rated), with the category values as weights for wt='linear'/'quadratic';
    gives kappa and its standard error (Fleiss, Cohen & Everitt 1969).
  - sklearn cohen_kappa_score as a second check of the pairwise kappas.

Output columns: dataset, coefficient, variant, a, b, value, se, tool.
"""
import csv
import sys
from collections import defaultdict

import numpy as np
from nltk.metrics.agreement import AnnotationTask
from nltk.metrics.distance import binary_distance, interval_distance
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa


def load(path, dataset=None):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if dataset and r.get("dataset") != dataset:
                continue
            rows.append((r["rater_id"], r["item_id"], r["label"]))
    return rows


def numeric(rows):
    return [(c, i, float(l)) for c, i, l in rows]


def ordinal_distance(rows):
    """Krippendorff's ordinal metric from the pairable values' frequencies."""
    per_item = defaultdict(list)
    for c, i, l in rows:
        per_item[i].append(l)
    freq = defaultdict(float)
    for vals in per_item.values():
        if len(vals) >= 2:
            for v in vals:
                freq[v] += 1
    levels = sorted(freq)

    def dist(a, b):
        if a == b:
            return 0.0
        lo, hi = min(a, b), max(a, b)
        s = sum(freq[g] for g in levels if lo <= g <= hi)
        return (s - (freq[a] + freq[b]) / 2) ** 2

    return dist


def ratio_distance(a, b):
    if a == b:
        return 0.0
    return ((a - b) / (a + b)) ** 2


out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["dataset", "coefficient", "variant", "a", "b", "value", "se", "tool"])


def emit(ds, coef, variant, value, se="", a="", b="", tool=""):
    out.writerow([ds, coef, variant, a, b, repr(float(value)), "" if se == "" else repr(float(se)), tool])


def alphas(ds, rows, metrics):
    nums = numeric(rows)
    for m in metrics:
        if m == "nominal":
            t = AnnotationTask(data=rows, distance=binary_distance)
        elif m == "interval":
            t = AnnotationTask(data=nums, distance=interval_distance)
        elif m == "ordinal":
            t = AnnotationTask(data=nums, distance=ordinal_distance(nums))
        elif m == "ratio":
            t = AnnotationTask(data=nums, distance=ratio_distance)
        emit(ds, "krippendorff_alpha", m, t.alpha(), tool="nltk 3.8 AnnotationTask.alpha")


def pairs(ds, rows, weighted, values=None):
    """Cohen's kappa of every pair of raters on the items both rated."""
    by = defaultdict(dict)
    cats = set()
    for c, i, l in rows:
        by[c][i] = l
        cats.add(l)
    cats = sorted(cats, key=float) if values else sorted(cats)
    index = {c: k for k, c in enumerate(cats)}
    raters = list(dict.fromkeys(c for c, _, _ in rows))  # first appearance
    for x, a in enumerate(raters):
        for b in raters[x + 1:]:
            common = [i for i in by[a] if i in by[b]]
            if len(common) < 2:
                continue
            ya = [by[a][i] for i in common]
            yb = [by[b][i] for i in common]
            table = np.zeros((len(cats), len(cats)))
            for u, v in zip(ya, yb):
                table[index[u], index[v]] += 1
            variants = ["unweighted"] + (["linear", "quadratic"] if weighted else [])
            for v in variants:
                if v == "unweighted":
                    res = cohens_kappa(table)
                else:
                    res = cohens_kappa(table, weights=np.array([float(c) for c in cats]), wt=v)
                if not np.isfinite(res.kappa):
                    continue
                emit(ds, "cohen_kappa", v, res.kappa, res.std_kappa, a, b, "statsmodels 0.13.5 cohens_kappa")
                if v == "unweighted" or values == "codes":
                    sk = cohen_kappa_score(ya, yb, weights=None if v == "unweighted" else v,
                                           labels=cats)
                    emit(ds, "cohen_kappa", v, sk, "", a, b, "sklearn 1.2.1 cohen_kappa_score")


# Krippendorff (2011) reliability-data example: 4 observers x 12 units
# with missing values (irrCAC's cac.raw4raters).
k = load("gwet_irrcac_ratings.csv", "cac.raw4raters")
alphas("kripp2011", k, ["nominal", "ordinal", "interval", "ratio"])

# Fleiss (1971): complete, 30 x 6, 5 nominal categories.
f = load("fleiss1971_ratings.csv")
alphas("fleiss1971", f, ["nominal"])
items = sorted({i for _, i, _ in f}, key=int)
cats = sorted({l for _, _, l in f})
table = np.zeros((len(items), len(cats)))
for c, i, l in f:
    table[items.index(i), cats.index(l)] += 1
emit("fleiss1971", "fleiss_kappa", "unweighted", fleiss_kappa(table, method="fleiss"), tool="statsmodels 0.13.5 fleiss_kappa")
emit("fleiss1971", "randolph_kappa", "unweighted", fleiss_kappa(table, method="randolph"), tool="statsmodels 0.13.5 fleiss_kappa(method=randolph)")
for c in range(len(cats)):
    two = np.column_stack([table[:, c], table.sum(axis=1) - table[:, c]])
    emit("fleiss1971", "fleiss_category_kappa", cats[c], fleiss_kappa(two, method="fleiss"), tool="statsmodels 0.13.5 fleiss_kappa on the table dichotomised at the category")
t = AnnotationTask(data=f)
emit("fleiss1971", "scott_pi", "unweighted", t.pi(), tool="nltk 3.8 AnnotationTask.pi")
emit("fleiss1971", "randolph_kappa", "unweighted", t.S(), tool="nltk 3.8 AnnotationTask.S")
emit("fleiss1971", "percent_agreement", "unweighted", t.avg_Ao(), tool="nltk 3.8 AnnotationTask.avg_Ao")
pairs("fleiss1971", f, weighted=False)

# Nominal with missing ratings: face sentiment, 584 items x 27 workers.
fc = load("face4_ratings.csv")
alphas("face4", fc, ["nominal"])
pairs("face4", fc, weighted=False)

# Ordinal with missing ratings: sirt writing ratings set 1, criterion k1
# (0-3), 135 essays x 7 raters.
s = load("sirt1_k1_ratings.csv")
alphas("sirt1_k1", s, ["nominal", "ordinal", "interval", "ratio"])
pairs("sirt1_k1", s, weighted=True, values="codes")

# Bounded with missing ratings: Snow et al. (2008) anger 0-100, 100
# headlines x 38 workers (10 each).
an = load("affect_anger_ratings.csv")
alphas("anger", an, ["interval", "ratio", "ordinal", "nominal"])
pairs("anger", an, weighted=True, values="values")
