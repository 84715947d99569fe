"""Inference on Dask fits equals the in-memory fit of the same rows: sandwich covariances
(HC0-HC3, one- and two-way clusters named by column) and marginal effects, each a reduce over
the partitions (synchronous scheduler, 4 partitions of bundled data)."""

from __future__ import annotations

import warnings

import dask.dataframe as dd
import numpy as np
import pytest

import glmclass as gc

TOL = 1e-10
FORMULA = "low ~ age + I(age**2) + lwt + C(race) + smoke"


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.fixture(scope="module")
def birthwt():
    df = gc.datasets.load("birthwt")
    df["clinic"] = np.array(list("ABCDEFGHIJKL"))[np.arange(len(df)) % 12]
    df["ward"] = np.arange(len(df)) % 5
    df["w"] = (np.arange(len(df)) % 3 + 1).astype(float)
    return df


def fit_both(df, formula, model=gc.Logit, npartitions=4, rows=None, **kw):
    rows = rows or {}
    ddf = dd.from_pandas(df, npartitions=npartitions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = model.from_formula(formula, df, **{k: df[v] for k, v in rows.items()}).fit(**kw)
        b = model.from_formula(formula, ddf, **{k: ddf[v] for k, v in rows.items()}).fit(**kw)
    assert rel(b.params, a.params) < TOL
    return a, b


@pytest.mark.parametrize("cov", [
    {"cov_type": "HC0"}, {"cov_type": "HC1"}, {"cov_type": "HC2"}, {"cov_type": "HC3"},
    {"cov_type": "cluster", "cov_kwds": {"groups": "clinic"}},
    {"cov_type": "cluster", "cov_kwds": {"groups": ["clinic", "ward"], "fix": True}},
    {"cov_type": "cluster", "cov_kwds": {"groups": "clinic", "use_correction": False}},
])
def test_sandwich_on_dask_equals_in_memory(birthwt, cov):
    a, b = fit_both(birthwt, FORMULA, **cov)
    assert b.cov_type == cov["cov_type"]
    assert rel(b.cov_params(), a.cov_params()) < TOL
    assert rel(b.bse, a.bse) < TOL
    # and the sandwich differs from the model-based covariance: the option took effect
    assert rel(a.cov_params(), fit_both(birthwt, FORMULA)[0].cov_params()) > 1e-3


@pytest.mark.parametrize("cov_type", ["HC0", "HC3", "cluster"])
def test_sandwich_with_frequency_weights_and_missing_rows(birthwt, cov_type):
    df = birthwt.copy()
    df.loc[[3, 50, 120], "age"] = np.nan  # dropped rows: the cluster labels must follow
    kw = {"cov_kwds": {"groups": "clinic"}} if cov_type == "cluster" else {}
    a, b = fit_both(df, FORMULA, rows={"freq_weights": "w"}, cov_type=cov_type, **kw)
    assert a.nobs == df.dropna().w.sum()
    assert rel(b.cov_params(), a.cov_params()) < TOL


@pytest.mark.parametrize("cov", [{"cov_type": "HC1"},
                                 {"cov_type": "cluster", "cov_kwds": {"groups": "clinic"}}])
def test_mnlogit_sandwich_on_dask(cov):
    df = gc.datasets.load("iris")
    df["clinic"] = np.arange(len(df)) % 7
    a, b = fit_both(df, "Species ~ Sepal_Length", model=gc.MNLogit, **cov)
    assert rel(b.cov_params(), a.cov_params()) < TOL


def test_cluster_column_must_exist_on_dask(birthwt):
    ddf = dd.from_pandas(birthwt, npartitions=4)
    with pytest.raises(ValueError, match="'hospital' is not a column"):
        gc.Logit.from_formula(FORMULA, ddf).fit(cov_type="cluster",
                                                 cov_kwds={"groups": "hospital"})


@pytest.mark.parametrize("options", [
    {}, {"at": "mean"}, {"method": "eyex"}, {"method": "dyex"}, {"dummy": True},
    {"at": "mean", "method": "eydx", "dummy": True}])
@pytest.mark.parametrize("cov", [{}, {"cov_type": "HC3"}])
def test_margins_on_dask_equal_in_memory(birthwt, options, cov):
    a, b = fit_both(birthwt, FORMULA, **cov)
    ma, mb = a.get_margeff(**options), b.get_margeff(**options)
    assert list(mb.margeff.index) == list(ma.margeff.index)
    assert "C(race)[T.other]" in ma.margeff.index
    assert rel(mb.margeff, ma.margeff) < TOL
    assert rel(mb.margeff_se, ma.margeff_se) < TOL


def test_margins_with_weights_on_dask(birthwt):
    a, b = fit_both(birthwt, FORMULA, rows={"freq_weights": "w"})
    for at in ("overall", "mean"):
        assert rel(b.get_margeff(at=at).margeff, a.get_margeff(at=at).margeff) < TOL
        assert rel(b.get_margeff(at=at).margeff_se, a.get_margeff(at=at).margeff_se) < TOL


@pytest.mark.parametrize("at", ["overall", "mean"])
def test_mnlogit_margins_on_dask(at):
    df = gc.datasets.load("iris")
    a, b = fit_both(df, "Species ~ Sepal_Length", model=gc.MNLogit)
    ma, mb = a.get_margeff(at=at), b.get_margeff(at=at)
    assert list(mb.margeff.index) == list(ma.margeff.index)
    assert rel(mb.margeff, ma.margeff) < TOL
    assert rel(mb.margeff_se, ma.margeff_se) < TOL


def test_array_model_margins_on_dask(birthwt):
    X = birthwt[["age", "lwt", "smoke"]].assign(const=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gc.Logit(birthwt.low, X).fit(cov_type="HC1")
        b = gc.Logit(dd.from_pandas(birthwt.low, npartitions=4),
                     dd.from_pandas(X, npartitions=4)).fit(cov_type="HC1")
    assert rel(b.cov_params(), a.cov_params()) < TOL
    for options in ({}, {"at": "mean", "dummy": True}):
        ma, mb = a.get_margeff(**options), b.get_margeff(**options)
        assert list(ma.kind) == list(mb.kind)
        assert rel(mb.margeff, ma.margeff) < TOL
        assert rel(mb.margeff_se, ma.margeff_se) < TOL


@pytest.mark.distributed
def test_sandwich_and_margins_under_a_process_cluster(birthwt):
    """The per-block functions (scores, hat values, designs at changed data) travel to worker
    processes and give the in-memory numbers there too."""
    import dask
    from distributed import Client, LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gc.Logit.from_formula(FORMULA, birthwt).fit(cov_type="HC3")
        a_cl = gc.Logit.from_formula(FORMULA, birthwt).fit(cov_type="cluster",
                                                           cov_kwds={"groups": "clinic"})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit="2GiB") as cluster, \
            Client(cluster) as client, dask.config.set(scheduler=client.get):
        ddf = dd.from_pandas(birthwt, npartitions=4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = gc.Logit.from_formula(FORMULA, ddf).fit(cov_type="HC3")
            b_cl = gc.Logit.from_formula(FORMULA, ddf).fit(cov_type="cluster",
                                                           cov_kwds={"groups": "clinic"})
        assert rel(b.cov_params(), a.cov_params()) < TOL
        assert rel(b_cl.cov_params(), a_cl.cov_params()) < TOL
        assert rel(b.get_margeff().margeff_se, a.get_margeff().margeff_se) < TOL


def test_cluster_labels_with_duplicate_row_labels_and_dropped_rows(birthwt):
    """Rows dropped for missing values are matched to the cluster column by row label: with
    duplicate labels that cannot be done, and the error says what to do."""
    df = birthwt.copy()
    df.index = np.arange(len(df)) // 2  # sorted, duplicated labels
    df.loc[df.index[10], "age"] = np.nan
    ddf = dd.from_pandas(df, npartitions=4)
    with pytest.raises(ValueError, match="duplicate row labels.*reset_index"):
        gc.Logit.from_formula(FORMULA, ddf).fit(cov_type="cluster",
                                                 cov_kwds={"groups": "clinic"})
    # without dropped rows every row is used and duplicates do not matter
    ok = dd.from_pandas(df.dropna(subset=["age"]), npartitions=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = gc.Logit.from_formula(FORMULA, ok).fit(cov_type="cluster",
                                                   cov_kwds={"groups": "clinic"})
        a = gc.Logit.from_formula(FORMULA, df).fit(cov_type="cluster",
                                                   cov_kwds={"groups": "clinic"})
    assert rel(b.cov_params(), a.cov_params()) < TOL
