"""MixedGLM's ``groups`` and ``exog_re`` given as pandas objects on the array path pair with the
rows by their index (issue 25, siblings of item 1): a shuffled Series was paired by position,
giving another fit in silence; it is refused as the weights and cluster labels are, naming the
argument. The same labels aligned (or as plain values) give the same fit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import glmclass as gc


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(2025)
    n = 160
    d = pd.DataFrame({"x": rng.normal(size=n), "g": np.repeat(np.arange(16), 10)},
                     index=pd.Index(500 + np.arange(n), name="id"))
    u = rng.normal(size=16)[d.g]
    d["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + d.x + u)))).astype(int)
    d["const"] = 1.0
    return d


def fit(df, groups, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GlmclassWarning)
        return gc.MixedLogit(df.y, df[["const", "x"]], groups, **kw).fit()


def test_shuffled_groups_are_refused_naming_them(df):
    shuffled = df.g.sample(frac=1.0, random_state=1)
    with pytest.raises(ValueError, match=r"groups and the rows of the data have different "
                                         r"indexes \(first difference at position 0"):
        fit(df, shuffled)
    ref = fit(df, df.g)
    aligned = fit(df, shuffled.reindex(df.index))
    np.testing.assert_allclose(aligned.params, ref.params, rtol=1e-10)
    by_position = fit(df, df.g.to_numpy())
    np.testing.assert_allclose(by_position.params, ref.params, rtol=1e-10)


def test_shuffled_random_slopes_are_refused_naming_them(df):
    shuffled = df[["x"]].sample(frac=1.0, random_state=2)
    with pytest.raises(ValueError, match=r"exog_re and the rows of the data have different"):
        fit(df, df.g, exog_re=shuffled)
