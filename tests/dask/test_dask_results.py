"""Results features of fits on Dask data equal the in-memory fit of the same rows (to 1e-10,
the synchronous scheduler): profile intervals, pickle and save/load, influence, hat values,
per-row scores and residuals (lazy Dask collections), predictions across pandas and Dask
data, and lrtest/anova/compare between a Dask fit and an in-memory fit."""

from __future__ import annotations

import io
import pickle
import warnings

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass import families as F

TOL = 1e-10
FORMULA = "low ~ age + lwt + C(race) + smoke"


def close(a, b, tol: float = TOL) -> None:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(b)))))


@pytest.fixture(scope="module")
def birthwt() -> pd.DataFrame:
    return gc.datasets.load("birthwt")


@pytest.fixture
def bddf(birthwt):
    return dd.from_pandas(birthwt, npartitions=4)


@pytest.fixture
def ddf(frame):
    return dd.from_pandas(frame, npartitions=4)


@pytest.fixture
def fits(birthwt, bddf):
    return (gc.Logit.from_formula(FORMULA, birthwt).fit(),
            gc.Logit.from_formula(FORMULA, bddf).fit())


def test_results_class_is_the_in_memory_class(fits):
    mem, lazy = fits
    assert type(lazy) is type(mem)


def test_profile_intervals(fits):
    mem, lazy = fits
    close(lazy.conf_int(method="profile"), mem.conf_int(method="profile"))


def test_profile_intervals_gaussian_and_weights(frame, ddf):
    f = "z ~ x + C(g)"
    mem = gc.GLM.from_formula(f, frame, family=F.Gaussian(), freq_weights=frame.w).fit()
    lazy = gc.GLM.from_formula(f, ddf, family=F.Gaussian(), freq_weights=ddf.w).fit()
    close(lazy.conf_int(method="profile"), mem.conf_int(method="profile"))
    f = "count ~ x"  # one column besides the held one, a Poisson offset
    mem = gc.GLM.from_formula(f, frame, family=F.Poisson(), offset=frame.off).fit()
    lazy = gc.GLM.from_formula(f, ddf, family=F.Poisson(), offset=ddf.off).fit()
    close(lazy.conf_int(method="profile", alpha=0.1), mem.conf_int(method="profile", alpha=0.1))


@pytest.mark.parametrize("how", ["pickle", "save"])
def test_pickle_and_save_load(fits, birthwt, bddf, how):
    mem, lazy = fits
    if how == "pickle":
        back = pickle.loads(pickle.dumps(lazy))
    else:
        buf = io.BytesIO()
        lazy.save(buf, format="pickle")  # the data-only format cannot hold Dask partitions
        buf.seek(0)
        back = gc.load(buf, trusted=True)
    assert type(back) is type(mem)
    close(back.params, mem.params)
    close(back.bse, mem.bse)
    close(back.predict(birthwt), mem.predict(birthwt))
    got = back.predict(bddf)
    assert isinstance(got, dd.Series)
    close(got.compute(), mem.predict(birthwt))
    close(back.fittedvalues.compute(), mem.fittedvalues)


def test_save_without_data(fits, birthwt, bddf):
    mem, lazy = fits
    buf = io.BytesIO()
    lazy.save(buf, remove_data=True)
    buf.seek(0)
    back = gc.load(buf)
    close(back.llf, mem.llf)
    close(back.predict(birthwt), mem.predict(birthwt))
    close(back.predict(bddf).compute(), mem.predict(birthwt))


def test_mnlogit_pickle_and_predictions(birthwt, bddf):
    f = "race ~ age + lwt + smoke"
    mem = gc.MNLogit.from_formula(f, birthwt).fit()
    lazy = gc.MNLogit.from_formula(f, bddf).fit()
    back = pickle.loads(pickle.dumps(lazy))
    assert type(back) is type(mem)
    close(back.predict(birthwt), mem.predict(birthwt))
    close(back.predict(bddf).compute(), mem.predict(birthwt))
    close(mem.predict(bddf).compute(), mem.predict(birthwt))
    close(lazy.predict(birthwt, which="linear"), mem.predict(birthwt, which="linear"))
    close(lazy.score_obs().compute(), mem.score_obs())


def test_mnlogit_with_weights_and_offset(frame, ddf):
    f = "k ~ x + z + C(g)"
    mem = gc.MNLogit.from_formula(f, frame, freq_weights=frame.w, offset=frame.off,
                                  ref="mid").fit()
    lazy = gc.MNLogit.from_formula(f, ddf, freq_weights=ddf.w, offset=ddf.off, ref="mid").fit()
    close(lazy.score_obs().compute(), mem.score_obs())
    close(lazy.fittedvalues.compute(), mem.fittedvalues)
    pd.testing.assert_frame_equal(lazy.pred_table(), mem.pred_table())


@pytest.mark.parametrize("model", ["GLM", "Logit", "Probit"])
def test_predict_across_pandas_and_dask(birthwt, bddf, model):
    kw = {"family": F.Binomial()} if model == "GLM" else {}
    cls = getattr(gc, model)
    mem = cls.from_formula(FORMULA, birthwt, **kw).fit()
    lazy = cls.from_formula(FORMULA, bddf, **kw).fit()
    for which in ("mean", "linear", "prob", "class"):
        want = mem.predict(birthwt, which=which)
        from_mem = mem.predict(bddf, which=which)
        assert isinstance(from_mem, (dd.Series, dd.DataFrame))
        got = (lazy.predict(birthwt, which=which), from_mem.compute(),
               lazy.predict(bddf, which=which).compute())
        for g in got:
            if which == "class":
                pd.testing.assert_series_equal(g, want)
            else:
                close(g, want)


def test_per_row_outputs(frame, ddf):
    f = "y ~ x + z + C(g)"
    mem = gc.Logit.from_formula(f, frame, freq_weights=frame.w, offset=frame.off).fit()
    lazy = gc.Logit.from_formula(f, ddf, freq_weights=ddf.w, offset=ddf.off).fit()
    for name in ("fittedvalues", "linear_predictor", "resid_response", "resid_pearson",
                 "resid_deviance", "resid_working", "hat_matrix_diag"):
        got = getattr(lazy, name)
        assert isinstance(got, dd.Series), name
        close(got.compute(), getattr(mem, name))
    got = lazy.score_obs()
    assert isinstance(got, dd.DataFrame)
    pd.testing.assert_frame_equal(got.compute(), mem.score_obs(), rtol=TOL)
    close(lazy.pearson_chi2, mem.pearson_chi2)


@pytest.mark.parametrize("family", [F.Binomial(), F.Gaussian(), F.Poisson()],
                         ids=lambda f: f.name)
def test_influence(frame, ddf, family, birthwt, bddf):
    if family.name == "Binomial":
        data, lazy_data, f = birthwt, bddf, FORMULA
    else:
        data, lazy_data = frame, ddf
        f = "z ~ x + C(g)" if family.name == "Gaussian" else "count ~ x + z"
    mem = gc.GLM.from_formula(f, data, family=family).fit().get_influence()
    lazy = gc.GLM.from_formula(f, lazy_data, family=family).fit().get_influence()
    for name in ("hat_matrix_diag", "resid_studentized", "d_params", "params_one", "dfbetas",
                 "dffits_internal", "resid_studentized_deviance",
                 "resid_studentized_external", "dfbeta", "dffits", "cov_ratio"):
        got = getattr(lazy, name)
        assert isinstance(got, (dd.Series, dd.DataFrame)), name
        close(got.compute(), getattr(mem, name))
    for name in ("summary_frame", "influence_measures"):
        pd.testing.assert_frame_equal(getattr(lazy, name)().compute(), getattr(mem, name)(),
                                      rtol=1e-9)
    for got, want in zip(lazy.cooks_distance, mem.cooks_distance, strict=True):
        close(got.compute(), want)


def test_lrtest_anova_compare_between_dask_and_memory(birthwt, bddf, fits):
    mem_full, lazy_full = fits
    small_mem = gc.Logit.from_formula("low ~ age + lwt", birthwt).fit()
    small_lazy = gc.Logit.from_formula("low ~ age + lwt", bddf).fit()
    want = gc.lrtest(small_mem, mem_full)
    for a, b in ((small_lazy, mem_full), (small_mem, lazy_full), (small_lazy, lazy_full)):
        got = gc.lrtest(a, b)
        close(got.statistic, want.statistic)
        close(got.pvalue, want.pvalue)
        close(gc.anova(a, b)[["deviance", "df", "pvalue"]].fillna(0),
              gc.anova(small_mem, mem_full)[["deviance", "df", "pvalue"]].fillna(0))
        close(gc.compare([a, b])[["llf", "aic", "bic"]],
              gc.compare([small_mem, mem_full])[["llf", "aic", "bic"]])


def test_dask_and_memory_fits_of_other_rows_are_refused(birthwt, bddf, frame, ddf):
    lazy = gc.Logit.from_formula("low ~ age + lwt", bddf).fit()
    fewer = gc.Logit.from_formula("low ~ age + lwt", birthwt.iloc[1:]).fit()
    shuffled = gc.Logit.from_formula("low ~ age + lwt", birthwt.iloc[::-1]).fit()
    for other in (fewer, shuffled):
        with pytest.raises(ValueError, match="different rows"):
            gc.compare([lazy, other])
        with pytest.raises(ValueError, match="different rows"):
            gc.anova(other, gc.Logit.from_formula(FORMULA, bddf).fit())
    weighted = gc.Logit.from_formula("y ~ x", ddf, freq_weights=ddf.w).fit()
    other_weights = gc.Logit.from_formula("y ~ x", frame, freq_weights=frame.w + 1).fit()
    same_weights = gc.Logit.from_formula("y ~ x", frame, freq_weights=frame.w).fit()
    with pytest.raises(ValueError, match="different rows"):
        gc.compare([weighted, other_weights])
    close(gc.compare([weighted, same_weights])["llf"].to_numpy(),
          np.repeat(same_weights.llf, 2))


def test_bayes_logit_outputs(frame, ddf):
    f = "y ~ x + z + C(g)"
    mem = gc.BayesLogit.from_formula(f, frame, prior_scale=2.0).fit()
    lazy = gc.BayesLogit.from_formula(f, ddf, prior_scale=2.0).fit()
    back = pickle.loads(pickle.dumps(lazy))
    close(back.predict(frame), mem.predict(frame))
    close(lazy.resid_deviance.compute(), mem.resid_deviance)
    close(mem.predict(ddf).compute(), mem.predict(frame))


def test_generative_results_still_lazy_and_picklable(frame, ddf):
    mem = gc.LDA.from_formula("k ~ x + z", frame).fit()
    lazy = gc.LDA.from_formula("k ~ x + z", ddf).fit()
    assert type(lazy) is type(mem)
    back = pickle.loads(pickle.dumps(lazy))
    close(back.predict(ddf).compute(), mem.predict(frame))
    close(back.llf, mem.llf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(lazy.error_rate, mem.error_rate)


def test_firth_logit(birthwt, bddf, frame, ddf):
    mem = gc.FirthLogit.from_formula(FORMULA, birthwt).fit()
    lazy = gc.FirthLogit.from_formula(FORMULA, bddf).fit()
    assert type(lazy) is type(mem)
    for name in ("params", "bse", "llf", "llnull", "llf_penalized", "llnull_penalized",
                 "deviance", "null_deviance", "aic", "bic", "llr"):
        close(getattr(lazy, name), getattr(mem, name))
    got = lazy.hat_matrix_diag
    assert isinstance(got, dd.Series)
    close(got.compute(), mem.hat_matrix_diag)
    close(lazy.conf_int(method="profile"), mem.conf_int(method="profile"))
    close(lazy.plr_test(), mem.plr_test())
    close(lazy.predict(birthwt), mem.predict(birthwt))
    close(pickle.loads(pickle.dumps(lazy)).predict(bddf).compute(), mem.predict(birthwt))
    assert str(lazy.summary()) == str(mem.summary())
    f = "y ~ x + C(g)"  # weights and an offset; no intercept
    mem = gc.FirthLogit.from_formula(f, frame, freq_weights=frame.w, offset=frame.off).fit()
    lazy = gc.FirthLogit.from_formula(f, ddf, freq_weights=ddf.w, offset=ddf.off).fit()
    close(lazy.params, mem.params)
    close(lazy.bse, mem.bse)
    close(lazy.hat_matrix_diag.compute(), mem.hat_matrix_diag)
    mem = gc.FirthLogit.from_formula("y ~ x + z - 1", frame).fit()
    lazy = gc.FirthLogit.from_formula("y ~ x + z - 1", ddf).fit()
    close(lazy.params, mem.params)
    close(lazy.null_deviance, mem.null_deviance)


def test_pickle_after_lazy_values_were_made(fits, birthwt):
    mem, lazy = fits
    lazy.llf, lazy.fittedvalues  # noqa: B018 - caches holding Dask graphs
    back = pickle.loads(pickle.dumps(lazy))
    close(back.llf, mem.llf)
    close(back.fittedvalues.compute(), mem.fittedvalues)
