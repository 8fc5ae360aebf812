#!/usr/bin/env python3
"""Before/after table of the subtypes candidate of auto (issue 29, branch c29sub).

For every dataset folder (ratings.csv, items.csv with gold read only to score) it runs

    BASE fit --labels ratings.csv --duplicates keep --model confusion       (the default before)
    NEW  fit ... (the default after)   and   NEW fit ... --rater-model subtypes   (the candidate forced)

and prints each default's chosen model and accuracy, the forced subtypes fit's accuracy, the subtypes candidate's
score less the best other candidate's that the held-out check did not exclude (nats, from the new default's
rater_model_candidates; X: the subtypes candidate itself excluded by the held-out check), majority vote of every
label with ties split, and the CPU seconds (user + sys of the fit process) of both defaults.

Usage: subtypes_bench.py --base BIN --new BIN [--work DIR] DIR...
"""
import argparse
import os

from bloc_probe import mvacc
from dependence_probe import load
from graded_bench import acc, fit, gold


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--work", default="/tmp/c29sub/bench")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print("%-38s | %-11s %6s | %-11s %6s %7s | %6s %8s | %6s | %5s %5s" % (
        "set", "before", "acc", "after", "acc", "change", "subtyp", "margin", "MV1/t", "cpu b", "cpu a"))
    for d in a.dirs:
        d = d.rstrip("/")
        name = os.path.basename(os.path.dirname(d)) + "/" + os.path.basename(d)
        tag = name.replace("/", "_")
        g = gold(d)
        jb, eb, cb = fit(a.base, d, os.path.join(a.work, tag + ".base.json"))
        jn, en, cn = fit(a.new, d, os.path.join(a.work, tag + ".new.json"))
        js, es, _ = fit(a.new, d, os.path.join(a.work, tag + ".subtypes.json"), ("--rater-model", "subtypes"))
        if eb or en or es:
            print("%-38s failed: %s %s %s" % (name, eb, en, es))
            continue
        cands = jn["model"]["confusion"].get("rater_model_candidates", [])
        sub = [c for c in cands if c["model"] == "subtypes"]
        others = [c["score"] for c in cands if c["model"] != "subtypes" and not c.get("failed") and not c.get("excluded")]
        margin = "%+8.1f" % (sub[0]["score"] - max(others)) if sub and others and not sub[0].get("failed") else "%8s" % "-"
        if sub and sub[0].get("excluded"):
            margin += "X"
        I, R, Y, N, L, K, gg = load(d)
        ab, an = acc(jb, g), acc(jn, g)
        print("%-38s | %-11s %.4f | %-11s %.4f %+7.4f | %.4f %s | %.4f | %5.2f %5.2f" % (
            name[-38:], jb["model"]["confusion"]["rater_model"], ab, jn["model"]["confusion"]["rater_model"], an,
            an - ab, acc(js, g), margin, mvacc(I, Y, N, K, gg), cb, cn), flush=True)


if __name__ == "__main__":
    main()
