# Writes MASS's Pima.tr (200 training rows) and Pima.te (332 test rows) as
# CSV: the split of Ridgway et al.'s Pima row (7 covariates, 34% positive).
# Run from multirater/auc/testdata: Rscript pima.R
library(MASS)
write.csv(Pima.tr, "pima_tr.csv", row.names = FALSE, quote = FALSE)
write.csv(Pima.te, "pima_te.csv", row.names = FALSE, quote = FALSE)
# Reference: plain logistic regression trained on Pima.tr, test AUC
# (Mann-Whitney), the number quoted in /work/shared/papers/NOTES.md (0.866).
fit <- glm(type ~ ., data = Pima.tr, family = binomial)
s <- predict(fit, Pima.te)
y <- Pima.te$type == "Yes"
r <- rank(s)
auc <- (sum(r[y]) - sum(y) * (sum(y) + 1) / 2) / (sum(y) * sum(!y))
cat(sprintf("logit_test_auc,%.6f\n", auc))
