"""Formula path: the stored design rebuilds columns for new data; missing values; weights."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.formula.design import build_design, split_formula

RNG = np.random.default_rng(99)
N = 200
DF = pd.DataFrame({
    "x": RNG.normal(10, 3, N),
    "z": RNG.uniform(1, 5, N),
    "g": RNG.choice(["lo", "mid", "hi"], N),
})
DF["y"] = (RNG.uniform(size=N) < 1 / (1 + np.exp(-(0.3 * (DF.x - 10) + (DF.g == "hi"))))
           ).astype(int)


def test_build_design_matches_patsy_columns_and_statsmodels():
    d = build_design("y ~ x + C(g) + np.log(z)", DF)
    assert d.spec.column_names == ["Intercept", "C(g)[T.lo]", "C(g)[T.mid]", "x", "np.log(z)"]
    assert d.exog.shape == (N, 5) and d.exog.flags.c_contiguous
    assert d.n_dropped == 0 and d.index.equals(DF.index)
    res = gcf.logit("y ~ x + C(g) + np.log(z)", DF).fit()
    ref = smf.logit("y ~ x + C(g) + np.log(z)", DF).fit(disp=0, tol=1e-14)
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-8)
    assert list(res.params.index) == list(ref.params.index)


def test_split_formula():
    assert split_formula("y ~ a + b") == ("y", "a + b")
    assert split_formula("~ a") == ("", "a")
    with pytest.raises(TypeError, match="formula must be a string"):
        split_formula(3)


def test_predict_new_data_with_a_subset_of_levels():
    res = gcf.logit("y ~ x + C(g)", DF).fit()
    new = DF[DF.g == "mid"].head(4)
    np.testing.assert_allclose(res.predict(new), res.predict().loc[new.index], rtol=1e-12)
    assert res.predict(new).index.equals(new.index)


@pytest.mark.parametrize("term", ["center(x)", "standardize(x)", "scale(x)"])
def test_stateful_transforms_remember_the_training_data(term):
    res = gcf.logit(f"y ~ {term} + standardize(z)", DF).fit()
    one = DF.iloc[[7]]
    assert res.predict(one).iloc[0] == pytest.approx(res.predict().iloc[7], rel=1e-12)
    shifted = DF.iloc[:5]
    np.testing.assert_allclose(res.predict(shifted, which="linear"),
                               res.predict(which="linear").iloc[:5], rtol=1e-12)


def test_unseen_level_names_column_and_level():
    res = gcf.logit("y ~ x + C(g)", DF).fit()
    new = DF.head(3).assign(g=["lo", "top", "mid"])
    with pytest.raises(ValueError, match=r"column 'g' has level 'top'.*not in the data"):
        res.predict(new)


def test_unseen_level_of_a_plain_string_column():
    res = gcf.logit("y ~ x + g", DF).fit()
    with pytest.raises(ValueError, match=r"'g'.*'top'"):
        res.predict(DF.head(2).assign(g=["top", "lo"]))


def test_new_data_without_a_used_column():
    res = gcf.logit("y ~ x + C(g)", DF).fit()
    with pytest.raises(ValueError, match="'x'"):
        res.predict(DF[["g"]].head(3))


def test_missing_drop_counts_and_reports_rows():
    data = DF.copy()
    data.loc[[3, 8], "x"] = np.nan
    data.loc[11, "g"] = None
    data.loc[20, "y"] = np.nan
    data.loc[30, "unused"] = 1.0  # NaN elsewhere in an unused column drops nothing
    res = gcf.logit("y ~ x + C(g)", data).fit()
    assert res.nobs == N - 4
    assert res.model.data.n_dropped == 4
    assert 20 not in res.fittedvalues.index and 3 not in res.fittedvalues.index
    ref = gcf.logit("y ~ x + C(g)", DF.drop(index=[3, 8, 11, 20])).fit()
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-12)
    text = str(res.summary())
    assert "Rows dropped (missing)" in text
    line = next(ln for ln in text.splitlines() if "Rows dropped" in ln)
    assert line.split("Rows dropped (missing):")[1].split()[0] == "4"
    assert "Rows dropped" not in str(ref.summary())


def test_missing_raise_names_the_column():
    data = DF.copy()
    data.loc[[3, 8], "x"] = np.nan
    with pytest.raises(ValueError, match=r"missing values in 'x' \(2\).*missing='drop'"):
        gcf.logit("y ~ x + C(g)", data, missing="raise")
    with pytest.raises(ValueError, match="missing must be 'drop' or 'raise'"):
        gcf.logit("y ~ x", DF, missing="ignore")


def test_weights_are_aligned_with_data_rows():
    data = DF.copy()
    data.loc[[2, 5], "z"] = np.nan
    w = RNG.integers(1, 4, N).astype(float)
    res = gc.Logit.from_formula("y ~ x + z", data, freq_weights=w).fit()
    keep = data.z.notna().to_numpy()
    ref = gc.Logit.from_formula("y ~ x + z", data[keep], freq_weights=w[keep]).fit()
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-12)
    assert res.nobs == w[keep].sum()
    # a missing weight drops its row too
    w2 = w.copy()
    w2[9] = np.nan
    res2 = gc.Logit.from_formula("y ~ x", DF, freq_weights=w2).fit()
    assert res2.model.data.n_dropped == 1 and res2.nobs == np.nansum(w2)
    with pytest.raises(ValueError, match="freq_weights has 3 values but the data have 200 rows"):
        gc.Logit.from_formula("y ~ x", DF, freq_weights=[1, 2, 3])


def test_weights_with_a_non_default_index():
    data = DF.set_axis(np.arange(N) * 10 + 5)
    w = pd.Series(RNG.integers(1, 4, N).astype(float))  # aligned by position, as arrays
    a = gc.Logit.from_formula("y ~ x", data, freq_weights=w.to_numpy()).fit()
    b = gc.Logit.from_formula("y ~ x", DF, freq_weights=w.to_numpy()).fit()
    np.testing.assert_allclose(a.params, b.params, rtol=1e-13)
    assert a.fittedvalues.index.equals(data.index)


def test_response_expression_and_categorical_predictor():
    agg = pd.DataFrame({"k": [1, 4, 9, 15], "n": [20, 20, 20, 20], "d": [1.0, 2.0, 3.0, 4.0],
                        "c": pd.Categorical(["b", "a", "b", "a"], categories=["b", "a"])})
    res = gc.GLM.from_formula("I(k / n) ~ d + c", agg, var_weights=agg.n).fit()
    assert list(res.params.index) == ["Intercept", "c[T.a]", "d"]
    assert res.model.levels is None  # proportions, not labels


def test_user_function_in_the_callers_scope():
    def cube(v):
        return v ** 3

    res = gcf.logit("y ~ cube(x / 10)", DF, eval_env=0).fit()
    assert "cube(x / 10)" in res.params.index
    assert res.predict(DF.head(2)).shape == (2,)
    by_dict = gcf.logit("y ~ cube(x / 10)", DF, eval_env={"cube": cube}).fit()
    np.testing.assert_array_equal(by_dict.params, res.params)
    with pytest.raises(gc.UnsafeFormulaError, match="'cube'.*eval_env"):
        gcf.logit("y ~ cube(x / 10)", DF)  # not without asking: formulas are code


def test_formula_errors():
    with pytest.raises(ValueError, match="no response"):
        gcf.logit("~ x", DF)
    with pytest.raises(TypeError, match="data must be a pandas DataFrame"):
        gcf.logit("y ~ x", DF.to_dict())
    with pytest.raises(ValueError, match="'w'"):
        gcf.logit("y ~ w", DF)
    with pytest.raises(ValueError, match="empty"):
        gcf.logit("y ~ x", DF.iloc[:0])


def test_design_spec_pickles_and_predicts_the_same():
    res = gcf.logit("y ~ standardize(x) + C(g)", DF).fit()
    spec = res.model.data.spec
    again = pickle.loads(pickle.dumps(spec))
    new = DF.head(6)
    np.testing.assert_allclose(again.exog(new), spec.exog(new), rtol=1e-14)
    assert again.column_names == spec.column_names


def test_missing_values_in_new_data_give_nan_predictions():
    res = gcf.logit("y ~ x + C(g)", DF).fit()
    new = DF.head(4).assign(x=[np.nan, 9.0, 10.0, 11.0], g=["lo", None, "mid", "hi"])
    pred = res.predict(new)
    assert pred.isna().tolist() == [True, True, False, False]
    np.testing.assert_allclose(pred.iloc[2:], res.predict(new.iloc[2:]), rtol=1e-14)
    assert res.predict(new.iloc[:2]).isna().all()


def test_unseen_numeric_level_is_shown_plainly():
    data = DF.assign(k=np.arange(N) % 3)
    res = gcf.logit("y ~ x + C(k)", data).fit()
    with pytest.raises(ValueError, match=r"column 'k' has level 5, .*levels: \[0, 1, 2\]"):
        res.predict(data.head(2).assign(k=[0, 5]))
