"""A sandwich with both frequency and variance weights is that of the data with each row
repeated ``freq_weights`` times (keeping its variance weight): HC0-HC3 and clusters."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import glmclass as gc


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("cov", [{"cov_type": "HC0"}, {"cov_type": "HC1"},
                                 {"cov_type": "HC2"}, {"cov_type": "HC3"},
                                 {"cov_type": "cluster", "cov_kwds": {"groups": "g"}}],
                         ids=lambda c: c["cov_type"])
def test_frequency_and_variance_weights_are_replicated_rows(cov):
    rng = np.random.default_rng(11)
    n = 240
    df = pd.DataFrame({"x": rng.normal(size=n), "f": rng.integers(1, 4, n),
                       "v": rng.uniform(0.3, 2.0, n), "g": rng.integers(0, 12, n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + df.x)))).astype(int)
    rep = df.loc[df.index.repeat(df["f"])].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gc.Logit.from_formula("y ~ x", df, freq_weights=df.f.astype(float),
                                  var_weights=df.v).fit(**cov)
        b = gc.Logit.from_formula("y ~ x", rep, var_weights=rep.v).fit(**cov)
    assert a.nobs == b.nobs == df.f.sum()
    assert rel(a.params, b.params) < 1e-10
    assert rel(a.cov_params(), b.cov_params()) < 1e-10
