"""Sandwich covariances of fits with both frequency and variance weights on Dask: the blocks
carry the frequency weights apart from the prior weights (``f * v``), so HC0-HC3 and one- and
two-way clusters are a reduce over the partitions, equal to the in-memory fit of the same
rows to 1e-10 (synchronous scheduler)."""

from __future__ import annotations

import functools
import warnings

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass import families as F

TOL = 1e-10


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(300)
    n = 700
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "t": rng.uniform(0.5, 3.0, n), "f": rng.integers(0, 4, n).astype(float),
                       "v": rng.uniform(0.3, 2.0, n), "g": rng.choice(list("abcdefghij"), n),
                       "h": rng.integers(0, 6, n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.2 + 0.7 * df.x)))).astype(int)
    df["count"] = rng.poisson(df.t * np.exp(0.1 + 0.4 * df.z))
    df["k"] = rng.binomial(6, 0.3, n)
    df["m"] = 6 - df["k"]
    df.loc[[2, 333], "x"] = np.nan
    return df


MODELS = {
    "logit": (gc.Logit.from_formula, "y ~ x + z", {}),
    "poisson_exposure": (functools.partial(gc.GLM.from_formula, family=F.Poisson()),
                         "count ~ x + z", {"exposure": "t"}),
    "binomial_counts": (functools.partial(gc.GLM.from_formula, family=F.Binomial()),
                        "cbind(k, m) ~ x + z", {}),
}
COVS = [{"cov_type": "HC0"}, {"cov_type": "HC1"}, {"cov_type": "HC2"}, {"cov_type": "HC3"},
        {"cov_type": "cluster", "cov_kwds": {"groups": "g"}},
        {"cov_type": "cluster", "cov_kwds": {"groups": ["g", "h"], "fix": True}}]


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("cov", COVS, ids=lambda c: c["cov_type"] + str(
    len(c.get("cov_kwds", {}).get("groups", ""))))
def test_frequency_and_variance_weights_on_dask(data, model, cov):
    make, formula, rows = MODELS[model]
    ddf = dd.from_pandas(data, npartitions=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = make(formula, data, freq_weights=data.f, var_weights=data.v, **rows).fit(**cov)
        b = make(formula, ddf, freq_weights=ddf.f, var_weights=ddf.v, **rows).fit(**cov)
        only_f = make(formula, data, freq_weights=data.f, **rows).fit(**cov)
    assert rel(b.params, a.params) < TOL
    assert b.nobs == a.nobs
    assert rel(b.cov_params(), a.cov_params()) < TOL
    assert rel(b.bse, a.bse) < TOL
    assert rel(a.cov_params(), only_f.cov_params()) > 1e-3  # the variance weights count


def test_weights_named_by_column_on_dask(data):
    ddf = dd.from_pandas(data, npartitions=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gc.Logit.from_formula("y ~ x + z", data, freq_weights="f",
                                  var_weights="v").fit(cov_type="HC3")
        b = gc.Logit.from_formula("y ~ x + z", ddf, freq_weights="f",
                                  var_weights="v").fit(cov_type="HC3")
    assert rel(b.cov_params(), a.cov_params()) < TOL
