# Writes pima_glm.csv: the coefficients of R's glm(type ~ ., binomial) on
# Pima.tr (pima_tr.csv, copied from multirater/auc/testdata, MASS's Pima.tr),
# the reference of TestLogisticIRLSMatchesGLM. Run: Rscript pima_glm.R
tr <- read.csv("pima_tr.csv")
tr$type <- as.integer(tr$type == "Yes")
fit <- glm(type ~ ., family = binomial, data = tr, control = glm.control(epsilon = 1e-14, maxit = 100))
co <- coef(fit)
se <- sqrt(diag(vcov(fit)))
write.csv(data.frame(term = names(co), estimate = sprintf("%.12g", co), se = sprintf("%.12g", se)), "pima_glm.csv", row.names = FALSE, quote = FALSE)
