# Reference values of the multinomial probit predictive probabilities
# (Rogers et al. eq. 18): P_k = E_u[prod_{j != k} pnorm(u + sqrt(a) (m_k - m_j))],
# u ~ N(0, 1), computed by R's adaptive quadrature (integrate) on a finite
# range around the integrand's mass, for TestClassProbsQuadrature.
# Run: Rscript predictive_ref.R > predictive_ref.csv
cases <- list(
  list(a = 1, m = c(0, 0, 0)),
  list(a = 2, m = c(1, 0, -1)),
  list(a = 0.5, m = c(0.3, -0.2, 0.1, 0.0)),
  list(a = 4, m = c(2.5, -1, 0.5, 0.2, -3)),
  list(a = 9, m = c(3, -2, 0, 1)),
  list(a = 25, m = c(2, -1.5, 0.4)),
  list(a = 1, m = c(0, 0.1, -0.1, 0.2, -0.2, 0.3, -0.3, 0.05)),
  list(a = 3, m = c(1, 1, -2))
)
set.seed(7)
cases[[length(cases) + 1]] <- list(a = 2, m = round(rnorm(12), 4))
cat("case,a,k,m,p\n")
for (i in seq_along(cases)) {
  a <- cases[[i]]$a; m <- cases[[i]]$m; K <- length(m)
  for (k in 1:K) {
    c <- sqrt(a) * (m[k] - m[-k])
    f <- function(u) sapply(u, function(x) exp(dnorm(x, log = TRUE) + sum(pnorm(x + c, log.p = TRUE))))
    mode <- max(0, -min(c) / 2)
    lo <- min(-12, mode - 12); hi <- max(12, mode + 12)
    p <- integrate(f, lo, hi, rel.tol = 1e-13, abs.tol = 0, subdivisions = 2000L)$value
    cat(sprintf("%d,%.17g,%d,%s,%.17g\n", i, a, k, paste(sprintf("%.17g", m), collapse = " "), p))
  }
}
