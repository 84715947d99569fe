"""The model base every model shares: one constructor path, frozen models, one fit-argument
validator, the formula environment captured once, and one prediction contract."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.models.base import Model, fit_control

RNG = np.random.default_rng(9)
N = 120
DF = pd.DataFrame({"x1": RNG.normal(size=N), "x2": RNG.normal(size=N),
                   "g": RNG.choice(["a", "b", "c"], N)})
DF["y"] = (RNG.random(N) < 1 / (1 + np.exp(-DF.x1 + 0.5 * DF.x2))).astype(int)
DF["k"] = np.where(DF.x1 + RNG.normal(size=N) > 0.5, "hi",
                   np.where(DF.x2 > 0, "mid", "lo"))
DF["b1"], DF["b2"] = (DF.x1 > 0).astype(int), (DF.x2 > 0).astype(int)

# every model, built both ways, with its fit arguments
BINARY = {
    "GLM": lambda: gc.GLM.from_formula("y ~ x1 + x2", DF),
    "Logit": lambda: gc.Logit.from_formula("y ~ x1 + x2", DF),
    "Probit": lambda: gc.Probit.from_formula("y ~ x1 + x2", DF),
    "BayesLogit": lambda: gc.BayesLogit.from_formula("y ~ x1 + x2", DF),
    "BayesGLM": lambda: gc.BayesGLM.from_formula("y ~ x1 + x2", DF, link="probit"),
}
MULTICLASS = {
    "MNLogit": lambda: gc.MNLogit.from_formula("k ~ x1 + x2", DF),
    "LDA": lambda: gc.LDA.from_formula("k ~ x1 + x2", DF),
    "QDA": lambda: gc.QDA.from_formula("k ~ x1 + x2", DF),
    "BernoulliNB": lambda: gc.BernoulliNB.from_formula("k ~ b1 + b2", DF),
}
ITERATIVE = ["GLM", "Logit", "Probit", "BayesLogit", "BayesGLM", "MNLogit"]
ALL = {**BINARY, **MULTICLASS}


@pytest.mark.parametrize("name", list(ALL))
def test_every_model_is_a_model_and_frozen(name):
    model = ALL[name]()
    assert isinstance(model, Model)
    with pytest.raises(AttributeError, match="immutable"):
        model.data = None
    with pytest.raises(AttributeError, match="immutable"):
        model.anything_new = 1
    with pytest.raises(AttributeError, match="immutable"):
        del model.data


def test_assigning_a_family_cannot_refit_a_logit_as_cloglog():
    model = gc.Logit.from_formula("y ~ x1 + x2", DF)
    with pytest.raises(AttributeError):
        model.family = gc.families.Binomial(link="cloglog")
    with pytest.raises(AttributeError):
        model.problem = None
    assert model.family.link == gc.links.Logit()


@pytest.mark.parametrize("name", ITERATIVE)
@pytest.mark.parametrize("kwargs, match", [
    ({"maxiter": 2.5}, "maxiter must be a positive integer.*2.5"),
    ({"maxiter": 0}, "maxiter must be a positive integer.*got 0"),
    ({"maxiter": True}, "maxiter must be a positive integer.*True"),
    ({"tol": -1.0}, "tol must be a positive, finite number.*-1.0"),
    ({"tol": np.inf}, "tol must be a positive, finite number.*inf"),
    ({"tol": np.nan}, "tol must be a positive, finite number.*nan"),
    ({"tol": "1e-8"}, "tol must be a positive, finite number.*'1e-8'"),
])
def test_the_same_bad_fit_argument_gets_the_same_message_everywhere(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ALL[name]().fit(**kwargs)


def test_fit_control_is_r_glm_control():
    assert fit_control() == fit_control(50, 1e-10)
    assert fit_control(np.int64(7), 1).maxiter == 7


@pytest.mark.parametrize("name", ["GLM", "Logit", "Probit", "BayesLogit"])
def test_start_params_by_name_or_position(name):
    ref = ALL[name]().fit()
    start = dict(ref.params)
    by_name = ALL[name]().fit(start_params=start)
    np.testing.assert_allclose(by_name.params, ref.params, rtol=1e-8)
    with pytest.raises(ValueError, match="start_params: 'x9' is not a design column"):
        ALL[name]().fit(start_params={"x9": 1.0})
    with pytest.raises(ValueError, match="start_params must have 3 values"):
        ALL[name]().fit(start_params=[0.0, 1.0])


# --- the formula environment ------------------------------------------------------------------
def test_formula_names_are_the_callers_through_every_entry_point():
    def twice(v):
        return 2 * v

    a = gc.Logit.from_formula("y ~ twice(x1)", DF, eval_env=0).fit()
    b = gcf.logit("y ~ twice(x1)", DF, eval_env=0).fit()
    c = gc.Logit.from_formula("y ~ x1", DF.assign(x1=2 * DF.x1)).fit()
    np.testing.assert_allclose(a.params.to_numpy(), c.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(b.params.to_numpy(), c.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(a.predict(DF.head()), c.predict(DF.head().assign(x1=2 * DF.x1)),
                               rtol=1e-10)


def test_a_subclass_that_overrides_from_formula_keeps_the_callers_names():
    class Tagged(gc.Logit):
        @classmethod
        def from_formula(cls, formula, data, **kwargs):
            return super().from_formula(formula, data, **kwargs)

    def shift(v):
        return v + 1.0

    res = Tagged.from_formula("y ~ shift(x1)", DF, eval_env=0).fit()
    ref = gc.Logit.from_formula("y ~ x1", DF.assign(x1=DF.x1 + 1.0)).fit()
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-10)


def test_eval_env_counts_frames_above_the_caller():
    def helper():
        return gc.Logit.from_formula("y ~ shifted(x1)", DF, eval_env=1)

    def shifted(v):
        return v - 3.0

    res = helper().fit()
    assert res.params.index[1] == "shifted(x1)"
    with pytest.raises(TypeError, match="eval_env"):
        gc.Logit.from_formula("y ~ x1", DF, eval_env="locals")


# --- intercept, one way --------------------------------------------------------------------------
def test_intercept_is_found_the_same_way_by_every_model():
    X = np.column_stack([RNG.normal(size=N), np.ones(N), RNG.normal(size=N)])
    for model in (gc.Logit(DF.y, X), gc.BayesLogit(DF.y, X), gc.MNLogit(DF.k, X)):
        assert model.has_intercept and model.data.intercept_index == 1
    assert not gc.Logit(DF.y, X[:, [0, 2]]).has_intercept


# --- one prediction contract ------------------------------------------------------------------
@pytest.mark.parametrize("name", list(ALL))
def test_one_prediction_contract_for_every_classifier(name):
    res = ALL[name]().fit()
    new = DF.iloc[:6].copy()
    new.loc[new.index[2], ["x1", "b1"]] = np.nan
    prob = res.predict(new, "prob")  # which is the second argument everywhere
    levels = list(res.model.levels)
    assert isinstance(prob, pd.DataFrame) and list(prob.columns) == levels
    assert prob.index.equals(new.index)
    ok = prob.notna().all(axis=1).to_numpy()
    assert list(ok) == [True, True, False, True, True, True]
    np.testing.assert_allclose(prob[ok].sum(axis=1), 1.0, rtol=1e-12)
    labels = res.predict(new, which="class")
    assert isinstance(labels, pd.Series) and labels.index.equals(new.index)
    assert pd.isna(labels.iloc[2])  # a row without predictors has no label
    best = np.asarray(levels, dtype=object)[np.argmax(prob[ok].to_numpy(), axis=1)]
    assert list(labels[ok]) == list(best)
    mean = res.predict(new, which="mean")
    if name in BINARY:
        np.testing.assert_allclose(mean[ok], prob[levels[1]][ok], rtol=1e-15)
    else:
        pd.testing.assert_frame_equal(mean, prob)
    in_sample = res.predict(which="prob")
    assert in_sample.index.equals(res.model.data.index)
    with pytest.raises(ValueError, match="which must be"):
        res.predict(new, which="nonsense")


@pytest.mark.parametrize("name", ["GLM", "Logit", "Probit", "BayesLogit", "MNLogit", "LDA"])
def test_linear_predictions(name):
    res = ALL[name]().fit()
    lin = res.predict(DF.head(), "linear")
    assert len(lin) == 5 and np.all(np.isfinite(np.asarray(lin, dtype=float)))


def test_threshold_must_be_a_probability():
    res = BINARY["Logit"]().fit()
    for bad in (np.nan, 2, 0, 1.0, "0.5"):
        with pytest.raises(ValueError, match="threshold must be a probability"):
            res.predict(which="class", threshold=bad)


def test_fit_control_is_shared_for_plain_settings_and_still_refuses_bad_ones():
    """Fits with the same plain settings share one frozen Control; the types are part of the
    key, so maxiter=True is refused even after maxiter=1 was made, and a progress printer is
    never shared."""
    from glmclass.models.base import fit_control

    a = fit_control(7, 1e-9, hessian="expected")
    assert a is fit_control(7, 1e-9, hessian="expected") and a.maxiter == 7
    assert fit_control(1).maxiter == 1
    with pytest.raises(ValueError, match="maxiter"):
        fit_control(True)
    with pytest.raises(ValueError, match="tol"):
        fit_control(5, -1.0)
    log = gc.progress.IterationLog("deviance")
    b = fit_control(7, 1e-9, progress=log)
    assert b.progress is log and b is not fit_control(7, 1e-9, progress=log)
