## Reference values for the numerical core (issue 10): R's aliasing decisions and fits on
## shifted, scaled, collinear and ill-conditioned designs.
##
## Run from the repository root:   Rscript tests/reference/r/numerics.R
## Writes tests/reference/numerics.json. Each case stores its design X and response y (drawn
## here with set.seed), so the tests need neither R nor R's random numbers.
## Numbers: the shortest of 15/16/17 significant digits that reads back as the same double.

options(warn = 1, stringsAsFactors = FALSE)
refdir <- file.path("tests", "reference")
if (!dir.exists(refdir)) stop("run from the repository root")

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

## R's glm.fit decides aliasing with C_Cdqrls(..., tol = min(1e-07, epsilon / 1000)), i.e.
## 1e-11 at the default epsilon = 1e-8; lm and qr() use 1e-7.
qr_alias <- function(X, tol) {
  q <- qr(X, tol = tol, LAPACK = FALSE)
  out <- rep(TRUE, ncol(X))
  out[q$pivot[seq_len(q$rank)]] <- FALSE
  out
}

fit_case <- function(name, X, y, family, epsilon = 1e-8, what = "binary") {
  colnames(X) <- paste0("x", seq_len(ncol(X)) - 1L)
  fit <- suppressWarnings(glm.fit(X, y, family = family,
                                  control = glm.control(epsilon = epsilon, maxit = 100)))
  cf <- fit$coefficients
  aliased <- is.na(cf)
  list(name = name, family = family$family, link = family$link, epsilon = epsilon,
       X = mat(X), y = vec(y),
       glm_aliased = vec(aliased),
       qr_aliased_1e7 = vec(qr_alias(X, 1e-7)),
       qr_aliased_1e11 = vec(qr_alias(X, 1e-11)),
       coef = vec(cf), deviance = fit$deviance, converged = fit$converged,
       iter = fit$iter)
}

set.seed(20261123)
n <- 200
x <- rnorm(n)
z <- rnorm(n)
y <- as.numeric(runif(n) < plogis(-0.3 + 0.8 * x - 0.5 * z))
one <- rep(1, n)
bin <- binomial()
cases <- list(
  fit_case("plain", cbind(one, x, z), y, bin),
  fit_case("shift_1e6", cbind(one, x + 1e6, z), y, bin),
  fit_case("shift_1e6_second", cbind(one, x, z - 1e6), y, bin),
  fit_case("scale_1e-8", cbind(one, x * 1e-8, z), y, bin),
  fit_case("scale_1e8_shift_1e3", cbind(one, x * 1e8 + 1e3, z), y, bin),
  fit_case("exact_collinear", cbind(one, x, z, 2 * x - z + 3, x, rep(0, n)), y, bin),
  fit_case("near_1e-4", cbind(one, x, x + 1e-4 * z), y, bin),
  fit_case("near_1e-6", cbind(one, x, x + 1e-6 * z), y, bin),
  fit_case("near_1e-9", cbind(one, x, x + 1e-9 * z), y, bin),
  fit_case("near_1e-13", cbind(one, x, x + 1e-13 * z), y, bin),
  fit_case("shifted_near_1e-9", cbind(one, x + 1e6, z, x + 1e6 + 1e-9 * z), y, bin)
)

## PRML's fixed polynomial basis on a variable with a large mean: x ~ 50 +- 3
set.seed(20261124)
m <- 400
u <- rnorm(m, 50, 3)
yu <- as.numeric(runif(m) < plogis(-0.4 + 0.35 * (u - 50) - 0.06 * (u - 50)^2))
P <- cbind(rep(1, m), u, u * u, u * u * u)
cases <- c(cases, list(
  fit_case("poly3_logit", P, yu, bin, epsilon = 1e-15),
  fit_case("poly3_probit", P, yu, binomial("probit"), epsilon = 1e-15),
  fit_case("poly2_logit", P[, 1:3], yu, bin, epsilon = 1e-15)
))

write_json(list(meta = list(generator = "tests/reference/r/numerics.R",
                            R_version = R.version.string,
                            note = paste("glm.fit(X, y, family, control = glm.control(epsilon,",
                                         "maxit = 100)); glm_aliased = is.na(coef);",
                                         "qr_aliased_<tol> = columns outside qr(X, tol)'s rank")),
                cases = cases), "numerics.json")
