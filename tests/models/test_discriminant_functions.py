"""Least squares on indicator targets and Fisher's discriminant against R (chapter.json: lm with
a matrix response, MASS::lda's two-class scaling), ESL's masking example, and PRML §4.1.5's
equivalence of Fisher with least squares under the N/N1, -N/N2 coding."""

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
J = json.loads((REF / "chapter.json").read_text())
LS = {c["name"]: c for c in J["least_squares"]}
FISHER = {c["name"]: c for c in J["fisher"]}


def _data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv", keep_default_na=False, na_values=[""])


def masking_data() -> pd.DataFrame:
    """ESL Fig. 4.2 as chapter.R builds it: classes a, b, c on the line x1 = x2."""
    u, v = np.meshgrid(np.linspace(-1.5, 1.5, 7), np.linspace(-1.25, 1.25, 6))  # as expand.grid
    rows = [pd.DataFrame({"x1": m + u.ravel(), "x2": m + v.ravel(), "g": lab})
            for m, lab in ((-4.0, "a"), (0.0, "b"), (4.0, "c"))]
    return pd.concat(rows, ignore_index=True)


def _ls_data(name: str) -> pd.DataFrame:
    return {"iris": lambda: _data("iris"), "birthwt_race": lambda: _data("birthwt")}.get(
        name, masking_data)()


R2PATSY = {"(Intercept)": "Intercept", "factor(ftv > 0)TRUE": "C(ftv > 0)[T.True]",
           "I(x1^2)": "I(x1 ** 2)", "I(x2^2)": "I(x2 ** 2)"}


@pytest.mark.parametrize("name", list(LS))
def test_least_squares_agrees_with_r_lm(name):
    case = LS[name]
    res = gcf.least_squares(case["patsy_formula"], _ls_data(name)).fit()
    assert res.levels == case["levels"] and res.rank == case["rank"]
    r_order = [R2PATSY.get(n, n) for n in case["coef_names"]]  # patsy puts C() terms first
    assert sorted(r_order) == sorted(res.params.index)
    np.testing.assert_allclose(res.params.loc[r_order].to_numpy(), case["coef"], rtol=1e-10,
                               atol=1e-13)
    np.testing.assert_allclose(res.fittedvalues.to_numpy(), case["fitted"], rtol=1e-10,
                               atol=1e-12)
    assert list(res.predict(which="class")) == case["pred_class"]
    assert res.n_outside == case["n_outside"] and res.outside == (case["n_outside"] > 0)
    np.testing.assert_allclose(res.fittedvalues.sum(axis=1), 1.0, rtol=1e-12)  # intercept


def test_masking_the_middle_class_and_basis_functions_undo_it():
    df = masking_data()
    lin = gcf.least_squares("g ~ x1 + x2", df).fit()
    assert lin.masked_levels == ["b"]
    assert "b" not in set(lin.predict(which="class"))
    assert "masked" in str(lin.summary())
    # the middle class's score is flat: its coefficients on x1, x2 vanish
    np.testing.assert_allclose(lin.params.loc[["x1", "x2"], "b"], 0.0, atol=1e-14)
    quad = gcf.least_squares("g ~ x1 + x2 + I(x1**2) + I(x2**2) + I(x1 * x2)", df).fit()
    assert quad.masked_levels == [] and quad.training_error < lin.training_error
    # LDA, a probabilistic model of the same data, is not masked
    lda = gcf.lda("g ~ x1 + x2", df).fit()
    assert (lda.predict(which="class") == df.g).mean() == 1.0


def test_least_squares_prediction_contract():
    df = masking_data()
    res = gcf.least_squares("g ~ x1 + x2", df).fit()
    new = pd.DataFrame({"x1": [0.3, np.nan], "x2": [0.1, 1.0]}, index=[10, 11])
    s = res.predict(new)
    assert list(s.columns) == ["a", "b", "c"] and list(s.index) == [10, 11]
    assert s.iloc[1].isna().all()
    lab = res.predict(new, which="class")
    assert lab.iloc[0] in ("a", "c") and pd.isna(lab.iloc[1])
    pd.testing.assert_frame_equal(res.predict(new, which="mean"), s)
    with pytest.raises(ValueError, match="no class probabilities.*outside"):
        res.predict(new, which="prob")
    with pytest.raises(ValueError, match="which"):
        res.predict(new, which="log_prob")
    assert res.pred_table().to_numpy().sum() == len(df)


def test_least_squares_array_path_and_aliased_column():
    rng = np.random.default_rng(3)
    X = np.column_stack([np.ones(60), rng.normal(size=60)])
    X = np.column_stack([X, 2 * X[:, 1]])  # aliased
    y = np.repeat(["u", "v", "w"], 20)
    res = gc.LeastSquaresClassifier(y, X).fit()
    assert res.aliased == ["x3"] and res.rank == 2 and res.params.loc["x3"].isna().all()
    ref = np.linalg.lstsq(X[:, :2], np.eye(3)[np.repeat([0, 1, 2], 20)], rcond=None)[0]
    np.testing.assert_allclose(res.params.iloc[:2].to_numpy(), ref, rtol=1e-12)


# --- Fisher -------------------------------------------------------------------------------------
def _fisher_data(name: str) -> pd.DataFrame:
    if name.startswith("iris"):
        d = _data("iris")
        return d[d.Species != "setosa"].reset_index(drop=True)
    bw = _data("birthwt")
    return bw.assign(low_f=np.where(bw.low == 1, "low", "normal"))


def _fisher(name: str, **kw):
    case = FISHER[name]
    d = _fisher_data(name)
    y = "Species" if name.startswith("iris") else "low_f"
    return gc.FisherDiscriminant(d[y], d[case["features"]]).fit(**kw), case, d


@pytest.mark.parametrize("name", list(FISHER))
def test_fisher_direction_is_mass_lda_scaling(name):
    res, case, _ = _fisher(name)
    np.testing.assert_allclose(res.direction.to_numpy(), case["direction"], rtol=1e-10)
    assert np.linalg.norm(res.direction) == pytest.approx(1.0, rel=1e-14)
    np.testing.assert_allclose(res.means.to_numpy(), case["means"], rtol=1e-13)
    # points from the first class's mean to the second's
    assert res.projected_means.iloc[1] > res.projected_means.iloc[0]


@pytest.mark.parametrize("name", list(FISHER))
def test_fisher_equals_least_squares_with_n_coding(name):
    """PRML §4.1.5: targets N/N1 (class 1) and -N/N2 (class 2) give w ∝ S_W^-1 (m2 - m1)
    (with the opposite sign) and the bias -w'm."""
    res, case, d = _fisher(name)
    X = d[case["features"]].to_numpy(float)
    c2 = res.model.codes == 1
    n, n1, n2 = len(c2), (~c2).sum(), c2.sum()
    t = np.where(c2, -n / n2, n / n1)
    coef = np.linalg.lstsq(np.column_stack([np.ones(n), X]), t, rcond=None)[0]
    np.testing.assert_allclose(coef, case["ls_n_coding"], rtol=1e-9)
    w = coef[1:]
    np.testing.assert_allclose(-w / np.linalg.norm(w), res.direction.to_numpy(), rtol=1e-9)
    assert coef[0] == pytest.approx(-w @ X.mean(axis=0), rel=1e-9)


@pytest.mark.parametrize("name", list(FISHER))
def test_fisher_lda_threshold_agrees_with_lda(name):
    res, case, d = _fisher(name, threshold="lda")
    y = "Species" if name.startswith("iris") else "low_f"
    lda = gc.LDA(d[y], d[case["features"]]).fit()
    pd.testing.assert_series_equal(res.predict(), lda.predict(which="class"),
                                   check_names=False)
    # MASS predicts with its unbiased covariance: the same classes on these data
    assert list(res.predict()) == case["lda_class"]
    mid, _, _ = _fisher(name)
    assert mid.threshold == pytest.approx(res.projected_means.mean(), rel=1e-14)
    assert mid.threshold_kind == "midpoint" and res.threshold_kind == "lda"


def test_fisher_transform_predict_and_criterion():
    res, case, d = _fisher("iris_versicolor_virginica")
    X = d[case["features"]]
    proj = res.transform(X.head(3))
    np.testing.assert_allclose(proj, X.head(3).to_numpy() @ res.direction.to_numpy(),
                               rtol=1e-14)
    score = res.predict(X.head(3), which="score")
    np.testing.assert_allclose(score, proj - res.threshold, rtol=1e-14)
    lab = res.predict(X.head(3))
    assert list(lab) == [res.levels[int(s > 0)] for s in score]
    # Fisher's criterion is the largest over directions: a random direction does worse
    W = res.within_scatter.to_numpy()
    dm = (res.means.iloc[1] - res.means.iloc[0]).to_numpy()
    for v in np.random.default_rng(0).normal(size=(20, 4)):
        assert (v @ dm) ** 2 / (v @ W @ v) <= res.criterion * (1 + 1e-12)
    with pytest.raises(ValueError, match="no class probabilities"):
        res.predict(which="prob")
    assert "Fisher criterion" in str(res.summary())


def test_fisher_direction_beats_the_mean_difference():
    """PRML Fig. 4.6: projecting on m2 - m1 overlaps the classes more than Fisher's w."""
    res, case, d = _fisher("iris_versicolor_virginica")
    X = d[case["features"]].to_numpy(float)
    dm = (res.means.iloc[1] - res.means.iloc[0]).to_numpy()
    W = res.within_scatter.to_numpy()
    assert (dm @ dm) ** 2 / (dm @ W @ dm) < res.criterion
    assert X.shape[0] == 100


def test_fisher_bad_input_names_the_problem():
    iris = _data("iris")
    # three classes are Fisher's K-class discriminant (issue 29); one class is refused
    with pytest.raises(ValueError, match="Species.*single class"):
        gcf.fisher("Species ~ Sepal_Length", iris[iris.Species == "setosa"])
    with pytest.raises(ValueError, match="threshold"):
        gcf.fisher("Species ~ Sepal_Length", iris[iris.Species != "setosa"]).fit(threshold="x")
    d = iris[iris.Species != "setosa"].assign(k=1.0, twice=lambda f: 2 * f.Sepal_Length)
    with pytest.raises(ValueError, match="'twice'.*singular|singular.*'twice'"):
        gcf.fisher("Species ~ Sepal_Length + twice", d).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gcf.fisher("Species ~ Sepal_Length", d).fit()
