# Reference posterior of the multi-rater ordinal model (ordinal_multirater.stan)
# on sirt_k1.csv: the sirt writing ratings, criterion k1 (135 essays, 7 raters,
# 274 ratings, scores 0-3 -> grades 1-4, K = 4), identity kernel C = I (no
# jitter), weak identifiability with v = lambda = 1, sigma_b = 1.
#
# Install (Debian bookworm, as root):
#   apt-get install r-base-core r-cran-rstan r-cran-rcppeigen r-cran-stanheaders \
#     libboost-dev r-cran-posterior
#   mkdir -p /usr/lib/R/site-library/BH/include
#   ln -s /usr/include/boost /usr/lib/R/site-library/BH/include/boost
# Run (from this folder): Rscript sirt_k1_reference.R
# Writes sirt_k1_reference.csv: one row per parameter with the posterior mean,
# sd, MCSE of the mean and n_eff/Rhat from rstan's summary(), and posterior's
# (1.4.0) rank-normalised rhat, ess_bulk, ess_tail and mcse_mean.
# Raters are indexed in sorted rater_id order and items in sorted item_id order;
# the CSV names them by id. k is the threshold index (b_l1 < b_l2 < b_l3).
source("../../../testdata/stanref.R")
options(mc.cores = 2)

d <- read.csv("sirt_k1.csv", colClasses = c("character", "character", "integer"))
items <- sort(unique(d$item_id))
raters <- sort(unique(d$rater_id))
K <- 4
data <- list(
  N = length(items), L = length(raters), K = K, R = nrow(d),
  item = match(d$item_id, items), rater = match(d$rater_id, raters),
  grade = d$label + 1L,
  C = diag(length(items)), jitter = 0, v = 1, lambda = 1, sigma_b = 1)

sm <- get_model("ordinal_multirater")
fit <- sampling(sm, data = data, chains = 4, cores = 2, iter = 6000, warmup = 1000,
                seed = 20240601, refresh = 0,
                pars = c("alpha", "b", "m"))
print(get_elapsed_time(fit))
s <- summary(fit)$summary
draws <- as_draws_array(fit)

rows <- list()
add <- function(param, kind, rater_id, item_id, k) {
  x <- extract_variable_matrix(draws, param)
  rows[[length(rows) + 1]] <<- data.frame(
    param = param, kind = kind, rater_id = rater_id, item_id = item_id, k = k,
    mean = s[param, "mean"], sd = s[param, "sd"], se_mean = s[param, "se_mean"],
    n_eff = s[param, "n_eff"], Rhat = s[param, "Rhat"],
    rhat = rhat(x), ess_bulk = ess_bulk(x), ess_tail = ess_tail(x),
    mcse_mean = mcse_mean(x))
}
for (l in seq_along(raters)) add(sprintf("alpha[%d]", l), "alpha", raters[l], "", "")
for (l in seq_along(raters)) for (k in 1:(K - 1))
  add(sprintf("b[%d,%d]", l, k), "b", raters[l], "", k)
for (n in seq_along(items)) add(sprintf("m[%d]", n), "m", "", items[n], "")
out <- do.call(rbind, rows)
num <- sapply(out, is.numeric)
out[num] <- lapply(out[num], function(v) sprintf("%.10g", v))
con <- file("sirt_k1_reference.csv", "w")
writeLines(sprintf("# rstan %s (Stan %s), posterior %s; 4 chains x 5000 draws after 1000 warmup, seed 20240601",
                   packageVersion("rstan"), stan_version(), packageVersion("posterior")), con)
write.csv(out, con, row.names = FALSE, quote = 1)  # param names such as b[1,2] hold commas
close(con)
cat(sprintf("max rhat %.4f, min ess_bulk %.0f, max se_mean/sd %.4f\n",
            max(as.numeric(out$rhat)), min(as.numeric(out$ess_bulk)),
            max(as.numeric(out$se_mean) / as.numeric(out$sd))))
print(out[out$kind != "m", c("param", "rater_id", "k", "mean", "sd", "se_mean", "ess_bulk", "rhat")])
