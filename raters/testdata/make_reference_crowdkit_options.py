#!/usr/bin/python3
"""crowd-kit 1.4.1 itself on its own test fixtures, as reference numbers for
Zero-Based Skill, KOS, gold majority vote and the Dawid-Skene options (known
true labels, initial error matrices, iterations) of issue 34.

crowd-kit is not in Debian: its 1.4.1 source release runs on Debian
bookworm's python3-pandas 1.5.3, python3-numpy 1.24, python3-scipy 1.10,
python3-sklearn 1.2.1 (and python3-pytest 7.2 to read the fixtures). Run
from raters/testdata with the release unpacked at CROWDKIT:

    PYTHONPATH=$CROWDKIT /usr/bin/python3 make_reference_crowdkit_options.py $CROWDKIT

It writes the fixtures' data as crowdkit_*.csv (toy YSDA, the "simple"
Toloka imitation, the boolean-label set; gold labels; initial error
matrices as rater,true,label,value) and prints the reference:

    case, kind (item | rater | edge | fit), id,
    field (label | prob:CLASS | skill | reliability0 | iterations), value

Cases, each with the options a crowd-kit user sets:
  zbs_toy, zbs_simple       ZeroBasedSkill() (defaults)
  gold_toy, gold_simple     GoldMajorityVote().fit(data, gold)
  kos_bool, kos_toy         KOS() labels, and its start: numpy's N(1, 1)
                            draws of random_state 0 per label in data order
                            (the Go test starts from them)
  ds_gold_toy, ds_gold_simple   DawidSkene(n_iter=10, tol=0).fit(data, gold)
  ds_assign_w2, ds_addition_w2  DawidSkene(10, tol=0, strategy) with w2's
                            prior error matrix 99/1 (crowd-kit's consistency
                            tests)
  ds_addition_t2            addition with the matrices of crowd-kit's
                            desired-label test (t2 becomes "no")
  ds_iter2_toy              DawidSkene(n_iter=2, tol=0)
"""
import csv
import importlib.util
import sys

import numpy as np
import pandas as pd

from crowdkit.aggregation import KOS, DawidSkene, GoldMajorityVote, ZeroBasedSkill

root = sys.argv[1]
spec = importlib.util.spec_from_file_location("conftest", root + "/tests/conftest.py")
conftest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conftest)


def fixture(name):
    f = getattr(conftest, name)
    return getattr(f, "__pytest_wrapped__").obj()


toy = fixture("toy_answers_df")
simple = fixture("simple_answers_df")
boolean = fixture("data_with_bool_labels")
toy_gold = fixture("toy_gold_df")
simple_gold = fixture("simple_gold_df")


def write_ratings(path, df):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["item_id", "rater_id", "label"])
        for _, r in df.iterrows():
            w.writerow([r.task, r.worker, r.label])


def write_gold(path, s):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["item_id", "gold"])
        for t, g in s.items():
            w.writerow([t, g])


def write_init(path, df):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["rater", "true", "label", "value"])
        for (worker, label), row in df.iterrows():
            for true, v in row.items():
                w.writerow([worker, true, label, repr(float(v))])


write_ratings("crowdkit_toy.csv", toy)
write_ratings("crowdkit_simple.csv", simple)
write_ratings("crowdkit_bool.csv", boolean)
write_gold("crowdkit_toy_gold.csv", toy_gold)
write_gold("crowdkit_simple_gold.csv", simple_gold)

out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["case", "kind", "id", "field", "value"])


def emit(case, labels=None, probas=None, skills=None):
    if labels is not None:
        for t, l in labels.items():
            out.writerow([case, "item", t, "label", l])
    if probas is not None:
        for t, row in probas.iterrows():
            for c, p in row.items():
                out.writerow([case, "item", t, "prob:%s" % c, repr(float(p))])
    if skills is not None:
        for w, s in skills.items():
            out.writerow([case, "rater", w, "skill", repr(float(s))])


def iterations(case, ds):
    # The EM iterations crowd-kit ran: n_iter, or fewer when the ELBO per
    # label rose by less than tol (tol 0: stopped rising), a rule concord
    # does not have; the Go test runs this many (--ds-iter).
    out.writerow([case, "fit", "", "iterations", len(ds.loss_history_)])


for case, data in [("zbs_toy", toy), ("zbs_simple", simple)]:
    z = ZeroBasedSkill().fit(data)
    emit(case, z.predict(data), z.predict_proba(data), z.skills_)

for case, data, gold in [("gold_toy", toy, toy_gold), ("gold_simple", simple, simple_gold)]:
    g = GoldMajorityVote().fit(data, gold)
    emit(case, g.predict(data), g.predict_proba(data), g.skills_)

for case, data in [("kos_bool", boolean), ("kos_toy", toy)]:
    emit(case, KOS().fit(data).labels_)
    # KOS's start: numpy's N(1, 1) draws after seeding with random_state 0,
    # one per row in the data's order (what KOS.fit draws).
    np.random.seed(0)
    for e, v in enumerate(np.random.normal(loc=1, scale=1, size=len(data))):
        out.writerow([case, "edge", e, "reliability0", repr(float(v))])

for case, data, gold in [("ds_gold_toy", toy, toy_gold), ("ds_gold_simple", simple, simple_gold)]:
    ds = DawidSkene(n_iter=10, tol=0).fit(data, gold)
    emit(case, ds.labels_, ds.probas_)
    iterations(case, ds)


def zero_init():
    return fixture("toy_worker_init_error_zero_df")


for strategy in ["assign", "addition"]:
    # crowd-kit's consistency test writes these as init[(w2, yes), no] = 1,
    # ...; the matrix it means is w2's rows:
    init = zero_init()
    init.loc[("w2", "yes"), "no"] = 1
    init.loc[("w2", "yes"), "yes"] = 99
    init.loc[("w2", "no"), "yes"] = 1
    init.loc[("w2", "no"), "no"] = 99
    if strategy == "assign":
        # assign needs every worker: the others uniform counts
        for w in ["w1", "w3", "w4", "w5"]:
            init.loc[(w, "yes"), "yes"] = 1
            init.loc[(w, "no"), "yes"] = 1
            init.loc[(w, "yes"), "no"] = 1
            init.loc[(w, "no"), "no"] = 1
    write_init("crowdkit_init_%s_w2.csv" % strategy, init)
    ds = DawidSkene(n_iter=10, tol=0, initial_error_strategy=strategy).fit(toy, initial_error=init)
    emit("ds_%s_w2" % strategy, ds.labels_, ds.probas_)
    iterations("ds_%s_w2" % strategy, ds)

init = zero_init()
for loc in [[("w1", "yes"), "no"], [("w2", "yes"), "no"], [("w3", "yes"), "no"], [("w4", "no"), "no"], [("w5", "no"), "no"]]:
    init.loc[loc[0], loc[1]] = 99
write_init("crowdkit_init_addition_t2.csv", init)
ds = DawidSkene(n_iter=10, tol=0, initial_error_strategy="addition").fit(toy, initial_error=init)
emit("ds_addition_t2", ds.labels_, ds.probas_)
iterations("ds_addition_t2", ds)

ds = DawidSkene(n_iter=2, tol=0).fit(toy)
emit("ds_iter2_toy", ds.labels_, ds.probas_)
iterations("ds_iter2_toy", ds)
