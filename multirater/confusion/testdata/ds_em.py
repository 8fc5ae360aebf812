#!/usr/bin/python3
"""Independent Dawid-Skene EM (maximum likelihood, Dawid & Skene 1979) in
numpy, for TestDawidSkene: it reads ds_labels.csv (item,rater,label; 0-based
indices; a repeated row is one more observation), starts the class
probabilities at each item's label shares softened by half a label per class,
alternates the M-step (pi_l[k, j] = expected counts / row total, rho = mean
class probabilities) and the E-step until no class probability moves by more
than 1e-12, and writes ds_expected.json: the final confusion matrices
(M-step at the final class probabilities), class proportions and item class
probabilities.

    /usr/bin/python3 ds_em.py   (from this folder; numpy)
"""
import json
import numpy as np

rows = np.loadtxt("ds_labels.csv", delimiter=",", skiprows=1, dtype=int)
items, raters, labels = rows[:, 0], rows[:, 1], rows[:, 2]
N, L, K = items.max() + 1, raters.max() + 1, labels.max() + 1

q = np.full((N, K), 0.5)
for n, y in zip(items, labels):
    q[n, y] += 1
q /= q.sum(axis=1, keepdims=True)


def m_step(q):
    counts = np.zeros((L, K, K))
    for n, l, y in zip(items, raters, labels):
        counts[l, :, y] += q[n]
    pi = counts / counts.sum(axis=2, keepdims=True)
    rho = q.mean(axis=0)
    return pi, rho


for it in range(100000):
    pi, rho = m_step(q)
    logq = np.tile(np.log(rho), (N, 1))
    for n, l, y in zip(items, raters, labels):
        logq[n] += np.log(np.maximum(pi[l, :, y], 1e-300))
    logq -= logq.max(axis=1, keepdims=True)
    new = np.exp(logq)
    new /= new.sum(axis=1, keepdims=True)
    change = np.abs(new - q).max()
    q = new
    if change < 1e-12:
        break
pi, rho = m_step(q)
json.dump({"iterations": it + 1, "pi": pi.tolist(), "rho": rho.tolist(), "q": q.tolist()},
          open("ds_expected.json", "w"), indent=1)
print("iterations", it + 1)
