"""Reliability: separation in fits, hostile and degenerate input, numerical edge cases, no
mutation of user data, pickling, determinism and thread safety (issue #6)."""

from __future__ import annotations

import pickle
import threading
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import special

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass import links as L
from glmclass.numerics import separation as separation_module

DATA = Path(__file__).resolve().parent / "reference" / "data"
BINARY_LINKS = L.registered(within=(0, 1))
LINK_IDS = [lk.name for lk in BINARY_LINKS]


def read(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv", keep_default_na=False, na_values=[""])


ENDO = read("endometrial")


def binomial(link):
    return gc.families.Binomial(link=link)


def record(fn):
    """Run ``fn`` and return (result, list of warnings issued)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, caught


def glmclass_warnings(caught):
    return [w for w in caught if issubclass(w.category, gc.GlmclassWarning)]


# --- separation in fits --------------------------------------------------------------------------

@pytest.mark.parametrize("link", BINARY_LINKS, ids=LINK_IDS)
def test_endometrial_one_separation_warning_per_fit(link):
    model = gcf.glm("HG ~ NV + PI + EH", ENDO, family=binomial(link))
    res, caught = record(model.fit)
    ours = glmclass_warnings(caught)
    assert [w.category for w in ours] == [gc.SeparationWarning]  # one, and no ConvergenceWarning
    text = str(ours[0].message)
    assert "NV" in text and "BayesLogit" in text and "PI" not in text
    assert ours[0].filename == __file__  # points at the user's call
    sep = res.separation
    assert sep.separated and sep.kind == "quasi-complete" and sep.columns == (1,)
    np.testing.assert_array_equal(sep.directions, [0, 1, 0, 0])
    assert "NV (+inf)" in str(res.summary())


def test_endometrial_finite_estimates_match_r():
    # R: glm(HG ~ NV + PI + EH, binomial) on brglm2::endometrial (README of tests/reference)
    res, _ = record(gcf.logit("HG ~ NV + PI + EH", ENDO).fit)
    np.testing.assert_allclose(res.params[["Intercept", "PI", "EH"]],
                               [4.30452, -0.04218, -2.90261], atol=5e-6)
    assert res.deviance == pytest.approx(55.393, abs=5e-4)
    assert res.params["NV"] > 15 and res.bse["NV"] > 1e3


@pytest.mark.parametrize("method", ["irls", "newton"])
def test_on_separation_raise(method):
    with pytest.raises(gc.PerfectSeparationError, match="NV"):
        gcf.probit("HG ~ NV + PI + EH", ENDO).fit(method=method, on_separation="raise")
    assert issubclass(gc.PerfectSeparationError, gc.GlmclassError)


def test_on_separation_ignore_and_bad_value():
    res, caught = record(lambda: gcf.logit("HG ~ NV + PI + EH", ENDO).fit(on_separation="ignore"))
    assert not glmclass_warnings(caught) and res.separation is None
    assert "separation" not in str(res.summary()).lower()  # no note
    with pytest.raises(ValueError, match="on_separation"):
        gcf.logit("HG ~ NV + PI + EH", ENDO).fit(on_separation="error")


@pytest.mark.parametrize("link", BINARY_LINKS, ids=LINK_IDS)
@pytest.mark.parametrize("case", ["spector", "birthwt", "menarche", "ucb"])
def test_no_separation_reported_on_overlapping_real_data(case, link):
    fam = binomial(link)
    if case == "spector":
        model = gcf.glm("GRADE ~ GPA + TUCE + PSI", read("spector"), family=fam)
    elif case == "birthwt":
        model = gcf.glm("low ~ age + lwt + C(race) + smoke", read("birthwt"), family=fam)
    elif case == "menarche":
        m = read("menarche")
        model = gcf.glm("I(Menarche / Total) ~ Age", m, family=fam, var_weights=m.Total)
    else:
        u = read("ucb")
        model = gcf.glm("admitted ~ Gender + Dept", u, family=fam, freq_weights=u.Freq)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.GlmclassWarning)
        res = model.fit(maxiter=100)
    assert res.converged and res.separation is not None and not res.separation.separated


def test_complete_separation_real_data_iris():
    iris = read("iris")
    res, caught = record(lambda: gcf.logit("I(Species == 'setosa') ~ Petal_Length", iris).fit())
    assert [w.category for w in glmclass_warnings(caught)] == [gc.SeparationWarning]
    assert res.separation.kind == "complete"
    assert "Petal_Length (-inf)" in str(caught[0].message)


def test_separated_factor_level_and_aliased_column():
    bw = read("birthwt").assign(ftv_copy=lambda d: d.ftv)
    res, caught = record(lambda: gcf.logit("low ~ age + C(ftv) + ftv_copy", bw).fit())
    cats = [w.category for w in glmclass_warnings(caught)]
    assert cats == [gc.RankDeficientWarning, gc.SeparationWarning]
    sep = res.separation
    names = list(res.params.index)
    assert [names[j] for j in sep.columns] == ["C(ftv)[T.6]"]
    assert sep.directions[names.index("ftv_copy")] == 0  # aliased: NaN, not infinite


def test_other_families_and_log_link_are_not_checked():
    q = read("quine")
    res = gcf.glm("Days ~ Eth + Sex", q, family=gc.families.Poisson()).fit()
    assert res.separation is None
    df = pd.DataFrame({"y": [0, 0, 1, 1, 0, 1.0], "x": [0.1, 0.2, 0.3, 0.4, 0.25, 0.35]})
    assert gcf.glm("y ~ x", df, family=binomial(L.Log())).fit(start_params=[-1.5, 1]) \
        .separation is None


def test_large_designs_run_the_lp_only_on_signs_of_separation(monkeypatch):
    calls = []
    real = separation_module.detect_separation

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(separation_module, "detect_separation", counting)
    rng = np.random.default_rng(11)
    n = 30_000
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ [0.2, 0.5, -0.5, 0.3]))).astype(float)
    res = gc.Logit(y, X).fit()
    assert calls == [] and not res.separation.separated
    Xs = np.column_stack([X, np.where(y > 0, 1.0, 0.0) * rng.random(n)])  # quasi-separating
    res, caught = record(gc.Logit(y, Xs).fit)
    assert calls == [1] and res.separation.columns == (4,)
    assert [w.category for w in glmclass_warnings(caught)] == [gc.SeparationWarning]
    # a looser tol stops the divergence earlier: still detected
    res, caught = record(lambda: gc.Logit(y, Xs).fit(tol=1e-6))
    assert calls == [1, 1] and res.separation.columns == (4,)


def test_bayeslogit_keeps_separated_estimates_finite():
    res, caught = record(lambda: gc.BayesLogit.from_formula("HG ~ NV + PI + EH", ENDO,
                                                            prior_scale=2.5).fit())
    assert not any(w.category is gc.SeparationWarning for w in caught)
    assert np.all(np.isfinite(res.params)) and res.params["NV"] < 10


def test_mnlogit_reports_separation_once():
    iris = read("iris")
    _, caught = record(lambda: gc.MNLogit.from_formula("Species ~ Petal_Length", iris).fit())
    assert [w.category for w in glmclass_warnings(caught)].count(gc.SeparationWarning) == 1


# --- bad input -----------------------------------------------------------------------------------

RNG = np.random.default_rng(6)
N = 40
X = np.column_stack([np.ones(N), RNG.normal(size=N)])
Y = (RNG.random(N) < 0.5).astype(float)
DF = pd.DataFrame({"y": Y, "x": X[:, 1], "g": RNG.choice(["a", "b", "c"], N)})


def with_value(a, row, value, col=None):
    a = np.array(a, dtype=float)
    if col is None:
        a[row] = value
    else:
        a[row, col] = value
    return a


BAD_INPUT = {
    "nan in exog, missing='raise'": (lambda: gc.Logit(Y, with_value(X, 3, np.nan, 1),
                                                      missing="raise"), "'x2'"),
    "inf in exog": (lambda: gc.Logit(Y, with_value(X, 3, np.inf, 1)), "'x2'"),
    "nan in endog, missing='raise'": (lambda: gc.Logit(with_value(Y, 2, np.nan), X,
                                                       missing="raise"), "endog"),
    "inf in endog": (lambda: gc.Logit(with_value(Y, 2, np.inf), X), "response 'y'"),
    "nan in formula data, missing='raise'": (
        lambda: gcf.logit("y ~ x", DF.assign(x=with_value(DF.x, 0, np.nan)), missing="raise"),
        "'x'"),
    "inf in formula data": (lambda: gcf.logit("y ~ x", DF.assign(x=with_value(DF.x, 0, np.inf))),
                            "'x'"),
    "response out of range": (lambda: gc.Logit(2 * Y, X), "response 'y' has the value 2"),
    "negative response": (lambda: gc.Logit(Y - 1, X), "value -1"),
    "three numeric classes": (lambda: gc.Logit(np.arange(N) % 3, X), "MNLogit"),
    "three labels": (lambda: gc.Logit(np.array(list("abcd") * 10), X), "MNLogit"),
    "single class": (lambda: gc.Logit(np.ones(N), X), "single class"),
    "single label": (lambda: gcf.logit("g ~ x", DF.assign(g="a")), "single class"),
    "single class with positive weight": (
        lambda: gc.Logit(Y, X, freq_weights=Y.astype(float)), "only successes .* positive weight"),
    "mismatched lengths": (lambda: gc.Logit(Y[:-1], X), "endog has 39 rows but exog has 40"),
    "mismatched weights": (lambda: gc.Logit(Y, X, freq_weights=np.ones(5)), "freq_weights"),
    "mismatched formula weights": (lambda: gcf.logit("y ~ x", DF, var_weights=np.ones(5)),
                                   "var_weights"),
    "negative weights": (lambda: gc.Logit(Y, X, freq_weights=-np.ones(N)), "freq_weights"),
    "infinite weights": (lambda: gc.Logit(Y, X, var_weights=with_value(np.ones(N), 0, np.inf)),
                         "var_weights"),
    "nan weights, missing='raise'": (
        lambda: gc.Logit(Y, X, freq_weights=with_value(np.ones(N), 0, np.nan), missing="raise"),
        "freq_weights"),
    "all weights zero": (lambda: gc.Logit(Y, X, freq_weights=np.zeros(N)), "freq_weights"),
    "string weights": (lambda: gc.Logit(Y, X, freq_weights=np.array(["a"] * N)), "freq_weights"),
    "2-d weights": (lambda: gc.Logit(Y, X, var_weights=np.ones((N, 2))), "var_weights"),
    "infinite offset": (lambda: gc.Logit(Y, X, offset=with_value(np.zeros(N), 1, -np.inf)),
                        "offset"),
    "string array exog": (lambda: gc.Logit(Y, np.array([["a", "1"]] * N)), "exog"),
    "object array with a string": (lambda: gc.Logit(Y, np.array([[1.0, "b"]] * N, dtype=object)),
                                   "exog column 1"),
    "string DataFrame column": (lambda: gc.Logit(Y, DF[["x", "g"]]), "'g'"),
    "ragged exog": (lambda: gc.Logit(Y[:2], [[1.0, 2.0], [1.0]]), "exog"),
    "3-d exog": (lambda: gc.Logit(Y, np.ones((N, 2, 2))), "exog"),
    "3-column endog": (lambda: gc.Logit(np.column_stack([Y, Y, Y]), X), "endog"),
    "endog None": (lambda: gc.Logit(None, X), "endog"),
    "empty DataFrame": (lambda: gcf.logit("y ~ x", DF.iloc[:0]), "empty"),
    "empty arrays": (lambda: gc.Logit(np.empty(0), np.empty((0, 2))), "no rows"),
    "every row missing": (lambda: gc.Logit(np.full(N, np.nan), X), "complete rows"),
    "formula names a missing column": (lambda: gcf.logit("y ~ x + zz", DF), "'zz'"),
    "formula names a missing response": (lambda: gcf.logit("yy ~ x", DF), "'yy'"),
    "formula without a response": (lambda: gcf.logit("~ x", DF), "response"),
    "missing= misspelt": (lambda: gc.Logit(Y, X, missing="omit"), "missing"),
    "method": (lambda: gc.Logit(Y, X).fit(method="bfgs"), "method"),
    "information": (lambda: gc.Logit(Y, X).fit(information="fisher"), "information"),
    "maxiter": (lambda: gc.Logit(Y, X).fit(maxiter=0), "maxiter"),
    "tol": (lambda: gc.Logit(Y, X).fit(tol=-1.0), "tol"),
    "start_params length": (lambda: gc.Logit(Y, X).fit(start_params=[0.0]), "start_params"),
    "start_params nan": (lambda: gc.Logit(Y, X).fit(start_params=[np.nan, 0]), "start_params"),
    "predict: wrong number of columns": (lambda: gc.Logit(Y, X).fit().predict(np.ones((2, 3))),
                                         "exog has 3 columns"),
    "predict: which": (lambda: gc.Logit(Y, X).fit().predict(which="probs"), "which"),
    "conf_int alpha": (lambda: gc.Logit(Y, X).fit().conf_int(alpha=1.5), "alpha"),
    "prior_scale zero": (lambda: gc.BayesLogit(Y, X, prior_scale=0.0), "prior_scale"),
    "prior_scale negative for one column": (lambda: gc.BayesLogit(Y, X, prior_scale=[1.0, -2.0]),
                                            "prior_scale of 'x2'"),
    "QDA class too small": (
        lambda: gc.QDA(np.array(["a"] * 2 + ["b"] * (N - 2)), RNG.normal(size=(N, 3))).fit(),
        "class 'a' has 2"),
    "negative Poisson response": (lambda: gc.GLM(Y - 1, X, family=gc.families.Poisson()),
                                  "response 'y'.*non-negative"),
    "MNLogit single class": (lambda: gc.MNLogit(np.array(["a"] * N), X), "single class"),
    "MNLogit reference level": (lambda: gc.MNLogit(DF.g, X, ref="z"), "ref"),
}


@pytest.mark.parametrize("make, match", BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_input_raises_a_valueerror_naming_the_culprit(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_unseen_level_and_missing_column_at_predict_time():
    res = gcf.logit("y ~ x + C(g)", DF).fit()
    with pytest.raises(ValueError, match=r"column 'g' has level 'zz'"):
        res.predict(pd.DataFrame({"x": [0.0], "g": ["zz"]}))
    with pytest.raises(ValueError, match=r"lack the column 'g'"):
        res.predict(pd.DataFrame({"x": [0.0]}))


def test_type_errors_name_the_argument():
    with pytest.raises(TypeError, match="DataFrame"):
        gcf.logit("y ~ x", {"y": Y, "x": X[:, 1]})
    with pytest.raises(TypeError, match="family"):
        gc.GLM(Y, X, family="binomial")
    with pytest.raises(TypeError, match="formula"):
        gcf.logit(3, DF)
    assert issubclass(gc.DataError, ValueError)


@pytest.mark.parametrize("extra, name, why", [
    (np.ones(N), "x3", "linear combination"),
    (np.zeros(N), "x3", "all zero"),
    (X[:, 1], "x3", "linear combination"),
    (2 * X[:, 1] - 3, "x3", "linear combination"),
])
def test_constant_zero_duplicated_collinear_columns_are_aliased(extra, name, why):
    with pytest.warns(gc.RankDeficientWarning, match=f"'{name}'.*{why}"):
        res = gc.Logit(Y, np.column_stack([X, extra])).fit()
    assert np.isnan(res.params[name]) and res.aliased == [name]
    ref = gc.Logit(Y, X).fit()
    np.testing.assert_allclose(res.params[["x1", "x2"]], ref.params, rtol=1e-10)
    np.testing.assert_allclose(res.bse[["x1", "x2"]], ref.bse, rtol=1e-8)


def test_more_columns_than_rows():
    rng = np.random.default_rng(3)
    Xw = np.column_stack([np.ones(6), rng.normal(size=(6, 8))])
    res, caught = record(lambda: gc.Logit(np.array([0, 1, 0, 1, 1, 0.0]), Xw).fit())
    cats = [w.category for w in glmclass_warnings(caught)]
    assert cats == [gc.RankDeficientWarning, gc.SeparationWarning]  # 6 free parameters: saturated
    assert int(res.params.notna().sum()) == 6 and res.separation.kind == "complete"


def test_zero_weight_rows_are_excluded_not_dropped_from_the_index():
    w = np.r_[np.zeros(5), np.ones(N - 5)]
    a = gc.Logit(Y, X, freq_weights=w).fit()
    b = gc.Logit(Y[5:], X[5:]).fit()
    np.testing.assert_allclose(a.params, b.params, rtol=1e-10)
    assert a.nobs == b.nobs == N - 5 and a.llf == pytest.approx(b.llf, rel=1e-12)
    assert len(a.fittedvalues) == N


# --- numerical edge cases ------------------------------------------------------------------------

def test_columns_on_scales_1e_minus_8_and_1e8():
    rng = np.random.default_rng(8)
    n = 400
    Z = np.column_stack([np.ones(n), rng.normal(size=n), rng.normal(size=n)])
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + Z[:, 1] - Z[:, 2])))).astype(float)
    scale = np.array([1.0, 1e-8, 1e8])
    Xs = Z * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gc.Logit(y, Xs).fit()
        ref = gc.Logit(y, Z).fit()
    assert res.converged and not res.separation.separated
    np.testing.assert_allclose(res.params * scale, ref.params, rtol=1e-9)
    np.testing.assert_allclose(res.bse * scale, ref.bse, rtol=1e-7)
    sm_ref = sm.Logit(y, Z).fit(disp=0, method="newton", tol=1e-12)
    np.testing.assert_allclose(res.params * scale, sm_ref.params, rtol=1e-8)
    assert res.llf == pytest.approx(sm_ref.llf, rel=1e-12)


def exact_mle(y, Xe, link, off):
    """Maximum-likelihood estimate by scipy's BFGS on the exact log-likelihood, with the score
    sum_i (y_i dlog mu_i - (1 - y_i) dlog(1 - mu_i)) x_i from the links' tail-safe logs."""
    from scipy.optimize import minimize

    def nll(b):
        eta = off + Xe @ b
        return -np.sum(y * link.log_inverse(eta) + (1 - y) * link.log_inverse_c(eta))

    def grad(b):
        eta = off + Xe @ b
        lme = link.log_mu_eta(eta)
        d = (y * np.exp(lme - link.log_inverse(eta))
             - (1 - y) * np.exp(lme - link.log_inverse_c(eta)))
        return -Xe.T @ d

    res = minimize(nll, np.zeros(Xe.shape[1]), jac=grad, method="BFGS", options={"gtol": 1e-9})
    return res.x


@pytest.mark.parametrize("link", [L.Logit(), L.Probit()], ids=["logit", "probit"])
def test_linear_predictor_up_to_1e3(link):
    # offsets of +-1000, two rows contradicting them: P(y | eta) far below 1e-300, finite llf
    rng = np.random.default_rng(9)
    n = 200
    Xe = np.column_stack([np.ones(n), rng.normal(size=n)])
    y = (rng.random(n) < 0.5).astype(float)
    off = np.zeros(n)
    off[:10], off[10:20] = 1e3, -1e3
    y[:10], y[10:20] = 1, 0
    y[0], y[10] = 0, 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        res = gc.GLM(y, Xe, family=binomial(link), offset=off).fit(start_params=np.zeros(2))
        pred = res.predict(np.array([[1, 1e3], [1, -1e3]]))
        lin = res.predict(np.array([[1, 1e3], [1, -1e3]]), which="linear")
    ours = glmclass_warnings(caught)
    assert np.isfinite(res.llf) and np.isfinite(res.deviance) and np.all(np.isfinite(res.bse))
    eta = off + Xe @ res.params.to_numpy()
    sgn = 2 * y - 1
    exact = (special.log_expit(sgn * eta) if link.name == "logit"
             else special.log_ndtr(sgn * eta)).sum()
    assert exact < -900 and res.llf == pytest.approx(exact, rel=1e-12)
    if res.converged:  # at the maximum, or ...
        assert not ours
        np.testing.assert_allclose(res.params, exact_mle(y, Xe, link, off), rtol=1e-6)
    else:  # ... said why not, with the iteration history
        assert [type(w.message) for w in ours] == [gc.ConvergenceWarning]
        assert ours[0].message.history == res.fit_history
    assert np.all((pred >= 0) & (pred <= 1))
    np.testing.assert_allclose(lin, np.array([[1, 1e3], [1, -1e3]]) @ res.params.to_numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("link", BINARY_LINKS, ids=LINK_IDS)
def test_probabilities_within_1e_minus_300_of_0_and_1(link):
    rng = np.random.default_rng(10)
    n = 200
    Xe = np.column_stack([np.ones(n), rng.normal(size=n)])
    y = (rng.random(n) < 0.5).astype(float)
    lo = float(link.link(np.array(1e-300)))
    hi = float(link.link(np.array(1 - 1e-16)))
    if link.name in ("logit", "probit", "cauchit"):
        hi = -lo
    if link.name == "cauchit":  # mu = 1e-300 needs eta = -3e299: stay at |eta| = 1e3
        lo, hi = -1e3, 1e3
    off = np.zeros(n)
    off[:10], off[10:20] = hi, lo
    y[:10], y[10:20] = 1, 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        res = gc.GLM(y, Xe, family=binomial(link), offset=off).fit(start_params=np.zeros(2))
    assert not glmclass_warnings(caught)
    assert res.converged and np.isfinite(res.llf) and np.all(np.isfinite(res.bse))
    assert np.all((res.fittedvalues >= 0) & (res.fittedvalues <= 1))
    if link.name != "cauchit":  # rows whose outcome is certain to 1e-300 carry no information
        sub = gc.GLM(y[20:], Xe[20:], family=binomial(link)).fit()
        np.testing.assert_allclose(res.params, sub.params, rtol=1e-6)
        assert res.llf == pytest.approx(sub.llf, rel=1e-9, abs=1e-9)
    else:
        np.testing.assert_allclose(res.params, exact_mle(y, Xe, link, off), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("link", BINARY_LINKS, ids=LINK_IDS)
def test_extreme_offsets_with_default_start(link):
    # the default start ignores the offset (as R's glm.fit): the fit must converge or say so
    rng = np.random.default_rng(12)
    n = 200
    Xe = np.column_stack([np.ones(n), rng.normal(size=n)])
    y = (rng.random(n) < 0.5).astype(float)
    off = np.zeros(n)
    off[:10], off[10:20] = 30.0, -30.0
    y[:10], y[10:20] = 1, 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        res = gc.GLM(y, Xe, family=binomial(link), offset=off).fit()
    ours = glmclass_warnings(caught)
    assert np.isfinite(res.llf) and np.all(np.isfinite(res.params))
    if res.converged:
        assert not ours
        np.testing.assert_allclose(res.params, exact_mle(y, Xe, link, off), rtol=1e-5, atol=1e-6)
    else:
        assert [type(w.message) for w in ours] == [gc.ConvergenceWarning]
        assert ours[0].message.history == res.fit_history


def test_non_convergence_warning_carries_the_history():
    res, caught = record(lambda: gcf.logit("GRADE ~ GPA + TUCE + PSI", read("spector"))
                         .fit(maxiter=2))
    ours = glmclass_warnings(caught)
    assert [w.category for w in ours] == [gc.ConvergenceWarning]
    w = ours[0].message
    assert len(w.history) == 2 == res.n_iter and w.history == res.fit_history
    assert f"{w.history[-1]:.6g}" in str(w) and "maxiter" in str(w)
    assert not res.converged and not res.separation.separated


@pytest.mark.parametrize("y, Xt, separated", [
    ([0, 1], [[1.0], [1.0]], False),             # N = 2, p = 1
    ([0, 1], [[1.0, 0.0], [1.0, 1.0]], True),    # N = p = 2: saturated, separated
    ([0, 1, 0], [[1, 0], [1, 1], [1, 2.0]], False),  # N = 3, p = N - 1
    ([1, 0], [[0.5], [1.5]], False),             # no intercept, N = 2, p = N - 1
])
def test_tiny_samples(y, Xt, separated):
    res, caught = record(lambda: gc.Logit(np.array(y, float), np.array(Xt)).fit())
    assert res.separation.separated == separated
    if not separated:
        assert not glmclass_warnings(caught) and res.converged
        assert np.all(np.isfinite(res.params)) and np.isfinite(res.llf)
        assert res.df_resid == len(y) - len(Xt[0])


@pytest.mark.filterwarnings("ignore::glmclass.DataWarning")  # 10**7 / 12 trials: not whole
def test_ten_million_rows_of_a_repeated_pattern_as_frequency_weights():
    Xp = np.array([[1, 0.0], [1, 1], [1, 2], [1, 0], [1, 1], [1, 2]])
    yp = np.array([0, 0, 0, 1, 1, 1.0])
    wp = np.array([3, 2, 2, 1, 2, 2.0])
    reps = 10**7 / wp.sum()
    big = gc.Logit(yp, Xp, freq_weights=wp * reps).fit()
    assert big.nobs == pytest.approx(1e7)
    # the same counts as proportions of trials (var_weights) ...
    totals = wp[:3] + wp[3:]
    props = gc.GLM(wp[3:] / totals, Xp[:3], var_weights=totals * reps).fit()
    np.testing.assert_allclose(big.params, props.params, rtol=1e-10)
    np.testing.assert_allclose(big.bse, props.bse, rtol=1e-10)
    # ... and 600,000 expanded rows: params equal, bse scale as sqrt(nobs), llf as nobs
    k = 100_000
    idx = np.repeat(np.arange(6), (wp * k / 2).astype(int))
    rows = gc.Logit(yp[idx], Xp[idx]).fit()
    ratio = big.nobs / rows.nobs
    np.testing.assert_allclose(big.params, rows.params, rtol=1e-9)
    np.testing.assert_allclose(big.bse * np.sqrt(ratio), rows.bse, rtol=1e-9)
    assert big.llf == pytest.approx(rows.llf * ratio, rel=1e-10)


# --- no mutation, pickling, determinism, threads -------------------------------------------------

def snapshot(obj):
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return obj.copy(deep=True), obj.index.copy()
    return np.array(obj, copy=True), np.asarray(obj).flags.writeable


def assert_unchanged(before, obj):
    if isinstance(obj, pd.DataFrame):
        pd.testing.assert_frame_equal(obj, before[0])
    elif isinstance(obj, pd.Series):
        pd.testing.assert_series_equal(obj, before[0])
    else:
        np.testing.assert_array_equal(obj, before[0])
        assert np.asarray(obj).flags.writeable == before[1]


@given(
    hnp.arrays(np.float64, st.tuples(st.integers(8, 30), st.integers(1, 3)),
               elements=st.floats(-5, 5).map(lambda v: round(v, 6)) | st.just(np.nan)),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_inputs_are_never_modified(Xr, seed, read_only):
    rng = np.random.default_rng(seed)
    n = Xr.shape[0]
    y = rng.integers(0, 2, n).astype(float)
    y[:2] = [0, 1]
    w = rng.integers(0, 3, n).astype(float)
    off = rng.normal(size=n) * 0.1
    if read_only:
        for a in (Xr, y, w, off):
            a.flags.writeable = False
    df = pd.DataFrame(Xr, columns=[f"c{j}" for j in range(Xr.shape[1])]).assign(
        y=y, g=rng.choice(["u", "v"], n))
    objs = [Xr, y, w, off, df]
    before = [snapshot(o) for o in objs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GlmclassWarning)
        try:
            res = gc.Logit(y, Xr, freq_weights=w, offset=off).fit(maxiter=10)
            res.predict(Xr)
            res.predict(Xr, which="linear")
        except ValueError:
            pass  # degenerate draws (every row missing or weightless) are rejected: fine here
        try:
            res = gcf.logit("y ~ c0 + C(g)", df, freq_weights=w).fit(maxiter=10)
            res.predict(df)
            res.summary()
        except ValueError:
            pass
    for b, o in zip(before, objs, strict=True):
        assert_unchanged(b, o)


def user_transform(x):
    return np.log1p(np.abs(x))


def _fits():
    bw = read("birthwt")
    iris = read("iris")
    out = {
        "formula": gcf.logit("low ~ age + user_transform(lwt) + C(race) + center(age)",
                             bw, eval_env={"user_transform": user_transform}).fit(),
        "arrays": gc.Probit(Y, X).fit(),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GlmclassWarning)
        out["separated"] = gcf.logit("HG ~ NV + PI + EH", ENDO).fit()
        out["mnlogit"] = gc.MNLogit.from_formula("Species ~ Sepal_Length + Sepal_Width",
                                                 iris).fit()
    out["lda"] = gc.LDA.from_formula("Species ~ Sepal_Length + Petal_Width", iris).fit()
    out["qda"] = gc.QDA.from_formula("Species ~ Sepal_Length + Petal_Width", iris).fit()
    out["bayes"] = gc.BayesLogit.from_formula("HG ~ NV + PI + EH", ENDO, prior_scale=2.5).fit()
    return out


def _eq(a, b):
    if isinstance(a, (pd.DataFrame, pd.Series)):
        return a.equals(b)
    return np.array_equal(a, b, equal_nan=True)


@pytest.mark.filterwarnings("ignore::glmclass.RankDeficientWarning")
def test_results_pickle_round_trip():
    bw, iris = read("birthwt"), read("iris")
    new = {"formula": bw.iloc[:7], "separated": ENDO.iloc[:5], "mnlogit": iris.iloc[::30],
           "lda": iris.iloc[::30], "qda": iris.iloc[::30], "bayes": ENDO.iloc[:5]}
    for name, res in _fits().items():
        back = pickle.loads(pickle.dumps(res))
        assert type(back) is type(res)
        for attr in ("params", "bse", "means", "priors"):
            if hasattr(res, attr):
                assert _eq(getattr(res, attr), getattr(back, attr)), (name, attr)
        assert str(res.summary()) == str(back.summary()), name
        if name == "arrays":
            assert _eq(res.predict(X[:4]), back.predict(X[:4]))
        else:
            assert _eq(res.predict(new[name]), back.predict(new[name])), name
        if hasattr(res, "separation"):
            assert repr(res.separation) == repr(back.separation)


def _numbers(res):
    return [res.params.to_numpy(), res.bse.to_numpy(), np.array([res.llf, res.deviance]),
            res.fittedvalues.to_numpy()]


@pytest.mark.filterwarnings("ignore::glmclass.RankDeficientWarning")
def test_fitting_is_deterministic_bit_for_bit():
    bw = read("birthwt")
    a = _numbers(gcf.probit("low ~ age + lwt + C(race) + smoke", bw).fit(method="newton"))
    b = _numbers(gcf.probit("low ~ age + lwt + C(race) + smoke", bw).fit(method="newton"))
    for u, v in zip(a, b, strict=True):
        assert u.tobytes() == v.tobytes()


def test_two_threads_fitting_at_once():
    bw = read("birthwt")
    rng = np.random.default_rng(5)
    n = 20_000
    Xb = np.column_stack([np.ones(n), rng.normal(size=(n, 4))])
    yb = (rng.random(n) < 1 / (1 + np.exp(-Xb @ [0.1, 1, -1, 0.5, 0]))).astype(float)
    jobs = [
        lambda: gcf.glm("low ~ age + lwt + C(race)", bw, family=binomial(L.CLogLog())).fit(),
        lambda: gc.Logit(yb, Xb).fit(method="newton"),
    ]
    serial = [_numbers(job()) for job in jobs]
    results: dict = {}
    barrier = threading.Barrier(2)

    def run(i):
        barrier.wait()
        results[i] = [_numbers(jobs[i]()) for _ in range(3)]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        for rep in results[i]:
            for u, v in zip(rep, serial[i], strict=True):
                np.testing.assert_allclose(u, v, rtol=1e-13, atol=0)


# --- when the exact separation test runs on large designs ---------------------------------------

def _large_cloglog(separate: bool, n: int = 20_000):
    rng = np.random.default_rng(7)
    x = rng.normal(size=n) * 2.0
    X = np.column_stack([np.ones(n), x])
    y = (rng.uniform(size=n) < -np.expm1(-np.exp(0.5 + 1.5 * x))).astype(float)
    if separate:
        y = (x > 0).astype(float)
    return y, X


def test_saturated_cloglog_without_separation_skips_the_lp(monkeypatch):
    """cloglog fitted values reach 1 within 1e-16 at eta > 3.6 on honest data: no LP for that."""
    y, X = _large_cloglog(separate=False)

    def boom(*args, **kwargs):
        raise AssertionError("the LP ran on a fit with no sign of separation")

    monkeypatch.setattr(separation_module, "detect_separation", boom)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gc.GLM(y, X, family=gc.families.Binomial(L.CLogLog())).fit()
    assert res.fittedvalues.max() > 1 - 1e-12
    assert not res.separation.separated and res.converged


def test_separated_large_design_runs_the_lp_and_names_the_column():
    y, X = _large_cloglog(separate=True)
    with pytest.warns(gc.SeparationWarning, match="x2"):
        res = gc.GLM(y, X, family=gc.families.Binomial(L.CLogLog())).fit()
    assert res.separation.kind == "complete" and res.separation.columns == (1,)


def test_designs_beyond_the_lp_cap_report_apparent_separation(monkeypatch):
    y, X = _large_cloglog(separate=True)
    monkeypatch.setattr(separation_module, "BINARY",
                        separation_module.SeparationPolicy(always_cells=0, max_cells=1_000))
    monkeypatch.setattr(separation_module, "detect_separation", None)  # must not be called
    with pytest.warns(gc.SeparationWarning, match="Apparent separation.*x2"):
        res = gc.Logit(y, X).fit()
    assert res.separation.kind == "apparent" and 1 in res.separation.columns
