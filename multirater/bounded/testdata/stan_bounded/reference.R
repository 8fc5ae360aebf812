# NUTS reference posterior of the bounded-response GP at fixed hyperparameters
# (bounded_gp_fixed.stan) for one case of params.csv.
#
# Run from this folder: Rscript reference.R <case> [seed]
#   cases: pyr_beta_nu20, pyr_tg_nu10, pyr_beta_nu5
# Writes
#   ref_<case>_latent.csv  one row per training item (pyrimidines_bounded.csv
#     order): posterior mean and sd of f_n, mcse_mean, mcse_sd, ess_bulk,
#     ess_tail, rhat (posterior package).
#   ref_<case>_pred.csv  one row per test item (file order), y_obs its activity:
#     fstar_mean, fstar_sd: moments of the predictive latent f*; per draw
#       f* | f ~ N(mu*, v*), mu* = k*' (C + jitter I)^-1 f, v* = 1 - k*'(C +
#       jitter I)^-1 k* (k** = 1), so E f* = E mu*, Var f* = v* + Var mu* (law of
#       total variance); fstar_mcse_mean = MCSE of E mu*, fstar_mcse_sd = MCSE of
#       sd(mu*) times sd(mu*)/fstar_sd (delta method); fstar_cond_var = v*.
#     ey = E[y*] = E[ E[y | f*] ], E[y | f] = Phi(f) (beta) or the mean of
#       N(Phi(f), 1/nu^2) truncated to [0, 1] (truncgauss); the inner integral
#       over f* | f by Gauss-Hermite quadrature (64 nodes) in every draw, then
#       averaged over the draws; ey_mcse its MCSE. ey_sampled, ey_sampled_mcse:
#       the same from 10 draws of f* | f per posterior draw (a check of the
#       quadrature; its MCSE is larger).
#     y_sd: predictive sd of y*, sqrt(E[Var(y | f*) + E[y | f*]^2] - ey^2).
#     pdens = E[p(y_obs | f*)], the predictive density of the observed activity
#       (same quadrature), pdens_mcse, and lpd = log(pdens), lpd_mcse =
#       pdens_mcse/pdens.
#     gauss_ey, gauss_pdens, gauss_lpd: the same with f* ~ N(fstar_mean,
#       fstar_sd^2), the best any Gaussian approximation of the posterior (EP,
#       Laplace) can do with the exact moments.
#   ref_<case>_diagnostics.csv  sampler settings and diagnostics.
source("../../../testdata/stanref.R")
rc <- ref_case(); case <- rc$case; seed <- rc$seed; pr <- rc$pr
if (nrow(pr) != 1) stop("case ", case, ": ", nrow(pr), " rows of params.csv")
chains <- 4; warmup <- 2000; draws <- 20000; adapt_delta <- 0.95
likname <- pr$likelihood
lik <- match(likname, c("beta", "truncgauss"))
if (is.na(lik)) stop("unknown likelihood ", likname)
nu <- as.numeric(pr$nu); gamma <- as.numeric(pr$gamma); jitter <- as.numeric(pr$jitter)

d <- read.csv("pyrimidines_bounded.csv")
X <- as.matrix(d[, grep("^x[0-9]+$", names(d))])
tr <- d$set == "train"; te <- d$set == "test"
g <- rbf_gram(X, tr, te, gamma); C <- g$C; Ks <- g$Ks
item_ids <- d$row_id[tr]; test_ids <- d$row_id[te]
N <- length(item_ids); Nt <- length(test_ids)
ytr <- d$y[tr]; yte <- d$y[te]
data <- list(N = N, lik = lik, nu = nu, y = ytr, C = C, jitter = jitter, Nt = Nt, Ks = Ks)

ns <- nuts(get_model("bounded_gp_fixed"), data, chains, warmup, draws, seed, adapt_delta, c("f", "mu_star"))
arr <- ns$arr  # iterations x chains x parameters
lat <- latent_summary(arr, N)
lat <- data.frame(case = case, row_id = item_ids, y = ytr, lat)

## Likelihood pieces as functions of f (vectorised): E[y|f], Var[y|f], p(y|f).
if (likname == "beta") {
  cmean <- function(f) pnorm(f)
  cvar <- function(f) pnorm(f) * pnorm(f, lower.tail = FALSE) / (nu + 1)
  cdens <- function(y, f) dbeta(y, nu * pnorm(f), nu * pnorm(f, lower.tail = FALSE))
} else {
  tgpieces <- function(f) {
    m <- pnorm(f); a <- -nu * m; b <- nu * (1 - m)
    list(m = m, a = a, b = b, Z = pnorm(b) - pnorm(a), da = dnorm(a), db = dnorm(b))
  }
  cmean <- function(f) with(tgpieces(f), m + (da - db) / (nu * Z))
  cvar <- function(f) with(tgpieces(f), (1 + (a * da - b * db) / Z - ((da - db) / Z)^2) / nu^2)
  cdens <- function(y, f) with(tgpieces(f), nu * dnorm(nu * (y - m)) / Z)
}

## Gauss-Hermite rule for E over N(0, 1) (Golub-Welsch, probabilists' Hermite).
gh <- function(n) {
  J <- matrix(0, n, n)
  J[cbind(1:(n - 1), 2:n)] <- J[cbind(2:n, 1:(n - 1))] <- sqrt(1:(n - 1))
  e <- eigen(J, symmetric = TRUE)
  w <- e$vectors[1, ]^2
  list(x = e$values, w = w / sum(w))
}
rule <- gh(64)
stopifnot(abs(sum(rule$w * rule$x^2) - 1) < 1e-12, abs(sum(rule$w * rule$x^4) - 3) < 1e-10)
# E[g(F)], F ~ N(mu, v), per element of mu (v scalar): a vector like mu.
gh_expect <- function(g, mu, v) {
  Fm <- outer(c(mu), sqrt(v) * rule$x, "+")
  G <- matrix(g(c(Fm)), nrow = length(mu))
  drop(G %*% rule$w)
}

Lc <- t(chol(C + diag(jitter, N)))
A <- forwardsolve(Lc, t(Ks))
vstar <- 1 - colSums(A^2)   # k** = 1 for the RBF kernel
set.seed(seed)
S <- 10                     # f* draws per posterior draw for the sampled check
pred <- NULL
for (t in seq_len(Nt)) {
  mu <- arr[, , sprintf("mu_star[%d]", t)]          # iterations x chains
  v <- vstar[t]; yo <- yte[t]
  shape <- dim(mu)
  asdraws <- function(x) matrix(x, nrow = shape[1], ncol = shape[2])
  ey_d <- asdraws(gh_expect(cmean, mu, v))
  ey2_d <- asdraws(gh_expect(function(f) cvar(f) + cmean(f)^2, mu, v))
  pd_d <- asdraws(gh_expect(function(f) cdens(yo, f), mu, v))
  fs <- outer(c(mu), rep(1, S)) + sqrt(v) * matrix(rnorm(length(mu) * S), ncol = S)
  eys_d <- asdraws(rowMeans(matrix(cmean(c(fs)), ncol = S)))
  fm <- mean(mu); fsd <- sqrt(v + var(c(mu)))
  gauss_ey <- gh_expect(cmean, fm, fsd^2)
  gauss_pd <- gh_expect(function(f) cdens(yo, f), fm, fsd^2)
  ey <- mean(ey_d); pdens <- mean(pd_d)
  pred <- rbind(pred, data.frame(
    case = case, row_id = test_ids[t], y_obs = yo,
    fstar_mean = fm, fstar_sd = fsd, fstar_mcse_mean = mcse_mean(mu),
    fstar_mcse_sd = mcse_sd(mu) * sd(c(mu)) / fsd, fstar_cond_var = v,
    mustar_ess_bulk = ess_bulk(mu), mustar_rhat = rhat(mu),
    ey = ey, ey_mcse = mcse_mean(ey_d), ey_sampled = mean(eys_d), ey_sampled_mcse = mcse_mean(eys_d),
    y_sd = sqrt(mean(ey2_d) - ey^2),
    pdens = pdens, pdens_mcse = mcse_mean(pd_d), lpd = log(pdens), lpd_mcse = mcse_mean(pd_d) / pdens,
    gauss_ey = gauss_ey, gauss_pdens = gauss_pd, gauss_lpd = log(gauss_pd)))
}

wr <- ref_writer(chains, draws, warmup, adapt_delta, seed)
# The y columns are the data file's values: print them as they are read.
wr(lat, sprintf("ref_%s_latent.csv", case))
wr(pred, sprintf("ref_%s_pred.csv", case))
diag <- data.frame(case = case, likelihood = likname, nu = nu, chains = chains, draws = draws,
                   warmup = warmup, adapt_delta = adapt_delta,
                   seed = seed, divergences = ns$ndiv, max_treedepth = ns$maxtd, treedepth_ge10 = ns$ntd,
                   mean_leapfrog = ns$leap, min_bfmi = min(ns$bfmi),
                   min_ess_bulk = min(lat$ess_bulk), min_ess_tail = min(lat$ess_tail), max_rhat = max(lat$rhat),
                   max_mcse_mean_over_sd = max(lat$mcse_mean / lat$sd),
                   max_mcse_sd_over_sd = max(lat$mcse_sd / lat$sd),
                   max_fstar_mcse_mean_over_sd = max(pred$fstar_mcse_mean / pred$fstar_sd),
                   max_fstar_mcse_sd_over_sd = max(pred$fstar_mcse_sd / pred$fstar_sd),
                   min_mustar_ess_bulk = min(pred$mustar_ess_bulk), max_mustar_rhat = max(pred$mustar_rhat),
                   max_ey_mcse = max(pred$ey_mcse), max_lpd_mcse = max(pred$lpd_mcse),
                   max_abs_ey_minus_sampled_over_mcse = max(abs(pred$ey - pred$ey_sampled) / pred$ey_sampled_mcse),
                   max_abs_ey_minus_gauss = max(abs(pred$ey - pred$gauss_ey)),
                   max_abs_lpd_minus_gauss = max(abs(pred$lpd - pred$gauss_lpd)),
                   seconds = ns$secs)
wr(diag, sprintf("ref_%s_diagnostics.csv", case))
print(t(diag))
