"""OrderedModel on Dask data: every number equal to the in-memory fit of the same rows."""

from __future__ import annotations

from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf

REF = Path(__file__).resolve().parents[1] / "reference" / "data"
TOL = 1e-10


@pytest.fixture(scope="module")
def sim() -> pd.DataFrame:
    df = pd.read_csv(REF / "ordinal_sim.csv")
    df["w"] = np.arange(len(df)) % 3 + 1.0
    return df


def close(a, b, rtol=TOL):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=rtol, atol=1e-13)


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog"])
@pytest.mark.parametrize("kw", [{}, {"offset": "off"}, {"freq_weights": "w"},
                                {"var_weights": "w"}], ids=["plain", "offset", "freq", "var"])
def test_fit_equals_in_memory(sim, link, kw):
    ddf = dd.from_pandas(sim, npartitions=4)
    mem = gcf.ordinal("y ~ x1 + x2 + g", sim, link=link, **kw).fit()
    lazy = gcf.ordinal("y ~ x1 + x2 + g", ddf, link=link, **kw).fit()
    assert list(lazy.params.index) == list(mem.params.index)
    close(lazy.params, mem.params)
    close(lazy.bse, mem.bse)
    for name in ("llf", "llnull", "aic", "bic", "nobs", "df_resid"):
        assert getattr(lazy, name) == pytest.approx(getattr(mem, name), rel=TOL), name
    close(lazy.predict(sim.head(25)), mem.predict(sim.head(25)))
    close(lazy.get_prediction(sim.head(5)).se, mem.get_prediction(sim.head(5)).se)


@pytest.mark.parametrize("cov", [("HC0", None), ("HC1", None), ("cluster", {"groups": "g"})])
def test_robust_covariances_equal_in_memory(sim, cov):
    ddf = dd.from_pandas(sim, npartitions=4)
    cov_type, kwds = cov
    mem = gcf.ordinal("y ~ x1 + x2", sim, offset="off").fit(cov_type=cov_type, cov_kwds=kwds)
    lazy = gcf.ordinal("y ~ x1 + x2", ddf, offset="off").fit(cov_type=cov_type, cov_kwds=kwds)
    close(lazy.cov_params(), mem.cov_params())


def test_levels_and_compare(sim):
    ddf = dd.from_pandas(sim, npartitions=4)
    lazy = gcf.ordinal("y ~ x1 + x2 + g", ddf).fit()
    small = gcf.ordinal("y ~ x1", ddf).fit()
    assert lazy.levels == ["L1", "L2", "L3", "L4"]
    assert gc.lrtest(small, lazy).df == 3
    table = gc.compare([small, lazy])
    assert table.index[0] == "y ~ x1 + x2 + g"
    with pytest.raises(ValueError, match="rows in memory"):
        lazy.conf_int(method="profile")
