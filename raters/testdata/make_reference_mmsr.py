#!/usr/bin/python3
"""crowd-kit 1.4.1's MMSR (M-MSR, Ma & Olshevsky 2020) as reference numbers
for concord's raters.MMSR (issue 34).

Runs on Debian bookworm's python3-pandas 1.5.3, python3-numpy 1.24 and
python3-scipy 1.10 with crowd-kit's 1.4.1 source release at CROWDKIT (not
in Debian; no PyPI here). From raters/testdata:

    PYTHONPATH=$CROWDKIT /usr/bin/python3 make_reference_mmsr.py > reference_mmsr.csv

It writes the synthetic sets (numpy default_rng, seeds below) as
mmsr_*.csv and prints

    case, kind (item | rater | fit), id,
    field (label | prob:CLASS | skill | start | spread | negative | accuracy), value

Cases:
  mmsr_toy, mmsr_simple   MMSR() (defaults: n_iter 10000, tol 1e-10,
                          random_state 0) on crowd-kit's own test fixtures
                          (crowdkit_toy.csv, crowdkit_simple.csv, written by
                          make_reference_crowdkit_options.py). "start" rows
                          are the start crowd-kit draws,
                          scipy.stats.uniform.rvs(size=n, random_state=0),
                          per worker in order of appearance (it uses the same
                          draws for u and v); the Go test starts from them,
                          because on toy the fixed point depends on the start
                          (random_state 0, 1, 7 give w1 skills -0.949,
                          -0.805, -0.458).
  mmsr_toy_sorted         MMSR() on the toy fixture's rows sorted by task,
                          then worker: the order of a concord project's
                          labels (the API's and dashboard's random_start=
                          crowdkit draws in it), where crowd-kit ends at
                          another fixed point than on toy's own order.
  mmsr_dense3, mmsr_adv2, mmsr_near
                          synthetic sets where crowd-kit's result does not
                          depend on its random start: the "spread" row is the
                          largest difference of any skill over random_state
                          0..4. The Go test uses its own seeded start.
                          dense3: 6 raters label all 100 items, 3 classes;
                          adv2: 6 raters, 100 items, 2 classes, rater w0
                          adversarial (accuracy 0.05); near: 20 raters, 300
                          items, 3 labels per item (not every pair co-labels).
  mmsr_sparse             100 raters (accuracies 0.6-0.9, none adversarial),
                          300 items, 3 labels per item, 3 classes: crowd-kit
                          counts the pairs without common items as negative
                          edges of its sign graph and makes good raters
                          adversarial; "negative" is its number of
                          negative-skill raters and "accuracy" its share of
                          items whose label is the true class
                          (mmsr_sparse_gold.csv). Not a reference for
                          concord's numbers: the Go test checks concord does
                          better.
"""
import csv
import sys

import numpy as np
import pandas as pd
import scipy.stats as sps

from crowdkit.aggregation import MMSR

out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["case", "kind", "id", "field", "value"])


def read(path):
    df = pd.read_csv(path, dtype=str)
    return df.rename(columns={"item_id": "task", "rater_id": "worker"})[["task", "worker", "label"]]


def write(path, df):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["item_id", "rater_id", "label"])
        for r in df.itertuples():
            w.writerow([r.task, r.worker, r.label])


def synth(n_items, n_raters, per_item, k, seed, bad=()):
    rng = np.random.default_rng(seed)
    acc = rng.uniform(0.6, 0.9, n_raters)
    rows, truth = [], {}
    for i in range(n_items):
        t = int(rng.integers(k))
        truth["t%d" % i] = "c%d" % t
        for j in rng.choice(n_raters, per_item, replace=False):
            a = 0.05 if j in bad else acc[j]
            lab = t if rng.random() < a else int(rng.choice([c for c in range(k) if c != t]))
            rows.append(("t%d" % i, "w%d" % j, "c%d" % lab))
    return pd.DataFrame(rows, columns=["task", "worker", "label"]), truth


def emit(case, m, data):
    for t, lab in m.predict(data).items():
        out.writerow([case, "item", t, "label", lab])
    for t, row in m.predict_score(data).iterrows():
        for c, p in row.items():
            out.writerow([case, "item", t, "prob:%s" % c, repr(float(p))])
    for w, s in m.skills_.items():
        out.writerow([case, "rater", w, "skill", repr(float(s))])


for case, path in [("mmsr_toy", "crowdkit_toy.csv"), ("mmsr_simple", "crowdkit_simple.csv")]:
    data = read(path)
    m = MMSR().fit(data)
    emit(case, m, data)
    workers = pd.unique(data.worker)
    for w, u in zip(workers, sps.uniform.rvs(size=len(workers), random_state=0)):
        out.writerow([case, "rater", w, "start", repr(float(u))])

data = read("crowdkit_toy.csv").sort_values(["task", "worker"], kind="stable").reset_index(drop=True)
emit("mmsr_toy_sorted", MMSR().fit(data), data)

for case, args in [
    ("mmsr_dense3", (100, 6, 6, 3, 1, ())),
    ("mmsr_adv2", (100, 6, 6, 2, 3, (0,))),
    ("mmsr_near", (300, 20, 3, 3, 2, ())),
]:
    data, _ = synth(*args)
    write(case + ".csv", data)
    data = read(case + ".csv")
    m = MMSR().fit(data)
    emit(case, m, data)
    runs = [MMSR(random_state=rs).fit(data).skills_.sort_index().values for rs in range(5)]
    spread = max(float(np.max(np.abs(r - runs[0]))) for r in runs)
    out.writerow([case, "fit", "", "spread", repr(spread)])

data, truth = synth(300, 100, 3, 3, 5)
write("mmsr_sparse.csv", data)
with open("mmsr_sparse_gold.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["item_id", "gold"])
    for t, g in truth.items():
        w.writerow([t, g])
data = read("mmsr_sparse.csv")
m = MMSR().fit(data)
labels = m.predict(data)
out.writerow(["mmsr_sparse", "fit", "", "negative", int((m.skills_ < 0).sum())])
out.writerow(["mmsr_sparse", "fit", "", "accuracy", repr(float(np.mean([labels[t] == truth[t] for t in labels.index])))])
