"""Results are complete and frozen when built (issue 24, point 4): for every model of the
registry (and the penalised fits, paths and their refits), assigning or deleting an attribute
after the fit raises an AttributeError naming it, the cached numbers still work, and a pickle
(and ``save``/``gc.load``) gives back equal, still frozen results."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from statsmodels.datasets import spector

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.models.registry import MODELS
from glmclass.results.frozen import FrozenResults

DF = spector.load_pandas().data


def registry_fit(name: str):
    """The fit of the registry's model ``name`` on the spector data (a binary response)."""
    formula = "GRADE ~ PSI" if name == "bernoulli_nb" else "GRADE ~ GPA + TUCE + PSI"
    if name.startswith("mixed"):
        formula = "GRADE ~ GPA + TUCE + (1 | PSI)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a perceptron that does not converge says so
        return getattr(gcf, name)(formula, DF).fit()


@pytest.fixture(scope="module")
def survey():
    rng = np.random.default_rng(0)
    n = 150
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    eta = np.column_stack([np.zeros(n), 0.5 + x1, -0.3 + x2 - x1])
    p = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(["a", "b", "c"], p=row) for row in p])
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2})


def other_fits(survey) -> dict:
    """Results built by other methods than ``fit()``: penalised fits, a path and its refit,
    multiclass classic classifiers."""
    logit = gcf.logit("GRADE ~ GPA + TUCE + PSI", DF)
    mnl = gcf.mnlogit("y ~ x1 + x2", survey)
    path = logit.regularization_path(n_alphas=8, cv=3, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "logit_lasso": logit.fit_regularized(alpha=0.01),
            "mnlogit_lasso": mnl.fit_regularized(alpha=0.01),
            "path": path,
            "path_refit": path.refit("min"),
            "mnlogit_path": mnl.regularization_path(n_alphas=5),
            "lda_3": gcf.lda("y ~ x1 + x2", survey).fit(cv=True),
            "qda_3": gcf.qda("y ~ x1 + x2", survey).fit(),
            "gaussian_nb_3": gcf.gaussian_nb("y ~ x1 + x2", survey).fit(),
            "perceptron_ovo": gcf.perceptron("y ~ x1 + x2", survey, multiclass="ovo").fit(),
            "least_squares_3": gcf.least_squares("y ~ x1 + x2", survey).fit(),
        }


def assert_same(a, b, where: str = "results") -> None:
    """``a`` and ``b`` hold equal values (recursively; NaN equals NaN)."""
    assert type(a) is type(b), where
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b)
    elif isinstance(a, pd.Index):
        pd.testing.assert_index_equal(a, b)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            assert_same(u, v, f"{where}[{i}]")
    elif isinstance(a, float):
        assert a == b or (np.isnan(a) and np.isnan(b)), where
    elif isinstance(a, (str, int, bool, np.number, type(None))):
        assert a == b, where
    else:  # the model, solver records, factorisations: the same state, pickled again
        assert pickle.dumps(a) == pickle.dumps(b), where


def check_frozen(res) -> None:
    assert isinstance(res, FrozenResults)
    with pytest.raises(AttributeError, match="'params' cannot be assigned"):
        res.params = 1
    with pytest.raises(AttributeError, match="'nobs' cannot be assigned"):
        res.nobs = 1
    with pytest.raises(AttributeError, match="'brand_new' cannot be assigned"):
        res.brand_new = 1
    with pytest.raises(AttributeError, match="'model' cannot be deleted"):
        del res.model


def check_pickle(res):
    again = pickle.loads(pickle.dumps(res))
    state, other = dict(res.__dict__), dict(again.__dict__)
    model, copy = state.pop("model"), other.pop("model")
    assert_same(state, other)
    # the model caches numbers of its own as it is used: its data are compared
    assert type(copy) is type(model)
    assert_same(copy.data.exog, model.data.exog, "model.data.exog")
    assert_same(np.asarray(copy.data.endog), np.asarray(model.data.endog), "model.data.endog")
    assert copy.exog_names == model.exog_names and copy.data.formula == model.data.formula
    with pytest.raises(AttributeError, match="'params' cannot be assigned"):
        again.params = 1
    return again


@pytest.mark.parametrize("name", [e.name for e in MODELS])
def test_every_registry_model_gives_frozen_results_that_pickle(name):
    res = registry_fit(name)
    check_frozen(res)
    before = dict(res.__dict__)
    out = res.predict()  # cached numbers (and row outputs) still work on frozen results
    pd.testing.assert_series_equal(res.predict(), out) if isinstance(out, pd.Series) else \
        pd.testing.assert_frame_equal(res.predict(), out)
    assert all(res.__dict__[k] is v for k, v in before.items())  # nothing was replaced
    str(res.summary())
    again = check_pickle(res)
    new = pd.DataFrame(DF.iloc[:5])
    a, b = res.predict(new), again.predict(new)
    pd.testing.assert_series_equal(a, b) if isinstance(a, pd.Series) else \
        pd.testing.assert_frame_equal(a, b)


def test_other_results_are_frozen_and_pickle(survey):
    for name, res in other_fits(survey).items():
        check_frozen(res)
        again = check_pickle(res)
        assert type(again) is type(res), name


def test_cached_properties_work_and_are_kept_by_a_pickle():
    res = registry_fit("lda")
    assert "llf" not in res.__dict__
    llf = res.llf
    assert res.__dict__["llf"] == llf  # cached where the freezing does not look
    again = pickle.loads(pickle.dumps(res))
    assert again.__dict__["llf"] == llf and again.llf == llf
    path = gcf.logit("GRADE ~ GPA + TUCE + PSI", DF).regularization_path(n_alphas=5)
    table = path.table
    assert path.table is table


def test_a_refit_of_a_path_leaves_the_path_as_it_was(survey):
    path = gcf.logit("GRADE ~ GPA + TUCE + PSI", DF).regularization_path(n_alphas=6, cv=3,
                                                                          seed=2)
    state = dict(path.__dict__)
    res = path.refit("1se")
    assert res.alpha == path.alpha_1se
    assert path.__dict__.keys() == state.keys()
    assert all(path.__dict__[k] is v for k, v in state.items())


@pytest.mark.parametrize("name", ["lda", "gaussian_nb", "perceptron"])
def test_replaced_gives_a_changed_frozen_copy(name):
    res = registry_fit(name)
    copy = res.replaced(nobs=1.0)
    assert copy.nobs == 1.0 and res.nobs != 1.0 and type(copy) is type(res)
    with pytest.raises(AttributeError, match="'nobs' cannot be assigned"):
        copy.nobs = 2.0
    with pytest.raises(AttributeError, match="has no nonsense"):
        res.replaced(nonsense=1)


def test_save_and_load_round_trip_frozen_penalised_results(tmp_path):
    res = gcf.logit("GRADE ~ GPA + TUCE + PSI", DF).fit_regularized(alpha=0.01)
    res.save(tmp_path / "lasso.pkl")
    again = gc.load(tmp_path / "lasso.pkl")
    assert_same(res.params, again.params)
    assert_same(res.predict(DF.iloc[:5]), again.predict(DF.iloc[:5]))
    with pytest.raises(AttributeError, match="'alpha' cannot be assigned"):
        again.alpha = 0.5
