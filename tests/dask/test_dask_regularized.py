"""Penalised fits and regularisation paths on Dask data equal the same fits in memory.

The coordinate descent reads the rows only through reduces over the row source (X'WX, the
gradient and the deviance per proximal Newton step; moments, ranges and held-out deviances),
so on Dask partitions it runs the same code as in memory; only the order of the sums differs.
Both stop when every coefficient's KKT residual is below ``tol`` = 1e-10 (the solver's own
tolerance, on the scale of the data); the two optima agree far below that (~1e-14), and the
comparison is at 1e-10 relative to the largest value compared.
"""

from __future__ import annotations

import pickle

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass import families as F
from glmclass.rows.blocks import ArrayBlocks
from glmclass.solvers.coordinate_descent import ShiftedBlocks

TOL = 1e-10


def close(a, b, tol: float = TOL) -> None:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(b)))))


@pytest.fixture
def ddf(frame):
    return dd.from_pandas(frame, npartitions=4)


@pytest.fixture
def frame0(frame):
    """The frame with frequency weight 0 on every 7th row (rows a fit leaves out)."""
    f = frame.copy()
    f.loc[f.index[::7], "w"] = 0.0
    return f


def models(cls, formula: str, frame: pd.DataFrame, ddf, **kw):
    """The model on the pandas frame and on the Dask frame, keyword values naming columns."""
    mem = cls.from_formula(formula, frame, **{k: frame[v] if isinstance(v, str) else v
                                             for k, v in kw.items()})
    lazy = cls.from_formula(formula, ddf, **{k: ddf[v] if isinstance(v, str) else v
                                            for k, v in kw.items()})
    return mem, lazy


GLM_CASES = {
    "logit": (gc.Logit, "y ~ x + z + C(g) + b1", {}),
    "logit-weighted-offset": (gc.Logit, "y ~ x + z + C(g)", dict(freq_weights="w",
                                                                 offset="off")),
    "probit": (gc.Probit, "y ~ x + z + C(g)", dict(var_weights="w")),
    "poisson": (gc.GLM, "count ~ x + z + C(g)", dict(family=F.Poisson(), offset="off")),
    "gaussian": (gc.GLM, "z ~ x + C(g) + b1", dict(family=F.Gaussian(), freq_weights="w")),
}


@pytest.mark.parametrize("case", list(GLM_CASES))
@pytest.mark.parametrize("L1_wt,standardize", [(1.0, False), (0.5, True), (0.0, False)])
def test_glm_fit_regularized(frame, ddf, case, L1_wt, standardize):
    cls, formula, kw = GLM_CASES[case]
    mem, lazy = models(cls, formula, frame, ddf, **kw)
    a = 0.02
    r, q = (m.fit_regularized(a, L1_wt, standardize=standardize) for m in (mem, lazy))
    assert type(q).__name__ == type(r).__name__ and isinstance(q, type(r))
    assert q.converged and r.converged
    for name in ("params", "llf", "llnull", "deviance", "null_deviance", "objective",
                 "nobs", "aic", "bic", "scale_used"):
        close(getattr(q, name), getattr(r, name))
    assert q.df_model == r.df_model
    assert list(q.params.index) == list(r.params.index)
    if L1_wt == 1.0:  # the lasso's zeros are exact on both
        np.testing.assert_array_equal(q.params.to_numpy() == 0, r.params.to_numpy() == 0)
    new = frame.iloc[::5]
    close(q.predict(new), r.predict(new))
    # in-sample and on Dask data: lazy, the same numbers
    fitted = q.predict()
    assert isinstance(fitted, dd.Series)
    close(fitted.compute(), r.predict())
    on_dask = q.predict(dd.from_pandas(new, npartitions=2))
    assert isinstance(on_dask, dd.Series)
    close(on_dask.compute(), r.predict(new))


def test_from_dask_arrays(frame):
    """A model of Dask arrays (no formula) fits and cross-validates as its NumPy twin."""
    import dask.array as da

    X = np.column_stack([np.ones(len(frame)), frame.x.fillna(0.0), frame.z, frame.b2])
    y = frame.y.to_numpy(dtype=float)
    mem = gc.Logit(y, X)
    lazy = gc.Logit(da.from_array(y, chunks=250), da.from_array(X, chunks=(250, 4)))
    r, q = mem.fit_regularized(0.01, 0.7), lazy.fit_regularized(0.01, 0.7)
    close(q.params, r.params)
    close(q.predict(X[:30]), r.predict(X[:30]))
    args = dict(n_alphas=5, cv=3, seed=8)
    same_path(mem.regularization_path(**args), lazy.regularization_path(**args))


def test_glm_zero_weight_rows_are_left_out(frame0):
    ddf0 = dd.from_pandas(frame0, npartitions=5)
    mem, lazy = models(gc.Logit, "y ~ x + z + C(g)", frame0, ddf0, freq_weights="w")
    r, q = mem.fit_regularized(0.01), lazy.fit_regularized(0.01)
    close(q.params, r.params)
    close(q.nobs, r.nobs)
    p, s = (m.regularization_path(n_alphas=6, cv=3, seed=4) for m in (mem, lazy))
    close(s.coefs, p.coefs)
    close(s.cv_deviance, p.cv_deviance)
    np.testing.assert_array_equal(s.folds, p.folds)


def test_glm_constant_column_is_refused_on_dask(frame, ddf):
    f = frame.assign(one=1.0)
    lazy = gc.Logit.from_formula("y ~ x + one", dd.from_pandas(f, npartitions=3))
    with pytest.raises(ValueError, match="column 'one' is constant"):
        lazy.fit_regularized(0.01)
    with pytest.raises(ValueError, match="column 'one' is constant"):
        lazy.regularization_path(n_alphas=3)


def same_path(p, s) -> None:
    """Every number of two RegularizationPath results."""
    close(s.alphas, p.alphas)
    close(s.alpha_max, p.alpha_max)
    close(s.coefs, p.coefs)
    assert list(s.coefs.columns) == list(p.coefs.columns)
    close(s.deviance, p.deviance)
    np.testing.assert_array_equal(s.df.to_numpy(), p.df.to_numpy())
    assert s.n_folds == p.n_folds
    if p.n_folds:
        np.testing.assert_array_equal(s.folds, p.folds)
        close(s.cv_deviance, p.cv_deviance)
        close(s.cv_mean, p.cv_mean)
        close(s.cv_se, p.cv_se)
        close(s.alpha_min, p.alpha_min)
        close(s.alpha_1se, p.alpha_1se)
        # the chosen alphas are the same points of the path
        assert int(np.argmin(np.abs(s.alphas - s.alpha_min))) == int(
            np.argmin(np.abs(p.alphas - p.alpha_min)))
        assert int(np.argmin(np.abs(s.alphas - s.alpha_1se))) == int(
            np.argmin(np.abs(p.alphas - p.alpha_1se)))


@pytest.mark.parametrize("case", ["logit-weighted-offset", "probit", "poisson"])
def test_glm_regularization_path_with_cv(frame, ddf, case):
    cls, formula, kw = GLM_CASES[case]
    mem, lazy = models(cls, formula, frame, ddf, **kw)
    args = dict(n_alphas=8, L1_wt=0.8, cv=4, seed=11, standardize=True)
    p, s = mem.regularization_path(**args), lazy.regularization_path(**args)
    same_path(p, s)
    assert s.cv_mean.notna().all()
    r, q = p.refit("1se"), s.refit("1se")
    close(q.params, r.params)
    close(q.predict(frame.iloc[:40]), r.predict(frame.iloc[:40]))


def test_folds_do_not_depend_on_the_partitioning(frame):
    """A row's fold follows from its position among the rows and the seed: the same with 1,
    3 or 7 partitions and in memory (stratified by the response, and not)."""
    mem = gc.Logit.from_formula("y ~ x + z", frame)
    for stratify in (True, False):
        ref = mem.regularization_path(n_alphas=3, cv=5, seed=3, stratify=stratify).folds
        for n in (1, 3, 7):
            lazy = gc.Logit.from_formula("y ~ x + z", dd.from_pandas(frame, npartitions=n))
            folds = lazy.regularization_path(n_alphas=3, cv=5, seed=3, stratify=stratify).folds
            np.testing.assert_array_equal(folds, ref)
    # and given fold labels are used as given
    labels = np.arange(mem.data.nrows) % 3
    lazy = gc.Logit.from_formula("y ~ x + z", dd.from_pandas(frame, npartitions=4))
    p = mem.regularization_path(n_alphas=4, cv=labels)
    s = lazy.regularization_path(n_alphas=4, cv=labels)
    same_path(p, s)


def test_mnlogit_fit_regularized(frame, ddf):
    mem, lazy = models(gc.MNLogit, "k ~ x + z + C(g)", frame, ddf, freq_weights="w",
                       offset="off")
    for L1_wt, standardize in ((1.0, False), (0.3, True)):
        r, q = (m.fit_regularized(0.01, L1_wt, standardize=standardize) for m in (mem, lazy))
        assert type(q).__name__ == type(r).__name__ and isinstance(q, type(r))
        for name in ("params", "llf", "llnull", "deviance", "objective", "nobs", "scale_used"):
            close(getattr(q, name), getattr(r, name))
        assert list(q.params.columns) == list(r.params.columns)
        assert q.df_model == r.df_model
        new = frame.iloc[::7]
        off = frame.off.iloc[::7]
        close(q.predict(new, offset=off), r.predict(new, offset=off))
        pd.testing.assert_series_equal(q.predict(new, which="class"),
                                       r.predict(new, which="class"))
        fitted = q.predict()
        assert isinstance(fitted, dd.DataFrame)
        close(fitted.compute(), r.predict())


@pytest.mark.parametrize("cls, formula", [(gc.Logit, "y ~ x + z + C(g)"),
                                         (gc.MNLogit, "k ~ x + z + C(g)")])
def test_penalised_dask_fits_pickle_and_predict_after_loading(frame, ddf, cls, formula):
    mem, lazy = models(cls, formula, frame, ddf)
    r, q = (m.fit_regularized(0.01) for m in (mem, lazy))
    back = pickle.loads(pickle.dumps(q))
    close(back.params, r.params)
    new = frame.iloc[::5]
    close(back.predict(new), r.predict(new))
    close(back.predict().compute(), r.predict())


def test_mnlogit_null_deviance_without_offset_or_intercept(frame, ddf):
    """The two other ways the null deviance is made (closed form; eta = offset)."""
    for formula in ("k ~ x + z", "k ~ 0 + x + z"):
        mem, lazy = models(gc.MNLogit, formula, frame, ddf)
        r, q = mem.fit_regularized(0.005), lazy.fit_regularized(0.005)
        close(q.llnull, r.llnull)
        close(q.params, r.params)


def test_mnlogit_regularization_path_with_cv(frame, ddf):
    mem, lazy = models(gc.MNLogit, "k ~ x + z + C(g)", frame, ddf, freq_weights="w")
    args = dict(n_alphas=6, cv=3, seed=5)
    p, s = mem.regularization_path(**args), lazy.regularization_path(**args)
    same_path(p, s)
    r, q = p.refit("min"), s.refit("min")
    close(q.params, r.params)


def test_shifted_blocks_equal_a_centred_copy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 4))
    y = rng.integers(0, 3, 700)
    w = rng.random(700)
    shift = X.mean(axis=0)
    plain = ArrayBlocks(X, y, w, rows=128)
    centred = ArrayBlocks(X - shift, y, w, rows=128)
    shifted = ShiftedBlocks(plain, shift)
    assert (shifted.n_rows, shifted.n_cols) == (700, 4)

    def gram(b):
        return (b.X * b.weights[:, None]).T @ b.X

    np.testing.assert_array_equal(shifted.reduce(gram, np.zeros((4, 4))),
                                  centred.reduce(gram, np.zeros((4, 4))))
    np.testing.assert_array_equal(shifted.map(lambda b: b.X[:, 1]), X[:, 1] - shift[1])
    keep = y > 0
    np.testing.assert_array_equal(shifted.take_rows(keep).reduce(gram, np.zeros((4, 4))),
                                  centred.take_rows(keep).reduce(gram, np.zeros((4, 4))))
    two = shifted.take_columns(np.array([0, 2]))
    np.testing.assert_array_equal(two.map(lambda b: b.X), (X - shift)[:, [0, 2]])
    with pytest.raises(ValueError, match="shift must have shape"):
        ShiftedBlocks(plain, shift[:3])


# --- under a dask.distributed LocalCluster ------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit="2GiB")
        with Client(cluster) as c:
            yield c
        cluster.close()


@pytest.mark.distributed
def test_on_a_two_process_cluster(client, frame):
    """Penalised fits and a cross-validated path whose passes run on worker processes (the
    block functions, the MNLogit's centring shift and the fold masks travel pickled) equal
    the in-memory ones."""
    with dask.config.set(scheduler=client):
        ddf = dd.from_pandas(frame, npartitions=4)
        for cls, formula, kw in (GLM_CASES["logit-weighted-offset"],
                                 (gc.MNLogit, "k ~ x + z + C(g)", dict(freq_weights="w"))):
            mem, lazy = models(cls, formula, frame, ddf, **kw)
            r, q = mem.fit_regularized(0.01, 0.5, standardize=True), lazy.fit_regularized(
                0.01, 0.5, standardize=True)
            close(q.params, r.params)
            close(q.llnull, r.llnull)
            close(q.predict().compute(), r.predict())
            if cls is gc.Logit:  # each pass is a round trip to the cluster: one path will do
                args = dict(n_alphas=3, cv=2, seed=2)
                same_path(mem.regularization_path(**args), lazy.regularization_path(**args))
