## What every reference writer starts with (sourced, local = TRUE, by the writers in this
## directory): R's warnings printed as they happen, the reference and data directories
## (refdir, datadir; the writers run from the repository root) and the JSON helpers.

options(warn = 1, stringsAsFactors = FALSE)
refdir <- file.path("tests", "reference")
datadir <- file.path(refdir, "data")
if (!dir.exists(datadir)) stop("run from the repository root (", datadir, " not found)")
source(file.path(refdir, "r", "json_writer.R"), local = TRUE)
