## Reference values for ordinal (cumulative-link) regression (issue 28): MASS::polr and
## ordinal::clm on MASS's housing (Sat ~ Infl + Type + Cont, weights Freq), ordinal's wine
## (rating ~ temp + contact) and a simulated set, for every link.
##
## Run from the repository root:   Rscript tests/reference/r/ordinal.R
## (generate.R sources it at its end.) Reads tests/reference/data/housing.csv, writes
## tests/reference/data/wine.csv (ordinal's wine, if absent) and tests/reference/ordinal.json.
## Deterministic: the simulated set uses set.seed(28).
##
## Parameters are reported as glmclass orders them: the coefficients b, then the thresholds
## zeta ("a|b" labels), P(Y <= k) = F(zeta_k - x'b). clm is fit with tight convergence
## (gradTol 1e-12) and its analytic Hessian gives the SEs: these are the strict references.
## polr (BFGS, numerical Hessian) is stored as well, and is only as precise as its optimiser.

suppressPackageStartupMessages({
  library(MASS)
  library(ordinal)
  library(sandwich)
})
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

vec <- function(x) I(unname(as.vector(x)))
mat <- function(x) { x <- as.matrix(x); dimnames(x) <- NULL; x }

wine_csv <- file.path(datadir, "wine.csv")
if (!file.exists(wine_csv)) {
  data(wine, package = "ordinal")
  w <- wine[, c("response", "rating", "temp", "contact", "bottle", "judge")]
  w$rating <- as.integer(as.character(w$rating))
  write.csv(w, wine_csv, row.names = FALSE, quote = FALSE)
}

housing <- read.csv(file.path(datadir, "housing.csv"))
housing$Sat <- factor(housing$Sat, levels = c("Low", "Medium", "High"), ordered = TRUE)
housing$Infl <- factor(housing$Infl, levels = c("Low", "Medium", "High"))
housing$Type <- factor(housing$Type, levels = c("Tower", "Apartment", "Atrium", "Terrace"))
housing$Cont <- factor(housing$Cont, levels = c("Low", "High"))

wine <- read.csv(wine_csv)
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)
wine$temp <- factor(wine$temp, levels = c("cold", "warm"))
wine$contact <- factor(wine$contact, levels = c("no", "yes"))

set.seed(28)
n <- 400
sim <- data.frame(x1 = rnorm(n), x2 = runif(n, -1, 1), g = sample(c("a", "b", "c"), n, TRUE))
sim$off <- round(rnorm(n, sd = 0.3), 3)
sim$x1 <- round(sim$x1, 4)
sim$x2 <- round(sim$x2, 4)
lat <- 0.8 * sim$x1 - 1.2 * sim$x2 + ifelse(sim$g == "b", 0.5, 0) + sim$off + rlogis(n)
sim$y <- cut(lat, c(-Inf, -1, 0.3, 1.5, Inf), labels = c("L1", "L2", "L3", "L4"))
sim$y <- factor(as.character(sim$y), levels = c("L1", "L2", "L3", "L4"), ordered = TRUE)
sim$g <- factor(sim$g)
sim_csv <- sim
sim_csv$y <- as.character(sim_csv$y)
write.csv(sim_csv, file.path(datadir, "ordinal_sim.csv"), row.names = FALSE, quote = FALSE)

polr_method <- c(logit = "logistic", probit = "probit", cloglog = "cloglog",
                 loglog = "loglog", cauchit = "cauchit")

## clm's parameters (thresholds first) reordered to glmclass's (coefficients first)
reorder <- function(fit) {
  nth <- length(fit$alpha)
  nb <- length(fit$beta)
  c(nth + seq_len(nb), seq_len(nth))
}

case <- function(name, data, formula, link, weights = NULL, offset = NULL, newdata = NULL,
                 cluster = NULL) {
  f <- as.formula(formula)
  fc <- if (is.null(offset)) f else as.formula(paste(formula, "+ offset(", offset, ")"))
  args <- list(formula = fc, data = data, link = link,
               control = clm.control(gradTol = 1e-12, relTol = 1e-14, maxIter = 500))
  if (!is.null(weights)) args$weights <- data[[weights]]
  fit <- do.call(clm, args)
  stopifnot(fit$convergence$code == 0)
  o <- reorder(fit)
  cf <- coef(fit)[o]
  V <- vcov(fit)[o, o]
  lev <- levels(data[[all.vars(f)[1]]])
  out <- list(name = name, formula = formula, link = link, weights = weights, offset = offset,
              levels = I(lev), coef_names = I(names(cf)), params = vec(cf),
              bse = vec(sqrt(diag(V))), cov = mat(V),
              loglik = as.numeric(logLik(fit)), aic = AIC(fit), bic = BIC(fit),
              nobs = nobs(fit), max_grad = max(abs(fit$gradient)))
  ## predicted probabilities (in-sample, every row)
  out$prob <- mat(fit$fitted.values)  # probability of the observed level
  pr <- predict(fit, newdata = data[, setdiff(names(data), all.vars(f)[1]), drop = FALSE],
                type = "prob")$fit
  out$prob_all <- mat(pr)
  ## polr on the same data (BFGS; its own numbers, less precise)
  pargs <- list(formula = fc, data = data, method = polr_method[[link]], Hess = TRUE)
  if (!is.null(weights)) pargs$weights <- data[[weights]]
  pf <- tryCatch(suppressWarnings(do.call(polr, pargs)), error = function(e) NULL)
  if (is.null(pf)) {
    cat("  ", name, ": polr found no starting values (clm only)\n")
  } else out$polr <- list(params = vec(c(coef(pf), pf$zeta)), bse = vec(sqrt(diag(vcov(pf)))),
                   loglik = as.numeric(logLik(pf)), aic = AIC(pf), deviance = deviance(pf))
  if (link == "cauchit") {
    ## clm's cauchit optimises a likelihood that differs from R's pcauchy (its logLik at its
    ## own estimates is not sum(log(diff(pcauchy(...))))): record the exact log-likelihood at
    ## clm's estimates, from pcauchy, for the tests to check the likelihood itself
    X <- model.matrix(f, data)[, -1, drop = FALSE]
    eta <- drop(X %*% fit$beta) + (if (is.null(offset)) 0 else data[[offset]])
    th <- c(-Inf, fit$alpha, Inf)
    yy <- as.integer(data[[all.vars(f)[1]]])
    wt <- if (is.null(weights)) 1 else data[[weights]]
    out$loglik_pcauchy_at_params <- sum(wt * log(pcauchy(th[yy + 1] - eta) - pcauchy(th[yy] - eta)))
  }
  if (is.null(weights) && is.null(offset)) {
    ## sandwich covariances (estfun.clm leaves the offset out: offset cases are not used) (R sandwich on the clm fit); HC1 = HC0 n / (n - k)
    ## (sandwich's estfun.clm knows logit, probit, cloglog and cauchit only)
    hc0 <- tryCatch(sandwich(fit)[o, o], error = function(e) NULL)
    k <- length(cf)
    if (!is.null(hc0)) {
      out$hc0 <- mat(hc0)
      out$hc1 <- mat(hc0 * nobs(fit) / (nobs(fit) - k))
    }
    if (!is.null(cluster) && !is.null(hc0)) {
      out$cluster <- cluster
      out$vcov_cluster <- mat(vcovCL(fit, cluster = data[[cluster]], type = "HC1")[o, o])
    }
  }
  out
}

cases <- list()
for (link in names(polr_method)) {
  cases[[length(cases) + 1]] <- case(paste0("housing_", link), housing,
                                     "Sat ~ Infl + Type + Cont", link, weights = "Freq")
  cases[[length(cases) + 1]] <- case(paste0("wine_", link), wine, "rating ~ temp + contact",
                                     link, cluster = "judge")
  cases[[length(cases) + 1]] <- case(paste0("sim_", link), sim, "y ~ x1 + x2 + g", link,
                                     offset = "off")
}

## profile intervals of the coefficients: MASS's confint.polr (spline of the profile) and
## exact roots of the signed root deviance (uniroot on clm refits with the coefficient fixed
## through the offset)
profile_case <- function(name, data, formula, weights = NULL) {
  f <- as.formula(formula)
  args <- list(formula = f, data = data, Hess = TRUE)
  if (!is.null(weights)) args$weights <- data[[weights]]
  pf <- suppressWarnings(do.call(polr, args))
  ci_mass <- suppressMessages(confint(pf, level = 0.95))
  full <- clm(f, data = data, weights = if (is.null(weights)) NULL else data[[weights]],
              control = clm.control(gradTol = 1e-12, relTol = 1e-14))
  ll0 <- as.numeric(logLik(full))
  mm <- model.matrix(f, data)[, -1, drop = FALSE]
  y <- data[[all.vars(f)[1]]]
  w <- if (is.null(weights)) rep(1, nrow(data)) else data[[weights]]
  q <- qchisq(0.95, 1)
  exact <- matrix(NA_real_, ncol(mm), 2)
  for (j in seq_len(ncol(mm))) {
    b <- full$beta[j]
    se <- sqrt(diag(vcov(full)))[length(full$alpha) + j]
    dev <- function(v) {
      off <- mm[, j] * v
      X <- mm[, -j, drop = FALSE]
      fj <- if (ncol(X)) clm(y ~ X + offset(off), weights = w,
                             control = clm.control(gradTol = 1e-12, relTol = 1e-14))
            else clm(y ~ 1 + offset(off), weights = w,
                     control = clm.control(gradTol = 1e-12, relTol = 1e-14))
      2 * (ll0 - as.numeric(logLik(fj))) - q
    }
    exact[j, 1] <- uniroot(dev, c(b - 6 * se, b), tol = 1e-12)$root
    exact[j, 2] <- uniroot(dev, c(b, b + 6 * se), tol = 1e-12)$root
  }
  list(name = name, formula = formula, weights = weights, coef_names = I(colnames(mm)),
       mass_confint = mat(ci_mass), exact = mat(exact), level = 0.95)
}
profiles <- list(profile_case("housing", housing, "Sat ~ Infl + Type + Cont", "Freq"),
                 profile_case("wine", wine, "rating ~ temp + contact"))

## nominal_test: LR test per term against threshold-specific effects
nominal <- list()
for (nm in c("wine", "sim")) {
  d <- if (nm == "wine") wine else sim
  frm <- if (nm == "wine") rating ~ temp + contact else y ~ x1 + x2 + g
  ## default control: nominal_test's refits fail (NA rows) under the tight one
  fit <- clm(frm, data = d)
  nt <- nominal_test(fit)
  stopifnot(!anyNA(nt$LRT[-1]))
  nominal[[length(nominal) + 1]] <- list(
    name = nm, formula = deparse(frm), terms = I(rownames(nt)[-1]),
    df = vec(nt$Df[-1]), loglik = vec(nt$logLik[-1]), aic = vec(nt$AIC[-1]),
    lrt = vec(nt$LRT[-1]), pvalue = vec(nt[["Pr(>Chi)"]][-1]),
    loglik_full = nt$logLik[1])
}

write_json(list(
  meta = list(generator = "tests/reference/r/ordinal.R", R_version = R.version.string,
              MASS = as.character(packageVersion("MASS")),
              ordinal = as.character(packageVersion("ordinal")),
              sandwich = as.character(packageVersion("sandwich")),
              levels = list(Sat = I(levels(housing$Sat)), Infl = I(levels(housing$Infl)),
                            Type = I(levels(housing$Type)), Cont = I(levels(housing$Cont)),
                            rating = I(levels(wine$rating)))),
  cases = cases, profiles = profiles, nominal = nominal), "ordinal.json")
