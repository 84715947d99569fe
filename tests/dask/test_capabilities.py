"""The capabilities models ask of their data and row source instead of testing for Dask:
``ModelData.in_memory`` / ``supports_exact_lp``, ``RowBlocks.in_memory`` and
``positive_weights``, and the data adapter's ``encoded_rows`` / ``row_array`` / ``sum_parts``
that the one :class:`~glmclass.models.glm_problem.GLMProblem` reads rows not in memory with."""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pytest

import glmclass as gc
from glmclass.models.glm_problem import GLMProblem
from glmclass.rows.blocks import ArrayBlocks
from glmclass.solvers.control import Control


def _gram(b) -> np.ndarray:
    return (b.X * b.weights[:, None]).T @ b.X


@pytest.fixture(scope="module")
def pair(frame):
    data = frame.dropna().copy()
    data.loc[data.index[::7], "w"] = 0.0  # rows of weight 0: left out of the fit
    ddf = dd.from_pandas(data, npartitions=4)
    f = "count ~ x + z + C(g)"
    fam = gc.families.Poisson()
    mem = gc.GLM.from_formula(f, data, family=fam, freq_weights="w", offset="off")
    lazy = gc.GLM.from_formula(f, ddf, family=fam, freq_weights="w", offset="off")
    return mem, lazy


def test_capabilities_say_where_the_rows_are(pair):
    mem, lazy = pair
    assert mem.data.in_memory and mem.data.supports_exact_lp
    assert not lazy.data.in_memory and not lazy.data.supports_exact_lp
    assert mem.problem.blocks().in_memory and mem.problem.rows is None
    assert not lazy.problem.blocks().in_memory
    assert type(mem.problem) is type(lazy.problem) is GLMProblem


def test_positive_weights_equals_the_mask_of_positive_rows(pair):
    mem, lazy = pair
    w = mem.problem.prior_weights
    src = ArrayBlocks(mem.exog, mem.endog, w, mem.offset, rows=100)
    kept = src.positive_weights()
    assert kept.n_rows == int((w > 0).sum()) < src.n_rows
    want = src.take_rows(w > 0).reduce(_gram, np.zeros((mem.exog.shape[1],) * 2))
    got = kept.reduce(_gram, np.zeros_like(want))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    lazy_rows = lazy.problem.fit_rows()
    assert lazy_rows.n_rows == kept.n_rows
    np.testing.assert_allclose(lazy_rows.reduce(_gram, np.zeros_like(want)), want, rtol=1e-10)


def test_the_problem_over_parts_matches_the_one_in_memory(pair):
    mem, lazy = pair
    pm, pl = mem.problem, lazy.problem
    assert pl.nobs == pm.nobs
    np.testing.assert_allclose(np.asarray(pl.endog), pm.endog, rtol=0)
    np.testing.assert_allclose(np.asarray(pl.offset), pm.offset, rtol=0)
    np.testing.assert_allclose(np.asarray(pl.prior_weights), pm.prior_weights, rtol=0)
    coef = np.array([0.3, 0.1, 0.2, -0.1, 0.05])
    eta = pm.linear_predictor(coef)
    np.testing.assert_allclose(np.asarray(pl.linear_predictor(coef)), eta, rtol=1e-12)
    # the log-likelihood pairs each part with its chunk of eta (lazy or in memory)
    want = pm.loglik(eta, pm.nobs)
    assert abs(pl.loglik(pl.linear_predictor(coef), pl.nobs) - want) <= 1e-10 * abs(want)
    assert abs(pl.loglik(eta, pl.nobs) - want) <= 1e-10 * abs(want)
    keep = np.ones(coef.size, dtype=bool)
    for observed in (False, True):
        np.testing.assert_allclose(pl.information(coef, keep, observed),
                                   pm.information(coef, keep, observed), rtol=1e-10)
    null_m, null_l = pm.null_fit(Control()), pl.null_fit(Control())
    assert abs(null_l.intercept - null_m.intercept) <= 1e-10 * abs(null_m.intercept)
    dev = pm.deviance_at(null_m.intercept)
    assert abs(null_l.deviance - dev) <= 1e-9 * abs(dev)


def test_sum_parts_and_row_array(pair):
    mem, lazy = pair
    data = lazy.data

    def rows_and_weight(part, chunk=None):
        f = part[2]["freq_weights"]
        return np.array([len(part[3]), f.sum(), 0.0 if chunk is None else float(f @ chunk)])

    x = np.arange(mem.data.nrows, dtype=float)
    got = data.sum_parts(rows_and_weight, along=x)
    w = mem.freq_weights
    np.testing.assert_allclose(got, [mem.data.nrows, w.sum(), w @ x], rtol=1e-12)
    np.testing.assert_allclose(data.sum_parts(rows_and_weight)[:2], got[:2], rtol=0)
    np.testing.assert_array_equal(np.asarray(data.row_array("var_weights", 1.0)),
                                  np.ones(mem.data.nrows))
    np.testing.assert_array_equal(np.asarray(data.row_array("freq_weights", 1.0)), w)
