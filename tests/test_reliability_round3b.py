"""No silent wrong answers, round three (issue 25, items 1, 6, 7, 16, 17, 23): pandas objects
paired with rows by label, a perceptron that overflows, a stopping rule invariant to the scale
of the weights, explicit prediction offsets on new data, at most two-way clustering, and
aliasing decided on scaled columns. Each test failed before its fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import glmclass as gc
from glmclass import families as F


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(2511)
    n = 80
    out = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                        "firm": rng.integers(0, 8, n), "year": rng.integers(0, 3, n),
                        "t": rng.uniform(1.0, 3.0, n)})
    out["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-out.x))).astype(int)
    out["c"] = rng.poisson(out.t * np.exp(0.3 * out.x))
    return out


# --- item 1: per-row pandas objects are paired by label ----------------------------------------
def test_cluster_groups_series_with_another_order_is_refused(df):
    m = gc.Logit.from_formula("y ~ x", df)
    with pytest.raises(ValueError, match=r"cov_kwds\['groups'\] and the rows of the data have "
                                         r"different indexes"):
        m.fit(cov_type="cluster", cov_kwds={"groups": df["firm"].sort_values()})
    with pytest.raises(ValueError, match="different indexes"):
        m.fit(cov_type="cluster", cov_kwds={"groups": df[["firm"]].sort_values("firm")})


def test_cluster_groups_series_matching_no_row_is_refused(df):
    m = gc.Logit.from_formula("y ~ x", df)
    away = df["firm"].set_axis(pd.RangeIndex(1000, 1000 + len(df)))
    with pytest.raises(ValueError, match="different indexes"):
        m.fit(cov_type="cluster", cov_kwds={"groups": away})


def test_cluster_groups_on_the_array_path_are_paired_by_label(df):
    X = sm.add_constant(df[["x"]])
    with pytest.raises(ValueError, match="different indexes"):
        gc.Logit(df.y, X).fit(cov_type="cluster", cov_kwds={"groups": df.firm.sort_values()})


def test_cluster_groups_aligned_series_match_statsmodels(df):
    """The same Series in the rows' order, by name, or as values of the rows given (one row
    dropped) give statsmodels' cluster covariance."""
    d = df.copy()
    d.loc[d.index[3], "x"] = np.nan
    used = d.dropna()
    ref = sm.Logit(used.y, sm.add_constant(used[["x"]])).fit(
        disp=0, cov_type="cluster", cov_kwds={"groups": used.firm.to_numpy()})
    m = gc.Logit.from_formula("y ~ x", d)
    for groups in ("firm", d["firm"], used["firm"], used["firm"].reset_index(drop=True)):
        res = m.fit(cov_type="cluster", cov_kwds={"groups": groups})
        np.testing.assert_allclose(res.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-6)


def test_prediction_offsets_on_new_data_are_paired_by_label(df):
    res = gc.GLM.from_formula("c ~ x", df, family=F.Poisson(), exposure="t").fit()
    new = df.iloc[:6]
    with pytest.raises(ValueError, match="offset and the rows of the data have different"):
        res.predict(new, offset=np.log(new["t"]).sort_values())
    with pytest.raises(ValueError, match="exposure and the rows of the data have different"):
        res.predict(new, exposure=new["t"].sort_values())
    with pytest.raises(ValueError, match="offset and the rows of the data have different"):
        res.predict(offset=np.log(df["t"]).sort_values())  # in-sample: the rows used
    ok = res.predict(new, exposure=new["t"])
    np.testing.assert_allclose(ok.to_numpy(), res.predict(new).to_numpy(), rtol=1e-12)


# --- item 16: an explicit offset replaces the formula's -------------------------------------
@pytest.mark.parametrize("how", ["formula", "exposure_by_name", "offset_by_name"])
@pytest.mark.parametrize("engine", ["patsy", "formulaic"])
def test_explicit_offset_on_new_data_without_the_offset_column(df, how, engine):
    d = df.assign(logt=np.log(df.t))
    formula, kw = {"formula": ("c ~ x + offset(np.log(t))", {}),
                   "exposure_by_name": ("c ~ x", {"exposure": "t"}),
                   "offset_by_name": ("c ~ x", {"offset": "logt"})}[how]
    res = gc.GLM.from_formula(formula, d, family=F.Poisson(), engine=engine, **kw).fit()
    ref = sm.GLM(d.c, sm.add_constant(d[["x"]]), family=sm.families.Poisson(),
                 offset=d.logt).fit()
    new = d.iloc[10:16]
    lean = new[["x"]]  # neither t nor lt
    want = ref.predict(sm.add_constant(lean, has_constant="add"), offset=new.logt)
    got = res.predict(lean, offset=new.logt)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(res.predict(lean, exposure=new.t).to_numpy(), want.to_numpy(),
                               rtol=1e-6)
    # a missing value in the offset's column no longer matters once the offset is given
    holed = new.assign(t=np.nan, logt=np.nan)
    np.testing.assert_allclose(res.predict(holed, offset=new.logt).to_numpy(),
                               want.to_numpy(), rtol=1e-6)


def test_the_offset_column_is_named_as_needed_by_the_offset(df):
    res = gc.GLM.from_formula("c ~ x", df, family=F.Poisson(), exposure="t").fit()
    with pytest.raises(ValueError, match=r"'t', which the model's offset needs \(exposure='t'"):
        res.predict(df[["x"]])
    res2 = gc.GLM.from_formula("c ~ x + offset(np.log(t))", df, family=F.Poisson()).fit()
    with pytest.raises(ValueError, match=r"offset needs \(the formula's offset\(np.log\(t\)\)"):
        res2.predict(df[["x"]])
    with pytest.raises(ValueError, match="which the formula 'c ~ x' uses"):  # a design column
        res.predict(df[["t"]], offset=np.zeros(len(df)))


def test_a_column_used_by_the_design_and_the_offset_is_still_needed(df):
    res = gc.GLM.from_formula("c ~ x + t + offset(np.log(t))", df, family=F.Poisson()).fit()
    with pytest.raises(ValueError, match="which the formula"):
        res.predict(df[["x"]], offset=np.zeros(len(df)))


# --- item 17: at most two-way clustering --------------------------------------------------------
def test_three_cluster_columns_say_two_way_at_most(df):
    m = gc.Logit.from_formula("y ~ x", df)
    with pytest.raises(ValueError, match="at most two-way clustering"):
        m.fit(cov_type="cluster", cov_kwds={"groups": ["firm", "year", "x"]})


# --- item 6: a perceptron whose weights overflow -----------------------------------------------
@pytest.mark.parametrize("pocket", [False, True])
def test_a_perceptron_whose_weights_overflow_stops_and_says_so(pocket):
    rng = np.random.default_rng(3)
    n = 60
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.normal(size=n)])
    y = np.where(X[:, 1] + 0.3 * rng.normal(size=n) > 0, "a", "b")
    with pytest.warns(gc.ConvergenceWarning, match="weights overflowed.*learning_rate=1e\\+308"):
        res = gc.Perceptron(y, X, learning_rate=1e308, pocket=pocket).fit()
    assert not res.converged
    assert np.isfinite(np.asarray(res.params, dtype=float)).all()
    assert set(res.predict()) <= {"a", "b"}  # never None


# --- item 7: the stopping rule does not depend on the scale of the weights ----------------------
@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(7)
    n = 200
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.normal(size=n)])
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ [0.3, 1.0, -0.5])))).astype(float)
    counts = rng.poisson(np.exp(X @ [0.3, 0.4, -0.2])).astype(float)
    k = rng.integers(0, 3, n) + (X[:, 1] > 0.5)
    return X, y, counts, k


CASES = {
    "logit": lambda d, w: gc.Logit(d[1], d[0], freq_weights=w),
    "probit": lambda d, w: gc.Probit(d[1], d[0], freq_weights=w),
    "poisson": lambda d, w: gc.GLM(d[2], d[0], family=F.Poisson(), freq_weights=w),
    "poisson_var": lambda d, w: gc.GLM(d[2], d[0], family=F.Poisson(), var_weights=w),
    "mnlogit": lambda d, w: gc.MNLogit(d[3], d[0], freq_weights=w),
}
SM = {
    "logit": lambda d: sm.Logit(d[1], d[0]).fit(disp=0, tol=1e-12).params,
    "probit": lambda d: sm.Probit(d[1], d[0]).fit(disp=0, tol=1e-12).params,
    "poisson": lambda d: sm.GLM(d[2], d[0], family=sm.families.Poisson()).fit(tol=1e-12).params,
    "poisson_var": lambda d: sm.GLM(d[2], d[0],
                                    family=sm.families.Poisson()).fit(tol=1e-12).params,
    "mnlogit": lambda d: sm.MNLogit(d[3], d[0]).fit(disp=0, tol=1e-12).params.ravel(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_weights_of_any_scale_give_the_mle_in_the_same_iterations(binary, case):
    n = binary[0].shape[0]
    fits = {c: CASES[case](binary, np.full(n, c)).fit() for c in (1e-12, 1.0, 1e12)}
    ref = np.asarray(SM[case](binary), dtype=float)
    for c, res in fits.items():
        assert res.converged, c
        assert res.n_iter == fits[1.0].n_iter, c
        got = np.asarray(res.params, dtype=float).ravel()
        np.testing.assert_allclose(got, np.asarray(fits[1.0].params, dtype=float).ravel(),
                                   rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(got, ref.ravel(), rtol=1e-6)


def test_the_sampled_irls_path_is_invariant_to_the_weights_scale():
    """The large-N path (sampled Hessians, the Newton decrement's threshold) too."""
    from glmclass.rows.blocks import ArrayBlocks
    from glmclass.solvers.control import Control
    from glmclass.solvers.irls import irls

    rng = np.random.default_rng(11)
    n = 20000
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ [0.2, 0.8, -0.4, 0.1])))).astype(float)
    ctrl = Control(direction="sampled")
    fits = {c: irls(ArrayBlocks(X, y, np.full(n, c)), F.Binomial(), control=ctrl)
            for c in (1e-12, 1.0, 1e12)}
    ref = sm.Logit(y, X).fit(disp=0, tol=1e-12).params
    for c, fit in fits.items():
        assert fit.converged and fit.n_iter == fits[1.0].n_iter, c
        np.testing.assert_allclose(fit.coef, ref, rtol=1e-6)
        np.testing.assert_allclose(fit.coef, fits[1.0].coef, rtol=1e-8)


# --- item 23: aliasing is decided on the columns' own scale -------------------------------------
@pytest.fixture(scope="module")
def scaled():
    rng = np.random.default_rng(5)
    n = 100
    x, z = rng.normal(size=n), rng.normal(size=n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.3 + x - 0.5 * z)))).astype(float)
    return x, z, y


@pytest.mark.parametrize("scale", [1e-120, 1e-60, 1e60, 1e120])
def test_a_rescaled_column_is_kept_with_rescaled_estimates(scaled, scale):
    """R keeps a column of any representable scale (its coefficient scales inversely)."""
    x, z, y = scaled
    n = len(y)
    ref = sm.Logit(y, np.column_stack([np.ones(n), x, z])).fit(disp=0, tol=1e-12)
    res = gc.Logit(y, np.column_stack([np.ones(n), x, z * scale])).fit()
    assert np.isfinite(res.params.to_numpy()).all()  # kept, not aliased
    want = ref.params * np.array([1.0, 1.0, 1.0 / scale])
    np.testing.assert_allclose(res.params.to_numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(res.bse.to_numpy(), ref.bse * np.array([1.0, 1.0, 1.0 / scale]),
                               rtol=1e-6)


def test_a_shifted_column_is_kept(scaled):
    x, z, y = scaled
    n = len(y)
    ref = sm.Logit(y, np.column_stack([np.ones(n), x, z])).fit(disp=0, tol=1e-12)
    res = gc.Logit(y, np.column_stack([np.ones(n), x, z + 1e6])).fit()
    np.testing.assert_allclose(res.params.to_numpy()[1:], ref.params[1:], rtol=1e-6)
    np.testing.assert_allclose(res.bse.to_numpy()[1:], ref.bse[1:], rtol=1e-6)


@pytest.mark.parametrize("scale", [1e-160, 1e-200, 1e-300])
@pytest.mark.parametrize("model", ["logit", "lda"])
def test_a_column_whose_squares_underflow_says_so(scaled, scale, model):
    """Not "a linear combination of earlier columns" (1e-200 was dropped as aliased; 1e-160
    gave NaN standard errors, and LDA posteriors off in the 6th digit, in silence)."""
    x, z, y = scaled
    n = len(y)
    X = np.column_stack([np.ones(n), x, z * scale]) if model == "logit" else \
        np.column_stack([x, z * scale])
    make = gc.Logit if model == "logit" else gc.LDA
    with pytest.raises(ValueError, match=r"too small in scale.*underflows.*multiply it by 1e"):
        make(y, X).fit()


def test_cluster_groups_on_dask_data_are_not_paired_by_position_silently(df):
    """On Dask data a pandas Series of labels with its own row labels cannot be matched to
    the partitions' rows: refused (a column name, a Dask Series or plain values work)."""
    import dask
    import dask.dataframe as dd

    with dask.config.set(scheduler="sync"):
        ddf = dd.from_pandas(df, npartitions=3)
        m = gc.Logit.from_formula("y ~ x", ddf)
        with pytest.raises(ValueError, match="pandas object with its own row labels"):
            m.fit(cov_type="cluster", cov_kwds={"groups": df["firm"].sort_values()})
        by_name = m.fit(cov_type="cluster", cov_kwds={"groups": "firm"})
        by_values = m.fit(cov_type="cluster", cov_kwds={"groups": df["firm"].to_numpy()})
    ref = sm.Logit(df.y, sm.add_constant(df[["x"]])).fit(
        disp=0, cov_type="cluster", cov_kwds={"groups": df.firm.to_numpy()})
    np.testing.assert_allclose(by_name.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(by_values.bse.to_numpy(), by_name.bse.to_numpy(), rtol=1e-10)
