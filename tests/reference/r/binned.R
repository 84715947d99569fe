## Reference values for binned residual plots (issue 26): arm::binned.resids, the table behind
## arm::binnedplot (Gelman and Hill 2007, §5.6): bins of equal counts of x, each bin's mean x,
## mean residual, count, range of x and 2 standard errors of the mean residual.
##
## Run from the repository root:   Rscript tests/reference/r/binned.R
## (generate.R sources it at its end.) Reads tests/reference/data/*.csv, writes
## tests/reference/binned.json. Deterministic: no random numbers.
##
## The fits are polished to the MLE (glm(..., epsilon = 1e-14) restarted from its own
## coefficients), so the fitted values are the MLE's. Cases:
##   x = fitted(fit), y = residuals(fit, type = "response"), nclass as binnedplot's default
##   (floor(sqrt(n)) for n >= 100, 10 for 10 < n < 100) and a given nclass; and x = a
##   predictor with ties (age in birthwt), which exercises arm's rule for breaks inside ties.
## Fields per case: formula, data, x ("fitted" or a column), nclass, and the binned table
## (xbar, ybar, n, x_lo, x_hi, se2 = 2 sd / sqrt(n)).

suppressPackageStartupMessages(library(arm))
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

read_sorted <- function(name) {
  d <- read.csv(file.path(datadir, paste0(name, ".csv")), stringsAsFactors = FALSE,
                na.strings = "", check.names = FALSE)
  for (v in names(d)) if (is.character(d[[v]]))  # levels by code point, as patsy
    d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]]), method = "radix"))
  d
}

polished <- function(formula, d) {
  fit <- glm(as.formula(formula), binomial, d, epsilon = 1e-14)
  for (i in 1:50) {
    old <- coef(fit)
    fit <- glm(as.formula(formula), binomial, d, start = old, epsilon = 1e-14)
    if (max(abs(coef(fit) - old)) <= 1e-15 * max(1, max(abs(old)))) break
  }
  fit
}

default_nclass <- function(n) if (n >= 100) floor(sqrt(n)) else if (n > 10) 10 else floor(n / 2)

one <- function(data, formula, x = "fitted", nclass = NULL) {
  d <- read_sorted(data)
  fit <- polished(formula, d)
  xv <- if (x == "fitted") fitted(fit) else d[[x]]
  yv <- residuals(fit, type = "response")
  if (is.null(nclass)) nclass <- default_nclass(length(xv))
  b <- binned.resids(xv, yv, nclass)$binned
  list(data = data, formula = formula, x = x, nclass = nclass,
       xbar = vec(b[, "xbar"]), ybar = vec(b[, "ybar"]), n = vec(b[, "n"]),
       x_lo = vec(b[, "x.lo"]), x_hi = vec(b[, "x.hi"]), se2 = vec(b[, "2se"]))
}

bw <- "low ~ age + lwt + race + smoke + ht + ui"
cases <- list(
  one("birthwt", bw),
  one("birthwt", bw, nclass = 5),
  one("birthwt", bw, x = "age"),
  one("spector", "GRADE ~ GPA + TUCE + PSI")
)

write_json(list(meta = list(generator = "tests/reference/r/binned.R",
                            R_version = R.version.string,
                            arm = as.character(packageVersion("arm")),
                            number_format = "shortest of %.15g/%.16g/%.17g; NA -> null"),
                cases = cases), "binned.json")
