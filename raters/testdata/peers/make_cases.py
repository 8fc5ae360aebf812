"""The peers' own test cases as concord agreement cases (issue 34).

Run from raters/testdata/peers with Debian bookworm's python3 (numpy 1.24,
python3-statsmodels 0.13.5, python3-sklearn 1.2.1):

    /usr/bin/python3 make_cases.py > cases.json

Each case is one test (one assertion, or one assertion group over the same
output) of a peer's own public test suite or documented examples: its
input, the options a user of that peer would set, the peer's expected
numbers and the peer's tolerance, with the file and line it comes from.
raters/peers_test.go (TestPeerCases) replays them against the library and
prints the table per peer; README.md has the table.

The expected numbers are transcribed from the peers' test files:

- statsmodels 0.13.5, statsmodels/stats/tests/test_inter_rater.py
  (installed by python3-statsmodels; BSD-3);
- scikit-learn 1.2.1, sklearn/metrics/tests/test_classification.py
  test_cohen_kappa (installed by python3-sklearn; BSD-3);
- fast-krippendorff (github.com/pln-fing-udelar/fast-krippendorff @ HEAD of
  the fetched mirror, krippendorff/krippendorff.py): its tests are the
  doctests of alpha(); not in Debian, not installable here (no PyPI);
- pingouin (github.com/raphaelvallat/pingouin, tests/test_reliability.py
  test_intraclass_corr, and its dataset src/pingouin/datasets/icc.csv,
  copied below as the wine ratings; GPL-3); not in Debian;
- irrCAC: the package has no test suite (its tests/ folder holds a spelling
  check only); its documented examples are its own functions run on its own
  example data, the reference files of raters/testdata made from irrCAC's
  R sources (reference_irrcac_tables.csv: irrCAC 1.0's table and
  distribution functions; gwet_irrcac_reference.csv: irrCAC 1.4's raw-data
  functions on Gwet's textbook tables), read here.

statsmodels' inputs are read from its installed test module. Where the
peer is installed (statsmodels, scikit-learn, NLTK) the script runs it on
each case and stops if a transcribed number is not what the peer computes
within the test's tolerance, so that the transcription is checked.

Tolerances: numpy's assert_almost_equal(decimal=d) is |a - b| < 1.5e-d;
assert_allclose(atol=a) is |a - b| <= a + 1e-7 |b|; a doctest's
print(round(x, d)) and pingouin's np.round(x, 2) compare the rounded value
("round": d).
"""

import csv
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(HERE)

cases = []


def dec(d):
    return 1.5 * 10 ** (-d)


def add(peer, id, source, inp=None, options=None, checks=None, not_expressible="", differs=""):
    c = {"peer": peer, "id": id, "source": source}
    if not_expressible:
        c["not_expressible"] = not_expressible
    else:
        c["input"] = inp
        c["options"] = options or {}
        c["checks"] = checks
    if differs:
        c["differs"] = differs
    cases.append(c)


def chk(path, want, tol=0.0, rtol=0.0, round_=None, scale=None):
    c = {"path": path, "want": float(want)}
    if tol:
        c["tol"] = tol
    if rtol:
        c["rtol"] = rtol
    if round_ is not None:
        c["round"] = round_
    if scale is not None:
        c["scale"] = scale
    return c


def labels_of_columns(cols, raters=None):
    """Raw labels from one sequence per rater (None or nan: no rating)."""
    out = []
    for j, col in enumerate(cols):
        for i, v in enumerate(col):
            if v is None or (isinstance(v, float) and np.isnan(v)):
                continue
            out.append([i + 1, raters[j] if raters else "r%d" % (j + 1), v if isinstance(v, str) else float(v)])
    return out


def close(got, want, tol):
    if abs(got - want) > tol:
        sys.exit("transcription check failed: peer gives %r, the case says %r (tol %g)" % (got, want, tol))


# ---------------------------------------------------------------- statsmodels
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa, aggregate_raters  # noqa: E402

SM = "statsmodels"
SMF = "statsmodels/stats/tests/test_inter_rater.py"
# The inputs are statsmodels' own, from its installed test module.
from statsmodels.stats.tests.test_inter_rater import table1, table10, anxiety, diagnoses  # noqa: E402

if fleiss_kappa:
    close(fleiss_kappa(table1), 0.210, dec(3))
add(SM, "test_fleiss_kappa", SMF + ":71", {"kind": "counts", "counts": table1.tolist()}, {},
    [chk("fleiss_kappa.value", 0.210, dec(3))])

# test_fleis_randolph (line 77): method fleiss -> fleiss_kappa, unif/uniform/
# rand/randolph -> Randolph's free-marginal kappa (concord: randolph_kappa).
for n, (tab, method, want, tol) in enumerate([
        ([[7, 0], [7, 0]], "unif", 1, 0),
        ([[6.99, 0.01], [6.99, 0.01]], "fleiss", -0.166667, 6e-6),
        ([[6.99, 0.01], [6.99, 0.01]], "unif", 0.993343, 6e-6),
        ([[7, 1], [3, 5]], "fleiss", 0.161905, 6e-6),
        ([[7, 1], [3, 5]], "randolph", 0.214286, 6e-6),
        ([[7, 0], [0, 7]], "fleiss", 1, 0),
        ([[7, 0], [0, 7]], "uniform", 1, 0),
        ([[6, 1, 0], [0, 7, 0]], "fleiss", 0.708333, 6e-6),
        ([[6, 1, 0], [0, 7, 0]], "rand", 0.785714, 6e-6)]):
    if fleiss_kappa:
        close(fleiss_kappa(tab, method=method), want, tol + 1e-7 * abs(want))
    path = "fleiss_kappa.value" if method == "fleiss" else "randolph_kappa.value"
    add(SM, "test_fleis_randolph/%d %s %s" % (n + 1, tab, method), SMF + ":77", {"kind": "counts", "counts": tab}, {},
        [chk(path, want, tol, 1e-7)])

# CheckCohens.test_results: kappa, std_kappa, kappa_low, kappa_upp,
# std_kappa0, z_value, pvalue_one_sided, pvalue_two_sided to 4 decimals
# (SAS's numbers); the intervals and tests are normal ones.
def cohen_checks(prefix, vals, d):
    names = ["value", "se", "ci_low", "ci_high", "se_null", "z", "p_value", "p_value"]
    out = []
    for k, (n, v) in enumerate(zip(names, vals)):
        out.append(chk(prefix + n, v, dec(d), scale=0.5 if k == 6 else None))
    return out


for cls, weights, wm, sas in [
        ("TestUnweightedCohens", None, None, [0.4842, 0.1380, 0.2137, 0.7547, 0.1484, 3.2626, 0.0006, 0.0011]),
        ("TestWeightedCohens", [0, 1, 2], [[1, 0, -1], [0, 1, 0], [-1, 0, 1]], [0.4701, 0.1457, 0.1845, 0.7558, 0.1426, 3.2971, 0.0005, 0.0010])]:
    if cohens_kappa:
        r = cohens_kappa(table10, weights=weights)
        for got, want in zip([r.kappa, r.std_kappa, r.kappa_low, r.kappa_upp, r.std_kappa0, r.z_value, r.pvalue_one_sided, r.pvalue_two_sided], sas):
            close(got, want, dec(4))
    opts = {"ci": "normal"}
    prefix = "cohen_kappa.0.unweighted."
    if wm:
        # statsmodels' 1-D weights are disagreements by distance
        # (toeplitz); concord's agreement weights are 1 - d.
        opts["weight_matrix"] = wm
        prefix = "weighted.custom.cohen_kappa."
    add(SM, cls + ".test_results", SMF + (":125" if not wm else ":155"), {"kind": "table", "table": table10}, opts, cohen_checks(prefix, sas, 4))
    add(SM, cls + ".test_option", SMF + (":150" if not wm else ":180"), {"kind": "table", "table": table10}, opts, [chk(prefix + "value", sas[0], dec(4))])

# test_cohenskappa_weights (line 185): statsmodels' weight layouts against
# each other on a seeded random 5 x 5 table; the expected kappa and
# variance are statsmodels' own, to 14 decimals.
if cohens_kappa:
    np.random.seed(9743678)
    table = np.random.randint(0, 10, size=(5, 5)) + 5 * np.eye(5)
    mat = np.array([[1, 1, 1, 0, 0], [0, 0, 0, 1, 1]])
    table_agg = np.dot(np.dot(mat, table), mat.T)

    def agree(d):
        d = np.asarray(d, float)
        return (1 - d).tolist()

    r1 = cohens_kappa(table, weights=np.arange(5) > 2, wt='linear')
    r2 = cohens_kappa(table_agg, weights=np.arange(2), wt='linear')
    # kappa of the aggregated 2 x 2 table is unweighted kappa there
    add(SM, "test_cohenskappa_weights/1 aggregated table", SMF + ":185", {"kind": "table", "table": table_agg.tolist()}, {"ci": "normal"},
        [chk("cohen_kappa.0.unweighted.value", r1.kappa, dec(14)), chk("cohen_kappa.0.unweighted.se", np.sqrt(r1.var_kappa), 1e-14)])
    r1 = cohens_kappa(table, weights=2 * np.arange(5), wt='linear')
    add(SM, "test_cohenskappa_weights/2 linear = toeplitz", SMF + ":185", {"kind": "table", "table": table.tolist()}, {"ci": "normal", "weights": ["linear"]},
        [chk("weighted.linear.cohen_kappa.value", r1.kappa, dec(14)), chk("weighted.linear.cohen_kappa.se", np.sqrt(r1.var_kappa), 1e-14)])
    add(SM, "test_cohenskappa_weights/3 matrix", SMF + ":185", {"kind": "table", "table": table.tolist()}, {"ci": "normal", "weight_matrix": agree(r1.weights / r1.weights.max())},
        [chk("weighted.custom.cohen_kappa.value", r1.kappa, dec(14)), chk("weighted.custom.cohen_kappa.se", np.sqrt(r1.var_kappa), 1e-14)])
    r1 = cohens_kappa(table, weights=5 * np.arange(5) ** 2, wt='toeplitz')
    add(SM, "test_cohenskappa_weights/4 quadratic = toeplitz squares", SMF + ":185", {"kind": "table", "table": table.tolist()}, {"ci": "normal", "weights": ["quadratic"]},
        [chk("weighted.quadratic.cohen_kappa.value", r1.kappa, dec(14)), chk("weighted.quadratic.cohen_kappa.se", np.sqrt(r1.var_kappa), 1e-14)])

# test_cohens_kappa_irr (line 229): raters 2 and 3 of irr's anxiety data,
# binned by np.histogramdd into 5 categories (1, 2, 3, 4-5, 6); kappa to 6
# decimals, z to 5, two-sided p to 6 (irr's kappa2 numbers).
tab_anx = np.histogramdd(anxiety[:, 1:], ([1, 2, 3, 4, 6, 7], [1, 2, 3, 4, 6, 7]))[0]
irr = {"w1": (-0.006289308, -0.0604067, 0.9518317), "w2": (0.1459075, 1.282472, 0.1996772),
       "w3": (0.2520325, 1.437451, 0.1505898), "w4": (0.2391304, 1.223734, 0.2210526)}
for n, (res, w, wt) in enumerate([("w1", None, None), ("w2", None, 'linear'), ("w2", np.arange(5), None), ("w2", np.arange(5), 'toeplitz'),
                                  ("w3", None, 'quadratic'), ("w3", np.arange(5) ** 2, 'toeplitz'), ("w3", 4 * np.arange(5) ** 2, 'toeplitz'),
                                  ("w4", [0, 0, 1, 1, 2], 'toeplitz')]):
    kappa, z, p = irr[res]
    if cohens_kappa:
        r = cohens_kappa(tab_anx, weights=w, wt=wt)
        close(r.kappa, kappa, dec(6))
        close(r.z_value, z, dec(5))
        close(r.pvalue_two_sided, p, dec(6))
    opts = {"ci": "normal"}
    if w is None and wt is None:
        prefix = "cohen_kappa.0.unweighted."
    elif w is None:
        opts["weights"] = [wt]
        prefix = "weighted.%s.cohen_kappa." % wt
    else:
        d = np.asarray(w, float)
        opts["weight_matrix"] = [[1 - d[abs(k - l)] for l in range(5)] for k in range(5)]
        prefix = "weighted.custom.cohen_kappa."
    add(SM, "test_cohens_kappa_irr/%d %s weights=%s wt=%s" % (n + 1, res, None if w is None else list(np.asarray(w).tolist()), wt), SMF + ":229",
        {"kind": "table", "table": tab_anx.tolist()}, opts,
        [chk(prefix + "value", kappa, dec(6)), chk(prefix + "z", z, dec(5)), chk(prefix + "p_value", p, dec(6))])

if fleiss_kappa:
    close(fleiss_kappa(aggregate_raters(diagnoses)[0]), 0.4302445, dec(7))
add(SM, "test_fleiss_kappa_irr", SMF + ":312", {"kind": "labels", "labels": labels_of_columns(diagnoses.T.tolist())}, {"level": "nominal"},
    [chk("fleiss_kappa.value", 0.4302445, dec(7))])
add(SM, "test_to_table", SMF + ":326", not_expressible="a data-reshaping helper (labels to a contingency table), no agreement number: concord reads labels or a table directly")
add(SM, "test_aggregate_raters", SMF + ":348", not_expressible="a data-reshaping helper (labels to per-item counts), no agreement number: concord reads labels or counts directly")

# ---------------------------------------------------------------- scikit-learn
try:
    from sklearn.metrics import cohen_kappa_score
except ImportError:
    cohen_kappa_score = None
SK = "scikit-learn"
SKF = "sklearn/metrics/tests/test_classification.py"


def sk_case(id, line, y1, y2, path, want, tol, weights=None, level="nominal"):
    if cohen_kappa_score:
        close(cohen_kappa_score(y1, y2, weights=weights), want, tol)
    add(SK, id, SKF + ":%d" % line, {"kind": "labels", "labels": labels_of_columns([y1, y2])}, {"level": level}, [chk(path, want, tol)])


y1 = [0] * 40 + [1] * 60
y2 = [0] * 20 + [1] * 20 + [0] * 10 + [1] * 50
sk_case("test_cohen_kappa/1 Artstein-Poesio table 1", 708, y1, y2, "cohen_kappa.0.unweighted.value", 0.348, dec(3))
k = cohen_kappa_score(y1, y2) if cohen_kappa_score else 0.34782608695652173
# The test asserts symmetry, sklearn's kappa(y2, y1) == kappa(y1, y2)
# exactly; across two implementations the swapped raters' kappa is
# compared with sklearn's number to 1e-12.
sk_case("test_cohen_kappa/2 symmetric", 710, y2, y1, "cohen_kappa.0.unweighted.value", k, 1e-12)
add(SK, "test_cohen_kappa/3 labels=[0, 1] ignores others", SKF + ":715",
    not_expressible="labels=[0, 1] drops the items either rater put in another class; concord analyses every label (filter the label file first)")
sk_case("test_cohen_kappa/4 self", 717, y1 + [2] * 4, y1 + [2] * 4, "cohen_kappa.0.unweighted.value", 1.0, dec(7))
y1 = [0] * 46 + [1] * 44 + [2] * 10
y2 = [0] * 52 + [1] * 32 + [2] * 16
sk_case("test_cohen_kappa/5 multiclass", 722, y1, y2, "cohen_kappa.0.unweighted.value", 0.8013, dec(4))
y2 = [0] * 50 + [1] * 40 + [2] * 10
sk_case("test_cohen_kappa/6 unweighted", 727, y1, y2, "cohen_kappa.0.unweighted.value", 0.9315, dec(4), level="ordinal")
sk_case("test_cohen_kappa/7 linear", 728, y1, y2, "cohen_kappa.0.linear.value", 0.9412, dec(4), "linear", "ordinal")
sk_case("test_cohen_kappa/8 quadratic", 729, y1, y2, "cohen_kappa.0.quadratic.value", 0.9541, dec(4), "quadratic", "ordinal")

# ---------------------------------------------------------------- fast-krippendorff
FK = "fast-krippendorff"
FKF = "krippendorff/krippendorff.py (doctests of alpha)"
nan = float("nan")
rd1 = [[nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
       [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
       [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4]]
add(FK, "doctest/1 nominal", FKF + ":303", {"kind": "labels", "labels": labels_of_columns(rd1)}, {"level": "nominal"},
    [chk("krippendorff_alpha.nominal.value", 0.691358, round_=6)])
add(FK, "doctest/2 interval", FKF + ":305", {"kind": "labels", "labels": labels_of_columns(rd1)}, {"level": "interval"},
    [chk("krippendorff_alpha.interval.value", 0.810845, round_=6)])
vc = [[1, 0, 0, 0], [0, 0, 0, 0], [0, 2, 0, 0], [2, 0, 0, 0], [0, 0, 2, 0], [0, 0, 2, 1], [0, 0, 0, 3], [1, 0, 1, 0],
      [0, 2, 0, 0], [2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 2, 0], [0, 0, 2, 0], [0, 0, 0, 0], [0, 0, 1, 1]]
add(FK, "doctest/3 value_counts nominal", FKF + ":322", {"kind": "counts", "counts": vc}, {},
    [chk("krippendorff_alpha.nominal.value", 0.691358, round_=6)])
rd2 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
       [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
       [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
       [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
add(FK, "doctest/4 ordinal", FKF + ":330", {"kind": "labels", "labels": labels_of_columns(rd2)}, {"level": "ordinal"},
    [chk("krippendorff_alpha.ordinal.value", 0.815, round_=3)])
add(FK, "doctest/5 ordinal value_domain", FKF + ":332", {"kind": "labels", "labels": labels_of_columns(rd2), "categories": [1, 2, 3, 4, 5]}, {"level": "ordinal"},
    [chk("krippendorff_alpha.ordinal.value", 0.815, round_=3)])
add(FK, "doctest/6 ratio", FKF + ":334", {"kind": "labels", "labels": labels_of_columns(rd2)}, {"level": "ratio"},
    [chk("krippendorff_alpha.ratio.value", 0.797, round_=3)])
names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
rd3 = [[names[int(v)] if v == v else None for v in row] for row in rd2]
add(FK, "doctest/7 strings ordinal value_domain", FKF + ":344",
    {"kind": "labels", "labels": labels_of_columns(rd3), "categories": [names[k] for k in range(1, 6)]}, {"level": "ordinal"},
    [chk("krippendorff_alpha.ordinal.value", 0.815, round_=3)])
add(FK, "doctest/8 strings nominal", FKF + ":348", {"kind": "labels", "labels": labels_of_columns(rd3)}, {"level": "nominal"},
    [chk("krippendorff_alpha.nominal.value", 0.743, round_=3)])

# ---------------------------------------------------------------- NLTK
# nltk/test/unit/test_disagreement.py (github.com/nltk/nltk @ 152be06; the
# TestDisagreement cases are also in Debian's nltk 3.8, which runs them
# here; TestMissingValues is newer than 3.8). unittest's assertAlmostEqual
# is round(a - b, 7) == 0, |a - b| < 5e-8.
try:
    from nltk.metrics.agreement import AnnotationTask
except ImportError:
    AnnotationTask = None
NL = "NLTK"
NLF = "nltk/test/unit/test_disagreement.py"
PL7 = 5e-8


def nl_case(id, line, data, path, want, level="nominal", method="alpha", differs=""):
    if AnnotationTask:
        try:
            close(getattr(AnnotationTask(data), method)(), want, PL7)
        except ZeroDivisionError:
            pass  # nltk 3.8 divides by D_e = 0; the convention alpha = 1 is newer
    add(NL, id, NLF + " (nltk @ 152be06) " + id.split("/")[0], {"kind": "labels", "labels": [[str(i), c, l] for c, i, l in data]}, {"level": level},
        [chk(path, want, PL7)], differs=differs)


easy = [("coder1", "dress1", "YES"), ("coder2", "dress1", "NO"), ("coder3", "dress1", "NO"),
        ("coder1", "dress2", "YES"), ("coder2", "dress2", "NO"), ("coder3", "dress3", "NO")]
nl_case("TestDisagreement.test_easy", 13, easy, "krippendorff_alpha.nominal.value", -0.3333333)
nl_case("TestDisagreement.test_easy2", 29, easy[:5], "krippendorff_alpha.nominal.value", -0.3333333)
nl_case("TestDisagreement.test_easy3/1", 44, [("coder1", "1", 1), ("coder2", "1", 1), ("coder1", "2", 2), ("coder2", "2", 2)],
        "krippendorff_alpha.nominal.value", 1.0)
nl_case("TestDisagreement.test_easy3/2", 55, [("coder1", "1", 1), ("coder2", "1", 1), ("coder1", "2", 2)], "krippendorff_alpha.nominal.value", 1.0,
        differs="one item with two equal ratings: no expected disagreement (D_e = 0), so alpha = 1 - D_o/D_e is 0/0; "
                "NLTK returns 1 by convention, concord (as irrCAC) leaves it undefined")
perfect = [("coder1", "1", "YES"), ("coder2", "1", "YES"), ("coder1", "2", "YES"), ("coder2", "2", "YES")]
for method, path in [("S", "brennan_prediger.value"), ("pi", "scott_pi.value"), ("kappa", "cohen_kappa.0.unweighted.value"), ("multi_kappa", "conger_kappa.value")]:
    nl_case("TestDisagreement.test_perfect_agreement_coefficients/" + method, 59, perfect, path, 1.0, method=method,
            differs="every label is the one category: chance agreement is 1 and (p_a - p_e)/(1 - p_e) is 0/0; NLTK returns 1 by convention, "
                    "concord (as irrCAC) leaves it undefined" if method != "S" else
                    "one category in the data: Bennett's S (Brennan-Prediger) with q = 1 has p_e = 1/q = 1, 0/0; NLTK counts q from the data and returns 1, "
                    "concord leaves it undefined (with the scheme's categories, --observed-categories off, q is the scheme's)")
adv = [("A", "1", "1"), ("B", "1", "1"), ("D", "1", "1"), ("A", "2", "2"), ("B", "2", "2"), ("C", "2", "3"), ("D", "2", "2"),
       ("A", "3", "3"), ("B", "3", "3"), ("C", "3", "3"), ("D", "3", "3"), ("A", "4", "3"), ("B", "4", "3"), ("C", "4", "3"), ("D", "4", "3"),
       ("A", "5", "2"), ("B", "5", "2"), ("C", "5", "2"), ("D", "5", "2"), ("A", "6", "1"), ("B", "6", "2"), ("C", "6", "3"), ("D", "6", "4"),
       ("A", "7", "4"), ("B", "7", "4"), ("C", "7", "4"), ("D", "7", "4"), ("A", "8", "1"), ("B", "8", "1"), ("C", "8", "2"), ("D", "8", "1"),
       ("A", "9", "2"), ("B", "9", "2"), ("C", "9", "2"), ("D", "9", "2"), ("B", "10", "5"), ("C", "10", "5"), ("D", "10", "5"),
       ("C", "11", "1"), ("D", "11", "1"), ("C", "12", "3")]
nl_case("TestDisagreement.test_advanced", 72, adv, "krippendorff_alpha.nominal.value", 0.743421052632)
nl_case("TestDisagreement.test_advanced2", 122, adv, "krippendorff_alpha.nominal.value", 0.743421052632)
ratings = {"1": [1, 1, 2], "2": [1, 1, None], "3": [None, 1, 2]}
with_none = [(c, str(i), "None" if r is None else r) for c, rs in ratings.items() for i, r in enumerate(rs)]
dropped = [(c, str(i), r) for c, rs in ratings.items() for i, r in enumerate(rs) if r is not None]
nl_case("TestMissingValues.test_placeholder_counted_as_category_without_missing_values", 193,
        [(c, i, str(l)) for c, i, l in with_none], "krippendorff_alpha.nominal.value", 0.33333333333333)
add(NL, "TestMissingValues.test_missing_values_recovers_full_agreement", NLF + " (nltk @ 152be06)",
    not_expressible="missing_values=[None] declares a placeholder label as missing; concord reads an empty cell as missing and has no placeholder option (drop the rows; test_omitting_triples_is_equivalent is that)")
nl_case("TestMissingValues.test_omitting_triples_is_equivalent", 203, dropped, "krippendorff_alpha.nominal.value", 1.0)
add(NL, "TestMissingValues.test_string_placeholder", NLF + " (nltk @ 152be06)", not_expressible="a placeholder label declared missing (missing_values=['None']): no such option in concord")
add(NL, "TestMissingValues.test_masi_multilabel_with_missing", NLF + " (nltk @ 152be06)", not_expressible="set-valued labels with the MASI distance: concord's labels are single categories")
nl_case("TestMissingValues.test_missing_values_does_not_change_complete_data", 235, easy, "krippendorff_alpha.nominal.value", -0.3333333)
add(NL, "TestMissingValues.test_all_missing_raises_cleanly", NLF + " (nltk @ 152be06)", not_expressible="an error on labels that are all placeholders; concord has no placeholders (and no labels is an error naming the input)")
add(NL, "TestMissingValues.test_unhashable_placeholder_rejected_at_construction", NLF + " (nltk @ 152be06)", not_expressible="a Python type check of the missing_values argument")

# ---------------------------------------------------------------- pingouin
PG = "pingouin"
PGF = "tests/test_reliability.py (test_intraclass_corr)"
ICC = ["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"]
psych = [[9, 6, 8, 7, 10, 6], [2, 1, 4, 1, 5, 2], [5, 3, 6, 2, 6, 4], [8, 2, 8, 6, 9, 7]]
# pingouin's datasets/icc.csv: 8 wines x 4 judges (A-D), in judge order.
wine = [[1, 1, 3, 6, 6, 7, 8, 9], [2, 3, 8, 4, 5, 5, 7, 9], [0, 3, 1, 3, 5, 6, 7, 9], [1, 2, 4, 3, 6, 2, 9, 8]]
wine_nan = [list(map(float, c)) for c in wine]
wine_nan[0][3] = nan  # df.at[3, "Scores"] = nan: wine 4, judge A
ftests = {  # F rounded to (digits), df1, df2, p and its decimal, as each example asserts
    "psych": ([1.8, 11.0, 11.0, 1.8, 11.0, 11.0], 1, [5] * 6, [18, 15, 15, 18, 15, 15], [0.16472, 0.00013, 0.00013, 0.16472, 0.00013, 0.00013], 4),
    "wine": ([12] * 6, 0, [7] * 6, [24, 21, 21, 24, 21, 21], [2.2e-06, 5.0e-06, 5.0e-06, 2.2e-06, 5.0e-06, 5.0e-06], 7),
    "wine nan_policy=omit": ([13] * 6, 0, [6] * 6, [21, 18, 18, 21, 18, 18], None, 0),
}
for name, data, line, vals, lower, upper, opts in [
        ("psych", psych, 57, [0.17, 0.29, 0.71, 0.44, 0.62, 0.91], [-0.13, 0.02, 0.34, -0.88, 0.07, 0.68], [0.72, 0.76, 0.95, 0.91, 0.93, 0.99], {}),
        ("wine", wine, 74, [0.73, 0.73, 0.73, 0.91, 0.91, 0.92], [0.43, 0.43, 0.43, 0.75, 0.75, 0.75], [0.93, 0.93, 0.93, 0.98, 0.98, 0.98], {}),
        ("wine nan_policy=omit", wine_nan, 95, [0.75, 0.75, 0.75, 0.92, 0.92, 0.92], None, None, {"complete_cases": True})]:
    inp = {"kind": "labels", "labels": labels_of_columns(data)}
    o = dict({"level": "interval"}, **opts)
    add(PG, name + " ICC", PGF + ":%d" % line, inp, o, [chk("icc.%s.value" % n, v, round_=2) for n, v in zip(ICC, vals)])
    if lower:
        add(PG, name + " CI95 lower", PGF + ":%d" % (line + 11), inp, o, [chk("icc.%s.ci_low" % n, v, round_=2) for n, v in zip(ICC, lower)])
        add(PG, name + " CI95 upper", PGF + ":%d" % (line + 12), inp, o, [chk("icc.%s.ci_high" % n, v, round_=2) for n, v in zip(ICC, upper)])
    fs, fdig, df1, df2, ps, pdec = ftests[name]
    add(PG, name + " F", PGF + ":%d" % (line + 3), inp, o, [chk("icc.f_tests.%s.f" % n, v, round_=fdig) for n, v in zip(ICC, fs)])
    add(PG, name + " df1", PGF + ":%d" % (line + 4), inp, o, [chk("icc.f_tests.%s.df1" % n, v, dec(7)) for n, v in zip(ICC, df1)])
    add(PG, name + " df2", PGF + ":%d" % (line + 5), inp, o, [chk("icc.f_tests.%s.df2" % n, v, dec(7)) for n, v in zip(ICC, df2)])
    if ps:
        add(PG, name + " pval", PGF + ":%d" % (line + 6), inp, o, [chk("icc.f_tests.%s.p_value" % n, v, dec(pdec)) for n, v in zip(ICC, ps)])
add(PG, "nan_policy=raise", PGF + ":104", not_expressible="pingouin's default refuses missing ratings; concord uses every rating (REML) or, with --complete-cases, drops the incomplete items: there is no error to reproduce")

# ---------------------------------------------------------------- irrCAC
IR = "irrCAC"


def read(path):
    with open(os.path.join(TESTDATA, path)) as f:
        return list(csv.DictReader(f))


coef_path = {"cohen_kappa": "cohen_kappa", "scott_pi": "scott_pi", "fleiss_kappa": "fleiss_kappa", "gwet": "gwet_ac2",
             "brennan_prediger": "brennan_prediger", "krippendorff_alpha": "krippendorff_alpha", "percent_agreement": "percent_agreement"}
for r in read("reference_irrcac_tables.csv"):
    kind = "counts" if r["input"] in ("irrcac_distrib.6raters.csv", "irrcac_cac.dist4cat.csv") else "table"
    prefix = "weighted.%s.%s." % (r["weights"], coef_path[r["coefficient"]])
    checks = [chk(prefix + "value", float(r["value"]), 1e-12), chk(prefix + "se", float(r["se"]), 1e-12),
              chk(prefix + "ci_low", float(r["lcb"]), 5e-4 + 1e-12), chk(prefix + "ci_high", float(r["ucb"]), 5e-4 + 1e-12)]
    p = float(r["p_value"])
    if float(r["value"]) > 0 and p > 0:
        # irrCAC prints 4 significant digits, and its p is 2(1 - F_t(c/SE)),
        # whose 1 - F loses everything below one unit in the last place of
        # 1 (2.2e-16, twice that two-sided): p-values under 1e-13 are
        # irrCAC's to 4.5e-16 absolute, not to 4 digits.
        checks.append(chk(prefix + "p_value", p, 4.5e-16, 5e-4))
    add(IR, "%s %s %s" % (r["input"], r["coefficient"], r["weights"]), "irrCAC 1.0 R/agree.coeff2.r, agree.coeff3.dist.r on inst/extdata/" + r["input"][7:],
        {"kind": kind, "file": r["input"]}, {"weights": [r["weights"]]}, checks)

raw_path = {"Percent Agreement": "percent_agreement", "Fleiss' Kappa": "fleiss_kappa", "Conger's Kappa": "conger_kappa",
            "AC1": "gwet_ac1", "AC2": "gwet_ac2", "Brennan-Prediger": "brennan_prediger", "Krippendorff's Alpha": "krippendorff_alpha"}
ratings = {}
for r in read("gwet_irrcac_ratings.csv"):
    ratings.setdefault(r["dataset"], []).append(r)
for r in read("gwet_irrcac_reference.csv"):
    ds = r["dataset"]
    if ds not in ratings:
        continue  # the Fleiss (1971) rows: statsmodels' case above
    if r["value"] == "":
        continue  # no number (ratio weights on cac.raw5obser's 0 ratings)
    extra = []
    if ds == "cac.raw2raters":
        # its two blank cells were read as a label by the reference (see
        # blanksAsCategory in irrcac_test.go)
        extra = [["9", "rater2", "(blank)"], ["11", "rater1", "(blank)"]]
    w = r["weights"]
    coef = raw_path[r["coefficient"]]
    if w == "unweighted":
        path = coef + (".nominal." if coef == "krippendorff_alpha" else ".")
        opts = {"level": "nominal"}
    else:
        path = "weighted.%s.%s." % (w, "gwet_ac2" if coef == "gwet_ac2" else coef)
        opts = {"level": "ordinal", "weights": [w]}
    checks = [chk(path + "value", float(r["value"]), 5e-6 + 1e-12), chk(path + "pa", float(r["pa"]), 1e-9), chk(path + "pe", float(r["pe"]), 1e-9)]
    if r["se"] not in ("", "NA", "NaN"):
        checks.append(chk(path + "se", float(r["se"]), 5e-6 + 1e-12))
    add(IR, "%s %s %s" % (ds, r["coefficient"], w), "irrCAC 1.4 R/agree.coeff3.raw.r on Gwet's textbook table " + ds,
        {"kind": "labels", "file": "gwet_irrcac_ratings.csv", "dataset": ds, "labels": extra}, opts, checks)

# ---------------------------------------------------------------- crowd-kit
# crowd-kit 1.4.1's aggregation tests (its source release at CROWDKIT:
# tests/aggregation/*.py and tests/conftest.py; Apache-2.0). The fixtures
# (answers, gold, ground truth, expected labels, probabilities, skills)
# are read by calling crowd-kit's own fixture functions; without CROWDKIT
# the crowd-kit cases are left out (the script says so on stderr).
CK = "crowd-kit"
ckdir = os.environ.get("CROWDKIT")
if ckdir:
    import importlib.util
    import inspect
    sys.path.insert(0, ckdir)
    fixtures = {}
    for f in ["tests/conftest.py"] + ["tests/aggregation/%s.py" % m for m in ["data_gold_mv", "data_mmsr", "data_mv", "data_wawa", "data_zbs"]]:
        spec = importlib.util.spec_from_file_location("ck_" + os.path.basename(f)[:-3], os.path.join(ckdir, f))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name, obj in vars(mod).items():
            fn = getattr(obj, "__pytest_wrapped__", None)
            if fn is not None:
                fixtures[name] = fn.obj
    memo = {}

    def fx(name):
        if name not in memo:
            fn = fixtures[name]
            memo[name] = fn(*[fx(a) for a in inspect.signature(fn).parameters])
        return memo[name]

    def ck_labels(df):
        return [[str(r["task"]), str(r["worker"]), r["label"] if isinstance(r["label"], str) else bool(r["label"])] for _, r in df.iterrows()]

    files = {"toy": "crowdkit_toy.csv", "simple": "crowdkit_simple.csv"}
    for ds, path in files.items():
        with open(os.path.join(TESTDATA, path)) as f:
            rows = [[r["item_id"], r["rater_id"], r["label"]] for r in csv.DictReader(f)]
        # in crowd-kit's data order: --random-start crowdkit draws KOS's
        # start per label in the file's order, M-MSR's per rater in order
        # of first label
        if rows != ck_labels(fx(ds + "_answers_df")):
            sys.exit("%s differs from crowd-kit's %s_answers_df (or is not in its order)" % (path, ds))

    def ck_input(ds, gold=False):
        inp = {"kind": "labels", "file": files[ds]}
        if gold:
            g = fx(ds + "_gold_df")
            inp["gold"] = {str(k): v for k, v in g.items()}
        return inp

    def label_checks(agg, series):
        return [{"path": "aggregators.%s.items.%s.label" % (agg, k), "want_label": str(v)} for k, v in series.items()]

    def prob_checks(agg, df):
        # pandas' assert_frame_equal(rtol=1e-5): |a - b| <= 1e-8 + 1e-5 |b|;
        # concord's probs are in sorted class order.
        out = []
        cols = sorted(df.columns)
        for task, row in df.iterrows():
            for k, c in enumerate(cols):
                out.append(chk("aggregators.%s.items.%s.probs.%d" % (agg, task, k), row[c], 1e-8, 1e-5))
        return out

    def skill_checks(agg, series, field="skill"):
        return [chk("aggregators.%s.raters.%s.%s" % (agg, k, field), v, 1e-8, 1e-5) for k, v in series.items()]

    CKF = "tests/aggregation/test_classification_aggregation.py:41 (test_fit_predict_classification_aggregations_methods)"
    # MMSR on toy has several fixed points: which one a run finds depends on
    # its random start, numpy's RandomState(0) uniforms (scipy's
    # uniform.rvs(random_state=0)); a crowd-kit user leaves random_state
    # at 0, and concord's --random-start crowdkit (seed 0 by default)
    # draws the same start. KOS likewise (np.random.seed(0); normal(1, 1)).
    names = {"mv": "majority", "mmsr": "mmsr", "wawa": "wawa", "gold": "gold_majority", "zbs": "zero_based_skill"}
    for res, agg in names.items():
        for ds in ["toy", "simple"]:
            gold = res == "gold"
            opts = {"level": "nominal", "only": "aggregators", "ties": "first", "random_start": "crowdkit"}
            skills = fx("%s_skills_result_%s" % (ds, res))
            field = "accuracy" if res == "mv" else "skill"
            add(CK, "%s labels on %s" % (agg, ds), CKF, ck_input(ds, gold), opts,
                label_checks(agg, fx("%s_labels_result_%s" % (ds, res))) + skill_checks(agg, skills, field))
            kind = "scores" if res == "mmsr" else "probas"
            add(CK, "%s %s on %s" % (agg, kind, ds), CKF, ck_input(ds, gold), opts,
                prob_checks(agg, fx("%s_%s_result_%s" % (ds, kind, res))) + skill_checks(agg, skills, field))

    DSF = "tests/aggregation/test_ds_aggregation.py"
    for line, test, agg, ds, gold in [(341, "test_aggregate_ds_gold_on_toy_ysda", "dawid_skene", "toy", True),
                                      (381, "test_aggregate_ds_on_toy_ysda", "dawid_skene", "toy", False),
                                      (395, "test_aggregate_hds_on_toy_ysda", "one_coin", "toy", False),
                                      (409, "test_aggregate_ds_on_simple", "dawid_skene", "simple", False),
                                      (423, "test_aggregate_hds_on_simple", "one_coin", "simple", False)]:
        truth = fx("toy_ground_truth_df" if ds == "toy" else "simple_ground_truth")
        for n_iter, tol in [(10, 0), (100500, 1e-5)]:
            opts = {"level": "nominal", "only": "aggregators", "ties": "first", "random_start": "crowdkit", "ds_iter": n_iter, "ds_tol": tol, "ds_gold": gold}
            add(CK, "%s[n_iter=%d, tol=%g]" % (test, n_iter, tol), "%s:%d" % (DSF, line), ck_input(ds, gold), opts, label_checks(agg, truth))
    g = fx("toy_gold_df")
    for n_iter in [0, 1, 2]:
        if n_iter == 0:
            add(CK, "test_ds_gold_probas_correction_with_iters[n_iter=0]", "%s:356" % DSF,
                not_expressible="n_iter=0 (no EM step: the majority-vote start with the gold items fixed); concord's --ds-iter 0 means the default 500")
            continue
        opts = {"level": "nominal", "only": "aggregators", "ties": "first", "random_start": "crowdkit", "ds_iter": n_iter, "ds_gold": True}
        cats = sorted(set(fx("toy_answers_df")["label"]))
        checks = label_checks("dawid_skene", g)
        for k, v in g.items():
            checks.append(chk("aggregators.dawid_skene.items.%s.probs.%d" % (k, cats.index(v)), 1.0, 1e-8))
        add(CK, "test_ds_gold_probas_correction_with_iters[n_iter=%d]" % n_iter, "%s:356" % DSF, ck_input("toy", True), opts, checks)

    GF = "tests/aggregation/test_glad_aggregation.py"
    for line, ds in [(19, "toy"), (36, "simple")]:
        truth = fx("toy_ground_truth_df" if ds == "toy" else "simple_ground_truth")
        for n_iter, tol in [(100, 0), (100500, 1e-5)]:
            add(CK, "test_aggregate_glad_on_%s[n_iter=%d, tol=%g]" % (ds, n_iter, tol), "%s:%d" % (GF, line), ck_input(ds),
                {"level": "nominal", "only": "aggregators", "random_start": "crowdkit", "glad_iter": n_iter, "glad_tol": tol}, label_checks("glad", truth))
    MF = "tests/aggregation/test_mace_aggregation.py"
    for line, ds in [(17, "toy"), (31, "simple")]:
        truth = fx("toy_ground_truth_df" if ds == "toy" else "simple_ground_truth")
        for method in ["vb", "em"]:
            if ds == "simple" and method == "em":
                add(CK, "test_aggregate_mace_on_simple[em]", "%s:%d" % (MF, line),
                    not_expressible="the test asserts crowd-kit's EM accuracy on simple is below 1 (a property of its random start, not a number)")
                continue
            add(CK, "test_aggregate_mace_on_%s[%s]" % (ds, method), "%s:%d" % (MF, line), ck_input(ds),
                {"level": "nominal", "only": "aggregators", "random_start": "crowdkit", "mace_iter": 5, "mace_restarts": -1, "mace_em": method == "em"}, label_checks("mace", truth))
    # Boolean labels (crowd-kit's data_with_bool_labels, written out as
    # True/False in crowdkit_bool.csv): KOS, DS and one-coin DS.
    truth = {str(k): str(v) for k, v in fx("bool_labels_ground_truth").items()}
    with open(os.path.join(TESTDATA, "crowdkit_bool.csv")) as f:
        rows = [[r["item_id"], r["rater_id"], r["label"]] for r in csv.DictReader(f)]
    if rows != [[str(r["task"]), str(r["worker"]), str(r["label"])] for _, r in fx("data_with_bool_labels").iterrows()]:
        sys.exit("crowdkit_bool.csv differs from crowd-kit's data_with_bool_labels (or is not in its order)")
    bool_in = {"kind": "labels", "file": "crowdkit_bool.csv"}
    for n_iter in [10, 100]:
        add(CK, "test_aggregate_kos_on_data_with_bool_labels[n_iter=%d]" % n_iter, "tests/aggregation/test_kos_aggregation.py:17", bool_in,
            {"level": "nominal", "only": "aggregators", "ties": "first", "random_start": "crowdkit"}, label_checks("kos", truth))
    for line, test, agg in [(659, "test_ds_on_bool_labels", "dawid_skene"), (667, "test_hds_on_bool_labels", "one_coin")]:
        add(CK, test, "%s:%d" % (DSF, line), bool_in, {"level": "nominal", "only": "aggregators", "ties": "first", "random_start": "crowdkit", "ds_iter": 20}, label_checks(agg, truth))

    # test_dawid_skene_overlap: 3 items, each rater says no on one of them
    # and yes on the other two; DawidSkene(20) must keep every item at 1/3
    # no, 2/3 yes (a random start finds spurious optima there; concord's
    # default majority start is crowd-kit's). The data are generated by
    # the Go test from "overlap" (crowd-kit's list comprehension); crowd-kit
    # itself is run on them here.
    import pandas as pd
    from crowdkit.aggregation import DawidSkene
    for overlap in [3, 300, 30000]:
        data = pd.DataFrame([{"task": t, "worker": p, "label": "yes" if (p - t) % 3 else "no"} for p in range(overlap) for t in range(3)])
        ds = DawidSkene(20).fit(data)
        checks = []
        for t in range(3):
            for k, c in enumerate(["no", "yes"]):
                want = [1 / 3.0, 2 / 3][k]
                if abs(ds.probas_.loc[t, c] - want) > 0.005:
                    sys.exit("crowd-kit's DawidSkene on overlap %d: %s" % (overlap, ds.probas_))
                checks.append(chk("aggregators.dawid_skene.items.%d.probs.%d" % (t, k), want, 0.005, 1e-5))
            checks.append({"path": "aggregators.dawid_skene.items.%d.label" % t, "want_label": "yes"})
        for k, want in enumerate([1 / 3, 2 / 3]):
            checks.append(chk("aggregators.dawid_skene.priors.%d" % k, want, 0.005, 1e-5))
        add(CK, "test_dawid_skene_overlap[%d]" % overlap, "%s:627" % DSF, {"kind": "labels", "overlap": overlap},
            {"level": "nominal", "only": "aggregators", "ties": "first", "random_start": "crowdkit", "ds_iter": 20}, checks)
    MVF = "tests/aggregation/test_majority_vote.py"
    for line, test in [(20, "test_majority_vote_with_skills"), (30, "test_majority_vote_with_missing_skills_value"),
                       (47, "test_majority_vote_with_missing_skills_error"), (59, "test_majority_vote_with_missing_skills_ignore"),
                       (71, "test_majority_vote_with_missing_skills_ignore_all")]:
        add(CK, test, "%s:%d" % (MVF, line),
            not_expressible="majority vote weighted by skills the user gives (fit_predict(skills=...)) and what it does with raters missing from them: concord's weighted votes learn their weights (Wawa, Zero-Based Skill, gold majority vote)")
    add(CK, "test_gold_mv_multiple_gt", "%s:123" % MVF,
        not_expressible="two true labels for one task: concord's gold is one class per item (the items file's gold column)")
    EDF = "tests/aggregation/test_classification_aggregation_edge_cases.py"
    for agg in ["MMSR", "ZeroBasedSkill", "DawidSkene", "GLAD"]:
        add(CK, "test_zero_iter[%s]" % agg, "%s:223" % EDF,
            not_expressible="n_iter=0 (no iteration: the start itself); concord's 0 iterations mean the default, and the test asserts only that every task gets a label")
    add(CK, "test_gold_mv_empty", "%s:214" % EDF,
        not_expressible="no labels at all: crowd-kit returns empty results, concord refuses the input with an error naming it")
    add(CK, "test_dawid_skene_on_empty_input", "%s:612" % DSF,
        not_expressible="no labels at all: crowd-kit returns empty results, concord refuses the input with an error naming it")
    add(CK, "test_thetas_on_simple", "tests/aggregation/test_mace_aggregation.py:63",
        not_expressible="MACE's thetas after 5 VB iterations from crowd-kit's random start (random_state=0, numpy draws that --random-start crowdkit does not cover: it covers M-MSR and KOS); concord's MACE has its own seeded start")
else:
    print("CROWDKIT not set: the crowd-kit cases are left out", file=sys.stderr)

out = sys.stdout
out.write("[\n")
for k, c in enumerate(cases):
    out.write(json.dumps(c, sort_keys=True) + (",\n" if k < len(cases) - 1 else "\n"))
out.write("]\n")
