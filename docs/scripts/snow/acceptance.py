"""The issue 29 acceptance line for the bounded default, run as a new user
would: `concord fit --model bounded` with defaults on each of the 7 affect
dimensions of Snow et al. (2008) (headline texts as items, --items with
--text-columns headline, so that the text kernel is available) and on word
similarity (no texts), then the Pearson correlation of the consensus
(items[].value.mean) with the experts' scores beside that of the raters'
plain mean, the chosen candidate, and the CPU seconds of each fit.

Run:  go build -o /tmp/concord ./cmd/concord
      /usr/bin/python3 docs/scripts/snow/acceptance.py /tmp/concord ../shared/data [extra concord flags]
"""
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np

concord, data = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
affect = os.path.join(data, "snow2008_affect")
wordsim = os.path.join(data, "snow2008_wordsim")
tmp = tempfile.mkdtemp(prefix="snow-acceptance-")


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(name, args, gold, ratings):
    out = os.path.join(tmp, name + ".json")
    c0 = cpu()
    p = subprocess.run([concord, "fit", "--model", "bounded", "--out", out] + args + extra,
                       capture_output=True, text=True)
    secs = cpu() - c0
    if p.returncode != 0:
        print(f"{name:9s} fit failed: {p.stderr.strip()[-300:]}")
        return None
    res = json.load(open(out))
    value = {it["id"]: it["value"]["mean"] for it in res["items"]}
    byitem = {}
    for r in ratings:
        byitem.setdefault(r[0], []).append(float(r[1]))
    ids = sorted(gold)
    g = np.array([gold[i] for i in ids])
    cons = np.array([value[i] for i in ids])
    mean = np.array([np.mean(byitem[i]) for i in ids])
    rc, rm = np.corrcoef(cons, g)[0, 1], np.corrcoef(mean, g)[0, 1]
    d = res["diagnostics"]
    chosen = [c for c in d.get("model_candidates", []) if c.get("chosen")]
    model = res["model"]
    who = chosen[0]["name"] if chosen else f'{model.get("likelihood")}/{model.get("dispersions")}/{model.get("kernel")}'
    ok = "yes" if rc >= rm - 0.01 else "NO"
    print(f"{name:9s} {rc:8.4f} {rm:8.4f} {rc - rm:+8.4f}  {ok:4s} {who:32s} {secs:7.2f}")
    for c in d.get("model_candidates", []):
        loo = c.get("loo")
        print(f"          {c['name']:32s} loo {loo if loo is None else round(loo, 4)}  {c['seconds']:.2f} s{'  chosen' if c['chosen'] else ''}")
    return rc >= rm - 0.01


print(f"{'dimension':9s} {'r cons':>8s} {'r mean':>8s} {'diff':>8s}  pass {'chosen':32s} {'CPU s':>7s}")
items = list(csv.DictReader(open(os.path.join(affect, "items.csv"))))
rows = list(csv.DictReader(open(os.path.join(affect, "ratings.csv"))))
passed = 0
for dim in ["anger", "disgust", "fear", "joy", "sadness", "surprise", "valence"]:
    gold = {r["item_id"]: float(r["gold_" + dim]) for r in items}
    ratings = [(r["item_id"], r["label"]) for r in rows if r["dimension"] == dim]
    scheme = "bounded:-100..100" if dim == "valence" else "bounded:0..100"
    args = ["--labels", os.path.join(affect, "ratings.csv"), "--where", "dimension=" + dim,
            "--items", os.path.join(affect, "items.csv"), "--text-columns", "headline", "--scheme", scheme]
    passed += bool(run(dim, args, gold, ratings))
gold = {r["item_id"]: float(r["gold"]) for r in csv.DictReader(open(os.path.join(wordsim, "items.csv")))}
ratings = [(r["item_id"], r["label"]) for r in csv.DictReader(open(os.path.join(wordsim, "ratings.csv")))]
passed += bool(run("wordsim", ["--labels", os.path.join(wordsim, "ratings.csv"), "--scheme", "bounded:0..10"], gold, ratings))
print(f"r >= r(mean) - 0.01 on {passed} of 8")
