# NUTS reference for the EP posterior latent means and sds of reference_test.go:
# robust_gp_fixed.stan (Stan 2.21 via rstan) on ionosphere40.csv with
# C = exp(-gamma |x - x'|^2) + 1e-8 I, gamma = 1/32, or on thyroid40.csv with
# gamma = 0.05, at the cases' fixed (eps, s). 4 chains x (1000 warmup + 5000
# draws), seed 20240616.
#
# Run from this folder: Rscript nuts_reference.R [ionosphere|thyroid] [case ...]
# (default ionosphere, every case).
# Writes ref_nuts.csv (case, item, mean, sd, se_mean, n_eff, rhat; item 0-based)
# and ref_nuts_diagnostics.csv (case, max_rhat, min_n_eff, divergences,
# max_treedepth_hits, seconds); for thyroid ref_thyroid_nuts.csv and
# ref_thyroid_nuts_diagnostics.csv. The compiled model is cached as
# robust_gp_fixed.rds (not needed by the Go test).
suppressMessages(library(rstan))
rstan_options(auto_write = FALSE)
datasets <- list(ionosphere = list(file = "ionosphere40.csv", gamma = 1 / 32, prefix = "ref_"),
                 thyroid = list(file = "thyroid40.csv", gamma = 0.05, prefix = "ref_thyroid_"))
only <- commandArgs(trailingOnly = TRUE)
ds <- datasets$ionosphere
if (length(only) > 0 && only[1] %in% names(datasets)) {
  ds <- datasets[[only[1]]]
  only <- only[-1]
}
d <- read.csv(ds$file)
X <- as.matrix(d[, grep("^x", names(d))])
N <- nrow(X)
gamma <- ds$gamma
D2 <- as.matrix(dist(X))^2
C <- exp(-gamma * D2) + diag(1e-8, N)
cases <- data.frame(case = c("A", "B", "C", "D"), eps = c(0, 0.1, 0.05, 0.1), s = c(1, 1, 0.5, 0.5))

rds <- "robust_gp_fixed.rds"
if (file.exists(rds) && file.mtime(rds) > file.mtime("robust_gp_fixed.stan")) {
  sm <- readRDS(rds)
} else {
  sm <- stan_model("robust_gp_fixed.stan", model_name = "robust_gp_fixed")
  saveRDS(sm, rds)
}
lat <- list()
diag <- list()
for (k in seq_len(nrow(cases))) {
  cs <- cases[k, ]
  if (length(only) > 0 && !(cs$case %in% only)) next
  t0 <- Sys.time()
  fit <- sampling(sm, data = list(N = N, y = d$y, C = C, eps = cs$eps, s = cs$s),
                  chains = 4, iter = 6000, warmup = 1000, cores = 2, seed = 20240616,
                  refresh = 0)
  secs <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  sm_f <- summary(fit, pars = "f")$summary
  sp <- get_sampler_params(fit, inc_warmup = FALSE)
  div <- sum(sapply(sp, function(x) sum(x[, "divergent__"])))
  td <- sum(sapply(sp, function(x) sum(x[, "treedepth__"] >= 10)))
  lat[[cs$case]] <- data.frame(case = cs$case, item = seq_len(N) - 1,
                               mean = sprintf("%.10g", sm_f[, "mean"]), sd = sprintf("%.10g", sm_f[, "sd"]),
                               se_mean = sprintf("%.4g", sm_f[, "se_mean"]), n_eff = round(sm_f[, "n_eff"]),
                               rhat = sprintf("%.5f", sm_f[, "Rhat"]))
  diag[[cs$case]] <- data.frame(case = cs$case, max_rhat = sprintf("%.5f", max(sm_f[, "Rhat"])),
                                min_n_eff = round(min(sm_f[, "n_eff"])), divergences = div,
                                max_treedepth_hits = td, seconds = round(secs, 1))
  cat(sprintf("case %s: max Rhat %.4f, min n_eff %d, %d divergences, %.0f s\n", cs$case,
              max(sm_f[, "Rhat"]), round(min(sm_f[, "n_eff"])), div, secs))
}
write.csv(do.call(rbind, lat), paste0(ds$prefix, "nuts.csv"), row.names = FALSE, quote = FALSE)
write.csv(do.call(rbind, diag), paste0(ds$prefix, "nuts_diagnostics.csv"), row.names = FALSE, quote = FALSE)
