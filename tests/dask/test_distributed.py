"""Fits under a dask.distributed Client: a LocalCluster of two worker processes (small data).

Marked ``distributed`` (deselect with ``-m 'not distributed'``); CI runs them.
"""

from __future__ import annotations

import os

import dask
import dask.dataframe as dd
import numpy as np
import pytest

import glmclass as gc
import glmclass.models.glm as glm_module

pytestmark = pytest.mark.distributed


@pytest.fixture(autouse=True)
def _single_threaded():
    """Overrides the package fixture: here the distributed client schedules."""
    yield


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit="2GiB")
        with Client(cluster) as c:
            yield c
        cluster.close()


def on_a_worker() -> bool:
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def scaled(x):
    """A user function in a formula: travels to the workers with the recipe."""
    return np.asarray(x) / 2.0


def fatal(x):
    """Kills the worker process that evaluates it (the client's evaluation passes)."""
    if on_a_worker():
        os._exit(1)
    return np.asarray(x)


def test_fits_run_on_the_workers(client, frame):
    ddf = dd.from_pandas(frame, npartitions=4)
    f = "y ~ scaled(x) + center(z) + C(g)"
    env = {"scaled": scaled}  # a trusted function of the user's, shipped to the workers
    mem = gc.Logit.from_formula(f, frame, freq_weights=frame.w, offset=frame.off,
                                eval_env=env).fit()
    lazy = gc.Logit.from_formula(f, ddf, freq_weights=ddf.w, offset=ddf.off,
                                 eval_env=env).fit()
    assert lazy.model.data.persisted
    assert sum(len(keys) for keys in client.has_what().values()) > 0  # parts on the workers
    np.testing.assert_allclose(lazy.params, mem.params, rtol=1e-10)
    np.testing.assert_allclose(lazy.bse, mem.bse, rtol=1e-10)
    assert lazy.llf == pytest.approx(mem.llf, rel=1e-10)
    np.testing.assert_allclose(lazy.predict(ddf).compute(), mem.predict(frame), rtol=1e-10)
    assert str(lazy.summary()) == str(mem.summary())
    k_mem = gc.MNLogit.from_formula("k ~ x + C(g)", frame).fit()
    k_lazy = gc.MNLogit.from_formula("k ~ x + C(g)", ddf).fit()
    np.testing.assert_allclose(k_lazy.params, k_mem.params, rtol=1e-10, atol=1e-12)
    q_lazy = gc.QDA.from_formula("k ~ x + z", ddf).fit()
    assert q_lazy.llf == pytest.approx(gc.QDA.from_formula("k ~ x + z", frame).fit().llf,
                                       rel=1e-10)


def test_results_features_run_on_the_workers(client, frame):
    """The per-row maps and refits of the results (hat values, influence, profile refits
    with a held column, Firth's two-pass evaluations, predictions of an in-memory fit on
    Dask data) travel to the worker processes and equal the in-memory fit."""
    ddf = dd.from_pandas(frame, npartitions=4)
    f = "y ~ x + z + C(g)"
    mem = gc.Logit.from_formula(f, frame, freq_weights=frame.w).fit()
    lazy = gc.Logit.from_formula(f, ddf, freq_weights=ddf.w).fit()
    close = dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lazy.hat_matrix_diag.compute(), mem.hat_matrix_diag, **close)
    np.testing.assert_allclose(lazy.get_influence().cooks_distance[0].compute(),
                               mem.get_influence().cooks_distance[0], **close)
    np.testing.assert_allclose(lazy.conf_int(method="profile"),
                               mem.conf_int(method="profile"), **close)
    np.testing.assert_allclose(mem.predict(ddf).compute(), mem.predict(frame), **close)
    firth_mem = gc.FirthLogit.from_formula("y ~ x + z", frame).fit()
    firth = gc.FirthLogit.from_formula("y ~ x + z", ddf).fit()
    np.testing.assert_allclose(firth.params, firth_mem.params, **close)
    np.testing.assert_allclose(firth.hat_matrix_diag.compute(), firth_mem.hat_matrix_diag,
                               **close)


def test_a_worker_dies_mid_fit(client, frame, monkeypatch):
    """Lost partitions are recomputed by Dask from their lineage; the fit is unchanged."""
    ddf = dd.from_pandas(frame, npartitions=4)
    mem = gc.Logit.from_formula("y ~ x + C(g)", frame).fit()
    model = gc.Logit.from_formula("y ~ x + C(g)", ddf)
    killed = []

    class KillAfterFirst(glm_module.IterationLog):
        def __call__(self, iteration, *args):
            super().__call__(iteration, *args)
            if iteration == 1:
                victim = sorted(client.scheduler_info()["workers"])[0]
                try:
                    client.run(os._exit, 1, workers=[victim])
                except Exception:  # noqa: BLE001 - the victim's connection drops as it dies
                    pass
                killed.append(victim)

    monkeypatch.setattr(glm_module, "IterationLog", KillAfterFirst)
    res = model.fit(disp=True)
    assert killed
    np.testing.assert_allclose(res.params, mem.params, rtol=1e-10)
    assert res.deviance == pytest.approx(mem.deviance, rel=1e-10)


def test_a_task_that_keeps_killing_workers_is_a_clear_error(client, frame):
    from distributed.scheduler import KilledWorker

    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(KilledWorker, match="died"):
        gc.Logit.from_formula("y ~ fatal(x)", ddf, eval_env={"fatal": fatal}).fit()
