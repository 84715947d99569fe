"""Out of core, the string columns a formula reads only as categorical factors are read once:
their level codes (a byte per row) are held in memory, and every later pass reads the other
columns only. The fits are those of the same rows in memory; which columns qualify is the
recipe's to say (:meth:`PartitionDesign.level_columns`)."""

from __future__ import annotations

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.data.dask as D
from glmclass.data.parts import level_codes, with_level_codes
from glmclass.rows.dask import counting_passes


@pytest.fixture
def data() -> pd.DataFrame:
    rng = np.random.default_rng(20261127)
    n = 1500
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(["a", "b", "c", "d"], n),
                       "h": rng.choice(["u", "v"], n), "t": rng.uniform(1, 3, n)})
    eta = 0.3 + 0.7 * df.x - 0.8 * (df.g == "b") + 0.4 * (df.h == "v")
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    df["count"] = rng.poisson(df.t * np.exp(0.2 * df.x))
    df.loc[[3, 40], "g"] = None  # missing levels: those rows are dropped
    df.loc[[7], "x"] = np.nan
    df.loc[[7], "g"] = "zz"  # a value in an incomplete row only: no level, dropped with its row
    df["g"] = df["g"].astype("string[pyarrow]")
    return df


@pytest.fixture
def out_of_core(monkeypatch):
    monkeypatch.setattr(D, "PERSIST", False)


@pytest.mark.usefixtures("out_of_core")
@pytest.mark.parametrize("scheduler", ["synchronous", "threads"])
def test_held_codes_fit_as_in_memory(data, scheduler):
    ddf = dd.from_pandas(data, npartitions=5)
    with dask.config.set(scheduler=scheduler):
        with counting_passes() as built:
            model = gc.Logit.from_formula("y ~ x + C(g) + h", ddf)
        res = model.fit()
        numbers = {k: float(getattr(res, k)) for k in ("llf", "llnull", "deviance", "nobs")}
        pred = res.predict(data.head(20)).to_numpy()
    assert built == ["design", "level codes", "facts"]
    assert model.data.timings["held"] == ["g", "h"]
    assert "level codes of 'g', 'h' held in memory" in model.data.build_report()
    mem = gc.Logit.from_formula("y ~ x + C(g) + h", data).fit()
    assert numbers["nobs"] == len(data) - 3
    for k, v in numbers.items():
        np.testing.assert_allclose(v, float(getattr(mem, k)), rtol=1e-10, err_msg=k)
    np.testing.assert_allclose(res.params.to_numpy(), mem.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(res.bse.to_numpy(), mem.bse.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(pred, mem.predict(data.head(20)).to_numpy(), rtol=1e-10)


@pytest.mark.usefixtures("out_of_core")
def test_held_codes_with_weights_by_name_and_clusters_by_name(data):
    ddf = dd.from_pandas(data, npartitions=4)
    fam = gc.families.Poisson()
    kw = dict(family=fam, var_weights="t")
    res = gc.GLM.from_formula("count ~ x + C(g, Sum)", ddf, **kw).fit(
        cov_type="cluster", cov_kwds={"groups": "h"})
    mem = gc.GLM.from_formula("count ~ x + C(g, Sum)", data, **kw).fit(
        cov_type="cluster", cov_kwds={"groups": "h"})
    exposed = gc.GLM.from_formula("count ~ x + C(g)", ddf, family=fam, exposure="t")
    assert "held" not in exposed.data.timings  # an offset() term: patsy builds the design
    assert res.model.data.timings["held"] == ["g"]
    np.testing.assert_allclose(res.params.to_numpy(), mem.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(res.bse.to_numpy(), mem.bse.to_numpy(), rtol=1e-10)


def test_persisted_parts_hold_no_codes(data):
    ddf = dd.from_pandas(data, npartitions=4)
    with counting_passes() as built:
        model = gc.Logit.from_formula("y ~ x + C(g)", ddf)
    assert model.data.persisted and "held" not in model.data.timings
    assert "level codes" not in built


@pytest.mark.parametrize(("formula", "held"), [
    ("y ~ x + C(g) + h", {"g": ("a", "b", "c", "d"), "h": ("u", "v")}),
    ("y ~ x + C(g, Treatment('c'))", {"g": ("a", "b", "c", "d")}),
    ("h ~ x + C(g)", {"g": ("a", "b", "c", "d")}),  # the response's column is read as it is
    ("y ~ x + C(g) + C(g):x", {}),  # an interaction: patsy builds it, from the strings
    ("y ~ x", {}),
    ("y ~ np.log(t) + C(g)", {}),  # a transform: patsy builds the design
])
def test_which_columns_are_held(data, formula, held):
    ddf = dd.from_pandas(data, npartitions=2)
    with dask.config.set(scheduler="synchronous"):
        model = gc.GLM.from_formula(formula, ddf, family=gc.families.Binomial())
    assert model.data.recipe.level_columns() == held


def test_level_codes_round_trip():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0],
                          "g": pd.array(["b", None, "a", "q"], dtype="string[pyarrow]")},
                         index=[10, 11, 12, 13])
    levels = {"g": ("a", "b")}
    codes = level_codes(frame, levels)
    assert codes["g"].dtype == np.int8
    np.testing.assert_array_equal(codes["g"], [1, -1, 0, -1])
    back = with_level_codes(frame[["x"]], codes, levels, ["g", "x"])
    assert list(back.columns) == ["g", "x"] and list(back.index) == [10, 11, 12, 13]
    assert list(back["g"].cat.categories) == ["a", "b"]
    assert back["g"].isna().tolist() == [False, True, False, True]
    assert frame["g"].tolist()[0] == "b"  # the partition given is not changed
