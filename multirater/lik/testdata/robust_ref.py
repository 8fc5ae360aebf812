# Reference values for TestRobustProbitScipy (multirater/lik/robust_test.go):
# the tilted normaliser Z = int (eps + (1 - 2 eps) Phi(y f / s)) N(f | mu, s2) df
# by scipy.integrate.quad, and the label-error probability
# eps int (1 - Phi(y f / s)) N(f | mu, s2) df / Z.
# Run: python3 multirater/lik/testdata/robust_ref.py
import numpy as np
from scipy import integrate, stats

cases = [  # eps, s, y, mu, s2
    (0.0, 1.0, 1, 0.3, 0.5),
    (0.1, 1.0, 1, -2.0, 0.5),
    (0.1, 0.5, -1, 1.5, 2.0),
    (0.02, 2.0, 1, -6.0, 1.0),
    (0.3, 0.7, -1, -0.4, 0.1),
]
for eps, s, y, mu, s2 in cases:
    sd = np.sqrt(s2)
    lik = lambda f: eps + (1 - 2 * eps) * stats.norm.cdf(y * f / s)
    z, _ = integrate.quad(lambda f: lik(f) * stats.norm.pdf(f, mu, sd), mu - 15 * sd, mu + 15 * sd, epsabs=1e-14, epsrel=1e-12, limit=200)
    e, _ = integrate.quad(lambda f: eps * stats.norm.sf(y * f / s) * stats.norm.pdf(f, mu, sd), mu - 15 * sd, mu + 15 * sd, epsabs=1e-14, epsrel=1e-12, limit=200)
    print("{%g, %g, %d, %g, %g, %.15g, %.15g}," % (eps, s, y, mu, s2, z, e / z))
