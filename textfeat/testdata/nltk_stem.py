#!/usr/bin/python3
"""Reference Porter2 stems for textfeat's TestNLTKStem.

Reads nltk_words.txt (written by `go test -run TestNLTKStem -update`: the
distinct Latin-script tokens of rte_texts.csv plus Porter2's special cases),
stems each with NLTK's SnowballStemmer("english") (ignore_stopwords=False) and
writes word<TAB>stem lines to nltk_stems.tsv.

Run: /usr/bin/python3 nltk_stem.py   (Debian python3-nltk)
"""
import nltk
from nltk.stem.snowball import SnowballStemmer

stem = SnowballStemmer("english").stem
with open("nltk_words.txt", encoding="utf-8") as f:
    words = [w for w in f.read().split("\n") if w]
with open("nltk_stems.tsv", "w", encoding="utf-8") as f:
    for w in words:
        f.write(f"{w}\t{stem(w)}\n")
print("nltk", nltk.__version__, len(words), "words")
