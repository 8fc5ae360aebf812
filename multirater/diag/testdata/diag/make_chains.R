# Makes the fixed MCMC-like chains in this folder (one CSV per case, one
# column per chain, one row per iteration) for multirater/diag_test.go.
# Run: Rscript make_chains.R   (Debian r-base-core 4.2.2)
# Values are written with 17 significant digits so that R and Go read
# exactly the same doubles.
set.seed(20210101)

ar1 <- function(n, rho, sd = 1) {
  x <- numeric(n)
  x[1] <- rnorm(1, 0, sd / sqrt(1 - rho^2))
  for (t in 2:n) x[t] <- rho * x[t - 1] + rnorm(1, 0, sd)
  x
}
chains <- function(m, n, f) sapply(seq_len(m), function(i) f(n))
write_chains <- function(name, x) {
  x <- as.matrix(x)
  colnames(x) <- paste0("chain", seq_len(ncol(x)))
  out <- apply(x, c(1, 2), function(v) sprintf("%.17g", v))
  write.table(out, paste0(name, ".csv"), sep = ",", quote = FALSE, row.names = FALSE)
}

write_chains("iid", chains(4, 1000, function(n) rnorm(n)))
write_chains("ar1_0.5", chains(4, 1000, function(n) ar1(n, 0.5)))
write_chains("ar1_0.9", chains(4, 1000, function(n) ar1(n, 0.9)))
write_chains("ar1_0.99", chains(4, 2000, function(n) 3 + ar1(n, 0.99, 0.1)))
write_chains("antithetic", chains(4, 1000, function(n) ar1(n, -0.6)))
x <- chains(4, 500, function(n) ar1(n, 0.3))
x[, 4] <- x[, 4] + 0.5
write_chains("shift", x)
write_chains("heavy", chains(4, 1000, function(n) rt(n, df = 1)))
write_chains("odd", chains(3, 101, function(n) ar1(n, 0.3)))
write_chains("single", chains(1, 1000, function(n) ar1(n, 0.5)))
write_chains("ties", chains(4, 500, function(n) rpois(n, 2)))
x <- chains(4, 400, function(n) ar1(n, 0.2))
x[1:200, 2] <- x[1:200, 2] * 3
write_chains("scale", x)
write_chains("short7", chains(2, 7, function(n) rnorm(n)))
write_chains("short5", chains(4, 5, function(n) rnorm(n)))
write_chains("short3", chains(4, 3, function(n) rnorm(n)))
write_chains("constant", matrix(1.5, 100, 4))
write_chains("stuck", matrix(rep(c(0.1, 0.2, 0.3, 0.4), each = 50), 50, 4))
