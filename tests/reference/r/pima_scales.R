## Reference values for the prior-scale warning of BayesLogit(optimize_prior=True) (issue 26):
## the Pima Indians diabetes data of MASS (Pima.tr and Pima.te, 532 women), written to
## tests/reference/data/pima.csv, with the maximum-likelihood logit fit (R's glm) and the
## columns' standard deviations, whose ratio (glu against ped, about 90) is what the warning
## reports.
##
## Run from the repository root:   Rscript tests/reference/r/pima_scales.R
## (generate.R sources it at its end.) Writes tests/reference/data/pima.csv and
## tests/reference/pima_scales.json. Deterministic: no random numbers.
##
## Fields: formula, coef (glm, named by column, polished to the MLE), sd (sample SDs of the
## predictors, by column), sd_ratio (largest over smallest).

suppressPackageStartupMessages(library(MASS))
source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

pima <- rbind(Pima.tr, Pima.te)
pima$y <- as.integer(pima$type == "Yes")
pima$type <- NULL
write.csv(pima, file.path(datadir, "pima.csv"), row.names = FALSE, quote = FALSE)

formula <- "y ~ npreg + glu + bp + skin + bmi + ped + age"
fit <- glm(as.formula(formula), binomial, pima, epsilon = 1e-14)
for (i in 1:50) {
  old <- coef(fit)
  fit <- glm(as.formula(formula), binomial, pima, start = old, epsilon = 1e-14)
  if (max(abs(coef(fit) - old)) <= 1e-15 * max(1, max(abs(old)))) break
}
predictors <- c("npreg", "glu", "bp", "skin", "bmi", "ped", "age")
sds <- sapply(pima[predictors], sd)
out <- list(meta = list(generator = "tests/reference/r/pima_scales.R"), formula = formula, coef = as.list(coef(fit)), sd = as.list(sds),
            sd_ratio = max(sds) / min(sds))
write_json(out, "pima_scales.json")
