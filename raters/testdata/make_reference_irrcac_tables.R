# irrCAC's table and distribution functions on irrCAC's own example tables,
# every weighting, as reference numbers for AnalyzeTable and AnalyzeCounts
# (issue 34).
#
# Run from raters/testdata with Debian's r-base-core (bookworm, R 4.2):
#
#     Rscript make_reference_irrcac_tables.R > reference_irrcac_tables.csv
#
# irrCAC is not packaged by Debian: irrcac_R/ holds its R sources verbatim
# (CRAN irrCAC 1.0, github.com/cran/irrCAC @ 41b40b4, R/agree.coeff2.r,
# R/agree.coeff3.dist.r and R/weights.gen.r, GPL >= 2), which this script
# sources. The inputs are the package's inst/extdata tables
# irrcac_cont3x3abstractors.csv, irrcac_cont4x4diagnosis.csv (two-rater
# contingency tables) and irrcac_distrib.6raters.csv, irrcac_cac.dist4cat.csv
# (per-subject category counts). The weights are on the category positions
# 1..q, irrCAC's default for its table functions (and the dist functions'
# categ = NULL).
#
# Output: input, coefficient, weights, value, se, lcb, ucb, p_value, where
# lcb and ucb are parsed from irrCAC's conf.int (rounded by irrCAC to 3
# decimals) and p_value is irrCAC's 2*(1-pt(coeff/se, n-1)) (the table
# functions print it with 4 significant digits).
source("irrcac_R/weights.gen.r")
source("irrcac_R/agree.coeff2.r")
source("irrcac_R/agree.coeff3.dist.r")

weights <- c("unweighted", "linear", "quadratic", "ordinal", "radical", "ratio", "circular", "bipolar")
wmat <- function(name, q) {
  categ <- 1:q
  switch(name,
    unweighted = identity.weights(categ), linear = linear.weights(categ),
    quadratic = quadratic.weights(categ), ordinal = ordinal.weights(categ),
    radical = radical.weights(categ), ratio = ratio.weights(categ),
    circular = circular.weights(categ), bipolar = bipolar.weights(categ))
}
ci <- function(s) as.numeric(strsplit(gsub("[()]", "", s), ",")[[1]])

out <- data.frame()
row <- function(input, coef, w, value, se, conf, p) {
  b <- ci(conf)
  data.frame(input = input, coefficient = coef, weights = w, value = sprintf("%.15g", value),
             se = sprintf("%.15g", se), lcb = b[1], ucb = b[2], p_value = as.numeric(p))
}

for (input in c("irrcac_cont3x3abstractors.csv", "irrcac_cont4x4diagnosis.csv")) {
  tab <- as.matrix(read.csv(input, row.names = 1, check.names = FALSE))
  q <- ncol(tab)
  for (w in weights) {
    W <- wmat(w, q)
    fns <- list(cohen_kappa = kappa2.table, scott_pi = scott2.table, gwet = gwet.ac1.table,
                brennan_prediger = bp2.table, krippendorff_alpha = krippen2.table, percent_agreement = pa2.table)
    for (coef in names(fns)) {
      r <- fns[[coef]](tab, weights = W)
      out <- rbind(out, row(input, coef, w, r$coeff.val, r$coeff.se, r$coeff.ci, r$coeff.pval))
    }
  }
}

for (input in c("irrcac_distrib.6raters.csv", "irrcac_cac.dist4cat.csv")) {
  cnt <- as.matrix(read.csv(input, check.names = FALSE)[, -1])
  for (w in weights) {
    fns <- list(fleiss_kappa = fleiss.kappa.dist, gwet = gwet.ac1.dist, brennan_prediger = bp.coeff.dist,
                krippendorff_alpha = krippen.alpha.dist, percent_agreement = pa.coeff.dist)
    for (coef in names(fns)) {
      r <- fns[[coef]](cnt, weights = w)
      out <- rbind(out, row(input, coef, w, r$coeff, r$stderr, r$conf.int, r$p.value))
    }
  }
}
write.csv(out, stdout(), row.names = FALSE, quote = FALSE)
