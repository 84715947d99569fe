"""The Dask formula path's design: learned in one tree-reduced pass of per-partition witnesses,
and built per partition with NumPy (formula/fast_design.py) where patsy is not needed. Every
design equals patsy's (columns, names, levels, missing rows, unseen levels), and fits equal the
in-memory fit."""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pandas as pd
import patsy
import pytest

import glmclass as gc
from glmclass.formula.fast_design import fast_columns, fast_design
from glmclass.formula.incremental import MAX_NUMERIC_LEVELS, Witness, learn_design
from glmclass.formula.namespace import formula_env
from glmclass.formula.spec import complete_rows

TOL = 1e-10


@pytest.fixture(scope="module")
def data(frame) -> pd.DataFrame:
    """The shared frame, with a missing g, an integer code, a bool, a pandas Categorical (one
    category never seen), and the labels as pyarrow strings."""
    df = frame.copy()
    rng = np.random.default_rng(3)
    df["n"] = rng.integers(1, 4, len(df))
    df["flag"] = df.z > 1
    df["cat"] = pd.Categorical(rng.choice(["u", "v"], len(df)), categories=["v", "u", "never"])
    df["s"] = df.g.astype("string[pyarrow]")
    df["g"] = df.g.astype(object)
    df.loc[11, "g"] = None
    return df


FORMULAS = [
    "y ~ x + z + C(g)", "y ~ 0 + C(g) + x", "y ~ C(g, Sum) + x", "y ~ C(g, Treatment('c'))",
    "y ~ g + x", "y ~ C(n) + z", "y ~ flag + x", "y ~ cat + x", "y ~ C(s) + z", "y ~ s + n",
    "y ~ C(b1) + C(b2, Sum) + x",
]


def _model(formula: str, df: pd.DataFrame, parts: int = 4):
    return gc.GLM.from_formula(formula, dd.from_pandas(df, npartitions=parts),
                               family=gc.families.Binomial())


def _recipe(formula: str, df: pd.DataFrame, parts: int = 4):
    return _model(formula, df, parts).data.recipe


@pytest.mark.filterwarnings("ignore:the design is rank deficient")  # cat's unseen 'never'
@pytest.mark.parametrize("formula", FORMULAS)
def test_fast_design_equals_patsy_and_memory(data, formula):
    model = _model(formula, data)
    recipe = model.data.recipe
    assert recipe.fast is not None, "this formula should not need patsy per partition"
    assert model.data.timings["design_passes"] == 1
    mem = gc.GLM.from_formula(formula, data, family=gc.families.Binomial())
    assert model.exog_names == mem.exog_names  # same columns, names and levels
    rows = data[complete_rows(data[recipe.used + ["y"]])]
    (ref,) = patsy.build_design_matrices([recipe.design_info()], rows)
    fast = fast_design(recipe.fast, rows)
    np.testing.assert_array_equal(fast, np.asarray(ref))
    y, X, keep, off = recipe.build(data)
    np.testing.assert_array_equal(X, mem.exog)  # missing rows dropped alike
    assert int((~keep).sum()) == mem.data.n_dropped and off is None
    res_mem, res = mem.fit(), model.fit()
    np.testing.assert_allclose(res.params, res_mem.params, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(res.bse, res_mem.bse, rtol=TOL, atol=TOL)


@pytest.mark.parametrize("formula", ["y ~ x:C(g)", "y ~ np.log(z + 10) + C(g)",
                                     "y ~ x + offset(z)", "y ~ C(g):C(flag)"])
def test_other_formulas_keep_patsy(data, formula):
    model = _model(formula, data)
    assert model.data.recipe.fast is None
    mem = gc.GLM.from_formula(formula, data, family=gc.families.Binomial())
    assert model.exog_names == mem.exog_names
    np.testing.assert_allclose(model.fit().params, mem.fit().params, rtol=TOL, atol=TOL)


def test_unseen_level_is_patsys_error(data):
    recipe = _recipe("y ~ x + C(g)", data)
    new = data.head(20).assign(g="nope")
    assert fast_design(recipe.fast, new) is None  # patsy then reports it
    with pytest.raises(ValueError, match="value 'nope' does not match any of the expected"):
        recipe.build(new)  # a partition of the data: patsy's message, as before
    res = _model("y ~ x + C(g)", data).fit()
    with pytest.raises(ValueError, match="level 'nope'"):  # new data: as in memory
        res.predict(dd.from_pandas(new, npartitions=2)).compute()
    with pytest.raises(ValueError, match="level 'nope'"):
        res.predict(new)


def test_a_level_only_in_the_last_partition_and_a_changed_dtype(data):
    df = data.sort_values("g", na_position="first").reset_index(drop=True)
    df.loc[len(df) - 3:, "g"] = "zz"  # only in the last partition
    res = _model("y ~ x + C(g)", df, parts=6).fit()
    assert "C(g)[T.zz]" in res.params.index
    mem = gc.GLM.from_formula("y ~ x + C(g)", df, family=gc.families.Binomial()).fit()
    np.testing.assert_allclose(res.params, mem.params, rtol=TOL, atol=TOL)
    recipe = res.model.data.recipe
    assert fast_design(recipe.fast, df.head(5).assign(x=df.x.head(5).astype(str))) is None


def test_one_pass_witness_learns_what_the_sequential_pass_learns(data):
    pieces = [data.iloc[i:i + 250] for i in range(0, len(data), 250)]
    used = ["g", "n", "s", "x"]
    merged = Witness(used)
    for piece in pieces:  # in any grouping: the merge keeps the order of appearance
        merged = Witness(used).merge(merged).merge(
            Witness.of(piece[complete_rows(piece[used + ["y"]])], used))
    assert merged.rows == int(complete_rows(data[used + ["y"]]).sum())
    env = formula_env(None)
    f = "y ~ x + C(g) + C(n) + s"
    one = learn_design(f, None, list(data.columns), env, witness=merged)

    def seq():
        for p in pieces:
            yield p[complete_rows(p[used + ["y"]])][used]

    two = learn_design(f, seq, list(data.columns), env)
    assert one.column_names == two.column_names
    assert fast_columns(one.design_info(), list(data.columns)) is not None
    # a stateful transform needs the rows themselves
    assert learn_design("y ~ center(x)", None, list(data.columns), env,
                        witness=merged) is None


def test_stateful_transforms_take_a_second_pass(data):
    model = _model("y ~ center(x) + C(g)", data)
    assert model.data.timings["design_passes"] == 2 and model.data.recipe.fast is None
    mem = gc.GLM.from_formula("y ~ center(x) + C(g)", data, family=gc.families.Binomial())
    np.testing.assert_allclose(model.fit().params, mem.fit().params, rtol=TOL, atol=TOL)


def test_a_continuous_column_as_a_categorical_is_refused(data):
    df = data.assign(u=np.arange(len(data)) / 7.0)
    assert len(df) > MAX_NUMERIC_LEVELS
    with pytest.raises(ValueError, match="column 'u' is used as a categorical"):
        _model("y ~ C(u)", df)
    _model("y ~ u", df)  # as a number it is fine


def test_disp_reports_the_design_pass(data, capsys):
    _model("y ~ x + C(g)", data).fit(disp=True)
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("design: 1 pass, ") and "parts: built and checked" in first
    assert out.splitlines()[1].split()[:2] == ["iter", "deviance"]
