"""Fixtures of the Dask tests: small data split into partitions; the local scheduler runs in
this process (the distributed tests start their own cluster)."""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd
import pytest


@pytest.fixture(autouse=True)
def _single_threaded():
    """Most tests use the synchronous scheduler (fast on tiny data, deterministic); those that
    exercise threads or a cluster say so."""
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="session")
def frame() -> pd.DataFrame:
    """1200 rows: numeric x, z; a three-level g; binary, multiclass and count responses;
    weights and an offset; x missing on two rows."""
    rng = np.random.default_rng(20261122)
    n = 1200
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(1.0, 2.0, size=n),
                       "g": rng.choice(["a", "b", "c"], n),
                       "w": rng.integers(1, 4, n).astype(float),
                       "off": rng.normal(0, 0.2, size=n)})
    eta = 0.4 + 0.8 * df.x - 0.3 * df.z + 0.6 * (df.g == "b")
    df["y"] = rng.random(n) < 1 / (1 + np.exp(-eta))
    df["count"] = rng.poisson(np.exp(0.3 + 0.2 * df.x))
    lin = np.column_stack([np.zeros(n), 0.5 * df.x + (df.g == "b"), -0.4 * df.z + 0.3])
    p = np.exp(lin)
    p /= p.sum(axis=1, keepdims=True)
    df["k"] = np.array(["lo", "mid", "hi"])[(rng.random(n)[:, None] > p.cumsum(1)).sum(1)]
    df["b1"] = (df.x > 0).astype(float)
    df["b2"] = (df.z > 1.5).astype(float)
    df.loc[[7, 500], "x"] = np.nan
    return df
