"""Per-row arguments given as pandas objects beside Dask data (issue 25, item 1): paired with
the rows by their row labels, as in memory, never silently by position.

With a Dask DataFrame of known divisions, a pandas Series of weights, offsets, exposures (or
the response) is matched to each partition's rows by label: a shuffled Series gives the fit
of the same Series aligned in memory (to 1e-10). Without known divisions it is refused, naming
the argument. Dask arrays carry no row labels: a Series pairs by position, as it does with
NumPy rows in memory.
"""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass import families as F

TOL = 1e-10


def close(a, b, tol: float = TOL) -> None:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(b)))))


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    """300 rows with a non-default index (labels 1000, 1003, ...): counts over an exposure,
    weights, an offset, a binary and a three-class response, a binomial proportion."""
    rng = np.random.default_rng(251)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "t": rng.uniform(0.5, 3.0, n), "o": rng.normal(0, 0.3, n),
                       "w": rng.integers(1, 5, n).astype(float),
                       "v": rng.uniform(0.5, 2.0, n)},
                      index=pd.Index(1000 + 3 * np.arange(n), name="id"))
    df["const"] = 1.0
    df["y"] = rng.poisson(df.t * np.exp(0.2 + 0.5 * df.x + df.o))
    df["b"] = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + df.x)))).astype(float)
    df["k"] = rng.choice([0.0, 1.0, 2.0], n)
    df["p"] = rng.binomial(6, 0.4, n) / 6.0
    return df


# (model, family, response, per-row argument, its column)
CASES = [
    ("glm", F.Poisson(), "y", "offset", "o"),
    ("glm", F.Poisson(), "y", "exposure", "t"),
    ("glm", F.Poisson(), "y", "freq_weights", "w"),
    ("glm", F.Poisson(), "y", "var_weights", "v"),
    ("glm", F.Binomial(), "p", "var_weights", "w"),  # binomial trials
    ("logit", None, "b", "freq_weights", "w"),
    ("logit", None, "b", "offset", "o"),
    ("mnlogit", None, "k", "freq_weights", "w"),
    ("ordinal", None, "k", "var_weights", "v"),
]


def _model(kind, family, endog, exog, **row):
    if kind == "glm":
        return gc.GLM(endog, exog, family=family, **row)
    if kind == "logit":
        return gc.Logit(endog, exog, **row)
    if kind == "mnlogit":
        return gc.MNLogit(endog, exog, **row)
    return gc.OrderedModel(endog, exog, **row)


def _columns(kind):
    return ["x", "z"] if kind == "ordinal" else ["const", "x", "z"]


@pytest.mark.filterwarnings("ignore:response .p.:UserWarning")
@pytest.mark.parametrize("kind, family, y, arg, col", CASES,
                         ids=[f"{c[0]}-{c[3]}" + ("-binomial" if c[2] == "p" else "")
                              for c in CASES])
def test_a_shuffled_series_is_matched_by_label(rows, kind, family, y, arg, col):
    ddf = dd.from_pandas(rows, npartitions=3)
    shuffled = rows[col].sample(frac=1.0, random_state=3)
    cols = _columns(kind)
    mem = _model(kind, family, rows[y], rows[cols], **{arg: shuffled.reindex(rows.index)}).fit()
    lazy = _model(kind, family, ddf[y], ddf[cols], **{arg: shuffled}).fit()
    close(lazy.params, mem.params)
    close(lazy.bse, mem.bse)
    close(lazy.llf, mem.llf)
    # by position the Series' values would give another fit: the label is what pairs them
    wrong = _model(kind, family, rows[y], rows[cols], **{arg: shuffled.to_numpy()}).fit()
    assert np.max(np.abs(np.asarray(wrong.params) - np.asarray(mem.params))) > 1e-3
    # an aligned Series (the data's own index) equals the in-memory fit as well
    aligned = _model(kind, family, ddf[y], ddf[cols], **{arg: rows[col]}).fit()
    close(aligned.params, mem.params)


def test_the_response_as_a_shuffled_pandas_series(rows):
    ddf = dd.from_pandas(rows, npartitions=4)
    y = rows["b"].sample(frac=1.0, random_state=5)
    mem = gc.Logit(rows["b"], rows[["const", "x"]]).fit()
    lazy = gc.Logit(y, ddf[["const", "x"]]).fit()
    close(lazy.params, mem.params)
    close(lazy.llf, mem.llf)


@pytest.mark.parametrize("arg, col", [("freq_weights", "w"), ("offset", "o"),
                                      ("exposure", "t"), ("var_weights", "v")])
def test_the_formula_path_matches_by_label(rows, arg, col):
    ddf = dd.from_pandas(rows, npartitions=3)
    shuffled = rows[col].sample(frac=1.0, random_state=7)
    f = "y ~ x + z"
    mem = gc.GLM.from_formula(f, rows, family=F.Poisson(), **{arg: rows[col]}).fit()
    lazy = gc.GLM.from_formula(f, ddf, family=F.Poisson(), **{arg: shuffled}).fit()
    close(lazy.params, mem.params)
    close(lazy.bse, mem.bse)
    close(lazy.deviance, mem.deviance)
    # a Series of more rows than the data (the data filtered): each row takes its own label
    part = rows[rows.x > -0.5]
    sub = gc.GLM.from_formula(f, dd.from_pandas(part, npartitions=2), family=F.Poisson(),
                              **{arg: shuffled}).fit()
    ref = gc.GLM.from_formula(f, part, family=F.Poisson(), **{arg: part[col]}).fit()
    close(sub.params, ref.params)


@pytest.mark.parametrize("arg, col", [("freq_weights", "w"), ("offset", "o"),
                                      ("exposure", "t"), ("var_weights", "v")])
def test_unknown_divisions_are_refused_naming_the_argument(rows, arg, col):
    ddf = dd.from_pandas(rows, npartitions=3).clear_divisions()
    with pytest.raises(ValueError, match=rf"{arg} is a pandas object.*unknown divisions"):
        gc.GLM(ddf["y"], ddf[["const", "x"]], family=F.Poisson(), **{arg: rows[col]})
    with pytest.raises(ValueError, match=rf"{arg} is a pandas object.*unknown divisions"):
        gc.GLM.from_formula("y ~ x", ddf, family=F.Poisson(), **{arg: rows[col]})


def test_labels_the_series_lacks_or_repeats_are_refused(rows):
    ddf = dd.from_pandas(rows, npartitions=3)
    X = ddf[["const", "x"]]
    short = rows["w"].iloc[1:]
    with pytest.raises(ValueError, match=r"freq_weights has no value for the row labelled 1000"):
        gc.GLM(ddf["y"], X, family=F.Poisson(), freq_weights=short).fit()
    with pytest.raises(ValueError, match=r"offset has no value for the row labelled 1000"):
        gc.GLM.from_formula("y ~ x", ddf, family=F.Poisson(), offset=rows["o"].iloc[1:]).fit()
    twice = pd.Series(rows["w"].to_numpy(), index=np.repeat(rows.index[:150], 2))
    with pytest.raises(ValueError, match=r"freq_weights has the row label 1000 more than once"):
        gc.GLM(ddf["y"], X, family=F.Poisson(), freq_weights=twice)
    with pytest.raises(ValueError, match=r"freq_weights must be numeric"):
        gc.GLM(ddf["y"], X, family=F.Poisson(),
               freq_weights=pd.Series(["a"] * len(rows), index=rows.index))


def test_a_dask_series_of_other_divisions_is_refused(rows):
    ddf = dd.from_pandas(rows, npartitions=3)
    other = dd.from_pandas(rows, npartitions=5)
    with pytest.raises(ValueError, match=r"freq_weights's partitions \(divisions\) differ"):
        gc.GLM(ddf["y"], ddf[["const", "x"]], family=F.Poisson(), freq_weights=other["w"])


def test_dask_arrays_have_no_row_labels_so_a_series_pairs_by_position(rows):
    """As NumPy rows in memory: the values are taken in their order."""
    ddf = dd.from_pandas(rows, npartitions=3)
    X = ddf[["const", "x"]].to_dask_array(lengths=True)
    y = ddf["y"].to_dask_array(lengths=True)
    shuffled = rows["w"].sample(frac=1.0, random_state=3)
    lazy = gc.GLM(y, X, family=F.Poisson(), freq_weights=shuffled).fit()
    mem = gc.GLM(rows["y"].to_numpy(), rows[["const", "x"]].to_numpy(), family=F.Poisson(),
                 freq_weights=shuffled).fit()
    close(lazy.params, mem.params)


def test_cluster_labels_with_their_own_index_on_an_array_model_are_refused(rows):
    ddf = dd.from_pandas(rows, npartitions=3)
    m = gc.Logit(ddf["b"], ddf[["const", "x"]])
    g = pd.Series(np.arange(len(rows)) % 7, index=rows.index).sample(frac=1.0, random_state=1)
    with pytest.raises(ValueError, match=r"cov_kwds\['groups'\] is a pandas object"):
        m.fit(cov_type="cluster", cov_kwds={"groups": g})


def test_a_pandas_subset_of_dask_data_is_refused_by_name(rows):
    """It raised Dask's "Item wrong length 300 instead of 0" (a list would select columns)."""
    ddf = dd.from_pandas(rows, npartitions=3)
    with pytest.raises(TypeError, match=r"subset= with Dask data must be a Dask boolean Series"):
        gc.GLM.from_formula("y ~ x", ddf, family=F.Poisson(), subset=rows.x > 0)
    lazy = gc.GLM.from_formula("y ~ x", ddf, family=F.Poisson(), subset=ddf.x > 0).fit()
    mem = gc.GLM.from_formula("y ~ x", rows, family=F.Poisson(), subset=rows.x > 0).fit()
    close(lazy.params, mem.params)


def test_a_new_rows_offset_of_other_partitions_is_refused(rows):
    """Predicting Dask rows with an offset partitioned otherwise raised Dask's "Missing
    dependency"; a Dask array raised "offset has 300 values but the data have 100 rows"."""
    res = gc.GLM.from_formula("y ~ x", rows, family=F.Poisson(), offset=rows["o"]).fit()
    ddf = dd.from_pandas(rows, npartitions=3)
    other = dd.from_pandas(rows, npartitions=4)
    with pytest.raises(ValueError, match=r"offset's partitions differ from the new data's"):
        res.predict(ddf, offset=other["o"])
    with pytest.raises(TypeError, match=r"offset must be a Dask Series aligned with it"):
        res.predict(ddf, offset=ddf["o"].to_dask_array(lengths=True))
    close(res.predict(ddf, offset=ddf["o"]).compute(), res.predict(rows, offset=rows["o"]))
