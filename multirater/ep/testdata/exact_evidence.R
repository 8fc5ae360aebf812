# Exact log evidence of the ordinal probit GP for multirater/ep's tests:
# with g_j = f_item(j) + e_j, e_j ~ N(0, sigma_l(j)^2), f ~ N(0, C), the
# evidence is the Gaussian box probability
#   P(b_l(y_j - 1) < g_j <= b_l(y_j) for every rating j),  g ~ N(0, A C A' + diag(sigma^2)),
# computed by mvtnorm::pmvnorm (Genz-Bretz, Debian r-cran-mvtnorm 1.1.3).
# Run: Rscript exact_evidence.R > exact_evidence.csv
library(mvtnorm)
set.seed(1)
box <- function(S, lo, hi) {
  p <- pmvnorm(lower = lo, upper = hi, sigma = S, algorithm = GenzBretz(maxpts = 2e7, abseps = 0, releps = 1e-6))
  c(log(p[1]), attr(p, "error") / p[1])
}
out <- data.frame(case = character(), logZ = numeric(), relerr = numeric())

# 1. Pyrimidines, first 10 rows, 9 inputs p1_*, 5 levels (y_bin5): one rater, RBF gamma = 0.5/9
#    (Chu's kappa = 1/d), thresholds -1.5, -0.5, 0.5, 1.5, sigma = 0.5.
d <- read.csv("pyrimidines10.csv")
X <- as.matrix(d[, 2:10]); y <- d$y_bin5
gamma <- 0.5 / 9
D2 <- as.matrix(dist(X))^2
C <- exp(-gamma * D2)
b <- c(-Inf, -1.5, -0.5, 0.5, 1.5, Inf); sigma <- 0.5
r <- box(C + diag(sigma^2, nrow(C)), b[y], b[y + 1])
out <- rbind(out, data.frame(case = "pyrimidines10", logZ = r[1], relerr = r[2]))

# 2. sirt k1, first 6 essays, their 18 ratings by 7 raters, levels 0..3, identity kernel (C = I), each
#    rater's thresholds b_l = (-1, 0, 1) + shift_l and sigma_l from the tables below (rater order as in
#    the file's first appearance).
s <- read.csv("sirt_k1_6items.csv", colClasses = c("character", "character", "integer"))
items <- unique(s$item_id); raters <- unique(s$rater_id)
shift <- seq(-0.3, 0.3, length.out = length(raters)); sig <- seq(0.6, 1.2, length.out = length(raters))
A <- matrix(0, nrow(s), length(items)); A[cbind(seq_len(nrow(s)), match(s$item_id, items))] <- 1
l <- match(s$rater_id, raters)
S <- A %*% t(A) + diag(sig[l]^2)
bl <- function(k, li) { v <- c(-Inf, -1 + shift[li], 0 + shift[li], 1 + shift[li], Inf); v[k + 1] }
lo <- mapply(bl, s$label, l); hi <- mapply(bl, s$label + 1, l)
r <- box(S, lo, hi)
out <- rbind(out, data.frame(case = "sirt_k1_6items_identity", logZ = r[1], relerr = r[2]))

# 3. The same ratings with an RBF kernel on the essays' positions 1..6 (gamma 0.3, amplitude 1).
pos <- seq_along(items)
C2 <- exp(-0.3 * outer(pos, pos, "-")^2)
S2 <- A %*% C2 %*% t(A) + diag(sig[l]^2)
r <- box(S2, lo, hi)
out <- rbind(out, data.frame(case = "sirt_k1_6items_rbf", logZ = r[1], relerr = r[2]))
write.csv(out, row.names = FALSE, quote = FALSE)
