#!/usr/bin/env python3
"""Before/after table of the graded rater model (issue 29, branch c29ord).

For every dataset folder (ratings.csv, items.csv with gold read only to score) whose labels are integers with three
or more values (concord infers an ordinal scheme: the only sets where the graded candidate is fitted; elsewhere
the candidates and the fit are those of the base binary by construction), it runs

    BASE fit --labels ratings.csv --duplicates keep --model confusion       (the default before)
    NEW  fit ... (the default after)   and   NEW fit ... --rater-model graded   (the candidate forced)

and prints each default's chosen model and accuracy, the graded candidate's accuracy and its score less the best
other candidate's (nats, from the new default's rater_model_candidates), and the CPU seconds (user + sys of the
fit process) of the new default and of the full-confusion candidate alone (--rater-model communities).

Usage: graded_bench.py --base BIN --new BIN [--work DIR] DIR...
"""
import argparse
import csv
import json
import os
import resource
import subprocess


def labels(d):
    with open(os.path.join(d, "ratings.csv")) as f:
        return sorted({r["label"] for r in csv.DictReader(f)})


def gold(d):
    with open(os.path.join(d, "items.csv")) as f:
        rows = list(csv.DictReader(f))
    col = next(c for c in ("gold", "gold_label", "truth", "true_label") if c in rows[0])
    return {r["item_id"]: r[col].strip() for r in rows if r.get(col, "").strip() != ""}


def fit(binary, d, out, extra=()):
    if not os.path.exists(out):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([binary, "fit", "--labels", os.path.join(d, "ratings.csv"), "--duplicates", "keep", "--model",
                            "confusion", "--out", out, *extra], capture_output=True, text=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            return None, p.stderr.strip().splitlines()[-1:], 0
        with open(out + ".cpu", "w") as f:
            f.write("%.3f" % (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime))
    with open(out) as f:
        j = json.load(f)
    with open(out + ".cpu") as f:
        cpu = float(f.read())
    return j, None, cpu


def acc(j, g):
    got = {it["id"]: it.get("class") for it in j["items"]}
    return sum(1 for k, v in g.items() if got.get(k) == v) / len(g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--work", default="/tmp/c29ord/bench")
    ap.add_argument("--cpu", action="store_true", help="also fit the full-confusion candidate alone for the CPU ratio")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print("%-38s %2s | %-11s %6s | %-11s %6s %7s | %6s %9s | %7s %7s %5s" % (
        "set", "K", "before", "acc", "after", "acc", "change", "graded", "vs best", "cpu new", "cpu cnf", "ratio"))
    for d in a.dirs:
        d = d.rstrip("/")
        ls = labels(d)
        if len(ls) < 3 or not all(x.lstrip("-").isdigit() for x in ls):
            continue
        name = os.path.basename(os.path.dirname(d)) + "/" + os.path.basename(d)
        tag = name.replace("/", "_")
        g = gold(d)
        jb, eb, _ = fit(a.base, d, os.path.join(a.work, tag + ".base.json"))
        jn, en, cpu = fit(a.new, d, os.path.join(a.work, tag + ".new.json"))
        jg, eg, _ = fit(a.new, d, os.path.join(a.work, tag + ".graded.json"), ("--rater-model", "graded"))
        if eb or en or eg:
            print("%-38s failed: %s %s %s" % (name, eb, en, eg))
            continue
        cb, cn = jb["model"]["confusion"], jn["model"]["confusion"]
        cands = cn.get("rater_model_candidates", [])
        gr = [c for c in cands if c["model"] == "graded"]
        others = [c["score"] for c in cands if c["model"] != "graded" and not c.get("failed") and not c.get("excluded")]
        vs = gr[0]["score"] - max(others) if gr and others else float("nan")
        ab, an = acc(jb, g), acc(jn, g)
        row = "%-38s %2d | %-11s %.4f | %-11s %.4f %+7.4f | %.4f %+9.1f" % (
            name[-38:], len(ls), cb["rater_model"], ab, cn["rater_model"], an, an - ab, acc(jg, g), vs)
        if a.cpu:
            jc, ec, cc = fit(a.new, d, os.path.join(a.work, tag + ".conf.json"), ("--rater-model", "communities"))
            row += " | %7.2f %7.2f %5.2f" % (cpu, cc, cpu / cc if cc else float("nan"))
        print(row, flush=True)


if __name__ == "__main__":
    main()
