## Reference values for estimated marginal means of mixed-effects GLMs (issues 27 and 30):
## gc.emmeans on gc.MixedGLM fits against R's emmeans 1.8 on lme4::glmer fits.
##
## Run from the repository root:   Rscript tests/reference/r/emmeans_mixed.R
## (tests/reference/generate.R sources it at its end.)  Writes
## tests/reference/emmeans_mixed.json and tests/reference/data/emmeans_mixed.csv (simulated
## here with set.seed, covariate rounded to 6 decimals so that the CSV holds exactly the
## numbers R fitted).
##
## emmeans on a glmer fit is population level: the reference grid's linear predictor is the
## fixed part only (random effects at 0), with vcov(fit) (lme4's: from the Hessian of the
## deviance over theta and beta jointly) and df = Inf (asymptotic intervals).
##
## Method.  As tests/reference/r/mixed.R: glmer with tight control (bobyqa, rhoend 1e-10,
## tolPwrss = 1e-13) and a polishing refit from its own estimates.  Each case stores the
## polished fit's fixef and vcov, so that the tests can compare emmeans given the same
## estimates (to 1e-6), apart from how closely the two optimisers agree.
##
## Cases:
## - cbpp: cbind(incidence, size - incidence) ~ period + (1 | herd), period a factor:
##   emmeans(~ period) on the link and response scales, pairwise contrasts with Tukey's
##   adjustment on both scales (odds ratios on the response scale).
## - sim: y ~ x + a + b + (1 | g) with a (3 levels) and b (2 levels) unbalanced factors and a
##   covariate x: emmeans(~ a, weights = "proportional") on both scales (x at its mean,
##   averaged over b with the margins' proportions), emmeans(~ a | b), pairwise Tukey.

local({
suppressPackageStartupMessages({
  library(lme4)
  library(emmeans)
})
emm_options(msg.interaction = FALSE, msg.nesting = FALSE)
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

source(file.path(refdir, "r", "glmer_tight.R"), local = TRUE)
emm <- function(g) cols(summary(g, infer = c(TRUE, TRUE)))
estimates <- function(m) list(fixef = vec(fixef(m)), fixef_names = I(names(fixef(m))),
                              vcov = mat(as.matrix(vcov(m))),
                              objective = unname(-2 * as.numeric(logLik(m))))

## ---- cbpp ---------------------------------------------------------------------------------
cb <- read.csv(file.path(datadir, "cbpp.csv"))
cb$period <- factor(cb$period)
cb$herd <- factor(cb$herd)
m <- fit_tight(cbind(incidence, size - incidence) ~ period + (1 | herd), cb)
e <- emmeans(m, ~ period)
e_r <- emmeans(m, ~ period, type = "response")
cbpp <- c(estimates(m), list(
  formula = "cbind(incidence, size - incidence) ~ period + (1 | herd)",
  period = emm(e),
  period_response = emm(e_r),
  pairs_tukey = emm(contrast(e, "pairwise", adjust = "tukey")),
  pairs_response_tukey = emm(contrast(e_r, "pairwise", adjust = "tukey"))))

## ---- simulated: a covariate and a second factor --------------------------------------------
set.seed(3027)
G <- 30; n <- 12
d <- data.frame(g = rep(sprintf("h%02d", 1:G), each = n),
                a = sample(c("lo", "mid", "hi"), G * n, TRUE, prob = c(0.5, 0.3, 0.2)),
                b = sample(c("no", "yes"), G * n, TRUE, prob = c(0.65, 0.35)),
                x = round(rnorm(G * n, 1, 2), 6))
u <- rnorm(G, 0, 0.7)[as.integer(factor(d$g))]
eta <- -0.4 + 0.3 * d$x + c(lo = 0, mid = 0.5, hi = 1.1)[d$a] - 0.6 * (d$b == "yes") + u
d$y <- rbinom(G * n, 1, plogis(eta))
write.csv(d, file.path(datadir, "emmeans_mixed.csv"), row.names = FALSE)
d$a <- factor(d$a, levels = c("hi", "lo", "mid"))  # sorted, as a formula's levels
d$b <- factor(d$b)
s <- fit_tight(y ~ x + a + b + (1 | g), d)
ea <- emmeans(s, ~ a, weights = "proportional")
ea_r <- emmeans(s, ~ a, weights = "proportional", type = "response")
sim <- c(estimates(s), list(
  formula = "y ~ x + a + b + (1 | g)",
  x_mean = mean(d$x),
  a_proportional = emm(ea),
  a_proportional_response = emm(ea_r),
  a_equal = emm(emmeans(s, ~ a)),
  a_by_b = emm(emmeans(s, ~ a | b)),
  pairs_proportional_tukey = emm(contrast(ea, "pairwise", adjust = "tukey"))))

write_json(list(emmeans_version = as.character(packageVersion("emmeans")),
                lme4_version = as.character(packageVersion("lme4")),
                cbpp = cbpp, sim = sim),
           "emmeans_mixed.json")
})
