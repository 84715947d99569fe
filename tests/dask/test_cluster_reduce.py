"""Cluster-robust covariances on Dask are a reduce by label: each partition sums its scores
per cluster where it lives and only the G x k cluster sums reach the client (never the
n x k score matrix, never the n labels). Every number equals the in-memory fit of the same
rows to 1e-10 (synchronous scheduler)."""

from __future__ import annotations

import functools
import warnings

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.rows.dask as rows_dask
from glmclass import families as F
from glmclass.rows.blocks import ArrayBlocks
from glmclass.rows.dask import DaskBlocks
from glmclass.rows.labels import LabelSums, label_sums, merge_label_sums

TOL = 1e-10


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    """900 rows; clusters cycle through the rows, so every cluster spans every partition;
    string and integer labels; a Poisson count over an exposure; a three-level response."""
    rng = np.random.default_rng(24)
    n = 900
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(1.0, 2.0, size=n),
                       "t": rng.uniform(0.5, 3.0, n)})
    df["school"] = np.array([f"s{i:02d}" for i in range(13)])[np.arange(n) % 13]
    df["region"] = (np.arange(n) * 7) % 5
    u = rng.normal(size=13)[np.arange(n) % 13]  # a cluster effect: the sandwich matters
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + 0.8 * df.x - 0.2 * df.z + u)))
               ).astype(int)
    df["count"] = rng.poisson(df.t * np.exp(0.2 + 0.3 * df.x + 0.5 * u))
    lin = np.column_stack([np.zeros(n), 0.5 * df.x + u, -0.4 * df.z + 0.3])
    p = np.exp(lin)
    p /= p.sum(axis=1, keepdims=True)
    df["k"] = np.array(["lo", "mid", "hi"])[(rng.random(n)[:, None] > p.cumsum(1)).sum(1)]
    df.loc[[5, 400, 899], "x"] = np.nan  # dropped rows: the labels must follow
    return df


MODELS = {
    "logit": (gc.Logit.from_formula, "y ~ x + z", {}),
    "poisson_exposure": (functools.partial(gc.GLM.from_formula, family=F.Poisson()),
                         "count ~ x + z", {"exposure": "t"}),
    "mnlogit": (gc.MNLogit.from_formula, "k ~ x + z", {}),
}


def fit_both(df, model, cov_kwds, npartitions=6):
    make, formula, rows = MODELS[model]
    ddf = dd.from_pandas(df, npartitions=npartitions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = make(formula, df, **rows).fit(cov_type="cluster", cov_kwds=cov_kwds(df))
        b = make(formula, ddf, **rows).fit(cov_type="cluster", cov_kwds=cov_kwds(ddf))
        plain = make(formula, df, **rows).fit()
    assert rel(b.params, a.params) < TOL
    assert rel(a.cov_params(), plain.cov_params()) > 1e-3  # the sandwich took effect
    return a, b


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("groups", [["school"], ["region"], ["school", "region"]])
@pytest.mark.parametrize("use_correction", [True, False])
def test_cluster_by_column_equals_in_memory(data, model, groups, use_correction):
    a, b = fit_both(data, model, lambda d: {"groups": groups, "use_correction": use_correction})
    assert b.cov_spec.n_groups == a.cov_spec.n_groups == tuple(
        {"school": 13, "region": 5}[g] for g in groups)
    assert b.cov_spec.group_names == a.cov_spec.group_names == tuple(groups)
    assert rel(b.cov_params(), a.cov_params()) < TOL
    # (two-way without corrections can be indefinite: a NaN standard error in both)
    np.testing.assert_allclose(np.asarray(b.bse), np.asarray(a.bse), rtol=TOL)


@pytest.mark.parametrize("how", ["dask_series", "dask_frame", "array_of_rows_used",
                                 "pandas_series_of_rows_used"])
def test_cluster_groups_given_as_values(data, how):
    """Labels given as a Dask Series/DataFrame of the data (matched to the rows used by row
    label) or as values in memory, one per row used, give the in-memory numbers."""
    used = data.dropna(subset=["x"])

    def groups(d):  # d: the pandas or the Dask DataFrame the model is built on
        if how == "dask_series":
            return d["school"]
        if how == "dask_frame":
            return d[["school", "region"]]
        if how == "array_of_rows_used":
            return used["school"].to_numpy()
        return used["school"].reset_index(drop=True)

    a, b = fit_both(data, "logit", lambda d: {"groups": groups(d)})
    assert b.cov_spec.group_names == a.cov_spec.group_names
    assert rel(b.cov_params(), a.cov_params()) < TOL


def test_labels_of_a_dask_array_on_the_array_path(data):
    df = data.dropna(subset=["x"]).reset_index(drop=True)
    X = df[["x", "z"]].assign(const=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gc.Logit(df.y, X).fit(cov_type="cluster", cov_kwds={"groups": df.region.to_numpy()})
        b = gc.Logit(dd.from_pandas(df.y, npartitions=4), dd.from_pandas(X, npartitions=4)).fit(
            cov_type="cluster", cov_kwds={"groups": da.from_array(df.region.to_numpy(),
                                                                  chunks=100)})
    assert rel(b.cov_params(), a.cov_params()) < TOL


def test_a_partition_without_rows_takes_no_part(data):
    df = data.copy()
    df.loc[df.index[150:300], "x"] = np.nan  # the second of six partitions loses every row
    a, b = fit_both(df, "logit", lambda d: {"groups": ["school", "region"]})
    assert rel(b.cov_params(), a.cov_params()) < TOL


def test_missing_or_mixed_labels_name_the_column(data):
    df = data.copy()
    df["clinic"] = df["school"].astype(object)
    df.loc[10, "clinic"] = None
    ddf = dd.from_pandas(df, npartitions=4)
    with pytest.raises(ValueError, match="'clinic' have 1 missing label"):
        gc.Logit.from_formula("y ~ x + z", ddf).fit(cov_type="cluster",
                                                    cov_kwds={"groups": "clinic"})
    df.loc[5, "clinic"] = None  # missing only in a dropped row (x is missing there): fine
    df.loc[10, "clinic"] = "s01"
    ok = gc.Logit.from_formula("y ~ x + z", dd.from_pandas(df, npartitions=4)).fit(
        cov_type="cluster", cov_kwds={"groups": "clinic"})
    assert ok.cov_spec.n_groups == (13,)
    mixed = pd.Series(df.dropna(subset=["x"])["school"].to_numpy(dtype=object), name="clinic",
                      dtype=object)
    mixed[11] = 3
    with pytest.raises(ValueError, match="'clinic' mix labels of different types"):
        gc.Logit.from_formula("y ~ x + z", dd.from_pandas(df, npartitions=4)).fit(
            cov_type="cluster", cov_kwds={"groups": mixed})


# --- the reduce itself -----------------------------------------------------------------------


def direct_sums(values, *columns) -> pd.DataFrame:
    """pandas' groupby sums: the reference of the label sums."""
    return pd.DataFrame(values).groupby(list(columns)).sum()


@pytest.mark.parametrize("grouping", [(0,), (1,), (0, 1)])
def test_reduce_by_label_in_memory_and_on_dask_equal_a_groupby(grouping):
    rng = np.random.default_rng(3)
    n, k = 2000, 3
    X = rng.normal(size=(n, k))
    labels = np.column_stack([rng.choice(["b", "a", "c", "dd"], n),
                              rng.integers(0, 6, n).astype(str)])
    lengths = (700, 0, 800, 500)
    ends = np.cumsum(lengths)
    parts = [(X[e - m:e], None, None, None) for e, m in zip(ends, lengths, strict=True)]
    cols = [labels[:, j] for j in grouping]
    expected = direct_sums(X, *cols)
    for source in (ArrayBlocks(X, rows=64).with_groups(labels),
                   DaskBlocks(parts, lengths, k, rows=64).with_groups(labels)):
        (got,) = source.reduce_by_label(lambda b: b.X, (grouping,))
        assert isinstance(got, LabelSums) and got.n_labels == len(expected)
        keys = list(zip(*got.keys, strict=True)) if len(grouping) == 2 else list(got.keys[0])
        assert keys == list(expected.index)
        np.testing.assert_allclose(got.sums, expected.to_numpy(), rtol=1e-13, atol=1e-12)


def test_merging_label_sums_is_associative_and_leaves_its_arguments():
    rng = np.random.default_rng(4)
    pieces = [label_sums(rng.normal(size=(50, 2)), [rng.integers(0, 9, 50)]) for _ in range(3)]
    before = [p.sums.copy() for p in pieces]
    left = merge_label_sums(merge_label_sums(pieces[0], pieces[1]), pieces[2])
    right = merge_label_sums(pieces[0], merge_label_sums(pieces[1], pieces[2]))
    np.testing.assert_array_equal(left.keys[0], right.keys[0])
    np.testing.assert_allclose(left.sums, right.sums, rtol=1e-14)
    for p, s in zip(pieces, before, strict=True):
        np.testing.assert_array_equal(p.sums, s)
    with pytest.raises(ValueError, match="different kinds"):
        merge_label_sums(pieces[0], label_sums(np.ones((1, 2)), [np.array(["a"])]))


def test_two_hundred_thousand_rows_never_bring_scores_to_the_client(monkeypatch):
    """n = 200,000 rows in 8 partitions, 50 clusters: the fit's cluster covariance works with
    every n x k (or n-row) Dask array barred from the client, and every partial result of
    the reduce is a set of per-cluster sums (at most 50 labels)."""
    rng = np.random.default_rng(2026)
    n = 200_000
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "firm": rng.integers(0, 50, n), "year": rng.integers(0, 4, n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.2 + 0.5 * df.x)))).astype(int)
    ddf = dd.from_pandas(df, npartitions=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gc.Logit.from_formula("y ~ x + z", df).fit(cov_type="cluster",
                                                       cov_kwds={"groups": ["firm", "year"]})
    partials: list[int] = []
    merge = rows_dask.merge_all

    def recording(x, y):
        partials.extend(s.n_labels for part in (x, y) if part is not None for s in part)
        return merge(x, y)

    def barred(method):
        def refuse(self, *args, **kwargs):
            if self.ndim and self.shape[0] >= 1000:
                raise AssertionError(f"a Dask array of shape {self.shape} was brought to the "
                                     "client")
            return method(self, *args, **kwargs)
        return refuse

    monkeypatch.setattr(rows_dask, "merge_all", recording)
    monkeypatch.setattr(da.Array, "__array__", barred(da.Array.__array__))
    monkeypatch.setattr(da.Array, "compute", barred(da.Array.compute))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = gc.Logit.from_formula("y ~ x + z", ddf).fit(cov_type="cluster",
                                                        cov_kwds={"groups": ["firm", "year"]})
        cov = b.cov_params()
    assert partials and max(partials) <= 50 * 4  # clusters of firm, of year, of the pairs
    assert b.cov_spec.n_groups == (50, 4)
    assert rel(cov, a.cov_params()) < TOL


def test_a_pickled_cluster_fit_holds_no_lazy_labels(data):
    """The labels' lazy pieces reference the partitions: a pickled (or saved) fit leaves them
    behind and keeps the covariance they gave."""
    import pickle

    a, b = fit_both(data, "logit", lambda d: {"groups": ["school", "region"]})
    assert isinstance(b.cov_spec.groups, tuple)
    c = pickle.loads(pickle.dumps(b))
    assert c.cov_spec.groups is None and c.cov_spec.n_groups == (13, 5)
    assert rel(c.cov_params(), a.cov_params()) < TOL
    assert rel(c.get_margeff().margeff_se, a.get_margeff().margeff_se) < TOL
    assert "cluster-robust by school (13 clusters) and region (5 clusters)" in " ".join(
        str(c.summary()).split())


def test_labels_follow_kept_rows_and_gathered_sources():
    """Labels attached after take_rows are those of the kept rows; a source gathered into
    one block, and frequency weights carried beside the prior weights, follow too."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 2))
    keep = rng.random(300) < 0.7
    labels = rng.integers(0, 4, int(keep.sum()))
    expected = direct_sums(X[keep], labels)
    for source in (ArrayBlocks(X, rows=32).take_rows(keep),
                   ArrayBlocks(X).take_rows(keep).gathered()):
        labelled = source.with_groups(labels).with_freq_weights(np.arange(keep.sum()) * 1.0)
        (got,) = labelled.reduce_by_label(lambda b: b.X)
        np.testing.assert_allclose(got.sums, expected.to_numpy(), rtol=1e-13)
        freq = labelled.map(lambda b: b.freq_weights)
        np.testing.assert_array_equal(freq, np.arange(keep.sum()))
    with pytest.raises(ValueError, match="groups must have shape"):
        ArrayBlocks(X).with_groups(labels)
