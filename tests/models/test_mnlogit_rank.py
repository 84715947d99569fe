"""MNLogit's rank decision at large N, made from the fit's own Hessian when it can be.

A large in-memory design whose row sample is clearly full rank is fitted on every column first;
each level's Hessian block ``2 X' diag(f p_j (1 - p_j)) X`` then bounds the pivots of X'FX, on
which R's rule decides. When the bound shows every column clearly kept, no pass forms X'FX;
otherwise X'FX decides as before, and the fit is redone only if it aliases a column."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import glmclass as gc
import glmclass.models.mnlogit as MN
from glmclass.rows.blocks import ArrayBlocks
from glmclass.solvers import sampled as SM
from glmclass.solvers.newton import multinomial_deviance


def _data(n=50_000, p=5, seed=3, K=3):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p))])
    eta = X @ rng.uniform(-0.6, 0.6, (p + 1, K - 1))
    pr = np.exp(np.column_stack([np.zeros(n), eta]))
    u = rng.uniform(size=n)[:, None]
    y = (u > np.cumsum(pr / pr.sum(1, keepdims=True), 1)).sum(1)
    return X, y


@pytest.fixture
def large(monkeypatch):
    """The large-N path (sampled Hessians, the fit before the rank decision) from 5000 rows;
    the row sample is 20 000 rows, so the designs here have 50 000."""
    monkeypatch.setattr(SM, "SAMPLED_MIN_ROWS", 5000)


def _exact(X, y, **kw):
    with pytest.MonkeyPatch.context() as m:  # the small-data path: X'FX decides first
        m.setattr(SM, "SAMPLED_MIN_ROWS", 10**12)
        return gc.MNLogit(y, X, **kw).fit()


def _calls(monkeypatch, name):
    seen = []
    original = getattr(MN.MNLogit, name)

    def spy(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        seen.append(out)
        return out

    monkeypatch.setattr(MN.MNLogit, name, spy)
    return seen


def test_a_full_rank_design_needs_no_pass_for_its_rank(large, monkeypatch):
    X, y = _data()
    w = np.random.default_rng(4).integers(1, 4, y.size).astype(float)
    aliased = _calls(monkeypatch, "_aliased")
    res = gc.MNLogit(y, X, freq_weights=w).fit()
    assert aliased == []  # the fit's Hessian decided
    ref = _exact(X, y, freq_weights=w)
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.bse, ref.bse, rtol=1e-7)
    assert res.llf == pytest.approx(ref.llf, rel=1e-12)


def test_a_collinear_design_is_decided_first_as_before(large, monkeypatch):
    X, y = _data()
    X = np.column_stack([X, X[:, 1] - 2 * X[:, 2]])  # aliased: a combination of two columns
    trials = _calls(monkeypatch, "_full_rank_fit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = gc.MNLogit(y, X).fit()
        assert trials == [None]  # the sample is not clearly full rank: no fit before deciding
        ref = _exact(X, y)
    values = res.params.to_numpy()
    assert np.isnan(values[-1]).all() and not np.isnan(values[:-1]).any()
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-8, atol=1e-10)


def test_an_inconclusive_bound_decides_on_x_f_x_and_keeps_the_fit(large, monkeypatch):
    X, y = _data()
    monkeypatch.setattr(MN, "bound_decides", lambda *a: False)
    aliased = _calls(monkeypatch, "_aliased")
    fits = []
    original = MN.solve  # the front door the model calls its solvers through

    def counted(*args, **kwargs):
        fits.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(MN, "solve", counted)
    res = gc.MNLogit(y, X).fit()
    assert len(aliased) == 1 and not aliased[0].any()
    assert len(fits) == 1  # every column kept: the fit on every column stands (no refit)
    ref = _exact(X, y)
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-8, atol=1e-10)


def test_no_fit_before_the_decision_on_dask_or_small_data(monkeypatch):
    X, y = _data(3000)
    trials = _calls(monkeypatch, "_full_rank_fit")
    gc.MNLogit(y, X).fit()
    assert trials == [None]


def test_the_weight_range_is_that_of_the_rows_at_the_full_pass():
    X, y = _data(4000, 3)
    w = np.random.default_rng(6).integers(1, 3, y.size).astype(float)
    objective = multinomial_deviance(ArrayBlocks(X, y, w, np.zeros(y.size), rows=700), 3,
                                     weight_range=True)
    assert objective.weight_range is None
    coef = np.random.default_rng(7).normal(0, 0.3, 2 * X.shape[1])
    objective(coef, "score")  # no full Hessian: nothing recorded
    assert objective.weight_range is None
    f, g, h = objective(coef, True)
    at, low, high = objective.weight_range
    eta = X @ coef.reshape(2, -1).T
    pr = np.exp(np.column_stack([np.zeros(y.size), eta]))
    pr /= pr.sum(1, keepdims=True)
    pq = pr[:, 1:] * (1 - pr[:, 1:])
    np.testing.assert_array_equal(at, coef)
    np.testing.assert_allclose(low, pq.min(0), rtol=1e-13)
    np.testing.assert_allclose(high, pq.max(0), rtol=1e-13)
    plain = multinomial_deviance(ArrayBlocks(X, y, w, np.zeros(y.size), rows=700), 3)
    f0, g0, h0 = plain(coef, True)
    assert f == f0
    np.testing.assert_allclose(g, g0, rtol=1e-14)
    np.testing.assert_allclose(h, h0, rtol=1e-14)
