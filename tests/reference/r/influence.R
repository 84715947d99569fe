## Reference values for influence diagnostics of glm fits (issue 13): hat values, Cook's
## distances, standardized and studentized residuals, DFBETA(S), DFFITS and covariance ratios,
## as R's stats package computes them.
##
## Run from the repository root:   Rscript tests/reference/r/influence.R
## (generate.R sources it at its end.) Reads tests/reference/data/*.csv, writes
## tests/reference/influence.json. Deterministic: no random numbers.
##
## Every fit is polished to the MLE as generate.R does: glm(..., epsilon = 1e-14) restarted from
## its own coefficients until they stop moving, so the diagnostics belong to the MLE and not to
## the iterate before the last. Fields per case:
##   hat            hatvalues(fit)
##   cooks          cooks.distance(fit)
##   rstandard_dev  rstandard(fit)                   (deviance residuals, R's default)
##   rstandard_pear rstandard(fit, type = "pearson")
##   rstudent       rstudent(fit)
##   dfbeta         dfbeta(fit)      (rows = observations, columns = coef_names)
##   dfbetas        dfbetas(fit)
##   dffits         dffits(fit)
##   covratio       covratio(fit)
##   sigma          influence(fit)$sigma
##   infmat_names   colnames(influence.measures(fit)$infmat); its columns are dfbetas, dffits,
##                  covratio, cooks and hat (checked here to agree to 1e-13 of their largest value,
##                  so not stored twice)

source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

read_sorted <- function(name) {
  d <- read.csv(file.path(datadir, paste0(name, ".csv")), stringsAsFactors = FALSE,
                na.strings = "", check.names = FALSE)
  for (v in names(d)) if (is.character(d[[v]]))  # levels by code point, as patsy
    d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]]), method = "radix"))
  d
}

polish <- function(cl, env) {
  fit <- suppressWarnings(eval(cl, env))
  for (i in 1:50) {
    old <- coef(fit)
    env$start <- old
    cl$start <- quote(start)
    fit <- suppressWarnings(eval(cl, env))
    if (max(abs(coef(fit) - old)) <= 1e-15 * max(1, max(abs(old)))) break
  }
  fit
}

influence_case <- function(name, dataset, formula, family, patsy_formula, patsy_coef_names,
                           weights = NULL, offset = NULL) {
  d <- read_sorted(dataset)
  env <- list2env(list(d = d, w = weights, o = offset))
  cl <- call("glm", formula = as.formula(formula, env = env), family = family, data = quote(d),
             control = quote(glm.control(epsilon = 1e-14, maxit = 100)))
  if (!is.null(weights)) cl$weights <- quote(w)
  if (!is.null(offset)) cl$offset <- quote(o)
  fit <- polish(cl, env)
  infl <- influence(fit)
  im <- influence.measures(fit)
  same <- function(a, b) stopifnot(max(abs(a - b)) <= 1e-13 * max(abs(b)))
  k <- ncol(dfbetas(fit))
  same(im$infmat[, seq_len(k)], dfbetas(fit))
  same(im$infmat[, "dffit"], dffits(fit))
  same(im$infmat[, "cov.r"], covratio(fit))
  same(im$infmat[, "cook.d"], cooks.distance(fit))
  same(im$infmat[, "hat"], hatvalues(fit))
  list(name = name, dataset = dataset, formula = formula, patsy_formula = patsy_formula,
       family = family$family, link = family$link,
       weights = if (is.null(weights)) NULL else vec(weights),
       offset = if (is.null(offset)) NULL else vec(offset),
       coef_names = I(names(coef(fit))), patsy_coef_names = I(patsy_coef_names),
       coef = vec(coef(fit)), dispersion = summary(fit)$dispersion, nobs = nobs(fit),
       hat = vec(hatvalues(fit)), cooks = vec(cooks.distance(fit)),
       rstandard_dev = vec(rstandard(fit)),
       rstandard_pear = vec(rstandard(fit, type = "pearson")),
       rstudent = vec(rstudent(fit)), dfbeta = mat(dfbeta(fit)), dfbetas = mat(dfbetas(fit)),
       dffits = vec(dffits(fit)), covratio = vec(covratio(fit)), sigma = vec(infl$sigma),
       infmat_names = I(colnames(im$infmat)))
}

race <- c("race[T.other]", "race[T.white]")
cases <- list(
  influence_case("spector_logit", "spector", "GRADE ~ GPA + TUCE + PSI",
                 binomial("logit"), "GRADE ~ GPA + TUCE + PSI",
                 c("Intercept", "GPA", "TUCE", "PSI")),
  influence_case("spector_probit", "spector", "GRADE ~ GPA + TUCE + PSI",
                 binomial("probit"), "GRADE ~ GPA + TUCE + PSI",
                 c("Intercept", "GPA", "TUCE", "PSI")),
  influence_case("birthwt_logit", "birthwt", "low ~ age + lwt + race + smoke",
                 binomial("logit"), "low ~ age + lwt + race + smoke",
                 c("Intercept", "age", "lwt", race, "smoke")),
  influence_case("birthwt_cloglog", "birthwt", "low ~ age + lwt + race + smoke + ptl + ht",
                 binomial("cloglog"), "low ~ age + lwt + race + smoke + ptl + ht",
                 c("Intercept", "age", "lwt", race, "smoke", "ptl", "ht")),
  influence_case("menarche_logit_weights", "menarche", "Menarche/Total ~ Age",
                 binomial("logit"), "I(Menarche / Total) ~ Age", c("Intercept", "Age"),
                 weights = read_sorted("menarche")$Total),
  influence_case("birthwt_gaussian", "birthwt", "bwt ~ age + lwt + race + smoke",
                 gaussian(), "bwt ~ age + lwt + race + smoke",
                 c("Intercept", "age", "lwt", race, "smoke")),
  influence_case("insurance_poisson_offset", "insurance", "Claims ~ District + Group + Age",
                 poisson(), "Claims ~ District + Group + Age",
                 c("Intercept", "District", "Group[T.1.5-2l]", "Group[T.<1l]", "Group[T.>2l]",
                   "Age[T.30-35]", "Age[T.<25]", "Age[T.>35]"),
                 offset = log(read_sorted("insurance")$Holders))
)

write_json(list(meta = list(generator = "tests/reference/r/influence.R",
                            R_version = R.version.string,
                            stats = as.character(packageVersion("stats")),
                            number_format = "shortest of %.15g/%.16g/%.17g; NA -> null"),
                cases = cases), "influence.json")
