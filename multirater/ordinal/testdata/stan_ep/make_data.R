# Copies the small real-data pieces used by the EP-vs-NUTS reference from the
# shared data folder into this folder (the Go test reads only these copies), and
# writes the fixed model parameters of each case to params.csv.
#
# Run from this folder: Rscript make_data.R [shared-data-dir]
# (default ../../../../../shared/data, i.e. /work/shared/data from the repository).
#
# Outputs
#   pyrimidines.csv  Chu & Ghahramani's Pyrimidines benchmark, 5 bins, partition 1
#                    (50 train / 24 test rows). Columns: row_id (Chu's row order),
#                    set (train|test), y = chu_label - 1 (level 0..4), x1..xD the
#                    covariates z-scored with the TRAINING means and sds (R's sd,
#                    denominator n - 1), covariates constant on the training rows
#                    dropped (D = 26 of 27). Written with 17 significant digits, so
#                    the Go test uses them as they are.
#   sirt_k1.csv      sirt data.ratings1, criterion k1: item_id, rater_id, label (0..3).
#   params.csv       one row per (case, rater): kernel, gamma, jitter, sigma, b
#                    (the K-1 thresholds, space-separated).
args <- commandArgs(trailingOnly = TRUE)
shared <- if (length(args) >= 1) args[1] else "../../../../../shared/data"

## Case 1: Pyrimidines -------------------------------------------------------
source("../../../testdata/pyrimidines.R")
pd <- pyrimidines(shared)
tr <- pd$tr
write_pyrimidines(pd, c(tr$chu_label, pd$te$chu_label) - 1L, "pyrimidines.csv")
D <- ncol(pd$Z)

# Thresholds: the probit quantiles of the training labels' cumulative
# proportions on the prior predictive scale of one rating, sd sqrt(1 + sigma^2)
# (the marginal of f + noise under f ~ N(0, 1)), rounded to 2 decimals.
ytr <- tr$chu_label - 1L
cum <- cumsum(tabulate(ytr + 1L, 5))[1:4] / length(ytr)
thr <- function(sigma) round(qnorm(cum) * sqrt(1 + sigma^2), 2)
gamma <- 1 / (2 * D)
fmt <- function(v) paste(sprintf("%.10g", v), collapse = " ")
rows <- list()
for (sg in c(0.4, 0.1)) {
  rows[[length(rows) + 1]] <- data.frame(
    case = sprintf("pyrimidines_sigma%s", format(sg)), data = "pyrimidines.csv",
    rater_id = "chu", kernel = "rbf", gamma = sprintf("%.17g", gamma), jitter = "1e-8",
    sigma = format(sg), b = fmt(thr(sg)))
}

## Case 2: sirt writing ratings, criterion k1 ------------------------------
r <- read.csv(file.path(shared, "sirt_writing_ratings1", "ratings.csv"),
              colClasses = c("character", "character", "integer", "character"))
r <- r[r$criterion == "k1", c("item_id", "rater_id", "label")]
write.csv(r, "sirt_k1.csv", row.names = FALSE, quote = FALSE)
cat(sprintf("sirt k1: %d ratings, %d items, %d raters, levels %s\n", nrow(r),
            length(unique(r$item_id)), length(unique(r$rater_id)),
            paste(sort(unique(r$label)), collapse = " ")))
# Per-rater sigma_l = 1/sqrt(E alpha_l) and b_l = E b_l, rounded to 2 decimals,
# from the Gibbs-model Stan reference ../stan/sirt_k1_reference.csv (the
# posterior means of the same data under Rogers et al.'s model with priors).
ref <- read.csv("../stan/sirt_k1_reference.csv", comment.char = "#",
                colClasses = c(rater_id = "character"))
for (rid in sort(unique(r$rater_id))) {
  a <- ref$mean[ref$kind == "alpha" & ref$rater_id == rid]
  b <- ref$mean[ref$kind == "b" & ref$rater_id == rid][order(ref$k[ref$kind == "b" & ref$rater_id == rid])]
  rows[[length(rows) + 1]] <- data.frame(
    case = "sirt_k1", data = "sirt_k1.csv", rater_id = rid, kernel = "identity",
    gamma = "", jitter = "0", sigma = sprintf("%.2f", 1 / sqrt(a)), b = fmt(round(b, 2)))
}
params <- do.call(rbind, rows)
write.csv(params, "params.csv", row.names = FALSE, quote = FALSE)
print(params)
