# Reference intraclass correlations from R psych::ICC (Debian bookworm:
# r-cran-psych 2.2.9, r-cran-lme4 1.1-31). Run from raters/testdata:
#
#   Rscript make_reference_icc.R > reference_icc.csv
#
# psych::ICC's default (lmer = TRUE) fits values ~ 1 + (1|id) + (1|items) by
# REML with lme4 on every available rating and builds the mean squares from
# the variance components; "anova" rows are psych::ICC(na.omit(x), lmer =
# FALSE), the classical two-way ANOVA on the complete rows.
# lme4's default optimiser settings (ftol_abs = xtol_abs = 1e-8) stop where
# the REML criterion is flat, leaving the ICCs up to 7e-6 from the optimum;
# psych::ICC passes no control to lmer, so lme4::lmer is wrapped here with
# tight tolerances (the model and everything psych computes from it are
# unchanged).
suppressMessages({library(psych); library(lme4)})
lmerDefault <- lme4::lmer
lmerTight <- function(formula, data = NULL, REML = TRUE, control = lmerControl(), ...) {
  lmerDefault(formula, data = data, REML = REML,
    control = lmerControl(optimizer = "nloptwrap", calc.derivs = FALSE,
      optCtrl = list(xtol_abs = 1e-14, ftol_abs = 1e-15, xtol_rel = 1e-14, ftol_rel = 1e-15, maxeval = 1e5)), ...)
}
environment(lmerTight) <- environment(lmerDefault)
assignInNamespace("lmer", lmerTight, ns = "lme4")
wide <- function(path, dataset = NULL) {
  d <- read.csv(path, colClasses = "character")
  if (!is.null(dataset)) d <- d[d$dataset == dataset, ]
  items <- unique(d$item_id); raters <- unique(d$rater_id)
  m <- matrix(NA_real_, length(items), length(raters), dimnames = list(items, raters))
  for (x in seq_len(nrow(d))) m[d$item_id[x], d$rater_id[x]] <- as.numeric(d$label[x])
  m
}
out <- function(name, method, x, lmer) {
  r <- ICC(x, lmer = lmer)
  res <- r$results
  st <- r$stats
  crit <- if (lmer) lme4::REMLcrit(r$summary) else NA
  for (i in 1:6) {
    cat(sprintf("%s,%s,%s,%.15g,%.15g,%.15g,%.15g,%.15g,%.15g,%.15g,%d,%d,%.15g\n", name, method,
                res$type[i], res$ICC[i], res[i, "lower bound"], res[i, "upper bound"],
                st["MS", "subjects"], st["MS", "Judges"], st["MS", "Residual"], r$MSW,
                r$n.obs, r$n.judge, crit))
  }
}
cat("dataset,method,type,icc,lower,upper,msb,msj,mse,msw,n,k,remlcrit\n")
sets <- list(
  kripp2011 = wide("gwet_irrcac_ratings.csv", "cac.raw4raters"),
  x.raw10x4 = wide("gwet_irrcac_ratings.csv", "x.raw10x4"),
  cac.raw5obser = wide("gwet_irrcac_ratings.csv", "cac.raw5obser"),
  fleiss1971 = wide("fleiss1971_ratings.csv"),
  sirt1_k1 = wide("sirt1_k1_ratings.csv"),
  anger = wide("affect_anger_ratings.csv"))
for (name in names(sets)) {
  x <- sets[[name]]
  suppressMessages(out(name, "reml", x, TRUE))
  cc <- na.omit(x)
  if (nrow(cc) >= 2) suppressMessages(out(name, "anova", cc, FALSE))
}
