## Reference values for mixed-effects GLMs (issue 27): gc.MixedGLM against lme4::glmer.
##
## Run from the repository root:   Rscript tests/reference/r/mixed.R
## (tests/reference/generate.R sources it at its end.)  Writes tests/reference/mixed.json and
## the data sets tests/reference/data/{cbpp,mixed_*}.csv (simulated here with set.seed, values
## rounded to 6 decimals so that the CSV holds exactly the numbers R fitted).
##
## Method.  Each model is fitted with tight control, glmerControl(optimizer = "bobyqa",
## optCtrl = list(maxfun = 1e5, rhoend = 1e-10), tolPwrss = 1e-13), then refitted from its
## own estimates (start = list(theta, fixef); rhobeg 1e-2, rhoend 1e-11) to polish: lme4's
## default stopping rule leaves the deviance ~1e-3 above the optimum.  tolPwrss = 1e-13: lme4
## factors A = Lambda'Z'WZ Lambda + I at the weights of the iterate *before* PIRLS's last
## step, so with the default 1e-7 (or even 1e-10) its deviance function is off the Laplace
## at the modes (2e-4 on the Poisson case here) and the finite-difference Hessian behind
## vcov() is off by ~1% (Poisson SEs 0.6% smaller); at 1e-13 the last step is negligible.
## Stored per case:
## - objective: the quantity lme4 minimises (-2 logLik: Laplace or adaptive quadrature),
##   loglik, aic, bic, deviance (lme4's deviance(), which for a GLMM is NOT -2 logLik),
## - fixef, vcov (lme4's vcov: the beta block of the inverse of the finite-difference
##   Hessian of the deviance over (theta, beta) jointly, times 2), theta, sd / corr per term,
## - ranef (conditional modes, rows = groups in lme4's level order, columns = terms) and
##   their conditional SEs (sqrt of the diagonal of ranef(condVar = TRUE)'s postVar),
## - fitted (mean with the random effects), linear (eta with them) and mean_fixed (re.form=NA),
## - singular (isSingular), nobs, ngroups.

local({
suppressPackageStartupMessages(library(lme4))
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

source(file.path(refdir, "r", "glmer_tight.R"), local = TRUE)

describe <- function(m) {
  vc <- VarCorr(m)
  terms <- lapply(names(vc), function(g) {
    v <- vc[[g]]
    list(group = g, names = I(colnames(v)), sd = vec(attr(v, "stddev")),
         corr = mat(if (is.null(attr(v, "correlation"))) diag(1) else attr(v, "correlation")))
  })
  re <- ranef(m, condVar = TRUE)
  red <- as.data.frame(re)
  ranefs <- lapply(names(re), function(g) {
    r <- re[[g]]
    dg <- red[red$grpvar == g, ]
    se <- sapply(colnames(r), function(term) {
      dt <- dg[dg$term == term, ]
      dt$condsd[match(rownames(r), as.character(dt$grp))]
    })
    list(group = g, levels = I(rownames(r)), names = I(colnames(r)), modes = mat(r),
         se = mat(matrix(se, ncol = ncol(r))))
  })
  list(objective = unname(-2 * as.numeric(logLik(m))), loglik = as.numeric(logLik(m)),
       aic = AIC(m), bic = BIC(m), deviance = deviance(m),
       fixef = vec(fixef(m)), fixef_names = I(names(fixef(m))),
       vcov = mat(as.matrix(vcov(m))), bse = vec(sqrt(diag(as.matrix(vcov(m))))),
       theta = vec(getME(m, "theta")), varcorr = terms, ranef = ranefs,
       fitted = vec(fitted(m)), linear = vec(predict(m, type = "link")),
       mean_fixed = vec(predict(m, re.form = NA, type = "response")),
       singular = isSingular(m), nobs = nobs(m), ngroups = as.list(ngrps(m)),
       nagq = m@devcomp$dims[["nAGQ"]])
}

out <- list()

## cbpp -------------------------------------------------------------------------------------
data(cbpp, package = "lme4")
write.csv(data.frame(herd = as.integer(as.character(cbpp$herd)), incidence = cbpp$incidence,
                     size = cbpp$size, period = as.integer(as.character(cbpp$period))),
          file.path(datadir, "cbpp.csv"), row.names = FALSE)
f_cbpp <- cbind(incidence, size - incidence) ~ period + (1 | herd)
out$cbpp <- describe(fit_tight(f_cbpp, cbpp, binomial))
out$cbpp_agq10 <- describe(fit_tight(f_cbpp, cbpp, binomial, 10L))
out$cbpp_agq25 <- describe(fit_tight(f_cbpp, cbpp, binomial, 25L))
out$cbpp_glm_loglik <- as.numeric(logLik(glm(cbind(incidence, size - incidence) ~ period,
                                               data = cbpp, family = binomial)))

r6 <- function(x) round(x, 6)
save_csv <- function(d, name) write.csv(d, file.path(datadir, name), row.names = FALSE)

## a random-intercept logit and probit -------------------------------------------------------
set.seed(2701)
G <- 60; m <- 15
d <- data.frame(g = rep(sprintf("g%02d", 1:G), each = m), x1 = r6(rnorm(G * m)),
                x2 = rbinom(G * m, 1, 0.4))
b <- rnorm(G, 0, 0.8)[as.integer(factor(d$g))]
d$y <- rbinom(G * m, 1, plogis(-0.3 + 0.7 * d$x1 - 0.5 * d$x2 + b))
save_csv(d, "mixed_ri.csv")
out$ri_logit <- describe(fit_tight(y ~ x1 + x2 + (1 | g), d, binomial))
out$ri_probit <- describe(fit_tight(y ~ x1 + x2 + (1 | g), d, binomial(link = "probit")))
out$ri_glm_loglik <- as.numeric(logLik(glm(y ~ x1 + x2, data = d, family = binomial)))

## correlated and uncorrelated random slopes ------------------------------------------------
set.seed(2702)
G <- 40; m <- 25
d <- data.frame(g = rep(sprintf("s%02d", 1:G), each = m), x = r6(rnorm(G * m)))
L <- t(chol(matrix(c(1, 0.3 * 0.6, 0.3 * 0.6, 0.36), 2)))
bb <- t(L %*% matrix(rnorm(2 * G), 2))
gi <- as.integer(factor(d$g))
d$y <- rbinom(G * m, 1, plogis(0.2 + 0.8 * d$x + bb[gi, 1] + bb[gi, 2] * d$x))
save_csv(d, "mixed_slope.csv")
out$slope <- describe(fit_tight(y ~ x + (x | g), d, binomial))
out$slope_uncorr <- describe(fit_tight(y ~ x + (x || g), d, binomial))

## crossed ----------------------------------------------------------------------------------
set.seed(2703)
A <- 40; B <- 50
d <- expand.grid(b = sprintf("b%02d", 1:B), a = sprintf("a%02d", 1:A))[, c("a", "b")]
d$x <- r6(rnorm(nrow(d)))
ea <- rnorm(A, 0, 0.7)[as.integer(factor(d$a))]
eb <- rnorm(B, 0, 0.5)[as.integer(factor(d$b))]
d$y <- rbinom(nrow(d), 1, plogis(-0.2 + 0.5 * d$x + ea + eb))
save_csv(d, "mixed_crossed.csv")
out$crossed <- describe(fit_tight(y ~ x + (1 | a) + (1 | b), d, binomial))

## nested -----------------------------------------------------------------------------------
set.seed(2704)
A <- 12; B <- 5; m <- 15
d <- data.frame(a = rep(sprintf("a%02d", 1:A), each = B * m),
                b = rep(rep(sprintf("b%d", 1:B), each = m), A))
d$x <- r6(rnorm(nrow(d)))
ea <- rnorm(A, 0, 0.6)[as.integer(factor(d$a))]
eab <- rnorm(A * B, 0, 0.5)[as.integer(factor(paste(d$a, d$b)))]
d$y <- rbinom(nrow(d), 1, plogis(0.1 + 0.6 * d$x + ea + eab))
save_csv(d, "mixed_nested.csv")
out$nested <- describe(fit_tight(y ~ x + (1 | a/b), d, binomial))

## Poisson with an offset -------------------------------------------------------------------
set.seed(2705)
G <- 50; m <- 10
d <- data.frame(g = rep(sprintf("p%02d", 1:G), each = m), x = r6(rnorm(G * m)),
                t = r6(runif(G * m, 0.5, 3)))
d$logt <- log(d$t)
b <- rnorm(G, 0, 0.4)[as.integer(factor(d$g))]
d$y <- rpois(nrow(d), d$t * exp(0.3 + 0.4 * d$x + b))
save_csv(d[, c("g", "x", "t", "y")], "mixed_poisson.csv")
out$poisson <- describe(fit_tight(y ~ x + offset(log(t)) + (1 | g), d, poisson))
out$poisson_agq10 <- describe(fit_tight(y ~ x + offset(log(t)) + (1 | g), d, poisson, 10L))

## a singular fit (no variance between the groups) ------------------------------------------
set.seed(2706)
G <- 30; m <- 10
d <- data.frame(g = rep(sprintf("z%02d", 1:G), each = m), x = r6(rnorm(G * m)))
d$y <- rbinom(nrow(d), 1, plogis(0.2 + 0.5 * d$x))
save_csv(d, "mixed_singular.csv")
out$singular <- describe(suppressMessages(fit_tight(y ~ x + (1 | g), d, binomial)))

write_json(out, "mixed.json")
})
