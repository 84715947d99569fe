## Reference values for estimated marginal means (issue 30): gc.emmeans, .contrast and
## gc.joint_tests against R's emmeans 1.8.
##
## Run from the repository root:   Rscript tests/reference/r/emmeans.R
## (tests/reference/generate.R sources it at its end.)  Writes tests/reference/emmeans.json
## and tests/reference/data/warpbreaks.csv.  Needs emmeans, mvtnorm, sandwich, nnet, MASS,
## ordinal.  Only the "mvt" adjustment draws random numbers (set.seed below; its Monte Carlo
## error is stored with it).
##
## Cases (each: the R call, the glmclass formula, and emmeans' summary columns as arrays):
## - birthwt: glm(low ~ race * smoke + age, binomial) with race and smoke factors
##   (glmclass: "low ~ C(race) * C(smoke) + age"); means on the link and response scales,
##   by smoke, the four weightings, at = list(age = 30), sandwich covariances; contrasts with
##   every method and adjustment; joint_tests.  Probit and cloglog links, and a Gaussian fit.
## - warpbreaks: glm(breaks ~ wool * tension, poisson) (rates, ratios, joint_tests).
## - housing multinom (Sat ~ Infl + Type + Cont, weights Freq, Sat ordered Low < Medium <
##   High): mode = "prob" (with df = Inf: emmeans' default for multinom is t on the fit's
##   edf degrees of freedom; glmclass's intervals are asymptotic).
## - housing ordinal: MASS::polr (Hessian by optim's differences: compare to ~1e-5) and
##   ordinal::clm (analytic Hessian) on the same formula: mode = "prob" and "mean.class".

local({
suppressPackageStartupMessages({
  library(emmeans)
  library(sandwich)
  library(nnet)
  library(MASS)
  library(ordinal)
})
emm_options(msg.interaction = FALSE, msg.nesting = FALSE)
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

polish <- function(fit) {
  for (i in 1:5) {
    old <- coef(fit)
    fit <- update(fit, start = old)
    if (max(abs(coef(fit) - old)) < 1e-15 * max(1, abs(old))) break
  }
  fit
}
ctl <- glm.control(epsilon = 1e-14, maxit = 100)

emm <- function(g, ...) cols(summary(g, infer = c(TRUE, TRUE), ...))
ctr <- function(g, ...) cols(summary(g, infer = c(TRUE, TRUE), ...))
## joint_tests prints F.ratio to 3 decimals: the Wald chi-square (df2 = Inf) is recovered from
## the unrounded p-value (F = qf(p, df1, df2)), and Chisq = df1 * F
jt <- function(fit) {
  j <- as.data.frame(joint_tests(fit))
  F <- qf(j$p.value, j$df1, j$df2, lower.tail = FALSE)
  chisq <- F * j$df1
  list(`model term` = I(as.character(j[["model term"]])), df1 = vec(j$df1), df2 = vec(j$df2),
       F.ratio = vec(F), Chisq = vec(chisq), p.value = vec(j$p.value))
}

## ---- birthwt --------------------------------------------------------------------------------
bw <- read.csv(file.path(datadir, "birthwt.csv"))
bw$race <- factor(bw$race)
bw$smoke <- factor(bw$smoke)
fit <- polish(glm(low ~ race * smoke + age, binomial, bw, control = ctl))
e_race <- emmeans(fit, ~ race)
e_race_r <- emmeans(fit, ~ race, type = "response")
birthwt <- list(
  formula = "low ~ C(race) * C(smoke) + age",
  age_mean = mean(bw$age),
  race = emm(e_race),
  race_response = emm(e_race_r),
  race_by_smoke = emm(emmeans(fit, ~ race | smoke)),
  race_smoke_response = emm(emmeans(fit, ~ race * smoke, type = "response")),
  race_at30 = emm(emmeans(fit, ~ race, at = list(age = 30))),
  smoke_level90 = emm(emmeans(fit, ~ smoke), level = 0.90),
  weights = list(
    proportional = emm(emmeans(fit, ~ race, weights = "proportional")),
    outer = emm(emmeans(fit, ~ race, weights = "outer")),
    cells = emm(emmeans(fit, ~ race, weights = "cells")),
    smoke_cells = emm(emmeans(fit, ~ smoke, weights = "cells"))),
  robust = list(
    HC0 = emm(emmeans(fit, ~ race, vcov. = vcovHC(fit, type = "HC0"))),
    HC3 = emm(emmeans(fit, ~ race, vcov. = vcovHC(fit, type = "HC3")))),
  contrasts = list(),
  joint_tests = jt(fit)
)
for (a in c("none", "tukey", "holm", "bonferroni", "sidak", "fdr"))
  birthwt$contrasts[[paste0("pairwise_", a)]] <- ctr(contrast(e_race, "pairwise", adjust = a))
for (m in c("revpairwise", "trt.vs.ctrl", "consec", "poly", "eff"))
  birthwt$contrasts[[paste0(m, "_none")]] <- ctr(contrast(e_race, m, adjust = "none"))
birthwt$contrasts$pairwise_response_tukey <- ctr(contrast(e_race_r, "pairwise",
                                                          adjust = "tukey"))
birthwt$contrasts$pairwise_by_smoke_tukey <- ctr(pairs(emmeans(fit, ~ race | smoke),
                                                       adjust = "tukey"))
birthwt$contrasts$formula_spec <- ctr(emmeans(fit, pairwise ~ race | smoke)$contrasts)
set.seed(20261127)
mvt <- summary(contrast(e_race, "pairwise", adjust = "mvt"), infer = c(TRUE, TRUE))
birthwt$contrasts$pairwise_mvt <- cols(mvt)
birthwt$contrasts$pairwise_mvt_trt <- ctr(contrast(e_race, "trt.vs.ctrl", adjust = "mvt"))
birthwt$links <- list()
for (lk in c("probit", "cloglog")) {
  f2 <- polish(glm(low ~ race * smoke + age, binomial(link = lk), bw, control = ctl))
  birthwt$links[[lk]] <- list(race_response = emm(emmeans(f2, ~ race, type = "response")),
                              race = emm(emmeans(f2, ~ race)))
}
## three factors: "outer" and "proportional" differ when two factors are averaged over
bw$ht <- factor(bw$ht)
f3 <- polish(glm(low ~ race * smoke + ht, binomial, bw, control = ctl))
birthwt$weights3 <- list(formula = "low ~ C(race) * C(smoke) + C(ht)")
for (w in c("equal", "proportional", "outer", "cells"))
  birthwt$weights3[[w]] <- emm(emmeans(f3, ~ ht, weights = w))
g <- glm(bwt ~ race * smoke + age, gaussian, bw)
birthwt$gaussian <- list(formula = "bwt ~ C(race) * C(smoke) + age",
                         race = emm(emmeans(g, ~ race)),
                         joint_tests = jt(g))

## ---- warpbreaks (Poisson) ---------------------------------------------------------------------
wb <- warpbreaks
write.csv(wb, file.path(datadir, "warpbreaks.csv"), row.names = FALSE)
pf <- polish(glm(breaks ~ wool * tension, poisson, wb, control = ctl))
e_t <- emmeans(pf, ~ tension, type = "response")
warpbreaks <- list(
  formula = "breaks ~ wool * tension",
  tension = emm(emmeans(pf, ~ tension)),
  tension_response = emm(e_t),
  wool_by_tension = emm(emmeans(pf, ~ wool | tension, type = "response")),
  pairs_response_tukey = ctr(pairs(e_t, adjust = "tukey")),
  pairs_link_holm = ctr(pairs(emmeans(pf, ~ tension), adjust = "holm")),
  joint_tests = jt(pf)
)

## ---- housing: multinomial and ordinal ---------------------------------------------------------
hs <- read.csv(file.path(datadir, "housing.csv"))
hs$Sat <- factor(hs$Sat, levels = c("Low", "Medium", "High"))
hs$Infl <- factor(hs$Infl); hs$Type <- factor(hs$Type); hs$Cont <- factor(hs$Cont)
mn <- multinom(Sat ~ Infl + Type + Cont, data = hs, weights = Freq, Hess = TRUE,
               reltol = 1e-16, abstol = 1e-30, maxit = 10000, trace = FALSE)
multinom <- list(
  formula = "Sat ~ Infl + Type + Cont", weights = "Freq",
  coef = mat(coef(mn)),
  infl_prob = emm(emmeans(mn, ~ Sat | Infl, mode = "prob", df = Inf)),
  type_prob = emm(emmeans(mn, ~ Type | Sat, mode = "prob", df = Inf)),
  infl_pairs = ctr(pairs(emmeans(mn, ~ Infl | Sat, mode = "prob", df = Inf), adjust = "none"))
)
pl <- polr(Sat ~ Infl + Type + Cont, data = hs, weights = Freq, Hess = TRUE,
           control = list(reltol = 1e-15, maxit = 1000, ndeps = rep(1e-5, 8)))
cm <- clm(Sat ~ Infl + Type + Cont, data = hs, weights = Freq,
          control = clm.control(gradTol = 1e-12, relTol = 1e-14))
ordinal_case <- function(f) list(
  coef = vec(coef(f)), vcov = mat(vcov(f)),
  infl_prob = emm(emmeans(f, ~ Sat | Infl, mode = "prob", df = Inf)),
  infl_mean_class = emm(emmeans(f, ~ Infl, mode = "mean.class", df = Inf)),
  infl_pairs_prob = ctr(pairs(emmeans(f, ~ Infl | Sat, mode = "prob", df = Inf), adjust = "none")),
  infl_latent = emm(emmeans(f, ~ Infl, mode = "latent", df = Inf)))
ordinal <- list(formula = "Sat ~ Infl + Type + Cont", weights = "Freq",
                levels = I(levels(hs$Sat)), polr = ordinal_case(pl), clm = ordinal_case(cm))

write_json(list(emmeans_version = as.character(packageVersion("emmeans")),
                birthwt = birthwt, warpbreaks = warpbreaks, multinom = multinom,
                ordinal = ordinal), "emmeans.json")
})
