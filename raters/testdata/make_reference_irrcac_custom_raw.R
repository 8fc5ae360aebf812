# irrCAC's raw-data functions with a user-given weight matrix, as reference
# numbers for Options.WeightMatrix on raw labels (issue 34: --weights-file
# with --labels/--project).
#
# Run from raters/testdata with Debian's r-base-core (bookworm, R 4.2):
#
#     IRRCAC14_R=/path/to/irrCAC-1.4/R Rscript make_reference_irrcac_custom_raw.R > reference_irrcac_custom_raw.csv
#
# irrCAC 1.4 (github.com/kgwet/irrCAC @ 7fb7509, GPL >= 2, not kept here;
# IRRCAC14_R is its R/ folder: weights.gen.r, agree.coeff3.raw.r, sourced
# unchanged) takes `weights` as a q x q matrix as well as a name. round()
# is made the identity, as in make_reference_irrcac_population.R, so that
# the functions return full precision.
#
# Inputs: the two-rater tables irrcac_cont3x3abstractors.csv and
# irrcac_cont4x4diagnosis.csv expanded to raw labels (one subject per
# count; categories coded 1..q in the table's order), and the 4-rater
# ordinal ratings cac.raw4raters of gwet_irrcac_ratings.csv (categories
# 1..5), each with the custom matrix written below (the same in
# weightmatrix_raw_test.go).
#
# Output: input, coefficient, value, se, lcb, ucb.
source("irrcac14.R") # e14 (irrCAC 1.4), round() the identity, ci(), fmt()
raw <- list(percent_agreement = e14$pa.coeff.raw, fleiss_kappa = e14$fleiss.kappa.raw, conger_kappa = e14$conger.kappa.raw,
            gwet = e14$gwet.ac1.raw, brennan_prediger = e14$bp.coeff.raw, krippendorff_alpha = e14$krippen.alpha.raw)
w3 <- matrix(c(1, 0.9, 0.2, 0.9, 1, 0.5, 0.2, 0.5, 1), 3, byrow = TRUE)
w4 <- matrix(c(1, 0.8, 0.1, 0, 0.8, 1, 0.3, 0.1, 0.1, 0.3, 1, 0.6, 0, 0.1, 0.6, 1), 4, byrow = TRUE)
w5 <- matrix(c(1, 0.7, 0.4, 0.1, 0, 0.7, 1, 0.7, 0.3, 0.1, 0.4, 0.7, 1, 0.6, 0.2, 0.1, 0.3, 0.6, 1, 0.9, 0, 0.1, 0.2, 0.9, 1), 5, byrow = TRUE)
expand <- function(file) {
  tab <- as.matrix(read.csv(file, row.names = 1, check.names = FALSE))
  q <- nrow(tab)
  r2 <- rep(rep(1:q, q), times = as.vector(t(tab)))
  r1 <- rep(rep(1:q, each = q), times = as.vector(t(tab)))
  data.frame(rows = r1, columns = r2)
}
long <- read.csv("gwet_irrcac_ratings.csv", colClasses = "character")
d <- long[long$dataset == "cac.raw4raters", ]
items <- unique(d$item_id)
raters <- unique(d$rater_id)
wide <- matrix(NA_real_, length(items), length(raters))
wide[cbind(match(d$item_id, items), match(d$rater_id, raters))] <- as.numeric(d$label)
inputs <- list(
  list(name = "irrcac_cont3x3abstractors.csv", data = expand("irrcac_cont3x3abstractors.csv"), w = w3),
  list(name = "irrcac_cont4x4diagnosis.csv", data = expand("irrcac_cont4x4diagnosis.csv"), w = w4),
  list(name = "cac.raw4raters", data = as.data.frame(wide), w = w5))
out <- data.frame()
for (inp in inputs) for (coef in names(raw)) {
  e <- raw[[coef]](inp$data, weights = inp$w)$est
  b <- ci(e$conf.int)
  out <- rbind(out, data.frame(input = inp$name, coefficient = coef, value = fmt(e$coeff.val), se = fmt(e$coeff.se),
                               lcb = fmt(b[1]), ucb = fmt(b[2])))
}
write.csv(out, stdout(), row.names = FALSE, quote = FALSE)
