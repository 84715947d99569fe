"""Formulas are code: evaluation is safe by default, an explicit ``eval_env=`` opts in, and no
path (fit, predict, unpickling, either engine) runs anything else (issue 10)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import patsy
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.formula.design import build_design
from glmclass.formula.namespace import FormulaEnvironment, check_code, safe_namespace

RNG = np.random.default_rng(12)
N = 120
DF = pd.DataFrame({"x": RNG.normal(size=N), "z": RNG.uniform(1, 3, N),
                   "g": RNG.choice(["a", "b", "c"], N), "weird name": RNG.normal(size=N)})
DF["y"] = (RNG.uniform(size=N) < 1 / (1 + np.exp(-DF.x))).astype(int)
ENGINES = ["patsy", "formulaic"]

CALLS = []


def counted(v):
    """A user transform that records each call (module level: pickles by reference)."""
    CALLS.append(len(v))
    return np.asarray(v) * 2.0


REFUSED = {
    "import": ("y ~ I(x + 0 * __import__('os').getpid())", "'__import__'"),
    "builtins via Q": ("y ~ I(Q('__builtins__'))", "Q"),
    "dunder attribute": ("y ~ I(x.__class__)", "'__class__'"),
    "private attribute": ("y ~ I(x._values)", "'_values'"),
    "attribute outside numpy": ("y ~ I(x.clip(0))", "attribute access"),
    "numpy I/O": ("y ~ I(np.load('f.npy'))", "np.load"),
    "numpy submodule": ("y ~ I(np.random.normal(size=120))", "np.random.normal"),
    "numpy private": ("y ~ I(np._core)", "'_core'"),
    "open": ("y ~ I(open('f').read())", "'open'"),
    "eval": ("y ~ I(eval('1') + x)", "'eval'"),
    "getattr": ("y ~ I(getattr(x, 'values'))", "'getattr'"),
    "lambda": ("y ~ I((lambda v: v)(x))", "Lambda"),
    "comprehension": ("y ~ I([v for v in x])", "ListComp"),
    "walrus": ("y ~ I((v := x))", "NamedExpr"),
    "f-string": ("y ~ C(f'{x}')", "JoinedStr"),
    "unknown function": ("y ~ cube(x)", "'cube'"),
    "dunder in the response": ("I(__import__('os').getpid() * 0 + y) ~ x", "'__import__'"),
    "dunder in an offset": ("y ~ x + offset(__import__('os').getpid() + x)", "'__import__'"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("formula, match", REFUSED.values(), ids=REFUSED.keys())
def test_unsafe_formulas_are_refused_before_anything_runs(formula, match, engine):
    with pytest.raises(gc.UnsafeFormulaError, match=match):
        gcf.logit(formula, DF, engine=engine)
    assert issubclass(gc.UnsafeFormulaError, ValueError)


@pytest.mark.parametrize("engine", ENGINES)
def test_nothing_runs_when_a_formula_is_refused(tmp_path, engine):
    target = tmp_path / "pwned"
    formula = f"y ~ I(x + 0 * len(__import__('pathlib').Path({str(target)!r}).write_text('x')))"
    with pytest.raises(gc.UnsafeFormulaError):
        gcf.logit(formula, DF, engine=engine)
    assert not target.exists()


ALLOWED = [
    "y ~ np.log(z) + np.where(x > 0, x, 0) + np.clip(x, -1, 1) + abs(x)",
    "y ~ center(x) + standardize(z) + I(x ** 2)",
    "y ~ scale(x) + z",
    "y ~ C(g, Treatment(reference='b')) + x + C(g, Sum):x",
    "y ~ Q('weird name') + np.exp(-x) + I(np.pi * z) + round(z, 1)",
    "y ~ x + offset(np.log(z))",
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("formula", ALLOWED)
def test_columns_numpy_and_the_transforms_are_allowed(formula, engine):
    res = gcf.logit(formula, DF, engine=engine).fit()
    assert np.all(np.isfinite(res.params))
    assert res.predict(DF.head(3)).notna().all()


@pytest.mark.parametrize("engine", ENGINES)
def test_eval_env_opts_in_to_the_callers_names(engine):
    def cube(v):
        return v ** 3

    ref = gcf.logit("y ~ I(x ** 3)", DF, engine=engine).fit()
    for env in (0, {"cube": cube}, patsy.EvalEnvironment([{"cube": cube}])):
        res = gcf.logit("y ~ cube(x)", DF, eval_env=env, engine=engine).fit()
        np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-12)
        np.testing.assert_allclose(res.predict(DF.head(5)), ref.predict(DF.head(5)), rtol=1e-12)
    # a trusted formula may use attribute access, never dunders
    res = gcf.logit("y ~ I(x.clip(0))", DF, eval_env={}, engine=engine).fit()
    assert res.params.index[1] == "I(x.clip(0))"
    with pytest.raises(gc.UnsafeFormulaError, match="'__class__'"):
        gcf.logit("y ~ I(x.__class__)", DF, eval_env=0, engine=engine)
    with pytest.raises(TypeError, match="eval_env"):
        gcf.logit("y ~ x", DF, eval_env="globals", engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_column_missing_at_predict_time_is_never_taken_from_the_callers_scope(engine):
    x = np.zeros(3)  # noqa: F841 - the name a formula evaluated in this scope could find
    res = gcf.logit("y ~ x + z", DF, eval_env=0, engine=engine).fit()
    with pytest.raises(ValueError, match="lack the column 'x'"):
        res.predict(DF[["z"]].head(3))


@pytest.mark.parametrize("engine", ENGINES)
def test_unpickling_runs_no_formula_code(engine):
    res = gcf.logit("y ~ counted(x) + center(z) + C(g)", DF, engine=engine,
                    eval_env={"counted": counted}).fit()
    blob = pickle.dumps(res)
    CALLS.clear()
    back = pickle.loads(blob)
    assert CALLS == []  # loading evaluated nothing
    again = pickle.loads(pickle.dumps(back))  # re-pickled before ever predicting
    new = DF.head(7)
    np.testing.assert_array_equal(back.predict(new), res.predict(new))
    np.testing.assert_array_equal(again.predict(new), res.predict(new))
    assert CALLS  # predicting evaluates the formula (the user's function), as at fit


def test_a_tampered_pickle_cannot_smuggle_code_into_prediction():
    res = gcf.logit("y ~ I(x * 1)", DF).fit()
    state = pickle.loads(pickle.dumps(res))
    spec = state.model.data.spec
    spec.__dict__.pop("design_info", None)
    spec.__dict__["rhs"] = "I(x * 1 + 0 * __import__('os').getpid())"
    with pytest.raises(gc.UnsafeFormulaError, match="__import__"):
        spec.exog(DF.head(2))


def test_a_tampered_formulaic_spec_cannot_smuggle_code_into_prediction():
    from formulaic import ModelSpec

    res = gcf.logit("y ~ I(x * 1)", DF, engine="formulaic").fit()
    back = pickle.loads(pickle.dumps(res))
    spec = back.model.data.spec
    evil = ModelSpec.from_spec("I(x * 1 + 0 * __import__('os').getpid())")
    spec.model_spec = spec.model_spec.update(formula=evil.formula)
    with pytest.raises(gc.UnsafeFormulaError, match="__import__"):
        spec.exog(DF.head(2))


def test_the_evaluation_environment_checks_every_expression():
    env = FormulaEnvironment([safe_namespace()])
    assert env.eval("np.log(x)", inner_namespace={"x": np.e}) == pytest.approx(1.0)
    for code in ("__import__('os')", "x.__class__", "open('f')", "np.save('f', x)"):
        with pytest.raises(gc.UnsafeFormulaError):
            env.eval(code, inner_namespace={"x": np.ones(2)})
    # what patsy derives from it (its builtins added, a subset kept) stays checked
    derived = env.with_outer_namespace({"extra": 1}).subset(["np"])
    assert isinstance(derived, FormulaEnvironment)
    with pytest.raises(gc.UnsafeFormulaError):
        derived.eval("np.load('f')")


def test_check_code_returns_the_names_and_quoted_columns():
    columns = {"x", "weird name"}
    names = check_code("np.log(Q('weird name')) + x", lambda n: n in columns | {"np", "Q"},
                       is_column=lambda n: n in columns)
    assert names >= {"x", "weird name", "np"}
    with pytest.raises(gc.UnsafeFormulaError, match="not a valid expression"):
        check_code("x +", lambda n: True)


def test_build_design_default_is_safe():
    with pytest.raises(gc.UnsafeFormulaError):
        build_design("y ~ I(__import__('os').getpid())", DF)


@pytest.mark.parametrize("formula, match", [
    ("y ~ `weird name`", r"Q\('mean radius'\), not in backticks"),
    ("y ~ (x + z)^2", r"written \*\*"),
    ("y ~ weird name", r"not a valid expression.*Q\('mean radius'\)"),
    ("y ~ log(z)", r"numpy's is np\.log"),
])
def test_r_habits_get_a_hint(formula, match):
    with pytest.raises(ValueError, match=match):
        gcf.logit(formula, DF)
