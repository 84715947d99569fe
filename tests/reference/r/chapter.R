## tests/reference/r/chapter.R -- reference values for the chapter's classic methods
## (issue 11): least squares on indicator targets, Fisher's discriminant (MASS::lda's
## two-class scaling), Rosenblatt's perceptron, and the maximum-likelihood fits that the
## gradient methods must reach.
##
## Reads  tests/reference/data/{iris,birthwt}.csv   writes   tests/reference/chapter.json
## Run from the repository root:  Rscript tests/reference/r/chapter.R
## (generate.R sources this file at its end.)  Deterministic: no random numbers are drawn.

suppressPackageStartupMessages({
  library(MASS)
  library(nnet)
})
options(warn = 1, stringsAsFactors = FALSE)

ch_refdir <- file.path("tests", "reference")
ch_datadir <- file.path(ch_refdir, "data")
if (!dir.exists(ch_datadir)) stop("run from the repository root (", ch_datadir, " not found)")

## ---------------------------------------------------------------------------------------
## JSON writer: a copy of generate.R's (17 significant digits where needed), so that this
## file also runs on its own.
## ---------------------------------------------------------------------------------------
ch_num <- function(x) {
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
ch_esc <- function(s) {
  s <- gsub("\\", "\\\\", s, fixed = TRUE)
  s <- gsub("\"", "\\\"", s, fixed = TRUE)
  ifelse(is.na(s), "null", paste0("\"", s, "\""))
}
ch_atoms <- function(x) {
  if (is.factor(x)) x <- as.character(x)
  if (is.character(x)) return(ch_esc(x))
  if (is.logical(x)) return(ifelse(is.na(x), "null", ifelse(x, "true", "false")))
  if (is.integer(x)) return(ifelse(is.na(x), "null", as.character(x)))
  ch_num(as.numeric(x))
}
ch_json <- function(x, indent = 0L) {
  pad <- strrep("  ", indent + 1L)
  pad0 <- strrep("  ", indent)
  if (is.null(x)) return("null")
  if (is.list(x)) {
    if (length(x) == 0L) return(if (is.null(names(x))) "[]" else "{}")
    items <- vapply(x, ch_json, "", indent = indent + 1L)
    if (!is.null(names(x)) && all(nzchar(names(x)))) {
      items <- paste0(ch_esc(names(x)), ": ", items)
      return(paste0("{\n", pad, paste(items, collapse = paste0(",\n", pad)), "\n", pad0, "}"))
    }
    return(paste0("[\n", pad, paste(items, collapse = paste0(",\n", pad)), "\n", pad0, "]"))
  }
  if (is.matrix(x)) {
    rows <- vapply(seq_len(nrow(x)), function(i)
      paste0("[", paste(ch_atoms(x[i, , drop = TRUE]), collapse = ", "), "]"), "")
    return(paste0("[\n", pad, paste(rows, collapse = paste0(",\n", pad)), "\n", pad0, "]"))
  }
  s <- ch_atoms(unclass(x))
  if (length(x) == 1L && !inherits(x, "AsIs")) return(s)
  paste0("[", paste(s, collapse = ", "), "]")
}
ch_vec <- function(x) I(unname(as.vector(x)))
ch_mat <- function(x) { x <- as.matrix(x); dimnames(x) <- NULL; x }

ch_read <- function(name) {
  d <- read.csv(file.path(ch_datadir, paste0(name, ".csv")), stringsAsFactors = FALSE,
                na.strings = "", check.names = FALSE)
  for (v in names(d)) if (is.character(d[[v]]))
    d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]][!is.na(d[[v]])]), method = "radix"))
  d
}
iris <- ch_read("iris")
bw <- ch_read("birthwt")
## standardised columns (scale(): mean 0, sd with n - 1), for the gradient-method cases
zs <- function(x) (x - mean(x)) / sd(x)
bwz <- within(bw, { age_z <- zs(age); lwt_z <- zs(lwt); ptl_z <- zs(ptl); smoke_z <- zs(smoke)
                    ht_z <- zs(ht); ui_z <- zs(ui); ftv_z <- zs(ftv) })

## ---------------------------------------------------------------------------------------
## Least squares on 1-of-K targets: lm with a matrix response.
## ---------------------------------------------------------------------------------------
masking_data <- function() {
  ## ESL Fig. 4.2: three classes along the line x1 = x2, means (-4,-4), (0,0), (4,4), each
  ## with the same symmetric 7 x 6 grid of offsets: the middle class's score is flat (1/3),
  ## so it is masked exactly; no point has u + v = 0, where all three scores would tie.
  off <- expand.grid(u = seq(-1.5, 1.5, length.out = 7), v = seq(-1.25, 1.25, length.out = 6))
  do.call(rbind, lapply(1:3, function(k) {
    m <- c(-4, 0, 4)[k]
    data.frame(x1 = m + off$u, x2 = m + off$v, g = c("a", "b", "c")[k])
  }))
}
ls_case <- function(name, d, response, rhs, patsy_formula) {
  y <- d[[response]]
  if (!is.factor(y)) y <- factor(y, levels = sort(unique(y), method = "radix"))
  T <- sapply(levels(y), function(l) as.numeric(y == l))
  f <- as.formula(paste("T ~", rhs))
  fit <- lm(f, data = d)
  cf <- coef(fit)
  list(name = name, patsy_formula = patsy_formula, levels = I(levels(y)),
       coef_names = I(rownames(cf)), coef = ch_mat(cf), fitted = ch_mat(fitted(fit)),
       rank = fit$rank, pred_class = I(levels(y)[max.col(fitted(fit), ties.method = "first")]),
       n_outside = sum(fitted(fit) < 0 | fitted(fit) > 1))
}
md <- masking_data()
ls_cases <- list(
  ls_case("iris", iris, "Species", "Sepal_Length + Sepal_Width + Petal_Length + Petal_Width",
          "Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width"),
  ls_case("birthwt_race", bw, "race", "age + lwt + smoke + ht + factor(ftv > 0)",
          "race ~ age + lwt + smoke + ht + C(ftv > 0)"),
  ls_case("masking_linear", md, "g", "x1 + x2", "g ~ x1 + x2"),
  ls_case("masking_quadratic", md, "g", "x1 + x2 + I(x1^2) + I(x2^2) + I(x1 * x2)",
          "g ~ x1 + x2 + I(x1**2) + I(x2**2) + I(x1 * x2)")
)
stopifnot(!any(ls_cases[[3]]$pred_class == "b"), any(ls_cases[[4]]$pred_class == "b"))

## ---------------------------------------------------------------------------------------
## Fisher's discriminant: MASS::lda's scaling for two classes, and least squares with the
## targets N/N1, -N/N2 (PRML 4.1.5).
## ---------------------------------------------------------------------------------------
fisher_case <- function(name, d, response, features) {
  y <- droplevels(factor(d[[response]]))
  stopifnot(nlevels(y) == 2L)
  X <- as.matrix(d[, features])
  fit <- lda(X, y)
  m1 <- colMeans(X[y == levels(y)[1], , drop = FALSE])
  m2 <- colMeans(X[y == levels(y)[2], , drop = FALSE])
  s <- fit$scaling[, 1]
  s <- s * sign(sum(s * (m2 - m1)))  # MASS's sign is arbitrary: point from m1 to m2
  n <- nrow(X); n1 <- sum(y == levels(y)[1]); n2 <- n - n1
  t <- ifelse(y == levels(y)[1], n / n1, -n / n2)
  ls <- coef(lm(t ~ X))
  list(name = name, features = I(features), levels = I(levels(y)),
       scaling = ch_vec(s), direction = ch_vec(s / sqrt(sum(s^2))),
       means = ch_mat(rbind(m1, m2)), lda_class = I(as.character(predict(fit)$class)),
       ls_n_coding = ch_vec(ls))
}
iris2 <- droplevels(subset(iris, Species != "setosa"))
bw$low_f <- factor(ifelse(bw$low == 1, "low", "normal"), levels = c("low", "normal"))
fisher_cases <- list(
  fisher_case("iris_versicolor_virginica", iris2, "Species",
              c("Sepal_Length", "Sepal_Width", "Petal_Length", "Petal_Width")),
  fisher_case("birthwt_low", bw, "low_f", c("age", "lwt", "smoke", "ptl", "ht", "ui"))
)

## ---------------------------------------------------------------------------------------
## Rosenblatt's perceptron (ESL 4.5.1), rows visited in order, weights from zero; t = +1
## for the second level; a point with t w'x <= 0 is misclassified and updates w.
## ---------------------------------------------------------------------------------------
perceptron <- function(X, t, eta, max_epochs, pocket) {
  Z <- X * t
  w <- numeric(ncol(X)); best <- w; best_err <- nrow(X) + 1L; best_epoch <- 0L
  hist <- integer(0); upd <- integer(0)
  for (epoch in seq_len(max_epochs)) {
    k <- 0L
    for (i in seq_len(nrow(Z))) {
      if (sum(Z[i, ] * w) <= 0) { w <- w + eta * Z[i, ]; k <- k + 1L }
    }
    err <- sum(drop(Z %*% w) <= 0)
    hist <- c(hist, err); upd <- c(upd, k)
    if (err < best_err) { best <- w; best_err <- err; best_epoch <- epoch }
    if (err == 0L) break
  }
  list(weights = ch_vec(if (pocket) best else w), converged = tail(hist, 1) == 0L,
       n_epochs = length(hist), history = ch_vec(hist), updates = ch_vec(upd),
       best_epoch = if (pocket) best_epoch else length(hist))
}
perceptron_case <- function(name, d, response, features, eta, max_epochs, pocket) {
  y <- droplevels(factor(d[[response]]))
  X <- cbind(1, as.matrix(d[, features]))
  t <- ifelse(y == levels(y)[2], 1, -1)
  c(list(name = name, patsy_formula = paste(response, "~", paste(features, collapse = " + ")),
         learning_rate = eta, max_epochs = max_epochs, pocket = pocket),
    perceptron(X, t, eta, max_epochs, pocket))
}
iris_sv <- droplevels(subset(iris, Species != "virginica"))
sep <- c("Sepal_Length", "Sepal_Width")
perceptron_cases <- list(
  perceptron_case("iris_setosa_versicolor", iris_sv, "Species", sep, 1, 2000, FALSE),
  perceptron_case("iris_setosa_versicolor_eta0.1", iris_sv, "Species", sep, 0.1, 2000, FALSE),
  perceptron_case("iris_versicolor_virginica", iris2, "Species", sep, 1, 40, FALSE),
  perceptron_case("iris_versicolor_virginica_pocket", iris2, "Species", sep, 1, 40, TRUE)
)
stopifnot(perceptron_cases[[1]]$converged, !perceptron_cases[[3]]$converged)

## ---------------------------------------------------------------------------------------
## Maximum-likelihood fits on standardised data: what the gradient methods must reach.
## ---------------------------------------------------------------------------------------
logit_f <- low ~ age_z + lwt_z + smoke_z + ptl_z + ht_z + ui_z
lg <- glm(logit_f, family = binomial, data = bwz, control = glm.control(epsilon = 1e-15,
                                                                          maxit = 100))
lg <- glm(logit_f, family = binomial, data = bwz, start = coef(lg),
          control = glm.control(epsilon = 1e-15, maxit = 100))
mn_f <- race ~ age_z + lwt_z + smoke_z + ftv_z
mn <- multinom(mn_f, data = bwz, reltol = 1e-16, abstol = 1e-30, maxit = 10000, trace = FALSE)
stopifnot(mn$convergence == 0)
mle_cases <- list(
  logit = list(patsy_formula = "low ~ age_z + lwt_z + smoke_z + ptl_z + ht_z + ui_z",
               coef_names = I(names(coef(lg))), coef = ch_vec(coef(lg)),
               se = ch_vec(sqrt(diag(vcov(lg)))), loglik = as.numeric(logLik(lg)),
               deviance = deviance(lg)),
  mnlogit = list(patsy_formula = "race ~ age_z + lwt_z + smoke_z + ftv_z",
                 levels = I(mn$lev), coef = ch_mat(coef(mn)),
                 loglik = as.numeric(logLik(mn)), deviance = deviance(mn))
)

writeLines(ch_json(list(
  meta = list(
    generator = "tests/reference/r/chapter.R",
    R_version = R.version.string,
    packages = list(stats = as.character(packageVersion("stats")),
                    MASS = as.character(packageVersion("MASS")),
                    nnet = as.character(packageVersion("nnet"))),
    standardised = paste("age_z etc. = (x - mean(x)) / sd(x), sd with n - 1 (R's scale());",
                         "Python: (x - x.mean()) / x.std(ddof=1)"),
    masking_data = paste("three classes a, b, c with means (-4,-4), (0,0), (4,4), each with",
                         "the offsets expand.grid(u = seq(-1.5, 1.5, length.out = 7),",
                         "v = seq(-1.25, 1.25, length.out = 6)) (u varies fastest); rows in",
                         "class order"),
    read_csv = "pandas.read_csv(path, keep_default_na=False, na_values=[''])"
  ),
  least_squares = ls_cases,
  fisher = fisher_cases,
  perceptron = perceptron_cases,
  mle = mle_cases
)), file.path(ch_refdir, "chapter.json"), useBytes = TRUE)
cat("wrote", file.path(ch_refdir, "chapter.json"), "\n")
