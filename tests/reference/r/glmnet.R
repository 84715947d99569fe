## R reference values for lasso / elastic-net logistic regression (issue 16, part 2):
## glmnet(family = "binomial") at fixed lambdas with alpha (glmclass's L1_wt) in {1, 0.5, 0},
## standardize = FALSE (glmclass's default) and TRUE, penalty factors, frequency weights, a
## fixed lambda path, glmnet's own default lambda sequence, a probit fit
## (family = binomial(link = "probit")), cv.glmnet with given fold ids (deviance), and
## gaussian and poisson fits (gc.GLM's other families).
## Writes tests/reference/glmnet.json.
##
## glmnet minimises -sum(w l) / sum(w) + lambda ((1 - alpha) / 2 ||b||^2 + alpha ||b||_1), the
## intercept unpenalised; penalty factors are rescaled to sum to the number of variables.
## thresh = 1e-14 makes the coordinate descent converge far below the tests' 1e-6.
##
## Run from the repository root:   Rscript tests/reference/r/glmnet.R
## (generate.R sources it at its end). Needs glmnet; deterministic.

suppressPackageStartupMessages(library(glmnet))
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

THRESH <- 1e-14
MAXIT <- 1e7

birthwt <- read.csv(file.path(datadir, "birthwt.csv"))
spector <- read.csv(file.path(datadir, "spector.csv"))
bw_cols <- c("age", "lwt", "smoke", "ptl", "ht", "ui", "ftv")
sp_cols <- c("GPA", "TUCE", "PSI")
datasets <- list(
  birthwt = list(x = as.matrix(birthwt[, bw_cols]), y = birthwt$low, cols = bw_cols),
  spector = list(x = as.matrix(spector[, sp_cols]), y = spector$GRADE, cols = sp_cols)
)

coefs <- function(fit) {
  b <- as.matrix(coef(fit))  # (p + 1) x nlambda, intercept first
  lapply(seq_len(ncol(b)), function(k) vec(b[, k]))
}

## lambda_max of glmnet's own sequence (the smallest lambda with every penalised
## coefficient zero), for L1_wt = 1 and 0.5
lam_max <- function(d, alpha, standardize = FALSE, weights = NULL, pf = NULL) {
  args <- list(d$x, d$y, family = "binomial", alpha = alpha, standardize = standardize)
  if (!is.null(weights)) args$weights <- weights
  if (!is.null(pf)) args$penalty.factor <- pf
  do.call(glmnet, args)$lambda[1]
}

fixed <- list()
for (dn in names(datasets)) {
  d <- datasets[[dn]]
  for (a in c(1, 0.5, 0)) {
    lmax <- lam_max(d, max(a, 0.5))
    lams <- lmax * c(0.5, 0.1, 0.01)
    fit <- glmnet(d$x, d$y, family = "binomial", alpha = a, lambda = lams,
                  standardize = FALSE, thresh = THRESH, maxit = MAXIT)
    fixed[[length(fixed) + 1]] <- list(
      data = dn, columns = d$cols, L1_wt = a, standardize = FALSE, lambda = vec(fit$lambda),
      coef = coefs(fit), dev_ratio = vec(fit$dev.ratio), nulldev = fit$nulldev,
      weights = NULL, penalty_factor = NULL)
  }
}

## standardize = TRUE (coefficients on the original scale), lasso and elastic net
d <- datasets$birthwt
for (a in c(1, 0.5)) {
  lmax <- lam_max(d, a, standardize = TRUE)
  lams <- lmax * c(0.5, 0.05)
  fit <- glmnet(d$x, d$y, family = "binomial", alpha = a, lambda = lams, standardize = TRUE,
                thresh = THRESH, maxit = MAXIT)
  fixed[[length(fixed) + 1]] <- list(
    data = "birthwt", columns = d$cols, L1_wt = a, standardize = TRUE, lambda = vec(fit$lambda),
    coef = coefs(fit), dev_ratio = vec(fit$dev.ratio), nulldev = fit$nulldev, weights = NULL,
    penalty_factor = NULL)
}

## frequency weights (glmnet normalises them to sum 1: the objective is a weighted mean)
w <- 1 + (seq_len(nrow(d$x)) %% 3)
lmax <- lam_max(d, 1, weights = w)
fit <- glmnet(d$x, d$y, family = "binomial", alpha = 1, lambda = lmax * c(0.3, 0.03),
              weights = w, standardize = FALSE, thresh = THRESH, maxit = MAXIT)
fixed[[length(fixed) + 1]] <- list(
  data = "birthwt", columns = d$cols, L1_wt = 1, standardize = FALSE, lambda = vec(fit$lambda),
  coef = coefs(fit), dev_ratio = vec(fit$dev.ratio), nulldev = fit$nulldev, weights = vec(w),
  penalty_factor = NULL)

## penalty factors: smoke unpenalised, ht penalised twice as much (glmnet rescales them to sum
## to the number of variables)
pf <- c(1, 1, 0, 1, 2, 1, 1)
lmax <- lam_max(d, 0.5, pf = pf)
fit <- glmnet(d$x, d$y, family = "binomial", alpha = 0.5, lambda = lmax * c(0.5, 0.05),
              penalty.factor = pf, standardize = FALSE, thresh = THRESH, maxit = MAXIT)
fixed[[length(fixed) + 1]] <- list(
  data = "birthwt", columns = d$cols, L1_wt = 0.5, standardize = FALSE,
  lambda = vec(fit$lambda), coef = coefs(fit), dev_ratio = vec(fit$dev.ratio),
  nulldev = fit$nulldev, weights = NULL, penalty_factor = vec(pf))

## a whole path on a fixed lambda sequence, and glmnet's default sequence (lambda_max and
## lambda.min.ratio = 1e-4 for nobs > nvars)
paths <- list()
for (dn in names(datasets)) {
  d <- datasets[[dn]]
  for (a in c(1, 0.5)) {
    default <- glmnet(d$x, d$y, family = "binomial", alpha = a, standardize = FALSE)
    lams <- default$lambda[1] * 10^seq(0, -3, length.out = 25)
    fit <- glmnet(d$x, d$y, family = "binomial", alpha = a, lambda = lams,
                  standardize = FALSE, thresh = THRESH, maxit = MAXIT)
    paths[[length(paths) + 1]] <- list(
      data = dn, columns = d$cols, L1_wt = a, lambda = vec(fit$lambda), coef = coefs(fit),
      default_lambda = vec(default$lambda), df = vec(fit$df))
  }
}

## probit (glmnet's glm-family path, IRLS outside the coordinate descent)
d <- datasets$spector
pr <- glmnet(d$x, d$y, family = binomial(link = "probit"), alpha = 1,
             lambda = c(0.05, 0.01), standardize = FALSE, thresh = THRESH, maxit = MAXIT)
probit <- list(data = "spector", columns = d$cols, L1_wt = 1, lambda = vec(pr$lambda),
               coef = coefs(pr))

## cv.glmnet, deviance, with fold ids given (rows in order: 1..10 repeating) on birthwt
d <- datasets$birthwt
foldid <- rep_len(1:10, nrow(d$x))
default <- glmnet(d$x, d$y, family = "binomial", alpha = 1, standardize = FALSE)
lams <- default$lambda[1] * 10^seq(0, -2, length.out = 30)
cv <- cv.glmnet(d$x, d$y, family = "binomial", alpha = 1, lambda = lams, foldid = foldid,
                type.measure = "deviance", standardize = FALSE, thresh = THRESH, maxit = MAXIT)
cvres <- list(data = "birthwt", columns = d$cols, L1_wt = 1, foldid = vec(foldid),
              lambda = vec(cv$lambda), cvm = vec(cv$cvm), cvsd = vec(cv$cvsd),
              lambda_min = cv$lambda.min, lambda_1se = cv$lambda.1se)

## other families of gc.GLM: the same objective, deviance / (2 n) + penalty
bw <- birthwt
xo <- as.matrix(bw[, c("age", "lwt", "smoke")])
gauss <- glmnet(xo, bw$bwt, family = "gaussian", alpha = 0.5, lambda = c(30, 10),
                standardize = FALSE, thresh = THRESH, maxit = MAXIT)
pois <- glmnet(xo, bw$ftv, family = "poisson", alpha = 1, lambda = c(0.05, 0.01),
               standardize = FALSE, thresh = THRESH, maxit = MAXIT)
families <- list(
  list(family = "gaussian", response = "bwt", columns = c("age", "lwt", "smoke"),
       L1_wt = 0.5, lambda = vec(gauss$lambda), coef = coefs(gauss)),
  list(family = "poisson", response = "ftv", columns = c("age", "lwt", "smoke"),
       L1_wt = 1, lambda = vec(pois$lambda), coef = coefs(pois)))

write_json(list(
  glmnet_version = as.character(packageVersion("glmnet")),
  fixed = fixed, paths = paths, probit = probit, cv = cvres, families = families
), "glmnet.json")
