"""In-sample ``get_prediction()`` of a fit on Dask data: lazy Dask frames, one partition per
partition of the data, equal to the in-memory fit of the same rows to 1e-10 and to
statsmodels' ``get_prediction`` (computed at test time) by statsmodels' names."""

from __future__ import annotations

import warnings

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from dask.callbacks import Callback

import glmclass as gc
from glmclass import families as F

RTOL = 1e-10
SM_RTOL = 1e-6


def _pair(make, frame: pd.DataFrame, **fit):
    """``make(data).fit(**fit)`` in memory and on 4 partitions of the same rows."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = make(frame).fit(**fit)
        lazy = make(dd.from_pandas(frame, npartitions=4)).fit(**fit)
    return mem, lazy


def _same(got, expected, rtol: float = RTOL) -> None:
    got = got.compute() if dask.is_dask_collection(got) else got
    assert type(got) is type(expected)
    pd.testing.assert_index_equal(got.index, expected.index, exact=False)
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_index_equal(got.columns, expected.columns)
        got, expected = got.select_dtypes("number"), expected.select_dtypes("number")
    np.testing.assert_allclose(got.to_numpy(dtype=float), expected.to_numpy(dtype=float),
                               rtol=rtol, atol=1e-12)


class _Tasks(Callback):
    """Counts the Dask tasks run while it is active."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def _posttask(self, key, result, dsk, state, worker_id) -> None:
        self.n += 1


def _statsmodels_glm(frame: pd.DataFrame, formula: str, family, **fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sm.GLM.from_formula(formula, frame, family=family).fit(**fit)


def test_gaussian_prediction_uses_the_fits_dispersion_and_t_quantile(frame):
    """The dispersion and df_resid of the whole fit, not of a partition: each partition's
    intervals use the fit's Student t on df_resid (statsmodels with use_t=True)."""
    formula = "z ~ x + C(g)"
    mem, lazy = _pair(lambda d: gc.GLM.from_formula(formula, d, family=F.Gaussian()), frame)
    got, expected = lazy.get_prediction(), mem.get_prediction()
    _same(got.summary_frame(alpha=0.1), expected.summary_frame(alpha=0.1))
    _same(got.conf_int(alpha=0.1), expected.conf_int(alpha=0.1))
    sm_pred = _statsmodels_glm(frame.dropna(), formula, sm.families.Gaussian(),
                               use_t=True).get_prediction()
    theirs = sm_pred.summary_frame(alpha=0.1)
    ours = got.summary_frame(alpha=0.1).compute()
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=SM_RTOL)
    np.testing.assert_allclose(got.predicted_mean.compute(), sm_pred.predicted_mean,
                               rtol=SM_RTOL)
    np.testing.assert_allclose(got.se_mean.compute(), sm_pred.se_mean, rtol=SM_RTOL)


@pytest.mark.parametrize("which", ["mean", "linear"])
def test_sandwich_prediction_matches_memory_and_statsmodels(frame, which):
    """cov_type="HC0": the covariance is the fit's sandwich (a pass over every partition),
    not a partition's."""
    formula = "y ~ x + z + C(g)"
    mem, lazy = _pair(lambda d: gc.Logit.from_formula(formula, d), frame, cov_type="HC0")
    got = lazy.get_prediction(which=which)
    expected = mem.get_prediction(which=which)
    _same(got.summary_frame(), expected.summary_frame())
    _same(got.predicted_mean, expected.predicted_mean)
    _same(got.se_mean, expected.se_mean)
    data = frame.dropna().assign(y=lambda d: d.y.astype(float))
    theirs = _statsmodels_glm(data, formula, sm.families.Binomial(), cov_type="HC0")
    sm_frame = theirs.get_prediction(which=which).summary_frame()
    np.testing.assert_allclose(got.summary_frame().compute().to_numpy(), sm_frame.to_numpy(),
                               rtol=SM_RTOL)


def test_each_partition_is_predicted_where_it_lives(frame):
    """One output partition per data partition; a partition computed alone gives the in-memory
    prediction of its rows; making the frames runs no task."""
    mem, lazy = _pair(lambda d: gc.Logit.from_formula("y ~ x + z", d), frame)
    lazy.cov_values  # noqa: B018 - already known: nothing left to compute on the client
    with _Tasks() as tasks:
        pred = lazy.get_prediction()
        sf, ci, mean = pred.summary_frame(), pred.conf_int(), pred.predicted_mean
    assert tasks.n == 0
    assert all(dask.is_dask_collection(x) for x in (sf, ci, mean, pred.se_mean))
    assert sf.npartitions == 4
    expected = mem.get_prediction().summary_frame()
    third = sf.partitions[2].compute()
    assert 0 < len(third) < len(expected)
    _same(third, expected.loc[third.index])


def test_multinomial_prediction_per_level(frame):
    """MNLogit: the long table (row, level), the (row, level) intervals and the wide
    predicted probabilities and log-odds, lazily, as in memory."""
    mem, lazy = _pair(lambda d: gc.MNLogit.from_formula("k ~ x + z", d,
                                                        freq_weights=d["w"]), frame)
    for which in ("mean", "linear"):
        got, expected = lazy.get_prediction(which=which), mem.get_prediction(which=which)
        _same(got.summary_frame(alpha=0.2), expected.summary_frame(alpha=0.2))
        _same(got.predicted_mean, expected.predicted_mean)
        _same(got.se_mean, expected.se_mean)
    got = lazy.get_prediction().conf_int(alpha=0.2).compute()
    expected = mem.get_prediction().conf_int(alpha=0.2)
    pd.testing.assert_index_equal(got.index, expected.index, exact=False)
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=RTOL)


def test_firth_and_bayes_predictions_in_partitions(frame):
    for cls in (gc.FirthLogit, gc.BayesLogit):
        mem, lazy = _pair(lambda d, c=cls: c.from_formula("y ~ x + z", d), frame)
        _same(lazy.get_prediction().summary_frame(), mem.get_prediction().summary_frame())


def test_a_wrong_alpha_is_refused_at_once(frame):
    _, lazy = _pair(lambda d: gc.Logit.from_formula("y ~ x", d), frame)
    with pytest.raises(ValueError, match="alpha"):
        lazy.get_prediction().summary_frame(alpha=1.5)
    with pytest.raises(ValueError, match="which"):
        lazy.get_prediction(which="class")


@pytest.mark.parametrize("fit_on_dask", [False, True])
def test_new_dask_rows_are_predicted_lazily_by_a_fit_on_either_data(frame, fit_on_dask):
    """``get_prediction(ddf)``: lazy, partitioned like ``ddf``, equal to the in-memory
    prediction of the same pandas rows (offsets a Dask Series aligned with the rows)."""
    new = frame.iloc[::3].assign(off=lambda d: d.off * 2)
    ddf = dd.from_pandas(new, npartitions=3)
    formula = "count ~ x + C(g)"
    mem, lazy = _pair(lambda d: gc.GLM.from_formula(formula, d, family=F.Poisson(),
                                                    offset=d["off"]), frame)
    res = lazy if fit_on_dask else mem
    for which in ("mean", "linear"):
        got = res.get_prediction(ddf, which=which, offset=ddf["off"])
        expected = mem.get_prediction(new, which=which, offset=new["off"])
        sf = got.summary_frame(alpha=0.1)
        assert dask.is_dask_collection(sf) and sf.npartitions == 3
        _same(sf, expected.summary_frame(alpha=0.1))
        _same(got.conf_int(), expected.conf_int())
        _same(got.predicted_mean, expected.predicted_mean)
    with pytest.raises(TypeError, match="offset must be a Dask Series"):
        res.get_prediction(ddf, offset=new["off"].to_numpy()).predicted_mean  # noqa: B018


def test_new_dask_rows_of_a_multinomial_fit(frame):
    new = frame.iloc[:300]
    ddf = dd.from_pandas(new, npartitions=3)
    mem, lazy = _pair(lambda d: gc.MNLogit.from_formula("k ~ x + C(g)", d), frame)
    for res in (mem, lazy):
        got, expected = res.get_prediction(ddf), mem.get_prediction(new)
        _same(got.summary_frame(), expected.summary_frame())
        _same(got.se_mean, expected.se_mean)
        ci = got.conf_int().compute()
        pd.testing.assert_index_equal(ci.index, expected.conf_int().index)
        np.testing.assert_allclose(ci.to_numpy(), expected.conf_int().to_numpy(), rtol=RTOL)


def test_array_models_in_sample_and_on_new_dask_arrays(frame):
    """A model given design arrays (no formula): in-sample and new row-chunked Dask arrays."""
    data = frame.dropna()
    X = np.column_stack([np.ones(len(data)), data.x, data.z])
    y = data.y.to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = gc.Logit(y, X).fit()
        lazy = gc.Logit(da.from_array(y, chunks=300), da.from_array(X, chunks=(300, 3))).fit()
    _same(lazy.get_prediction().summary_frame(), mem.get_prediction().summary_frame())
    new = da.from_array(X[:500], chunks=(200, 3))
    for res in (mem, lazy):
        got = res.get_prediction(new, which="linear")
        expected = mem.get_prediction(X[:500], which="linear")
        np.testing.assert_allclose(got.summary_frame().compute().to_numpy(),
                                   expected.summary_frame().to_numpy(), rtol=RTOL)


def test_a_new_offset_for_the_rows_of_a_dask_fit_says_what_to_do(frame):
    """In-sample outputs take the fit's offsets; a new one-per-row offset on the client is
    refused (it was a TypeError, or a wrong-length error per partition), naming the way."""
    _, lazy = _pair(lambda d: gc.Logit.from_formula("y ~ x", d), frame)
    for call in (lambda: lazy.get_prediction(offset=np.zeros(len(frame))),
                 lambda: lazy.predict(offset=np.zeros(len(frame)))):
        with pytest.raises(ValueError, match=r"offset=ddf\['column'\]"):
            call()
