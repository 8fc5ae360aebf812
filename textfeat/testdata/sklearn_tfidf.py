#!/usr/bin/python3
"""Reference tf-idf / count / binary weights for textfeat's TestSklearnTFIDF.

Reads sklearn_input.json (written by `go test -run TestSklearnTFIDF -update`):
the terms textfeat's tokeniser produced for the 200 RTE-1 texts of
rte_texts.csv (+3 extra held-out texts), for two tokenisation settings.
scikit-learn is handed these terms through a callable analyzer, so only the
vocabulary (min_df, max_features), the weighting and the L2 normalisation are
compared. Fits on the first `train` documents, transforms the rest.

Run: /usr/bin/python3 sklearn_tfidf.py   (Debian python3-sklearn)
Writes sklearn_output.json.
"""
import json

import numpy as np
import sklearn
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.preprocessing import normalize

with open("sklearn_input.json") as f:
    inp = json.load(f)
ntrain = inp["train"]


def csr(m):
    m = m.tocsr()
    m.sort_indices()
    return {"indptr": m.indptr.tolist(), "indices": m.indices.tolist(),
            "data": [float(x) for x in m.data]}


def no_tie_limit(docs, min_df, limit):
    """Largest k <= limit whose cut of the term-frequency ranking has no tie
    (scikit-learn breaks ties at the cut arbitrarily)."""
    cv = CountVectorizer(analyzer=lambda d: d, min_df=min_df)
    x = cv.fit_transform(docs)
    tf = np.sort(np.asarray(x.sum(axis=0)).ravel())[::-1]
    k = limit
    while k > 1 and tf[k - 1] == tf[k]:
        k -= 1
    return k


configs = []
for name, tokset, weighting, min_df, max_features in [
    ("tfidf", "plain", "tfidf", 1, 0),
    ("tfidf_mindf2_maxfeatures", "plain", "tfidf", 2, 300),
    ("count_mindf2", "plain", "count", 2, 0),
    ("binary", "plain", "binary", 1, 0),
    ("tfidf_stem_bigrams_mindf2", "stem_bigrams", "tfidf", 2, 0),
]:
    docs = inp["token_sets"][tokset]
    train, test = docs[:ntrain], docs[ntrain:]
    if max_features:
        max_features = no_tie_limit(train, min_df, max_features)
    kw = dict(analyzer=lambda d: d, min_df=min_df, max_features=max_features or None)
    if weighting == "tfidf":
        vec = TfidfVectorizer(smooth_idf=True, norm="l2", **kw)
        xtr, xte = vec.fit_transform(train), vec.transform(test)
        idf = vec.idf_.tolist()
    else:
        vec = CountVectorizer(binary=(weighting == "binary"), **kw)
        xtr = normalize(vec.fit_transform(train).astype(np.float64), norm="l2")
        xte = normalize(vec.transform(test).astype(np.float64), norm="l2")
        idf = []
    configs.append({
        "name": name, "token_set": tokset, "weighting": weighting,
        "min_df": min_df, "max_features": max_features,
        "vocabulary": vec.get_feature_names_out().tolist(), "idf": idf,
        "train": csr(xtr), "test": csr(xte),
    })

with open("sklearn_output.json", "w") as f:
    json.dump({"sklearn": sklearn.__version__, "configs": configs}, f, separators=(",", ":"))
    f.write("\n")
print("scikit-learn", sklearn.__version__, [(c["name"], len(c["vocabulary"])) for c in configs])
