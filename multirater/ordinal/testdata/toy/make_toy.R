# The synthetic ordinal data set of Rogers, Girolami & Polajnar (2010), sec. 3.1:
#   N = 200 items with x_n ~ N(0, 1);
#   L = 4 raters with precisions alpha = (1, 0.5, 2, 4);
#   each rater's latent value y_nl = 1 - 2 x_n + eps_nl, eps_nl ~ N(0, 1/alpha_l)
#   (the paper's m_nl; the true consensus trait is m_n = 1 - 2 x_n);
#   K = 5 grades; each rater's 4 thresholds are drawn from N(0, 1) subject to the
#   order constraints (i.e. 4 iid N(0,1) draws, sorted);
#   t_nl = k iff b_l,k-1 < y_nl <= b_lk (b_l0 = -Inf, b_l5 = +Inf).
# Every rater rates every item. The model fitted to it uses an RBF kernel with
# gamma = 1 on x (eq. 20): C_ij = exp(-gamma (x_i - x_j)^2).
#
# Run: Rscript make_toy.R   (Debian r-base-core 4.2.2; writes the CSVs here)
# Files: items.csv (item_id,x1), ratings.csv (item_id,rater_id,label with label
# 1..5), truth.csv (param,id,k,value: m per item, alpha and thresholds b per rater).
set.seed(31)
N <- 200; L <- 4; K <- 5
alpha <- c(1, 0.5, 2, 4)
x <- rnorm(N)
m <- 1 - 2 * x
b <- t(sapply(seq_len(L), function(l) sort(rnorm(K - 1))))
item_id <- sprintf("i%03d", seq_len(N))
rater_id <- sprintf("r%d", seq_len(L))
ratings <- NULL
for (l in seq_len(L)) {
  y <- m + rnorm(N, 0, 1 / sqrt(alpha[l]))
  t <- findInterval(y, b[l, ], left.open = TRUE) + 1  # b_{k-1} < y <= b_k
  ratings <- rbind(ratings, data.frame(item_id = item_id, rater_id = rater_id[l], label = t))
}
ratings <- ratings[order(ratings$item_id, ratings$rater_id), ]
f <- function(v) sprintf("%.17g", v)
write.csv(data.frame(item_id = item_id, x1 = f(x)), "items.csv", row.names = FALSE, quote = FALSE)
write.csv(ratings, "ratings.csv", row.names = FALSE, quote = FALSE)
truth <- rbind(
  data.frame(param = "m", id = item_id, k = "", value = f(m)),
  data.frame(param = "alpha", id = rater_id, k = "", value = f(alpha)),
  data.frame(param = "b", id = rep(rater_id, each = K - 1), k = rep(seq_len(K - 1), L),
             value = f(as.vector(t(b)))))
write.csv(truth, "truth.csv", row.names = FALSE, quote = FALSE)
print(table(ratings$rater_id, ratings$label))
print(round(b, 3))
