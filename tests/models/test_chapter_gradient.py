"""The lecture notes' gradient loops (batch / stochastic / mini-batch gradient descent) written
in numpy, against ``Logit.fit(method=..., shuffle=False, variance_reduction=False)``: the same
steps in the same row order give the same coefficients, and ``history`` is the deviance, 2N
times the notes' mean cross-entropy."""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import special

import glmclass as gc

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REF = Path(__file__).resolve().parents[1] / "reference"
SPECTOR = pd.read_csv(REF / "data" / "spector.csv")
FORMULA = "GRADE ~ GPA + TUCE + PSI"


def design():
    X = np.column_stack([np.ones(len(SPECTOR)), SPECTOR[["GPA", "TUCE", "PSI"]].to_numpy()])
    return X, SPECTOR["GRADE"].to_numpy(dtype=float)


def cross_entropy(w):
    """The notes' E(w) = -(1/N) sum [t ln y + (1 - t) ln(1 - y)]."""
    X, t = design()
    a = X @ w
    return float(np.mean(np.logaddexp(0, a) - t * a))


def notes_loop(w, batch, epochs, eta, per_step=False):
    """w <- w - eta_k (1/B) sum_{n in batch} (y_n - t_n) phi_n, rows in order."""
    X, t = design()
    N, k, hist = len(t), 0, []
    for _ in range(epochs):
        for s in range(0, N, batch):
            xb, tb = X[s:s + batch], t[s:s + batch]
            w = w - eta(k) * xb.T @ (special.expit(xb @ w) - tb) / len(tb)
            k += 1
            if per_step:
                hist.append(2 * N * cross_entropy(w))
        if not per_step:
            hist.append(2 * N * cross_entropy(w))
    return w, np.array(hist)


def fit(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.ConvergenceWarning)
        return gc.Logit.from_formula(FORMULA, SPECTOR).fit(**kw)


START = np.array([-3.0, 0.5, 0.02, 1.0])


@pytest.mark.parametrize("method, batch", [("sgd", 1), ("minibatch", 5), ("minibatch", 32)])
def test_plain_steps_in_row_order_are_the_notes_loop(method, batch):
    kw = {"batch_size": batch} if method == "minibatch" else {}
    res = fit(method=method, shuffle=False, variance_reduction=False, learning_rate=0.01,
              max_epochs=4, start_params=START, **kw)
    w, hist = notes_loop(START, batch, 4, lambda k: 0.01)
    assert np.max(np.abs(res.params.to_numpy() - w)) < 1e-12
    assert np.max(np.abs(res.history.to_numpy() / hist - 1)) < 1e-12
    assert res.history.index.name == "epoch"
    assert "plain, without variance reduction" in str(res.summary())


def test_history_per_step_and_callable_learning_rate():
    eta = lambda k: 0.05 / (1 + k) ** 0.6  # noqa: E731
    res = fit(method="sgd", shuffle=False, variance_reduction=False, learning_rate=eta,
              max_epochs=2, start_params=START, history="step")
    w, hist = notes_loop(START, 1, 2, eta, per_step=True)
    assert np.max(np.abs(res.params.to_numpy() - w)) < 1e-12
    assert len(res.history) == 2 * len(SPECTOR)
    assert np.max(np.abs(res.history.to_numpy() / hist - 1)) < 1e-12
    assert res.history.index.name == "step"
    assert res.gradient_norms.index.name == "step"
    ax = gc.plot.loss_history(res)
    assert ax.get_xlabel() == "step"
    plt.close("all")


def test_batch_descent_with_a_schedule_and_the_deviance_scale():
    eta = lambda k: 0.5 / (1 + k)  # noqa: E731
    res = fit(method="gd", learning_rate=eta, max_epochs=5, start_params=START)
    w, hist = notes_loop(START, len(SPECTOR), 5, eta)
    assert np.max(np.abs(res.params.to_numpy() - w)) < 1e-12
    assert res.history.index.name == "iteration"
    # history is the deviance: 2 N times the mean cross-entropy
    assert res.history.iloc[-1] == pytest.approx(2 * len(SPECTOR) * cross_entropy(w), rel=1e-12)
    assert res.deviance == pytest.approx(res.history.iloc[-1], rel=1e-12)


def test_default_start_is_the_intercept_only_fit():
    X, t = design()
    start = np.array([special.logit(t.mean()), 0.0, 0.0, 0.0])
    res = fit(method="sgd", shuffle=False, variance_reduction=False, learning_rate=0.01,
              max_epochs=1)
    w, _ = notes_loop(start, 1, 1, lambda k: 0.01)
    assert np.max(np.abs(res.params.to_numpy() - w)) < 1e-12


def test_shuffled_order_differs_and_svrg_is_not_called_plain():
    kw = dict(method="sgd", variance_reduction=False, learning_rate=0.01, max_epochs=2,
              start_params=START)
    ordered = fit(shuffle=False, **kw)
    shuffled = fit(shuffle=True, seed=3, **kw)
    again = fit(shuffle=True, seed=3, **kw)
    assert np.max(np.abs(shuffled.params - ordered.params)) > 1e-6
    assert np.array_equal(shuffled.params, again.params)
    svrg = fit(method="sgd", seed=1, max_epochs=2)
    assert "without variance reduction" not in str(svrg.summary())


@pytest.mark.parametrize("kw, msg", [
    ({"learning_rate": lambda k: 0.1, "schedule": "inverse"}, "leave schedule='constant'"),
    ({"learning_rate": lambda k: -1.0}, r"learning_rate\(0\) returned -1.0"),
    ({"shuffle": "no"}, "shuffle must be True or False"),
    ({"history": "batch"}, "history must be 'epoch' or 'step'"),
])
def test_bad_gradient_options_are_named(kw, msg):
    with pytest.raises(ValueError, match=msg):
        gc.Logit.from_formula(FORMULA, SPECTOR).fit(method="sgd", max_epochs=1, **kw)


def test_gradient_options_refused_for_irls():
    with pytest.raises(ValueError, match="shuffle applies to the gradient methods"):
        gc.Logit.from_formula(FORMULA, SPECTOR).fit(shuffle=False)
