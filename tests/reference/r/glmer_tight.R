## lme4's glmer fitted tightly and polished, for the mixed-model references (sourced by
## mixed.R, mixed_profile.R and emmeans_mixed.R). lme4's default fit stops short of the optimum
## (the issue's LR statistic 37.707 against 37.711 after polishing), and its default PIRLS
## tolerance leaves a Poisson vcov 0.6% off: bobyqa with a tight rhoend and tolPwrss = 1e-13,
## then a refit from its own estimates with a small first trust region, keeping the better.

ctrl <- glmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 1e5, rhoend = 1e-10),
                     tolPwrss = 1e-13)
polish <- glmerControl(optimizer = "bobyqa",
                       optCtrl = list(maxfun = 1e5, rhobeg = 1e-2, rhoend = 1e-11),
                       tolPwrss = 1e-13)

fit_tight <- function(formula, data, family = binomial, nAGQ = 1L) {
  m <- glmer(formula, data = data, family = family, nAGQ = nAGQ, control = ctrl)
  start <- list(theta = getME(m, "theta"), fixef = fixef(m))
  m2 <- glmer(formula, data = data, family = family, nAGQ = nAGQ, control = polish,
              start = start)
  if (-2 * logLik(m2) > -2 * logLik(m)) m else m2
}
