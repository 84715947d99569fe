## Reference values for Firth's bias-reduced logistic regression (issue 16): gc.FirthLogit.
##
## Run from the repository root:   Rscript tests/reference/r/firth.R
## (tests/reference/generate.R sources it at its end.)  Writes tests/reference/firth.json.
## Needs brglm2.  Deterministic: no random numbers.
##
## Method.
## - Estimates, standard errors, logLik, AIC, deviance and null deviance: brglm2,
##   glm(..., family = binomial, method = "brglmFit", type = "AS_mean") with epsilon = 1e-14
##   (the adjusted score equations of Firth 1993, = maximising l + 1/2 log|I|).
## - logistf is not installed here (no Debian package r-cran-logistf), so its profile
##   penalised-likelihood intervals and penalised likelihood-ratio (PLR) tests are computed
##   by hand, as logistf defines them (logistf.R: constrained fits with col.fit, the design
##   and so the penalty 1/2 log|X'WX| of the WHOLE model kept; Heinze & Schemper 2002):
##   firth_fit() below maximises l*(b) over the free coefficients with the others held
##   fixed, by modified-score Fisher scoring with step-halving, to a step below 1e-13.  With
##   every coefficient free it reproduces brglm2 (checked below to 1e-9).  (A brglm2 fit with
##   the coefficient moved into an offset would use the penalty of the smaller design: a
##   different profile, not logistf's.)
##   * loglik_penalized = l*(b_hat) (logistf's loglik["full"]),
##   * loglik_null_penalized: intercept free, the others held at 0 (logistf's loglik["null"]),
##   * plr_statistic[j] = 2 (l*(b_hat) - max l* with b_j = 0), plr_pvalue its chi2_1 tail
##     (logistf's prob),
##   * ci_profile: the roots b of 2 (l*(b_hat) - max l* with b_j = b) = qchisq(1 - alpha, 1),
##     by uniroot (tol 1e-13) in brackets grown outward from the Wald bound.
## - Log-likelihoods are R's (logLik, with the binomial coefficients of proportions); the
##   penalised ones add 1/2 log|X'WX| to them.
## Fields per case: formula (patsy), coef, bse, loglik, aic, deviance, null_deviance,
## loglik_penalized, loglik_null_penalized, plr_statistic, plr_pvalue, ci_profile
## (rows = coefficients, columns lower/upper at alpha), alpha, and the arguments used
## (freq weights column, trials column, offset expression); the toy case stores its data.

local({
suppressPackageStartupMessages(library(brglm2))
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

## l*(b) = sum w (y log mu + (1 - y) log(1 - mu)) + 1/2 log|X'WX| (kernel: no lchoose)
penalised <- function(X, y, w, off, b) {
  eta <- drop(X %*% b) + off
  W <- w * plogis(eta) * plogis(-eta)
  ll <- sum(w * (y * plogis(eta, log.p = TRUE) + (1 - y) * plogis(-eta, log.p = TRUE)))
  r <- qr.R(qr(X * sqrt(W)))
  ll + sum(log(abs(diag(r))))
}

firth_fit <- function(X, y, w, off, start, free, tol = 1e-13, maxit = 1000) {
  b <- start
  cur <- penalised(X, y, w, off, b)
  if (!any(free)) return(list(coef = b, pen = cur))
  for (it in seq_len(maxit)) {
    eta <- drop(X %*% b) + off
    mu <- plogis(eta)
    W <- w * mu * plogis(-eta)
    q <- qr.Q(qr(X * sqrt(W)))
    h <- rowSums(q^2)
    U <- drop(crossprod(X, w * (y - mu) + h * (0.5 - mu)))
    info <- crossprod(X * sqrt(W))
    delta <- numeric(length(b))
    delta[free] <- solve(info[free, free, drop = FALSE], U[free], tol = 0)
    step <- delta
    for (half in 0:40) {
      new <- penalised(X, y, w, off, b + step)
      if (is.finite(new) && new >= cur - 1e-12 * abs(cur)) break
      step <- step / 2
    }
    b <- b + step
    cur <- new
    if (max(abs(delta) / (1 + abs(b))) < tol) return(list(coef = b, pen = cur))
  }
  stop("firth_fit did not converge")
}

profile_root <- function(X, y, w, off, bhat, j, se, target, side) {
  free <- rep(TRUE, ncol(X)); free[j] <- FALSE
  top <- penalised(X, y, w, off, bhat)
  last <- bhat  # warm start from the last constrained fit
  f <- function(v) {
    s <- last; s[j] <- v
    fit <- firth_fit(X, y, w, off, s, free)
    last <<- fit$coef
    2 * (top - fit$pen) - target
  }
  near <- bhat[j]
  far <- bhat[j] + side * sqrt(target) * se
  while (f(far) < 0) { near <- far; far <- bhat[j] + 2 * (far - bhat[j]) }
  uniroot(f, sort(c(near, far)), tol = 1e-13, maxiter = 500)$root
}

firth_case <- function(name, formula, patsy, data, fweights = NULL, trials = NULL,
                       offset_expr = NULL, alpha = 0.05, extra = list()) {
  d <- data
  d$.w <- if (!is.null(fweights)) d[[fweights]] else if (!is.null(trials)) d[[trials]] else 1
  d$.off <- if (!is.null(offset_expr)) eval(parse(text = offset_expr), d) else 0
  fit <- glm(formula, family = binomial, data = d, weights = .w, offset = .off,
             method = "brglmFit", type = "AS_mean", epsilon = 1e-14, maxit = 1000)
  stopifnot(fit$converged)
  X <- model.matrix(fit)
  y <- fit$y
  w <- d$.w
  off <- d$.off
  b <- coef(fit)
  ok <- !is.na(b)
  Xk <- X[, ok, drop = FALSE]
  bk <- b[ok]
  mine <- firth_fit(Xk, y, w, off, rep(0, ncol(Xk)), rep(TRUE, ncol(Xk)))
  stopifnot(max(abs(mine$coef - bk) / (1 + abs(bk))) < 1e-9)
  const <- as.numeric(logLik(fit)) - (mine$pen - sum(log(abs(diag(qr.R(qr(
    Xk * sqrt(w * fit$fitted.values * (1 - fit$fitted.values)))))))))
  top <- mine$pen
  se <- sqrt(diag(vcov(fit)))
  if (length(se) == length(b)) se <- se[ok]  # vcov may carry the aliased columns as NA
  icol <- match("(Intercept)", colnames(Xk))
  free0 <- rep(FALSE, ncol(Xk)); if (!is.na(icol)) free0[icol] <- TRUE
  null_pen <- firth_fit(Xk, y, w, off, rep(0, ncol(Xk)), free0)$pen
  k <- ncol(Xk)
  stat <- ci_lo <- ci_hi <- rep(NA_real_, length(b))
  target <- qchisq(1 - alpha, 1)
  for (jj in seq_len(k)) {
    j <- which(ok)[jj]
    free <- rep(TRUE, k); free[jj] <- FALSE
    s <- mine$coef; s[jj] <- 0
    stat[j] <- 2 * (top - firth_fit(Xk, y, w, off, s, free)$pen)
    ci_lo[j] <- profile_root(Xk, y, w, off, mine$coef, jj, se[jj], target, -1)
    ci_hi[j] <- profile_root(Xk, y, w, off, mine$coef, jj, se[jj], target, 1)
  }
  bse <- rep(NA_real_, length(b)); bse[ok] <- se
  out <- list(name = name, formula = patsy, coef = vec(b), names = I(names(b)), bse = vec(bse),
              loglik = as.numeric(logLik(fit)), aic = AIC(fit), deviance = fit$deviance,
              null_deviance = fit$null.deviance,
              loglik_penalized = top + const, loglik_null_penalized = null_pen + const,
              plr_statistic = vec(stat), plr_pvalue = vec(pchisq(stat, 1, lower.tail = FALSE)),
              ci_profile = mat(cbind(ci_lo, ci_hi)), alpha = alpha,
              freq_weights = fweights, trials = trials, offset = offset_expr)
  c(out[!vapply(out, is.null, TRUE)], extra)
}

endo <- read.csv(file.path(datadir, "endometrial.csv"))
spector <- read.csv(file.path(datadir, "spector.csv"))
bw <- read.csv(file.path(datadir, "birthwt.csv"))
bw$race <- factor(bw$race, levels = sort(unique(bw$race)))
men <- read.csv(file.path(datadir, "menarche.csv"))
men$prop <- men$Menarche / men$Total
spector$fw <- 1 + seq_len(nrow(spector)) %% 3
endo$NV2 <- 2 * endo$NV
toy <- data.frame(x = c(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
                  z = c(0.5, -1, 2, 0, 1.5, -0.5, 1, 2.5, -2, 0.3),
                  y = c(0, 0, 0, 0, 0, 1, 1, 1, 1, 1))

cases <- list(
  firth_case("endometrial", HG ~ NV + PI + EH, "HG ~ NV + PI + EH", endo),
  firth_case("endometrial_90", HG ~ NV + PI + EH, "HG ~ NV + PI + EH", endo, alpha = 0.10),
  firth_case("spector", GRADE ~ GPA + TUCE + PSI, "GRADE ~ GPA + TUCE + PSI", spector),
  firth_case("birthwt", low ~ race + age + lwt + smoke + ht + ui,
             "low ~ C(race) + age + lwt + smoke + ht + ui", bw),
  firth_case("spector_freq_weights", GRADE ~ GPA + TUCE + PSI, "GRADE ~ GPA + TUCE + PSI",
             spector, fweights = "fw"),
  firth_case("menarche_trials", prop ~ Age, "prop ~ Age", men, trials = "Total"),
  firth_case("spector_offset", GRADE ~ GPA + PSI, "GRADE ~ GPA + PSI", spector,
             offset_expr = "0.05 * TUCE"),
  firth_case("endometrial_no_intercept", HG ~ 0 + NV + PI + EH, "HG ~ 0 + NV + PI + EH", endo),
  firth_case("endometrial_aliased", HG ~ NV + PI + EH + NV2, "HG ~ NV + PI + EH + NV2", endo),
  firth_case("toy_complete_separation", y ~ x + z, "y ~ x + z", toy,
             extra = list(data = list(x = vec(toy$x), z = vec(toy$z), y = vec(toy$y))))
)

write_json(list(meta = list(generator = "tests/reference/r/firth.R",
                            R_version = R.version.string,
                            brglm2 = as.character(packageVersion("brglm2")),
                            number_format = "shortest of %.15g/%.16g/%.17g; NA -> null"),
                cases = cases), "firth.json")
})
