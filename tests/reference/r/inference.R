## Reference values for glmclass's inference (issue 12): sandwich covariances, predictions
## with delta-method standard errors, analysis of deviance and likelihood-ratio tests, Wald
## tests per term, profile-likelihood intervals and marginal effects.
##
## Run from the repository root:   Rscript tests/reference/r/inference.R
## (tests/reference/generate.R sources it at its end).  Writes tests/reference/inference.json.
## Needs MASS, nnet, sandwich, lmtest, car and numDeriv.  Deterministic: nothing random.
##
## Every GLM is fit by glm() and restarted from its own estimate until the coefficients stop
## moving (as generate.R's glm_polish), every multinomial logit by Newton's method from
## nnet::multinom's estimate, so that every stored value belongs to the exact MLE.
## Everything runs inside local(): nothing leaks into generate.R's workspace.

local({
suppressPackageStartupMessages({
  library(MASS)
  library(nnet)
  library(sandwich)
  library(lmtest)
  library(car)
  library(numDeriv)
})
options(warn = 1, stringsAsFactors = FALSE)

refdir <- file.path("tests", "reference")
datadir <- file.path(refdir, "data")
if (!dir.exists(datadir)) stop("run from the repository root (", datadir, " not found)")

## ---------------------------------------------------------------------------------------
## JSON writer: a copy of generate.R's (shortest of 15/16/17 significant digits that reads
## back identically; NA -> null).  A length-1 vector is a scalar unless wrapped in I().
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
vec <- function(x) I(unname(as.vector(x)))
mat <- function(x) { x <- as.matrix(x); dimnames(x) <- NULL; x }

## ---------------------------------------------------------------------------------------
## Data: as generate.R (string columns become factors with code-point-sorted levels), plus
## the derived cluster columns of the JSON's "derived_columns": grp = (row - 1) %% 15 and
## grp2 = (row - 1) %/% 19 on the rows of the CSV file (before any row is dropped).
## ---------------------------------------------------------------------------------------
read_data <- function(name) {
  d <- read.csv(file.path(datadir, paste0(name, ".csv")), stringsAsFactors = FALSE,
                na.strings = "", check.names = FALSE)
  for (v in names(d)) if (is.character(d[[v]]))
    d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]][!is.na(d[[v]])]), method = "radix"))
  r <- seq_len(nrow(d)) - 1L
  d$grp <- r %% 15L
  d$grp2 <- r %/% 19L
  d
}
DERIVED <- list(grp = "(row - 1) %% 15", grp2 = "(row - 1) %/% 19",
                row = "1-based row number in the CSV file")
DATA <- list(birthwt = read_data("birthwt"), survey = read_data("survey"),
             insurance = read_data("insurance"), ucb = read_data("ucb"),
             menarche = read_data("menarche"), spector = read_data("spector"),
             housing = read_data("housing"))
DATA$insurance$District <- factor(DATA$insurance$District)
## frequency weights as replicated rows (R's glm and sandwich have no frequency weights)
expand <- function(d, w) d[rep(seq_len(nrow(d)), d[[w]]), , drop = FALSE]

## ---------------------------------------------------------------------------------------
## Exact GLM fits (glm restarted from its own estimate until the coefficients settle)
## ---------------------------------------------------------------------------------------
fit_glm <- function(formula, family, data, weights = NULL) {
  env <- environment()
  cl <- substitute(glm(F, family = FAM, data = data, weights = W,
                       control = glm.control(epsilon = 1e-15, maxit = 200)),
                   list(F = formula, FAM = family,
                        W = if (is.null(weights)) NULL else as.name(weights)))
  quiet <- function(expr) withCallingHandlers(expr, warning = function(w)
    invokeRestart("muffleWarning"))
  fit <- quiet(eval(cl))
  for (i in 1:200) {
    st <- coef(fit)
    cl$start <- st
    fit <- quiet(eval(cl))
    if (max(abs(coef(fit) - st)) <= 8 * .Machine$double.eps * max(abs(st))) break
  }
  cl$start <- coef(fit)
  fit <- quiet(eval(cl))
  fit$call$data <- data  # so that sandwich's expand.model.frame finds the data
  fit
}

## observed information X' diag(w_obs) X (R's glm uses the expected one) and the score
mu_eta2 <- function(link, eta) {
  switch(link,
    logit = { m <- plogis(eta); m * (1 - m) * (1 - 2 * m) },
    probit = -eta * dnorm(eta),
    cloglog = { me <- exp(eta - exp(eta)); me * (1 - exp(eta)) },
    log = exp(eta),
    identity = 0 * eta,
    stop("no mu_eta2 for link ", link))
}
observed_info <- function(fit, unscaled = FALSE) {
  fam <- fit$family
  X <- model.matrix(fit)
  eta <- fit$linear.predictors
  mu <- fit$fitted.values
  y <- fit$y
  pw <- fit$prior.weights
  me <- fam$mu.eta(eta)
  V <- fam$variance(mu)
  dV <- switch(fam$family, binomial = 1 - 2 * mu, poisson = rep(1, length(mu)),
               gaussian = rep(0, length(mu)))
  wobs <- pw * (me^2 / V - (y - mu) * (mu_eta2(fam$link, eta) / V - me^2 * dV / V^2))
  crossprod(X, X * wobs) / (if (unscaled) 1 else summary(fit)$dispersion)
}
## the dispersion sandwich's bread.glm and estfun.glm use (they cancel in the sandwich)
sandwich_dispersion <- function(fit) {
  if (fit$family$family %in% c("binomial", "poisson")) return(1)
  wres <- residuals(fit, "working") * weights(fit, "working")
  sum(wres^2) / sum(weights(fit, "working"))
}

## every robust covariance of one fit, with the bread R uses (expected information) or the
## inverse observed information (bread. = n * solve(I_obs), as sandwich scales its bread)
robust_set <- function(fit, cluster = NULL, cluster2 = NULL, observed = FALSE) {
  n <- NROW(estfun(fit))
  b <- if (observed) n * solve(observed_info(fit, unscaled = TRUE)) *
    sandwich_dispersion(fit) else bread(fit)
  if (observed && fit$family$link == "identity")  # observed = expected information
    stopifnot(max(abs(b - bread(fit))) < 1e-10 * max(abs(b)))
  sw <- function(meat., ...) sandwich(fit, bread. = b, meat. = meat., ...)
  out <- list(
    nonrobust = if (observed) solve(observed_info(fit)) else vcov(fit),
    HC0 = sw(meatHC, type = "HC0"), HC1 = sw(meatHC, type = "HC1"),
    HC2 = sw(meatHC, type = "HC2"), HC3 = sw(meatHC, type = "HC3"))
  if (!observed) stopifnot(max(abs(out$HC3 - vcovHC(fit, type = "HC3"))) <
                             1e-12 * max(abs(out$HC3)))
  if (!is.null(cluster)) {
    out$cluster <- sw(meatCL, cluster = cluster, type = "HC1")
    out$cluster_nocorrection <- sw(meatCL, cluster = cluster, type = "HC0", cadjust = FALSE)
    if (!observed) stopifnot(max(abs(out$cluster - vcovCL(fit, cluster = cluster,
      type = "HC1"))) < 1e-12 * max(abs(out$cluster)))
  }
  if (!is.null(cluster2)) {
    out$cluster2 <- sw(meatCL, cluster = cluster2, type = "HC1")
    ## vcovCL's fix: negative eigenvalues of the whole sandwich set to 0
    eig <- eigen(out$cluster2, symmetric = TRUE)
    stopifnot(any(eig$values < 0))  # the case must exercise the fix
    out$cluster2_fix <- crossprod(sqrt(pmax(eig$values, 0)) * t(eig$vectors))
    if (!observed) stopifnot(max(abs(out$cluster2_fix - vcovCL(fit, cluster = cluster2,
      type = "HC1", fix = TRUE))) < 1e-12 * max(abs(out$cluster2_fix)))
  }
  lapply(out, mat)
}

## ---------------------------------------------------------------------------------------
## Robust covariances of GLMs
## ---------------------------------------------------------------------------------------
glm_cases <- list(
  list(name = "birthwt_logit", data = "birthwt",
       formula = low ~ age + lwt + race + smoke + ptl + ht + ui + ftv,
       patsy = "low ~ age + lwt + race + smoke + ptl + ht + ui + ftv",
       names = c("Intercept", "age", "lwt", "race[T.other]", "race[T.white]", "smoke",
                 "ptl", "ht", "ui", "ftv"),
       family = binomial("logit"), cluster = ~grp, cluster2 = ~grp + grp2),
  list(name = "birthwt_probit", data = "birthwt",
       formula = low ~ age + lwt + race + smoke + ptl + ht + ui + ftv,
       patsy = "low ~ age + lwt + race + smoke + ptl + ht + ui + ftv",
       names = c("Intercept", "age", "lwt", "race[T.other]", "race[T.white]", "smoke",
                 "ptl", "ht", "ui", "ftv"),
       family = binomial("probit"), cluster = ~grp, cluster2 = ~grp + grp2),
  list(name = "birthwt_cloglog_terms", data = "birthwt",
       formula = low ~ age + I(age^2) + log(lwt) + race + smoke + age:smoke,
       patsy = "low ~ age + I(age**2) + np.log(lwt) + C(race) + smoke + age:smoke",
       names = c("Intercept", "age", "I(age ** 2)", "np.log(lwt)", "C(race)[T.other]",
                 "C(race)[T.white]", "smoke", "age:smoke"),
       family = binomial("cloglog"), cluster = ~grp),
  list(name = "survey_logit_missing", data = "survey",
       formula = Sex ~ Height + Pulse + Exer, patsy = "Sex ~ Height + Pulse + Exer",
       names = c("Intercept", "Height", "Pulse", "Exer[T.None]", "Exer[T.Some]"),
       family = binomial("logit"), cluster = ~grp, cluster2 = ~grp + grp2,
       note = "rows with NA in Sex/Height/Pulse/Exer dropped; grp of the kept rows"),
  list(name = "insurance_poisson", data = "insurance",
       formula = Claims ~ District + Group + Age + offset(log(Holders)),
       patsy = "Claims ~ C(District) + Group + Age", offset = "log(Holders)",
       names = c("Intercept", "C(District)[T.2]", "C(District)[T.3]", "C(District)[T.4]",
                 "Group[T.1.5-2l]", "Group[T.<1l]", "Group[T.>2l]", "Age[T.30-35]",
                 "Age[T.<25]", "Age[T.>35]"),
       family = poisson("log"), cluster = ~District),
  list(name = "birthwt_gaussian", data = "birthwt",
       formula = bwt ~ age + lwt + race + smoke, patsy = "bwt ~ age + lwt + race + smoke",
       names = c("Intercept", "age", "lwt", "race[T.other]", "race[T.white]", "smoke"),
       family = gaussian("identity"), cluster = ~grp, cluster2 = ~grp + grp2),
  list(name = "ucb_freq", data = "ucb", formula = Admit ~ Gender + Dept,
       patsy = "Admit ~ Gender + Dept", freq_weights = "Freq",
       names = c("Intercept", "Gender[T.Male]", "Dept[T.B]", "Dept[T.C]", "Dept[T.D]",
                 "Dept[T.E]", "Dept[T.F]"),
       family = binomial("logit"), cluster = ~Dept,
       note = "freq_weights = Freq: R fits the data with each row repeated Freq times"),
  list(name = "menarche_var", data = "menarche", formula = Menarche / Total ~ Age,
       patsy = "I(Menarche / Total) ~ Age", var_weights = "Total",
       names = c("Intercept", "Age"), family = binomial("logit"),
       note = "proportions with var_weights = Total (R: prior weights Total)")
)

GLM_FITS <- list()
robust_cases <- lapply(glm_cases, function(cs) {
  d <- DATA[[cs$data]]
  if (!is.null(cs$freq_weights)) d <- expand(d, cs$freq_weights)
  fit <- fit_glm(cs$formula, cs$family, d, cs$var_weights)
  GLM_FITS[[cs$name]] <<- fit
  stopifnot(length(cs$names) == length(coef(fit)))
  exp_set <- robust_set(fit, cs$cluster, cs$cluster2)
  obs_set <- robust_set(fit, cs$cluster, cs$cluster2, observed = TRUE)
  cat(sprintf("  robust %-24s n=%d HC1 se %s\n", cs$name, nobs(fit),
              paste(signif(sqrt(diag(exp_set$HC1))[1:2], 6), collapse = " ")))
  list(name = cs$name, dataset = cs$data, formula = deparse(cs$formula),
       patsy_formula = cs$patsy, offset = cs$offset, freq_weights = cs$freq_weights,
       var_weights = cs$var_weights, note = cs$note,
       family = cs$family$family, link = cs$family$link,
       cluster = if (is.null(cs$cluster)) NULL else all.vars(cs$cluster),
       cluster2 = if (is.null(cs$cluster2)) NULL else I(all.vars(cs$cluster2)),
       n_rows_fit = nrow(model.frame(fit)), nobs = sum(weights(fit, "prior") > 0),
       coef_names = I(cs$names), coef = vec(coef(fit)),
       dispersion = summary(fit)$dispersion,
       expected = exp_set, observed = obs_set)
})

## ---------------------------------------------------------------------------------------
## Multinomial logit: exact MLE by Newton, sandwich through estfun/bread methods
## (sandwich has none for nnet::multinom; these give its HC0 and vcovCL definitions)
## ---------------------------------------------------------------------------------------
mn_eval <- function(B, X, Y) {  # B: (K-1) x p; parameters level-major
  eta <- cbind(0, X %*% t(B))
  P <- exp(eta - apply(eta, 1, max))
  P <- P / rowSums(P)
  K1 <- nrow(B); p <- ncol(B)
  S <- do.call(cbind, lapply(seq_len(K1), function(k) X * (Y[, k + 1] - P[, k + 1])))
  H <- matrix(0, K1 * p, K1 * p)
  for (k in seq_len(K1)) for (l in seq_len(K1))
    H[(k - 1) * p + 1:p, (l - 1) * p + 1:p] <-
      crossprod(X, X * (P[, k + 1] * ((k == l) - P[, l + 1])))
  list(ll = sum(Y * log(P)), scores = S, info = H, P = P)
}
fit_mn <- function(formula, data) {
  fit <- multinom(formula, data = data, trace = FALSE, maxit = 1000, model = TRUE)
  mf <- fit$model
  X <- model.matrix(attr(mf, "terms"), mf)
  yf <- model.response(mf)
  Y <- outer(as.integer(yf), seq_along(levels(yf)), "==") * 1
  B <- coef(fit)
  if (is.null(dim(B))) B <- matrix(B, 1)
  for (it in 1:100) {
    e <- mn_eval(B, X, Y)
    step <- matrix(solve(e$info, colSums(e$scores)), nrow(B), byrow = TRUE)
    B <- B + step
    if (max(abs(step)) < 1e-15 * (1 + max(abs(B)))) break
  }
  e <- mn_eval(B, X, Y)
  stopifnot(max(abs(colSums(e$scores))) < 1e-9)
  structure(list(B = B, X = X, Y = Y, levels = levels(yf), eval = e, mf = mf,
                 formula = formula, data = data), class = "mnfit")
}
estfun.mnfit <- function(x, ...) x$eval$scores
bread.mnfit <- function(x, ...) nrow(x$X) * solve(x$eval$info)
.S3method("estfun", "mnfit", estfun.mnfit)  # defined inside local(): register for dispatch
.S3method("bread", "mnfit", bread.mnfit)
mn_robust <- function(f, cluster = NULL, cluster2 = NULL) {
  out <- list(nonrobust = solve(f$eval$info), HC0 = sandwich(f),
              HC1 = sandwich(f, meat. = meat, adjust = TRUE))
  if (!is.null(cluster)) out$cluster <- vcovCL(f, cluster = cluster, type = "HC1")
  if (!is.null(cluster2)) out$cluster2 <- vcovCL(f, cluster = cluster2, type = "HC1")
  lapply(out, mat)
}

survey_mn <- DATA$survey[complete.cases(DATA$survey[, c("Exer", "Sex", "Age", "Pulse")]), ]
housing_rep <- expand(DATA$housing, "Freq")
MN <- list(
  survey_exer = fit_mn(Exer ~ Sex + Age + Pulse, survey_mn),
  housing_freq = fit_mn(Sat ~ Infl + Type + Cont, housing_rep)
)
mn_robust_cases <- list(
  list(name = "survey_exer", dataset = "survey", formula = "Exer ~ Sex + Age + Pulse",
       patsy_formula = "Exer ~ Sex + Age + Pulse", cluster = "grp",
       cluster2 = I(c("grp", "grp2")), complete_cases = I(c("Exer", "Sex", "Age", "Pulse")),
       coef_names = I(c("Intercept", "Sex[T.Male]", "Age", "Pulse")),
       levels = I(MN$survey_exer$levels), coef = mat(MN$survey_exer$B),
       n_rows_fit = nrow(MN$survey_exer$X),
       cov = mn_robust(MN$survey_exer, survey_mn$grp, survey_mn[, c("grp", "grp2")])),
  list(name = "housing_freq", dataset = "housing", formula = "Sat ~ Infl + Type + Cont",
       patsy_formula = "Sat ~ Infl + Type + Cont", freq_weights = "Freq",
       cluster = "Type",
       coef_names = I(c("Intercept", "Infl[T.Low]", "Infl[T.Medium]", "Type[T.Atrium]",
                        "Type[T.Terrace]", "Type[T.Tower]", "Cont[T.Low]")),
       levels = I(MN$housing_freq$levels), coef = mat(MN$housing_freq$B),
       n_rows_fit = nrow(MN$housing_freq$X),
       note = "freq_weights = Freq: R fits the data with each row repeated Freq times",
       cov = mn_robust(MN$housing_freq, housing_rep$Type))
)

## ---------------------------------------------------------------------------------------
## Predictions: predict.glm(se.fit = TRUE) on new rows, and X V X' with robust V
## ---------------------------------------------------------------------------------------
pred_rows <- list(
  birthwt = data.frame(age = c(19, 33, 25, 40, 16), lwt = c(182, 155, 120, 95, 250),
                       race = factor(c("black", "other", "white", "white", "other"),
                                     levels = levels(DATA$birthwt$race)),
                       smoke = c(0, 0, 1, 1, 0), ptl = c(0, 1, 0, 2, 0), ht = c(0, 0, 1, 0, 0),
                       ui = c(1, 0, 0, 1, 0), ftv = c(0, 3, 1, 0, 2), bwt = 0),
  insurance = DATA$insurance[c(1, 17, 30, 64), ]
)
predict_case <- function(name, newdata_name, offset = NULL) {
  fit <- GLM_FITS[[name]]
  nd <- pred_rows[[newdata_name]]
  pl <- predict(fit, newdata = nd, type = "link", se.fit = TRUE)
  pr <- predict(fit, newdata = nd, type = "response", se.fit = TRUE)
  X <- model.matrix(delete.response(terms(fit)), nd)
  se_with <- function(V) sqrt(rowSums((X %*% V) * X))
  ins <- predict(fit, type = "link", se.fit = TRUE)
  cols <- intersect(names(nd), all.vars(formula(fit)))
  list(name = name, newdata_dataset = newdata_name,
       newdata = lapply(nd[cols], function(v) I(if (is.factor(v)) as.character(v) else v)),
       linear = vec(pl$fit), linear_se = vec(pl$se.fit),
       mean = vec(pr$fit), mean_se = vec(pr$se.fit),
       linear_se_HC1 = vec(se_with(vcovHC(fit, type = "HC1"))),
       linear_se_observed = vec(se_with(solve(observed_info(fit)))),
       insample_linear_head = vec(ins$fit[1:6]), insample_linear_se_head = vec(ins$se.fit[1:6]))
}
predict_cases <- list(
  predict_case("birthwt_logit", "birthwt"), predict_case("birthwt_probit", "birthwt"),
  predict_case("birthwt_cloglog_terms", "birthwt"), predict_case("birthwt_gaussian", "birthwt"),
  predict_case("insurance_poisson", "insurance"))

## multinomial: probabilities per level, delta-method se through the softmax, intervals on
## the scale of each level's log-odds against all others, qlogis(p_k)
mn_predict <- function(f, newdata, V) {
  X <- model.matrix(delete.response(terms(f$mf)), newdata,
                    contrasts.arg = attr(f$X, "contrasts"))
  K1 <- nrow(f$B); p <- ncol(X); K <- K1 + 1
  eta <- cbind(0, X %*% t(f$B))
  P <- exp(eta - apply(eta, 1, max)); P <- P / rowSums(P)
  se <- matrix(0, nrow(X), K); lo <- se; hi <- se
  lin_se <- matrix(0, nrow(X), K1)
  z <- qnorm(0.975)
  for (i in seq_len(nrow(X))) {
    for (k in 1:K) {
      g <- unlist(lapply(2:K, function(j) P[i, k] * ((k == j) - P[i, j]) * X[i, ]))
      se[i, k] <- sqrt(drop(t(g) %*% V %*% g))
      l <- qlogis(P[i, k]); sl <- se[i, k] / (P[i, k] * (1 - P[i, k]))
      lo[i, k] <- plogis(l - z * sl); hi[i, k] <- plogis(l + z * sl)
    }
    for (j in 1:K1) {
      idx <- (j - 1) * p + 1:p
      lin_se[i, j] <- sqrt(drop(t(X[i, ]) %*% V[idx, idx] %*% X[i, ]))
    }
  }
  list(prob = mat(P), prob_se = mat(se), prob_ci_lower = mat(lo), prob_ci_upper = mat(hi),
       linear = mat(eta[, -1, drop = FALSE]), linear_se = mat(lin_se))
}
mn_nd <- survey_mn[c(1, 2, 5, 40, 100), ]
mn_predict_case <- c(
  list(name = "survey_exer", levels = I(MN$survey_exer$levels),
       newdata = data.frame(Sex = as.character(mn_nd$Sex), Age = mn_nd$Age,
                            Pulse = mn_nd$Pulse), alpha = 0.05),
  mn_predict(MN$survey_exer, mn_nd, solve(MN$survey_exer$eval$info)),
  list(HC1 = mn_predict(MN$survey_exer, mn_nd, sandwich(MN$survey_exer, meat. = meat,
                                                        adjust = TRUE))[c("prob_se",
                                                                          "linear_se")]))
mn_predict_case$newdata <- lapply(mn_predict_case$newdata, function(v) I(v))

## ---------------------------------------------------------------------------------------
## Analysis of deviance and likelihood-ratio tests
## ---------------------------------------------------------------------------------------
anova_frame <- function(a) list(df_resid = vec(a[, "Resid. Df"]), deviance = vec(a[, "Resid. Dev"]),
                                df = vec(a[, "Df"]), deviance_diff = vec(a[, "Deviance"]),
                                pvalue = vec(a[, "Pr(>Chi)"]))
bw <- DATA$birthwt
lg <- list(fit_glm(low ~ age + lwt, binomial(), bw),
           fit_glm(low ~ age + lwt + race + smoke, binomial(), bw),
           fit_glm(low ~ age + lwt + race + smoke + ptl + ht + ui + ftv, binomial(), bw))
ga <- list(fit_glm(bwt ~ age, gaussian(), bw), fit_glm(bwt ~ age + lwt + race, gaussian(), bw),
           fit_glm(bwt ~ age + lwt + race + smoke + ht + ui, gaussian(), bw))
lr <- function(a, b) { t <- lrtest(a, b); list(statistic = t[2, "Chisq"], df = t[2, "Df"],
                                               pvalue = t[2, "Pr(>Chisq)"]) }
mn_small <- fit_mn(Exer ~ Sex, survey_mn)
mn_lr <- local({
  s <- 2 * (MN$survey_exer$eval$ll - mn_small$eval$ll)
  df <- length(MN$survey_exer$B) - length(mn_small$B)
  list(statistic = s, df = df, pvalue = pchisq(s, df, lower.tail = FALSE),
       llf = vec(c(mn_small$eval$ll, MN$survey_exer$eval$ll)))
})
anova_cases <- list(
  list(name = "birthwt_logit", dataset = "birthwt", family = "binomial",
       patsy_formulas = I(c("low ~ age + lwt", "low ~ age + lwt + race + smoke",
                            "low ~ age + lwt + race + smoke + ptl + ht + ui + ftv")),
       anova = anova_frame(anova(lg[[1]], lg[[2]], lg[[3]], test = "Chisq")),
       lrtest_1_3 = lr(lg[[1]], lg[[3]]), lrtest_2_3 = lr(lg[[2]], lg[[3]])),
  list(name = "birthwt_gaussian", dataset = "birthwt", family = "gaussian",
       patsy_formulas = I(c("bwt ~ age", "bwt ~ age + lwt + race",
                            "bwt ~ age + lwt + race + smoke + ht + ui")),
       anova = anova_frame(anova(ga[[1]], ga[[2]], ga[[3]], test = "Chisq")),
       lrtest_1_3 = lr(ga[[1]], ga[[3]]), lrtest_2_3 = lr(ga[[2]], ga[[3]])),
  list(name = "survey_exer_mnlogit", dataset = "survey", family = "multinomial",
       complete_cases = I(c("Exer", "Sex", "Age", "Pulse")),
       patsy_formulas = I(c("Exer ~ Sex", "Exer ~ Sex + Age + Pulse")),
       lrtest_1_2 = mn_lr)
)

## ---------------------------------------------------------------------------------------
## Wald tests per term (intercept included), with the model and the HC1 covariances;
## checked against car::linearHypothesis
## ---------------------------------------------------------------------------------------
wald_terms <- function(b, V, assign, labels) {
  terms <- c("(Intercept)", labels)
  out <- lapply(seq_along(terms) - 1L, function(t) {
    i <- which(assign == t)
    w <- drop(t(b[i]) %*% solve(V[i, i, drop = FALSE], b[i]))
    c(w, length(i), pchisq(w, length(i), lower.tail = FALSE))
  })
  m <- do.call(rbind, out)
  list(terms = I(terms), statistic = vec(m[, 1]), df = vec(m[, 2]), pvalue = vec(m[, 3]))
}
glm_wald <- function(name, patsy_terms) {
  fit <- GLM_FITS[[name]]
  asg <- attr(model.matrix(fit), "assign")
  labs <- attr(terms(fit), "term.labels")
  V1 <- vcovHC(fit, type = "HC1")
  chk <- linearHypothesis(fit, names(coef(fit))[asg == 1], vcov. = V1, test = "Chisq")
  res <- wald_terms(coef(fit), V1, asg, labs)
  stopifnot(abs(chk[2, "Chisq"] - res$statistic[2]) < 1e-9 * res$statistic[2])
  list(name = name, patsy_terms = I(patsy_terms),
       nonrobust = wald_terms(coef(fit), vcov(fit), asg, labs),
       HC1 = res,
       observed = wald_terms(coef(fit), solve(observed_info(fit)), asg, labs))
}
mn_wald <- local({
  f <- MN$survey_exer
  asg <- attr(f$X, "assign")
  K1 <- nrow(f$B)
  b <- as.vector(t(f$B))
  a <- rep(asg, K1)
  labs <- attr(terms(f$mf), "term.labels")
  list(name = "survey_exer", patsy_terms = I(c("Intercept", "Sex", "Age", "Pulse")),
       nonrobust = wald_terms(b, solve(f$eval$info), a, labs),
       HC1 = wald_terms(b, sandwich(f, meat. = meat, adjust = TRUE), a, labs))
})
wald_cases <- list(
  glm_wald("birthwt_logit", c("Intercept", "age", "lwt", "race", "smoke", "ptl", "ht", "ui",
                              "ftv")),
  glm_wald("birthwt_cloglog_terms", c("Intercept", "age", "I(age ** 2)", "np.log(lwt)",
                                      "C(race)", "smoke", "age:smoke")),
  glm_wald("insurance_poisson", c("Intercept", "C(District)", "Group", "Age")))

## ---------------------------------------------------------------------------------------
## Profile-likelihood intervals: MASS's confint (profile + spline interpolation) and the
## exact roots of the signed root deviance z(b) = sign(b - bhat) sqrt((D(b) - D)/phi) = q
## (uniroot on glm.fit with the coefficient held fixed through the offset)
## ---------------------------------------------------------------------------------------
profile_exact <- function(fit, level = 0.95) {
  X <- model.matrix(fit); y <- fit$y; w <- fit$prior.weights
  off <- if (is.null(fit$offset)) rep(0, length(y)) else fit$offset
  fam <- fit$family; b0 <- coef(fit); dev0 <- deviance(fit)
  phi <- summary(fit)$dispersion; se <- sqrt(diag(vcov(fit)))
  q <- qnorm((1 + level) / 2)
  z <- function(j, b) {
    o <- off + X[, j] * b
    ctl <- glm.control(epsilon = 1e-13, maxit = 1000)
    ## glm's own starting values (a start at the other coefficients' MLE can diverge once
    ## b is far from bhat), then restarts from the estimate until the deviance settles
    fm <- suppressWarnings(glm.fit(X[, -j, drop = FALSE], y, weights = w, offset = o,
                                   family = fam, control = ctl))
    for (r in 1:3) fm <- suppressWarnings(glm.fit(X[, -j, drop = FALSE], y, weights = w,
                                                  offset = o, family = fam,
                                                  start = coef(fm), control = ctl))
    stopifnot(fm$converged)
    sign(b - b0[j]) * sqrt(max(fm$deviance - dev0, 0) / phi)
  }
  out <- t(sapply(seq_along(b0), function(j) {
    sapply(c(-1, 1), function(s) {
      far <- b0[j] + s * se[j]
      while (s * z(j, far) < q) far <- b0[j] + 2 * (far - b0[j])
      uniroot(function(b) z(j, b) - s * q, sort(c(b0[j], far)), tol = 1e-14)$root
    })
  }))
  out
}
profile_case <- function(name) {
  fit <- GLM_FITS[[name]]
  ex <- profile_exact(fit)
  ms <- suppressWarnings(suppressMessages(confint(fit)))
  cat(sprintf("  profile %-22s max |MASS - exact| / se = %.1e\n", name,
              max(abs(ms - ex) / sqrt(diag(vcov(fit))))))
  list(name = name, lower = vec(ex[, 1]), upper = vec(ex[, 2]),
       mass_lower = vec(ms[, 1]), mass_upper = vec(ms[, 2]), level = 0.95,
       lower90 = vec(profile_exact(fit, 0.9)[, 1]))
}
profile_cases <- lapply(c("birthwt_logit", "birthwt_probit", "insurance_poisson",
                          "birthwt_gaussian", "menarche_var"), profile_case)
spector_fit <- fit_glm(GRADE ~ GPA + TUCE + PSI, binomial(), DATA$spector)
GLM_FITS$spector_logit <- spector_fit
profile_cases[[length(profile_cases) + 1]] <- c(
  profile_case("spector_logit"),
  list(patsy_formula = "GRADE ~ GPA + TUCE + PSI", dataset = "spector",
       coef_names = I(c("Intercept", "GPA", "TUCE", "PSI"))))

## ---------------------------------------------------------------------------------------
## Marginal effects through R's own formula machinery: a variable is perturbed in the data
## and the design rebuilt with model.matrix (so I(age^2), log(lwt) and age:smoke all move),
## design derivatives by Richardson-extrapolated central differences (error ~1e-12), the
## chain rule through the mean analytically, standard errors by the delta method with
## numDeriv's Richardson Jacobian in the coefficients.
##   overall: mean over rows of the per-row effect; mean: numeric variables at their means,
##   factors as observed, design rows averaged (Stata's atmeans for factors' indicators).
##   dydx = dmu/dx; eyex = dydx x / mu; dyex = dydx x; eydx = dydx / mu.  Discrete changes
##   (factor levels against the reference; 0/1 numerics with dummy): mu(l) - mu(ref), and
##   log mu(l) - log mu(ref) for the ey methods (statsmodels' convention).
## ---------------------------------------------------------------------------------------
design_at <- function(tt, data, contrasts) model.matrix(tt, data, contrasts.arg = contrasts)
ddesign <- function(tt, data, v, contrasts) {
  h <- 1e-3 * max(1, mean(abs(data[[v]])))
  cd <- function(h) {
    up <- data; up[[v]] <- up[[v]] + h
    dn <- data; dn[[v]] <- dn[[v]] - h
    (design_at(tt, up, contrasts) - design_at(tt, dn, contrasts)) / (2 * h)
  }
  (4 * cd(h / 2) - cd(h)) / 3   # Richardson: error O(h^4)
}
## mean function of a model at design X: a matrix n x m (m = 1 for a GLM, K for multinom),
## and its derivative along the direction D of the design (the chain rule, analytic in b)
glm_mean <- function(fit) function(b, X) matrix(fit$family$linkinv(drop(X %*% b)), ncol = 1)
glm_dmean <- function(fit) function(b, X, D)
  matrix(fit$family$mu.eta(drop(X %*% b)) * drop(D %*% b), ncol = 1)
mn_mean <- function(K1, p) function(b, X) {
  B <- matrix(b, K1, p, byrow = TRUE)
  eta <- cbind(0, X %*% t(B)); P <- exp(eta - apply(eta, 1, max)); P / rowSums(P)
}
mn_dmean <- function(K1, p) function(b, X, D) {  # dp_k = p_k (d_k - sum_l p_l d_l)
  P <- mn_mean(K1, p)(b, X)
  d <- cbind(0, D %*% t(matrix(b, K1, p, byrow = TRUE)))
  P * (d - rowSums(P * d))
}
margins <- function(b, mean_fn, dmean_fn, tt, data, contrasts, numeric_vars, factor_vars,
                    dummies, method, at) {
  means <- data
  if (at == "mean") for (v in c(numeric_vars, dummies)) means[[v]] <- mean(data[[v]])
  X <- design_at(tt, means, contrasts)
  avg <- function(M) if (at == "mean") colMeans(M) else M
  effects <- list()
  numeric_effect <- function(v) {  # a closure per variable (R's loop variables are shared)
    force(v)
    D <- ddesign(tt, means, v, contrasts)
    function(b) {
      if (at == "mean") {
        Xb <- matrix(colMeans(X), 1); Db <- matrix(colMeans(D), 1); xv <- mean(data[[v]])
      } else { Xb <- X; Db <- D; xv <- data[[v]] }
      dydx <- dmean_fn(b, Xb, Db)
      mu <- mean_fn(b, Xb)
      e <- switch(method, dydx = dydx, eyex = dydx * xv / mu, dyex = dydx * xv,
                  eydx = dydx / mu)
      colMeans(e)
    }
  }
  for (v in numeric_vars) effects[[v]] <- numeric_effect(v)
  discrete <- function(v, lev, ref) {
    force(v); force(lev); force(ref)
    function(b) {
      a <- means; a[[v]] <- if (is.factor(data[[v]])) factor(rep(lev, nrow(a)), levels(data[[v]])) else lev
      r <- means; r[[v]] <- if (is.factor(data[[v]])) factor(rep(ref, nrow(r)), levels(data[[v]])) else ref
      Xa <- design_at(tt, a, contrasts); Xr <- design_at(tt, r, contrasts)
      if (at == "mean") { Xa <- matrix(colMeans(Xa), 1); Xr <- matrix(colMeans(Xr), 1) }
      ma <- mean_fn(b, Xa); mr <- mean_fn(b, Xr)
      if (startsWith(method, "ey")) { ma <- log(ma); mr <- log(mr) }
      colMeans(ma - mr)
    }
  }
  labels <- character(0)
  for (v in factor_vars) {
    lv <- levels(data[[v]])
    for (l in lv[-1]) { effects[[paste0(v, "=", l)]] <- discrete(v, l, lv[1]) }
  }
  for (v in dummies) effects[[paste0(v, "=1")]] <- discrete(v, 1, 0)
  est <- lapply(effects, function(f) f(b))
  jac <- lapply(effects, function(f) jacobian(f, b, method = "Richardson"))
  list(names = I(names(effects)), effect = mat(do.call(rbind, est)),
       jac = lapply(jac, mat))
}
margins_case <- function(name, fit_or_mn, data, numeric_vars, factor_vars, dummies = character(0),
                         patsy, labels, mn = FALSE) {
  if (mn) {
    f <- fit_or_mn; tt <- delete.response(terms(f$mf)); contrasts <- attr(f$X, "contrasts")
    b <- as.vector(t(f$B)); V <- solve(f$eval$info)
    mean_fn <- mn_mean(nrow(f$B), ncol(f$X)); dmean_fn <- mn_dmean(nrow(f$B), ncol(f$X))
    data <- f$data
  } else {
    fit <- fit_or_mn; tt <- delete.response(terms(fit)); contrasts <- fit$contrasts
    b <- coef(fit); V <- vcov(fit); mean_fn <- glm_mean(fit); dmean_fn <- glm_dmean(fit)
    data <- model.frame(fit)  # complete rows
    data <- fit$data[rownames(data), ]
  }
  runs <- list()
  for (at in c("overall", "mean")) for (method in c("dydx", "eyex", "dyex", "eydx")) {
    for (dum in c(FALSE, TRUE)) {
      if (dum && length(dummies) == 0) next
      nv <- if (dum) setdiff(numeric_vars, dummies) else numeric_vars
      m <- margins(b, mean_fn, dmean_fn, tt, data, contrasts, nv, factor_vars,
                   if (dum) dummies else character(0), method, at)
      se <- sapply(m$jac, function(J) sqrt(diag(J %*% V %*% t(J))))
      runs[[length(runs) + 1]] <- list(at = at, method = method, dummy = dum,
                                       names = m$names, margeff = m$effect,
                                       margeff_se = mat(if (is.matrix(se)) t(se) else se))
    }
  }
  list(name = name, patsy_formula = patsy, labels = labels, runs = runs)
}
bw_margins_fit <- fit_glm(low ~ age + I(age^2) + log(lwt) + race + smoke + age:smoke + ht,
                          binomial(), bw)
bw_margins_probit <- fit_glm(low ~ age + lwt + race + smoke + ht, binomial("probit"), bw)
mn_margins_fit <- fit_mn(Exer ~ Sex * Pulse + Age, survey_mn)
margins_cases <- list(
  margins_case("birthwt_logit_terms", bw_margins_fit, bw, c("age", "lwt", "smoke", "ht"), "race",
               c("smoke", "ht"),
               patsy = "low ~ age + I(age**2) + np.log(lwt) + C(race) + smoke + age:smoke + ht",
               labels = list(age = "age", lwt = "lwt", smoke = "smoke", ht = "ht",
                             "race=other" = "C(race)[T.other]", "race=white" = "C(race)[T.white]",
                             "smoke=1" = "smoke", "ht=1" = "ht")),
  margins_case("birthwt_probit", bw_margins_probit, bw, c("age", "lwt", "smoke", "ht"), "race",
               c("smoke", "ht"), patsy = "low ~ age + lwt + race + smoke + ht",
               labels = list(age = "age", lwt = "lwt", smoke = "smoke", ht = "ht",
                             "race=other" = "race[T.other]", "race=white" = "race[T.white]",
                             "smoke=1" = "smoke", "ht=1" = "ht")),
  c(margins_case("survey_exer_mnlogit", mn_margins_fit, NULL, c("Pulse", "Age"), "Sex",
                 patsy = "Exer ~ Sex * Pulse + Age",
                 labels = list(Pulse = "Pulse", Age = "Age", "Sex=Male" = "Sex[T.Male]"),
                 mn = TRUE),
    list(levels = I(mn_margins_fit$levels), complete_cases = I(c("Exer", "Sex", "Age", "Pulse"))))
)

meta <- list(
  generator = "tests/reference/r/inference.R",
  R_version = R.version.string,
  packages = list(stats = as.character(packageVersion("stats")),
                  MASS = as.character(packageVersion("MASS")),
                  nnet = as.character(packageVersion("nnet")),
                  sandwich = as.character(packageVersion("sandwich")),
                  lmtest = as.character(packageVersion("lmtest")),
                  car = as.character(packageVersion("car")),
                  numDeriv = as.character(packageVersion("numDeriv"))),
  platform = R.version$platform,
  derived_columns = DERIVED,
  read_csv = "pandas.read_csv(path, keep_default_na=False, na_values=[''])",
  matrices = paste("rows/columns in R's coefficient order; coef_names gives patsy's names;",
                   "multinomial parameters level-major (all of level 2, then level 3, ...)"),
  robust = paste("expected: sandwich's bread (R's glm, Fisher information);",
                 "observed: bread. = n * solve(observed information);",
                 "cluster = vcovCL(type = 'HC1'); cluster_nocorrection = type 'HC0',",
                 "cadjust = FALSE; cluster2 two-way (multi0 = FALSE), cluster2_fix fix = TRUE")
)
path <- file.path(refdir, "inference.json")
writeLines(to_json(list(meta = meta, robust = robust_cases, mnlogit_robust = mn_robust_cases,
                        predict = predict_cases, mnlogit_predict = mn_predict_case,
                        anova = anova_cases, wald_terms = wald_cases,
                        mnlogit_wald_terms = mn_wald, profile = profile_cases,
                        margins = margins_cases)), path, useBytes = TRUE)
cat("wrote", path, "\n")
})
