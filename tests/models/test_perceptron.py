"""The perceptron against R (chapter.json: Rosenblatt's loop, rows in order) and scikit-learn
(the same algorithm as SGD on the perceptron loss), its convergence on separable data, its
warning and pocket on data that are not, and the ambiguous points of the multiclass schemes."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "chapter.json").read_text())["perceptron"]
IRIS = pd.read_csv(REF / "data" / "iris.csv")
SEPAL = "Species ~ Sepal_Length + Sepal_Width"


def _pair(name: str) -> pd.DataFrame:
    drop = "virginica" if "setosa" in name else "setosa"
    return IRIS[IRIS.Species != drop].reset_index(drop=True)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_perceptron_agrees_with_r(case):
    model = gcf.perceptron(case["patsy_formula"], _pair(case["name"]), shuffle=False,
                           learning_rate=case["learning_rate"], max_epochs=case["max_epochs"],
                           pocket=case["pocket"])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = model.fit()
    np.testing.assert_allclose(res.params.to_numpy(), case["weights"], rtol=1e-12, atol=1e-12)
    assert res.converged == case["converged"] and res.n_epochs == case["n_epochs"]
    np.testing.assert_array_equal(res.history.to_numpy(), case["history"])
    np.testing.assert_array_equal(res.updates.to_numpy(), case["updates"])
    assert res._fits[next(iter(res._fits))].best_epoch == case["best_epoch"]
    warned = [w for w in rec if issubclass(w.category, gc.ConvergenceWarning)]
    assert bool(warned) == (not case["converged"])


def test_perceptron_agrees_with_scikit_learn():
    from sklearn.linear_model import Perceptron as SkPerceptron

    d = _pair("setosa")
    for eta in (1.0, 0.25):
        res = gcf.perceptron(SEPAL, d, shuffle=False, learning_rate=eta).fit()
        m = res.model
        t = np.where(m.codes == 1, 1, -1)
        sk = SkPerceptron(fit_intercept=False, shuffle=False, eta0=eta, penalty=None, tol=None,
                          max_iter=res.n_epochs).fit(m.exog, t)
        np.testing.assert_allclose(res.params.to_numpy(), sk.coef_[0], rtol=1e-12)


def test_separable_data_converge_to_zero_errors_with_shuffling():
    d = _pair("setosa")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gcf.perceptron(SEPAL, d, seed=3).fit()
    assert res.converged and res.history.iloc[-1] == 0 and res.training_error == 0.0
    assert res.n_epochs == len(res.history) < 1000
    again = gcf.perceptron(SEPAL, d, seed=3).fit()  # an int seed makes fits identical
    pd.testing.assert_series_equal(res.params, again.params)
    t = np.where(res.model.codes == 1, 1.0, -1.0)
    assert np.all(t * res.predict(which="score").to_numpy() > 0)


def test_non_separable_data_warn_and_the_pocket_keeps_the_best():
    d = _pair("virginica")
    with pytest.warns(gc.ConvergenceWarning, match="not be linearly separable.*pocket=True"):
        last = gcf.perceptron(SEPAL, d, seed=0, max_epochs=60).fit()
    with pytest.warns(gc.ConvergenceWarning, match="pocket weights are kept"):
        best = gcf.perceptron(SEPAL, d, seed=0, max_epochs=60, pocket=True).fit()
    assert not last.converged and last.n_epochs == 60
    # same seed, same run: the pocket holds the best end-of-epoch weights of it
    pd.testing.assert_series_equal(last.history, best.history)
    assert best.training_error * len(d) == best.history.min()
    assert best.training_error <= last.training_error
    assert "pocket" in str(best.summary())


def test_multiclass_one_vs_rest_and_one_vs_one_report_ambiguous_points():
    with pytest.raises(ValueError, match="endog.*3 levels.*multiclass='ovr'"):
        gcf.perceptron(SEPAL, IRIS)
    with pytest.warns(gc.ConvergenceWarning):
        ovr = gcf.perceptron(SEPAL, IRIS, multiclass="ovr", seed=1, max_epochs=30,
                             pocket=True).fit()
    assert list(ovr.params.columns) == ["setosa", "versicolor", "virginica"]
    s = ovr.predict(which="score").to_numpy()
    claims = (s > 0).sum(axis=1)
    np.testing.assert_array_equal(ovr.ambiguous.to_numpy(), claims != 1)
    assert ovr.n_ambiguous == int((claims != 1).sum()) > 0
    lab = ovr.predict(ambiguous="missing")
    assert lab.isna().sum() == ovr.n_ambiguous
    full = ovr.predict()  # argmax of the scores
    assert full.notna().all()
    np.testing.assert_array_equal(full.to_numpy(), np.array(ovr.levels)[s.argmax(axis=1)])
    assert set(ovr.history.columns) == {"setosa", "versicolor", "virginica"}

    with pytest.warns(gc.ConvergenceWarning):
        ovo = gcf.perceptron(SEPAL, IRIS, multiclass="ovo", seed=1, max_epochs=30,
                             pocket=True).fit()
    assert list(ovo.params.columns) == ["versicolor vs setosa", "virginica vs setosa",
                                        "virginica vs versicolor"]
    votes = ovo.predict(which="votes")
    np.testing.assert_allclose(votes.sum(axis=1), 3.0)
    tie = (votes.to_numpy() == votes.to_numpy().max(axis=1, keepdims=True)).sum(axis=1) > 1
    np.testing.assert_array_equal(ovo.ambiguous.to_numpy(), tie)
    # a point between the three class means is claimed by nobody under one-vs-rest
    centre = pd.DataFrame({"Sepal_Length": [IRIS.Sepal_Length.mean()],
                           "Sepal_Width": [IRIS.Sepal_Width.mean()]})
    assert isinstance(bool(ovr.predict(centre, which="ambiguous").iloc[0]), bool)


def test_prediction_contract_and_bad_arguments():
    d = _pair("setosa")
    res = gcf.perceptron(SEPAL, d, seed=0).fit()
    with pytest.raises(ValueError, match="no class probabilities"):
        res.predict(which="prob")
    with pytest.raises(ValueError, match="votes.*ovo"):
        res.predict(which="votes")
    with pytest.raises(ValueError, match="ambiguous"):
        res.predict(ambiguous="drop")
    for bad in (0, 0.0, -1.0, np.inf, "1", True):
        with pytest.raises(ValueError, match="learning_rate"):
            gcf.perceptron(SEPAL, d, learning_rate=bad)
    for bad in (0, 2.5, -3):
        with pytest.raises(ValueError, match="max_epochs"):
            gcf.perceptron(SEPAL, d, max_epochs=bad)
    with pytest.raises(ValueError, match="seed"):
        gcf.perceptron(SEPAL, d, seed=-1)
    with pytest.raises(ValueError, match="multiclass"):
        gcf.perceptron(SEPAL, d, multiclass="all")
    X = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    res = gc.Perceptron([0, 0, 1, 1], X, shuffle=False).fit()
    assert res.converged and list(res.predict(np.array([[1.0, -5.0], [1.0, 9.0]]))) == [0, 1]
