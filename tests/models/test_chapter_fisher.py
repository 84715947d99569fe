"""Fisher's discriminant for K classes (PRML §4.1.6) against the notes' formulas in numpy:
S_W (eq. 4.40), S_B (eq. 4.43), the eigenvectors of S_W^-1 S_B, J(W) (eq. 4.50); and the
relation of its directions and eigenvalues to LDA's scalings and svd (MASS's normalisation)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import glmclass as gc

IRIS = gc.datasets.load("iris")
FEATS = ["Sepal_Length", "Sepal_Width", "Petal_Length", "Petal_Width"]
FORMULA = "Species ~ " + " + ".join(FEATS)


def numpy_fisher(df):
    X, y = df[FEATS].to_numpy(float), df["Species"].to_numpy()
    levels = sorted(set(y))
    m = X.mean(axis=0)
    SW = np.zeros((4, 4))
    SB = np.zeros((4, 4))
    means = []
    for lv in levels:
        Xk = X[y == lv]
        mk = Xk.mean(axis=0)
        means.append(mk)
        SW += (Xk - mk).T @ (Xk - mk)                     # eq. 4.40
        SB += len(Xk) * np.outer(mk - m, mk - m)         # eq. 4.43
    lam, vec = np.linalg.eig(np.linalg.inv(SW) @ SB)
    order = np.argsort(-lam.real)
    return X, y, levels, np.array(means), SW, SB, lam.real[order], vec.real[:, order]


@pytest.fixture(scope="module")
def fit():
    return gc.FisherDiscriminant.from_formula(FORMULA, IRIS).fit()


def test_directions_eigenvalues_and_criterion_match_prml(fit):
    X, y, levels, means, SW, SB, lam, vec = numpy_fisher(IRIS)
    assert fit.levels == levels
    assert np.max(np.abs(fit.within_scatter.to_numpy() - SW)) < 1e-10
    assert np.max(np.abs(fit.between_scatter.to_numpy() - SB)) < 1e-10
    assert list(fit.directions.columns) == ["LD1", "LD2"]  # K - 1 = 2
    assert np.max(np.abs(fit.eigenvalues.to_numpy() / lam[:2] - 1)) < 1e-10
    W = fit.directions.to_numpy()
    for j in range(2):  # the same eigenvector up to scale and sign
        v = vec[:, j] / np.linalg.norm(vec[:, j])
        w = W[:, j] / np.linalg.norm(W[:, j])
        assert min(np.max(np.abs(v - w)), np.max(np.abs(v + w))) < 1e-9
    assert np.max(np.abs(W.T @ SW @ W - np.eye(2))) < 1e-10
    J = np.trace(np.linalg.inv(W.T @ SW @ W) @ (W.T @ SB @ W))  # eq. 4.50
    assert fit.criterion == pytest.approx(J, rel=1e-12)
    assert fit.criterion == pytest.approx(lam[:2].sum(), rel=1e-10)
    # any other 2-D projection does worse
    rng = np.random.default_rng(0)
    for _ in range(20):
        R = rng.normal(size=(4, 2))
        assert np.trace(np.linalg.inv(R.T @ SW @ R) @ (R.T @ SB @ R)) < fit.criterion


def test_transform_and_nearest_projected_mean(fit):
    X, y, levels, means, *_ = numpy_fisher(IRIS)
    W = fit.directions.to_numpy()
    Y = X @ W
    assert np.max(np.abs(fit.transform().to_numpy() - Y)) < 1e-12
    d2 = ((Y[:, None, :] - (means @ W)[None, :, :]) ** 2).sum(axis=2)
    pred = np.array(levels)[np.argmin(d2, axis=1)]
    assert (fit.predict().to_numpy() == pred).all()
    assert np.max(np.abs(fit.predict(which="score").to_numpy() + d2)) < 1e-9
    new = IRIS.iloc[[0, 60, 120]]
    assert list(fit.predict(new)) == list(pred[[0, 60, 120]])
    assert fit.training_error == pytest.approx(np.mean(pred != y))
    assert fit.pred_table().to_numpy().sum() == 150
    assert "J(W)" in str(fit.summary())


@pytest.mark.parametrize("cov, d, svd2", [("mle", 150, 150 / 3), ("unbiased", 147, 147 / 2)])
def test_relation_to_lda_scalings_and_svd(fit, cov, d, svd2):
    lda = gc.LDA.from_formula(FORMULA, IRIS).fit(cov=cov)
    S = lda.scalings.to_numpy()
    W = fit.directions.to_numpy()
    for j in range(2):
        ratio = S[:, j] / W[:, j]
        assert np.max(np.abs(np.abs(ratio) / np.sqrt(d) - 1)) < 1e-9
    assert np.max(np.abs(lda.svd.to_numpy() ** 2 / (svd2 * fit.eigenvalues.to_numpy()) - 1)) \
        < 1e-9


def test_two_classes_keep_their_results_and_gain_the_eigenvalue():
    d = IRIS[IRIS.Species != "setosa"]
    res = gc.FisherDiscriminant.from_formula(FORMULA, d).fit()
    X, y, levels, means, SW, SB, lam, vec = numpy_fisher(d)
    assert res.eigenvalues.iloc[0] == pytest.approx(lam[0], rel=1e-10)
    n1, n2 = (y == levels[0]).sum(), (y == levels[1]).sum()
    assert res.eigenvalues.iloc[0] == pytest.approx(n1 * n2 / (n1 + n2) * res.criterion,
                                                    rel=1e-12)
    w = res.directions["LD1"].to_numpy()
    assert w @ SW @ w == pytest.approx(1.0, rel=1e-12)
    assert np.max(np.abs(w / np.linalg.norm(w) - res.direction.to_numpy())) < 1e-12


def test_k_classes_refuse_the_lda_threshold_and_probabilities(fit):
    with pytest.raises(ValueError, match="threshold='lda' is the two-class rule"):
        gc.FisherDiscriminant.from_formula(FORMULA, IRIS).fit(threshold="lda")
    with pytest.raises(ValueError, match="no class probabilities"):
        fit.predict(which="prob")


def test_collinear_class_means_give_fewer_discriminants():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 3))
    y = np.repeat(["a", "b", "c"], 30)
    X[y == "b", 0] += 3.0
    X[y == "c", 0] += 6.0  # the means lie on a line: one discriminant
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"]).assign(y=y)
    res = gc.FisherDiscriminant.from_formula("y ~ x1 + x2 + x3", df).fit()
    # the sample means are not exactly collinear: two eigenvalues, the second tiny
    assert res.eigenvalues.iloc[0] > 100 * res.eigenvalues.iloc[-1]


def test_k_classes_on_dask_equal_the_in_memory_fit():
    dask = pytest.importorskip("dask")
    import dask.dataframe as dd

    df = IRIS.copy()
    df.loc[[3, 77], "Petal_Width"] = np.nan
    with dask.config.set(scheduler="sync"):
        mem = gc.FisherDiscriminant.from_formula(FORMULA, df).fit()
        lazy = gc.FisherDiscriminant.from_formula(FORMULA, dd.from_pandas(df, npartitions=4)).fit()
        for a in ("directions", "eigenvalues", "within_scatter", "between_scatter",
                  "projected_means"):
            np.testing.assert_allclose(getattr(lazy, a).to_numpy(), getattr(mem, a).to_numpy(),
                                       rtol=1e-10, atol=1e-10)
        assert lazy.criterion == pytest.approx(mem.criterion, rel=1e-10)
        assert lazy.training_error == mem.training_error
        pd.testing.assert_frame_equal(lazy.pred_table(), mem.pred_table())
        got = lazy.predict().compute()
        assert [None if pd.isna(v) else v for v in got] == \
            [None if pd.isna(v) else v for v in mem.predict()]
        np.testing.assert_allclose(lazy.transform().compute().to_numpy(),
                                   mem.transform().to_numpy(), rtol=1e-10, atol=1e-10)
