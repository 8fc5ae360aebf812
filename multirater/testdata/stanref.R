# What the NUTS reference scripts of the multirater families share
# (ordinal/testdata/stan, ordinal/testdata/stan_ep, bounded/testdata/stan_bounded):
# compiling a model once, sampling it with the sampler's diagnostics, the
# posterior summaries of the latent f, concord's RBF kernel, and writing the
# reference tables. Source it from the script's folder with its relative path.
suppressMessages({
  library(rstan)
  library(posterior)
})

# ref_case reads the command line of a reference script (<case> [seed],
# the seed 20240611 by default) and the case's rows of params.csv.
ref_case <- function() {
  args <- commandArgs(trailingOnly = TRUE)
  pr <- read.csv("params.csv", colClasses = "character")
  pr <- pr[pr$case == args[1], ]
  if (nrow(pr) == 0) stop("unknown case ", args[1])
  list(case = args[1], seed = if (length(args) >= 2) as.integer(args[2]) else 20240611L, pr = pr)
}

# get_model compiles <name>.stan in dir once and caches the model as
# <name>.rds next to it (ignored by git).
get_model <- function(name, dir = ".") {
  rds <- file.path(dir, paste0(name, ".rds"))
  src <- file.path(dir, paste0(name, ".stan"))
  if (file.exists(rds) && file.mtime(rds) > file.mtime(src)) return(readRDS(rds))
  sm <- stan_model(src, model_name = name)
  saveRDS(sm, rds)
  sm
}

# nuts samples sm with NUTS (2 cores) and returns the draws of pars
# (iterations x chains x parameters), the seconds it took and the sampler's
# diagnostics: divergences, maximum tree depth, transitions at depth 10 or
# more, mean leapfrog steps, E-BFMI per chain.
nuts <- function(sm, data, chains, warmup, draws, seed, adapt_delta, pars) {
  t0 <- Sys.time()
  fit <- sampling(sm, data = data, chains = chains, cores = 2, iter = warmup + draws,
                  warmup = warmup, seed = seed, refresh = 0,
                  control = list(adapt_delta = adapt_delta), pars = pars)
  secs <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  print(get_elapsed_time(fit))
  sp <- get_sampler_params(fit, inc_warmup = FALSE)
  list(arr = as.array(fit), secs = secs,
       ndiv = sum(sapply(sp, function(x) sum(x[, "divergent__"]))),
       maxtd = max(sapply(sp, function(x) max(x[, "treedepth__"]))),
       ntd = sum(sapply(sp, function(x) sum(x[, "treedepth__"] >= 10))),
       leap = mean(sapply(sp, function(x) mean(x[, "n_leapfrog__"]))),
       bfmi = get_bfmi(fit))
}

# latent_summary: for f[1..N] of the draws arr, the posterior mean and sd,
# mcse_mean, mcse_sd, ess_bulk, ess_tail and rhat (posterior package), a row
# per item.
latent_summary <- function(arr, N) {
  summ <- function(x) c(mean = mean(x), sd = sd(x), mcse_mean = mcse_mean(x), mcse_sd = mcse_sd(x),
                        ess_bulk = ess_bulk(x), ess_tail = ess_tail(x), rhat = rhat(x))
  t(sapply(seq_len(N), function(n) summ(arr[, , sprintf("f[%d]", n)])))
}

# rbf_gram: concord's kernel.RBF, exp(-gamma |x_i - x_j|^2), exactly 1 on the
# diagonal, between the training rows tr of X (C) and from the test rows te
# to them (Ks).
rbf_gram <- function(X, tr, te, gamma) {
  sqd <- function(A, B) outer(rowSums(A^2), rowSums(B^2), "+") - 2 * A %*% t(B)
  C <- exp(-gamma * pmax(sqd(X[tr, ], X[tr, ]), 0)); diag(C) <- 1
  list(C = C, Ks = exp(-gamma * pmax(sqd(X[te, , drop = FALSE], X[tr, ]), 0)))
}

# ref_writer returns wr(x, file): x written as CSV under a '#' line naming
# the software and the sampler's settings, numbers to 10 significant digits
# (NA as empty).
ref_writer <- function(chains, draws, warmup, adapt_delta, seed) {
  fmtdf <- function(x) { num <- sapply(x, is.numeric); x[num] <- lapply(x[num], function(v) ifelse(is.na(v), "", sprintf("%.10g", v))); x }
  hdr <- sprintf("# rstan %s (Stan %s), posterior %s, %s; %d chains x %d draws after %d warmup, adapt_delta %g, seed %d",
                 packageVersion("rstan"), stan_version(), packageVersion("posterior"),
                 R.version.string, chains, draws, warmup, adapt_delta, seed)
  function(x, file) { con <- file(file, "w"); writeLines(hdr, con); write.csv(fmtdf(x), con, row.names = FALSE, quote = FALSE); close(con) }
}
