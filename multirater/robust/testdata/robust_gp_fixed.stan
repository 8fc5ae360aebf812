// Kim & Ghahramani's label-noise-robust GP classifier at FIXED hyperparameters
// (the model of concord/multirater/robust with FixEpsilon and a fixed Noise):
//   f ~ N(0, C)                                          (C given as data)
//   p(y_i | f) = eps + (1 - 2 eps) Phi(y_i f_i / s),     y_i in {-1, +1}
// eps = 0 is the plain probit. Nothing is learnt: the only parameters are the
// latent values. Phi is used through normal_lcdf (log scale) and the mixture
// through log_sum_exp, so labels on the wrong side stay finite.
//
// f is non-centred: f = chol(C) z, z ~ N(0, I) (C already holds the 1e-8 jitter).
//
// Stan 2.21 syntax (Debian r-cran-rstan 2.21): old array declarations.
data {
  int<lower=1> N;
  int<lower=-1, upper=1> y[N];
  matrix[N, N] C;
  real<lower=0, upper=0.5> eps;
  real<lower=0> s;
}
transformed data {
  matrix[N, N] LC = cholesky_decompose(C);
  real leps = eps > 0 ? log(eps) : negative_infinity();
  real l1m2eps = log1m(2 * eps);
}
parameters {
  vector[N] z;
}
model {
  vector[N] f = LC * z;
  z ~ std_normal();
  for (i in 1:N) {
    real lphi = normal_lcdf(y[i] * f[i] / s | 0, 1);
    if (eps > 0)
      target += log_sum_exp(leps, l1m2eps + lphi);
    else
      target += lphi;
  }
}
generated quantities {
  vector[N] f = LC * z;
}
