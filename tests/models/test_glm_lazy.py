"""What a small fit postpones or skips must not change what users see: the null deviance made
when first asked, and the response checks that the response encoding already made."""

from __future__ import annotations

import io

import numpy as np
import pytest

import glmclass as gc
from glmclass import families as F
from glmclass.models.glm_base import GLMProblem, constant
from glmclass.solvers.control import Control

RNG = np.random.default_rng(14)
N = 120
X = np.column_stack([np.ones(N), RNG.normal(size=(N, 2))])
Y = (RNG.uniform(size=N) < 1 / (1 + np.exp(-(0.3 + X[:, 1] - X[:, 2])))).astype(float)


@pytest.fixture
def deviance_calls(monkeypatch):
    """Every ``GLMProblem.deviance_at`` call, recorded (and passed through)."""
    calls = []
    original = GLMProblem.deviance_at

    def spy(self, intercept):
        calls.append(intercept)
        return original(self, intercept)

    monkeypatch.setattr(GLMProblem, "deviance_at", spy)
    return calls


@pytest.mark.parametrize("columns", [slice(None), slice(1, None)], ids=["intercept", "none"])
@pytest.mark.parametrize("make", [
    lambda y, x: gc.Logit(y, x),
    lambda y, x: gc.Probit(y, x),
    lambda y, x: gc.GLM(y * 3, x, family=F.Poisson()),
    lambda y, x: gc.BayesLogit(y, x),
], ids=["logit", "probit", "poisson", "bayeslogit"])
def test_null_deviance_is_made_once_when_first_asked_and_equals_the_eager_one(
        deviance_calls, make, columns):
    model = make(Y, X[:, columns])
    eager = model.problem.null_fit(Control()).deviance  # the eager record
    deviance_calls.clear()
    res = model.fit()
    assert deviance_calls == []  # the fit did not make it
    assert res._null.deviance is None
    first = res.null_deviance
    assert first == eager  # bitwise: the same call on the same rows
    assert res.null_deviance == first
    assert len(deviance_calls) == 1


def test_an_iterated_null_fit_keeps_its_deviance_from_the_fit(deviance_calls):
    """With an offset the intercept-only fit is IRLS: done in ``fit()`` as before (its errors
    surface there), its deviance recorded."""
    offset = RNG.normal(scale=0.3, size=N)
    model = gc.Logit(Y, X, offset=offset)
    res = model.fit()
    assert res._null.deviance is not None
    assert res.null_deviance == model.problem.null_fit(Control()).deviance
    assert deviance_calls == []


def test_null_deviance_is_kept_by_a_copy_without_the_rows():
    res = gc.Logit(Y, X).fit()
    buf = io.BytesIO()
    res.save(buf, remove_data=True)
    assert res._null.deviance is None  # the results in memory are not changed
    buf.seek(0)
    small = gc.load(buf)
    assert small.data_removed
    assert small.null_deviance == res.null_deviance
    assert small.summary() is not None


def test_the_likelihood_ratio_agrees_with_the_lazy_null_deviance():
    """For 0/1 responses llnull = -null_deviance / 2, so llr = null_deviance - deviance."""
    model = gc.Logit(Y, X)
    eager = model.problem.null_fit(Control()).deviance
    res = model.fit()
    assert res.llr == pytest.approx(eager - res.deviance, rel=1e-12)
    assert res.null_deviance == eager


# --- response checks made once ---------------------------------------------------------------
def test_a_single_class_among_positive_weights_still_raises():
    w = np.where(Y == 1, 1.0, 0.0)
    with pytest.raises(ValueError, match="only successes among the rows with positive"):
        gc.Logit(Y, X, freq_weights=w)


def test_a_single_class_still_raises_without_weights():
    with pytest.raises(ValueError, match="class|level|only"):
        gc.Logit(np.ones(N), X)


def test_proportions_outside_zero_one_still_raise():
    with pytest.raises(ValueError, match="1.5"):
        gc.GLM(np.where(Y == 1, 1.5, 0.2), X)


def test_a_binomial_subclass_keeps_its_own_response_check():
    class Strict(F.Binomial):
        def check_endog(self, y):
            raise ValueError("strict says no")

    with pytest.raises(ValueError, match="strict says no"):
        gc.GLM(Y, X, family=Strict())


@pytest.mark.parametrize("value", [0.0, 1.0, 2.5])
def test_constant_is_a_read_only_view_of_one_value(value):
    c = constant(value, 7)
    assert c.shape == (7,) and c.strides == (0,) and not c.flags.writeable
    assert np.array_equal(c, np.full(7, value))
    with pytest.raises(ValueError):
        c[0] = 3.0


# --- labels and covariance made without detours ----------------------------------------------
def test_params_are_labelled_when_first_asked_and_bse_shares_their_labels():
    res = gc.Logit(Y, X).fit()
    assert "params" not in vars(res)
    bse = res.bse
    assert "params" not in vars(res)  # bse needed only the labels
    assert res.params.index is res.model.data.exog_index
    assert bse.index.equals(res.params.index) and res.pvalues.index.equals(res.params.index)
    assert np.array_equal(res.params.to_numpy(), res._fit.coef)
    assert res.params.name == "coef" and res.params is res.params


def test_the_solver_inverse_without_aliased_columns_is_the_solvers_bitwise():
    res = gc.Logit(Y, X).fit()
    keep = np.ones(X.shape[1], dtype=bool)
    assert np.array_equal(res.solver_inverse, res._fit.gram_inverse(keep))


@pytest.mark.parametrize("n, p", [(50, 3), (3001, 4), (4096, 2)],
                         ids=["abs-max", "folded-odd", "folded-even"])
def test_column_scale_is_the_largest_absolute_value_of_each_kept_column(n, p):
    x = RNG.normal(size=(n, p)) * np.array([1e-3, 1.0, 1e3, 7.0])[:p]
    x[RNG.integers(n), 1] = -50.0  # a negative extreme
    x[-1, 0] = -3.0  # in the last row, which an odd fold sets aside
    problem = gc.Logit(RNG.integers(0, 2, n).astype(float), x).problem
    for keep in (np.ones(p, dtype=bool), np.array([True, False, True, True])[:p]):
        assert np.array_equal(problem.column_scale(keep), np.abs(x[:, keep]).max(axis=0))
