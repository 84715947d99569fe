"""The generative and classic classifiers on Dask data equal their in-memory fits (to 1e-10):
predictions in both directions (a Dask fit predicting pandas rows, an in-memory fit predicting
Dask rows), the discriminant functions, the perceptron and gradient fits."""

from __future__ import annotations

import warnings

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc

TOL = 1e-10
IRIS = "Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width"


def close(a, b, tol: float = TOL) -> None:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(b)))))


def _labels(s: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in s]


def same_output(lazy, mem) -> None:
    """A lazy Dask output computes to the in-memory pandas output (values, index, labels)."""
    assert hasattr(lazy, "compute"), f"expected a lazy Dask collection, got {type(lazy)}"
    got = lazy.compute()
    assert type(got) is type(mem)
    pd.testing.assert_index_equal(got.index, mem.index)
    if isinstance(mem, pd.DataFrame):
        assert list(got.columns) == list(mem.columns)
    if isinstance(mem, pd.Series) and not pd.api.types.is_numeric_dtype(mem):
        assert _labels(got) == _labels(mem)
    else:
        close(got.to_numpy(), mem.to_numpy())


@pytest.fixture(scope="module")
def iris() -> pd.DataFrame:
    df = gc.datasets.load("iris")
    df["b1"] = (df.Sepal_Length > df.Sepal_Length.median()).astype(float)
    df["b2"] = (df.Sepal_Width > 3.0).astype(float)
    df.loc[[3, 77], "Petal_Width"] = np.nan  # rows dropped from the fit, NaN in predictions
    return df


@pytest.fixture
def diris(iris):
    return dd.from_pandas(iris, npartitions=4)


GENERATIVE = [(gc.LDA, IRIS, ["prob", "mean", "log_prob", "class", "log_joint", "linear"]),
              (gc.QDA, IRIS, ["prob", "mean", "log_prob", "class", "log_joint"]),
              (gc.GaussianNB, IRIS, ["prob", "mean", "log_prob", "class", "log_joint"]),
              (gc.BernoulliNB, "Species ~ b1 + b2",
               ["prob", "mean", "log_prob", "class", "log_joint"])]


@pytest.mark.parametrize("cls, formula, whiches", GENERATIVE,
                         ids=[c[0].__name__ for c in GENERATIVE])
def test_generative_predicts_in_both_directions(iris, diris, cls, formula, whiches):
    mem = cls.from_formula(formula, iris).fit()
    lazy = cls.from_formula(formula, diris).fit()
    for which in whiches:
        expected = mem.predict(iris, which=which)
        # a Dask fit, pandas rows: a pandas output equal to the in-memory fit's
        got = lazy.predict(iris, which=which)
        assert type(got) is type(expected)
        pd.testing.assert_index_equal(got.index, expected.index)
        if which == "class":
            assert _labels(got) == _labels(expected)
        else:
            close(got.to_numpy(), expected.to_numpy())
        # either fit, Dask rows: a lazy output
        same_output(mem.predict(diris, which=which), expected)
        same_output(lazy.predict(diris, which=which), expected)


def test_lda_reduced_rank_predictions_on_dask_rows(iris, diris):
    mem = gc.LDA.from_formula(IRIS, iris).fit()
    lazy = gc.LDA.from_formula(IRIS, diris).fit()
    expected = mem.predict(iris, which="prob", n_components=1)
    same_output(mem.predict(diris, which="prob", n_components=1), expected)
    close(lazy.predict(iris, which="prob", n_components=1), expected)


@pytest.fixture(scope="module")
def two(iris) -> pd.DataFrame:
    df = iris[iris.Species != "setosa"].copy()
    df["Species"] = df.Species.astype(str)
    return df


def test_least_squares_classifier(iris, diris):
    mem = gc.LeastSquaresClassifier.from_formula(IRIS, iris).fit()
    lazy = gc.LeastSquaresClassifier.from_formula(IRIS, diris).fit()
    close(lazy.params, mem.params)
    close(lazy.rss, mem.rss)
    assert (lazy.n_outside, lazy.masked_levels, lazy.rank) == (mem.n_outside,
                                                               mem.masked_levels, mem.rank)
    assert lazy.training_error == mem.training_error
    pd.testing.assert_frame_equal(lazy.pred_table(), mem.pred_table())
    same_output(lazy.fittedvalues, mem.fittedvalues)
    same_output(lazy.resid, mem.resid)
    for which in ("score", "class"):
        expected = mem.predict(iris, which=which)
        same_output(lazy.predict(diris, which=which), expected)
        same_output(mem.predict(diris, which=which), expected)
        got = lazy.predict(iris, which=which)
        if which == "class":
            assert _labels(got) == _labels(expected)
        else:
            close(got, expected)
    assert str(lazy.summary()) == str(mem.summary())


def test_least_squares_aliased_column_on_dask(iris):
    df = iris.assign(twice=2.0 * iris.Sepal_Length)
    f = IRIS + " + twice"
    mem = gc.LeastSquaresClassifier.from_formula(f, df).fit()
    lazy = gc.LeastSquaresClassifier.from_formula(f, dd.from_pandas(df, npartitions=3)).fit()
    assert lazy.aliased == mem.aliased == ["twice"]
    close(lazy.params.dropna(), mem.params.dropna())


@pytest.mark.parametrize("threshold", ["midpoint", "lda"])
def test_fisher_discriminant(two, threshold):
    dtwo = dd.from_pandas(two, npartitions=4)
    mem = gc.FisherDiscriminant.from_formula(IRIS, two).fit(threshold=threshold)
    lazy = gc.FisherDiscriminant.from_formula(IRIS, dtwo).fit(threshold=threshold)
    for a in ("direction", "means", "within_scatter", "threshold", "criterion"):
        close(getattr(lazy, a), getattr(mem, a))
    assert lazy.nobs == mem.nobs and lazy.training_error == mem.training_error
    pd.testing.assert_frame_equal(lazy.pred_table(), mem.pred_table())
    same_output(lazy.transform(), mem.transform())
    for which in ("class", "score", "linear"):
        expected = mem.predict(two, which=which)
        same_output(lazy.predict(dtwo, which=which), expected)
        same_output(mem.predict(dtwo, which=which), expected)
        same_output(lazy.predict(which=which), mem.predict(which=which))
    assert str(lazy.summary()) == str(mem.summary())


def test_fisher_messages_match_memory(two):
    one = two[two.Species != "virginica"].copy()
    one = pd.concat([one, two[two.Species == "virginica"].iloc[:1]])
    with pytest.raises(ValueError) as mem:
        gc.FisherDiscriminant.from_formula(IRIS, one)
    with pytest.raises(ValueError) as lazy:
        gc.FisherDiscriminant.from_formula(IRIS, dd.from_pandas(one, npartitions=3))
    assert str(lazy.value) == str(mem.value)
    assert "'virginica'" in str(mem.value)


@pytest.mark.parametrize("cls", [gc.LDA, gc.QDA])
@pytest.mark.parametrize("cov", ["mle", "unbiased"])
def test_leave_one_out_is_a_lazy_map(iris, diris, cls, cov):
    mem = cls.from_formula(IRIS, iris).fit(cov=cov, cv=True)
    lazy = cls.from_formula(IRIS, diris).fit(cov=cov, cv=True)
    same_output(lazy.cv_posterior, mem.cv_posterior)
    assert _labels(lazy.cv_class.compute()) == _labels(mem.cv_class)
    pd.testing.assert_frame_equal(lazy.cv_pred_table(), mem.cv_pred_table())
    assert lazy.cv_error == mem.cv_error
    assert str(lazy.summary()) == str(mem.summary())
    with pytest.raises(ValueError, match="cv=True"):
        cls.from_formula(IRIS, diris).fit(cov=cov).cv_posterior  # noqa: B018


@pytest.fixture(scope="module")
def binary(iris) -> pd.DataFrame:
    df = iris[iris.Species != "setosa"].copy()
    df["yb"] = (df.Species == "virginica").astype(float)
    df["w"] = np.resize([1.0, 2.0, 0.0, 1.0], len(df))  # rows of weight 0 take no part
    return df


@pytest.mark.filterwarnings("ignore::glmclass.ConvergenceWarning")  # 25 epochs: a trajectory
@pytest.mark.parametrize("window", [None, 37], ids=["one-window", "windows-across-partitions"])
@pytest.mark.parametrize("method", ["sgd", "minibatch", "gd"])
def test_gradient_fits_on_dask_equal_memory(binary, method, window, monkeypatch):
    """The stochastic steps read windows of consecutive rows (each in a seeded random order):
    the same rows in the same order whether they are in memory or in Dask partitions, also
    when the windows straddle the partitions."""
    from glmclass.solvers import gradient as G

    if window is not None:
        monkeypatch.setattr(G, "SHUFFLE_ROWS", window)
    f = "yb ~ Sepal_Length + Sepal_Width"
    dbin = dd.from_pandas(binary, npartitions=4)
    kw = dict(method=method, seed=0, max_epochs=25, gtol=1e-12)
    for weighted in (False, True):
        mem = gc.Logit.from_formula(f, binary, freq_weights=binary.w if weighted else None)
        lazy = gc.Logit.from_formula(f, dbin, freq_weights=dbin.w if weighted else None)
        mem, lazy = mem.fit(**kw), lazy.fit(**kw)
        close(lazy.params, mem.params)
        close(lazy.bse, mem.bse)
        close(lazy.deviance, mem.deviance)
        assert lazy.n_iter == mem.n_iter
        close(lazy.fit_history, mem.fit_history)


@pytest.mark.parametrize("method", ["sgd", "minibatch"])
def test_multinomial_gradient_fits_on_dask_equal_memory(iris, method, monkeypatch):
    from glmclass.solvers import gradient as G

    monkeypatch.setattr(G, "SHUFFLE_ROWS", 41)
    f = "Species ~ Sepal_Length + Sepal_Width"
    mem = gc.MNLogit.from_formula(f, iris).fit(method=method, seed=1, max_epochs=20)
    lazy = gc.MNLogit.from_formula(f, dd.from_pandas(iris, npartitions=3)).fit(
        method=method, seed=1, max_epochs=20)
    close(lazy.params, mem.params)
    close(lazy.bse, mem.bse)


PERCEPTRON = [dict(shuffle=False, max_epochs=20), dict(seed=3, max_epochs=20),
              dict(seed=0, max_epochs=20, pocket=True),
              dict(multiclass="ovr", seed=1, max_epochs=10),
              dict(multiclass="ovo", seed=1, max_epochs=10)]


@pytest.mark.parametrize("window", [None, 29], ids=["one-window", "windows-across-partitions"])
@pytest.mark.parametrize("settings", PERCEPTRON, ids=lambda s: "-".join(map(str, s.values())))
def test_perceptron_on_dask_equals_memory(iris, two, settings, window, monkeypatch):
    """The epochs are sequential passes over windows of consecutive rows (each in a seeded
    random order): the same run in memory and on Dask, also across partition boundaries."""
    from glmclass.solvers import gradient as G

    if window is not None:
        monkeypatch.setattr(G, "SHUFFLE_ROWS", window)
    data = iris if "multiclass" in settings else two
    f = "Species ~ Sepal_Length + Sepal_Width"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.ConvergenceWarning)
        mem = gc.Perceptron.from_formula(f, data, **settings).fit()
        lazy = gc.Perceptron.from_formula(f, dd.from_pandas(data, npartitions=4),
                                          **settings).fit()
    close(lazy.params, mem.params)
    pd.testing.assert_frame_equal(pd.DataFrame(lazy.history), pd.DataFrame(mem.history))
    pd.testing.assert_frame_equal(pd.DataFrame(lazy.updates), pd.DataFrame(mem.updates))
    assert (lazy.converged, lazy.n_ambiguous, lazy.training_error) == (
        mem.converged, mem.n_ambiguous, mem.training_error)
    pd.testing.assert_frame_equal(lazy.pred_table(), mem.pred_table())
    assert str(lazy.summary()) == str(mem.summary())
    same_output(lazy.ambiguous, mem.ambiguous)
    whiches = ["class", "score", "ambiguous"] + (["votes"] if settings.get(
        "multiclass") == "ovo" else [])
    ddata = dd.from_pandas(data, npartitions=3)
    for which in whiches:
        expected = mem.predict(data, which=which)
        same_output(lazy.predict(ddata, which=which), expected)
        same_output(mem.predict(ddata, which=which), expected)
        same_output(lazy.predict(which=which), mem.predict(which=which))


def test_bernoulli_message_names_the_first_column_over_all_partitions(iris):
    df = iris.copy()
    df.loc[5, "b2"] = 0.5  # an early partition: the second feature
    df.loc[140, "b1"] = 3.0  # the last partition: the first feature, named first in memory
    f = "Species ~ b1 + b2"
    with pytest.raises(ValueError) as mem:
        gc.BernoulliNB.from_formula(f, df)
    with pytest.raises(ValueError) as lazy:
        gc.BernoulliNB.from_formula(f, dd.from_pandas(df, npartitions=4))
    assert str(lazy.value) == str(mem.value)
    assert "'b1' has the value 3" in str(mem.value)


def test_gaussian_nb_smoothing_and_unbiased_on_dask(iris, diris):
    for kw in ({"cov": "unbiased"}, {"var_smoothing": 1e-3}):
        mem = gc.GaussianNB.from_formula(IRIS, iris).fit(**kw)
        lazy = gc.GaussianNB.from_formula(IRIS, diris).fit(**kw)
        for a in ("means", "variances", "priors", "llf", "llf_conditional", "error_rate"):
            close(getattr(lazy, a), getattr(mem, a))


@pytest.mark.distributed
def test_classifiers_under_a_two_process_cluster(iris, two):
    """The same fits under a 2-process LocalCluster: the passes' functions and the row-free
    results copies travel to the workers."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set(scheduler=None), LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            memory_limit="2GiB") as cluster, Client(cluster):
        diris = dd.from_pandas(iris, npartitions=4)
        mem = gc.LDA.from_formula(IRIS, iris).fit(cv=True)
        lazy = gc.LDA.from_formula(IRIS, diris).fit(cv=True)
        same_output(lazy.cv_posterior, mem.cv_posterior)
        same_output(lazy.predict(diris), mem.predict(iris))
        same_output(mem.predict(diris, which="class"), mem.predict(iris, which="class"))
        ls_mem = gc.LeastSquaresClassifier.from_formula(IRIS, iris).fit()
        ls = gc.LeastSquaresClassifier.from_formula(IRIS, diris).fit()
        close(ls.params, ls_mem.params)
        pd.testing.assert_frame_equal(ls.pred_table(), ls_mem.pred_table())
        settings = dict(seed=2, max_epochs=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", gc.ConvergenceWarning)
            p_mem = gc.Perceptron.from_formula(IRIS, two, **settings).fit()
            p = gc.Perceptron.from_formula(IRIS, dd.from_pandas(two, npartitions=3),
                                           **settings).fit()
        close(p.params, p_mem.params)
        f = "Species ~ Sepal_Length + Sepal_Width"
        g_mem = gc.MNLogit.from_formula(f, iris).fit(method="sgd", seed=0, max_epochs=5)
        g = gc.MNLogit.from_formula(f, diris).fit(method="sgd", seed=0, max_epochs=5)
        close(g.params, g_mem.params)
