## Reference values from R for the glmclass test-suite.
##
## Run from the repository root:   Rscript tests/reference/generate.R
## Needs: r-base-core, MASS, nnet, arm (Debian: r-cran-mass r-cran-nnet r-cran-arm).
## Reads  tests/reference/data/*.csv   and writes   tests/reference/{glm,multinom,
## discrim,bayesglm,custom_link}.json.  Deterministic: no random numbers are drawn.
##
## Numbers are written with the shortest of 15/16/17 significant digits that reads back
## as the identical double, NA/NaN as null.  Schema: see README.md.

suppressPackageStartupMessages({
  library(MASS)
  library(nnet)
  library(arm)
})
options(warn = 1, stringsAsFactors = FALSE)

refdir <- file.path("tests", "reference")
datadir <- file.path(refdir, "data")
if (!dir.exists(datadir)) stop("run from the repository root (", datadir, " not found)")

## ---------------------------------------------------------------------------------------
## A small JSON writer (jsonlite's digits = NA stops at 15 significant digits).
## Convention: an atomic vector of length 1 is written as a scalar unless wrapped in I();
## a matrix is an array of rows; a named list is an object, an unnamed list an array.
## ---------------------------------------------------------------------------------------
num_str <- function(x) {
  out <- character(length(x))
  for (i in seq_along(x)) {
    v <- x[i]
    if (is.na(v)) { out[i] <- "null"; next }
    if (is.infinite(v)) { out[i] <- if (v > 0) "Infinity" else "-Infinity"; next }
    if (v == 0) { out[i] <- "0"; next }
    for (d in 15:17) {
      s <- sprintf("%.*g", d, v)
      if (as.numeric(s) == v) break
    }
    out[i] <- s
  }
  out
}

json_escape <- function(s) {
  s <- gsub("\\", "\\\\", s, fixed = TRUE)
  s <- gsub("\"", "\\\"", s, fixed = TRUE)
  s <- gsub("\n", "\\n", s, fixed = TRUE)
  s <- gsub("\t", "\\t", s, fixed = TRUE)
  ifelse(is.na(s), "null", paste0("\"", s, "\""))
}

atom_strs <- function(x) {
  if (is.factor(x)) x <- as.character(x)
  if (is.character(x)) return(json_escape(x))
  if (is.logical(x)) return(ifelse(is.na(x), "null", ifelse(x, "true", "false")))
  if (is.integer(x)) return(ifelse(is.na(x), "null", as.character(x)))
  if (is.numeric(x)) return(num_str(as.numeric(x)))
  stop("cannot write type ", typeof(x))
}

to_json <- function(x, indent = 0L) {
  pad <- strrep("  ", indent + 1L)
  pad0 <- strrep("  ", indent)
  if (is.null(x)) return("null")
  if (is.list(x) && !is.data.frame(x)) {
    if (length(x) == 0L) return(if (is.null(names(x))) "[]" else "{}")
    items <- vapply(x, to_json, "", indent = indent + 1L)
    if (!is.null(names(x)) && all(nzchar(names(x)))) {
      items <- paste0(json_escape(names(x)), ": ", items)
      return(paste0("{\n", pad, paste(items, collapse = paste0(",\n", pad)), "\n", pad0, "}"))
    }
    return(paste0("[\n", pad, paste(items, collapse = paste0(",\n", pad)), "\n", pad0, "]"))
  }
  if (is.matrix(x)) {
    rows <- vapply(seq_len(nrow(x)), function(i)
      paste0("[", paste(atom_strs(x[i, , drop = TRUE]), collapse = ", "), "]"), "")
    if (length(rows) == 0L) return("[]")
    return(paste0("[\n", pad, paste(rows, collapse = paste0(",\n", pad)), "\n", pad0, "]"))
  }
  if (is.atomic(x)) {
    s <- atom_strs(unclass(x))
    if (length(x) == 1L && !inherits(x, "AsIs")) return(s)
    return(paste0("[", paste(s, collapse = ", "), "]"))
  }
  stop("cannot write object of class ", class(x)[1])
}

write_json <- function(x, name) {
  path <- file.path(refdir, name)
  writeLines(to_json(x), path, useBytes = TRUE)
  cat("wrote", path, "\n")
}

## plain (unnamed) vector / matrix helpers
vec <- function(x) I(unname(as.vector(x)))
mat <- function(x) { x <- as.matrix(x); dimnames(x) <- NULL; x }
head_n <- function(x, n) vec(x[seq_len(min(n, length(x)))])

meta <- list(
  generator = "tests/reference/generate.R",
  R_version = R.version.string,
  packages = list(
    stats = as.character(packageVersion("stats")),
    MASS = as.character(packageVersion("MASS")),
    nnet = as.character(packageVersion("nnet")),
    arm = as.character(packageVersion("arm"))
  ),
  platform = R.version$platform,
  blas = if (!is.null(extSoftVersion()["BLAS"])) unname(extSoftVersion()["BLAS"]) else "",
  number_format = "shortest of %.15g/%.16g/%.17g that reads back identically; NA -> null",
  read_csv = paste("pandas.read_csv('tests/reference/data/<dataset>.csv',",
                   "keep_default_na=False, na_values=['']) -- survey's Exer has a level",
                   "'None' that pandas' default NA list would turn into NaN")
)

## ---------------------------------------------------------------------------------------
## Data.  Every character column becomes a factor whose levels are sorted by code point
## (sort(method = "radix"): C-locale order, the same as Python's sorted()), so R's first
## level -- the treatment-coding reference -- is the one patsy picks by default.  The only
## exceptions are explicit and recorded in the JSON ("levels" / "factor_levels").
## ---------------------------------------------------------------------------------------
read_data <- function(name, levels = list()) {
  d <- read.csv(file.path(datadir, paste0(name, ".csv")), stringsAsFactors = FALSE,
                na.strings = "", check.names = FALSE)
  for (v in names(d)) {
    if (v %in% names(levels)) {
      stopifnot(setequal(levels[[v]], unique(na.omit(as.character(d[[v]])))))
      d[[v]] <- factor(as.character(d[[v]]), levels = levels[[v]])
    } else if (is.character(d[[v]])) {
      d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]][!is.na(d[[v]])]), method = "radix"))
    }
  }
  d
}

factor_levels <- function(d) {
  f <- Filter(is.factor, d)
  if (length(f) == 0L) return(setNames(list(), character(0)))
  lapply(f, function(z) I(levels(z)))
}

DATA <- list(
  spector = read_data("spector"),
  birthwt = read_data("birthwt"),
  menarche = read_data("menarche"),
  insurance = read_data("insurance", levels = list(District = c("1", "2", "3", "4"))),
  quine = read_data("quine"),
  ucb = read_data("ucb"),
  endometrial = read_data("endometrial"),
  iris = read_data("iris"),
  crabs = read_data("crabs"),
  survey = read_data("survey"),
  housing = read_data("housing"),
  housing_satnat = read_data("housing", levels = list(Sat = c("Low", "Medium", "High")))
)
## derived columns (documented in the JSON as "derived_columns"; Python must add them)
DATA$birthwt$age2 <- DATA$birthwt$age
DATA$crabs$sp_sex <- factor(paste(DATA$crabs$sp, DATA$crabs$sex, sep = "_"))
stopifnot(identical(levels(DATA$crabs$sp_sex), c("B_F", "B_M", "O_F", "O_M")))

## Sanity check of the transcribed endometrial data against the ML fit printed in the
## brglm2 README (Heinze & Schemper 2002 example): 4.30452, -0.04218, -2.90261;
## null deviance 104.903, residual deviance 55.393.
local({
  m <- suppressWarnings(glm(HG ~ NV + PI + EH, family = binomial, data = DATA$endometrial))
  stopifnot(nrow(DATA$endometrial) == 79L, sum(DATA$endometrial$HG) == 30,
            all(abs(coef(m)[c(1, 3, 4)] - c(4.30452, -0.04218, -2.90261)) < 6e-6),
            abs(m$null.deviance - 104.903) < 1e-3, abs(m$deviance - 55.393) < 1e-3)
})

## patsy names of the columns of a model matrix (treatment coding, no interactions):
## "(Intercept)" -> "Intercept"; factor f at level L -> "f[T.L]"; numeric x -> "x".
## `wrap` maps a variable to the patsy term that builds it, e.g. District -> C(District).
patsy_names <- function(mm, mf, wrap = list()) {
  asg <- attr(mm, "assign")
  labs <- attr(terms(mf), "term.labels")
  out <- character(ncol(mm))
  for (j in seq_len(ncol(mm))) {
    if (asg[j] == 0L) { out[j] <- "Intercept"; next }
    v <- labs[asg[j]]
    tv <- if (!is.null(wrap[[v]])) wrap[[v]] else v
    if (is.factor(mf[[v]])) {
      lev <- substring(colnames(mm)[j], nchar(v) + 1L)
      out[j] <- paste0(tv, "[T.", lev, "]")
    } else {
      out[j] <- tv
    }
  }
  out
}

## ---------------------------------------------------------------------------------------
## glm.json
## ---------------------------------------------------------------------------------------
loglog_link <- structure(list(
  linkfun = function(mu) -log(-log(mu)),
  linkinv = function(eta) exp(-exp(-eta)),
  mu.eta = function(eta) exp(-exp(-eta) - eta),
  valideta = function(eta) TRUE,
  name = "loglog"
), class = "link-glm")

## second derivative d^2 mu / d eta^2 of the inverse links (for the observed information)
mu_eta2 <- function(link, eta) {
  switch(link,
    logit = { m <- plogis(eta); m * (1 - m) * (1 - 2 * m) },
    probit = -eta * dnorm(eta),
    cloglog = { me <- exp(eta - exp(eta)); me * (1 - exp(eta)) },
    cauchit = -2 * eta / (pi * (1 + eta^2)^2),
    loglog = { me <- exp(-exp(-eta) - eta); me * (exp(-eta) - 1) },
    log = exp(eta),
    identity = 0 * eta,
    stop("no mu_eta2 for link ", link))
}

## observed information X' diag(w_obs) X / dispersion at the fit (non-aliased columns);
## `d2` is d^2 mu / d eta^2 as a function of eta (default: by link name, see mu_eta2)
observed_information <- function(fit, d2 = function(eta) mu_eta2(fit$family$link, eta)) {
  fam <- fit$family
  X <- model.matrix(fit)[, !is.na(coef(fit)), drop = FALSE]
  eta <- fit$linear.predictors
  mu <- fit$fitted.values
  y <- fit$y
  pw <- fit$prior.weights
  me <- fam$mu.eta(eta)
  V <- fam$variance(mu)
  dV <- switch(fam$family, binomial = 1 - 2 * mu, poisson = rep(1, length(mu)),
               gaussian = rep(0, length(mu)), stop("family"))
  ## d/deta [ (y - mu) mu.eta / V ] = -mu.eta^2/V + (y - mu) (mu_eta2/V - mu.eta^2 V'/V^2)
  wobs <- pw * (me^2 / V - (y - mu) * (d2(eta) / V - me^2 * dV / V^2))
  crossprod(X, X * wobs)
}

glm_score_fun <- function(fit) {
  ## score as a function of the (non-aliased) coefficients, for a numeric check of the
  ## observed information (central differences of the analytic score)
  fam <- fit$family
  X <- model.matrix(fit)[, !is.na(coef(fit)), drop = FALSE]
  off <- if (is.null(fit$offset)) 0 else fit$offset
  y <- fit$y
  pw <- fit$prior.weights
  function(b) {
    eta <- drop(X %*% b) + off
    mu <- fam$linkinv(eta)
    drop(crossprod(X, pw * (y - mu) * fam$mu.eta(eta) / fam$variance(mu)))
  }
}

numeric_jacobian <- function(f, b, X) {
  J <- matrix(0, length(b), length(b))
  for (j in seq_along(b)) {
    h <- 1e-5 / max(abs(X[, j]))   # moves the linear predictor by at most 1e-5
    e <- replace(numeric(length(b)), j, h)
    J[, j] <- (f(b + e) - f(b - e)) / (2 * h)
  }
  J
}

## glm's test |dev - dev_old| / (|dev| + 0.1) < epsilon stops Fisher scoring while the
## coefficients can still be ~1e-7 from the MLE (the deviance is flat there, and scoring
## converges only linearly for non-canonical links); the stored qr (hence the SEs) also
## belongs to the previous iterate.  So restart glm from its own estimate (one more
## scoring step per call) until the coefficients stop moving: every stored quantity
## then comes from an R glm object at the MLE to machine precision.
## `cl` is the (unevaluated) glm call that produced `fit`, evaluated again in `env`.
glm_polish <- function(cl, fit, name, env = parent.frame()) {
  iter_initial <- fit$iter
  score_initial <- max(abs(glm_score_fun(fit)(coef(fit)[!is.na(coef(fit))])))
  restarts <- 0L
  repeat {
    st <- coef(fit)
    st[is.na(st)] <- 0
    cl$start <- st
    fit <- withCallingHandlers(eval(cl, env), warning = function(w) invokeRestart("muffleWarning"))
    restarts <- restarts + 1L
    if (!fit$converged) stop("glm restart of ", name, " did not converge")
    change <- max(abs(coef(fit) - st), na.rm = TRUE)
    if (change <= 8 * .Machine$double.eps * max(abs(st)) || restarts >= 200L) break
  }
  if (restarts >= 200L) stop("glm case ", name, " did not settle after restarts")
  ## one final restart so that the qr/weights are evaluated at the settled estimate
  st <- coef(fit); st[is.na(st)] <- 0; cl$start <- st
  fit <- withCallingHandlers(eval(cl, env), warning = function(w) invokeRestart("muffleWarning"))
  score_final <- max(abs(glm_score_fun(fit)(coef(fit)[!is.na(coef(fit))])))
  list(fit = fit, iter_initial = iter_initial, restarts = restarts,
       score_initial = score_initial, score_final = score_final)
}

glm_case <- function(name, data, formula, family, link, weights = NULL, offset = NULL,
                     patsy_formula, patsy_wrap = list(), derived = NULL, note = NULL,
                     make_family = NULL, epsilon = 1e-14) {
  d <- DATA[[data]]
  fam <- if (!is.null(make_family)) make_family else get(family)(link = link)
  cl <- substitute(
    glm(F, family = FAM, data = d, weights = W, offset = O,
        control = glm.control(epsilon = EPS, maxit = 100)),
    list(F = as.formula(formula), FAM = fam, EPS = epsilon,
         W = if (is.null(weights)) NULL else as.name(weights),
         O = if (is.null(offset)) NULL else str2lang(offset)))
  warns <- character(0)
  fit <- withCallingHandlers(eval(cl), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning")
  })
  if (!fit$converged) stop("glm case ", name, " did not converge")
  pol <- glm_polish(cl, fit, name)
  fit <- pol$fit
  iter_initial <- pol$iter_initial
  restarts <- pol$restarts
  score_initial <- pol$score_initial
  score_final <- pol$score_final
  cat(sprintf("  %-28s iter %2d, +%3d restarts, max|score| %.1e -> %.1e\n", name,
              iter_initial, restarts, score_initial, score_final))
  s <- summary(fit)
  cf <- coef(fit)
  cm <- s$coefficients
  idx <- match(rownames(cm), names(cf))
  fill <- function(v) { out <- rep(NA_real_, length(cf)); out[idx] <- v; out }
  stat_name <- if (colnames(cm)[3] == "z value") "z" else "t"
  mf <- model.frame(fit)
  mm <- model.matrix(fit)

  ## observed-information SEs (= expected for canonical links), checked numerically
  Iobs <- observed_information(fit)
  se_obs <- fill(sqrt(diag(solve(Iobs)) * s$dispersion))
  if (family != "gaussian") {
    H <- numeric_jacobian(glm_score_fun(fit), cf[!is.na(cf)], mm[, !is.na(cf), drop = FALSE])
    relerr <- max(abs(-H - Iobs)) / max(abs(Iobs))
    cat(sprintf("  %-28s observed-information check: rel. err %.1e\n", name, relerr))
    if (relerr > 1e-7) stop("observed information check failed in ", name, ": ", relerr)
  }

  ll <- logLik(fit)
  rows5 <- d[rownames(mf)[1:5], , drop = FALSE]
  pred5 <- withCallingHandlers(predict(fit, newdata = rows5, type = "response"),
                               warning = function(w) invokeRestart("muffleWarning"))
  res <- list(
    name = name,
    dataset = data,
    derived_columns = derived,
    formula = formula,
    patsy_formula = patsy_formula,
    family = family,
    link = fit$family$link,
    weights = weights,
    offset = offset,
    note = note,
    control_epsilon = epsilon,
    nobs = nobs(fit),
    n_rows = nrow(mf),
    coef_names = I(names(cf)),
    patsy_coef_names = I(patsy_names(mm, mf, patsy_wrap)),
    aliased = vec(is.na(cf)),
    coef = vec(cf),
    se_expected = vec(fill(cm[, 2])),
    se_observed = vec(se_obs),
    stat_name = stat_name,
    stat = vec(fill(cm[, 3])),
    pvalues = vec(fill(cm[, 4])),
    cov_names = I(rownames(cm)),
    cov_unscaled = mat(s$cov.unscaled),
    cov_scaled = mat(s$cov.scaled),
    dispersion = s$dispersion,
    deviance = fit$deviance,
    null_deviance = fit$null.deviance,
    df_residual = fit$df.residual,
    df_null = fit$df.null,
    rank = fit$rank,
    aic = fit$aic,
    loglik = as.numeric(ll),
    loglik_df = attr(ll, "df"),
    bic = BIC(fit),
    iter = iter_initial,
    polish_restarts = restarts,
    score_max_abs_initial = score_initial,
    score_max_abs = score_final,
    converged = fit$converged,
    fitted_head = head_n(fitted(fit), 10),
    fitted_sum = sum(fitted(fit)),
    linear_predictors_head = head_n(fit$linear.predictors, 10),
    residuals_head = list(
      response = head_n(residuals(fit, "response"), 10),
      pearson = head_n(residuals(fit, "pearson"), 10),
      deviance = head_n(residuals(fit, "deviance"), 10),
      working = head_n(residuals(fit, "working"), 10)
    ),
    predict_response_head5 = vec(pred5),
    warnings = I(warns)
  )
  res[!vapply(res, is.null, TRUE)]
}

bw_rhs <- "age + lwt + race + smoke"
glm_cases <- list()
add_glm <- function(...) { r <- glm_case(...); glm_cases[[r$name]] <<- r }

for (lk in c("logit", "probit", "cloglog", "cauchit", "loglog")) {
  mk <- if (lk == "loglog") binomial(link = loglog_link) else NULL
  add_glm(paste0("spector_", lk), "spector", "GRADE ~ GPA + TUCE + PSI", "binomial", lk,
          patsy_formula = "GRADE ~ GPA + TUCE + PSI", make_family = mk)
  add_glm(paste0("birthwt_", lk), "birthwt", paste("low ~", bw_rhs), "binomial", lk,
          patsy_formula = paste("low ~", bw_rhs), make_family = mk)
}
for (lk in c("logit", "probit", "cloglog")) {
  add_glm(paste0("menarche_", lk), "menarche", "Menarche/Total ~ Age", "binomial", lk,
          weights = "Total", patsy_formula = "I(Menarche / Total) ~ Age",
          note = paste("binomial proportions y = Menarche/Total with prior weights = Total",
                       "(trials). Last row (Age 17.58, 1049/1049): under cloglog R clamps",
                       "mu at 1 - 2.2e-16 (true 1 - 1.6e-19), hence R's 'fitted probabilities",
                       "numerically 0 or 1' warning; the effect on the estimates is ~1e-14",
                       "but that row's pearson/working residuals are clamping artefacts"))
}
add_glm("ucb_logit_freq", "ucb", "admitted ~ Gender + Dept", "binomial", "logit",
        weights = "Freq", patsy_formula = "admitted ~ Gender + Dept",
        note = paste("binary response with frequency weights Freq; R treats them as prior",
                     "weights, so nobs/df_residual/BIC count the 24 rows, not sum(Freq)"))
add_glm("birthwt_gaussian", "birthwt", paste("bwt ~", bw_rhs), "gaussian", "identity",
        patsy_formula = paste("bwt ~", bw_rhs))
add_glm("quine_poisson", "quine", "Days ~ Eth + Sex + Age + Lrn", "poisson", "log",
        patsy_formula = "Days ~ Eth + Sex + Age + Lrn")
add_glm("insurance_poisson_offset", "insurance", "Claims ~ District + Group + Age", "poisson",
        "log", offset = "log(Holders)",
        patsy_formula = "Claims ~ C(District) + Group + Age", patsy_wrap = list(District = "C(District)"),
        note = "pandas reads District (labels 1-4) as integers: wrap it in C() as patsy_formula does")
add_glm("birthwt_logit_rankdef", "birthwt", paste("low ~ age + age2 + lwt + race + smoke"),
        "binomial", "logit", derived = list(age2 = "age"),
        patsy_formula = "low ~ age + age2 + lwt + race + smoke",
        epsilon = 1e-10,
        note = paste("age2 is an exact copy of age: R's pivoted QR aliases age2 (coef NA).",
                     "glm.fit uses min(1e-7, epsilon/1000) as the QR rank tolerance, so with",
                     "epsilon = 1e-14 (tol 1e-17) the duplicate is NOT detected and IRLS diverges;",
                     "this case therefore uses epsilon = 1e-10 (tol 1e-13). The non-aliased",
                     "estimates equal those of birthwt_logit."))
local({
  a <- glm_cases$birthwt_logit_rankdef; b <- glm_cases$birthwt_logit
  stopifnot(identical(a$aliased, I(c(FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, FALSE))))
  d <- max(abs(a$coef[!a$aliased] - b$coef) / abs(b$coef))
  cat(sprintf("  rank-deficient vs full-rank birthwt_logit: max rel coef diff %.1e\n", d))
  stopifnot(d < 1e-10)
})

write_json(list(meta = meta,
                datasets = lapply(DATA[c("spector", "birthwt", "menarche", "insurance",
                                         "quine", "ucb")], factor_levels),
                cases = unname(glm_cases)), "glm.json")

## ---------------------------------------------------------------------------------------
## multinom.json
## ---------------------------------------------------------------------------------------
## multinomial logit pieces: B is (K-1) x p, rows = non-reference levels
mn_eval <- function(B, X, Y, w) {
  eta <- cbind(0, X %*% t(B))
  m <- apply(eta, 1, max)
  P <- exp(eta - m)
  P <- P / rowSums(P)
  ll <- sum(w * rowSums(Y * log(P)))
  G <- t(Y[, -1, drop = FALSE] - P[, -1, drop = FALSE]) %*% (w * X)  # (K-1) x p
  K1 <- nrow(B); p <- ncol(B)
  H <- matrix(0, K1 * p, K1 * p)   # -Hessian, parameters ordered row-major in B
  for (k in seq_len(K1)) for (l in seq_len(K1)) {
    a <- w * P[, k + 1] * ((k == l) - P[, l + 1])
    H[(k - 1) * p + 1:p, (l - 1) * p + 1:p] <- crossprod(X, X * a)
  }
  list(ll = ll, grad = G, info = H, P = P)
}

mn_polish <- function(B, X, Y, w) {
  cur <- mn_eval(B, X, Y, w)
  for (it in 1:100) {
    step <- matrix(solve(cur$info, as.vector(t(cur$grad))), nrow(B), byrow = TRUE)
    t <- 1
    repeat {
      new <- mn_eval(B + t * step, X, Y, w)
      if (new$ll >= cur$ll - 1e-12 * abs(cur$ll) || t < 1e-8) break
      t <- t / 2
    }
    B <- B + t * step
    cur <- new
    if (max(abs(t * step)) < 1e-15 * (1 + max(abs(B)))) break
  }
  ## two more plain Newton steps at full precision
  for (i in 1:2) {
    step <- matrix(solve(cur$info, as.vector(t(cur$grad))), nrow(B), byrow = TRUE)
    B <- B + step
    cur <- mn_eval(B, X, Y, w)
  }
  list(B = B, eval = cur, iter = it)
}

multinom_case <- function(name, data, formula, weights = NULL, patsy_rhs, note = NULL,
                          csv = data) {
  d <- DATA[[data]]
  cl <- substitute(
    multinom(F, data = d, weights = W, Hess = TRUE, reltol = 1e-16, abstol = 1e-30,
             maxit = 10000, trace = FALSE, model = TRUE),
    list(F = as.formula(formula), W = if (is.null(weights)) NULL else as.name(weights)))
  fit <- eval(cl)
  if (fit$convergence != 0) stop("multinom case ", name, " did not converge (nnet)")
  mf <- fit$model
  X <- model.matrix(attr(mf, "terms"), mf)
  yf <- model.response(mf)
  lev <- levels(yf)
  Y <- outer(as.integer(yf), seq_along(lev), "==") * 1
  w <- if (is.null(weights)) rep(1, nrow(X)) else model.weights(mf)
  if (is.null(w)) w <- mf[["(weights)"]]
  stopifnot(nrow(X) == nrow(fit$fitted.values), identical(lev, fit$lev))

  raw_coef <- coef(fit)
  raw_se <- summary(fit)$standard.errors
  raw_eval <- mn_eval(raw_coef, X, Y, w)
  raw_dev <- fit$deviance
  stopifnot(abs(-2 * raw_eval$ll - raw_dev) < 1e-8 * raw_dev)

  pol <- mn_polish(raw_coef, X, Y, w)
  B <- pol$B
  dimnames(B) <- dimnames(raw_coef)
  ## put the polished MLE back into the nnet object and let nnet recompute its Hessian
  r <- length(fit$vcoefnames)
  Wm <- matrix(fit$wts, nrow = fit$n[3L], byrow = TRUE)
  Wm[-1L, 1L + (1L:r)] <- B
  fit$wts <- as.vector(t(Wm))
  Pm <- pol$eval$P
  dimnames(Pm) <- dimnames(fit$fitted.values)
  fit$fitted.values <- Pm
  fit$value <- -pol$eval$ll
  fit$deviance <- -2 * pol$eval$ll
  fit$AIC <- fit$deviance + 2 * fit$edf
  fit$Hessian <- nnet:::multinomHess(fit, X)
  stopifnot(max(abs(coef(fit) - B)) == 0)
  cat(sprintf("  %-22s nnet->polished max|dcoef| %.1e, |grad| %.1e -> %.1e\n", name,
              max(abs(raw_coef - B)), sqrt(sum(raw_eval$grad^2)), sqrt(sum(pol$eval$grad^2))))
  if (max(abs(raw_coef - B)) > 1e-3 * (1 + max(abs(B)))) stop("polish moved far: separation?")
  sm <- summary(fit)
  Hn <- fit$Hessian
  stopifnot(max(abs(Hn - pol$eval$info)) < 1e-8 * max(abs(Hn)))
  ll <- logLik(fit)
  rows5 <- d[rownames(mf)[1:5], , drop = FALSE]
  list(
    name = name,
    dataset = csv,
    formula = formula,
    patsy_rhs = patsy_rhs,
    response = all.vars(as.formula(formula))[1],
    levels = I(lev),
    reference_level = lev[1],
    weights = weights,
    note = note,
    n_rows_data = nrow(d),
    n_complete = nrow(X),
    sum_weights = sum(w),
    coef_names = I(fit$vcoefnames),
    patsy_coef_names = I(patsy_names(X, mf)),
    coef = mat(B),
    se = mat(sm$standard.errors),
    vcov_names = I(rownames(Hn)),
    vcov = mat(solve(Hn)),
    deviance = fit$deviance,
    loglik = as.numeric(ll),
    loglik_df = attr(ll, "df"),
    aic = fit$AIC,
    edf = fit$edf,
    fitted_head5 = mat(Pm[1:5, , drop = FALSE]),
    fitted_colsum = vec(colSums(Pm)),
    predict_probs_head5 = mat(predict(fit, newdata = rows5, type = "probs")),
    predict_class = I(as.character(predict(fit, type = "class"))),
    grad_norm = sqrt(sum(pol$eval$grad^2)),
    polish_newton_iter = pol$iter,
    nnet = list(
      convergence = fit$convergence,
      coef = mat(raw_coef),
      se = mat(raw_se),
      deviance = raw_dev,
      grad_norm = sqrt(sum(raw_eval$grad^2)),
      max_abs_coef_diff_to_polished = max(abs(raw_coef - B))
    )
  )
}

mn_cases <- list(
  multinom_case("iris_sepal_length", "iris", "Species ~ Sepal_Length",
                patsy_rhs = "Sepal_Length",
                note = paste("Sepal_Length alone: setosa is linearly separable on",
                             "Sepal_Length + Sepal_Width (the MLE does not exist there)")),
  multinom_case("survey_smoke", "survey", "Smoke ~ Sex + Age",
                patsy_rhs = "Sex + Age", note = "rows with NA in Smoke/Sex/Age dropped"),
  multinom_case("survey_exer", "survey", "Exer ~ Sex + Age + Pulse",
                patsy_rhs = "Sex + Age + Pulse", note = "rows with NA in Exer/Sex/Age/Pulse dropped"),
  multinom_case("housing_sat_natural", "housing_satnat", "Sat ~ Infl + Type + Cont",
                weights = "Freq", patsy_rhs = "Infl + Type + Cont", csv = "housing",
                note = paste("response levels in R's order Low < Medium < High (reference Low),",
                             "not alphabetical; predictors alphabetical")),
  multinom_case("housing_sat_alpha", "housing", "Sat ~ Infl + Type + Cont",
                weights = "Freq", patsy_rhs = "Infl + Type + Cont",
                note = "response levels alphabetical: High, Low, Medium (reference High)")
)
names(mn_cases) <- NULL
write_json(list(meta = meta,
                datasets = list(iris = factor_levels(DATA$iris),
                                survey = factor_levels(DATA$survey),
                                housing = factor_levels(DATA$housing)),
                cases = mn_cases), "multinom.json")

## ---------------------------------------------------------------------------------------
## discrim.json
## ---------------------------------------------------------------------------------------
discrim_case <- function(name, kind, data, formula, method, prior = NULL, derived = NULL) {
  d <- DATA[[data]]
  fn <- if (kind == "lda") lda else qda
  args <- list(as.formula(formula), data = d, method = method)
  if (!is.null(prior)) args$prior <- prior
  fit <- do.call(fn, args)
  cv <- do.call(fn, c(args, list(CV = TRUE)))
  p <- predict(fit)
  vars <- colnames(fit$means)
  out <- list(
    name = name,
    kind = kind,
    dataset = data,
    derived_columns = derived,
    formula = formula,
    response = all.vars(as.formula(formula))[1],
    features = I(vars),
    method = method,
    prior_given = if (is.null(prior)) NULL else vec(prior),
    levels = I(fit$lev),
    N = fit$N,
    counts = vec(fit$counts),
    prior = vec(fit$prior),
    means = mat(fit$means)
  )
  if (kind == "lda") {
    out$scaling = mat(fit$scaling)
    out$scaling_colnames = I(colnames(fit$scaling))
    out$svd = vec(fit$svd)
    out$x_head10 = mat(p$x[1:10, , drop = FALSE])
  } else {
    out$scaling = lapply(seq_along(fit$lev), function(k) mat(fit$scaling[, , k]))
    out$ldet = vec(fit$ldet)
  }
  out$posterior_head10 <- mat(p$posterior[1:10, , drop = FALSE])
  out$posterior_colsum <- vec(colSums(p$posterior))
  out$class <- I(as.character(p$class))
  out$cv_posterior_head10 <- mat(cv$posterior[1:10, , drop = FALSE])
  out$cv_posterior_colsum <- vec(colSums(cv$posterior))
  out$cv_class <- I(as.character(cv$class))
  out[!vapply(out, is.null, TRUE)]
}

crabs_f <- "FL + RW + CL + CW + BD"
dc <- list()
for (kind in c("lda", "qda")) for (method in c("moment", "mle")) {
  dc[[length(dc) + 1]] <- discrim_case(paste("iris", kind, method, sep = "_"), kind, "iris",
                                       "Species ~ .", method)
  dc[[length(dc) + 1]] <- discrim_case(paste("crabs_sp", kind, method, sep = "_"), kind, "crabs",
                                       paste("sp ~", crabs_f), method)
  dc[[length(dc) + 1]] <- discrim_case(paste("crabs_spsex", kind, method, sep = "_"), kind,
                                       "crabs", paste("sp_sex ~", crabs_f), method,
                                       derived = list(sp_sex = "paste(sp, sex, sep = '_')"))
}
dc[[length(dc) + 1]] <- discrim_case("iris_lda_moment_prior", "lda", "iris", "Species ~ .",
                                     "moment", prior = c(0.5, 0.3, 0.2))
dc[[length(dc) + 1]] <- discrim_case("crabs_sp_lda_moment_prior", "lda", "crabs",
                                     paste("sp ~", crabs_f), "moment", prior = c(0.7, 0.3))
dc[[length(dc) + 1]] <- discrim_case("iris_qda_moment_prior", "qda", "iris", "Species ~ .",
                                     "moment", prior = c(0.5, 0.3, 0.2))
write_json(list(meta = meta,
                datasets = list(iris = factor_levels(DATA$iris),
                                crabs = factor_levels(DATA$crabs)),
                cases = dc), "discrim.json")

## ---------------------------------------------------------------------------------------
## bayesglm.json
## ---------------------------------------------------------------------------------------
bayes_case <- function(name, data, formula, link, S, patsy_formula) {
  d <- DATA[[data]]
  cl <- substitute(
    bayesglm(F, family = binomial(link = LK), data = d,
             prior.mean = 0, prior.scale = S, prior.df = Inf,
             prior.mean.for.intercept = 0, prior.scale.for.intercept = S,
             prior.df.for.intercept = Inf, scaled = FALSE,
             control = glm.control(epsilon = 1e-14, maxit = 200)),
    list(F = as.formula(formula), LK = link, S = S))
  fit <- eval(cl)
  cf <- coef(fit)
  sm <- summary(fit)
  X <- model.matrix(fit)
  y <- fit$y
  fam <- fit$family
  loglik_at <- function(b) {
    mu <- fam$linkinv(drop(X %*% b))
    sum(dbinom(y, 1, mu, log = TRUE))
  }
  logpost <- function(b) loglik_at(b) - sum(b^2) / (2 * S^2)
  ## independent check of the MAP: Newton on the log posterior with the analytic
  ## observed information (expected + the non-canonical term)
  b <- cf
  for (it in 1:50) {
    eta <- drop(X %*% b); mu <- fam$linkinv(eta); me <- fam$mu.eta(eta)
    V <- mu * (1 - mu)
    g <- crossprod(X, (y - mu) * me / V) - b / S^2
    wobs <- me^2 / V - (y - mu) * (mu_eta2(fam$link, eta) / V - me^2 * (1 - 2 * mu) / V^2)
    Hpen <- crossprod(X, X * wobs) + diag(1 / S^2, ncol(X))
    step <- drop(solve(Hpen, g))
    b <- b + step
    if (max(abs(step)) < 1e-15 * (1 + max(abs(b)))) break
  }
  eta <- drop(X %*% b); mu <- fam$linkinv(eta); me <- fam$mu.eta(eta); V <- mu * (1 - mu)
  Hexp <- crossprod(X, X * (me^2 / V)) + diag(1 / S^2, ncol(X))
  wobs <- me^2 / V - (y - mu) * (mu_eta2(fam$link, eta) / V - me^2 * (1 - 2 * mu) / V^2)
  Hobs <- crossprod(X, X * wobs) + diag(1 / S^2, ncol(X))
  grad_at_arm <- { e <- drop(X %*% cf); m <- fam$linkinv(e)
                   crossprod(X, (y - m) * fam$mu.eta(e) / (m * (1 - m))) - cf / S^2 }
  rel <- max(abs(b - cf)) / max(abs(cf))
  if (rel > 1e-8) stop("bayesglm MAP check failed for ", name, ": ", rel)
  list(
    name = name,
    dataset = data,
    formula = formula,
    patsy_formula = patsy_formula,
    family = "binomial",
    link = link,
    prior = list(mean = 0, scale = S, df = "Inf", mean_for_intercept = 0,
                 scale_for_intercept = S, df_for_intercept = "Inf", scaled = FALSE,
                 description = paste0("independent N(0, ", S, "^2) on every coefficient ",
                                      "including the intercept (no centring, no scaling)")),
    coef_names = I(names(cf)),
    patsy_coef_names = I(patsy_names(X, model.frame(fit))),
    coef = vec(cf),
    se = vec(sm$coefficients[, 2]),
    vcov = mat(vcov(fit)),
    deviance = fit$deviance,
    loglik_at_map = loglik_at(cf),
    log_prior_kernel_at_map = -sum(cf^2) / (2 * S^2),
    log_posterior_kernel_at_map = logpost(cf),
    converged = fit$converged,
    iter = fit$iter,
    fitted_head = head_n(fitted(fit), 10),
    check = list(
      newton_map = vec(b),
      max_rel_diff_arm_vs_newton = rel,
      grad_norm_at_arm = sqrt(sum(grad_at_arm^2)),
      se_expected_at_newton = vec(sqrt(diag(solve(Hexp)))),
      se_observed_at_newton = vec(sqrt(diag(solve(Hobs))))
    )
  )
}

bc <- list()
for (S in c(1, 2.5)) {
  bc[[length(bc) + 1]] <- bayes_case(paste0("spector_logit_S", S), "spector",
                                     "GRADE ~ GPA + TUCE + PSI", "logit", S,
                                     "GRADE ~ GPA + TUCE + PSI")
  bc[[length(bc) + 1]] <- bayes_case(paste0("birthwt_logit_S", S), "birthwt",
                                     paste("low ~", bw_rhs), "logit", S,
                                     paste("low ~", bw_rhs))
  bc[[length(bc) + 1]] <- bayes_case(paste0("endometrial_logit_S", S), "endometrial",
                                     "HG ~ NV + PI + EH", "logit", S, "HG ~ NV + PI + EH")
}
bc[[length(bc) + 1]] <- bayes_case("spector_probit_S2.5", "spector", "GRADE ~ GPA + TUCE + PSI",
                                   "probit", 2.5, "GRADE ~ GPA + TUCE + PSI")
bc[[length(bc) + 1]] <- bayes_case("birthwt_probit_S1", "birthwt", paste("low ~", bw_rhs),
                                   "probit", 1, paste("low ~", bw_rhs))
write_json(list(meta = meta,
                datasets = list(spector = factor_levels(DATA$spector),
                                birthwt = factor_levels(DATA$birthwt),
                                endometrial = factor_levels(DATA$endometrial)),
                cases = bc), "bayesglm.json")

## ---------------------------------------------------------------------------------------
## custom_link.json: binomial glm with a user-defined "link-glm" object, the robust
## ("mislabelling") logit   mu = eps + (1 - 2 eps) plogis(eta),  eps fixed and known.
## Fitted by stats::glm itself (Fisher scoring with this link), polished with glm_polish.
## ---------------------------------------------------------------------------------------
robust_logit_link <- function(eps) {
  stopifnot(is.numeric(eps), length(eps) == 1L, eps > 0, eps < 0.5)
  force(eps)
  structure(list(
    linkfun = function(mu) qlogis((mu - eps) / (1 - 2 * eps)),
    linkinv = function(eta) eps + (1 - 2 * eps) * plogis(eta),
    mu.eta = function(eta) (1 - 2 * eps) * dlogis(eta),
    valideta = function(eta) TRUE,
    name = paste0("robust_logit(", eps, ")")
  ), class = "link-glm")
}
## d^2 mu / d eta^2 for the robust logit (for the observed information)
robust_mu_eta2 <- function(eps) function(eta) {
  p <- plogis(eta); (1 - 2 * eps) * p * (1 - p) * (1 - 2 * p)
}
## d loglik / d eps at fixed coefficients (= the derivative of the profile log-likelihood
## in eps at the MLE, by the envelope theorem): sum w (y - mu) / (mu (1 - mu)) (1 - 2 p)
robust_eps_score <- function(fit) {
  p <- plogis(fit$linear.predictors); mu <- fit$fitted.values
  sum(fit$prior.weights * (fit$y - mu) / (mu * (1 - mu)) * (1 - 2 * p))
}

CL_EPSILON <- 1e-14
CL_MAXIT <- 100L
CL_MUSTART <- "eps + (1 - 2 eps) (w y + 0.5) / (w + 1)"

## Fit one robust-logit glm at the exact MLE.  glm's default binomial start
## (w y + 0.5)/(w + 1) can lie outside (eps, 1 - eps) (menarche: 0.5/377), where linkfun
## is NaN, so every fit starts from mustart = eps + (1 - 2 eps) * that default.
robust_fit <- function(name, data, formula, eps, weights = NULL, offset = NULL,
                       quiet = FALSE) {
  d <- DATA[[data]]
  cl <- substitute(
    glm(F, family = FAM, data = d, weights = W, offset = O,
        control = glm.control(epsilon = EPS, maxit = MAXIT)),
    list(F = as.formula(formula), FAM = binomial(link = robust_logit_link(eps)),
         EPS = CL_EPSILON, MAXIT = CL_MAXIT,
         W = if (is.null(weights)) NULL else as.name(weights),
         O = if (is.null(offset)) NULL else str2lang(offset)))
  mfcl <- cl
  mfcl$method <- "model.frame"
  mf0 <- eval(mfcl)
  y0 <- model.response(mf0)
  w0 <- model.weights(mf0)
  if (is.null(w0)) w0 <- rep(1, length(y0))
  cl$mustart <- eps + (1 - 2 * eps) * (w0 * y0 + 0.5) / (w0 + 1)
  warns <- character(0)
  fit <- withCallingHandlers(eval(cl), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning")
  })
  if (!fit$converged) stop("custom-link case ", name, " did not converge")
  pol <- glm_polish(cl, fit, name)
  if (!quiet)
    cat(sprintf("  %-34s iter %2d, +%3d restarts, max|score| %.1e -> %.1e\n", name,
                pol$iter_initial, pol$restarts, pol$score_initial, pol$score_final))
  if (anyNA(coef(pol$fit))) stop("custom-link case ", name, " is rank deficient")
  c(pol, list(warnings = warns, data = d))
}

custom_link_case <- function(name, data, formula, eps, patsy_formula, weights = NULL,
                             offset = NULL, note = NULL) {
  r <- robust_fit(name, data, formula, eps, weights, offset)
  fit <- r$fit
  d <- r$data
  stopifnot(identical(fit$family$link, paste0("robust_logit(", eps, ")")))
  s <- summary(fit)
  cf <- coef(fit)
  cm <- s$coefficients
  stopifnot(identical(rownames(cm), names(cf)), s$dispersion == 1)
  V <- vcov(fit)
  stopifnot(identical(V, s$cov.scaled), max(abs(V - s$cov.unscaled)) == 0)
  mf <- model.frame(fit)
  mm <- model.matrix(fit)

  ## observed information (differs from the expected one: the link is not canonical),
  ## checked against a numeric Jacobian of the analytic score
  Iobs <- observed_information(fit, d2 = robust_mu_eta2(eps))
  H <- numeric_jacobian(glm_score_fun(fit), cf, mm)
  relerr <- max(abs(-H - Iobs)) / max(abs(Iobs))
  cat(sprintf("  %-34s observed-information check: rel. err %.1e\n", name, relerr))
  if (relerr > 1e-7) stop("observed information check failed in ", name, ": ", relerr)

  ## independent intercept-only fit with the same link, weights and offset: R's
  ## null.deviance must be its deviance.  (Without an offset R evaluates the null
  ## deviance at the weighted mean of y, which is that model's MLE here because the mean
  ## lies inside (eps, 1 - eps); with an offset glm() refits the intercept-only model.)
  null_formula <- paste(deparse(as.formula(formula)[[2]]), "~ 1")
  r0 <- robust_fit(paste0(name, " (null)"), data, null_formula, eps, weights, offset,
                   quiet = TRUE)
  null_rel <- abs(r0$fit$deviance - fit$null.deviance) / fit$null.deviance
  cat(sprintf("  %-34s null deviance vs intercept-only fit: rel. diff %.1e\n", name, null_rel))
  if (null_rel > 1e-12) stop("null deviance check failed in ", name, ": ", null_rel)

  ll <- logLik(fit)
  res <- list(
    name = name,
    dataset = data,
    formula = formula,
    patsy_formula = patsy_formula,
    family = "binomial",
    link = fit$family$link,
    eps = eps,
    weights = weights,
    offset = offset,
    note = note,
    control_epsilon = CL_EPSILON,
    control_maxit = CL_MAXIT,
    nobs = nobs(fit),
    n_rows = nrow(mf),
    coef_names = I(names(cf)),
    patsy_coef_names = I(patsy_names(mm, mf)),
    coef = vec(cf),
    se_expected = vec(cm[, 2]),
    se_observed = vec(sqrt(diag(solve(Iobs)))),
    z = vec(cm[, 3]),
    pvalues = vec(cm[, 4]),
    cov_names = I(rownames(V)),
    vcov = mat(V),
    deviance = fit$deviance,
    null_deviance = fit$null.deviance,
    null_intercept = unname(coef(r0$fit)),
    df_residual = fit$df.residual,
    df_null = fit$df.null,
    rank = fit$rank,
    aic = fit$aic,
    loglik = as.numeric(ll),
    loglik_df = attr(ll, "df"),
    bic = BIC(fit),
    iter = r$iter_initial,
    polish_restarts = r$restarts,
    score_max_abs_initial = r$score_initial,
    score_max_abs = r$score_final,
    converged = fit$converged,
    fitted = vec(fitted(fit)),
    linear_predictors = vec(fit$linear.predictors),
    eps_score = robust_eps_score(fit),
    warnings = I(r$warnings)
  )
  res[!vapply(res, is.null, TRUE)]
}

bw_rhs_full <- "age + lwt + race + smoke + ptl + ht + ui"
clc <- list()
## The likelihood is bounded and its supremum can sit at infinity (see the profile
## below).  For every case here that is not so: no hyperplane limit beats the fit (the
## minimum number of misclassified rows is 38 for birthwt and 4 for spector, found with a
## MIP offline), and 250+ BFGS starts found no larger log-likelihood.
for (eps in c(0.05, 0.1))
  clc[[length(clc) + 1]] <- custom_link_case(
    paste0("birthwt_robust_logit_eps", eps), "birthwt", paste("low ~", bw_rhs_full), eps,
    patsy_formula = paste("low ~", bw_rhs_full),
    note = paste("the global MLE as far as checked: the best hyperplane limit (38 of 189",
                 "rows misclassified) has deviance 243.17 at eps = 0.05 and 206.82 at",
                 "eps = 0.1. It wins from eps = 0.1085 on (profiles[0].limit), so there",
                 "glm's fit is a local maximum only"))
clc[[length(clc) + 1]] <- custom_link_case(
  "spector_robust_logit_eps0.05", "spector", "GRADE ~ GPA + TUCE + PSI", 0.05,
  patsy_formula = "GRADE ~ GPA + TUCE + PSI",
  note = paste("the global MLE as far as checked, but narrowly: the best hyperplane",
               "limit (4 of 32 rows misclassified) has deviance",
               "-2 (28 log 0.95 + 4 log 0.05) = 26.838 vs 26.232 here. It wins from",
               "eps ~ 0.0561 on, where the MLE no longer exists"))
clc[[length(clc) + 1]] <- custom_link_case(
  "menarche_robust_logit_eps0.05", "menarche", "Menarche/Total ~ Age", 0.05,
  weights = "Total", patsy_formula = "I(Menarche / Total) ~ Age",
  note = paste("binomial proportions y = Menarche/Total with prior weights = Total",
               "(trials); loglik/aic include log choose(Total, Menarche).",
               "The first rows have y = 0 and the last y = 1, outside (eps, 1 - eps):",
               "glm's default mustart is then invalid for this link, see meta.mustart"))
clc[[length(clc) + 1]] <- custom_link_case(
  "birthwt_robust_logit_offset_eps0.05", "birthwt", "low ~ age + race + smoke + ptl + ht + ui",
  0.05, offset = "-0.015 * lwt",
  patsy_formula = "low ~ age + race + smoke + ptl + ht + ui",
  note = paste("offset = -0.015 * lwt (lwt's effect fixed; Python: offset = -0.015 *",
               "df['lwt']). linear_predictors include the offset. glm() gets the null",
               "deviance by refitting the intercept-only model with this offset and link"))

## Profile over eps (birthwt, full model), eps held fixed in every fit.
##
## The mislabelling likelihood is bounded (every term lies between log(eps) and
## log(1 - eps)), and its supremum over the coefficients need not be attained: along
## b = t * d, t -> Inf, for a direction d with no row on the hyperplane x'd = 0, every
## fitted value tends to eps or 1 - eps, and the deviance tends to
##   D_lim(eps) = -2 [(n - k) log(1 - eps) + k log(eps)],   k = rows with y on the wrong side.
## For birthwt the smallest such k is 38: PROFILE_DIR below was found offline with a
## mixed-integer program (scipy.optimize.milp / HiGHS, standardized columns, margin 1,
## |coef| <= 100: proven optimal, k = 38) and is only verified here.  Wherever
## D_lim(eps) < the deviance of glm's fit, that fit is a local maximum only and the MLE
## does not exist (this happens from eps ~ 0.11 on).  Beyond eps ~ 0.178 glm finds no
## finite stationary point at all (the coefficients diverge).  On the branch glm does
## find, the log-likelihood decreases in eps, so optimize() ends at the lower end of its
## interval: there is no interior argmax for these data.
PROFILE_DIR <- c(`(Intercept)` = 1, age = -0.004013, lwt = -0.009631, raceother = -0.4101,
                 racewhite = -0.5619, smoke = 0.5932, ptl = 0.5618, ht = 0.7817,
                 ui = -0.1275)
profile_eps <- local({
  formula <- paste("low ~", bw_rhs_full)
  X <- model.matrix(as.formula(formula), DATA$birthwt)
  y <- DATA$birthwt$low
  n <- length(y)
  stopifnot(identical(colnames(X), names(PROFILE_DIR)), nrow(X) == n)
  side <- drop(X %*% PROFILE_DIR)
  k <- sum((2 * y - 1) * side < 0)
  stopifnot(all(side != 0), k == 38L)
  d_lim <- function(eps) -2 * ((n - k) * log1p(-eps) + k * log(eps))

  ## NULL when glm does not converge (robust_fit stops) or errors
  at <- function(eps) tryCatch(
    robust_fit(sprintf("profile eps=%.17g", eps), "birthwt", formula, eps, quiet = TRUE)$fit,
    error = function(e) NULL)
  grid <- c(0.005, (1:20) / 100)
  fits <- lapply(grid, at)
  ok <- !vapply(fits, is.null, TRUE)
  getv <- function(f) vapply(fits, function(z) if (is.null(z)) NA_real_ else f(z), 0)
  dev <- getv(deviance)
  ll <- getv(function(z) as.numeric(logLik(z)))
  sc <- getv(robust_eps_score)
  cat(sprintf("  profile grid: glm converged for eps <= %g, not for %s\n", max(grid[ok]),
              paste(grid[!ok], collapse = ", ")))
  stopifnot(all(ok[grid <= 0.17]), !any(ok[grid >= 0.18]), all(sc[ok] < 0))

  ## the analytic profile score, checked by central differences of the profile loglik
  h <- 1e-5
  fd <- (as.numeric(logLik(at(0.05 + h))) - as.numeric(logLik(at(0.05 - h)))) / (2 * h)
  an <- sc[grid == 0.05]
  cat(sprintf("  profile: d loglik/d eps at 0.05: analytic %.10g, numeric %.10g\n", an, fd))
  stopifnot(abs(an - fd) < 1e-6 * max(1, abs(an)))

  ## where glm's fit stops being the MLE: D_lim(eps) = deviance(glm fit at eps)
  cross <- uniroot(function(e) d_lim(e) - deviance(at(e)), c(0.1, 0.12), tol = 1e-12)
  cat(sprintf("  profile: D_lim(eps) = deviance at eps = %.10g\n", cross$root))

  interval <- c(1e-4, 0.3)
  opt <- optimize(function(e) { f <- at(e); if (is.null(f)) -1e300 else as.numeric(logLik(f)) },
                  interval, maximum = TRUE, tol = 1e-10)
  fhat <- at(opt$maximum)
  logit <- glm(as.formula(formula), family = binomial, data = DATA$birthwt,
               control = glm.control(epsilon = CL_EPSILON, maxit = CL_MAXIT))
  cat(sprintf("  profile: optimize -> eps %.12g, loglik %.15g (plain logit %.15g)\n",
              opt$maximum, opt$objective, as.numeric(logLik(logit))))
  stopifnot(opt$maximum - interval[1] < 1e-6, opt$objective > max(ll, na.rm = TRUE),
            opt$objective < as.numeric(logLik(logit)), robust_eps_score(fhat) < 0)
  list(
    name = "birthwt_robust_logit_profile_eps",
    dataset = "birthwt",
    formula = formula,
    patsy_formula = formula,
    family = "binomial",
    note = paste("eps is held fixed in every fit (loglik_df counts the coefficients only).",
                 "deviance/loglik are those of R's glm fit (null where glm does not",
                 "converge: eps >= 0.18, the coefficients diverge). local_only = true:",
                 "the limit along limit.direction has a smaller deviance, so that fit is a",
                 "local maximum and the MLE does not exist. The loglik of glm's fits",
                 "decreases in eps (eps_score < 0), so optimize ends at the lower end of",
                 "its interval; it tends to the plain logit fit as eps -> 0"),
    grid = list(
      eps = vec(grid),
      glm_converged = vec(ok),
      deviance = vec(dev),
      loglik = vec(ll),
      eps_score = vec(sc),
      limit_deviance = vec(d_lim(grid)),
      local_only = vec(ok & d_lim(grid) < dev)
    ),
    argmax = list(
      method = paste("optimize(loglik of glm's fit, interval, maximum = TRUE, tol = 1e-10);",
                     "-1e300 where glm does not converge"),
      interval = vec(interval),
      tol = 1e-10,
      eps = opt$maximum,
      at_lower_bound = TRUE,
      loglik = as.numeric(logLik(fhat)),
      deviance = deviance(fhat),
      eps_score = robust_eps_score(fhat),
      coef_names = I(names(coef(fhat))),
      coef = vec(coef(fhat))
    ),
    logit_eps0 = list(deviance = deviance(logit), loglik = as.numeric(logLik(logit)),
                      coef = vec(coef(logit))),
    limit = list(
      direction_names = I(names(PROFILE_DIR)),
      direction = vec(PROFILE_DIR),
      n = n,
      k_misclassified = k,
      source = paste("found with scipy.optimize.milp (HiGHS): minimum number of rows",
                     "strictly on the wrong side of a hyperplane, standardized columns,",
                     "margin 1, |coef| <= 100, proven optimal (38); verified in generate.R"),
      deviance_formula = "-2 * ((n - k) * log(1 - eps) + k * log(eps))",
      crossover_eps = cross$root,
      sup_eps = k / n,
      sup_deviance = d_lim(k / n)
    )
  )
})

write_json(list(meta = c(meta, list(
                  link = paste("robust_logit(eps): mu = eps + (1 - 2 eps) plogis(eta);",
                               "linkfun(mu) = qlogis((mu - eps) / (1 - 2 eps));",
                               "mu.eta(eta) = (1 - 2 eps) dlogis(eta); valideta always TRUE;",
                               "variance mu (1 - mu) (binomial); eps fixed, not estimated"),
                  glm_control = paste0("glm.control(epsilon = ", CL_EPSILON, ", maxit = ",
                                       CL_MAXIT, "), then glm(start = coef(fit)) restarts",
                                       " until the coefficients stop moving, then once more:",
                                       " every stored value is at the exact MLE (see README)"),
                  mustart = CL_MUSTART)),
                datasets = list(spector = factor_levels(DATA$spector),
                                birthwt = factor_levels(DATA$birthwt),
                                menarche = factor_levels(DATA$menarche)),
                cases = clc,
                profiles = list(profile_eps)), "custom_link.json")
source(file.path("tests", "reference", "r", "numerics.R"))  # numerics.json (issue 10)
source(file.path("tests", "reference", "r", "influence.R"))  # -> influence.json (issue 13)
source(file.path("tests", "reference", "r", "naive_bayes.R"))  # -> naive_bayes.json (issue 13)

## chapter.json (issue 11): least squares on indicator targets, Fisher (MASS::lda two-class
## scaling), the perceptron, and the MLEs the gradient methods must reach
source(file.path(refdir, "r", "chapter.R"))
source(file.path("tests", "reference", "r", "inference.R"))  # -> inference.json
source(file.path(refdir, "r", "formula_terms.R"))  # formula_terms.json
source(file.path("tests", "reference", "r", "firth.R"))  # -> firth.json
source(file.path("tests", "reference", "r", "glmnet.R"))  # -> glmnet.json
source(file.path("tests", "reference", "r", "hypothesis.R"))  # -> hypothesis.json
source(file.path("tests", "reference", "r", "ordinal.R"))  # -> ordinal.json (issue 28)
source(file.path("tests", "reference", "r", "emmeans.R"))  # -> emmeans.json (issue 30)
source(file.path("tests", "reference", "r", "mixed.R"))  # -> mixed.json
source(file.path("tests", "reference", "r", "binned.R"))  # -> binned.json
source(file.path("tests", "reference", "r", "emmeans_mixed.R"))  # -> emmeans_mixed.json (issues 27, 30)
source(file.path("tests", "reference", "r", "pima_scales.R"))  # -> pima_scales.json, data/pima.csv (issue 26)
source(file.path("tests", "reference", "r", "cluster_fix.R"))  # -> cluster_fix.json (issue 25)
source(file.path("tests", "reference", "r", "mixed_profile.R"))  # -> mixed_profile.json (issue 27: comparisons, profile intervals)
