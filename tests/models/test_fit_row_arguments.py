"""Per-row arrays given to ``fit`` (issue 25, item 3): ``Logit(...).fit(offset=...)`` raised
Python's own "fit() got an unexpected keyword argument 'offset'". Every model of the registry
answers ``offset``, ``exposure``, ``freq_weights``, ``var_weights`` and R's ``weights`` given
to ``fit`` with a TypeError that says they belong to the constructor / from_formula (and which
the model takes). ``fit`` is wrapped for this; its warnings still point at the user's call.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass.models.base import ROW_NAMES
from glmclass.models.registry import MODELS


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(25)
    n = 120
    d = pd.DataFrame({"x": rng.normal(size=n), "g": np.repeat(list("abcdef"), n // 6),
                      "w": rng.integers(1, 4, n).astype(float)})
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-d.x))).astype(int)
    return d


def build(entry, df):
    formula = ("y ~ x + (1 | g)" if entry.name.startswith("mixed")
               else "y ~ I(x > 0)" if entry.name == "bernoulli_nb" else "y ~ x")
    return entry.cls.from_formula(formula, df, **dict(entry.options))


@pytest.mark.parametrize("entry", MODELS, ids=[e.name for e in MODELS])
@pytest.mark.parametrize("arg", ROW_NAMES)
def test_per_row_arrays_given_to_fit_point_to_the_constructor(entry, arg, df):
    model = build(entry, df)
    with pytest.raises(TypeError) as err:
        model.fit(**{arg: np.ones(len(df))})
    text = str(err.value)
    name = entry.cls.__name__
    assert "unexpected keyword argument" not in text
    assert f"{name}.fit() does not take {arg}=" in text
    rows = entry.cls.row_args
    if arg in rows:  # the model takes it: say where it goes
        assert f"{name}(endog, exog, {arg}=...)" in text
        assert f"{name}.from_formula(formula, data, {arg}=...)" in text
    elif arg == "weights":
        assert "R's glm(weights=)" in text or f"{name} takes no per-row weights" in text
    else:
        assert "per-row array, given to a model's constructor (or from_formula)" in text
        assert ("it takes none" in text) == (not rows)


@pytest.mark.parametrize("entry", MODELS, ids=[e.name for e in MODELS])
def test_fit_keeps_its_signature_and_documentation(entry):
    fit = entry.cls.fit
    params = inspect.signature(fit).parameters
    assert "self" in params
    assert not any(p.kind == p.VAR_KEYWORD for p in params.values())
    assert fit.__doc__


def _ours(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w for w in caught if issubclass(w.category, gc.GlmclassWarning)]


def test_fit_warnings_still_point_at_the_users_call(df):
    """Warnings raised inside fit (convergence, rank deficiency) name this file's line, not
    the wrapper's."""
    X = np.column_stack([np.ones(len(df)), df.x, df.x])  # rank deficient
    cases = [
        lambda: gc.Logit(df.y, X).fit(),
        lambda: gc.Logit(df.y, X[:, :2]).fit(maxiter=1),
        lambda: gc.MNLogit(df.y, X[:, :2]).fit(maxiter=1),
        lambda: gc.OrderedModel(df.y + (df.x > 1), df[["x"]]).fit(maxiter=1),
        lambda: gc.Perceptron(df.y, X[:, :2], max_epochs=1).fit(),
    ]
    for fn in cases:
        ours = _ours(fn)
        assert ours, fn
        assert all(w.filename == __file__ for w in ours), [(w.filename, w.message)
                                                           for w in ours]


@pytest.mark.parametrize("entry", MODELS, ids=[e.name for e in MODELS])
def test_unknown_constructor_arguments_are_answered_not_pythons_error(entry, df):
    """``Logit(y, X, weights=...)`` (R's glm) or ``GLM(..., maxiter=...)`` said Python's
    "__init__() got an unexpected keyword argument": now what to use instead."""
    args = [df["y"].to_numpy(), np.c_[np.ones(len(df)), df["x"]]]
    if entry.name.startswith("mixed"):
        args.append(df["g"].to_numpy())
    name = entry.cls.__name__
    for arg in ("weights", "maxiter"):
        with pytest.raises(TypeError) as err:
            entry.cls(*args, **dict(entry.options), **{arg: np.ones(len(df))})
        text = str(err.value)
        assert "unexpected keyword argument" not in text
        assert f"{name} does not take {arg}=" in text
        if arg == "maxiter" and "maxiter" in inspect.signature(entry.cls.fit).parameters:
            assert "is an option of fit()" in text
    assert inspect.signature(entry.cls.__init__) != inspect.signature(lambda *a, **k: None)
