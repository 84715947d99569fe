"""Cross-check the R reference values against independent Python computations.

Not a test module (pytest does not collect it); run it by hand after regenerating:

    python tests/reference/check_reference.py

It reads the CSVs with pandas exactly as the test-suite would, rebuilds the designs from
each case's patsy formula, and compares with statsmodels (GLM, MNLogit) and with small
numpy implementations (LDA/QDA posteriors and leave-one-out, Gaussian-prior MAP for the
bayesglm cases).  Prints the largest relative difference per quantity and exits non-zero
if any exceeds 1e-6.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import patsy
import statsmodels.api as sm
from scipy import stats

HERE = Path(__file__).resolve().parent
TOL = 1e-6
failures: list[str] = []


def load(name: str) -> dict:
    with open(HERE / f"{name}.json") as fh:
        return json.load(fh)


def data(name: str) -> pd.DataFrame:
    # keep_default_na=False: survey's Exer has the level "None", which pandas would
    # otherwise turn into NaN; the only missing-value marker in these files is "".
    return pd.read_csv(HERE / "data" / f"{name}.csv", keep_default_na=False, na_values=[""])


def rel(a, b) -> float:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    mask = ~(np.isnan(a) | np.isnan(b))
    den = np.maximum(np.abs(b[mask]), 1e-300)
    return float(np.max(np.abs(a[mask] - b[mask]) / den)) if mask.any() else 0.0


def report(case: str, what: str, got, ref, tol: float = TOL, scale=None) -> None:
    if scale is not None:  # absolute difference relative to a scale (for values near 0)
        err = float(np.max(np.abs(np.asarray(got, float) - np.asarray(ref, float)))) / scale
    else:
        err = rel(got, ref)
    flag = "" if err <= tol else "   <-- FAIL"
    print(f"  {case:32s} {what:22s} {err:9.2e}{flag}")
    if err > tol:
        failures.append(f"{case}: {what} {err:.2e}")


def add_derived(df: pd.DataFrame, derived: dict | None) -> pd.DataFrame:
    for new, expr in (derived or {}).items():
        if expr == "age":
            df[new] = df["age"]
        elif expr.startswith("paste(sp, sex"):
            df[new] = df["sp"] + "_" + df["sex"]
        else:
            raise ValueError(expr)
    return df


# ----------------------------------------------------------------------------- glm
def unaliased(case: dict, key: str) -> np.ndarray:
    return np.array([v for v, a in zip(case[key], case["aliased"], strict=True) if not a], float)


LINKS = {
    "logit": sm.families.links.Logit,
    "probit": sm.families.links.Probit,
    "cloglog": sm.families.links.CLogLog,
    "cauchit": sm.families.links.Cauchy,
    "loglog": sm.families.links.LogLog,
    "log": sm.families.links.Log,
    "identity": sm.families.links.Identity,
}
FAMILIES = {
    "binomial": sm.families.Binomial,
    "poisson": sm.families.Poisson,
    "gaussian": sm.families.Gaussian,
}

print("glm.json vs statsmodels GLM (Newton from IRLS start; SEs recomputed in numpy)")
for c in load("glm")["cases"]:
    df = add_derived(data(c["dataset"]), c.get("derived_columns"))
    y, X = patsy.dmatrices(c["patsy_formula"], df, return_type="dataframe")
    if sorted(X.columns) != sorted(c["patsy_coef_names"]):
        failures.append(f"{c['name']}: patsy names {list(X.columns)}")
    # patsy puts purely categorical terms first: index the columns by name, R's order
    names = [n for n, a in zip(c["patsy_coef_names"], c["aliased"], strict=True) if not a]
    X = X[names]
    fam = FAMILIES[c["family"]](link=LINKS[c["link"]]())
    kw = {}
    pw = np.ones(len(df))
    if c.get("offset") == "log(Holders)":
        kw["offset"] = np.log(df["Holders"])
    if c.get("weights"):
        pw = df[c["weights"]].to_numpy(float)
        kw["var_weights" if c["name"].startswith("menarche") else "freq_weights"] = pw
    model = sm.GLM(y.iloc[:, 0], X, family=fam, **kw)
    irls = model.fit(tol=1e-14, maxiter=200)
    res = model.fit(method="newton", start_params=irls.params, maxiter=100, tol=1e-14, disp=False)
    b = res.params.to_numpy()
    ref_coef = unaliased(c, "coef")
    report(c["name"], "coef", b, ref_coef)
    Xn = X.to_numpy()
    mu = res.fittedvalues.to_numpy()
    mu_eta = 1.0 / fam.link.deriv(mu)
    w = pw * mu_eta**2 / fam.variance(mu)
    cov = np.linalg.inv(Xn.T @ (Xn * w[:, None])) * res.scale
    ref_se = unaliased(c, "se_expected")
    ref_seo = unaliased(c, "se_observed")
    report(c["name"], "se_expected", np.sqrt(np.diag(cov)), ref_se)
    report(c["name"], "se_observed (newton)", res.bse, ref_seo)
    report(c["name"], "deviance", res.deviance, c["deviance"])
    if c["name"].startswith("menarche"):
        ll = stats.binom.logpmf(df["Menarche"], df["Total"], mu).sum()
    elif c["family"] == "gaussian":
        n, sig2 = len(mu), res.deviance / len(mu)
        ll = -0.5 * n * (np.log(2 * np.pi * sig2) + 1)
    else:
        ll = res.llf
    report(c["name"], "loglik", ll, c["loglik"])
    report(c["name"], "fitted_head", mu[:10], c["fitted_head"])
    yv = y.iloc[:, 0].to_numpy()
    pearson = np.sqrt(pw) * (yv - mu) / np.sqrt(fam.variance(mu))  # R: prior weights inside
    unit_dev = fam._resid_dev(yv, mu)  # statsmodels' unit deviance d(y, mu)
    devres = np.sign(yv - mu) * np.sqrt(np.maximum(pw * unit_dev, 0))
    report(c["name"], "pearson_head", pearson[:10], c["residuals_head"]["pearson"])
    report(c["name"], "deviance_resid_head", devres[:10], c["residuals_head"]["deviance"])

# ----------------------------------------------------------------------------- multinom
print("multinom.json vs statsmodels MNLogit")
for c in load("multinom")["cases"]:
    df = data(c["dataset"])
    resp = c["response"]
    df = df.dropna(subset=[resp] + [v.strip() for v in c["patsy_rhs"].split("+")])
    if c.get("weights"):
        df = df.loc[df.index.repeat(df[c["weights"]])].reset_index(drop=True)
    X = patsy.dmatrix(c["patsy_rhs"], df, return_type="dataframe")
    if list(X.columns) != c["patsy_coef_names"]:
        failures.append(f"{c['name']}: patsy names")
    codes = pd.Categorical(df[resp], categories=c["levels"]).codes
    res = sm.MNLogit(codes, X).fit(method="newton", maxiter=100, tol=1e-14, disp=False)
    report(c["name"], "coef", res.params.T.values, c["coef"])
    report(c["name"], "se", res.bse.T.values, c["se"])
    report(c["name"], "loglik", res.llf, c["loglik"])


# ----------------------------------------------------------------------------- discrim
def gauss_logdens(X, mu, cov):
    L = np.linalg.cholesky(cov)
    z = np.linalg.solve(L, (X - mu).T)
    return -0.5 * np.sum(z**2, axis=0) - np.sum(np.log(np.diag(L)))


def discrim_fit(X, g, K, kind, method, prior):
    n, p = X.shape
    means = np.array([X[g == k].mean(axis=0) for k in range(K)])
    if kind == "lda":
        R = X - means[g]
        cov = R.T @ R / (n - K if method == "moment" else n)
        covs = [cov] * K
    else:
        covs = []
        for k in range(K):
            R = X[g == k] - means[k]
            covs.append(R.T @ R / (len(R) - 1 if method == "moment" else len(R)))
    return means, covs, prior


def discrim_post(X, fit):
    means, covs, prior = fit
    ld = np.column_stack(
        [gauss_logdens(X, means[k], covs[k]) + np.log(prior[k]) for k in range(len(prior))]
    )
    ld -= ld.max(axis=1, keepdims=True)
    P = np.exp(ld)
    return P / P.sum(axis=1, keepdims=True)


print("discrim.json vs numpy plug-in Gaussian classifiers (posteriors, brute-force LOO)")
for c in load("discrim")["cases"]:
    df = add_derived(data(c["dataset"]), c.get("derived_columns"))
    X = df[c["features"]].to_numpy(float)
    g = pd.Categorical(df[c["response"]], categories=c["levels"]).codes
    K = len(c["levels"])
    counts = np.bincount(g, minlength=K)
    prior = np.array(c["prior_given"]) if "prior_given" in c else counts / len(g)
    report(c["name"], "prior", prior, c["prior"])
    fit = discrim_fit(X, g, K, c["kind"], c["method"], prior)
    report(c["name"], "means", fit[0], c["means"])
    P = discrim_post(X, fit)
    report(c["name"], "posterior_head10", P[:10], c["posterior_head10"], scale=1.0)
    report(c["name"], "posterior_colsum", P.sum(axis=0), c["posterior_colsum"])
    cls = np.array(c["levels"])[P.argmax(axis=1)]
    if list(cls) != c["class"]:
        failures.append(f"{c['name']}: class")
    if c["kind"] == "lda":  # LD scores: sign of each column is arbitrary
        S = np.array(c["scaling"])
        W = S.T @ fit[1][0] @ S  # scaling sphere-ises the within covariance
        report(c["name"], "scaling'W scaling = I", W, np.eye(len(W)), scale=1.0)
    cvP = np.empty((10, K))
    cvcls = []
    for i in range(len(g)):
        m = np.arange(len(g)) != i
        f_i = discrim_fit(X[m], g[m], K, c["kind"], c["method"], prior)
        pi = discrim_post(X[i : i + 1], f_i)[0]
        if i < 10:
            cvP[i] = pi
        cvcls.append(c["levels"][int(pi.argmax())])
    report(c["name"], "cv_posterior_head10", cvP, c["cv_posterior_head10"], scale=1.0)
    if cvcls != c["cv_class"]:
        failures.append(f"{c['name']}: cv_class")
        bad = [i for i, (a, b) in enumerate(zip(cvcls, c["cv_class"], strict=True)) if a != b]
        print("  cv_class differs at", bad)

# ----------------------------------------------------------------------------- bayesglm
print("bayesglm.json vs numpy Newton MAP (Gaussian prior, expected information)")
for c in load("bayesglm")["cases"]:
    df = data(c["dataset"])
    y, X = patsy.dmatrices(c["patsy_formula"], df, return_type="dataframe")
    if sorted(X.columns) != sorted(c["patsy_coef_names"]):
        failures.append(f"{c['name']}: patsy names")
    X = X[c["patsy_coef_names"]]
    y = y.iloc[:, 0].to_numpy()
    X = X.to_numpy()
    S = c["prior"]["scale"]
    if c["link"] == "logit":
        cdf, pdf = stats.logistic.cdf, stats.logistic.pdf
    else:
        cdf, pdf = stats.norm.cdf, stats.norm.pdf
    b = np.zeros(X.shape[1])
    for _ in range(100):
        eta = X @ b
        mu, me = cdf(eta), pdf(eta)
        V = mu * (1 - mu)
        grad = X.T @ ((y - mu) * me / V) - b / S**2
        H = X.T @ (X * (me**2 / V)[:, None]) + np.eye(len(b)) / S**2
        step = np.linalg.solve(H, grad)
        b = b + step
        if np.max(np.abs(step)) < 1e-15:
            break
    eta = X @ b
    mu, me = cdf(eta), pdf(eta)
    H = X.T @ (X * (me**2 / (mu * (1 - mu)))[:, None]) + np.eye(len(b)) / S**2
    report(c["name"], "coef", b, c["coef"])
    report(c["name"], "se", np.sqrt(np.diag(np.linalg.inv(H))), c["se"])
    ll = np.sum(y * np.log(mu) + (1 - y) * np.log1p(-mu))
    report(c["name"], "loglik_at_map", ll, c["loglik_at_map"])

print()
if failures:
    print("FAILURES:")
    for f in failures:
        print("  ", f)
    sys.exit(1)
print("all checks within", TOL)
