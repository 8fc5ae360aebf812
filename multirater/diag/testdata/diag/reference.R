# Reference diagnostics for multirater/diag_test.go, computed with R's
# posterior package (Vehtari, Gelman, Simpson, Carpenter, Buerkner 2021) and,
# as a looser independent check of the plain ESS, coda::effectiveSize.
#
# Install (Debian bookworm): apt-get install r-base-core r-cran-posterior r-cran-coda
# Run:     Rscript reference.R > reference.csv
# Output:  case,stat,value (value with 17 significant digits, NA when posterior
#          returns NA). Stats: rhat, ess_bulk, ess_tail (posterior::rhat,
#          ess_bulk, ess_tail), rhat_basic and ess_basic (split, not
#          rank-normalised), ess_q05, ess_q95 (ess_quantile), mean, sd,
#          q2.5, q50, q97.5 (quantile type 7, as posterior::quantile2),
#          acf_<lag> (posterior:::autocorrelation of chain 1, lags 0..20),
#          coda_ess (coda::effectiveSize of the unsplit chains; spectral
#          density at zero from an AR fit, a different estimator).
suppressMessages({
  library(posterior)
  library(coda)
})
cases <- c("iid", "ar1_0.5", "ar1_0.9", "ar1_0.99", "antithetic", "shift",
           "heavy", "odd", "single", "ties", "scale", "short7", "short5",
           "short3", "constant", "stuck")
f <- function(v) ifelse(is.na(v), "NA", sprintf("%.17g", v))
cat(sprintf("# R %s, posterior %s, coda %s\n", getRversion(),
            packageVersion("posterior"), packageVersion("coda")))
cat("case,stat,value\n")
out <- function(case, stat, v) cat(sprintf("%s,%s,%s\n", case, stat, f(v)))
for (case in cases) {
  x <- as.matrix(read.csv(paste0(case, ".csv")))
  dimnames(x) <- NULL
  w <- function(e) suppressWarnings(e)
  out(case, "rhat", w(rhat(x)))
  out(case, "ess_bulk", w(ess_bulk(x)))
  out(case, "ess_tail", w(ess_tail(x)))
  out(case, "rhat_basic", w(rhat_basic(x)))
  out(case, "ess_basic", w(ess_basic(x)))
  q <- w(ess_quantile(x, c(0.05, 0.95), names = FALSE))
  out(case, "ess_q05", q[1])
  out(case, "ess_q95", q[2])
  out(case, "mean", mean(x))
  out(case, "sd", sd(x))
  qs <- quantile2(x, c(0.025, 0.5, 0.975), names = FALSE)
  out(case, "q2.5", qs[1])
  out(case, "q50", qs[2])
  out(case, "q97.5", qs[3])
  acf <- posterior:::autocorrelation(x[, 1])
  for (k in 0:min(20, nrow(x) - 1)) out(case, sprintf("acf_%d", k), acf[k + 1])
  if (nrow(x) >= 100 && sd(x) > 0) {
    m <- mcmc.list(lapply(seq_len(ncol(x)), function(j) mcmc(x[, j])))
    out(case, "coda_ess", effectiveSize(m))
  }
}
