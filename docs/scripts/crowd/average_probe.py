#!/usr/bin/env python3
"""Averaging the rater models instead of choosing one (issue 29, stop 48).

For every dataset folder (ratings.csv: item_id, rater_id, label; items.csv with a gold or truth column, read only
to score) it runs `concord fit --model confusion --duplicates keep` with defaults (auto) and with each rater model
forced (--rater-model one-coin|communities|spammer|subtypes|graded; graded fails on unordered labels and is then
left out), and scores three consensus rules on the candidates that auto compared and did not exclude (the fit
document's model.confusion.rater_model_candidates, neither failed nor excluded):

  default   the class of auto's chosen candidate (what concord reports);
  mean      the class with the highest mean of the candidates' class probabilities (model averaging with equal
            weights: Bayesian model averaging by the evidence gives the chosen candidate alone, the scores being
            hundreds of nats apart);
  min       the class whose smallest probability over the candidates is highest (the cautious, max-min rule).

It also prints majority vote of every label with ties counted 1/t and each forced candidate's accuracy.

    python3 docs/scripts/crowd/average_probe.py --concord /tmp/concord --work /tmp/c29avg DIR...

Fits are cached under --work (delete it to refit; a fit that failed is run again); two run at a time.
"""
import argparse
import collections
import concurrent.futures as cf
import csv
import os

import graded_bench
from graded_bench import gold

MODELS = ["auto", "one-coin", "communities", "spammer", "subtypes", "graded"]


def fit(binary, work, d, m):
    """The fit of rater model m ("auto": the default) on d, cached under work; None when it failed."""
    out = os.path.join(work, "%s.%s.json" % (d.strip("/").replace("/", "_"), m))
    j, _, _ = graded_bench.fit(binary, d, out, () if m == "auto" else ("--rater-model", m))
    return j


def majority(d, g):
    by = collections.defaultdict(list)
    with open(os.path.join(d, "ratings.csv"), newline="") as fh:
        for r in csv.DictReader(fh):
            by[r["item_id"].strip()].append(r["label"].strip())
    s = 0.0
    for i, v in g.items():
        c = collections.Counter(by[i])
        if c:
            mx = max(c.values())
            tied = [k for k in c if c[k] == mx]
            if v in tied:
                s += 1 / len(tied)
    return s / len(g)


def probs(doc):
    return {it["id"]: it.get("class_probs") or {} for it in doc["items"]}


def accuracy(p, g):
    return sum(1 for i, v in g.items() if p.get(i) and max(p[i], key=p[i].get) == v) / len(g)


def combine(ps, how):
    out = {}
    for i in ps[0]:
        ks = set().union(*[set(p.get(i, {})) for p in ps])
        if ks:
            f = (lambda k: sum(p.get(i, {}).get(k, 0) for p in ps) / len(ps)) if how == "mean" else \
                (lambda k: min(p.get(i, {}).get(k, 0) for p in ps))
            out[i] = {k: f(k) for k in ks}
    return out


def row(binary, work, d):
    g = gold(d)
    docs = {m: fit(binary, work, d, m) for m in MODELS}
    auto = docs["auto"]
    cands = auto["model"]["confusion"].get("rater_model_candidates", [])
    kept = [c["model"] for c in cands if not c.get("failed") and not c.get("excluded")]
    ps = [probs(docs[m]) for m in kept if docs.get(m)]
    r = {"chosen": auto["model"]["confusion"].get("rater_model"), "default": accuracy(probs(auto), g),
         "mean": accuracy(combine(ps, "mean"), g), "min": accuracy(combine(ps, "min"), g),
         "mv": majority(d, g), "n": len(ps)}
    for m in MODELS[1:]:
        if docs.get(m):
            r[m] = accuracy(probs(docs[m]), g)
    return d, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--concord", required=True)
    ap.add_argument("--work", default="/tmp/c29avg")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print("%-38s %-11s %7s %15s %15s %7s %2s | forced" % ("set", "chosen", "default", "mean (change)", "min (change)", "MV1/t", "n"))
    with cf.ThreadPoolExecutor(2) as ex:
        for d, r in ex.map(lambda d: row(a.concord, a.work, d.rstrip("/")), a.dirs):
            name = os.path.basename(os.path.dirname(d)) + "/" + os.path.basename(d)
            print("%-38s %-11s %.4f  %.4f (%+.4f) %.4f (%+.4f) %.4f %2d | " % (
                name[-38:], r["chosen"], r["default"], r["mean"], r["mean"] - r["default"], r["min"],
                r["min"] - r["default"], r["mv"], r["n"]) +
                " ".join("%s %.4f" % (m, r[m]) for m in MODELS[1:] if m in r), flush=True)


if __name__ == "__main__":
    main()
