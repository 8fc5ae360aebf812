"""The two-rater tables of statsmodels' own test suite
(statsmodels/stats/tests/test_inter_rater.py) that make_reference_statsmodels.py
and make_reference_statsmodels_weights.py both use: SAS's table10 and irr's
anxiety ratings (20 subjects x 3 raters) crossed for raters 2 and 3.
"""
import numpy as np

table10 = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]

anxiety = np.array([
    3, 3, 3, 4, 5, 5, 2, 3, 5, 2, 2, 6, 1, 5, 2, 2, 1, 2, 4, 3, 3, 6, 4,
    6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4, 2, 1, 4, 4, 3, 2,
    1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2
]).reshape(20, 3, order='F')
anxiety23 = np.histogramdd(anxiety[:, 1:], ([1, 2, 3, 4, 6, 7], [1, 2, 3, 4, 6, 7]))[0]
