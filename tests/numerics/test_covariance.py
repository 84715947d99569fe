"""Covariance types from bread, scores, hat values and cluster labels.

References: statsmodels for OLS (HC0-HC3, one- and two-way cluster) and for the logistic GLM
(HC0 and cluster); a direct dense implementation of R sandwich's formulas where statsmodels
does not follow them (GLM HC1-HC3); the data with each row repeated for frequency weights.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import expit

from glmclass.numerics.covariance import (
    COV_TYPES,
    HAT_ONE,
    covariance,
    covariance_from_rows,
    hat_values,
    hat_values_of,
)
from glmclass.rows.blocks import ArrayBlocks

RTOL = 1e-10
HC = ("HC0", "HC1", "HC2", "HC3")


def assert_cov_close(actual: np.ndarray, expected: np.ndarray, rtol: float = RTOL) -> None:
    """Max abs difference relative to the largest entry (covariances can have zeros)."""
    expected = np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(actual, actual.T)
    err = np.max(np.abs(actual - expected)) / np.max(np.abs(expected))
    assert err <= rtol, f"max relative difference {err:.3g} > {rtol:g}"


def ols_data(n: int = 240, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = sm.add_constant(rng.normal(size=(n, 3)))
    y = X @ [1.0, 2.0, -1.0, 0.5] + rng.normal(size=n) * (0.5 + np.abs(X[:, 1]))
    g1 = rng.integers(0, 14, n)
    g2 = rng.integers(0, 9, n)
    # clusters correlated with the errors, so clustering changes the answer
    y += rng.normal(size=14)[g1] + rng.normal(size=9)[g2]
    return X, y, g1, g2


def ols_pieces(X: np.ndarray, y: np.ndarray):
    res = sm.OLS(y, X).fit()
    bread = np.asarray(res.normalized_cov_params)  # (X'X)^-1
    scores = X * res.resid[:, None]
    return res, bread, scores, hat_values(X, np.ones(len(y)), bread)


def logit_data(n: int = 500, seed: int = 1):
    rng = np.random.default_rng(seed)
    X = sm.add_constant(rng.normal(size=(n, 3)))
    X[:, 2] = np.exp(X[:, 2])  # skewed column: large hat values, so HC2/HC3 differ from HC0
    y = (rng.random(n) < expit(X @ [-0.5, 1.0, 0.4, -0.7])).astype(float)
    g1 = rng.integers(0, 20, n)
    g2 = rng.integers(0, 7, n)
    return X, y, g1, g2


def glm_pieces(X: np.ndarray, y: np.ndarray, mu: np.ndarray, f: np.ndarray | None = None):
    """Bread (X'WX)^-1, scores f (y - mu) x and hat values of a logistic GLM at mu."""
    f = np.ones(len(y)) if f is None else f
    w = f * mu * (1 - mu)
    bread = np.linalg.inv((X * w[:, None]).T @ X)
    scores = X * (f * (y - mu))[:, None]
    return bread, scores, hat_values(X, w, bread), w


def sandwich_glm_hc(X, y, mu, cov_type):
    """R sandwich's vcovHC for a glm, written out with dense n x n matrices.

    omega_i = r_i^2 (HC0), r_i^2 n/(n-k) (HC1), r_i^2 / (1-h_i) (HC2), r_i^2 / (1-h_i)^2 (HC3),
    r_i = y_i - mu_i the working residual times the working weight, and h_i the diagonal of
    W^1/2 X (X'WX)^-1 X' W^1/2 (hatvalues.glm).
    """
    n, k = X.shape
    w = mu * (1 - mu)
    Xw = X * np.sqrt(w)[:, None]
    bread = np.linalg.inv(Xw.T @ Xw)
    h = np.diag(Xw @ bread @ Xw.T)
    r = y - mu
    omega = {"HC0": r**2, "HC1": r**2 * n / (n - k), "HC2": r**2 / (1 - h),
             "HC3": r**2 / (1 - h) ** 2}[cov_type]
    return bread @ (X.T @ (omega[:, None] * X)) @ bread


# --- OLS against statsmodels -------------------------------------------------------------------


@pytest.mark.parametrize("cov_type", HC)
def test_ols_hc_matches_statsmodels(cov_type):
    X, y, _, _ = ols_data()
    _, bread, scores, h = ols_pieces(X, y)
    ref = sm.OLS(y, X).fit(cov_type=cov_type).cov_params()
    assert_cov_close(covariance(bread, scores, cov_type, hat=h), ref)


def test_ols_hc_types_differ():
    """The reference comparisons above would pass vacuously if the types coincided."""
    X, y, _, _ = ols_data()
    _, bread, scores, h = ols_pieces(X, y)
    covs = [covariance(bread, scores, t, hat=h) for t in HC]
    for a in range(4):
        for b in range(a + 1, 4):
            assert np.max(np.abs(covs[a] - covs[b])) > 1e-3 * np.max(np.abs(covs[a]))


def test_nonrobust_is_scale_times_bread():
    X, y, _, _ = ols_data()
    res, bread, _, _ = ols_pieces(X, y)
    assert_cov_close(covariance(bread, scale=res.scale), res.cov_params())
    assert_cov_close(covariance(bread, None, "nonrobust"), bread)


@pytest.mark.parametrize("use_correction", [True, False])
@pytest.mark.parametrize("two_way", [False, True])
def test_ols_cluster_matches_statsmodels(two_way, use_correction):
    X, y, g1, g2 = ols_data()
    _, bread, scores, _ = ols_pieces(X, y)
    groups = np.column_stack([g1, g2]) if two_way else g1
    ref = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={
        "groups": groups, "use_correction": use_correction}).cov_params()
    got = covariance(bread, scores, "cluster", groups=groups, use_correction=use_correction)
    assert_cov_close(got, ref)


def test_cluster_correction_factor():
    X, y, g1, _ = ols_data()
    _, bread, scores, _ = ols_pieces(X, y)
    n, k, G = len(y), X.shape[1], len(np.unique(g1))
    raw = covariance(bread, scores, "cluster", groups=g1, use_correction=False)
    adj = covariance(bread, scores, "cluster", groups=g1)
    np.testing.assert_allclose(adj, raw * G / (G - 1) * (n - 1) / (n - k), rtol=1e-13)


def test_cluster_on_row_ids_is_hc_with_cluster_factors():
    """One observation per cluster: sum_g S_g S_g' is the HC0 meat."""
    X, y, _, _ = ols_data()
    _, bread, scores, _ = ols_pieces(X, y)
    n = len(y)
    got = covariance(bread, scores, "cluster", groups=np.arange(n)[::-1],
                     use_correction=False)
    assert_cov_close(got, covariance(bread, scores, "HC0"), rtol=1e-13)


# --- logistic GLM --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def logit_fit():
    X, y, g1, g2 = logit_data()
    model = sm.GLM(y, X, family=sm.families.Binomial())
    res = model.fit(tol=1e-13)
    return X, y, g1, g2, model, np.asarray(res.fittedvalues)


def test_hat_values_match_statsmodels_glm(logit_fit):
    X, y, _, _, model, mu = logit_fit
    _, _, h, _ = glm_pieces(X, y, mu)
    ref = model.fit(tol=1e-13).get_hat_matrix_diag()  # W^1/2 X (X'WX)^-1 X' W^1/2
    np.testing.assert_allclose(h, ref, rtol=1e-10)
    assert h.sum() == pytest.approx(X.shape[1], rel=1e-12)


def test_glm_hc0_matches_statsmodels(logit_fit):
    X, y, _, _, model, mu = logit_fit
    bread, scores, _, _ = glm_pieces(X, y, mu)
    ref = model.fit(cov_type="HC0", tol=1e-13).cov_params()
    assert_cov_close(covariance(bread, scores, "HC0"), ref)


@pytest.mark.parametrize("cov_type", HC)
def test_glm_hc_matches_sandwich_formula(logit_fit, cov_type):
    # statsmodels 0.14/0.15 is no reference here: for a GLM, cov_type "HC1", "HC2" and "HC3"
    # all return its HC0 (no n/(n-k), no hat values at all), and its OLS-style HC2/HC3 code
    # would use the hat values of the unweighted X. R's sandwich uses n/(n-k) and the hat
    # values of W^1/2 X, written out densely in sandwich_glm_hc.
    X, y, _, _, _, mu = logit_fit
    bread, scores, h, _ = glm_pieces(X, y, mu)
    got = covariance(bread, scores, cov_type, hat=h)
    assert_cov_close(got, sandwich_glm_hc(X, y, mu, cov_type))


@pytest.mark.parametrize("two_way", [False, True])
def test_glm_cluster_matches_statsmodels(logit_fit, two_way):
    X, y, g1, g2, model, mu = logit_fit
    bread, scores, _, _ = glm_pieces(X, y, mu)
    groups = np.column_stack([g1, g2]) if two_way else g1
    ref = model.fit(cov_type="cluster", cov_kwds={"groups": groups}, tol=1e-13).cov_params()
    assert_cov_close(covariance(bread, scores, "cluster", groups=groups), ref)


def test_robust_types_ignore_the_dispersion():
    """Gaussian GLM: scale enters only 'nonrobust'; the sandwich needs no dispersion."""
    X, y, g1, _ = ols_data()
    _, bread, scores, h = ols_pieces(X, y)
    for t in HC:
        np.testing.assert_array_equal(covariance(bread, scores, t, hat=h, scale=7.0),
                                      covariance(bread, scores, t, hat=h))
    np.testing.assert_array_equal(covariance(bread, scores, "cluster", groups=g1, scale=7.0),
                                  covariance(bread, scores, "cluster", groups=g1))


# --- frequency weights ----------------------------------------------------------------------


@pytest.mark.parametrize("groups_kind", ["none", "one", "two"])
def test_freq_weights_equal_repeated_rows(groups_kind):
    """Every type with integer frequency weights equals the same fit on the expanded data."""
    X, y, g1, g2 = logit_data(n=150, seed=5)
    rng = np.random.default_rng(6)
    f = rng.integers(0, 4, len(y)).astype(float)  # zeros included: those rows drop out
    mu = expit(X @ [-0.3, 0.8, 0.3, -0.5])  # any mu will do: the identity is algebraic
    bread, scores, h, _ = glm_pieces(X, y, mu, f)
    rep = np.repeat(np.arange(len(y)), f.astype(int))
    bread_r, scores_r, h_r, _ = glm_pieces(X[rep], y[rep], mu[rep])
    np.testing.assert_allclose(bread, bread_r, rtol=1e-12)
    groups = {"none": None, "one": g1, "two": np.column_stack([g1, g2])}[groups_kind]
    types = ("cluster",) if groups is not None else HC
    for t in types:
        got = covariance(bread, scores, t, hat=h, freq_weights=f,
                         groups=groups)
        exp = covariance(bread_r, scores_r, t, hat=h_r,
                         groups=None if groups is None else groups[rep])
        assert_cov_close(got, exp, rtol=1e-12)


def test_freq_weights_statsmodels_conventions():
    """statsmodels' GLM with freq_weights: HC0 as the repeated rows; its cluster n counts rows."""
    X, y, g1, _ = logit_data(n=300, seed=7)
    f = np.random.default_rng(8).integers(1, 4, len(y)).astype(float)  # sm fails on f = 0
    model = sm.GLM(y, X, family=sm.families.Binomial(), freq_weights=f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "cov_type not fully supported with freq_weights"
        hc0 = model.fit(cov_type="HC0", tol=1e-13)
        cl = model.fit(cov_type="cluster", cov_kwds={"groups": g1}, tol=1e-13)
    bread, scores, _, _ = glm_pieces(X, y, np.asarray(hc0.fittedvalues), f)
    assert_cov_close(covariance(bread, scores, "HC0", freq_weights=f), hc0.cov_params())
    got = covariance(bread, scores, "cluster", groups=g1, freq_weights=f, nobs=len(y))
    assert_cov_close(got, cl.cov_params())
    default = covariance(bread, scores, "cluster", groups=g1, freq_weights=f)
    assert np.max(np.abs(default - got)) > 1e-4 * np.max(np.abs(got))


def test_nobs_enters_hc1_and_cluster_only():
    X, y, g1, _ = ols_data()
    _, bread, scores, h = ols_pieces(X, y)
    n, k = len(y), X.shape[1]
    hc0 = covariance(bread, scores, "HC0")
    np.testing.assert_allclose(covariance(bread, scores, "HC1", nobs=100.0),
                               hc0 * 100.0 / (100.0 - k), rtol=1e-13)
    np.testing.assert_array_equal(covariance(bread, scores, "HC3", hat=h, nobs=100.0),
                                  covariance(bread, scores, "HC3", hat=h))
    raw = covariance(bread, scores, "cluster", groups=g1, use_correction=False)
    G = len(np.unique(g1))
    np.testing.assert_allclose(covariance(bread, scores, "cluster", groups=g1, nobs=100.0),
                               raw * G / (G - 1) * 99.0 / (100.0 - k), rtol=1e-13)
    assert n != 100


# --- labels, blocks, permutations ----------------------------------------------------------


def test_string_and_object_labels_equal_integer_codes():
    X, y, g1, g2 = ols_data()
    _, bread, scores, _ = ols_pieces(X, y)
    names = np.array(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta",
                      "iota", "kappa", "lambda", "mu", "nu", "xi"])
    ref1 = covariance(bread, scores, "cluster", groups=g1)
    ref2 = covariance(bread, scores, "cluster", groups=np.column_stack([g1, g2]))
    for labels in (names[g1], names[g1].astype(object), list(names[g1])):
        np.testing.assert_allclose(covariance(bread, scores, "cluster", groups=labels), ref1,
                                   rtol=1e-13, atol=0)
    mixed = np.empty((len(y), 2), dtype=object)  # e.g. np.asarray of a mixed-dtype frame
    mixed[:, 0] = names[g1]
    mixed[:, 1] = g2 + 0.5
    np.testing.assert_allclose(covariance(bread, scores, "cluster", groups=mixed), ref2,
                               rtol=1e-13, atol=0)


def test_two_way_intersection_does_not_collide():
    """Pairs (a, b) are clustered as pairs: (1, 11) and (11, 1) stay apart."""
    X, y, _, _ = ols_data(n=60)
    _, bread, scores, _ = ols_pieces(X, y)
    rng = np.random.default_rng(2)
    a = rng.choice([1, 11], 60)
    b = rng.choice([1, 11, 111], 60)
    pairs = np.array([f"{i}|{j}" for i, j in zip(a, b, strict=True)])
    v1 = covariance(bread, scores, "cluster", groups=a)
    v2 = covariance(bread, scores, "cluster", groups=b)
    v12 = covariance(bread, scores, "cluster", groups=pairs)
    got = covariance(bread, scores, "cluster", groups=np.column_stack([a, b]))
    np.testing.assert_allclose(got, v1 + v2 - v12, rtol=1e-12, atol=1e-14 * np.abs(v1).max())


@pytest.mark.parametrize("rows", [1, 2, 7, 64, 10_000])
def test_block_size_changes_nothing(rows):
    X, y, g1, g2 = ols_data(n=203)
    _, bread, scores, h = ols_pieces(X, y)
    for t in COV_TYPES:
        groups = None
        if t == "cluster":
            groups = np.column_stack([g1, g2])
        got = covariance(bread, scores, t, hat=h, groups=groups, rows=rows)
        exp = covariance(bread, scores, t, hat=h, groups=groups)
        assert_cov_close(got, exp, rtol=1e-13)


def test_one_big_cluster_spanning_many_blocks():
    X, y, _, _ = ols_data(n=200)
    _, bread, scores, _ = ols_pieces(X, y)
    g = np.where(np.arange(200) < 190, 0, 1 + np.arange(200) % 3)
    dense = np.zeros((4, 4))
    for label in np.unique(g):
        s = scores[g == label].sum(axis=0)
        dense += np.outer(s, s)
    exp = bread @ dense @ bread
    for rows in (1, 3, 50, 200):
        got = covariance(bread, scores, "cluster", groups=g, use_correction=False, rows=rows)
        assert_cov_close(got, exp, rtol=1e-12)


@given(seed=st.integers(0, 2**32 - 1), n_groups=st.integers(2, 30))
def test_row_permutation_changes_no_type(seed, n_groups):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 80))
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    y = X @ rng.normal(size=3) + rng.standard_t(3, size=n)
    _, bread, scores, h = ols_pieces(X, y)
    groups = np.column_stack([rng.integers(0, n_groups, n), rng.integers(0, 3, n)])
    perm = rng.permutation(n)
    for t in COV_TYPES:
        g = groups if t == "cluster" else None
        if g is not None and min(len(np.unique(g[:, 0])), len(np.unique(g[:, 1]))) < 2:
            continue
        a = covariance(bread, scores, t, hat=h, groups=g, rows=5)
        b = covariance(bread, scores[perm], t, hat=h[perm],
                       groups=None if g is None else g[perm], rows=7)
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12 * np.max(np.abs(a)))


# --- two-way fix ----------------------------------------------------------------------------


def test_fix_clips_negative_eigenvalues_of_two_way():
    X, y, _, _ = ols_data(n=40, seed=3)
    X = np.column_stack([X, np.random.default_rng(4).normal(size=(40, 2))])  # k = 6
    _, bread, scores, _ = ols_pieces(X, y)
    rng = np.random.default_rng(5)
    groups = np.column_stack([rng.integers(0, 3, 40), rng.integers(0, 3, 40)])
    raw = covariance(bread, scores, "cluster", groups=groups)
    values, vectors = np.linalg.eigh(raw)
    assert values.min() < -1e-6 * values.max()  # the example must be indefinite
    fixed = covariance(bread, scores, "cluster", groups=groups, fix=True)
    np.testing.assert_allclose(fixed, (vectors * np.maximum(values, 0)) @ vectors.T,
                               rtol=1e-10, atol=1e-14 * values.max())
    assert np.linalg.eigvalsh(fixed).min() >= -1e-12 * values.max()
    # one-way is positive semi-definite: fix changes it by rounding at most
    one_way = covariance(bread, scores, "cluster", groups=groups[:, 0])
    np.testing.assert_allclose(
        covariance(bread, scores, "cluster", groups=groups[:, 0], fix=True), one_way,
        rtol=0, atol=1e-13 * np.abs(one_way).max())


# --- leverage one and bad input -------------------------------------------------------------


def test_hat_value_one_is_an_error_naming_the_row():
    X, y, _, _ = ols_data(n=50)
    X = np.column_stack([X, np.eye(50)[:, 17]])  # a dummy that only row 17 uses
    _, bread, scores, h = ols_pieces(X, y)
    assert h[17] > HAT_ONE
    for t in ("HC2", "HC3"):
        with pytest.raises(ValueError, match=r"hat value 1 .*rows \[17\].*use HC0 or HC1"):
            covariance(bread, scores, t, hat=h)
    assert np.all(np.isfinite(covariance(bread, scores, "HC1")))


def test_non_finite_scores_are_an_error_naming_the_row():
    X, y, _, _ = ols_data(n=50)
    _, bread, scores, h = ols_pieces(X, y)
    scores = scores.copy()
    scores[33, 2] = np.nan
    for t in ("HC0", "HC3"):
        with pytest.raises(ValueError, match=r"not finite in 1 row\(s\) \(rows \[33\]\)"):
            covariance(bread, scores, t, hat=h, rows=8)
    with pytest.raises(ValueError, match=r"rows \[33\]"):
        covariance(bread, scores, "cluster", groups=np.arange(50) % 5, rows=8)


def _pieces_small():
    X, y, g1, _ = ols_data(n=30)
    _, bread, scores, h = ols_pieces(X, y)
    return bread, scores, h, g1


@pytest.mark.parametrize("args, kwargs, match", [
    ((), {"cov_type": "HC4"}, r"unknown cov_type 'HC4'; use one of"),
    ((), {"cov_type": "hc1"}, r"unknown cov_type 'hc1'"),
    (("no-scores",), {"cov_type": "HC1"}, r"'HC1' needs the per-row scores .*pass scores="),
    (("bad-bread",), {"cov_type": "HC0"}, r"bread must be a square"),
    (("short-scores",), {"cov_type": "HC0"}, r"scores must have shape \(n_rows, 4\)"),
    ((), {"cov_type": "HC2"}, r"'HC2' needs the hat values .*pass hat="),
    ((), {"cov_type": "HC3", "hat": np.full(5, 0.1)}, r"hat must have shape \(30,\)"),
    ((), {"cov_type": "HC3", "hat": "nan"}, r"hat values must lie in \[0, 1\]"),
    ((), {"cov_type": "cluster"}, r"'cluster' needs groups="),
    ((), {"cov_type": "cluster", "groups": np.arange(29)}, r"groups must have shape \(30,\)"),
    ((), {"cov_type": "cluster", "groups": np.zeros((30, 3))}, r"or \(30, 2\)"),
    ((), {"cov_type": "cluster", "groups": "float-nan"}, r"groups contains missing labels"),
    ((), {"cov_type": "cluster", "groups": "object-none"}, r"groups (contains missing|mixes)"),
    ((), {"cov_type": "cluster", "groups": "object-nan"}, r"groups contains missing labels"),
    ((), {"cov_type": "cluster", "groups": np.zeros(30)}, r"at least 2 clusters, got 1"),
    ((), {"cov_type": "cluster", "groups": "two-way-one"},
     r"at least 2 clusters in each column of groups, got 1"),
    ((), {"cov_type": "HC1", "groups": "ok"}, r"groups is only used by cov_type='cluster'"),
    ((), {"cov_type": "nonrobust", "groups": "ok"}, r"groups is only used by"),
    ((), {"cov_type": "HC1", "use_correction": False}, r"use_correction only applies to"),
    ((), {"cov_type": "HC0", "fix": True}, r"fix only applies to cov_type='cluster'"),
    ((), {"cov_type": "HC1", "nobs": 4}, r"nobs = 4 <= k = 4; use HC0"),
    ((), {"cov_type": "cluster", "groups": "ok", "nobs": 3}, r"or use_correction=False"),
    ((), {"cov_type": "HC0", "nobs": -1.0}, r"nobs must be a positive number"),
    ((), {"cov_type": "HC0", "freq_weights": np.ones(3)}, r"freq_weights must have shape"),
    ((), {"cov_type": "HC0", "freq_weights": "negative"}, r"finite and non-negative"),
])
def test_bad_input_names_the_argument(args, kwargs, match):
    bread, scores, h, g1 = _pieces_small()
    n = scores.shape[0]
    special = {
        "nan": np.full(n, np.nan),
        "float-nan": np.where(np.arange(n) == 4, np.nan, g1.astype(float)),
        "object-none": np.array([None] + list(g1[1:].astype(str)), dtype=object),
        "object-nan": np.array([np.nan] + list(g1[1:].astype(float)), dtype=object),
        "two-way-one": np.column_stack([g1, np.zeros(n)]),
        "ok": g1,
        "negative": -np.ones(n),
    }
    kwargs = {key: special.get(v, v) if isinstance(v, str) and key != "cov_type" else v
              for key, v in kwargs.items()}
    kwargs.setdefault("hat", None)
    b, s = bread, scores
    if args == ("no-scores",):
        s = None
    elif args == ("bad-bread",):
        b = bread[:, :3]
    elif args == ("short-scores",):
        s = scores[:, :3]
    cov_type = kwargs.pop("cov_type")
    with pytest.raises(ValueError, match=match):
        covariance(b, s, cov_type, **kwargs)


def test_hat_values_shape_error():
    X, y, _, _ = ols_data(n=30)
    with pytest.raises(ValueError, match=r"hat_values: X has shape \(30, 4\)"):
        hat_values(X, np.ones(29), np.eye(4))


# --- the same covariances as a reduce over a row source --------------------------------------


@pytest.mark.parametrize("rows", [7, 64, 10_000])
@pytest.mark.parametrize("cov_type", [*HC, "cluster"])
@pytest.mark.parametrize("weighted", [False, True])
def test_covariance_from_rows_equals_covariance(logit_fit, cov_type, rows, weighted):
    """Scores, hat values and frequency weights computed per block of an ArrayBlocks give
    what the array form gives from the whole arrays."""
    X, y, g1, g2, _, mu = logit_fit
    f = (np.arange(len(y)) % 3).astype(float) if weighted else None
    bread, scores, hat, w = glm_pieces(X, y, mu, f)
    groups = np.column_stack([g1, g2]) if cov_type == "cluster" else None
    n = float(len(y) if f is None else f.sum())
    hc2 = cov_type in ("HC2", "HC3")
    expected = covariance(bread, scores, cov_type, hat=hat if hc2 else None, groups=groups,
                          freq_weights=f, nobs=n)
    source = ArrayBlocks(X, y, weights=f, offset=mu, rows=rows)  # offset carries mu here

    def block_scores(b):
        return b.X * (b.weights * (b.y - b.offset))[:, None]

    def block_hat(b):
        return hat_values_of(b.X, b.weights * b.offset * (1 - b.offset), bread)

    got = covariance_from_rows(bread, source, block_scores, cov_type, nobs=n,
                               hat=block_hat if hc2 else None,
                               freq_weights=None if f is None else (lambda b: b.weights),
                               groups=groups)
    assert_cov_close(got, expected, 1e-12)


def test_covariance_from_rows_errors(logit_fit):
    X, y, _, _, _, mu = logit_fit
    bread, scores, _, _ = glm_pieces(X, y, mu)
    source = ArrayBlocks(scores, rows=50)

    def block_scores(b):
        return b.X

    with pytest.raises(ValueError, match="needs the hat values"):
        covariance_from_rows(bread, source, block_scores, "HC3", nobs=500.0)
    with pytest.raises(ValueError, match="'nonrobust' is scale"):
        covariance_from_rows(bread, source, block_scores, "nonrobust", nobs=500.0)
    with pytest.raises(ValueError, match="only used by cov_type='cluster'"):
        covariance_from_rows(bread, source, block_scores, "HC0", nobs=500.0,
                             groups=np.zeros(500))
    with pytest.raises(ValueError, match=r"block at 100: \[0, 1, 2"):
        covariance_from_rows(bread, source, block_scores, "HC2", nobs=500.0,
                             hat=lambda b: np.full(b.X.shape[0], float(b.start == 100)))
    bad = ArrayBlocks(np.full((10, 4), 1e200))
    with pytest.raises(ValueError, match="not finite"):
        covariance_from_rows(bread, bad, block_scores, "HC0", nobs=10.0)
