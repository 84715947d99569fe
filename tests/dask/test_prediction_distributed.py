"""``get_prediction`` of Dask rows under a dask.distributed Client (a LocalCluster of two
worker processes): the results copy without rows travels to the workers, and the lazy
frames equal the in-memory prediction.

Marked ``distributed`` (deselect with ``-m 'not distributed'``).
"""

from __future__ import annotations

import warnings

import dask
import dask.dataframe as dd
import numpy as np
import pytest

import glmclass as gc

pytestmark = pytest.mark.distributed


@pytest.fixture(autouse=True)
def _single_threaded():
    """Overrides the package fixture: here the distributed client schedules."""
    yield


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="2GiB")
    with Client(cluster) as c:
        yield c
    cluster.close()


def test_predictions_are_made_on_the_workers(client, frame):
    def where(df):
        from distributed import get_worker

        try:
            get_worker()
        except ValueError:
            return df.iloc[:0]
        return df

    ddf = dd.from_pandas(frame, npartitions=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = gc.MNLogit.from_formula("k ~ x + C(g)", frame).fit()
        lazy = gc.MNLogit.from_formula("k ~ x + C(g)", ddf).fit(cov_type="HC0")
        mem_hc0 = gc.MNLogit.from_formula("k ~ x + C(g)", frame).fit(cov_type="HC0")
    assert dask.config.get("scheduler", None) == "dask.distributed"
    got = lazy.get_prediction().summary_frame(alpha=0.1)
    expected = mem_hc0.get_prediction().summary_frame(alpha=0.1)
    # computed on the workers: a partition is kept only where a worker computes it
    on_workers = got.map_partitions(where, meta=expected.iloc[:0]).compute()
    assert len(on_workers) == len(expected)
    num = ["mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]
    np.testing.assert_allclose(on_workers[num].to_numpy(), expected[num].to_numpy(),
                               rtol=1e-10)
    new = mem.get_prediction(ddf, which="linear").summary_frame().compute()
    np.testing.assert_allclose(new[num].to_numpy(),
                               mem.get_prediction(frame, which="linear")
                               .summary_frame()[num].to_numpy(), rtol=1e-10)
