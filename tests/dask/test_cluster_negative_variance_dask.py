"""A two-way cluster-robust covariance with a negative variance on Dask data (issue 25,
item 2): the same matrix as in memory (to 1e-10), the same NaN standard errors and the one
warning naming the coefficient; ``fix=True`` the same clipped matrix. The in-memory fit is
tested against R's sandwich::vcovCL in tests/results/test_cluster_negative_variance.py."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc

REF = json.loads((Path(__file__).parents[1] / "reference" / "cluster_fix.json").read_text())


def fit_recording(data, cov_kwds):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        res = gc.Logit.from_formula("y ~ x + z", data).fit(cov_type="cluster",
                                                           cov_kwds=cov_kwds)
        res.bse  # noqa: B018
    return res, [w for w in caught if issubclass(w.category, gc.GlmclassWarning)]


@pytest.mark.parametrize("name", sorted(REF["cases"]))
@pytest.mark.parametrize("fix", [False, True])
def test_dask_two_way_clusters_equal_the_in_memory_fit(name, fix):
    df = pd.DataFrame(REF["cases"][name]["data"])
    kwds = {"groups": ["g", "h"], "fix": fix}
    mem, mem_warned = fit_recording(df, kwds)
    lazy, lazy_warned = fit_recording(dd.from_pandas(df, npartitions=3), kwds)
    V, W = lazy.cov_params().to_numpy(), mem.cov_params().to_numpy()
    np.testing.assert_allclose(V, W, rtol=1e-10, atol=1e-12 * np.abs(W).max())
    pd.testing.assert_series_equal(lazy.bse.isna(), mem.bse.isna())
    np.testing.assert_allclose(lazy.bse.to_numpy(), mem.bse.to_numpy(), rtol=1e-10)
    assert [str(w.message) for w in lazy_warned] == [str(w.message) for w in mem_warned]
    assert len(lazy_warned) == (0 if fix else 1)
    assert all(w.filename == __file__ for w in lazy_warned)
    if not fix:
        negative = ["Intercept" if n == "(Intercept)" else n
                    for n in REF["cases"][name]["negative"]]
        assert lazy.bse[negative].isna().all()
