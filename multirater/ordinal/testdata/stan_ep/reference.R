# NUTS reference posterior of the ordinal probit GP at fixed hyperparameters
# (ordinal_gp_fixed.stan) for one case of params.csv.
#
# Run from this folder: Rscript reference.R <case> [seed]
#   cases: pyrimidines_sigma0.4, pyrimidines_sigma0.1, sirt_k1
# Writes
#   ref_<case>_latent.csv  one row per training item: posterior mean and sd of
#     f_n, mcse_mean, mcse_sd, ess_bulk, ess_tail, rhat (posterior package), and
#     for the identity kernel (items independent a priori, 1-D posteriors) the
#     same mean and sd by quadrature (quad_mean, quad_sd) as a check of NUTS.
#   ref_<case>_pred.csv  predictive class probabilities with their MCSE:
#     kind "test": a new item (RBF cases), P(y* = k | y) = E[Phi((b_k - mu*)/s*)
#       - Phi((b_{k-1} - mu*)/s*)], s* = sqrt(sigma^2 + v*), with mu* = k*' C^-1 f
#       per draw and v* = k** - k*' C^-1 k* (Rao-Blackwellised, C = C + jitter I);
#     kind "replicate": a fresh rating of a training item by the rater who rated
#       it (identity case), P(y_rep = k | y) = E[Phi((b_lk - f)/sigma_l) - ...],
#       with quad_prob by quadrature.
#     gauss_prob: what a Gaussian posterior with the EXACT (NUTS) moments of
#       mu* (test) or f_n (replicate) gives, the best any Gaussian approximation
#       such as EP can do; |prob - gauss_prob| is the error floor of such methods.
#   ref_<case>_diagnostics.csv  sampler settings and diagnostics.
# Items are in data-file order (pyrimidines.csv rows, train then test) or, for
# sirt_k1, sorted item_id order; raters in sorted rater_id order.
source("../../../testdata/stanref.R")
rc <- ref_case(); case <- rc$case; seed <- rc$seed
pr <- rc$pr[order(rc$pr$rater_id), ]
chains <- 4; warmup <- 2000; draws <- 10000; adapt_delta <- 0.9
bl <- lapply(strsplit(pr$b, " "), as.numeric)
K <- length(bl[[1]]) + 1
sig <- as.numeric(pr$sigma)
jitter <- as.numeric(pr$jitter[1])
L <- nrow(pr)

if (pr$kernel[1] == "rbf") {
  d <- read.csv(pr$data[1])
  X <- as.matrix(d[, grep("^x[0-9]+$", names(d))])
  tr <- d$set == "train"; te <- d$set == "test"
  gamma <- as.numeric(pr$gamma[1])
  g <- rbf_gram(X, tr, te, gamma); C <- g$C; Ks <- g$Ks
  item_ids <- as.character(d$row_id[tr]); test_ids <- as.character(d$row_id[te])
  R <- sum(tr)
  sd_data <- list(item = seq_len(R), rater = rep(1L, R), y = d$y[tr])
  raters <- pr$rater_id
} else {
  d <- read.csv(pr$data[1], colClasses = c("character", "character", "integer"))
  item_ids <- sort(unique(d$item_id)); raters <- sort(unique(d$rater_id))
  stopifnot(identical(raters, pr$rater_id))
  C <- diag(length(item_ids))
  Ks <- matrix(0, 0, length(item_ids)); test_ids <- character(0)
  R <- nrow(d)
  sd_data <- list(item = match(d$item_id, item_ids), rater = match(d$rater_id, raters), y = d$label)
}
N <- length(item_ids); Nt <- length(test_ids)
data <- c(list(N = N, K = K, L = L, R = R, C = C, jitter = jitter,
               b = do.call(rbind, bl), sigma = as.array(sig), Nt = Nt, Ks = Ks), sd_data)

ns <- nuts(get_model("ordinal_gp_fixed"), data, chains, warmup, draws, seed, adapt_delta, c("f", "mu_star"))
arr <- ns$arr  # iterations x chains x parameters
lat <- latent_summary(arr, N)
lat <- data.frame(case = case, item_id = item_ids, lat)

phidiff <- function(k, mu, s, b) {  # P(level k) for thresholds b, 0-based k
  hi <- if (k < length(b)) pnorm((b[k + 1] - mu) / s) else 1
  lo <- if (k > 0) pnorm((b[k] - mu) / s) else 0
  hi - lo
}
# mcse_mean, or for a quantity that is (nearly) the same in every draw (a class
# probability that underflows to 0, where posterior returns NA) its range.
mcse0 <- function(p) if (max(p) - min(p) < 1e-12) max(p) - min(p) else mcse_mean(p)
pred <- NULL
if (Nt > 0) {
  Lc <- t(chol(C + diag(jitter, N)))
  A <- forwardsolve(Lc, t(Ks))
  vstar <- 1 - colSums(A^2)   # k** = 1 for the RBF kernel
  for (t in seq_len(Nt)) {
    mu <- arr[, , sprintf("mu_star[%d]", t)]
    s <- sqrt(sig[1]^2 + vstar[t])
    for (k in 0:(K - 1)) {
      p <- phidiff(k, mu, s, bl[[1]])
      pred <- rbind(pred, data.frame(case = case, kind = "test", item_id = test_ids[t],
                                     rater_id = raters[1], level = k, prob = mean(p),
                                     mcse = mcse0(p), quad_prob = NA_real_,
                                     gauss_prob = phidiff(k, mean(mu), sqrt(s^2 + var(c(mu))), bl[[1]])))
    }
  }
}
if (pr$kernel[1] == "identity") {
  # Items are independent a priori: each posterior is 1-D, computed on a grid.
  grid <- seq(-10, 10, length.out = 40001)
  qm <- qs <- numeric(N)
  post <- vector("list", N)
  for (n in seq_len(N)) {
    lw <- dnorm(grid, log = TRUE)
    for (r in which(sd_data$item == n)) {
      l <- sd_data$rater[r]
      lw <- lw + log(phidiff(sd_data$y[r], grid, sig[l], bl[[l]]))
    }
    w <- exp(lw - max(lw)); w <- w / sum(w)
    post[[n]] <- w
    qm[n] <- sum(w * grid); qs[n] <- sqrt(sum(w * (grid - qm[n])^2))
  }
  lat$quad_mean <- qm; lat$quad_sd <- qs
  for (r in seq_len(R)) {
    n <- sd_data$item[r]; l <- sd_data$rater[r]
    f <- arr[, , sprintf("f[%d]", n)]
    for (k in 0:(K - 1)) {
      p <- phidiff(k, f, sig[l], bl[[l]])
      pred <- rbind(pred, data.frame(case = case, kind = "replicate", item_id = item_ids[n],
                                     rater_id = raters[l], level = k, prob = mean(p),
                                     mcse = mcse0(p),
                                     quad_prob = sum(post[[n]] * phidiff(k, grid, sig[l], bl[[l]])),
                                     gauss_prob = phidiff(k, mean(f), sqrt(sig[l]^2 + var(c(f))), bl[[l]])))
    }
  }
}

wr <- ref_writer(chains, draws, warmup, adapt_delta, seed)
wr(lat, sprintf("ref_%s_latent.csv", case))
if (!is.null(pred)) wr(pred, sprintf("ref_%s_pred.csv", case))
diag <- data.frame(case = case, chains = chains, draws = draws, warmup = warmup, adapt_delta = adapt_delta,
                   seed = seed, divergences = ns$ndiv, max_treedepth = ns$maxtd, treedepth_ge10 = ns$ntd,
                   mean_leapfrog = ns$leap, min_bfmi = min(ns$bfmi),
                   min_ess_bulk = min(lat$ess_bulk), min_ess_tail = min(lat$ess_tail), max_rhat = max(lat$rhat),
                   max_mcse_mean_over_sd = max(lat$mcse_mean / lat$sd),
                   max_mcse_sd_over_sd = max(lat$mcse_sd / lat$sd),
                   max_pred_mcse = if (is.null(pred)) NA else max(pred$mcse),
                   seconds = ns$secs)
if (pr$kernel[1] == "identity") {
  diag$max_abs_mean_minus_quad_over_sd <- max(abs(lat$mean - lat$quad_mean) / lat$quad_sd)
  diag$max_rel_sd_minus_quad <- max(abs(lat$sd / lat$quad_sd - 1))
  diag$max_abs_pred_minus_quad <- max(abs(pred$prob - pred$quad_prob))
}
if (!is.null(pred)) diag$max_abs_pred_minus_gauss <- max(abs(pred$prob - pred$gauss_prob))
wr(diag, sprintf("ref_%s_diagnostics.csv", case))
print(t(diag))
