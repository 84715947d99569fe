## Reference values for linear hypotheses and the deviance tables of one fit (issue 26, §1):
## results.wald_test / t_test (car::linearHypothesis), gc.anova(res) (anova(fit, test =
## "Chisq") / test = "F") and res.drop1 (drop1(fit, test = "Chisq") / "F").
##
## Run from the repository root:   Rscript tests/reference/r/hypothesis.R
## (tests/reference/generate.R sources it at its end.)  Writes tests/reference/hypothesis.json.
## Needs car and sandwich.  Deterministic: nothing random.
##
## Data: birthwt.csv with ptd = (ptl > 0) and race a factor (levels black, other, white: the
## same reference level as patsy's C(race)).  Every glm is fit with epsilon = 1e-14, so the
## estimates (and every refit anova and drop1 make, which reuse the fit's control) are the
## exact MLEs to the digits stored.
##
## Fields.
## - wald: per case and covariance ("nonrobust" = vcov(fit), "HC0", "HC3" = sandwich::vcovHC),
##   per hypothesis: the glmclass string (`hypothesis`), car's (`car`), chisq, df, pvalue
##   (test = "Chisq"), F, F_pvalue, df_denom (test = "F"), and per constraint effect (L b),
##   sd (sqrt diag L V L'), z ((L b - rhs) / sd) and its two-sided normal p-value.
## - anova: per case, rows NULL then the terms: df, deviance, df_resid, resid_deviance,
##   pvalue (test = "Chisq"; the Gaussian case test = "F" adds F).
## - drop1: per case and test, rows <none> then the droppable terms: df, deviance, aic and
##   lrt + pvalue (test = "Chisq") or F + pvalue (test = "F").

local({
suppressPackageStartupMessages({
  library(car)
  library(sandwich)
})
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

bw <- read.csv(file.path(datadir, "birthwt.csv"))
bw$ptd <- as.integer(bw$ptl > 0)
bw$race <- factor(bw$race)
ctl <- glm.control(epsilon = 1e-14, maxit = 100)
## restart from the estimate until it stops moving: glm's vcov uses the weights of the last
## iteration's start, so only a fit restarted at its own estimate has the MLE's covariance
polish <- function(fit) {
  for (i in 1:5) {
    old <- coef(fit)
    fit <- update(fit, start = old)
    if (max(abs(coef(fit) - old)) < 1e-15 * max(1, abs(old))) break
  }
  fit
}

fits <- list(
  logit_main = list(
    fit = glm(low ~ age + lwt + race + smoke + ptd + ht + ui, binomial, bw, control = ctl),
    formula = "low ~ age + lwt + C(race) + smoke + ptd + ht + ui", family = "binomial"),
  logit_inter = list(
    fit = glm(low ~ age + lwt + race + smoke + ptd + ht + ui + age:smoke, binomial, bw,
              control = ctl),
    formula = "low ~ age + lwt + C(race) + smoke + ptd + ht + ui + age:smoke",
    family = "binomial"),
  logit_race_smoke = list(
    fit = glm(low ~ lwt + race * smoke, binomial, bw, control = ctl),
    formula = "low ~ lwt + C(race) * smoke", family = "binomial"),
  poisson = list(
    fit = glm(ftv ~ age + race + smoke + lwt, poisson, bw, control = ctl),
    formula = "ftv ~ age + C(race) + smoke + lwt", family = "poisson"),
  gaussian = list(
    fit = glm(bwt ~ age + lwt + race + smoke + ht, gaussian, bw, control = ctl),
    formula = "bwt ~ age + lwt + C(race) + smoke + ht", family = "gaussian")
)

## (glmclass string, car's form) pairs per case
hyps <- list(
  logit_main = list(
    c("ptd = ht", "ptd = ht"),
    c("C(race)[T.other] = C(race)[T.white], age = 0", "raceother = racewhite|age = 0"),
    c("2*lwt - 0.5*age = 0.01", "2*lwt - 0.5*age = 0.01"),
    c("ptd = ht = ui", "ptd = ht|ht = ui"),
    c("smoke + ptd + ht = 2, C(race)[T.other] = 0", "smoke + ptd + ht = 2|raceother = 0")),
  poisson = list(
    c("age = 0", "age = 0"),
    c("C(race)[T.other] - C(race)[T.white] = 0.1", "raceother - racewhite = 0.1")),
  gaussian = list(
    c("smoke = ht", "smoke = ht"),
    c("C(race)[T.other] = 0, C(race)[T.white] = 0", "raceother = 0|racewhite = 0"))
)

covs <- list(nonrobust = function(f) vcov(f),
             HC0 = function(f) vcovHC(f, type = "HC0"),
             HC3 = function(f) vcovHC(f, type = "HC3"))

wald <- list()
fits <- lapply(fits, function(x) { x$fit <- polish(x$fit); x })

for (case in names(hyps)) {
  fit <- fits[[case]]$fit
  for (cv in names(covs)) {
    V <- covs[[cv]](fit)
    for (h in hyps[[case]]) {
      car_h <- strsplit(h[2], "|", fixed = TRUE)[[1]]
      chi <- linearHypothesis(fit, car_h, vcov. = V, test = "Chisq")
      Fh <- linearHypothesis(fit, car_h, vcov. = V, test = "F")
      value <- drop(attr(chi, "value"))
      vh <- attr(chi, "vcov")
      hm <- rbind(makeHypothesis(names(coef(fit)), car_h))  # cbind(L, rhs)
      rhs <- unname(hm[, ncol(hm)])
      sd <- sqrt(diag(as.matrix(vh)))
      z <- value / sd
      wald[[length(wald) + 1L]] <- list(
        case = case, cov_type = cv, hypothesis = h[1], car = h[2],
        chisq = chi$Chisq[2], df = chi$Df[2], pvalue = chi$`Pr(>Chisq)`[2],
        F = Fh$F[2], F_pvalue = Fh$`Pr(>F)`[2], df_denom = Fh$Res.Df[2],
        effect = vec(value + rhs), sd = vec(sd), z = vec(z),
        z_pvalue = vec(2 * pnorm(-abs(z))))
    }
  }
}

table_of <- function(tab, cols) {
  out <- list(rows = vec(rownames(tab)))
  for (nm in names(cols)) out[[nm]] <- vec(tab[[cols[[nm]]]])
  out
}

anova_cols <- c(df = "Df", deviance = "Deviance", df_resid = "Resid. Df",
                resid_deviance = "Resid. Dev", pvalue = "Pr(>Chi)")
anovas <- list()
for (case in names(fits)) {
  fit <- fits[[case]]$fit
  if (fits[[case]]$family == "gaussian") {
    tab <- anova(fit, test = "F")
    cols <- c(anova_cols[1:4], F = "F", pvalue = "Pr(>F)")
    test <- "F"
  } else {
    tab <- anova(fit, test = "Chisq")
    cols <- anova_cols
    test <- "Chisq"
  }
  anovas[[length(anovas) + 1L]] <- c(list(case = case, test = test), table_of(tab, cols))
}

drops <- list()
for (case in names(fits)) {
  fit <- fits[[case]]$fit
  tests <- if (fits[[case]]$family == "gaussian") c("Chisq", "F") else "Chisq"
  for (test in tests) {
    tab <- drop1(fit, test = test)
    cols <- c(df = "Df", deviance = "Deviance", aic = "AIC")
    lrt_name <- if ("LRT" %in% names(tab)) "LRT" else "scaled dev."
    cols <- if (test == "F") c(cols, F = "F value", pvalue = "Pr(>F)") else
      c(cols, lrt = lrt_name, pvalue = "Pr(>Chi)")
    drops[[length(drops) + 1L]] <- c(list(case = case, test = test), table_of(tab, cols))
  }
}

cases <- lapply(fits, function(x) list(formula = x$formula, family = x$family,
                                        coef = vec(coef(x$fit)),
                                        coef_names = vec(names(coef(x$fit))),
                                        deviance = deviance(x$fit), aic = AIC(x$fit)))

write_json(list(meta = list(generator = "tests/reference/r/hypothesis.R",
                            r_version = R.version.string,
                            car = as.character(packageVersion("car")),
                            sandwich = as.character(packageVersion("sandwich"))),
                cases = cases, wald = wald, anova = anovas, drop1 = drops),
           "hypothesis.json")
})
