"""gc.compare with generative (joint-likelihood) and discriminative (conditional) models."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf

REF = Path(__file__).resolve().parent / "reference"
CRABS = pd.read_csv(REF / "data" / "crabs.csv", keep_default_na=False, na_values=[""])
IRIS = pd.read_csv(REF / "data" / "iris.csv", keep_default_na=False, na_values=[""])
F = "sp ~ CW + BD"  # not separable: the logit MLE exists
IRIS_F = "Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width"


@pytest.fixture(scope="module")
def fits():
    lda = gcf.lda(F, CRABS).fit()
    qda = gcf.qda(F, CRABS).fit()
    logit = gcf.logit(F, CRABS).fit()
    return lda, qda, logit


def test_generative_compare_on_joint_likelihood(fits):
    lda, qda, _ = fits
    table = gc.compare([lda, qda], names=["LDA", "QDA"])
    assert table.attrs["likelihood"] == "joint"
    assert table.loc["LDA", "llf"] == pytest.approx(lda.llf)
    assert table.loc["QDA", "aic"] == pytest.approx(qda.aic)
    assert table.loc["LDA", "bic"] == pytest.approx(lda.bic)
    assert table.loc["QDA", "df_model"] == 1 + 2 * 2 + 2 * 3
    assert table["bic_weight"].sum() == pytest.approx(1.0)


def test_mixing_needs_conditional(fits):
    lda, qda, logit = fits
    with pytest.raises(ValueError, match="likelihood='conditional'"):
        gc.compare([lda, logit])
    with pytest.raises(ValueError, match="generative models only"):
        gc.compare([lda, logit], likelihood="joint")
    table = gc.compare([lda, qda, logit], names=["LDA", "QDA", "Logit"],
                       likelihood="conditional")
    assert table.attrs["likelihood"] == "conditional"
    assert table.loc["LDA", "llf"] == pytest.approx(lda.llf_conditional)
    assert table.loc["QDA", "llf"] == pytest.approx(qda.llf_conditional)
    assert table.loc["Logit", "llf"] == pytest.approx(logit.llf)
    k = lda.k_params
    assert table.loc["LDA", "bic"] == pytest.approx(-2 * lda.llf_conditional + k * np.log(200))
    # the logistic model maximises the conditional likelihood over the same linear family
    assert logit.llf >= lda.llf_conditional - 1e-9


def test_lda_logistic_form_is_a_logit_point(fits):
    lda, _, logit = fits
    w = lda.logistic_params
    assert list(w.index) == list(logit.params.index)
    # LDA's conditional log-likelihood is the logit log-likelihood at w
    eta = logit.model.exog @ w.to_numpy()
    y = logit.model.endog
    ll = np.sum(y * eta - np.logaddexp(0, eta))
    assert lda.llf_conditional == pytest.approx(ll, rel=1e-10)


def test_naive_bayes_beside_logit():
    df = CRABS.assign(big=(CRABS["CW"] > 36).astype(float), wide=(CRABS["RW"] > 12).astype(float),
                      male=(CRABS["sex"] == "M").astype(float))
    nb = gcf.bernoulli_nb("sp ~ big + wide + male", df).fit()
    logit = gcf.logit("sp ~ big + wide + male", df).fit()
    with pytest.raises(ValueError, match="likelihood='conditional'"):
        gc.compare([nb, logit])
    table = gc.compare([nb, logit], names=["NB", "Logit"], likelihood="conditional")
    assert table.loc["NB", "llf"] == pytest.approx(nb.llf_conditional)
    lda = gcf.lda("sp ~ big + wide + male", df).fit()
    # a probability of binary x and a density of continuous x are not comparable
    with pytest.raises(ValueError, match="probability of binary features"):
        gc.compare([nb, lda])
    assert gc.compare([nb, lda], likelihood="conditional").shape[0] == 2


def test_multiclass_beside_mnlogit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GlmclassWarning)  # iris setosa is separated
        mn = gcf.mnlogit(IRIS_F, IRIS).fit()
    lda = gcf.lda(IRIS_F, IRIS).fit()
    qda = gcf.qda(IRIS_F, IRIS).fit()
    with pytest.raises(ValueError, match="likelihood='conditional'"):
        gc.compare([lda, mn])
    table = gc.compare([lda, qda, mn], names=["LDA", "QDA", "MNLogit"], likelihood="conditional")
    assert table.loc["QDA", "llf"] == pytest.approx(qda.llf_conditional)
    assert table.loc["MNLogit", "llf"] == pytest.approx(mn.llf)


def test_different_rows_refused(fits):
    lda = fits[0]
    other = gcf.lda(F, CRABS.iloc[:150]).fit()
    with pytest.raises(ValueError, match="different rows"):
        gc.compare([lda, other])


def test_joint_likelihoods_over_different_features_are_refused():
    """p(x, y) of a 2-feature and a 4-feature LDA are densities on different spaces (issue 13):
    the 2-feature model's far larger joint likelihood says nothing about its fit."""
    small = gcf.lda("Species ~ Sepal_Length + Sepal_Width", IRIS).fit()
    full = gcf.lda(IRIS_F, IRIS).fit()
    for kind in ("auto", "joint"):
        with pytest.raises(ValueError, match="different features.*Petal_Length.*"
                                             "likelihood='conditional'"):
            gc.compare([small, full], likelihood=kind)
    table = gc.compare([small, full], names=["small", "full"], likelihood="conditional")
    assert table.index[0] == "full"  # conditionally the 4-feature model is far better
    assert table.loc["small", "llf"] == pytest.approx(small.llf_conditional)
    # the same features, LDA against QDA: joint likelihoods are comparable
    qda = gcf.qda(IRIS_F, IRIS).fit()
    assert gc.compare([full, qda]).attrs["likelihood"] == "joint"
    # the same features in another order, or written once more, are the same x
    other = gcf.lda("Species ~ Petal_Width + Petal_Length + Sepal_Width + Sepal_Length",
                    IRIS).fit()
    assert gc.compare([full, other]).shape[0] == 2


def test_joint_features_of_the_same_name_but_other_values_are_refused():
    a = gcf.lda(F, CRABS).fit()
    b = gcf.lda(F, CRABS.assign(BD=CRABS["BD"] * 2.54)).fit()
    with pytest.raises(ValueError, match="same names with different values"):
        gc.compare([a, b])
    assert gc.compare([a, b], likelihood="conditional").shape[0] == 2
