# Compiles bounded_gp_fixed.stan once and caches the model as an .rds next to it
# (not committed). Used by reference.R.
suppressMessages(library(rstan))
get_model <- function(dir = ".") {
  rds <- file.path(dir, "bounded_gp_fixed.rds")
  src <- file.path(dir, "bounded_gp_fixed.stan")
  if (file.exists(rds) && file.mtime(rds) > file.mtime(src)) return(readRDS(rds))
  sm <- stan_model(src, model_name = "bounded_gp_fixed")
  saveRDS(sm, rds)
  sm
}
