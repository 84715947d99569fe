## The JSON writer of tests/reference/generate.R, for the scripts in tests/reference/r/ that
## run on their own: numbers as the shortest of 15/16/17 significant digits that reads back as
## the identical double (jsonlite's digits = NA stops at 15), NA/NaN as null. An atomic vector
## of length 1 is a scalar unless wrapped in I(); a matrix is an array of rows; a named list is
## an object, an unnamed list an array.

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
mat <- function(x) { x <- as.matrix(x); dimnames(x) <- NULL; x }
## a data frame (or an emmeans summary) as a named list of columns: numbers as JSON arrays,
## the rest as strings
cols <- function(s) {
  s <- as.data.frame(s)
  out <- list()
  for (n in names(s)) {
    v <- s[[n]]
    out[[n]] <- if (is.numeric(v)) vec(v) else I(as.character(v))
  }
  out
}
