# irrCAC's finite-population correction (its functions' argument N, f = n/N,
# every variance multiplied by 1 - f) as reference numbers for
# Options.Population and TableOptions.Population (issue 34).
#
# Run from raters/testdata with Debian's r-base-core (bookworm, R 4.2):
#
#     IRRCAC_R=/path/to/irrCAC-1.0/R IRRCAC14_R=/path/to/irrCAC-1.4/R \
#         Rscript make_reference_irrcac_population.R > reference_irrcac_population.csv
#
# irrCAC's sources are not kept in this repository (GPL >= 2). The table
# and distribution functions come from CRAN irrCAC 1.0 (github.com/cran/irrCAC
# @ 41b40b4; IRRCAC_R is its R/ folder: weights.gen.r, agree.coeff2.r,
# agree.coeff3.dist.r), as in make_reference_irrcac_tables.R; the raw-data
# functions from irrCAC 1.4 (github.com/kgwet/irrCAC @ 7fb7509; IRRCAC14_R:
# weights.gen.r, agree.coeff3.raw.r, sourced into an environment of their
# own), the version of gwet_irrcac_reference.csv: 1.0's krippen.alpha.raw
# has another variance, and 1.4 takes its f = n0/N with n0 every subject,
# before the items with fewer than two ratings are dropped. The sources are
# sourced unchanged. irrCAC rounds what it
# returns (coefficients and SE to 5 decimals, intervals to 3): the script
# defines round() as the identity in the global environment, where the
# sourced functions find it before base's, so that they return their
# numbers at full precision; round() is used by them for printing only.
#
# Inputs: the raw ratings of gwet_irrcac_ratings.csv (long form, made wide
# here: one row per item that has a rating, one column per rater, NA where
# the rater gave none; cac.raw2raters with its two blank cells as a label,
# as blanksAsCategory in irrcac_test.go), the contingency tables
# irrcac_cont3x3abstractors.csv, irrcac_cont4x4diagnosis.csv and the counts
# irrcac_distrib.6raters.csv, irrcac_cac.dist4cat.csv. Each at three
# population sizes: N = n (f = 1), N = 2n + 3 and N = 1000, n being the n
# of the function's f (the items, the table's total, the count rows).
#
# Output: input, coefficient, weights, population, value, se, lcb, ucb,
# p_value: irrCAC's p-value, NaN where SE is 0. irrCAC 1.0's is two-sided,
# 2(1 - F_t(|c|/SE; n-1)) (the table functions print it with 4
# significant digits, which round() does not govern), irrCAC 1.4's raw
# functions' one-sided, 1 - F_t(c/SE; n-1).
src <- Sys.getenv("IRRCAC_R", unset = "irrcac_R")
source(file.path(src, "weights.gen.r"))
source(file.path(src, "agree.coeff2.r"))
source(file.path(src, "agree.coeff3.dist.r"))
source("irrcac14.R") # e14 (irrCAC 1.4), round() the identity, ci(), fmt()
out <- data.frame()
add <- function(input, coef, w, N, value, se, conf, p) {
  b <- ci(conf)
  if (!is.finite(se) || se == 0) p <- NaN
  out <<- rbind(out, data.frame(input = input, coefficient = coef, weights = w, population = N,
    value = fmt(value), se = fmt(se), lcb = fmt(b[1]), ucb = fmt(b[2]), p_value = fmt(as.numeric(p))))
}
pops <- function(n) c(n, 2 * n + 3, 1000)

long <- read.csv("gwet_irrcac_ratings.csv", colClasses = "character")
blanks <- data.frame(dataset = "cac.raw2raters", item_id = c("9", "11"), rater_id = c("rater2", "rater1"),
                     label = "(blank)", group = "")
long <- rbind(long, blanks)
raw <- list(percent_agreement = e14$pa.coeff.raw, fleiss_kappa = e14$fleiss.kappa.raw, conger_kappa = e14$conger.kappa.raw,
            gwet = e14$gwet.ac1.raw, brennan_prediger = e14$bp.coeff.raw, krippendorff_alpha = e14$krippen.alpha.raw)
for (ds in unique(long$dataset)) {
  d <- long[long$dataset == ds, ]
  items <- unique(d$item_id)
  raters <- unique(d$rater_id)
  wide <- matrix(NA_character_, length(items), length(raters))
  wide[cbind(match(d$item_id, items), match(d$rater_id, raters))] <- d$label
  wide <- as.data.frame(wide, stringsAsFactors = FALSE)
  numeric <- !any(is.na(suppressWarnings(as.numeric(d$label))))
  if (numeric) wide[] <- lapply(wide, as.numeric)
  ws <- if (ds == "cac.raw4raters") c("unweighted", "linear", "quadratic") else "unweighted"
  for (w in ws) for (N in pops(nrow(wide))) for (coef in names(raw)) {
    e <- raw[[coef]](wide, weights = w, N = N)$est
    add(ds, coef, w, N, e$coeff.val, e$coeff.se, e$conf.int, e$p.value)
  }
}

wmat <- function(name, q) switch(name, unweighted = identity.weights(1:q), quadratic = quadratic.weights(1:q))
for (input in c("irrcac_cont3x3abstractors.csv", "irrcac_cont4x4diagnosis.csv")) {
  tab <- as.matrix(read.csv(input, row.names = 1, check.names = FALSE))
  fns <- list(cohen_kappa = kappa2.table, scott_pi = scott2.table, gwet = gwet.ac1.table,
              brennan_prediger = bp2.table, krippendorff_alpha = krippen2.table, percent_agreement = pa2.table)
  for (w in c("unweighted", "quadratic")) for (N in pops(sum(tab))) for (coef in names(fns)) {
    r <- fns[[coef]](tab, weights = wmat(w, ncol(tab)), N = N)
    add(input, coef, w, N, r$coeff.val, r$coeff.se, r$coeff.ci, r$coeff.pval)
  }
}

for (input in c("irrcac_distrib.6raters.csv", "irrcac_cac.dist4cat.csv")) {
  cnt <- as.matrix(read.csv(input, check.names = FALSE)[, -1])
  fns <- list(fleiss_kappa = fleiss.kappa.dist, gwet = gwet.ac1.dist, brennan_prediger = bp.coeff.dist,
              krippendorff_alpha = krippen.alpha.dist, percent_agreement = pa.coeff.dist)
  for (w in c("unweighted", "quadratic")) for (N in pops(nrow(cnt))) for (coef in names(fns)) {
    r <- fns[[coef]](cnt, weights = w, N = N)
    add(input, coef, w, N, r$coeff, r$stderr, r$conf.int, r$p.value)
  }
}
write.csv(out, stdout(), row.names = FALSE, quote = FALSE)
