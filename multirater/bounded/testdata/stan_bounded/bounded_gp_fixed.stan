// Bounded-response GP regression at FIXED hyperparameters (Jensen, Nielsen &
// Larsen 2013, "Bounded Gaussian process regression"), one observation per item:
//   f ~ N(0, C + jitter I)                          (C given as data)
//   lik == 1, beta:  y_n ~ Beta(nu Phi(f_n), nu (1 - Phi(f_n)))
//   lik == 2, truncated Gaussian with mode Phi(f_n) on [0, 1] (Jensen eq. 1):
//     p(y_n | f_n) = nu phi(nu (y_n - m)) / (Phi(nu (1 - m)) - Phi(nu (0 - m))),
//     m = Phi(f_n), i.e. N(m, 1/nu^2) truncated to [0, 1].
// Nothing is learnt: the only parameters are the latent values.
//
// f is non-centred: f = chol(C + jitter I) z, z ~ N(0, I).
//
// Predictive quantities for Nt new items with cross-covariances Ks (Nt x N):
// conditional on f, f* ~ N(Ks C^-1 f, k** - diag(Ks C^-1 Ks')), and with
// f = LC z, Ks C^-1 f = (LC^-1 Ks')' z. mu_star is that conditional mean per
// draw; the driver (reference.R) computes the constant conditional variance
// and integrates over f* | f by Gauss-Hermite quadrature.
//
// Stan 2.21 syntax (Debian r-cran-rstan 2.21): old array declarations.
data {
  int<lower=1> N;                       // training items
  int<lower=1, upper=2> lik;            // 1 beta, 2 truncated Gaussian
  real<lower=0> nu;                     // precision (beta) or 1/sd (truncated Gaussian)
  vector<lower=0, upper=1>[N] y;        // responses, strictly inside (0, 1)
  matrix[N, N] C;                       // prior covariance of f
  real<lower=0> jitter;                 // added to diag(C) before Cholesky
  int<lower=0> Nt;                      // new items
  matrix[Nt, N] Ks;                     // their cross-covariances with the training items
}
transformed data {
  matrix[N, N] LC = cholesky_decompose(C + diag_matrix(rep_vector(jitter, N)));
  matrix[N, Nt] A;
  if (Nt > 0)
    A = mdivide_left_tri_low(LC, Ks');
}
parameters {
  vector[N] z;
}
model {
  vector[N] f = LC * z;
  z ~ std_normal();
  if (lik == 1) {
    // 1 - Phi(f) written as Phi(-f): no cancellation for large f.
    for (n in 1:N)
      target += beta_lpdf(y[n] | nu * Phi(f[n]), nu * Phi(-f[n]));
  } else {
    for (n in 1:N) {
      real m = Phi(f[n]);
      // normaliser Phi(nu (1 - m)) - Phi(-nu m) >= Phi(nu/2) - Phi(-nu/2) > 0.38
      target += normal_lpdf(y[n] | m, 1 / nu)
                - log(Phi(nu * (1 - m)) - Phi(-nu * m));
    }
  }
}
generated quantities {
  vector[N] f = LC * z;
  vector[Nt] mu_star;
  if (Nt > 0)
    mu_star = A' * z;
}
