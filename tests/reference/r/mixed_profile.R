## Reference values for mixed-model comparisons and profile intervals (issue 27's leftovers):
## gc.lrtest / gc.anova / gc.compare of GLMMs against GLMs and of GLMMs against each other,
## and conf_int(method = "profile") of MixedGLM fits, against lme4.
##
## Run from the repository root:   Rscript tests/reference/r/mixed_profile.R
## (tests/reference/generate.R sources it at its end, after mixed.R, which writes the data
## sets read here.)  Writes tests/reference/mixed_profile.json.
##
## Comparisons.  lme4's anova(glmer_fit, glm_fit) for the Laplace fits: npar, logLik, AIC,
## BIC, deviance (-2 logLik), Chisq, Df, p.  With nAGQ > 1 lme4's logLik leaves out the
## saturated model's log-likelihood (its quadrature is written with unit deviances), and its
## anova refuses a glm against it ("GLMMs with nAGQ>1 have log-likelihoods incommensurate with
## glm() objects"): that message is stored, and the comparison on the GLM's footing is
## computed here from lme4's numbers: logLik(nAGQ fit) + the saturated log-likelihood
## (sum dbinom(y, n, y/n, log = TRUE), sum dpois(y, y, log = TRUE)).
##
## Profiles.  confint(fit, method = "profile", oldNames = FALSE) (rows "sd_(Intercept)|herd",
## or for (x | g) "sd_(Intercept)|g", "cor_x.(Intercept)|g", "sd_x|g", then the fixed effects) with a denser profile than lme4's default (delta = cutoff / 32
## instead of / 8: its intervals come from spline interpolation between profile points, and
## more points make the spline closer to the exact roots), on the fits polished as in mixed.R.

local({
suppressPackageStartupMessages(library(lme4))
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

source(file.path(refdir, "r", "glmer_tight.R"), local = TRUE)

## anova() wants every fit's data argument spelled alike
glm_fit <- function(formula, data, family) glm(formula, data = data, family = family)

anova_table <- function(a) list(npar = vec(a$npar), logLik = vec(a$logLik), AIC = vec(a$AIC),
                                BIC = vec(a$BIC), deviance = vec(a$deviance),
                                Chisq = a$Chisq[2], Df = a$Df[2], p = a[["Pr(>Chisq)"]][2])
refused <- function(expr) tryCatch({ expr; "" }, error = function(e) conditionMessage(e))

out <- list()

## cbpp: GLM against the GLMM (Laplace and nAGQ = 10), and two GLMMs --------------------------
cbpp <- read.csv(file.path(datadir, "cbpp.csv"))
cbpp$period <- factor(cbpp$period)
f1 <- cbind(incidence, size - incidence) ~ period + (1 | herd)
g <- glm_fit(cbind(incidence, size - incidence) ~ period, cbpp, binomial)
m1 <- fit_tight(f1, cbpp, binomial)
m10 <- fit_tight(f1, cbpp, binomial, 10L)
m0 <- fit_tight(cbind(incidence, size - incidence) ~ 1 + (1 | herd), cbpp, binomial)
sat <- sum(dbinom(cbpp$incidence, cbpp$size, cbpp$incidence / cbpp$size, log = TRUE))
ll10 <- as.numeric(logLik(m10)) + sat
out$cbpp <- list(
  glm_loglik = as.numeric(logLik(g)),
  laplace = anova_table(anova(m1, g)),
  glmm_vs_glmm = anova_table(anova(m0, m1)),
  agq10_loglik_lme4 = as.numeric(logLik(m10)),
  agq10_refused = refused(anova(m10, g)),
  saturated_loglik = sat,
  agq10_loglik = ll10,
  agq10_chisq = 2 * (ll10 - as.numeric(logLik(g))),
  agq10_aic = -2 * ll10 + 2 * 5, agq10_bic = -2 * ll10 + 5 * log(nobs(m10)))

## Poisson with an offset: the same with nAGQ = 10 --------------------------------------------
pois <- read.csv(file.path(datadir, "mixed_poisson.csv"))
fp <- y ~ x + offset(log(t)) + (1 | g)
gp <- glm_fit(y ~ x + offset(log(t)), pois, poisson)
p1 <- fit_tight(fp, pois, poisson)
p10 <- fit_tight(fp, pois, poisson, 10L)
satp <- sum(dpois(pois$y, pois$y, log = TRUE))
llp10 <- as.numeric(logLik(p10)) + satp
out$poisson <- list(
  glm_loglik = as.numeric(logLik(gp)),
  laplace = anova_table(anova(p1, gp)),
  agq10_refused = refused(anova(p10, gp)),
  saturated_loglik = satp,
  agq10_loglik = llp10,
  agq10_chisq = 2 * (llp10 - as.numeric(logLik(gp))))

## profile intervals --------------------------------------------------------------------------
profile_ci <- function(m, wide = FALSE) {
  pr <- profile(m, signames = FALSE, delta = qnorm(0.975) / 32, maxpts = 400)
  ci <- confint(pr, level = 0.95)
  ## level 0.999: where the profile stays inside the cutoff up to a parameter's limit, lme4's
  ## spline gives NA and confint puts the limit (0 for an SD, -1 or 1 for a correlation)
  ci999 <- if (wide) confint(pr, level = 0.999) else NULL
  c(if (wide) list(lower_999 = vec(ci999[, 1]), upper_999 = vec(ci999[, 2])),
    list(names = I(rownames(ci)), lower = vec(ci[, 1]), upper = vec(ci[, 2]),
       wald = mat(confint(m, method = "Wald", oldNames = FALSE)[names(fixef(m)), ]),
       fixef = vec(fixef(m)), theta = vec(getME(m, "theta")),
       objective = unname(-2 * as.numeric(logLik(m)))))
}
out$profile_cbpp <- profile_ci(m1)
ri <- read.csv(file.path(datadir, "mixed_ri.csv"))
out$profile_ri_logit <- profile_ci(fit_tight(y ~ x1 + x2 + (1 | g), ri, binomial))
## terms with several effects per group (mixed.R's simulated random slopes): (x | g) profiles
## sd_(Intercept)|g, cor_x.(Intercept)|g, sd_x|g; (x || g) two SDs (lme4 names both "|g")
slope <- read.csv(file.path(datadir, "mixed_slope.csv"))
out$profile_slope <- profile_ci(fit_tight(y ~ x + (x | g), slope, binomial), wide = TRUE)
out$profile_slope_uncorr <- profile_ci(fit_tight(y ~ x + (x || g), slope, binomial))

write_json(out, "mixed_profile.json")
})
