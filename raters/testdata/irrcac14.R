# What make_reference_irrcac_population.R and
# make_reference_irrcac_custom_raw.R share (source()d by both, from
# raters/testdata): irrCAC 1.4's raw-data functions (IRRCAC14_R is its R/
# folder: weights.gen.r, agree.coeff3.raw.r, sourced unchanged) in the
# environment e14, round() made the identity so that irrCAC's functions
# return full precision, ci() to read irrCAC's "(lcb,ucb)" intervals and
# fmt() to write a number at full precision.
src14 <- Sys.getenv("IRRCAC14_R", unset = "irrcac14_R")
e14 <- new.env()
sys.source(file.path(src14, "weights.gen.r"), envir = e14)
sys.source(file.path(src14, "agree.coeff3.raw.r"), envir = e14)
round <- function(x, digits = 0) x

ci <- function(s) as.numeric(strsplit(gsub("[()]", "", s), ",")[[1]])
fmt <- function(x) sprintf("%.17g", x)
