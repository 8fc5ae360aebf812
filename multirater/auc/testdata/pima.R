# Writes MASS's Pima.tr (200 training rows) and Pima.te (332 test rows) as
# CSV: the split of Ridgway et al.'s Pima row (7 covariates, 34% positive).
# Run from multirater/auc/testdata: Rscript pima.R
library(MASS)
write.csv(Pima.tr, "pima_tr.csv", row.names = FALSE, quote = FALSE)
write.csv(Pima.te, "pima_te.csv", row.names = FALSE, quote = FALSE)
# Reference: plain logistic regression trained on Pima.tr, test AUC
# (Mann-Whitney), the number quoted in /work/shared/papers/NOTES.md (0.866),
# and its training AUC on Pima.tr, written to pima_logit_auc.csv.
fit <- glm(type ~ ., data = Pima.tr, family = binomial)
mw <- function(s, y) {
  r <- rank(s)
  (sum(r[y]) - sum(y) * (sum(y) + 1) / 2) / (sum(y) * sum(!y))
}
writeLines(c("what,auc",
  sprintf("logit_test_auc,%.6f", mw(predict(fit, Pima.te), Pima.te$type == "Yes")),
  sprintf("logit_train_auc,%.6f", mw(predict(fit, Pima.tr), Pima.tr$type == "Yes"))),
  "pima_logit_auc.csv")
