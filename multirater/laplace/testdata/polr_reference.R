# Reference numbers for polr_test.go: MASS::polr(method = "probit") on a
# real ordinal data set, for the linear-kernel limit of concord's Laplace
# engine (see README.md).
#
# Run from this directory:  Rscript polr_reference.R
# Writes polr_reference.csv (per row) and polr_params.csv (beta, zeta and
# diagnostics). R 4.x, MASS 7.3-58 (Debian r-base-core / r-cran-mass).
#
# Data: Auto MPG of Chu & Ghahramani (2005), their 5-bin label, rows of
# their partition 1 (5 bins) training set (200 rows). autompg_part1.csv is
# the copy kept here; it is rebuilt from the shared data folder only if it
# is missing.
suppressPackageStartupMessages(library(MASS))

data_file <- "autompg_part1.csv"
if (!file.exists(data_file)) {
  src <- "/work/shared/data/chu_ordinal_autompg"
  d <- read.csv(file.path(src, "data.csv"))
  p <- read.csv(file.path(src, "chu_partitions.csv"))
  ids <- p$row_id[p$bins == 5 & p$partition == 1 & p$set == "train"]
  d <- d[d$row_id %in% ids, c("row_id", "horsepower", "weight",
                             "acceleration", "model_year", "class", "y_bin5")]
  d <- d[order(d$row_id), ]
  write.csv(d, data_file, row.names = FALSE, quote = FALSE)
}
d <- read.csv(data_file)
covs <- c("horsepower", "weight", "acceleration", "model_year")
# z-score with the sample sd (n - 1), as scale() does.
X <- scale(as.matrix(d[, covs]))
attributes(X)[c("scaled:center", "scaled:scale")] <- NULL
y <- factor(d$y_bin5, levels = 1:5, ordered = TRUE)
stopifnot(all(table(y) > 0))
df <- data.frame(y = y, X)

# Tight optimiser tolerance: polr's default reltol (1e-8 on the deviance)
# stops with lp ~1e-3 from the optimum here, far above the s^2 = 1e6 limit
# error of the Go test. (polr's glm.fit start may warn "fitted probabilities
# numerically 0 or 1"; that is only the binary start, not the fit.)
fit <- polr(y ~ ., data = df, method = "probit", Hess = TRUE,
            control = list(reltol = 1e-15, maxit = 10000))
stopifnot(fit$convergence == 0)
beta <- coef(fit)
zeta <- fit$zeta
lp <- fit$lp
p <- length(beta)
stopifnot(max(abs(lp - drop(X %*% beta))) < 1e-12)

# Analytic score and observed information of the probit log-likelihood
# sum_i log(Phi(zeta_y - eta_i) - Phi(zeta_{y-1} - eta_i)) in eta.
gam <- c(-Inf, zeta, Inf)
yi <- as.integer(y)
hi <- gam[yi + 1] - lp
lo <- gam[yi] - lp
Z <- pnorm(hi) - pnorm(lo)
dhi <- ifelse(is.finite(hi), dnorm(hi), 0)
dlo <- ifelse(is.finite(lo), dnorm(lo), 0)
hdhi <- ifelse(is.finite(hi), hi * dnorm(hi), 0)
hdlo <- ifelse(is.finite(lo), lo * dnorm(lo), 0)
d1 <- -(dhi - dlo) / Z                       # d loglik / d eta
d2 <- -(hdhi - hdlo) / Z - d1^2              # d2 loglik / d eta2
grad_beta <- drop(t(X) %*% d1)
# Score in zeta_k: sum over rows with y = k of phi(hi)/Z minus rows with
# y = k + 1 of phi(lo)/Z.
grad_zeta <- sapply(seq_along(zeta), function(k)
  sum((dhi / Z)[yi == k]) - sum((dlo / Z)[yi == k + 1]))
H_exact <- t(X) %*% (-d2 * X)                # X' W X, W = -d2

H_bb <- fit$Hessian[1:p, 1:p]                # polr's (finite-difference) Hessian
V <- vcov(fit)
V_bb <- V[1:p, 1:p]
var_bb <- rowSums((X %*% solve(H_bb)) * X)   # diag(X H_bb^-1 X')
var_exact <- rowSums((X %*% solve(H_exact)) * X)
var_full <- rowSums((X %*% V_bb) * X)        # zeta uncertainty included
# First-order slope of the Laplace mode in 1/s^2: with prior beta ~ N(0, s^2 I)
# the mode is lp - X H^-1 beta / s^2 + O(s^-4).
dlp <- -drop(X %*% solve(H_exact, beta))
# First-order slope in 1/s^2 of the Laplace log evidence plus (p/2) log s^2,
# whose limit is loglik - (1/2) log det H_bb: the prior term -|beta|^2/2,
# -(1/2) tr(H^-1) from log det(H + I/s^2), and -(1/2) tr(H^-1 dH) from W
# moving with the mode (dH = X' diag(-d3 * dlp) X, d3 the third derivative
# of the log-likelihood in eta).
Z1 <- -(dhi - dlo)
Z2 <- -(hdhi - hdlo)
Z3 <- ifelse(is.finite(hi), (1 - hi^2) * dnorm(hi), 0) -
  ifelse(is.finite(lo), (1 - lo^2) * dnorm(lo), 0)
d3 <- Z3 / Z - 3 * (Z1 / Z) * (Z2 / Z) + 2 * (Z1 / Z)^3
dH <- t(X) %*% (-d3 * dlp * X)
logz_slope <- -0.5 * (sum(beta^2) + sum(diag(solve(H_exact))) +
                        sum(diag(solve(H_exact, dH))))

# Newton polish of beta at fixed zeta (the exact limit of the Laplace mode),
# for information: how far polr's optimiser stopped from it.
b <- beta
for (it in 1:20) {
  eta <- drop(X %*% b)
  h <- gam[yi + 1] - eta; l <- gam[yi] - eta
  zz <- pnorm(h) - pnorm(l)
  ph <- ifelse(is.finite(h), dnorm(h), 0); pl <- ifelse(is.finite(l), dnorm(l), 0)
  hph <- ifelse(is.finite(h), h * dnorm(h), 0); lpl <- ifelse(is.finite(l), l * dnorm(l), 0)
  g1 <- -(ph - pl) / zz
  g2 <- -(hph - lpl) / zz - g1^2
  b <- b + solve(t(X) %*% (-g2 * X), drop(t(X) %*% g1))
}
lp_polished <- drop(X %*% b)

f17 <- function(v) sprintf("%.17g", v)
out <- data.frame(row_id = d$row_id, y = yi - 1L)
for (j in seq_len(p)) out[[paste0("x_", covs[j])]] <- f17(X[, j])
out$lp <- f17(lp)
out$var_bb <- f17(var_bb)
out$var_exact <- f17(var_exact)
out$var_full <- f17(var_full)
out$dlp <- f17(dlp)
out$lp_newton <- f17(lp_polished)
write.csv(out, "polr_reference.csv", row.names = FALSE, quote = FALSE)

params <- data.frame(
  name = c(paste0("beta_", covs), paste0("zeta_", seq_along(zeta)),
           "loglik", "max_abs_grad_beta", "max_abs_grad_zeta",
           "max_abs_lp_minus_polished", "max_rel_var_bb_minus_exact",
           "logdet_H_bb", "trace_Hinv_bb", "logz_slope",
           "convergence", "f_evals", "g_evals"),
  value = c(f17(beta), f17(zeta), f17(-fit$deviance / 2),
            f17(max(abs(grad_beta))), f17(max(abs(grad_zeta))),
            f17(max(abs(lp - lp_polished))),
            f17(max(abs(var_bb / var_exact - 1))),
            f17(as.numeric(determinant(H_exact)$modulus)),
            f17(sum(diag(solve(H_exact)))),
            f17(logz_slope),
            fit$convergence, fit$niter[1], fit$niter[2]))
write.csv(params, "polr_params.csv", row.names = FALSE, quote = FALSE)
print(params, right = FALSE)
cat("condition number of H_bb:", kappa(H_exact, exact = TRUE), "\n")
cat("eigenvalues of H_bb:", eigen(H_exact)$values, "\n")
