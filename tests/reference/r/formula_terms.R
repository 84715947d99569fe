## R reference values for formula terms: two-column binomial responses (cbind), offset()
## terms and offset= arguments, and their predictions on new data (R evaluates both on
## newdata). Writes tests/reference/formula_terms.json.
##
## Run from the repository root:   Rscript tests/reference/r/formula_terms.R
## (generate.R sources it at its end). Base R only; deterministic.

options(warn = 1, stringsAsFactors = FALSE)
refdir <- file.path("tests", "reference")
datadir <- file.path(refdir, "data")
if (!dir.exists(datadir)) stop("run from the repository root (", datadir, " not found)")

## The JSON writer of generate.R (numbers with the shortest of 15/16/17 significant digits
## that reads back as the identical double).
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

vec <- function(x) I(unname(as.vector(x)))

## factors with levels in C-locale sorted order, as patsy sorts strings
read_sorted <- function(name) {
  d <- read.csv(file.path(datadir, paste0(name, ".csv")), na.strings = "")
  for (v in names(d)) if (is.character(d[[v]]))
    d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]]), method = "radix"))
  d
}

fit_summary <- function(fit) {
  s <- summary(fit)$coefficients
  list(names = I(rownames(s)), coef = vec(s[, 1]), bse = vec(s[, 2]),
       deviance = deviance(fit), null_deviance = fit$null.deviance,
       loglik = as.numeric(logLik(fit)), aic = AIC(fit), df_residual = fit$df.residual)
}

ctl <- glm.control(epsilon = 1e-14, maxit = 100)
cases <- list()

## --- binomial counts: cbind(successes, failures) ---------------------------------------
menarche <- read_sorted("menarche")
fit <- glm(cbind(Menarche, Total - Menarche) ~ Age, binomial, menarche, control = ctl)
new_ages <- data.frame(Age = c(10, 12.5, 13.25, 15))
cases$menarche_cbind <- c(fit_summary(fit), list(
  formula = "cbind(Menarche, Total - Menarche) ~ Age",
  new_age = vec(new_ages$Age),
  predict_response = vec(predict(fit, new_ages, type = "response")),
  predict_link = vec(predict(fit, new_ages, type = "link"))))

## proportions without the numbers of trials: R warns and fits a different likelihood
warned <- FALSE
prop <- withCallingHandlers(
  glm(Menarche / Total ~ Age, binomial, menarche, control = ctl),
  warning = function(w) {
    if (grepl("non-integer", conditionMessage(w))) warned <<- TRUE
    invokeRestart("muffleWarning")
  })
cases$menarche_proportion_no_trials <- c(fit_summary(prop), list(
  formula = "I(Menarche / Total) ~ Age", warned_non_integer = warned))

## --- Poisson counts with an offset: offset() term and offset= argument ------------------
ins <- read_sorted("insurance")
ins$District <- factor(ins$District, levels = c("1", "2", "3", "4"))
new <- ins[c(1, 7, 20, 33, 50, 64), ]
new$Holders <- c(10, 250, 1000, 3, 77, 5000)
fit_term <- glm(Claims ~ District + Group + Age + offset(log(Holders)), poisson, ins,
                control = ctl)
fit_arg <- glm(Claims ~ District + Group + Age, poisson, ins, offset = log(Holders),
               control = ctl)
for (nm in c("term", "arg")) {
  f <- if (nm == "term") fit_term else fit_arg
  cases[[paste0("insurance_offset_", nm)]] <- c(fit_summary(f), list(
    new_rows = vec(as.integer(rownames(new)) - 1L), new_holders = vec(new$Holders),
    predict_link = vec(predict(f, new, type = "link")),
    predict_response = vec(predict(f, new, type = "response"))))
}

write_json(list(meta = list(r_version = R.version.string,
                            glm_control = "glm.control(epsilon = 1e-14, maxit = 100)",
                            levels = "character columns as factors with C-locale sorted levels"),
                cases = cases), "formula_terms.json")
