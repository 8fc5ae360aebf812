#!/usr/bin/python3
"""Write the fixtures of real tool exports (issue 20) in annotations/testdata.

Run by hand from annotations/testdata with Debian's python3 (standard library
only):

    /usr/bin/python3 make_export_fixtures.py /path/to/shared/data

The Label Studio JSON-MIN and CSV exports are made from the JSON exports
already here (labelstudio_rte.json, labelstudio_anaesthesia.json) by the rules
of label-studio-converter's convert_to_json_min and convert_to_csv (one record
per non-cancelled annotation, newest first within a task; task data fields,
the task "id", one field per control named after its from_name holding the
choice itself for a single choice and the list of result values otherwise,
then annotator, annotation_id, created_at, updated_at, lead_time; the CSV
writes lists as JSON text and the annotator as text). The doccano export is
laid out as doccano ships it (one JSONL file per annotator, named after the
user, records without an annotator field), kept unzipped in
doccano_rte_export.zip.d/ (the tests zip the files named in ORDER). The
spreadsheet-style table has the natural headers of an essay-grading sheet.
Every value comes from the source datasets; nothing is simulated.
"""
import csv
import json
import os
import sys

DATA = sys.argv[1] if len(sys.argv) > 1 else "../../../shared/data"


def rows(name, file="ratings.csv"):
    with open(os.path.join(DATA, name, file), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def annotator(completed_by, int_id):
    if isinstance(completed_by, dict):
        return completed_by.get("email")
    if isinstance(completed_by, int) and int_id:
        return completed_by
    return str(completed_by)


def prettify(results):
    out = []
    for r in results:
        v = dict(r["value"])
        if r["type"] == "choices" and len(v["choices"]) == 1:
            out.append(v["choices"][0])
        else:
            out.append(v)
    single = results and results[0]["type"] == "choices" and len(out) == 1
    return out[0] if single else out


def flatten(tasks, int_id):
    records = []
    for task in tasks:
        anns = [a for a in task["annotations"] if not a.get("was_cancelled") and not a.get("skipped")]
        anns.sort(key=lambda a: a.get("created_at", 0), reverse=True)
        for a in anns:
            rec = dict(task["data"])
            rec["id"] = task["id"]
            outputs = {}
            for r in a["result"]:
                outputs.setdefault(r["from_name"], []).append(r)
            for name, res in outputs.items():
                rec[name] = prettify(res)
            rec["annotator"] = annotator(a.get("completed_by", {}), int_id)
            rec["annotation_id"] = a.get("id")
            rec["created_at"] = a.get("created_at")
            rec["updated_at"] = a.get("updated_at")
            rec["lead_time"] = a.get("lead_time")
            records.append(rec)
    return records


rte_tasks = json.load(open("labelstudio_rte.json", encoding="utf-8"))
ds_tasks = json.load(open("labelstudio_anaesthesia.json", encoding="utf-8"))

# --- Label Studio JSON-MIN: RTE (Choices) and anaesthesia (Rating) ---------
with open("labelstudio_rte_min.json", "w", encoding="utf-8") as f:
    json.dump(flatten(rte_tasks, True), f, indent=2, ensure_ascii=False)
    f.write("\n")
with open("labelstudio_anaesthesia_min.json", "w", encoding="utf-8") as f:
    json.dump(flatten(ds_tasks, True), f, indent=2, ensure_ascii=False)
    f.write("\n")

# --- Label Studio CSV: RTE ---------------------------------------------------
recs = flatten(rte_tasks, False)
cols = []
for r in recs:
    for k in r:
        if k not in cols:
            cols.append(k)
with open("labelstudio_rte.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(cols)
    for r in recs:
        w.writerow(["" if r.get(k) is None else (r[k] if isinstance(r[k], str) else json.dumps(r[k], ensure_ascii=False)) for k in cols])

# --- doccano export zip: one file per annotator, no annotator field --------
rte = rows("snow2008_rte")
texts = {r["item_id"]: r["text"] for r in rows("snow2008_rte", "items.csv")}
items = []
for r in rte:
    if r["item_id"] not in items:
        items.append(r["item_id"])
items = items[5:10]
users = ["amt004", "amt005", "amt006"]
os.makedirs("doccano_rte_export.zip.d", exist_ok=True)
for u in users:
    with open(os.path.join("doccano_rte_export.zip.d", u + ".jsonl"), "w", encoding="utf-8") as f:
        for n, i in enumerate(items):
            lab = [x["label"] for x in rte if x["item_id"] == i and x["rater_id"] == u]
            rec = {"id": 40 + n, "text": texts[i],
                   "label": ["entailment" if l == "1" else "no_entailment" for l in lab],
                   "Comments": []}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
with open(os.path.join("doccano_rte_export.zip.d", "ORDER"), "w") as f:
    f.write("\n".join(u + ".jsonl" for u in users) + "\n")

# --- an essay-grading sheet with natural headers ----------------------------
sirt = [r for r in rows("sirt_writing_ratings1") if r["criterion"] == "k1"]
keep = []
for r in sirt:
    if r["item_id"] not in keep and len(keep) < 12:
        keep.append(r["item_id"])
with open("essays_graders.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["Essay", "Grader", "Score"])
    for r in sirt:
        if r["item_id"] in keep:
            w.writerow([r["item_id"], r["rater_id"], r["label"]])
