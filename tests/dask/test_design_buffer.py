"""The design buffers of formula/fast_design.py: a partition's design rebuilt every pass (data
not persisted) is written into memory reused from the pass before, but a buffer is never handed
out while any view of it is alive (a part Dask still holds, a persisted part, a block), never
to two threads, and the cache stays small. Fits through the buffers equal the in-memory fits."""

from __future__ import annotations

import threading

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.data.dask as D
from glmclass.formula.fast_design import BUFFERS, DesignBuffers, fast_design

TOL = 1e-10
LEVELS = ("a", "b", "c")
#: intercept, C(g) in treatment coding (2 columns), x, z
FAST = (("one",), ("cat", "g", LEVELS, np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])),
        ("num", "x"), ("num", "z"))


def _rows(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"g": rng.choice(LEVELS, n), "x": rng.normal(size=n),
                         "z": rng.integers(0, 5, n)})


def _expected(rows: pd.DataFrame) -> np.ndarray:
    g = rows.g.to_numpy()
    return np.column_stack([np.ones(len(rows)), g == "b", g == "c", rows.x, rows.z]).astype(float)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_design_equals_the_dummies_and_columns():
    for n in (0, 1, 5, 3000):  # below, at and across the chunks of rows
        rows = _rows(n, n)
        x = fast_design(FAST, rows)
        assert x.shape == (n, 5) and x.flags.c_contiguous
        np.testing.assert_array_equal(x, _expected(rows))


def test_a_buffer_is_reused_only_when_no_view_of_it_is_alive():
    buffers = DesignBuffers(keep=2)
    first = buffers.get(1000, 5)
    first[:] = 1.0
    view = first[10:20, 1:3]  # what a block or a taken column would keep
    del first
    second = buffers.get(1000, 5)
    assert not np.shares_memory(second, view)
    second[:] = 2.0
    assert (view == 1.0).all()
    del view, second  # both idle now: the next designs reuse them, one each while both live
    a, b = buffers.get(1000, 5), buffers.get(900, 5)
    assert not np.shares_memory(a, b)
    assert any(np.shares_memory(a, buf) for buf in buffers.buffers)
    assert any(np.shares_memory(b, buf) for buf in buffers.buffers)
    c = buffers.get(1000, 5)  # both in use: a fresh array, and the cache stays at two
    assert not np.shares_memory(c, a) and not np.shares_memory(c, b)
    assert len(buffers.buffers) == 2


def test_designs_beyond_the_byte_budget_are_not_remembered():
    buffers = DesignBuffers(keep=2, max_bytes=2 * 8 * 100 * 5)
    small = buffers.get(100, 5)
    assert len(buffers.buffers) == 1
    big = buffers.get(101, 5)  # two of these would pass the budget
    assert len(buffers.buffers) == 1 and not np.shares_memory(big, buffers.buffers[0])
    del small
    assert _address(buffers.get(100, 5)) == _address(buffers.buffers[0])


def test_consecutive_designs_reuse_memory_and_live_ones_never_alias():
    rows = _rows(2000, 1)
    x1 = fast_design(FAST, rows)
    x2 = fast_design(FAST, rows)  # x1 alive: another buffer
    assert not np.shares_memory(x1, x2)
    held = x1[:, 3]
    del x1
    x3 = fast_design(FAST, _rows(2000, 2))
    assert not np.shares_memory(x3, held) and not np.shares_memory(x3, x2)
    np.testing.assert_array_equal(held, rows.x.to_numpy())
    address = _address(x2)
    del x2
    x4 = fast_design(FAST, rows)  # the buffer x2 was built in is idle again: reused
    assert _address(x4) == address
    np.testing.assert_array_equal(x4, _expected(rows))
    assert len(BUFFERS.buffers) <= BUFFERS.keep


def test_threads_never_share_a_buffer():
    frames = [_rows(3000, s) for s in range(6)]
    out: dict[int, np.ndarray] = {}
    start = threading.Barrier(6)

    def build(i: int) -> None:
        start.wait()
        for _ in range(5):  # each thread drops and rebuilds: its own buffers are reused
            out[i] = None
            out[i] = fast_design(FAST, frames[i])

    threads = [threading.Thread(target=build, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):
        np.testing.assert_array_equal(out[i], _expected(frames[i]))
        for j in range(i):
            assert not np.shares_memory(out[i], out[j])


@pytest.fixture(params=["sync", "threads"])
def scheduler(request):
    with dask.config.set(scheduler=request.param, num_workers=3):
        yield request.param


@pytest.mark.parametrize("persist", [False, True])
def test_fits_through_the_buffers_equal_the_in_memory_fit(frame, scheduler, persist,
                                                          monkeypatch):
    """Out of core every pass rebuilds each partition's design into reused buffers (threads:
    several partitions at once); persisted, every partition keeps its own."""
    monkeypatch.setattr(D, "PERSIST", persist)
    formula = "y ~ x + z + C(g)"
    mem = gc.Logit.from_formula(formula, frame).fit(disp=False)
    ddf = dd.from_pandas(frame, npartitions=7)
    model = gc.Logit.from_formula(formula, ddf)
    assert model.data.persisted is persist
    res = model.fit(disp=False)
    assert res.n_iter == mem.n_iter
    np.testing.assert_allclose(res.params, mem.params, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(res.bse, mem.bse, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(res.llf, mem.llf, rtol=TOL)
    again = model.fit(disp=False)  # a second fit over the same (rebuilt or held) parts
    np.testing.assert_array_equal(again.params, res.params)
    fitted = np.asarray(res.predict(ddf).compute())  # per-row outputs through the parts
    np.testing.assert_allclose(fitted, np.asarray(mem.predict(frame)), rtol=TOL, atol=TOL)
    assert len(BUFFERS.buffers) <= BUFFERS.keep
