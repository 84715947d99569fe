"""Every model fit on Dask data equals the same fit in memory (to 1e-10), with the same results
classes; per-row outputs and predictions on Dask data are lazy Dask collections."""

from __future__ import annotations

import contextlib
import io

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.data.dask as D
from glmclass import families as F
from glmclass import links as L

TOL = 1e-10


def close(a, b, tol: float = TOL) -> None:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(b)))))


def same_fit(r_mem, r_dask, attrs=("params", "bse", "llf", "llnull", "deviance", "aic",
                                   "bic", "nobs")) -> None:
    assert type(r_dask).__name__ == type(r_mem).__name__
    assert isinstance(r_dask, type(r_mem))
    for a in attrs:
        close(getattr(r_dask, a), getattr(r_mem, a))


@pytest.fixture
def ddf(frame):
    return dd.from_pandas(frame, npartitions=4)


@pytest.mark.parametrize("family", [
    F.Binomial(), F.Binomial(L.Probit()), F.Binomial(L.CLogLog()), F.Binomial(L.LogLog()),
    F.Binomial(L.Cauchit()), F.Gaussian(), F.Poisson()], ids=lambda f: f"{f.name}-{f.link.name}")
def test_glm_families_and_links(frame, ddf, family):
    y = "count" if family.name == "Poisson" else ("z" if family.name == "Gaussian" else "y")
    f = f"{y} ~ x + C(g)"
    kw = dict(family=family, freq_weights="w", offset="off")
    mem = gc.GLM.from_formula(f, frame, **{k: frame[v] if isinstance(v, str) else v
                                          for k, v in kw.items()}).fit()
    lazy = gc.GLM.from_formula(f, ddf, **{k: ddf[v] if isinstance(v, str) else v
                                         for k, v in kw.items()}).fit()
    same_fit(mem, lazy)
    close(lazy.pearson_chi2, mem.pearson_chi2)
    assert str(lazy.summary()) == str(mem.summary())


def test_logit_probit_var_weights_and_predictions(frame, ddf):
    for cls in (gc.Logit, gc.Probit):
        mem = cls.from_formula("y ~ x + z + C(g)", frame, var_weights=frame.w).fit()
        lazy = cls.from_formula("y ~ x + z + C(g)", ddf, var_weights=ddf.w).fit()
        same_fit(mem, lazy)
        fitted = lazy.fittedvalues
        assert isinstance(fitted, dd.Series)
        close(fitted.compute(), mem.fittedvalues)
        for what in ("resid_pearson", "resid_deviance", "resid_response", "resid_working",
                     "linear_predictor"):
            got = getattr(lazy, what).compute()
            pd.testing.assert_index_equal(got.index, getattr(mem, what).index)
            close(got, getattr(mem, what))
        pred = lazy.predict(ddf)
        assert isinstance(pred, dd.Series)
        close(pred.compute(), mem.predict(frame))
        prob = lazy.predict(ddf, which="prob")
        assert isinstance(prob, dd.DataFrame)
        close(prob.compute(), mem.predict(frame, which="prob"))
        assert (lazy.predict(ddf, which="class").compute().equals(
            mem.predict(frame, which="class")))
        close(lazy.predict().compute(), mem.predict())
        close(lazy.predict(frame.head(20)), mem.predict(frame.head(20)))  # pandas in, pandas out
        pd.testing.assert_frame_equal(lazy.pred_table(), mem.pred_table())


def test_bayes_logit(frame, ddf):
    mem = gc.BayesLogit.from_formula("y ~ x + z + C(g)", frame, prior_scale=2.0).fit()
    lazy = gc.BayesLogit.from_formula("y ~ x + z + C(g)", ddf, prior_scale=2.0).fit()
    same_fit(mem, lazy, ("params", "bse", "llf", "llnull", "log_evidence", "aic", "bic"))
    close(lazy.predict(ddf).compute(), mem.predict(frame))
    close(lazy.predict(ddf, method="map").compute(), mem.predict(frame, method="map"))
    assert str(lazy.summary()) == str(mem.summary())


def test_mnlogit(frame, ddf):
    mem = gc.MNLogit.from_formula("k ~ x + z + C(g)", frame, freq_weights=frame.w,
                                  ref="mid").fit()
    lazy = gc.MNLogit.from_formula("k ~ x + z + C(g)", ddf, freq_weights=ddf.w,
                                   ref="mid").fit()
    same_fit(mem, lazy)
    assert lazy.levels == mem.levels and lazy.ref == mem.ref
    close(lazy.predict(ddf).compute(), mem.predict(frame))
    close(lazy.fittedvalues.compute(), mem.fittedvalues)
    pd.testing.assert_frame_equal(lazy.pred_table(), mem.pred_table())
    assert str(lazy.summary()) == str(mem.summary())


@pytest.mark.parametrize("cls", [gc.LDA, gc.QDA])
def test_discriminant(frame, ddf, cls):
    mem = cls.from_formula("k ~ x + z", frame).fit(cov="unbiased")
    lazy = cls.from_formula("k ~ x + z", ddf).fit(cov="unbiased")
    same_fit(mem, lazy, ("means", "priors", "llf", "llf_conditional", "aic", "bic",
                         "error_rate", "nobs"))
    close(lazy.predict(ddf).compute(), mem.predict(frame))
    close(lazy.predict().compute(), mem.predict())
    pd.testing.assert_frame_equal(lazy.pred_table(), mem.pred_table())
    assert str(lazy.summary()) == str(mem.summary())


def test_lda_shrinkage_and_transform(frame, ddf):
    mem = gc.LDA.from_formula("k ~ x + z", frame).fit(shrinkage="ledoit-wolf")
    lazy = gc.LDA.from_formula("k ~ x + z", ddf).fit(shrinkage="ledoit-wolf")
    close(lazy.covariance, mem.covariance)
    close(lazy.shrinkage, mem.shrinkage)
    close(lazy.transform(ddf).compute(), mem.transform(frame))


def test_naive_bayes(frame, ddf):
    mem = gc.BernoulliNB.from_formula("k ~ b1 + b2", frame).fit()
    lazy = gc.BernoulliNB.from_formula("k ~ b1 + b2", ddf).fit()
    same_fit(mem, lazy, ("feature_prob", "priors", "llf", "llf_conditional", "aic"))
    with pytest.raises(ValueError, match="feature 'x' has the value"):
        gc.BernoulliNB.from_formula("k ~ b1 + x", ddf)


def test_compare_and_row_fingerprint(frame, ddf):
    a = gc.Logit.from_formula("y ~ x + z", ddf).fit()
    b = gc.Logit.from_formula("y ~ x", ddf).fit()
    table = gc.compare([a, b])
    mem = gc.compare([gc.Logit.from_formula("y ~ x + z", frame).fit(),
                      gc.Logit.from_formula("y ~ x", frame).fit()])
    close(table[["llf", "aic", "bic", "bic_weight"]], mem[["llf", "aic", "bic", "bic_weight"]])
    c = gc.Logit.from_formula("y ~ z", ddf).fit()  # keeps rows 7 and 500 (x missing there)
    with pytest.raises(ValueError, match="different rows"):
        gc.compare([a, c])


def test_stateful_transforms_and_persist_policy(frame, ddf, monkeypatch):
    f = "y ~ x + center(z) + standardize(count) + C(g)"  # (patsy: NaN spoils a centre)
    mem = gc.Logit.from_formula(f, frame).fit()
    for policy in (True, False):
        monkeypatch.setattr(D, "PERSIST", policy)
        lazy = gc.Logit.from_formula(f, ddf).fit()
        assert lazy.model.data.persisted is policy
        same_fit(mem, lazy)
        close(lazy.predict(ddf).compute(), mem.predict(frame))


def test_array_constructors(frame):
    df = frame.dropna()
    X = np.column_stack([np.ones(len(df)), df.x, df.z])
    Xd = da.from_array(X, chunks=(250, 3))
    yd = da.from_array(df.y.to_numpy(), chunks=300)  # other chunks: rechunked like exog
    wd = da.from_array(df.w.to_numpy(), chunks=250)
    mem = gc.Logit(df.y.to_numpy(), X, freq_weights=df.w.to_numpy()).fit()
    lazy = gc.Logit(yd, Xd, freq_weights=wd).fit()
    same_fit(mem, lazy)
    assert lazy.model.exog_names == mem.model.exog_names
    close(lazy.predict(Xd).compute(), mem.predict(X))
    kd = da.from_array(df.k.to_numpy(), chunks=250)
    same_fit(gc.MNLogit(df.k.to_numpy(), X).fit(), gc.MNLogit(kd, Xd).fit())
    same_fit(gc.LDA(df.k.to_numpy(), X[:, 1:]).fit(), gc.LDA(kd, Xd[:, 1:]).fit(),
             ("means", "llf", "aic"))
    with pytest.raises(ValueError, match="endog has 10 rows but exog has"):
        gc.Logit(yd[:10], Xd)


def test_disp_prints_iterations_with_a_progress_bar(frame, ddf):
    from dask.diagnostics import ProgressBar

    out = io.StringIO()
    with contextlib.redirect_stdout(out), ProgressBar(), dask.config.set(scheduler="threads"):
        res = gc.Logit.from_formula("y ~ x + C(g)", ddf).fit(disp=True)
    text = out.getvalue()
    assert "deviance" in text and "time (s)" in text and "Completed" in text
    lines = [ln for ln in text.splitlines() if ln.strip()[:1].isdigit()]
    assert len(lines) == res.n_iter
    assert float(lines[-1].split()[1]) == pytest.approx(res.deviance, rel=1e-10)


# --- bad and awkward input --------------------------------------------------------------------

def test_unknown_divisions_fit_the_same(frame):
    ddf = dd.from_pandas(frame, npartitions=4).clear_divisions()
    assert not ddf.known_divisions
    mem = gc.Logit.from_formula("y ~ x + C(g)", frame, freq_weights=frame.w).fit()
    same_fit(mem, gc.Logit.from_formula("y ~ x + C(g)", ddf, freq_weights=ddf.w).fit())


def test_mismatched_partitions_are_an_error(frame, ddf):
    other = dd.from_pandas(frame.w, npartitions=3)
    with pytest.raises(ValueError, match="freq_weights has 3 partitions but data has 4"):
        gc.Logit.from_formula("y ~ x", ddf, freq_weights=other)
    shifted = _resplit(frame.w, [100, 400, 400, 300], known=True)
    with pytest.raises(ValueError, match="divisions"):
        gc.Logit.from_formula("y ~ x", ddf, freq_weights=shifted)
    unknown = _resplit(frame, [300] * 4)
    with pytest.raises(ValueError, match="partitions do not match"):
        gc.Logit.from_formula("y ~ x", unknown,
                              freq_weights=_resplit(frame.w, [100, 400, 400, 300])).fit()


def _resplit(obj, sizes: list, known: bool = False):
    """A Dask collection with the given partition sizes (unknown divisions unless known)."""
    edges = np.cumsum([0] + sizes)
    parts = [obj.iloc[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]
    divisions = None
    if known:
        divisions = [int(obj.index[a]) for a in edges[:-1]] + [int(obj.index[-1])]
    return dd.from_delayed([dask.delayed(p) for p in parts], meta=obj.iloc[:0],
                           divisions=divisions)


def test_level_only_in_a_late_partition(frame):
    df = frame.sort_values("g").reset_index(drop=True)  # 'c' only in the last partitions
    df["g2"] = np.where(df.index >= len(df) - 50, "late", df.g)
    ddf = dd.from_pandas(df, npartitions=4)
    mem = gc.Logit.from_formula("y ~ x + C(g2)", df).fit()
    lazy = gc.Logit.from_formula("y ~ x + C(g2)", ddf).fit()
    assert "C(g2)[T.late]" in lazy.params.index
    same_fit(mem, lazy)
    with pytest.raises(ValueError, match="level 'nope'"):
        lazy.predict(ddf.assign(g2="nope")).compute()


def test_partition_with_no_rows_after_dropping_missing(frame):
    df = frame.copy()
    df.loc[300:599, "x"] = np.nan  # the whole second partition
    ddf = dd.from_pandas(df, npartitions=4)
    mem = gc.Logit.from_formula("y ~ x + C(g)", df).fit()
    lazy = gc.Logit.from_formula("y ~ x + C(g)", ddf).fit()
    assert lazy.model.data.lengths[1] == 0
    assert lazy.model.data.n_dropped == mem.model.data.n_dropped
    same_fit(mem, lazy)
    close(lazy.fittedvalues.compute(), mem.fittedvalues)
    same_fit(gc.MNLogit.from_formula("k ~ x", df).fit(), gc.MNLogit.from_formula("k ~ x", ddf)
             .fit())
    with pytest.raises(ValueError, match="missing values in 'x'"):
        gc.Logit.from_formula("y ~ x", ddf, missing="raise")


def test_messages_match_memory(frame, ddf):
    with pytest.raises(ValueError, match="has 3 levels"):
        gc.Logit.from_formula("k ~ x", ddf)
    with pytest.raises(ValueError, match="single class"):
        gc.Logit.from_formula("y ~ x", ddf[ddf.y])
    with pytest.raises(ValueError, match="freq_weights must be finite and non-negative"):
        gc.Logit.from_formula("y ~ x", ddf, freq_weights=-ddf.w)
    with pytest.raises(ValueError, match="neither a column") as lazy:
        gc.Logit.from_formula("y ~ nothere", ddf)
    with pytest.raises(ValueError) as mem:
        gc.Logit.from_formula("y ~ nothere", frame)
    assert str(lazy.value) == str(mem.value)  # one check, before any partition is read
    with pytest.raises(gc.UnsafeFormulaError, match="__import__"):
        gc.Logit.from_formula("y ~ I(x + 0*__import__('os').getpid())", ddf)
    with pytest.raises(TypeError, match="Dask Series"):
        gc.Logit.from_formula("y ~ x", ddf, freq_weights=frame.w.to_numpy())


def test_separation_is_apparent_on_dask(frame):
    df = frame.dropna().copy()
    df["y"] = df.x > 0
    ddf = dd.from_pandas(df, npartitions=3)
    with pytest.warns(gc.SeparationWarning, match="Dask partitions"):
        res = gc.Logit.from_formula("y ~ x", ddf).fit()
    assert res.separation.kind == "apparent"
    assert "x" in res.separation.message()


def test_rows_once_refused_are_lazy_per_row_outputs(frame, ddf):
    """score_obs and the hat values were refused on Dask ("needs every row at once"): they
    are lazy per-row maps now, equal to the in-memory fit (tests/dask/test_dask_results.py
    checks the rest)."""
    mem = gc.Logit.from_formula("y ~ x", frame).fit()
    res = gc.Logit.from_formula("y ~ x", ddf).fit()
    assert isinstance(res.score_obs(), dd.DataFrame)
    close(res.score_obs().compute(), mem.score_obs())
    assert isinstance(res.hat_matrix_diag, dd.Series)
    close(res.hat_matrix_diag.compute(), mem.hat_matrix_diag)


def test_import_does_not_import_dask():
    import subprocess
    import sys

    code = "import sys, glmclass, glmclass.formula.api; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_predict_with_an_offset(frame, ddf):
    f = "count ~ x + C(g)"
    mem = gc.GLM.from_formula(f, frame, family=F.Poisson(), offset=frame.off).fit()
    lazy = gc.GLM.from_formula(f, ddf, family=F.Poisson(), offset=ddf.off).fit()
    got = lazy.predict(ddf, offset=ddf.off)
    assert isinstance(got, dd.Series)
    close(got.compute(), mem.predict(frame, offset=frame.off))
    close(lazy.predict().compute(), mem.predict())
    with pytest.raises(TypeError, match="Dask Series"):
        lazy.predict(ddf, offset=frame.off.to_numpy())


@pytest.mark.parametrize("model", ["Logit", "Probit", "MNLogit"])
def test_large_fits_on_dask_equal_the_exact_in_memory_fit(model, monkeypatch):
    """At 1e5+ rows an in-memory fit samples its Hessians (solvers/sampled.py); on Dask every
    pass is a graph over the partitions, so fits there keep exact IRLS/Newton iterates (fewer
    passes): they equal the in-memory exact fit to 1e-10, and the in-memory sampled fit to its
    tolerance (~1e-7 standard errors)."""
    from glmclass.solvers import irls_sampled, newton
    from glmclass.solvers import sampled as S

    rng = np.random.default_rng(14)
    n, p = (150_000, 26) if model != "MNLogit" else (120_000, 12)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
    if model == "MNLogit":
        eta = X @ rng.uniform(-0.3, 0.3, (p, 2))
        pr = np.exp(np.column_stack([np.zeros(n), eta]))
        y = (rng.uniform(size=n)[:, None] > np.cumsum(pr / pr.sum(1, keepdims=True), 1)).sum(1)
    else:
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ rng.uniform(-0.3, 0.3, p)))) * 1.0
    cls = getattr(gc, model)
    runs = []

    def spy(original):
        def counted(*args, **kwargs):
            runs.append(original)
            return original(*args, **kwargs)
        return counted

    with monkeypatch.context() as m:
        m.setattr(irls_sampled, "sampled_newton", spy(irls_sampled.sampled_newton))
        m.setattr(newton, "sampled_newton", spy(newton.sampled_newton))
        sampled = cls(y, X).fit()
    lazy = cls(da.from_array(y, chunks=30_000), da.from_array(X, chunks=(30_000, p))).fit()
    with monkeypatch.context() as m:  # the in-memory exact path: no sampling at any size
        m.setattr(S, "SAMPLED_MIN_ROWS", 10**12)  # IRLS's and Newton's threshold
        exact = cls(y, X).fit()
    assert runs  # the in-memory fit did take the sampled path
    assert lazy.n_iter == exact.n_iter
    close(lazy.params, exact.params, 1e-10)
    close(lazy.bse, exact.bse, 1e-10)
    close(lazy.llf, exact.llf, 1e-12)
    se = np.asarray(exact.bse, dtype=float)
    np.testing.assert_allclose(np.asarray(sampled.params, dtype=float) / se,
                               np.asarray(exact.params, dtype=float) / se, rtol=0, atol=1e-6)
    close(sampled.bse, exact.bse, 1e-7)
