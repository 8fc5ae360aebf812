#!/usr/bin/python3
"""crowd-kit's seven aggregators on crowd datasets in concord's benchmark layout.

    PYTHONPATH=/tmp/crowdkit-1.4.1 /usr/bin/python3 docs/scripts/crowd/crowdkit_bench.py \
        [--out table.tsv] DIR [DIR ...]

Each DIR holds ratings.csv (item_id, rater_id, label; one row per label,
repeated labels kept) and items.csv (item_id and a gold column named gold,
gold_label, truth or true_label; empty where unknown): the public datasets in
../shared/data and the synthetic beds of docs/scripts/crowd/gen. For each it
runs crowd-kit's MajorityVote, DawidSkene, OneCoinDawidSkene, GLAD, Wawa,
ZeroBasedSkill and MACE with their default settings (fit_predict on the
DataFrame task, worker, label; for OneCoinDawidSkene fit(df).labels_, since
1.4.1's OneCoinDawidSkene.fit_predict fails with a TypeError: it passes
fit() DawidSkene's extra arguments) and prints one line per method:

    dataset  method  accuracy  seconds

accuracy = items whose consensus equals the gold label / items with a gold
label (an item without a consensus counts as wrong); seconds = fit_predict's
wall time. Labels are read as pandas reads them (integers stay integers), so
majority-vote ties follow crowd-kit's own rule (the first label in sorted
order). The consensus and gold are compared as strings.

crowd-kit is run from its source (github.com/Toloka/crowd-kit, tag v1.4.1,
checked out outside the repository and put on PYTHONPATH) on Debian's
python3-pandas, python3-scipy and python3-sklearn. Its package __init__
imports modules the classification aggregators do not use (nltk for the text
aggregators; Debian has python3-nltk, and python3-tqdm which GLAD and MACE
use); when such a module is missing, only its import is stubbed, and the
script says so on stderr.
"""
import argparse
import csv
import importlib
import os
import sys
import time
import types

GOLD_COLUMNS = ("gold", "gold_label", "truth", "true_label")
METHODS = ("MV", "DS", "OneCoinDS", "GLAD", "Wawa", "ZBS", "MACE")


def stub_missing(names):
    """Stubs the import of each module in names that cannot be imported."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                sub = ".".join(parts[:i])
                if sub not in sys.modules:
                    mod = types.ModuleType(sub)
                    mod.__path__ = []
                    sys.modules[sub] = mod
                    if i > 1:
                        setattr(sys.modules[".".join(parts[: i - 1])], parts[i - 1], mod)
            print(f"crowdkit_bench: stubbed the import of {name} (not installed; used only by aggregators not run here)", file=sys.stderr)


def load(folder):
    import pandas as pd

    df = pd.read_csv(os.path.join(folder, "ratings.csv"), dtype={"item_id": str, "rater_id": str})
    df = df.rename(columns={"item_id": "task", "rater_id": "worker"})[["task", "worker", "label"]]
    gold = {}
    with open(os.path.join(folder, "items.csv"), newline="") as f:
        rd = csv.DictReader(f)
        col = next((c for c in rd.fieldnames if c.strip().lower() in GOLD_COLUMNS), None)
        if col is None:
            raise SystemExit(f"{folder}/items.csv: no gold column (one of {', '.join(GOLD_COLUMNS)})")
        for row in rd:
            g = (row[col] or "").strip()
            if g != "":
                gold[row["item_id"]] = g
    return df, gold


def accuracy(pred, gold):
    hit = 0
    for task, g in gold.items():
        if task in pred.index and str(pred[task]) == g:
            hit += 1
    return hit / len(gold)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="dataset folders (ratings.csv, items.csv)")
    ap.add_argument("--out", help="also append the lines to this TSV file (header written when new)")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated subset of " + ",".join(METHODS))
    args = ap.parse_args()

    stub_missing(["nltk.translate.gleu_score"])
    import crowdkit
    from crowdkit.aggregation import GLAD, MACE, DawidSkene, MajorityVote, OneCoinDawidSkene, Wawa, ZeroBasedSkill

    make = {
        "MV": MajorityVote,
        "DS": DawidSkene,
        "OneCoinDS": OneCoinDawidSkene,
        "GLAD": GLAD,
        "Wawa": Wawa,
        "ZBS": ZeroBasedSkill,
        "MACE": MACE,
    }
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for m in methods:
        if m not in make:
            raise SystemExit(f"unknown method {m!r}; known: {', '.join(METHODS)}")
    print(f"# crowd-kit {getattr(crowdkit, '__version__', '?')} from {os.path.dirname(crowdkit.__file__)}", file=sys.stderr)
    out = None
    if args.out:
        new = not os.path.exists(args.out) or os.path.getsize(args.out) == 0
        out = open(args.out, "a")
        if new:
            out.write("dataset\tmethod\taccuracy\tseconds\n")
    for folder in args.dirs:
        name = os.path.basename(os.path.normpath(folder))
        df, gold = load(folder)
        for m in methods:
            t = time.perf_counter()
            agg = make[m]()
            if m == "OneCoinDS":
                # 1.4.1's OneCoinDawidSkene inherits DawidSkene.fit_predict,
                # which passes fit() arguments OneCoinDawidSkene.fit does not
                # take; fit(df).labels_ is what that fit_predict returns.
                pred = agg.fit(df).labels_
            else:
                pred = agg.fit_predict(df)
            secs = time.perf_counter() - t
            line = f"{name}\t{m}\t{accuracy(pred, gold):.6f}\t{secs:.3f}"
            print(line, flush=True)
            if out:
                out.write(line + "\n")
                out.flush()
    if out:
        out.close()


if __name__ == "__main__":
    main()
