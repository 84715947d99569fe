## Writes the R-side datasets of tests/reference/data/ as CSV.
## Run from the repository root:  Rscript tests/reference/make_data.R
## (spector.csv comes from Python: make_spector.py; endometrial.csv is transcribed,
##  see README.md.)  Every file is checked to read back identically.
suppressPackageStartupMessages(library(MASS))

outdir <- file.path("tests", "reference", "data")
stopifnot(dir.exists(outdir))

## factors -> plain strings; dots in column names -> underscores (patsy-friendly)
plain <- function(df) {
  for (v in names(df)) if (is.factor(df[[v]])) df[[v]] <- as.character(df[[v]])
  names(df) <- gsub(".", "_", names(df), fixed = TRUE)
  rownames(df) <- NULL
  df
}

write_checked <- function(df, name) {
  df <- plain(df)
  path <- file.path(outdir, paste0(name, ".csv"))
  write.csv(df, path, row.names = FALSE, na = "")
  back <- read.csv(path, stringsAsFactors = FALSE, na.strings = "")
  for (v in names(df)) {
    a <- df[[v]]; b <- back[[v]]
    ok <- if (is.numeric(a)) isTRUE(all(is.na(a) == is.na(b))) &&
                             isTRUE(all(a[!is.na(a)] == b[!is.na(b)]))
          else identical(as.character(a), as.character(b))
    if (!ok) stop("column ", v, " of ", name, " does not round-trip")
  }
  cat(sprintf("wrote %s (%d rows, %d cols)\n", path, nrow(df), ncol(df)))
}

## birthwt: race 1/2/3 -> white/black/other
bw <- MASS::birthwt
bw$race <- c("white", "black", "other")[bw$race]
write_checked(bw[, c("low", "age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv", "bwt")],
              "birthwt")

write_checked(MASS::menarche[, c("Age", "Total", "Menarche")], "menarche")

ins <- MASS::Insurance   # Group and Age are ordered factors in R; written as labels
write_checked(ins[, c("District", "Group", "Age", "Holders", "Claims")], "insurance")

write_checked(MASS::quine, "quine")
write_checked(datasets::iris, "iris")
write_checked(MASS::crabs[, c("sp", "sex", "index", "FL", "RW", "CL", "CW", "BD")], "crabs")
write_checked(MASS::survey, "survey")
write_checked(MASS::housing[, c("Sat", "Infl", "Type", "Cont", "Freq")], "housing")

ucb <- as.data.frame(datasets::UCBAdmissions, stringsAsFactors = FALSE)
ucb$admitted <- as.integer(ucb$Admit == "Admitted")
write_checked(ucb[, c("Admit", "Gender", "Dept", "Freq", "admitted")], "ucb")
