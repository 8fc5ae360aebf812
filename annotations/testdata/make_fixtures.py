#!/usr/bin/python3
"""Write the label-file fixtures of annotations/testdata from ../shared/data.

Run by hand from annotations/testdata with Debian's python3 (the workbook
needs python3-openpyxl, an XLSX writer independent of the excelize code under
test):

    /usr/bin/python3 make_fixtures.py /path/to/shared/data

The tests read only the files this writes; they never need this script or the
shared data. Every value is copied from the source datasets (see README.md);
nothing is simulated.
"""
import csv
import json
import os
import sys

DATA = sys.argv[1] if len(sys.argv) > 1 else "../../../shared/data"


def rows(name, file="ratings.csv"):
    with open(os.path.join(DATA, name, file), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def first_items(rs, n, key="item_id"):
    keep, out = [], []
    for r in rs:
        if r[key] not in keep:
            if len(keep) == n:
                continue
            keep.append(r[key])
        out.append(r)
    return keep, out


def write_csv(path, header, records, delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=delimiter, lineterminator="\n")
        w.writerow(header)
        w.writerows(records)


# --- Snow et al. 2008 RTE: long CSV + items file --------------------------
rte = rows("snow2008_rte")
rte_items = {r["item_id"]: r for r in rows("snow2008_rte", "items.csv")}
rte_ids, rte_first = first_items(rte, 6)
write_csv("rte_long.csv", ["item_id", "rater_id", "label"],
          [[r["item_id"], r["rater_id"], r["label"]] for r in rte_first])
write_csv("rte_items.csv", ["item_id", "gold", "rte1_value", "rte1_task", "text", "hypothesis"],
          [[rte_items[i][k] for k in ["item_id", "gold", "rte1_value", "rte1_task", "text", "hypothesis"]]
           for i in rte_ids])

# --- sirt writing ratings set 1: TSV long form with a criterion column -----
sirt = rows("sirt_writing_ratings1")
sirt_ids, sirt_first = first_items(sirt, 12)
write_csv("sirt_ratings.tsv", ["item_id", "rater_id", "label", "criterion"],
          [[r["item_id"], r["rater_id"], r["label"], r["criterion"]] for r in sirt_first], delimiter="\t")

# ... and criterion k1 in wide form (incomplete design: empty cells).
k1 = [r for r in sirt if r["criterion"] == "k1"]
k1_ids, k1_first = first_items(k1, 20)
raters = []
for r in k1_first:
    if r["rater_id"] not in raters:
        raters.append(r["rater_id"])
cell = {(r["item_id"], r["rater_id"]): r["label"] for r in k1_first}
write_csv("sirt_k1_wide.csv", ["item_id"] + raters,
          [[i] + [cell.get((i, rr), "") for rr in raters] for i in k1_ids])

# --- Dawid & Skene 1979: crowd-kit column names, repeated ratings ----------
ds = rows("dawid_skene_1979_anaesthesia")
ds_ids, ds_first = first_items(ds, 10)
write_csv("dawid_skene_crowdkit.csv", ["task", "worker", "label", "occasion"],
          [[r["item_id"], r["rater_id"], r["label"], r["occasion"]] for r in ds_first])
# ... and occasion 1 of 15 patients as JSON Lines with numbers.
ds15_ids, ds15 = first_items(ds, 15)
with open("dawid_skene.jsonl", "w", encoding="utf-8") as f:
    for r in ds15:
        if r["occasion"] == "1":
            f.write(json.dumps({"item_id": int(r["item_id"]), "rater_id": int(r["rater_id"]),
                                "label": int(r["label"])}) + "\n")

# --- Fleiss 1971: item;annotator;value with semicolons, and wide form ------
fl = rows("fleiss_1971_psychiatric_diagnoses")
fl_ids, fl_first = first_items(fl, 10)
write_csv("fleiss_semicolon.csv", ["item", "annotator", "value"],
          [[r["item_id"], r["rater_id"], r["label"]] for r in fl_first], delimiter=";")
fl_cell = {(r["item_id"], r["rater_id"]): r["label"] for r in fl}
fl_all_ids, _ = first_items(fl, 30)
write_csv("fleiss_wide.csv", ["patient", "1", "2", "3", "4", "5", "6"],
          [[i] + [fl_cell[(i, str(k))] for k in range(1, 7)] for i in fl_all_ids])

# --- Snow et al. 2008 word similarity: JSON array with aliases -------------
ws = rows("snow2008_wordsim")
ws_ids, ws_first = first_items(ws, 5)
with open("wordsim.json", "w", encoding="utf-8") as f:
    recs = [{"item": r["item_id"], "worker": r["rater_id"], "score": int(r["label"])} for r in ws_first]
    f.write("[\n" + ",\n".join("  " + json.dumps(x) for x in recs) + "\n]\n")

# --- Label Studio JSON export (RTE, Choices control) ------------------------
# Structure as documented at labelstud.io/guide/task_format and /guide/export:
# tasks with id, data, annotations[] (completed_by = user id, was_cancelled,
# result[] of type "choices"), predictions. User ids are the numeric part of
# the source's worker ids (amt012 -> 12). Task 2 also has an annotation that
# its annotator cancelled (skipped), which the reader must ignore.
ls_ids, ls_first = first_items(rte, 4)
tasks = []
for n, i in enumerate(ls_ids):
    it = rte_items[i]
    anns = []
    for k, r in enumerate(x for x in ls_first if x["item_id"] == i):
        choice = "entailment" if r["label"] == "1" else "no entailment"
        anns.append({
            "id": 1000 + 10 * n + k,
            "completed_by": int(r["rater_id"][3:]),
            "result": [{
                "value": {"choices": [choice]},
                "id": "r%d_%d" % (n, k),
                "from_name": "entailment",
                "to_name": "text",
                "type": "choices",
                "origin": "manual",
            }],
            "was_cancelled": False,
            "ground_truth": False,
            "created_at": "2021-03-09T22:16:08.728353Z",
            "updated_at": "2021-03-09T22:16:08.728378Z",
            "lead_time": 4.288,
            "prediction": {},
            "result_count": 0,
            "task": int(i),
            "project": 3,
        })
    if n == 1:
        anns.append({"id": 1999, "completed_by": 999, "result": [], "was_cancelled": True,
                     "ground_truth": False, "task": int(i), "project": 3})
    tasks.append({
        "id": int(i),
        "annotations": anns,
        "file_upload": "rte1_test.json",
        "drafts": [],
        "predictions": [],
        "data": {"text": it["text"], "hypothesis": it["hypothesis"]},
        "meta": {},
        "created_at": "2021-03-09T21:52:49.513742Z",
        "updated_at": "2021-03-09T22:16:08.746926Z",
        "inner_id": n + 1,
        "total_annotations": len(anns),
        "cancelled_annotations": 1 if n == 1 else 0,
        "total_predictions": 0,
        "project": 3,
        "updated_by": None,
    })
with open("labelstudio_rte.json", "w", encoding="utf-8") as f:
    json.dump(tasks, f, indent=2, ensure_ascii=False)
    f.write("\n")

# --- Label Studio export with a Rating control (Dawid & Skene, occasion 1) --
# completed_by as the user object some exports carry ({id, email, ...}); the
# e-mail addresses are placeholders standing for the source's rater numbers.
tasks = []
for n, i in enumerate(ds_ids[:6]):
    anns = []
    for r in ds_first:
        if r["item_id"] != i or r["occasion"] != "1":
            continue
        anns.append({
            "id": 2000 + 10 * n + int(r["rater_id"]),
            "completed_by": {"id": int(r["rater_id"]), "first_name": "", "last_name": "",
                             "email": "anaesthetist%s@hospital.example" % r["rater_id"]},
            "result": [{"value": {"rating": int(r["label"])}, "id": "q%s_%s" % (i, r["rater_id"]),
                        "from_name": "fitness", "to_name": "form", "type": "rating", "origin": "manual"}],
            "was_cancelled": False,
            "ground_truth": False,
            "task": 100 + int(i),
        })
    tasks.append({"id": 100 + int(i), "data": {"item_id": "patient-%s" % i, "form": "/data/upload/3/form%s.png" % i},
                  "annotations": anns, "predictions": []})
with open("labelstudio_anaesthesia.json", "w", encoding="utf-8") as f:
    json.dump(tasks, f, indent=1)
    f.write("\n")

# --- doccano text-classification JSONL export (RTE) ------------------------
# doccano writes one record per document: {"id", "text", "label": [..]} (plus
# "Comments"), one file per annotator; these are three annotators' files
# concatenated, each record naming its annotator.
dc_ids, dc_first = first_items(rte, 5)
annotators = []
for r in dc_first:
    if r["rater_id"] not in annotators:
        annotators.append(r["rater_id"])
annotators = annotators[:3]
with open("doccano_rte.jsonl", "w", encoding="utf-8") as f:
    for a in annotators:
        for n, i in enumerate(dc_ids):
            lab = [x["label"] for x in dc_first if x["item_id"] == i and x["rater_id"] == a]
            rec = {"id": int(i), "text": rte_items[i]["text"],
                   "label": ["entailment" if l == "1" else "no_entailment" for l in lab],
                   "annotator": a, "Comments": []}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")

# ... and the doccano 1.x layout: every user's label ids in "annotations".
with open("doccano_v1_rte.jsonl", "w", encoding="utf-8") as f:
    for i in dc_ids[:3]:
        anns = [{"id": 100 * int(i) + k, "prob": 0.0, "label": 1 if x["label"] == "1" else 2,
                 "user": int(x["rater_id"][3:]), "document": int(i)}
                for k, x in enumerate(x for x in dc_first if x["item_id"] == i)]
        rec = {"id": int(i), "text": rte_items[i]["text"], "annotations": anns, "meta": {},
               "annotation_approver": None}
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")

# --- XLSX workbook written by openpyxl -----------------------------------
import openpyxl  # noqa: E402

wb = openpyxl.Workbook()
sh = wb.active
sh.title = "wordsim"
sh.append(["Item", "Worker", "Score"])
for r in ws_first:
    sh.append([r["item_id"], r["rater_id"], int(r["label"])])
sh2 = wb.create_sheet("fleiss_wide")
sh2.append(["patient"] + [str(k) for k in range(1, 7)])
for i in fl_ids:
    sh2.append([int(i)] + [int(fl_cell[(i, str(k))]) for k in range(1, 7)])
sh3 = wb.create_sheet("items")
sh3.append(["item_id", "gold", "amt_mean"])
ws_gold = {r["item_id"]: r["gold"] for r in rows("snow2008_wordsim", "items.csv")}
for i in ws_ids:
    vals = [int(r["label"]) for r in ws if r["item_id"] == i]
    sh3.append([i, ws_gold[i], sum(vals) / len(vals)])
wb.save("wordsim_fleiss.xlsx")
# Keep the workbook as the text of its parts (no binary in the repository);
# the tests zip them again in ORDER (readFixture in read_test.go).
import shutil, zipfile
shutil.rmtree("wordsim_fleiss.xlsx.d", ignore_errors=True)
with zipfile.ZipFile("wordsim_fleiss.xlsx") as z:
    z.extractall("wordsim_fleiss.xlsx.d")
    with open("wordsim_fleiss.xlsx.d/ORDER", "w") as f:
        f.write("\n".join(z.namelist()) + "\n")
os.remove("wordsim_fleiss.xlsx")
