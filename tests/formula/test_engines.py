"""engine="formulaic" builds the same designs as patsy: same columns, order, names and values,
at fit and on new data, for every formula feature the package's tests and docs use (issue 14)."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.formula.design import build_design

DATA = Path(__file__).resolve().parents[1] / "reference" / "data"
RNG = np.random.default_rng(31)
N = 150
DF = pd.DataFrame({
    "x": RNG.normal(size=N), "z": RNG.uniform(1, 5, N), "k": RNG.integers(1, 4, N),
    "g": RNG.choice(["a", "b", "c"], N), "h": RNG.choice(["u", "v"], N),
    "b": RNG.integers(0, 2, N).astype(bool), "n": RNG.integers(5, 30, N),
    "weird name": RNG.normal(size=N),
})
DF["s"] = pd.Categorical(DF.g, categories=["c", "b", "a"])
DF["y"] = (RNG.uniform(size=N) < 1 / (1 + np.exp(-DF.x))).astype(int)
DF["cls"] = RNG.choice(["p", "q", "r"], N)

FORMULAS = [
    "y ~ x + C(g) + np.log(z)",
    "y ~ x * C(g)",
    "y ~ C(g):x",
    "y ~ C(g):C(h)",
    "y ~ C(g) * C(h)",
    "y ~ center(x) + standardize(z) + g",
    "y ~ scale(x) + center(x):h",
    "y ~ x + I(x ** 2) + I(x ** 3) - 1",
    "y ~ 0 + g",
    "y ~ C(g, Treatment(reference='b')) + C(h, Treatment('v'))",
    "y ~ C(g, levels=['b', 'a', 'c'])",
    "y ~ C(g, Sum) + C(h, Helmert)",
    "y ~ C(g, Poly) + x + C(g, Diff):x",
    "y ~ x:z + g:h",
    "y ~ x + x:g",
    "y ~ g:x - 1",
    "y ~ C(k) + C(np.floor(z))",
    "y ~ I(x > 0.3) + C(z > 2) + b + b:x",
    "y ~ s + x:s",
    "y ~ Q('weird name') + np.exp(-x)",
    "y ~ np.log(z):C(g) + x * z * h",
    "y ~ bs(x, df=4)",
    "y ~ .",
    "y ~ . - n - cls",
    "y ~ x + offset(np.log(n))",
    "y ~ x + g + offset(np.log(n)) + offset(z)",
]


def _design(formula, data=DF, engine="patsy", **kw):
    return build_design(formula, data, engine=engine, **kw)


@pytest.mark.parametrize("formula", FORMULAS)
def test_formulaic_gives_patsys_design_and_new_data_designs(formula):
    a, b = _design(formula), _design(formula, engine="formulaic")
    assert b.spec.column_names == a.spec.column_names
    np.testing.assert_allclose(b.exog, a.exog, rtol=1e-13, atol=1e-13)
    assert b.exog.flags.c_contiguous
    assert (a.offset is None) == (b.offset is None)
    if a.offset is not None:
        np.testing.assert_allclose(b.offset, a.offset, rtol=1e-14)
    new = DF.sample(17, random_state=4).assign(g=["b"] * 17)  # a subset of the levels
    xa, oa = a.spec.design(new)
    xb, ob = b.spec.design(new)
    np.testing.assert_allclose(xb, xa, rtol=1e-13, atol=1e-13)
    if oa is not None:
        np.testing.assert_allclose(ob, oa, rtol=1e-14)


@pytest.mark.parametrize("engine", ["patsy", "formulaic"])
def test_missing_values_are_dropped_and_give_nan_rows_alike(engine):
    data = DF.copy()
    data.loc[[3, 9], "x"] = np.nan
    data.loc[5, "g"] = None
    d = _design("y ~ x + C(g) + center(z)", data, engine)
    ref = _design("y ~ x + C(g) + center(z)", data.drop(index=[3, 5, 9]), engine)
    assert d.n_dropped == 3
    np.testing.assert_allclose(d.exog, ref.exog, rtol=1e-14)
    X = d.spec.exog(data.head(7))
    assert np.isnan(X[[3, 5]]).all() and not np.isnan(X[[0, 1, 2, 4, 6]]).any()


@pytest.mark.parametrize("engine", ["patsy", "formulaic"])
@pytest.mark.parametrize("formula, new, match", [
    ("y ~ x + C(g)", {"g": ["a", "zz"]}, r"column 'g' has level 'zz'"),
    ("y ~ x + g", {"g": ["a", "zz"]}, r"column 'g' has level 'zz'"),
    ("y ~ C(np.floor(z))", {"z": [1.5, 9.5]}, r"term 'C\(np.floor\(z\)\)' has level 9.0"),
])
def test_unseen_levels_are_named_by_both_engines(engine, formula, new, match):
    d = _design(formula, engine=engine)
    with pytest.raises(ValueError, match=match + r".*levels: \["):
        d.spec.exog(DF.head(2).assign(**new))


@pytest.mark.parametrize("model, formula, kw", [
    (gcf.logit, "y ~ x + C(g) + standardize(z)", {}),
    (gcf.probit, "y ~ x * h", {}),
    (gcf.glm, "y ~ x + C(g) + offset(z / 10)", {}),
    (gcf.mnlogit, "cls ~ x + C(h)", {}),
    (gcf.lda, "cls ~ x + z", {}),
    (gcf.bayes_logit, "y ~ center(x) + g", {"prior_scale": 2.0}),
])
def test_fits_and_predictions_are_the_same_with_either_engine(model, formula, kw):
    a = model(formula, DF, **kw).fit()
    b = model(formula, DF, engine="formulaic", **kw).fit()
    assert b.model.data.spec.engine == "formulaic"
    pa, pb = (a.means, b.means) if hasattr(a, "means") else (a.params, b.params)
    np.testing.assert_allclose(np.asarray(pb), np.asarray(pa), rtol=1e-10, atol=1e-12)
    assert list(getattr(pb, "index", [])) == list(getattr(pa, "index", []))
    new = DF.tail(9)
    np.testing.assert_allclose(np.asarray(b.predict(new)), np.asarray(a.predict(new)),
                               rtol=1e-10)
    back = pickle.loads(pickle.dumps(b))
    np.testing.assert_array_equal(np.asarray(back.predict(new)), np.asarray(b.predict(new)))


def test_formulaic_on_the_reference_data():
    bw = pd.read_csv(DATA / "birthwt.csv")
    f = "low ~ age + lwt + C(race) + smoke + center(age):smoke"
    a, b = gcf.logit(f, bw).fit(), gcf.logit(f, bw, engine="formulaic").fit()
    np.testing.assert_allclose(b.params, a.params, rtol=1e-10)
    assert list(b.params.index) == list(a.params.index)


def test_a_contrast_formulaic_codes_differently_is_refused_not_changed():
    with pytest.raises(ValueError, match="C\\(g, Diff\\) without its main effect"):
        _design("y ~ C(g, Diff):x", engine="formulaic")


def test_unknown_engine_is_an_error():
    with pytest.raises(ValueError, match="engine must be 'patsy' or 'formulaic'"):
        gcf.logit("y ~ x", DF, engine="R")


def test_formulaic_is_imported_only_when_asked_for():
    import subprocess
    import sys

    code = ("import sys, glmclass, glmclass.formula.api as gcf, pandas as pd; "
            "gcf.logit('y ~ x', pd.DataFrame({'x': [1., 2, 3, 4], 'y': [0, 1, 0, 1]})); "
            "print('formulaic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_a_trusted_function_with_formulaic():
    def half(v):
        return v / 2

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gcf.logit("y ~ half(x)", DF, engine="formulaic", eval_env={"half": half}).fit()
    ref = gc.Logit.from_formula("y ~ I(x / 2)", DF).fit()
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-12)
