# Compiles ordinal_multirater.stan once and caches the model as an .rds next to it
# (not committed). Used by sirt_k1_reference.R and speed_toy.R.
suppressMessages(library(rstan))
get_model <- function(dir = ".") {
  rds <- file.path(dir, "ordinal_multirater.rds")
  src <- file.path(dir, "ordinal_multirater.stan")
  if (file.exists(rds) && file.mtime(rds) > file.mtime(src)) return(readRDS(rds))
  sm <- stan_model(src, model_name = "ordinal_multirater")
  saveRDS(sm, rds)
  sm
}
