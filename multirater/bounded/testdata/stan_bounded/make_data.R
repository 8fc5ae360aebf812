# Copies the Pyrimidines data used by the bounded-likelihood NUTS reference from
# the shared data folder into this folder (the Go test reads only these copies),
# and writes the fixed model parameters of each case to params.csv.
#
# Run from this folder: Rscript make_data.R [shared-data-dir]
# (default ../../../../../shared/data, i.e. /work/shared/data from the repository).
#
# Outputs
#   pyrimidines_bounded.csv  Chu & Ghahramani's Pyrimidines benchmark, partition 1
#                    of the 5-bin task (50 train / 24 test rows), the same rows and
#                    covariates as ../../../ordinal/testdata/stan_ep/pyrimidines.csv
#                    but with the CONTINUOUS target. Columns: row_id (Chu's row
#                    order), set (train|test), y = activity (in [0.44, 0.9]),
#                    x1..xD the covariates z-scored with the TRAINING means and
#                    sds (R's sd, denominator n - 1), covariates constant on the
#                    training rows dropped (D = 26 of 27). y and x written with 17
#                    significant digits, so the Go test uses them as they are.
#   params.csv       one row per case: case, likelihood (beta|truncgauss), nu,
#                    gamma, jitter.
args <- commandArgs(trailingOnly = TRUE)
shared <- if (length(args) >= 1) args[1] else "../../../../../shared/data"

source("../../../testdata/pyrimidines.R")
pd <- pyrimidines(shared)
y <- c(pd$d$activity[pd$itr], pd$d$activity[pd$ite])
stopifnot(all(y > 0 & y < 1))
write_pyrimidines(pd, sprintf("%.17g", y), "pyrimidines_bounded.csv")
tr <- pd$tr; D <- ncol(pd$Z)
cat(sprintf("y range: train [%g, %g], test [%g, %g]\n", min(y[seq_len(nrow(tr))]),
            max(y[seq_len(nrow(tr))]), min(y[-seq_len(nrow(tr))]), max(y[-seq_len(nrow(tr))])))

gamma <- 1 / (2 * D)
params <- data.frame(case = c("pyr_beta_nu20", "pyr_tg_nu10", "pyr_beta_nu5"),
                     likelihood = c("beta", "truncgauss", "beta"),
                     nu = c("20", "10", "5"),
                     gamma = sprintf("%.17g", gamma), jitter = "1e-8")
write.csv(params, "params.csv", row.names = FALSE, quote = FALSE)
print(params)
