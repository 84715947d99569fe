## Reference values for Gaussian naive Bayes (issue 13), computed directly from the normal
## class-conditional densities (e1071 and klaR are not installed here; this is what both
## compute): p(x, k) = pi_k prod_j dnorm(x_j, mu_kj, sigma_kj).
##
## Run from the repository root:   Rscript tests/reference/r/naive_bayes.R
## (generate.R sources it at its end.) Reads tests/reference/data/{iris,crabs}.csv and writes
## tests/reference/naive_bayes.json. Deterministic: no random numbers.
##
## Fields per case: features, levels, counts, prior, prior_given, method ("mle": variances
## divided by N_k, as scikit-learn; "unbiased": by N_k - 1, as e1071's sd()), means and
## variances (levels x features), loglik_joint (sum ln p(x_n, class_n)), loglik_conditional
## (sum ln p(class_n | x_n)), df (parameters: (K - 1 unless the prior is given) + 2 K D), aic,
## bic, log_joint_head10 (rows x levels), posterior_head10, posterior_colsum, class (all rows).

source(file.path("tests", "reference", "r", "setup.R"), local = TRUE)

nb_case <- function(name, dataset, response, features, method = "mle", prior = NULL) {
  d <- read.csv(file.path(datadir, paste0(dataset, ".csv")), stringsAsFactors = FALSE,
                check.names = FALSE)
  y <- factor(d[[response]], levels = sort(unique(d[[response]]), method = "radix"))
  X <- as.matrix(d[, features])
  lev <- levels(y)
  counts <- as.vector(table(y))
  pri <- if (is.null(prior)) counts / sum(counts) else prior
  means <- t(sapply(lev, function(k) colMeans(X[y == k, , drop = FALSE])))
  vars <- t(sapply(lev, function(k) {
    Z <- sweep(X[y == k, , drop = FALSE], 2, colMeans(X[y == k, , drop = FALSE]))
    colSums(Z^2) / (sum(y == k) - (method == "unbiased"))
  }))
  lj <- sapply(seq_along(lev), function(k)
    log(pri[k]) + rowSums(dnorm(X, matrix(means[k, ], nrow(X), ncol(X), byrow = TRUE),
                                matrix(sqrt(vars[k, ]), nrow(X), ncol(X), byrow = TRUE),
                                log = TRUE)))
  mx <- apply(lj, 1, max)
  lse <- mx + log(rowSums(exp(lj - mx)))
  post <- exp(lj - lse)
  idx <- cbind(seq_len(nrow(X)), as.integer(y))
  df <- (if (is.null(prior)) length(lev) - 1 else 0) + 2 * length(lev) * ncol(X)
  ll <- sum(lj[idx])
  list(name = name, dataset = dataset, response = response, features = I(features),
       levels = I(lev), method = method, prior_given = !is.null(prior), counts = vec(counts),
       prior = vec(pri), means = mat(means), variances = mat(vars), loglik_joint = ll,
       loglik_conditional = sum(lj[idx] - lse), df = df, aic = -2 * ll + 2 * df,
       bic = -2 * ll + df * log(nrow(X)), log_joint_head10 = mat(lj[1:10, ]),
       posterior_head10 = mat(post[1:10, ]), posterior_colsum = vec(colSums(post)),
       class = I(lev[max.col(lj, ties.method = "first")]))
}

iris_x <- c("Sepal_Length", "Sepal_Width", "Petal_Length", "Petal_Width")
crabs_x <- c("FL", "RW", "CL", "CW", "BD")
cases <- list(
  nb_case("iris_mle", "iris", "Species", iris_x),
  nb_case("iris_unbiased", "iris", "Species", iris_x, method = "unbiased"),
  nb_case("crabs_mle_prior", "crabs", "sp", crabs_x, prior = c(0.7, 0.3)),
  nb_case("crabs_two_features", "crabs", "sp", c("CW", "BD"))
)

write_json(list(meta = list(generator = "tests/reference/r/naive_bayes.R",
                            R_version = R.version.string,
                            number_format = "shortest of %.15g/%.16g/%.17g; NA -> null"),
                cases = cases), "naive_bayes.json")
