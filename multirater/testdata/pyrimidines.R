# Chu & Ghahramani's Pyrimidines benchmark, partition 1 of the 5-bin task
# (50 train / 24 test rows), as the NUTS reference data of
# ordinal/testdata/stan_ep and bounded/testdata/stan_bounded read it.
# Source it from the script's folder with its relative path.

# pyrimidines reads the data and the partition from the shared data folder
# and returns the train and test partition rows (tr, te, in Chu's order),
# their rows of the data (itr, ite), the data d, and Z: the covariates of
# the train then the test rows z-scored with the TRAINING means and sds (R's
# sd, denominator n - 1), covariates constant on the training rows dropped.
pyrimidines <- function(shared) {
  d <- read.csv(file.path(shared, "chu_ordinal_pyrimidines", "data.csv"))
  p <- read.csv(file.path(shared, "chu_ordinal_pyrimidines", "chu_partitions.csv"))
  p <- p[p$bins == 5 & p$partition == 1, ]
  feat <- setdiff(names(d), c("row_id", "activity", "y_bin5", "y_bin10"))
  tr <- p[p$set == "train", ]
  te <- p[p$set == "test", ]
  itr <- match(tr$row_id, d$row_id)
  ite <- match(te$row_id, d$row_id)
  Xtr <- as.matrix(d[itr, feat])
  Xte <- as.matrix(d[ite, feat])
  mu <- colMeans(Xtr)
  s <- apply(Xtr, 2, sd)
  keep <- s > 0
  cat(sprintf("pyrimidines: %d covariates, %d constant on the training rows dropped: %s\n",
              length(feat), sum(!keep), paste(feat[!keep], collapse = " ")))
  Z <- scale(rbind(Xtr, Xte)[, keep], center = mu[keep], scale = s[keep])
  list(d = d, tr = tr, te = te, itr = itr, ite = ite, Z = Z)
}

# write_pyrimidines writes the train then the test rows of pd (a value of
# pyrimidines) as row_id, set (train|test), y (the target of each row, in
# that order) and the covariates x1..xD (17 significant digits, so the Go
# tests use them as they are).
write_pyrimidines <- function(pd, y, file) {
  out <- data.frame(row_id = c(pd$tr$row_id, pd$te$row_id),
                    set = c(rep("train", nrow(pd$tr)), rep("test", nrow(pd$te))), y = y)
  zc <- as.data.frame(matrix(sprintf("%.17g", pd$Z), nrow = nrow(pd$Z)))
  names(zc) <- paste0("x", seq_len(ncol(pd$Z)))
  write.csv(cbind(out, zc), file, row.names = FALSE, quote = FALSE)
}
