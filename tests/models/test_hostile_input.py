"""Hostile input, round two (issue 10): each class of problem gets a correct answer or a clear
error naming the argument, column or level -- alignment, predict-by-name, offsets at predict
time, response labels, nullable dtypes, non-ASCII names, per-row arguments, magnitudes, dates,
sparse input, duplicated names -- and nothing the caller passed is modified."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import statsmodels.api as sm

import glmclass as gc
import glmclass.formula.api as gcf

RNG = np.random.default_rng(2024)
N = 240
DF = pd.DataFrame({"x": RNG.normal(size=N), "z": RNG.normal(size=N),
                   "g": RNG.choice(["a", "b", "c"], N), "w": RNG.integers(1, 4, N).astype(float),
                   "t": RNG.uniform(0.5, 2.0, N)})
DF["y"] = (RNG.uniform(size=N) < 1 / (1 + np.exp(-(0.5 + DF.x - 0.7 * DF.z)))).astype(int)
DF["k"] = RNG.choice(["p", "q", "r"], N)
X = DF[["x", "z"]].assign(const=1.0)


def close(a, b, rtol=1e-10):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol,
                               atol=1e-12)


# --- pandas objects are paired by label, never silently by position ---------------------------
def test_endog_and_exog_with_different_indexes_raise_naming_the_mismatch():
    shuffled = DF.y.sample(frac=1.0, random_state=0)
    with pytest.raises(ValueError, match="endog and the rows of the data have different indexes"):
        gc.Logit(shuffled, X)
    with pytest.raises(ValueError, match="different indexes"):
        gc.MNLogit(DF.k.set_axis(DF.index + 1), X)
    # statsmodels refuses the same pairing
    with pytest.raises(ValueError):
        sm.Logit(shuffled, X)
    aligned = gc.Logit(shuffled.reindex(X.index), X).fit()
    close(aligned.params, gc.Logit(DF.y, X).fit().params, 1e-14)
    by_position = gc.Logit(shuffled.to_numpy(), X).fit()  # the caller's explicit choice
    assert by_position.nobs == N


def test_weights_and_offsets_as_series_must_share_the_rows_index():
    w = DF.w.set_axis(DF.index[::-1])
    with pytest.raises(ValueError, match="freq_weights and the rows of the data have"):
        gc.Logit(DF.y, X, freq_weights=w)
    with pytest.raises(ValueError, match="offset and the rows"):
        gcf.logit("y ~ x", DF, offset=DF.t.set_axis(DF.index + 5))
    close(gcf.logit("y ~ x", DF, freq_weights=DF.w).fit().params,
          gcf.logit("y ~ x", DF, freq_weights=DF.w.to_numpy()).fit().params, 1e-14)


@pytest.mark.parametrize("model", [gc.Logit, gc.Probit, gc.BayesLogit, gc.MNLogit, gc.LDA])
def test_array_models_fit_on_a_dataframe_predict_new_dataframes_by_column_name(model):
    y = DF.k if model in (gc.MNLogit, gc.LDA) else DF.y
    exog = X if model is not gc.LDA else DF[["x", "z"]]
    res = model(y, exog).fit()
    new = exog.head(6)
    shuffled = new[list(reversed(new.columns))].assign(extra=1.0)
    close(res.predict(shuffled), res.predict(new), 1e-14)
    with pytest.raises(ValueError, match="lack the column 'x'.*matched by column name"):
        res.predict(new.drop(columns="x"))
    close(res.predict(new.to_numpy()), res.predict(new), 1e-14)  # arrays: by position


# --- offsets at prediction time ----------------------------------------------------------------
@pytest.mark.parametrize("model", [gc.Logit, gc.GLM, gc.BayesLogit])
def test_predict_with_an_offset_and_no_new_exog_uses_the_offset(model):
    res = model(DF.y, X).fit()
    off = np.linspace(-1, 1, N)
    eta = X.to_numpy() @ res.params.to_numpy() + off
    close(res.predict(offset=off, which="linear"), eta, 1e-12)
    assert not np.allclose(res.predict(offset=off), res.predict())
    with pytest.raises(ValueError, match="offset has 3 values but the data have 240 rows"):
        res.predict(offset=np.ones(3))


def test_mnlogit_predict_offset_in_sample_and_new():
    res = gc.MNLogit(DF.k, X).fit()
    off = np.full(N, 0.3)
    p = res.predict(offset=off)
    eta = X.to_numpy() @ res.params.to_numpy() + 0.3
    expected = np.column_stack([np.ones(N), np.exp(eta)])
    close(p, expected / expected.sum(axis=1, keepdims=True), 1e-10)
    with pytest.raises(ValueError, match="offset must be one-dimensional"):
        res.predict(X.head(4), offset=np.ones((4, 2)))


# --- the response ------------------------------------------------------------------------------
@pytest.mark.parametrize("model", [gc.Logit, gc.MNLogit, gc.LDA, gc.BayesLogit])
def test_complex_responses_are_refused(model):
    with pytest.raises(ValueError, match="complex"):
        model(DF.y.astype(complex), X if model is not gc.LDA else DF[["x", "z"]])


def test_labels_sort_as_values_not_as_text():
    labels = np.array([9, 10, 100])[RNG.integers(0, 3, N)]
    res = gc.MNLogit(labels, X).fit()
    assert res.model.levels == [9, 10, 100]  # as text: [10, 100, 9]
    lda = gc.LDA(labels.astype(float), DF[["x", "z"]]).fit()
    assert list(lda.priors.index) == [9.0, 10.0, 100.0]
    with pytest.raises(ValueError, match="mixes labels of different types"):
        gc.MNLogit(np.array([1, "a", 2.5] * 80, dtype=object), X)


def test_non_integer_binomial_successes_warn_as_r_does():
    y = np.where(DF.y == 1, 0.75, 0.25)
    with pytest.warns(gc.DataWarning, match="non-integer numbers of successes.*var_weights"):
        gc.Logit(y, X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.DataWarning)
        gc.Logit(y, X, var_weights=np.full(N, 4.0))  # 1 or 3 successes of 4: fine
        gc.Logit(DF.y, X)


# --- pandas nullable dtypes ----------------------------------------------------------------------
def _with_missing(dtype: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    data = DF.copy()
    if dtype in ("Float64", "Int64"):
        col = "x"
        data[col] = (data.x * 3).round().astype(dtype) if dtype == "Int64" else data.x.astype(dtype)
    elif dtype == "boolean":
        col = "x"
        data[col] = (data.x > 0).astype(dtype)
    else:
        col = "g"
        data[col] = data.g.astype(dtype)
    data.loc[[4, 17], col] = pd.NA
    plain = data.drop(index=[4, 17])
    plain[col] = plain[col].to_numpy(dtype=float if dtype in ("Float64", "Int64") else
                                      (bool if dtype == "boolean" else object))
    return data, plain


@pytest.mark.parametrize("dtype", ["Float64", "Int64", "boolean", "string[python]",
                                   "string[pyarrow]"])
def test_nullable_dtypes_work_in_formulas_with_na_rows_dropped(dtype):
    data, plain = _with_missing(dtype)
    before = data.copy()
    res = gcf.logit("y ~ x + g + z", data).fit()
    ref = gcf.logit("y ~ x + g + z", plain).fit()
    assert res.nobs == N - 2 and res.model.data.n_dropped == 2
    close(res.params, ref.params, 1e-12)
    assert list(res.params.index) == list(ref.params.index)
    pred = res.predict(data.head(20))
    assert pred.isna().sum() == 2 and pred.drop(index=[4, 17]).notna().all()
    close(pred.drop(index=[4, 17]), ref.predict(plain.head(18)), 1e-12)
    pd.testing.assert_frame_equal(data, before)


@pytest.mark.parametrize("dtype", ["Float64", "Int64", "boolean"])
def test_nullable_dtypes_work_in_arrays(dtype):
    data, plain = _with_missing(dtype)
    res = gc.Logit(data.y.astype("Int64"), data[["x", "z"]].assign(c=1.0)).fit()
    ref = gc.Logit(plain.y, plain[["x", "z"]].assign(c=1.0).astype(float)).fit()
    close(res.params, ref.params, 1e-12)


# --- non-ASCII column names ---------------------------------------------------------------------
def test_non_ascii_column_names():
    data = DF.rename(columns={"x": "größe", "z": "über"})
    res = gcf.logit("y ~ größe + über + C(g)", data).fit()
    back = pickle.loads(pickle.dumps(res))
    close(back.predict(data.head(5)), res.predict(data.head(5)), 0)
    new = data.head(3).assign(größe=[np.nan, 0.1, 0.2])
    assert res.predict(new).isna().tolist() == [True, False, False]
    holes = data.copy()
    holes.loc[2, "größe"] = np.nan
    with pytest.raises(ValueError, match=r"missing values in 'größe' \(1\)"):
        gcf.logit("y ~ größe + über", holes, missing="raise")


# --- per-row arguments --------------------------------------------------------------------------
def test_weights_by_column_name_or_scalar():
    by_name = gcf.logit("y ~ x + z", DF, freq_weights="w").fit()
    by_array = gcf.logit("y ~ x + z", DF, freq_weights=DF.w.to_numpy()).fit()
    close(by_name.params, by_array.params, 1e-14)
    assert by_name.nobs == DF.w.sum()
    scalar = gcf.logit("y ~ x + z", DF, freq_weights=2).fit()
    assert scalar.nobs == 2 * N
    close(scalar.params, gcf.logit("y ~ x + z", DF).fit().params, 1e-10)
    dot = gcf.logit("y ~ .", DF[["y", "x", "z", "w"]], freq_weights="w").fit()
    assert list(dot.params.index) == ["Intercept", "x", "z"]  # the weights are no predictor
    with pytest.raises(ValueError, match="freq_weights='nope' is not a column of data"):
        gcf.logit("y ~ x", DF, freq_weights="nope")
    with pytest.raises(ValueError, match="names a column: that needs from_formula"):
        gc.Logit(DF.y, X, freq_weights="w")


@pytest.mark.parametrize("key", ["freq_weights", "var_weights", "offset"])
def test_two_dimensional_weights_and_offsets_are_refused(key):
    with pytest.raises(ValueError, match=f"{key} must be one-dimensional"):
        gcf.glm("y ~ x", DF, **{key: np.ones((N, 2))})
    with pytest.raises(ValueError, match=f"{key} must be one-dimensional"):
        gc.GLM(DF.y, X, **{key: np.ones((N, 2))})


def test_object_weights_with_none_are_missing_values():
    w = np.array([None] + [1.0] * (N - 1), dtype=object)
    res = gc.Logit(DF.y, X, freq_weights=w).fit()
    assert res.nobs == N - 1 and res.model.data.n_dropped == 1
    with pytest.raises(ValueError, match="missing values in 'freq_weights'"):
        gc.Logit(DF.y, X, freq_weights=w, missing="raise")
    with pytest.raises(ValueError, match="freq_weights must be numeric, got values like 'a'"):
        gc.Logit(DF.y, X, freq_weights=np.array(["a"] * N, dtype=object))


# --- magnitudes, starting values and priors -------------------------------------------------------
def test_huge_columns_get_a_clear_error_naming_the_column():
    with pytest.raises(ValueError, match="'x' has values as large as .*e\\+160.*rescale"):
        gc.Logit(DF.y, X.assign(x=X.x * 1e160)).fit()
    with pytest.raises(ValueError, match="'x' has values as large as .*rescale"):
        gc.LDA(DF.k, DF[["x", "z"]].assign(x=DF.x * 1e200)).fit()
    res = gc.Logit(DF.y, X.assign(x=X.x * 1e100)).fit()  # large but representable: fits
    close(res.params["x"] * 1e100, gc.Logit(DF.y, X).fit().params["x"], 1e-6)


def test_bad_starting_values_and_priors_are_named():
    with pytest.raises(ValueError, match="start_params must be finite.*'x': nan"):
        gc.Logit(DF.y, X).fit(start_params=[np.nan, 0, 0])
    with pytest.raises(ValueError, match="start_params of 'x' must be a number, got 'a'"):
        gc.Logit(DF.y, X).fit(start_params={"x": "a"})
    close(gc.Logit(DF.y, X).fit(start_params={"x": 1.0}).params,
          gc.Logit(DF.y, X).fit().params, 1e-8)
    with pytest.raises(ValueError, match="prior_scale must be a number.*got 'wide'"):
        gc.BayesLogit(DF.y, X, prior_scale="wide")
    # None is the default since prior_cov= (a full prior covariance) is the alternative: the
    # default scale 1, not an error
    close(gc.BayesLogit(DF.y, X, prior_scale=None).fit().params,
          gc.BayesLogit(DF.y, X, prior_scale=1.0).fit().params, 1e-12)
    with pytest.raises(ValueError, match="prior_scale of 'x' must be a number, got 'a'"):
        gc.BayesLogit(DF.y, X, prior_scale={"x": "a"})
    with pytest.raises(ValueError, match="prior_scale of 'x' is 1e-160: so small"):
        gc.BayesLogit(DF.y, X, prior_scale=1e-160)


# --- dates, sparse matrices, strings where numbers were, duplicated names -----------------------
def test_dates_and_time_spans_are_refused_with_a_conversion():
    when = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(N), unit="D")
    data = DF.assign(d=when, span=pd.to_timedelta(DF.t, unit="D"))
    with pytest.raises(ValueError, match="column 'd' holds dates.*dt.days"):
        gcf.logit("y ~ d", data)
    with pytest.raises(ValueError, match="column 'span' holds time spans.*total_seconds"):
        gcf.logit("y ~ span", data)
    with pytest.raises(ValueError, match="exog column 'd' holds dates"):
        gc.Logit(data.y, data[["x", "d"]])
    with pytest.raises(ValueError, match="exog column 'span' holds time spans"):
        gc.Logit(data.y, data[["x", "span"]])


def test_scipy_sparse_exog_fits_as_dense():
    dense = gc.Logit(DF.y, X.to_numpy()).fit()
    for fmt in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        res = gc.Logit(DF.y.to_numpy(), fmt(X.to_numpy())).fit()
        close(res.params, dense.params, 1e-14)
        close(res.predict(fmt(X.to_numpy()[:5])), dense.predict(X.to_numpy()[:5]), 1e-14)


def test_numbers_given_as_strings_at_predict_time():
    res = gcf.logit("y ~ x + z + g", DF).fit()
    row = DF.iloc[5]  # a Series of mixed types: one row, by column name
    np.testing.assert_allclose(res.predict(row), res.predict(DF.iloc[[5]]), rtol=1e-14)
    as_objects = DF.head(3).astype(object)  # numbers in object columns are numbers
    np.testing.assert_allclose(res.predict(as_objects), res.predict(DF.head(3)), rtol=1e-14)
    with pytest.raises(ValueError, match="column 'x' held numbers when the model was fit.*"
                                         "pd.to_numeric"):
        res.predict(DF.head(3).assign(x=DF.x.head(3).astype(str)))


def test_duplicated_column_names_are_refused():
    dup = pd.concat([DF[["y", "x"]], DF[["x"]] * 2], axis=1)
    with pytest.raises(ValueError, match="more than one column named 'x'"):
        gcf.logit("y ~ x", dup)
    with pytest.raises(ValueError, match="more than one column named 'x'"):
        gc.Logit(dup.y, dup[["x"]])
    res = gcf.logit("y ~ x", DF).fit()
    with pytest.raises(ValueError, match="more than one column named 'x'"):
        res.predict(dup.head(3))


def test_a_formula_of_1500_terms():
    wide = pd.DataFrame(RNG.normal(size=(60, 1500)), columns=[f"v{i}" for i in range(1500)])
    wide["y"] = RNG.integers(0, 2, 60)
    formula = "y ~ " + " + ".join(wide.columns[:-1])
    d = gcf.glm(formula, wide, family=gc.families.Gaussian()).data
    assert d.exog_names == ["Intercept"] + list(wide.columns[:-1])
    np.testing.assert_array_equal(d.exog[:, 1:], wide.iloc[:, :-1].to_numpy())
    part = "y ~ " + " + ".join(wide.columns[:100])  # long enough to be regrouped
    d0 = gcf.glm(part + " - 1", wide, family=gc.families.Gaussian()).data
    assert d0.exog_names == list(wide.columns[:100])  # "- 1" still removes the intercept
    d1 = gcf.glm("y ~ 0 + " + part[4:], wide, family=gc.families.Gaussian()).data
    assert d1.exog_names == list(wide.columns[:100])


def test_nothing_the_caller_passed_is_modified():
    data, _ = _with_missing("Float64")
    data["n"] = 10
    w = data.w.copy()
    before = data.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GlmclassWarning)
        res = gcf.glm("cbind(y, n - y) ~ x + offset(np.log(t))", data, freq_weights="w").fit()
        res.predict(data.head(10))
        gc.Logit(data.y, data[["x", "z"]], freq_weights=w, offset=data.t).fit().predict(
            data[["z", "x"]])
    pd.testing.assert_frame_equal(data, before)
    pd.testing.assert_series_equal(w, before.w)
