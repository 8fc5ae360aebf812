# Writes thyroid40.csv: the fixed 40-row subset of the New Thyroid data (Kim &
# Ghahramani's own data set; UCI "Thyroid gland data", 215 rows) used by the EP
# references (ep_reference.py, exact_evidence.R, is_evidence.py,
# nuts_reference.R, each run with the argument "thyroid") and by
# reference_test.go.
#
# Source: R's mclust::thyroid (mclust 6.0.0; columns Diagnosis, RT3U, T4, T3,
# TSH, DTSH).
# Run from this folder: Rscript make_thyroid.R
#
# Selection rule: rows 0, 5, 10, ..., 195 (0-based rows of mclust::thyroid,
# i.e. every 5th row starting at the first; 40 rows). Inputs: the 5 columns
# RT3U, T4, T3, TSH, DTSH (named x1..x5 here), each z-scored over the 40
# selected rows (mean, and sd with denominator n - 1). Label y = +1 for
# Diagnosis "Hypo" or "Hyper" (not normal), -1 for "Normal". Written with 17
# significant digits, so every tool reads the same doubles; same layout as
# ionosphere40.csv (row, y, x1..x5).
suppressMessages(library(mclust))
data(thyroid)
sel <- seq(0, 195, by = 5)
stopifnot(length(sel) == 40, nrow(thyroid) == 215)
cols <- c("RT3U", "T4", "T3", "TSH", "DTSH")
X <- as.matrix(thyroid[sel + 1, cols])
mu <- colMeans(X)
sdv <- apply(X, 2, sd)
stopifnot(all(sdv > 0))
Z <- sweep(sweep(X, 2, mu), 2, sdv, "/")
dg <- as.character(thyroid$Diagnosis[sel + 1])
y <- ifelse(dg == "Normal", -1L, 1L)
out <- file("thyroid40.csv", "w")
writeLines(paste(c("row", "y", paste0("x", 1:5)), collapse = ","), out)
for (i in seq_along(sel)) {
  writeLines(paste(c(as.character(sel[i]), as.character(y[i]), sprintf("%.17g", Z[i, ])), collapse = ","), out)
}
close(out)
cat("rows", sel[1], "...", sel[length(sel)], "n =", length(sel),
    "not normal (y = +1) =", sum(y == 1), "(Hypo", sum(dg == "Hypo"), "Hyper", sum(dg == "Hyper"), ")",
    "normal (y = -1) =", sum(y == -1), "\n")
