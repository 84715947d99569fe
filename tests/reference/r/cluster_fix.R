## Reference values for two-way cluster-robust covariances with a negative variance
## (issue 25, item 2): R's sandwich::vcovCL(fit, cluster = ~ g + h, type = "HC1") with its
## defaults multi0 = FALSE and fix = FALSE (Cameron, Gelbach and Miller: V_g + V_h - V_gh,
## which can be indefinite: a negative diagonal element, whose standard error R's
## lmtest::coeftest reports as NaN), and with fix = TRUE (negative eigenvalues set to 0).
##
## Run from the repository root:   Rscript tests/reference/r/cluster_fix.R
## (generate.R sources it at its end.) Writes tests/reference/cluster_fix.json.
## Deterministic: the data are written by formula (no random numbers), i = 1..n:
##   x = sin(a i), z = cos(b i), g = i mod G, h = floor(7 i / 5) mod G,
##   y = 1{sin(2.3 a i) + 0.8 x > 0};  fit: glm(y ~ x + z, binomial).
## Fields per case: n, a, b, G, the data (x, z, g, h, y), coef, vcov (fix = FALSE),
## vcov_fix (fix = TRUE), negative (names of coefficients with a negative variance).

options(warn = 1, stringsAsFactors = FALSE)
suppressPackageStartupMessages({library(sandwich)})
refdir <- file.path("tests", "reference")
if (!dir.exists(refdir)) stop("run from the repository root (", refdir, " not found)")
source(file.path(refdir, "r", "json_writer.R"))

one_case <- function(n, a, b, G) {
  i <- seq_len(n)
  d <- data.frame(x = sin(a * i), z = cos(b * i), g = i %% G, h = (7 * i) %/% 5 %% G)
  d$y <- as.integer(sin(2.3 * a * i) + 0.8 * d$x > 0)
  fit <- glm(y ~ x + z, binomial, d, epsilon = 1e-14)
  for (k in 1:50) {  # polished to the MLE
    old <- coef(fit)
    fit <- glm(y ~ x + z, binomial, d, start = old, epsilon = 1e-14)
    if (max(abs(coef(fit) - old)) <= 1e-15 * max(1, max(abs(old)))) break
  }
  v <- vcovCL(fit, cluster = ~ g + h, type = "HC1")
  v_fix <- vcovCL(fit, cluster = ~ g + h, type = "HC1", fix = TRUE)
  stopifnot(identical(v, vcovCL(fit, cluster = ~ g + h, type = "HC1", multi0 = FALSE,
                                fix = FALSE)))
  neg <- names(coef(fit))[diag(v) < 0]
  stopifnot(length(neg) > 0, all(diag(v_fix) >= 0))
  list(n = n, a = a, b = b, G = G,
       data = list(x = d$x, z = d$z, g = d$g, h = d$h, y = d$y),
       coef = unname(coef(fit)), names = I(names(coef(fit))),
       vcov = unname(v), vcov_fix = unname(v_fix), negative = I(neg))
}

out <- list(
  note = paste("sandwich", as.character(packageVersion("sandwich")),
               "vcovCL(fit, cluster = ~ g + h, type = 'HC1'), multi0 = FALSE; fix = FALSE",
               "and fix = TRUE"),
  cases = list(
    slope = one_case(40, 1.7, 1.1, 4),       # z's variance is negative
    intercept = one_case(40, 1.3, 0.37, 5)   # the intercept's variance is negative
  ))
writeLines(to_json(out), file.path(refdir, "cluster_fix.json"))
cat("wrote", file.path(refdir, "cluster_fix.json"), "\n")
