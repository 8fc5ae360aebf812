#!/usr/bin/python3
"""Reference values of the quadratic weighted kappa for analysis.QuadraticKappa.

Run with Debian's python3-sklearn (1.2.1): /usr/bin/python3 qwk_sklearn.py > qwk_reference.json
Each case gives two gradings a, b (level indices 0..k-1) and
sklearn.metrics.cohen_kappa_score(a, b, weights="quadratic", labels=range(k));
"kappa_observed_labels" is the same without labels= (sklearn's default, which
weighs distances between the levels that occur only).
"""
import json
import numpy as np
from sklearn.metrics import cohen_kappa_score

cases = []
def add(name, a, b, k):
    a = [int(x) for x in a]
    b = [int(x) for x in b]
    kap = cohen_kappa_score(a, b, weights="quadratic", labels=list(range(k)))
    obs = cohen_kappa_score(a, b, weights="quadratic")
    cases.append({"name": name, "k": k, "a": a, "b": b,
                  "kappa": float(kap), "kappa_observed_labels": float(obs)})

rng = np.random.default_rng(20240517)
# Two raters who agree up to noise, on 13 levels (the ASAP set 7 scale).
t = rng.integers(0, 13, 200)
add("noisy13", t, np.clip(t + rng.integers(-2, 3, 200), 0, 12), 13)
# Independent gradings on 5 levels.
add("independent5", rng.integers(0, 5, 100), rng.integers(0, 5, 100), 5)
# Levels 2 and 3 of 0..4 never used: the labels= choice matters.
a = rng.choice([0, 1, 4], 60)
add("gaps5", a, np.where(rng.random(60) < 0.7, a, rng.choice([0, 1, 4], 60)), 5)
# Systematic shift: b one level above a.
a = rng.integers(0, 6, 80)
add("shift7", a, a + 1, 7)
# Perfect agreement and perfect reversal.
a = rng.integers(0, 4, 40)
add("perfect4", a, a, 4)
add("reversed4", a, 3 - a, 4)
# Small hand-made case.
add("small3", [0, 1, 2, 2, 1, 0, 2], [0, 2, 2, 1, 1, 0, 0], 3)
json.dump(cases, open("/dev/stdout", "w"), indent=0)
