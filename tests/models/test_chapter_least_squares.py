"""Least squares for classification in the notes' notation (PRML §4.1.1-4.1.5) against numpy:
the targets N/N_1, -N/N_2 give Fisher's direction and the bias -w'm (§4.1.5), any target
coding is W = X^+ T, the signed distance y(x)/||w|| (eq. 4.7), masking by class (Fig. 4.5);
and the decision boundary of a Bayesian fit at the MAP and moderated (Fig. 4.13)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import special

import glmclass as gc

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

IRIS = gc.datasets.load("iris")
FEATS = ["Sepal_Length", "Sepal_Width", "Petal_Length", "Petal_Width"]
FORMULA = "Species ~ " + " + ".join(FEATS)
TWO = IRIS[IRIS.Species != "setosa"].reset_index(drop=True)


def design(df):
    return np.column_stack([np.ones(len(df)), df[FEATS].to_numpy(float)])


def test_fisher_targets_give_fishers_direction_and_bias():
    res = gc.LeastSquaresClassifier.from_formula(FORMULA, TWO, targets="fisher").fit()
    X, y = design(TWO), TWO.Species.to_numpy()
    c1 = y == "versicolor"
    N, N1, N2 = len(y), c1.sum(), (~c1).sum()
    t = np.where(c1, N / N1, -N / N2)
    W = np.linalg.lstsq(X, t, rcond=None)[0]
    assert list(res.params.columns) == ["y"]
    assert np.max(np.abs(res.params["y"].to_numpy() - W)) < 1e-10
    F = X[:, 1:]
    m1, m2, m = F[c1].mean(0), F[~c1].mean(0), F.mean(0)
    SW = (F[c1] - m1).T @ (F[c1] - m1) + (F[~c1] - m2).T @ (F[~c1] - m2)
    fisher = np.linalg.solve(SW, m2 - m1)
    w = res.params["y"].to_numpy()[1:]
    cos = w @ fisher / np.linalg.norm(w) / np.linalg.norm(fisher)
    assert abs(cos) == pytest.approx(1.0, abs=1e-12)           # w ∝ S_W^-1 (m2 - m1)
    assert res.params["y"].iloc[0] == pytest.approx(-w @ m, rel=1e-10)  # w0 = -w'm
    fd = gc.FisherDiscriminant.from_formula(FORMULA, TWO).fit()
    assert np.max(np.abs(-w / np.linalg.norm(w) - fd.direction.to_numpy())) < 1e-10
    pred = np.where(X @ W > 0, "versicolor", "virginica")  # y(x) > 0: C1
    assert (res.predict(which="class").to_numpy() == pred).all()
    assert "Fisher" in str(res.summary())


def test_any_coding_is_w_equals_x_pinv_t_and_nearest_target():
    coding = {"setosa": [1.0, 0.0], "versicolor": [0.0, 1.0], "virginica": [-1.0, -1.0]}
    res = gc.LeastSquaresClassifier.from_formula(FORMULA, IRIS, targets=coding).fit()
    X = design(IRIS)
    C = np.array([coding[lv] for lv in ["setosa", "versicolor", "virginica"]])
    T = C[pd.Categorical(IRIS.Species).codes]
    W = np.linalg.pinv(X) @ T
    assert np.max(np.abs(res.params.to_numpy() - W)) < 1e-10
    Y = X @ W
    near = np.argmin(((Y[:, None, :] - C[None]) ** 2).sum(-1), axis=1)
    labels = np.array(["setosa", "versicolor", "virginica"])
    assert (res.predict(which="class").to_numpy() == labels[near]).all()
    assert np.max(np.abs(res.resid.to_numpy() - (T - Y))) < 1e-10


def test_signed_distance_is_y_over_norm_w():
    res = gc.LeastSquaresClassifier.from_formula(FORMULA, IRIS).fit()
    X = design(IRIS)
    T = np.eye(3)[pd.Categorical(IRIS.Species).codes]
    W = np.linalg.lstsq(X, T, rcond=None)[0]
    r = (X @ W) / np.linalg.norm(W[1:], axis=0)              # eq. 4.7: y(x) / ||w||
    assert np.max(np.abs(res.predict(which="distance").to_numpy() - r)) < 1e-10
    fd = gc.FisherDiscriminant.from_formula(FORMULA, TWO).fit()
    np.testing.assert_allclose(fd.predict(which="distance"), fd.predict(which="score"))


def test_masked_share_counts_points_taken_by_another_class():
    rng = np.random.default_rng(0)  # three classes along a line: the middle one is masked
    x = np.concatenate([rng.normal(-4, 1, 100), rng.normal(0, 1, 100), rng.normal(4, 1, 100)])
    df = pd.DataFrame({"x": x, "y": np.repeat(["a", "b", "c"], 100),
                       "x2": rng.normal(size=300)})
    res = gc.LeastSquaresClassifier.from_formula("y ~ x + x2", df).fit()
    X = np.column_stack([np.ones(300), x, df.x2])
    T = np.eye(3)[np.repeat([0, 1, 2], 100)]
    pred = np.argmax(X @ np.linalg.lstsq(X, T, rcond=None)[0], axis=1)
    own = np.repeat([0, 1, 2], 100)
    share = [np.mean(pred[own == k] != k) for k in range(3)]
    np.testing.assert_allclose(res.masked_share.to_numpy(), share, rtol=0, atol=1e-15)
    assert res.masked_share["b"] > 0.5
    quad = gc.LeastSquaresClassifier.from_formula("y ~ x + I(x**2)", df).fit()
    assert quad.masked_share["b"] < 0.2 and not quad.masked_levels


@pytest.mark.parametrize("targets, msg", [
    ("fisher", "two classes"),
    ({"setosa": 1.0}, "missing \\['versicolor', 'virginica'\\]"),
    ("bad", "targets must be None, 'fisher'"),
    (np.ones((2, 2)), "one finite target"),
])
def test_bad_targets_are_named(targets, msg):
    with pytest.raises(ValueError, match=msg):
        gc.LeastSquaresClassifier.from_formula(FORMULA, IRIS, targets=targets)


def test_decision_boundary_map_and_moderated_for_bayes():
    sp = gc.datasets.load("spector")
    res = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE", sp, prior_scale=2.0).fit()
    grids = {}
    for method in ("map", "moderated"):
        ax = gc.plot.decision_boundary(res, sp, method=method, resolution=20, colorbar=False)
        grids[method] = ax.images[0].get_array()
        scatter = [c for c in ax.collections if c.get_offsets().shape[0] > 0]
        for c in scatter[-2:]:  # the points have a black edge
            assert np.allclose(c.get_edgecolor()[0][:3], 0.0)
    gx = np.linspace(*ax.get_xlim(), 20)
    gy = np.linspace(*ax.get_ylim(), 20)
    xx, yy = np.meshgrid(gx, gy)
    Xg = np.column_stack([np.ones(xx.size), xx.ravel(), yy.ravel()])
    w, S = res.params.to_numpy(), res.cov_params().to_numpy()
    mu, var = Xg @ w, np.einsum("ij,jk,ik->i", Xg, S, Xg)
    np.testing.assert_allclose(np.asarray(grids["map"]).ravel(), special.expit(mu), atol=1e-12)
    moderated = special.expit(mu / np.sqrt(1 + np.pi * var / 8))  # eq. 4.155
    np.testing.assert_allclose(np.asarray(grids["moderated"]).ravel(), moderated, atol=1e-12)
    logit = gc.Logit.from_formula("GRADE ~ GPA + TUCE", sp).fit()
    with pytest.raises(ValueError, match="for Bayesian fits"):
        gc.plot.decision_boundary(logit, sp, method="map")
    plt.close("all")
