#!/usr/bin/python3
"""Real crowd datasets with gold labels that are not in ../shared/data, in the crowd benchmark's layout.

    git --git-dir=<mirror of github.com/yuan-li/truth-inference-at-scale> archive 621789b data | tar x -C /tmp/c29src
    /usr/bin/python3 docs/scripts/crowd/heldout_convert.py --src /tmp/c29src/data --out /tmp/crowdreal

(git archive stops at data/crowdscale2013/sentiment/label.csv, whose blob the mirror lacks: extract the other
files one by one with git show, as README.md says; that set is not used.)

Source: github.com/yuan-li/truth-inference-at-scale at commit 621789b (Li, Rubinstein and Cohn, "Exploiting worker
correlation for label aggregation in crowdsourcing", ICML 2019), folder data/: one label.csv (item, worker, label;
0-based integer codes, one row per label, repeated labels as extra rows) and one truth.csv (item, truth) per set,
collected there from the sets' original publications. Licence: the repository is MIT-licensed (Copyright (c) 2019
Yuan Li); the data are the original authors' public research releases (cited per set below), redistributed there.
Nothing of them is committed to concord: this script writes them under --out, and only the results table is kept
(README.md).

For each set it writes DIR/<name>/ratings.csv (item_id, rater_id, label; every row kept, in the file's order) and
DIR/<name>/items.csv (item_id, gold; every item with a label or a gold label, gold empty where unknown), plus a
README.md with the source. Item and rater ids are the source's integers prefixed with "i" and "w"; labels stay the
source's integer codes (0-based).
"""
import argparse
import csv
import os

# name in the benchmark -> (folder under data/, what it is, original source)
SETS = {
    "trec2010_relevance": (
        "SpectralMethodsMeetEM/trec",
        "binary relevance of web pages to TREC topics (19,033 topic-document pairs, 762 raters, 88,385 labels, "
        "gold on 2,275)",
        "TREC 2010 Relevance Feedback track, crowdsourcing (Buckley, Lease and Smucker 2010), as used by Zhang, "
        "Chen, Zhou and Jordan, 'Spectral methods meet EM', NIPS 2014",
    ),
    "trec2011_relevance4": (
        "crowd_truth_inference/s4_Relevance",
        "graded relevance (4 grades) of documents to TREC topics (20,232 pairs, 766 raters, 98,453 labels with "
        "repeats, gold on 4,460)",
        "TREC 2011 Crowdsourcing track (Lease and Kazai 2011), as collected by Zheng, Li, Li, Shan and Cheng, "
        "'Truth inference in crowdsourcing: is the problem solved?', VLDB 2017",
    ),
    "zhou2012_web_relevance5": (
        "SpectralMethodsMeetEM/web",
        "5-grade web search relevance (2,665 query-URL pairs, 177 raters, 15,567 labels, gold on 2,653)",
        "Zhou, Basu, Mao and Platt, 'Learning from the wisdom of crowds by minimax entropy', NIPS 2012",
    ),
    "rodrigues_sentiment_polarity": (
        "active-crowd-toolkit/SP",
        "binary sentiment of movie-review sentences (4,999 sentences, 203 raters, 27,746 labels)",
        "Rodrigues, Pereira and Ribeiro, 'Learning from multiple annotators: distinguishing good from random "
        "labelers', Pattern Recognition Letters 2013 (MTurk sentiment polarity), via the active-crowd-toolkit",
    ),
    "sentiment_polarity_amt": (
        "active-crowd-toolkit/SP_amt",
        "binary sentiment of movie-review sentences (500 sentences, 143 raters, 10,000 labels, 20 per item)",
        "the sentiment polarity task relabelled on MTurk with 20 labels per item, via the active-crowd-toolkit "
        "(Venanzi et al.)",
    ),
    "zheng2017_sentiment": (
        "crowd_truth_inference/d_sentiment",
        "binary sentiment of tweets/reviews (1,000 items, 85 raters, 20,000 labels, 20 per item)",
        "Zheng et al., VLDB 2017 (d_sentiment, collected on MTurk for that study)",
    ),
    "cf_weather_sentiment5": (
        "active-crowd-toolkit/CF",
        "5-class weather sentiment of tweets (300 tweets, 461 raters, 1,720 labels)",
        "CrowdFlower 'weather sentiment' (Data for Everyone), as used by Venanzi et al., 'Community-based Bayesian "
        "aggregation models for crowdsourcing', WWW 2014",
    ),
    "cf_weather_sentiment5_amt": (
        "active-crowd-toolkit/CF_amt",
        "5-class weather sentiment of tweets relabelled on MTurk (300 tweets, 110 raters, 6,030 labels, 5 repeats)",
        "the weather sentiment task relabelled on MTurk by Venanzi et al. (active-crowd-toolkit)",
    ),
    "rodrigues_music_genre10": (
        "active-crowd-toolkit/MS",
        "10-class music genre of 30-second song clips (700 songs, 44 raters, 2,945 labels)",
        "Rodrigues, Pereira and Ribeiro, 'Gaussian process classification and active learning with multiple "
        "annotators', ICML 2014 (MTurk music genre)",
    ),
    "zencrowd_entity_linking": (
        "active-crowd-toolkit/ZenCrowd_all",
        "binary entity linking: is this URI the entity mentioned? (2,040 links, 78 raters, 21,855 labels with "
        "1,730 repeats; many spammers)",
        "Demartini, Difallah and Cudre-Mauroux, 'ZenCrowd', WWW 2012 (both worker pools, India and US)",
    ),
    "zencrowd_in": (
        "active-crowd-toolkit/ZenCrowd_in",
        "ZenCrowd's entity linking, the India worker pool (2,040 links, 25 raters, 11,205 labels with 710 repeats)",
        "Demartini, Difallah and Cudre-Mauroux, 'ZenCrowd', WWW 2012",
    ),
    "zencrowd_us": (
        "active-crowd-toolkit/ZenCrowd_us",
        "ZenCrowd's entity linking, the US worker pool (2,040 links, 74 raters, 12,190 labels with 1,035 repeats)",
        "Demartini, Difallah and Cudre-Mauroux, 'ZenCrowd', WWW 2012",
    ),
}


def read_rows(path):
    with open(path, newline="") as f:
        rd = csv.reader(f)
        head = next(rd)
        if head[0].strip() != "item":
            raise SystemExit(f"{path}: header {head}, expected item,...")
        return [r for r in rd if r]


def convert(src, out, name):
    folder, what, source = SETS[name]
    labels = read_rows(os.path.join(src, folder, "label.csv"))
    truth = read_rows(os.path.join(src, folder, "truth.csv"))
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    items = []
    seen = set()
    with open(os.path.join(d, "ratings.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["item_id", "rater_id", "label"])
        for i, (item, worker, label) in enumerate(labels, start=2):
            for v, col in ((item, "item"), (worker, "worker"), (label, "label")):
                if not v.strip().isdigit():
                    raise SystemExit(f"{folder}/label.csv line {i}: {col} {v!r} is not a non-negative integer")
            w.writerow(["i" + item.strip(), "w" + worker.strip(), label.strip()])
            if item not in seen:
                seen.add(item)
                items.append(item)
    gold = {}
    for i, (item, g) in enumerate(truth, start=2):
        if not g.strip().isdigit():
            raise SystemExit(f"{folder}/truth.csv line {i}: truth {g!r} is not a non-negative integer")
        gold[item.strip()] = g.strip()
    for item in gold:
        if item not in seen:
            seen.add(item)
            items.append(item)
    with open(os.path.join(d, "items.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["item_id", "gold"])
        for item in items:
            w.writerow(["i" + item, gold.get(item, "")])
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write(f"# {name}\n\n{what}.\n\nSource: {source}.\nCopied from github.com/yuan-li/truth-inference-at-scale "
                f"(commit 621789b, MIT), data/{folder}, by concord's docs/scripts/crowd/heldout_convert.py.\n")
    print(f"{name}\t{len(items)} items\t{len(labels)} labels\t{len(gold)} gold")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="the data/ folder of truth-inference-at-scale")
    ap.add_argument("--out", required=True, help="folder to write the datasets to (one subfolder each)")
    ap.add_argument("--only", default="", help="comma-separated names (default: all)")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(SETS)
    for n in names:
        if n not in SETS:
            raise SystemExit(f"unknown set {n!r}; known: {', '.join(SETS)}")
        convert(args.src, args.out, n)


if __name__ == "__main__":
    main()
