"""Property-based fuzzing of the GLM path with hypothesis (issue #6).

Random designs (scales from 1e-3 to 1e3, integer columns with ties, duplicated, constant and
all-zero columns, more columns than rows), responses (0/1, labels, proportions, a single class),
frequency and variance weights (with zeros), offsets and patsy formulas. Properties:

* only the package's documented exceptions (``ValueError`` and its subclass ``DataError``) and
  warnings (subclasses of ``GlmclassWarning``) ever escape; a ``RuntimeWarning`` is an error;
* a fit that converged without separation is at a maximum: the score is ~0 and the Hessian of
  the log-likelihood (by finite differences of the analytic score) is negative definite;
* IRLS (Fisher scoring) and Newton's method agree;
* frequency weights are the same as duplicated rows.

The default ("ci") profile runs a few hundred examples in all; ``--hypothesis-profile=long``
runs many more (see ``tests/conftest.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass import links as L

LINKS = L.registered(within=(0, 1))


# --- strategies ----------------------------------------------------------------------------------

@st.composite
def designs(draw, min_rows: int = 2, max_rows: int = 30, max_cols: int = 4):
    """An (n, p) design: intercept or not, random scales, integer columns, degenerate columns."""
    n = draw(st.integers(min_rows, max_rows))
    p = draw(st.integers(1, max_cols))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cols = []
    for _ in range(p):
        kind = draw(st.sampled_from(["normal", "normal", "int", "binary", "scaled"]))
        if kind == "normal":
            cols.append(rng.normal(size=n))
        elif kind == "int":
            cols.append(rng.integers(-2, 3, n).astype(float))
        elif kind == "binary":
            cols.append(rng.integers(0, 2, n).astype(float))
        else:
            cols.append(rng.normal(size=n) * 10.0 ** draw(st.integers(-3, 3)))
    X = np.column_stack(cols)
    if draw(st.booleans()):
        X[:, 0] = 1.0  # intercept
    degenerate = draw(st.sampled_from(["none", "none", "none", "duplicate", "zero", "constant",
                                       "collinear"]))
    if degenerate == "duplicate":
        X = np.column_stack([X, X[:, -1]])
    elif degenerate == "zero":
        X = np.column_stack([X, np.zeros(n)])
    elif degenerate == "constant":
        X = np.column_stack([X, np.full(n, 2.0)])
    elif degenerate == "collinear" and p >= 2:
        X = np.column_stack([X, X[:, 0] - 0.5 * X[:, 1]])
    return X, rng


@st.composite
def binomial_problems(draw):
    """(y, X, freq_weights, var_weights, offset, link) for a binomial GLM."""
    X, rng = draw(designs())
    n = X.shape[0]
    beta = rng.normal(size=X.shape[1]) * draw(st.sampled_from([0.0, 0.5, 2.0]))
    eta = np.clip(X @ beta / max(1.0, np.abs(X).max()), -30, 30)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    kind = draw(st.sampled_from(["binary", "binary", "proportion", "single"]))
    var_w = None
    if kind == "proportion":
        trials = rng.integers(1, 6, n).astype(float)
        y = rng.binomial(trials.astype(int), 1 / (1 + np.exp(-eta))) / trials
        var_w = trials
    elif kind == "single":
        y = np.ones(n)
    freq_w = None
    if draw(st.booleans()):
        freq_w = rng.integers(0, 4, n).astype(float)
    offset = None
    if draw(st.booleans()):
        offset = rng.normal(size=n) * draw(st.sampled_from([0.1, 1.0, 5.0]))
    link = draw(st.sampled_from(LINKS))
    return y, X, freq_w, var_w, offset, link


def fit_quietly(make, **fit_kwargs):
    """Build and fit; return (results or None, exception or None, glmclass warnings).

    Anything else than a ValueError or a GlmclassWarning propagates and fails the test.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        try:
            res = make().fit(**fit_kwargs)
        except ValueError as exc:
            assert str(exc), "an error message must say what is wrong"
            return None, exc, []
    for w in caught:
        assert issubclass(w.category, gc.GlmclassWarning), (w.category, str(w.message))
    return res, None, [w.category for w in caught]


def binomial_model(y, X, freq_w, var_w, offset, link):
    return lambda: gc.GLM(y, X, family=gc.families.Binomial(link=link), offset=offset,
                          freq_weights=freq_w, var_weights=var_w)


def clean(res, cats) -> bool:
    """A fit whose estimates are a proper maximum: converged, full rank, not separated, with
    a positive definite information matrix (finite standard errors)."""
    if not (res is not None and res.converged and not res.aliased and not cats
            and (res.separation is None or not res.separation.separated)):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GlmclassWarning)
        return bool(np.all(np.isfinite(res.bse)))


# --- the log-likelihood, independently of the solver ----------------------------------------------

def score_and_hessian(res, y, X, freq_w, var_w, offset, link):
    """Score and (finite-difference) Hessian of the binomial log-likelihood at the estimates."""
    n = X.shape[0]
    w = (np.ones(n) if freq_w is None else freq_w) * (np.ones(n) if var_w is None else var_w)
    off = np.zeros(n) if offset is None else offset

    def score(b):
        eta = off + X @ b
        lme = link.log_mu_eta(eta)
        d = (y * np.exp(lme - link.log_inverse(eta))
             - (1 - y) * np.exp(lme - link.log_inverse_c(eta)))
        return X.T @ (w * d)

    b = res.params.to_numpy()
    g = score(b)
    h = 1e-5 * np.maximum(1.0, np.abs(b))
    H = np.column_stack([(score(b + h[j] * e) - score(b - h[j] * e)) / (2 * h[j])
                         for j, e in enumerate(np.eye(len(b)))])
    return g, (H + H.T) / 2


# --- properties ----------------------------------------------------------------------------------

@given(binomial_problems(), st.sampled_from(["irls", "newton"]))
def test_only_documented_failures(problem, method):
    y, X, freq_w, var_w, offset, link = problem
    res, exc, cats = fit_quietly(binomial_model(*problem), method=method)
    if exc is not None:
        single = np.unique(y[(freq_w if freq_w is not None else np.ones(len(y))) > 0]).size < 2
        assert single or freq_w is not None and not np.any(freq_w > 0), repr(exc)
        return
    assert np.isfinite(res.llf) and np.isfinite(res.deviance)
    assert np.all(np.isfinite(res.params[~res.params.index.isin(res.aliased)]))
    assert np.all((res.fittedvalues >= 0) & (res.fittedvalues <= 1))
    if gc.SeparationWarning in cats:
        assert res.separation.separated and cats.count(gc.SeparationWarning) == 1
        assert gc.ConvergenceWarning not in cats
    if not res.converged and not (res.separation and res.separation.separated):
        assert gc.ConvergenceWarning in cats
    str(res.summary())  # the report renders whatever happened


@given(binomial_problems())
def test_converged_fit_is_a_maximum(problem):
    y, X, freq_w, var_w, offset, link = problem
    res, _, cats = fit_quietly(binomial_model(*problem), method="newton", tol=1e-12)
    assume(res is not None and res.converged and not res.aliased and not cats
           and not res.separation.separated)
    g, H = score_and_hessian(res, y, X, freq_w, var_w, offset, link)
    info = -H
    note(f"score {g}, information eigenvalues {np.linalg.eigvalsh(info)}")
    # scale-free checks: the Newton decrement g' I^-1 g and the eigenvalues of the
    # information on the unit-diagonal scale
    d = np.sqrt(np.abs(np.diag(info)))
    assume(np.all(d > 0))
    eig = np.linalg.eigvalsh(info / np.outer(d, d))
    if eig.min() <= 1e-10:
        # not a maximum (the cauchit likelihood is not log-concave and has saddle points):
        # then the results must say so rather than report standard errors
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bse = res.bse
        assert np.all(np.isnan(bse)), "standard errors reported at a saddle point"
        assert any("not positive definite" in str(w.message) for w in caught)
        return
    assume(eig.min() > 1e-8)  # well-posed enough for the decrement to be meaningful
    decrement = float(g @ np.linalg.solve(info, g))
    assert decrement < 1e-6 * (1.0 + abs(res.llf))


@given(binomial_problems())
def test_irls_and_newton_agree(problem):
    # the cauchit likelihood is not log-concave (heavy tails): on flat likelihoods IRLS and
    # Newton may stop at different local maxima, so agreement is a property of the others
    assume(not isinstance(problem[-1], L.Cauchit))
    a, _, ca = fit_quietly(binomial_model(*problem), method="irls", tol=1e-12, maxiter=200)
    b, _, cb = fit_quietly(binomial_model(*problem), method="newton", tol=1e-12, maxiter=200)
    assume(clean(a, ca) and clean(b, cb))
    se = np.maximum(a.bse.to_numpy(), 1e-12)
    note(f"irls {a.params.to_numpy()}, newton {b.params.to_numpy()}, se {se}")
    # relative to the standard errors: a flat likelihood (cauchit with a rare class, se ~ 1e4)
    # pins the estimates down less tightly than the deviance-based stopping rule
    np.testing.assert_array_less(np.abs(a.params - b.params).to_numpy(), 1e-2 * se + 1e-9)
    assert a.llf == pytest.approx(b.llf, rel=1e-9, abs=1e-9)


@given(binomial_problems())
def test_frequency_weights_equal_duplicated_rows(problem):
    y, X, freq_w, var_w, offset, link = problem
    assume(freq_w is not None and freq_w.sum() >= 2)
    a, ea, ca = fit_quietly(binomial_model(*problem), tol=1e-12, maxiter=200)
    rep = freq_w.astype(int)
    dup = [np.repeat(v, rep, axis=0) if v is not None else None for v in (y, X, var_w, offset)]
    b, eb, cb = fit_quietly(binomial_model(dup[0], dup[1], None, dup[2], dup[3], link),
                            tol=1e-12, maxiter=200)
    assert (ea is None) == (eb is None)
    if ea is not None:
        return
    assert a.nobs == b.nobs == freq_w.sum()
    assert (a.separation is None) == (b.separation is None)
    if a.separation is not None:
        assert a.separation.separated == b.separation.separated
    assume(clean(a, ca) and clean(b, cb))
    # after the clean check: on separated, saturated designs the rank decision sits at the
    # rounding level of the Gram, and weighting vs duplicating rows may tip it
    assert a.aliased == b.aliased
    if link.name == "cauchit":
        # not log-concave: R's starting values depend on the prior weights (mu0 = (w y + 0.5) /
        # (w + 1)), so the two fits may climb to different local maxima
        assume(a.llf == pytest.approx(b.llf, rel=1e-9, abs=1e-9))
    se = np.maximum(a.bse.to_numpy(), 1e-12)
    np.testing.assert_array_less(np.abs(a.params - b.params).to_numpy(), 1e-5 * se + 1e-9)
    np.testing.assert_allclose(a.bse, b.bse, rtol=1e-5)
    assert a.llf == pytest.approx(b.llf, rel=1e-9, abs=1e-9)
    assert a.deviance == pytest.approx(b.deviance, rel=1e-7, abs=1e-7)


TERMS = ["a", "b", "C(g)", "a:C(g)", "np.log(np.abs(b) + 1)", "I(a ** 2)", "center(a)",
         "standardize(b)", "C(h)", "a:b", "bs"]


@st.composite
def formula_problems(draw):
    n = draw(st.integers(3, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    df = pd.DataFrame({
        "a": rng.normal(size=n),
        "b": rng.integers(-3, 4, n).astype(float) * 10.0 ** draw(st.integers(-3, 3)),
        "g": rng.choice(["u", "v", "w"], n, p=[0.6, 0.3, 0.1]),
        "h": rng.choice(["p", "q"], n),
        "bs": rng.integers(0, 2, n).astype(bool),
    })
    labels = draw(st.sampled_from([["no", "yes"], [0, 1], [False, True]]))
    df["y"] = np.asarray(labels, dtype=object)[rng.integers(0, 2, n)]
    if draw(st.booleans()):
        holes = rng.random(n) < 0.15
        df["a"] = df["a"].mask(holes)
    if draw(st.booleans()):
        df["g"] = df["g"].mask(rng.random(n) < 0.1)
    terms = draw(st.lists(st.sampled_from(TERMS), min_size=0, max_size=4, unique=True))
    intercept = draw(st.sampled_from(["", "0 + ", "1 + "]))
    formula = "y ~ " + intercept + (" + ".join(terms) if terms else "1")
    if intercept == "0 + " and not terms:
        formula = "y ~ 0 + a"
    return formula, df, draw(st.sampled_from(LINKS)), draw(st.sampled_from(["drop", "raise"]))


@given(formula_problems())
def test_formulas_fail_only_with_documented_errors(problem):
    formula, df, link, missing = problem
    note(formula)
    fam = gc.families.Binomial(link=link)
    res, exc, cats = fit_quietly(lambda: gcf.glm(formula, df, family=fam, missing=missing))
    if exc is not None:
        return
    # new data go through the stored design: predicting the rows used reproduces the fit
    used = df.loc[res.fittedvalues.index]
    np.testing.assert_allclose(res.predict(used), res.fittedvalues, rtol=1e-10, atol=1e-12)
    labels = res.predict(used, which="class")
    assert set(labels) <= set(res.model.levels)
    assert res.nobs == len(used) == len(df) - res.model.data.n_dropped
