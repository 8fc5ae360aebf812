# Stan NUTS speed on the paper's toy (Rogers et al. sec. 3.1; ../toy, made by
# ../toy/make_toy.R): multi-rater ordinal model (ordinal_multirater.stan), RBF
# kernel C_ij = exp(-gamma (x_i - x_j)^2) with gamma = 1 (eq. 20) built from
# ../toy/items.csv, weak identifiability with v = lambda = 1, sigma_b = 1.
# 2 chains in parallel (cores = 2), Stan's defaults of 1000 warmup + 1000
# sampling iterations per chain.
#
# The RBF matrix of these 200 points is numerically singular (only 21 of its
# eigenvalues exceed 1e-10; the smallest computed one is -3e-14), so the
# Cholesky factor needs jitter: R's chol() succeeds from C + 1e-12 I; we pass
# C + 1e-6 I for margin in Stan's positive-definiteness check. That adds
# N(0, 1e-6) to each m_n a priori, negligible next to the posterior sd of m_n
# (~0.1-0.3); the Go sampler works with C's eigendecomposition and needs none.
#
# Prints: sampling seconds (get_elapsed_time, "sample" column, max over the two
# chains since they run in parallel), the minimum bulk ESS (posterior::ess_bulk,
# rank-normalised, Vehtari et al. 2021) over every alpha_l, b_lk and m_n and
# which parameter attains it, and min ESS / sampling seconds.
#
# Install: see sirt_k1_reference.R. Run (from this folder): Rscript speed_toy.R [seed]
source("../../../testdata/stanref.R")
args <- commandArgs(trailingOnly = TRUE)
seed <- if (length(args) > 0) as.integer(args[1]) else 1L

items <- read.csv("../toy/items.csv", colClasses = c("character", "numeric"))
d <- read.csv("../toy/ratings.csv", colClasses = c("character", "character", "integer"))
ids <- items$item_id
raters <- sort(unique(d$rater_id))
gamma <- 1
x <- items$x1
C <- exp(-gamma * outer(x, x, function(a, b) (a - b)^2))
data <- list(
  N = length(ids), L = length(raters), K = 5L, R = nrow(d),
  item = match(d$item_id, ids), rater = match(d$rater_id, raters), grade = d$label,
  C = C, jitter = 1e-6, v = 1, lambda = 1, sigma_b = 1)

sm <- get_model("ordinal_multirater")
fit <- sampling(sm, data = data, chains = 2, cores = 2, iter = 2000, warmup = 1000,
                seed = seed, refresh = 0, pars = c("alpha", "b", "m"))
el <- get_elapsed_time(fit)
print(el)
secs <- max(el[, "sample"])
draws <- as_draws_array(fit)
vars <- setdiff(variables(draws), "lp__")
ess <- sapply(vars, function(v) ess_bulk(extract_variable_matrix(draws, v)))
rh <- sapply(vars, function(v) rhat(extract_variable_matrix(draws, v)))
sp <- get_sampler_params(fit, inc_warmup = FALSE)
div <- sum(sapply(sp, function(s) sum(s[, "divergent__"])))
td <- mean(sapply(sp, function(s) mean(s[, "treedepth__"])))
cat(sprintf("seed %d\n", seed))
cat(sprintf("sampling seconds (max over 2 parallel chains): %.3f\n", secs))
cat(sprintf("min bulk ESS over alpha, b, m: %.1f (%s)\n", min(ess), names(which.min(ess))))
cat(sprintf("min bulk ESS over alpha, b: %.1f\n", min(ess[grepl("^(alpha|b)", vars)])))
cat(sprintf("min bulk ESS per sampling second: %.2f\n", min(ess) / secs))
cat(sprintf("max rank-normalised R-hat: %.4f; divergences: %d; mean treedepth: %.2f\n",
            max(rh), div, td))
s <- summary(fit, pars = c("alpha", "b"))$summary
print(round(s[, c("mean", "sd", "se_mean", "n_eff", "Rhat")], 3))
