"""Offsets, exposures and (successes, failures) responses on Dask data equal the in-memory fit
of the same rows (issue 24's silently wrong answers): ``exposure=`` by column name, Dask Series
and Dask array; ``offset()`` terms alone and with ``offset=``; ``cbind(k, f)`` and ``k + f``;
rows with a missing offset, exposure or count dropped alike."""

from __future__ import annotations

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass import families as F

TOL = 1e-10
ATTRS = ("params", "bse", "llf", "llnull", "deviance", "aic", "nobs")


def close(a, b, tol: float = TOL) -> None:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(b)))))


def same_fit(mem, lazy) -> None:
    assert type(lazy).__name__ == type(mem).__name__
    assert list(lazy.params.index) == list(mem.params.index)
    for a in ATTRS:
        close(getattr(lazy, a), getattr(mem, a))
    close(lazy.predict().compute(), mem.predict())


@pytest.fixture(scope="module")
def counts() -> pd.DataFrame:
    """600 rows: Poisson counts over an exposure t with an extra offset o; binomial counts
    (k successes, f failures, some rows with no trial); a missing value in t, o and f."""
    rng = np.random.default_rng(20261127)
    n = 600
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(["a", "b", "c"], n),
                       "t": rng.uniform(0.5, 4.0, n), "o": rng.normal(0, 0.3, n)})
    mu = df.t * np.exp(0.2 + 0.5 * df.x + 0.4 * (df.g == "b") + df.o)
    df["y"] = rng.poisson(mu)
    trials = rng.integers(0, 8, n)
    df["k"] = rng.binomial(trials, 1 / (1 + np.exp(-(0.3 - 0.7 * df.x))))
    df["f"] = (trials - df.k).astype(float)
    df.loc[11, "t"] = np.nan
    df.loc[250, "o"] = np.nan
    df.loc[420, "f"] = np.nan
    return df


@pytest.fixture
def ddf(counts) -> dd.DataFrame:
    return dd.from_pandas(counts, npartitions=4)


# --- exposure ---------------------------------------------------------------------------------

def test_exposure_by_column_name(counts, ddf):
    f = "y ~ x + C(g)"
    mem = gc.GLM.from_formula(f, counts, family=F.Poisson(), exposure="t").fit()
    lazy = gc.GLM.from_formula(f, ddf, family=F.Poisson(), exposure="t").fit()
    same_fit(mem, lazy)
    assert lazy.nobs == len(counts) - 1  # the row with no exposure is dropped
    # the exposure column of new data is read when predicting, pandas or Dask
    new = counts.iloc[:40].assign(t=np.linspace(0.5, 3.0, 40))
    close(lazy.predict(new), mem.predict(new))
    close(lazy.predict(ddf).compute(), mem.predict(counts))
    no_exposure = gc.GLM.from_formula(f, counts.dropna(subset=["t"]), family=F.Poisson()).fit()
    assert np.abs(lazy.params - no_exposure.params).max() > 1e-2  # it does change the fit


def test_exposure_as_dask_series(counts, ddf):
    f = "y ~ x + C(g)"
    mem = gc.GLM.from_formula(f, counts, family=F.Poisson(), exposure=counts.t).fit()
    lazy = gc.GLM.from_formula(f, ddf, family=F.Poisson(), exposure=ddf.t).fit()
    same_fit(mem, lazy)
    new = counts.iloc[:40]
    close(lazy.predict(new, exposure=new.t), mem.predict(new, exposure=new.t))


def test_exposure_as_dask_arrays(counts):
    df = counts.dropna(subset=["x"])
    X = np.column_stack([np.ones(len(df)), df.x.to_numpy()])
    y, t = df.y.to_numpy(dtype=float), df.t.to_numpy()
    mem = gc.GLM(y, X, family=F.Poisson(), exposure=t).fit()
    lazy = gc.GLM(da.from_array(y, chunks=150), da.from_array(X, chunks=(150, 2)),
                  family=F.Poisson(), exposure=da.from_array(t, chunks=150)).fit()
    same_fit(mem, lazy)
    assert lazy.model.data.exposure


def test_named_columns_leave_the_dot(counts, ddf):
    """Columns named by exposure=/offset=/freq_weights= are left out of ``.``, as in memory."""
    df = counts[["y", "x", "t", "o"]].assign(w=np.arange(len(counts)) % 2 + 1.0)
    kw = dict(family=F.Poisson(), exposure="t", offset="o", freq_weights="w")
    mem = gc.GLM.from_formula("y ~ .", df, **kw).fit()
    lazy = gc.GLM.from_formula("y ~ .", dd.from_pandas(df, npartitions=3), **kw).fit()
    assert list(lazy.params.index) == ["Intercept", "x"]
    same_fit(mem, lazy)


def test_exposure_errors_as_in_memory(counts, ddf):
    bad = counts.assign(t=counts.t.where(counts.index != 300, -1.0))
    with pytest.raises(ValueError, match="exposure must be positive"):
        gc.GLM.from_formula("y ~ x", bad, family=F.Poisson(), exposure=bad.t)
    bdd = dd.from_pandas(bad, npartitions=4)
    with pytest.raises(ValueError, match="exposure must be positive.*row 300 has -1"):
        gc.GLM.from_formula("y ~ x", bdd, family=F.Poisson(), exposure=bdd.t)
    with pytest.raises(ValueError, match="for a log link"):
        gc.GLM.from_formula("y ~ x", ddf, family=F.Gaussian(), exposure="t")
    with pytest.raises(ValueError, match="is not a column of data"):
        gc.GLM.from_formula("y ~ x", ddf, family=F.Poisson(), exposure="nothere")


# --- offset() terms -----------------------------------------------------------------------------

def test_offset_term_is_an_offset(counts, ddf):
    f = "y ~ x + C(g) + offset(np.log(t))"
    mem = gc.GLM.from_formula(f, counts, family=F.Poisson()).fit()
    lazy = gc.GLM.from_formula(f, ddf, family=F.Poisson()).fit()
    same_fit(mem, lazy)
    assert not any("offset" in c for c in lazy.params.index)
    exposed = gc.GLM.from_formula("y ~ x + C(g)", ddf, family=F.Poisson(), exposure="t").fit()
    close(lazy.params, exposed.params)  # offset(np.log(t)) is exposure=t
    new = counts.iloc[100:160].assign(t=2.0)
    close(lazy.predict(new), mem.predict(new))
    close(lazy.predict(dd.from_pandas(new, npartitions=2)).compute(), mem.predict(new))


def test_offset_term_with_offset_argument(counts, ddf):
    f = "y ~ x + offset(np.log(t))"
    for off in ("o", None):
        kw_mem = {"offset": counts.o if off is None else off}
        kw_lazy = {"offset": ddf.o if off is None else off}
        mem = gc.GLM.from_formula(f, counts, family=F.Poisson(), **kw_mem).fit()
        lazy = gc.GLM.from_formula(f, ddf, family=F.Poisson(), **kw_lazy).fit()
        same_fit(mem, lazy)
        assert lazy.nobs == len(counts) - 2  # no exposure on one row, no offset on another
    two = gc.GLM.from_formula(f, ddf, family=F.Poisson(), offset="o", exposure="t").fit()
    mem = gc.GLM.from_formula(f, counts, family=F.Poisson(), offset="o", exposure="t").fit()
    same_fit(mem, two)  # log(t) twice: still as in memory


def test_offset_term_missing_raise(counts, ddf):
    msgs = []
    for data in (counts[["y", "o"]], ddf[["y", "o"]]):
        with pytest.raises(ValueError, match="missing values in 'o'") as err:
            gc.GLM.from_formula("y ~ offset(o)", data, family=F.Poisson(), missing="raise")
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]
    mem = gc.GLM.from_formula("y ~ 1 + offset(o)", counts, family=F.Poisson()).fit()
    lazy = gc.GLM.from_formula("y ~ 1 + offset(o)", ddf, family=F.Poisson()).fit()
    same_fit(mem, lazy)  # the intercept-only fit with an offset (an iterated null model)


# --- (successes, failures) responses --------------------------------------------------------------

@pytest.mark.parametrize("lhs", ["cbind(k, f)", "k + f"])
def test_counts_response(counts, ddf, lhs):
    f = f"{lhs} ~ x + C(g)"
    mem = gc.GLM.from_formula(f, counts, family=F.Binomial()).fit()
    lazy = gc.GLM.from_formula(f, ddf, family=F.Binomial()).fit()
    same_fit(mem, lazy)
    assert lazy.model.levels is None and mem.model.levels is None
    assert lazy.model.data.endog_name == mem.model.data.endog_name == "k + f"
    assert lazy.nobs == mem.nobs < len(counts) - 1  # no-trial rows and the NaN row left out
    close(lazy.predict(counts.iloc[:50]), mem.predict(counts.iloc[:50]))
    assert str(lazy.summary()) == str(mem.summary())
    logit_mem = gc.Logit.from_formula(f, counts).fit()
    logit_lazy = gc.Logit.from_formula(f, ddf).fit()
    same_fit(logit_mem, logit_lazy)


def test_counts_response_with_weights_and_arrays(counts, ddf):
    w = pd.Series(np.arange(len(counts)) % 3 + 1.0, index=counts.index)
    mem = gc.GLM.from_formula("cbind(k, f) ~ x", counts, family=F.Binomial(),
                              var_weights=w).fit()
    lazy = gc.GLM.from_formula("cbind(k, f) ~ x", ddf, family=F.Binomial(),
                               var_weights=dd.from_pandas(w, npartitions=4)).fit()
    same_fit(mem, lazy)
    df = counts.dropna(subset=["x", "f"])
    Y = df[["k", "f"]].to_numpy(dtype=float)
    X = np.column_stack([np.ones(len(df)), df.x.to_numpy()])
    mem = gc.GLM(Y, X, family=F.Binomial()).fit()
    lazy = gc.GLM(da.from_array(Y, chunks=(100, 2)), da.from_array(X, chunks=(100, 2)),
                  family=F.Binomial()).fit()
    same_fit(mem, lazy)


def test_counts_errors_as_in_memory(counts, ddf):
    for data in (counts, ddf):
        with pytest.raises(ValueError, match="that is a binomial response; use the Binomial"):
            gc.GLM.from_formula("cbind(k, f) ~ x", data, family=F.Poisson())
    neg = counts.assign(f=counts.f.where(counts.index != 5, -1.0))
    msgs = []
    for data in (neg, dd.from_pandas(neg, npartitions=4)):
        with pytest.raises(ValueError, match="must be non-negative") as err:
            gc.GLM.from_formula("k + f ~ x", data, family=F.Binomial())
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]
    none = counts.assign(k=0, f=0.0)
    with pytest.raises(ValueError, match="has no trials"):
        gc.GLM.from_formula("k + f ~ x", dd.from_pandas(none, npartitions=3),
                            family=F.Binomial())
    frac = counts.assign(f=counts.f + 0.5)
    with pytest.warns(gc.DataWarning, match="non-integer counts"):
        gc.GLM.from_formula("k + f ~ x", dd.from_pandas(frac, npartitions=3),
                            family=F.Binomial())


# --- schedulers --------------------------------------------------------------------------------

def test_threaded_scheduler(counts, ddf):
    with dask.config.set(scheduler="threads"):
        lazy = gc.GLM.from_formula("y ~ x + C(g) + offset(np.log(t))", ddf, family=F.Poisson(),
                                   offset="o").fit()
        cb = gc.GLM.from_formula("cbind(k, f) ~ x", ddf, family=F.Binomial()).fit()
    same_fit(gc.GLM.from_formula("y ~ x + C(g) + offset(np.log(t))", counts,
                                 family=F.Poisson(), offset="o").fit(), lazy)
    same_fit(gc.GLM.from_formula("cbind(k, f) ~ x", counts, family=F.Binomial()).fit(), cb)


@pytest.mark.distributed
def test_two_process_cluster(counts, ddf):
    """The recipe, rebuilt in worker processes, keeps offset() and exposure() as offsets."""
    from distributed import Client, LocalCluster

    mem = gc.GLM.from_formula("y ~ x + C(g) + offset(o)", counts, family=F.Poisson(),
                              exposure="t").fit()
    mem_cb = gc.GLM.from_formula("k + f ~ x", counts, family=F.Binomial()).fit()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit="1GiB") as cluster, \
            Client(cluster):  # results read persisted parts: checked while the client lives
        lazy = gc.GLM.from_formula("y ~ x + C(g) + offset(o)", ddf, family=F.Poisson(),
                                   exposure="t").fit()
        same_fit(mem, lazy)
        close(lazy.predict(ddf).compute(), mem.predict(counts))
        same_fit(mem_cb, gc.GLM.from_formula("k + f ~ x", ddf, family=F.Binomial()).fit())
