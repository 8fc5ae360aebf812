// Multi-rater ordinal GP model of Rogers, Girolami & Polajnar (2010), sec. 2.1-2.2
// and 2.5, with the auxiliary variables y_nl integrated out (their eq. 3):
//   m ~ N(0, C)                                   (GP prior, C given as data)
//   alpha_l ~ Gamma(v, lambda)                    (shape, rate)
//   b_l ~ prod_k N(b_lk | 0, sigma_b^2) on b_l1 < ... < b_l,K-1
//   P(t_nl = k) = Phi(sqrt(alpha_l)(b_lk - m_n)) - Phi(sqrt(alpha_l)(b_l,k-1 - m_n))
// which is ordered_probit(sqrt(alpha_l) m_n, sqrt(alpha_l) b_l), the model with
// y_nl ~ N(m_n, 1/alpha_l), t_nl = k iff b_l,k-1 < y_nl <= b_lk. Only observed
// ratings enter the likelihood (sec. 2.5, empty ratings). Weak identifiability:
// nothing is fixed; the priors identify the scale and location.
//
// m is non-centred: m = chol(C + jitter I) z, z ~ N(0, I). jitter is data and 0
// unless C is singular (e.g. an RBF kernel of duplicated or very close inputs);
// the driver scripts say what they pass. For the ordered vector, Stan's
// ordered transform supplies the Jacobian, and b_l ~ normal(0, sigma_b) is the
// product of normals restricted to the ordered region up to a constant.
//
// Stan 2.21 syntax (Debian r-cran-rstan 2.21): old array declarations.
data {
  int<lower=1> N;                       // items
  int<lower=1> L;                       // raters
  int<lower=2> K;                       // grades 1..K
  int<lower=1> R;                       // observed ratings
  int<lower=1, upper=N> item[R];
  int<lower=1, upper=L> rater[R];
  int<lower=1, upper=K> grade[R];
  matrix[N, N] C;                       // prior covariance of m
  real<lower=0> jitter;                 // added to diag(C) before Cholesky
  real<lower=0> v;                      // Gamma shape (paper: 1)
  real<lower=0> lambda;                 // Gamma rate (paper: 1)
  real<lower=0> sigma_b;                // threshold prior sd (paper: 1)
}
transformed data {
  matrix[N, N] LC = cholesky_decompose(C + diag_matrix(rep_vector(jitter, N)));
}
parameters {
  vector[N] z;
  vector<lower=0>[L] alpha;
  ordered[K - 1] b[L];
}
transformed parameters {
  vector[N] m = LC * z;
}
model {
  vector[L] s = sqrt(alpha);
  z ~ std_normal();
  alpha ~ gamma(v, lambda);
  for (l in 1:L)
    b[l] ~ normal(0, sigma_b);
  for (r in 1:R)
    grade[r] ~ ordered_probit(s[rater[r]] * m[item[r]], s[rater[r]] * b[rater[r]]);
}
