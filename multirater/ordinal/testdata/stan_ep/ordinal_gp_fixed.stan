// Ordinal probit GP at FIXED hyperparameters (Chu & Ghahramani 2005, sec. 2,
// with one rater; with several raters, each rater's own thresholds and noise):
//   f ~ N(0, C)                                    (C given as data)
//   P(y_r = k | f) = Phi((b_{l,k} - f_n)/sigma_l) - Phi((b_{l,k-1} - f_n)/sigma_l)
// for rating r of item n = item[r] by rater l = rater[r], levels k = 0..K-1,
// b_{l,-1} = -inf, b_{l,K-1} = +inf. Nothing is learnt: the only parameters are
// the latent values.
//
// f is non-centred: f = chol(C + jitter I) z, z ~ N(0, I); jitter is data (the
// driver passes 1e-8 for the RBF kernel, 0 for the identity).
//
// Predictive quantities for Nt new items with cross-covariances Ks (Nt x N):
// conditional on f, f* ~ N(Ks C^-1 f, k** - diag(Ks C^-1 Ks')), and with
// f = LC z, Ks C^-1 f = (LC^-1 Ks')' z. mu_star is that conditional mean
// per draw; the driver computes the (constant) conditional variance and the
// Rao-Blackwellised class probabilities from it.
//
// Stan 2.21 syntax (Debian r-cran-rstan 2.21): old array declarations.
functions {
  // log P(y = k | f) for thresholds b (K-1, increasing) and noise sd s,
  // as log(Phi(zhi) - Phi(zlo)) computed from normal_lcdf on the side of 0
  // where both bounds' tails are small (accurate in both tails).
  real ordinal_lpmf(int k, real f, vector b, real s) {
    int K = num_elements(b) + 1;
    real zlo;
    real zhi;
    if (k == 0)
      return normal_lcdf((b[1] - f) / s | 0, 1);
    if (k == K - 1)
      return normal_lcdf((f - b[K - 1]) / s | 0, 1);
    zlo = (b[k] - f) / s;
    zhi = (b[k + 1] - f) / s;
    if (zlo > 0)
      return log_diff_exp(normal_lcdf(-zlo | 0, 1), normal_lcdf(-zhi | 0, 1));
    if (zhi < 0)
      return log_diff_exp(normal_lcdf(zhi | 0, 1), normal_lcdf(zlo | 0, 1));
    return log(Phi(zhi) - Phi(zlo));
  }
}
data {
  int<lower=1> N;                       // training items
  int<lower=2> K;                       // levels 0..K-1
  int<lower=1> L;                       // raters
  int<lower=1> R;                       // ratings
  int<lower=1, upper=N> item[R];
  int<lower=1, upper=L> rater[R];
  int<lower=0, upper=K - 1> y[R];
  matrix[N, N] C;                       // prior covariance of f
  real<lower=0> jitter;                 // added to diag(C) before Cholesky
  ordered[K - 1] b[L];                  // fixed thresholds per rater
  vector<lower=0>[L] sigma;             // fixed noise sd per rater
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
  for (r in 1:R)
    y[r] ~ ordinal(f[item[r]], b[rater[r]], sigma[rater[r]]);
}
generated quantities {
  vector[N] f = LC * z;
  vector[Nt] mu_star;
  if (Nt > 0)
    mu_star = A' * z;
}
