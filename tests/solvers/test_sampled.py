"""The large-N fast path (sampled Hessians, exact gradients) against plain float64 Newton.

The references are written out here with NumPy on the whole design (no blocks, no sampling):
Newton's method on the deviance until the step is at rounding, and the covariance as the
inverse of the float64 information at the estimate. The fast path must give the same estimates
to 1e-8 (absolute, on coefficients of order one) and the information at its own estimates.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import glmclass as gc
import glmclass.solvers.irls as IR
import glmclass.solvers.irls_sampled as IS
import glmclass.solvers.sampled as S
from glmclass import families as F
from glmclass import links as L
from glmclass.rows.blocks import ArrayBlocks, block_rows, in_sample
from glmclass.solvers import newton as NW
from glmclass.solvers.control import Control
from glmclass.solvers.irls import Penalty, irls
from glmclass.solvers.irls_sampled import CANONICAL_ROWS_FACTOR
from glmclass.solvers.sampled import SAMPLED_MIN_ROWS


def _data(n, p, seed, link="logit", scale=1.0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p)) * scale])
    beta = rng.uniform(-1, 1, p + 1) * 2 / np.sqrt(p)
    eta = X @ beta
    mu = special.expit(eta) if link == "logit" else stats.norm.cdf(eta)
    y = (rng.uniform(size=n) < mu).astype(float)
    return X, y


def plain_newton(X, y, link="logit", w=None, offset=None, precision=None, information="expected"):
    """Textbook Newton on the binomial deviance (observed information), whole arrays, float64;
    returns the estimates and the Fisher (or the observed) information X'WX at them."""
    n, p = X.shape
    w = np.ones(n) if w is None else w
    offset = np.zeros(n) if offset is None else offset
    b = np.zeros(p)
    for _ in range(100):
        eta = X @ b + offset
        if link == "logit":
            mu = special.expit(eta)
            score_w, fisher = w * (y - mu), w * mu * (1 - mu)
            observed = fisher
        else:
            pdf, cdf, sf = stats.norm.pdf(eta), stats.norm.cdf(eta), stats.norm.sf(eta)
            r = pdf / (cdf * sf)
            score_w = w * (y - cdf) * r
            fisher = w * pdf * r
            # derivative of the score weight (y - F) f / (F (1 - F)) in eta, negated
            d = -pdf * r - (y - cdf) * r * (eta + pdf * (1 - 2 * cdf) / (cdf * sf))
            observed = -w * d
        g = X.T @ score_w
        h = (X * observed[:, None]).T @ X
        if precision is not None:
            g = g - precision @ b
            h = h + precision
        step = np.linalg.solve(h, g)
        b = b + step
        if np.max(np.abs(step)) < 1e-15 * (1 + np.max(np.abs(b))):
            break
    if information == "observed":
        return b, h - (0 if precision is None else precision)
    eta = X @ b + offset
    if link == "logit":
        mu = special.expit(eta)
        fisher = w * mu * (1 - mu)
    else:
        pdf, cdf, sf = stats.norm.pdf(eta), stats.norm.cdf(eta), stats.norm.sf(eta)
        fisher = w * pdf * pdf / (cdf * sf)
    return b, (X * fisher[:, None]).T @ X


def _family(link):
    return F.Binomial() if link == "logit" else F.Binomial(L.Probit())


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_sampled_irls_matches_plain_float64_newton(link):
    X, y = _data(30_000, 30, 1, link)
    ref, info = plain_newton(X, y, link)
    fit = irls(ArrayBlocks(X, y), _family(link), control=Control(direction="sampled"),
               intercept=0)
    assert fit.converged and not fit.aliased.any()
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)
    # the Gram returned is the float64 information at the returned estimates
    np.testing.assert_allclose(fit.gram, info, rtol=1e-8, atol=1e-10 * np.abs(info).max())
    exact = irls(ArrayBlocks(X, y), _family(link), control=Control(direction="exact"),
                 intercept=0)
    np.testing.assert_allclose(fit.coef, exact.coef, rtol=0, atol=1e-8)
    assert fit.deviance == pytest.approx(exact.deviance, rel=1e-12)


def test_sampled_irls_with_weights_offset_shift_and_prior():
    X, y = _data(20_000, 25, 2)
    X[:, 3] += 1e4  # large mean: the solver works on the shifted design
    rng = np.random.default_rng(3)
    w, off = rng.integers(1, 4, X.shape[0]).astype(float), rng.normal(0, 0.2, X.shape[0])
    prec = np.diag(np.r_[0.0, np.full(X.shape[1] - 1, 0.5)])
    Xc = X.copy()
    Xc[:, 3] -= 1e4
    ref, _ = plain_newton(Xc, y, w=w, offset=off, precision=prec)
    ref[0] -= 1e4 * ref[3]  # back to the coefficients of the uncentred column
    blocks = ArrayBlocks(X, y, w, off)
    pen = Penalty(prec, np.zeros(X.shape[1]))
    fit = irls(blocks, F.Binomial(), control=Control(direction="sampled"), penalty=pen,
               intercept=0)
    exact = irls(blocks, F.Binomial(), control=Control(direction="exact"), penalty=pen,
                 intercept=0)
    assert fit.transform is not None and fit.converged
    np.testing.assert_allclose(fit.coef, ref, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(fit.coef, exact.coef, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(fit.gram_shifted, exact.gram_shifted, rtol=1e-7)


@pytest.fixture
def sampled_passes(monkeypatch):
    """The ``passes`` record of every :func:`sampled_newton` run by IRLS during the test."""
    calls = []
    original = S.sampled_newton

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        calls.append(out.passes)
        return out

    monkeypatch.setattr("glmclass.solvers.irls_sampled.sampled_newton", spy)
    return calls


@pytest.fixture
def warm_any_size(monkeypatch):
    """Start from a sample fit whatever share of the rows the sample is (the tests' data are
    small; at 1e6 rows the sample is 2-4 % of them)."""
    monkeypatch.setattr(S, "IRLS_WARM_MAX_FRACTION", 1.0)
    monkeypatch.setattr(S, "NEWTON_WARM_MAX_FRACTION", 1.0)


def test_a_sample_missing_a_rare_column_falls_back_to_all_rows(sampled_passes, warm_any_size):
    X, y = _data(60_000, 24, 4)
    frac = S.sample_fraction(X.shape[0], X.shape[1] + 1)
    assert frac < 0.5
    start = next(s for s in range(0, X.shape[0], 2000) if not in_sample(s, frac))
    rare = np.zeros(X.shape[0])
    rare[start:start + 30] = 1.0  # in one block outside the sample: seen by full passes only
    X = np.column_stack([X, rare])
    y[start:start + 20] = 1.0
    y[start + 20:start + 30] = 0.0
    ref, _ = plain_newton(X, y)
    passes = sampled_passes
    # from a given start the Hessians are those of a share of the blocks
    fit = irls(ArrayBlocks(X, y, rows=2000), F.Binomial(), start=np.zeros(X.shape[1]),
               control=Control(direction="sampled"), intercept=0)
    assert fit.converged and passes[0]["full"] >= 2  # the singular sample sent it to all rows
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)
    # from the fit of every k-th row (a fair sample of the rare rows too) no fallback is needed
    fit = irls(ArrayBlocks(X, y, rows=2000), F.Binomial(), control=Control(direction="sampled"),
               intercept=0)
    assert fit.converged and passes[1]["full"] == 1
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)


def test_auto_samples_only_at_large_n(sampled_passes):
    calls = sampled_passes
    X, y = _data(int(SAMPLED_MIN_ROWS * CANONICAL_ROWS_FACTOR), 4, 5)  # few columns too
    gc.Logit(y[:SAMPLED_MIN_ROWS], X[:SAMPLED_MIN_ROWS]).fit()  # the logit samples later
    assert not calls
    gc.Probit(y[:SAMPLED_MIN_ROWS], X[:SAMPLED_MIN_ROWS]).fit()  # the probit already samples
    assert len(calls) == 1
    calls.clear()
    res = gc.Logit(y, X).fit()
    assert len(calls) == 1 and calls[0]["sample"] > 0 and calls[0]["full"] >= 1
    ref, info = plain_newton(X, y)
    np.testing.assert_allclose(res.params.to_numpy(), ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy(), np.sqrt(np.diag(np.linalg.inv(info))),
                               rtol=1e-8)
    gc.Logit(y[:5000], X[:5000]).fit()  # small: R's IRLS iterates, no sampling
    assert len(calls) == 1


def _multinomial(n, p, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p))])
    B = rng.uniform(-1, 1, (p + 1, 2)) * 2 / np.sqrt(p)
    pr = np.exp(np.column_stack([np.zeros(n), X @ B]))
    pr /= pr.sum(1, keepdims=True)
    y = (rng.uniform(size=n)[:, None] > np.cumsum(pr, 1)).sum(1)
    return X, y


def test_sampled_multinomial_newton_matches_exact_newton():
    X, y = _multinomial(30_000, 15, 6)
    k1p = 2 * X.shape[1]
    blocks = ArrayBlocks(X, y, rows=block_rows(k1p))
    obj = NW.multinomial_deviance(blocks, 3)
    exact = NW.newton(obj, np.zeros(k1p), Control(method="newton", direction="exact"))
    fast = NW.newton(obj, np.zeros(k1p), Control(method="newton", direction="sampled"))
    assert fast.converged and exact.converged
    np.testing.assert_allclose(fast.coef, exact.coef, rtol=0, atol=1e-8)
    # the Hessian and gradient returned are the full ones at the returned estimates
    f, g, h = obj(fast.coef, True)
    np.testing.assert_array_equal(fast.hessian, h)
    np.testing.assert_array_equal(fast.gradient, g)
    # converged where the exact Newton decrement is below the loop's threshold (tol 1e-10)
    assert 0.5 * g @ np.linalg.solve(h, g) <= (1e3 * 1e-10) ** 2


def test_sampled_hessian_is_the_scaled_hessian_of_the_sampled_blocks():
    X, y = _multinomial(5000, 3, 7)
    blocks = ArrayBlocks(X, y, rows=500)
    obj = NW.multinomial_deviance(blocks, 3)
    coef = np.full(8, 0.1)
    f, g, h = obj(coef, True)
    f2, g2, hs = obj(coef, 0.3)
    assert f2 == f
    np.testing.assert_array_equal(g2, g)
    chosen = [s for s in range(0, 5000, 500) if in_sample(s, 0.3)]
    assert 0 in chosen and len(chosen) < 10
    parts = [NW.multinomial_deviance(ArrayBlocks(X[s:s + 500], y[s:s + 500]), 3)(coef, True)[2]
             for s in chosen]
    np.testing.assert_allclose(hs, sum(parts) * 5000 / (500 * len(chosen)), rtol=1e-12)
    assert obj(coef, "score")[2] is None


def _spy(monkeypatch, name="sampled_start"):
    """Records whether ``<name>`` returned something: for ``sampled_start`` None means
    the full start pass ran, for ``_warm_start`` that the fit started from R's starting means
    (each patched where it is called: ``irls`` calls the first, ``irls_sampled`` the second)."""
    irls_mod = IR if name == "sampled_start" else IS
    seen = []
    original = getattr(irls_mod, name)

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(irls_mod, name, spy)
    return seen


def test_the_start_gram_comes_from_the_sample_only_when_the_end_confirms_the_rank(monkeypatch):
    seen = _spy(monkeypatch)
    X, y = _data(40_000, 25, 8)
    fit = irls(ArrayBlocks(X, y), F.Binomial(), control=Control(direction="sampled"),
               intercept=0)
    assert seen == [True]
    ref, info = plain_newton(X, y)
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(fit.gram, info, rtol=1e-9, atol=1e-10 * np.abs(info).max())


@pytest.mark.parametrize("case", ["collinear", "extreme weights"])
def test_sampled_start_defers_to_the_full_start_pass(monkeypatch, case):
    seen = _spy(monkeypatch)
    X, y = _data(40_000, 25, 9)
    if case == "collinear":  # R keeps the column, but the Gram cannot tell: QR on all rows
        X[:, 5] = X[:, 4] + 1e-6 * np.random.default_rng(1).normal(size=X.shape[0])
    else:  # fitted probabilities near 0 and 1: final weights far below the start's
        y = (X[:, 1] + 0.05 * np.random.default_rng(2).logistic(size=X.shape[0]) > 0) * 1.0
    blocks = ArrayBlocks(X, y)
    fit = irls(blocks, F.Binomial(), control=Control(direction="sampled"), intercept=0)
    exact = irls(blocks, F.Binomial(), control=Control(direction="exact"), intercept=0)
    assert seen == [False]
    np.testing.assert_array_equal(fit.aliased, exact.aliased)
    keep = ~exact.aliased
    scale = np.sqrt(np.diag(np.linalg.inv(exact.gram[np.ix_(keep, keep)])))
    np.testing.assert_allclose(fit.coef[keep] / scale, exact.coef[keep] / scale, atol=1e-6)


@pytest.mark.parametrize("order", ["as drawn", "sorted by y", "sorted by a covariate"])
@pytest.mark.parametrize("prior", [False, True])
def test_the_fit_starts_from_a_systematic_sample_fit(monkeypatch, sampled_passes, warm_any_size,
                                                     order, prior):
    seen = _spy(monkeypatch, "_warm_start")
    X, y = _data(60_000, 8, 11)
    at = {"as drawn": np.arange(y.size), "sorted by y": np.argsort(y, kind="stable"),
          "sorted by a covariate": np.argsort(X[:, 2])}[order]
    X, y = X[at], y[at]
    prec = np.diag(np.r_[0.0, np.full(X.shape[1] - 1, 2.0)]) if prior else None
    ref, info = plain_newton(X, y, precision=prec)
    pen = None if prec is None else Penalty(prec, np.zeros(X.shape[1]))
    fit = irls(ArrayBlocks(X, y), F.Binomial(), control=Control(direction="sampled"),
               penalty=pen, intercept=0)
    assert seen == [True] and fit.converged
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)
    if prec is None:
        np.testing.assert_allclose(fit.gram, info, rtol=1e-9, atol=1e-10 * np.abs(info).max())
    # from a start a few standard errors away: one single-precision Hessian, then its steps,
    # and the float64 one at the end
    passes = sampled_passes[0]
    assert passes["hessian"] == 1 and passes["full"] == 1 and sum(passes.values()) <= 5


def test_a_separated_sample_still_gives_the_full_estimate(warm_any_size):
    X, y = _data(60_000, 5, 12)
    step = X.shape[0] // S.SAMPLE_MIN  # the sample: rows step // 2, step // 2 + step, ...
    rare = np.zeros(X.shape[0])
    rare[3000:3600] = 1.0
    X = np.column_stack([X, rare])
    in_sub = (np.arange(X.shape[0]) % step) == step // 2
    y[(rare == 1) & in_sub] = 1.0  # in the sample the rare rows are all successes
    y[(rare == 1) & ~in_sub] = np.arange(int(((rare == 1) & ~in_sub).sum())) % 2
    ref, _ = plain_newton(X, y)
    fit = irls(ArrayBlocks(X, y), F.Binomial(), control=Control(direction="sampled"),
               intercept=0)
    assert fit.converged
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)


def test_a_fit_converging_at_a_direction_only_hessian_ends_with_a_full_pass():
    """A quadratic objective whose first sampled Hessian is 10 % off and whose second is exact:
    the third point is the optimum, reached at the single-precision ("hessian") pass."""
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    opt = np.array([1.0, -2.0])
    modes = []
    off = iter([1.1, 1.0])

    def evaluate(c, mode):
        modes.append(mode)
        d = c - opt
        h = a * (next(off, 1.0) if mode == "sample" else 1.0)
        return S.State(float(d @ a @ d), -2.0 * a @ d, 2.0 * h, mode)

    def solve(h, st, c, strict):
        return c + np.linalg.solve(h, st.rhs)

    def decrement(h, delta):
        return 0.5 * float(delta @ h @ delta)

    start = np.array([30.0, 40.0])
    fit = S.sampled_newton(evaluate, solve, decrement, start, evaluate(start, "sample"), False,
                           50, 1e-10, 25)
    assert fit.converged and modes[-2:] == ["hessian", "full"]
    assert fit.state.extra == "full"  # the caller gets the float64 pass's state
    np.testing.assert_allclose(fit.coef, opt, atol=1e-12)


@pytest.mark.parametrize("order", ["as drawn", "sorted by level"])
def test_sampled_multinomial_newton_starts_from_a_sample_fit(monkeypatch, warm_any_size, order):
    X, y = _multinomial(40_000, 6, 13)
    if order != "as drawn":
        at = np.argsort(y, kind="stable")
        X, y = X[at], y[at]
    k1p = 2 * X.shape[1]
    obj = NW.multinomial_deviance(ArrayBlocks(X, y, rows=block_rows(k1p)), 3)
    starts, runs = [], []
    original_newton, original_loop = NW.newton, NW.sampled_newton

    def newton_spy(evaluate, start, control=Control(method="newton")):
        starts.append(getattr(evaluate, "sampled_rows", None))
        return original_newton(evaluate, start, control)

    def loop_spy(*args, **kwargs):
        out = original_loop(*args, **kwargs)
        runs.append(out.passes)
        return out

    monkeypatch.setattr(NW, "newton", newton_spy)
    monkeypatch.setattr(NW, "sampled_newton", loop_spy)
    fast = NW.newton(obj, np.zeros(k1p), Control(method="newton", direction="sampled"))
    exact = NW.newton(obj, np.zeros(k1p), Control(method="newton", direction="exact"))
    assert starts[:2] == [40_000, 40_000 // 2]  # the full objective, then every 2nd row's
    np.testing.assert_allclose(fast.coef, exact.coef, rtol=0, atol=1e-8)
    assert runs[0]["hessian"] == 1 and runs[0]["full"] == 1 and sum(runs[0].values()) <= 5
    f, g, h = obj(fast.coef, True)
    np.testing.assert_array_equal(fast.hessian, h)


def test_a_single_precision_multinomial_hessian_differs_only_in_rounding():
    X, y = _multinomial(3000, 4, 14)
    obj = NW.multinomial_deviance(ArrayBlocks(X, y, rows=400), 3)
    coef = np.linspace(-0.2, 0.3, 10)
    f, g, h = obj(coef, True)
    f1, g1, h1 = obj(coef, "single")
    assert f1 == f and h1.dtype == np.float64 and not np.array_equal(h1, h)
    np.testing.assert_array_equal(g1, g)
    np.testing.assert_allclose(h1, h, rtol=1e-5, atol=1e-6 * np.abs(h).max())


@pytest.mark.parametrize("link", [L.Logit(), L.Probit(), L.CLogLog()])
@pytest.mark.parametrize("weight", [1.0, 2.5])
def teststart_weights_of_a_binary_response_from_two_rows(link, weight):
    from glmclass.rows.blocks import Block
    from glmclass.solvers.irls_steps import start_weights

    fam = F.Binomial(link)
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    w = np.broadcast_to(np.float64(weight), (5,))
    b = Block(np.zeros((5, 1)), y, w, np.zeros(5), 0)

    def start_eta(blk):
        return fam.start_eta(blk.y, blk.weights)

    known = {}
    got = start_weights(fam, b, start_eta, known)
    assert list(known) == [weight]  # found once, on two rows
    np.testing.assert_allclose(got, fam.irls_terms(y, start_eta(b), w)[0], rtol=1e-15)
    # proportions or per-row weights: every row's own terms
    b2 = Block(np.zeros((5, 1)), y * 0.5, w, np.zeros(5), 0)
    np.testing.assert_array_equal(start_weights(fam, b2, start_eta),
                                  fam.irls_terms(b2.y, start_eta(b2), w)[0])


def test_no_sample_fit_when_the_sample_is_a_large_share_of_the_rows(monkeypatch):
    seen = _spy(monkeypatch, "_warm_start")
    starts = []
    original = IS.sampled_irls

    def spy(*args, **kwargs):
        starts.append(args[7] is not None)  # the coefficients it starts from
        return original(*args, **kwargs)

    monkeypatch.setattr(IS, "sampled_irls", spy)
    X, y = _data(60_000, 8, 15)  # the sample would be a third of the rows
    ref, _ = plain_newton(X, y)
    fit = irls(ArrayBlocks(X, y), F.Binomial(), control=Control(direction="sampled"),
               intercept=0)
    assert seen == [False] and starts == [False]  # from R's starting means, sampled blocks
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)


@pytest.mark.parametrize("warm", [False, True])
def test_the_final_pass_gives_the_observed_information_when_asked(monkeypatch, sampled_passes,
                                                                   warm):
    """``Control(information="observed")``: a probit fit's full (and early single-precision)
    passes use the observed information, so the Gram returned is the float64 observed
    information at the estimates, for standard errors without a further pass."""
    if warm:
        monkeypatch.setattr(S, "IRLS_WARM_MAX_FRACTION", 1.0)
    X, y = _data(40_000, 12, 21, "probit")
    ref, observed = plain_newton(X, y, "probit", information="observed")
    fam, blocks = F.Binomial(L.Probit()), ArrayBlocks(X, y)
    fit = irls(blocks, fam, control=Control(direction="sampled", information="observed"),
               intercept=0)
    assert fit.converged and fit.information == "observed"
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(fit.gram, observed, rtol=1e-9, atol=1e-10 * np.abs(observed).max())
    fisher = irls(blocks, fam, control=Control(direction="sampled"), intercept=0)
    assert fisher.information == "expected"
    np.testing.assert_allclose(fisher.coef, ref, rtol=0, atol=1e-8)
    assert not np.allclose(fisher.gram, fit.gram, rtol=1e-6)  # not the same matrix
    assert all(p["full"] == 1 for p in sampled_passes)


def test_an_indefinite_observed_information_falls_back_to_fisher_s():
    class Indefinite(F.Binomial):
        """A probit whose observed weights are negated: never positive definite."""

        def irls_terms(self, y, eta, weights, observed=False):
            w, u, dev = super().irls_terms(y, eta, weights)
            return (-w if observed else w), u, dev

    X, y = _data(40_000, 6, 22, "probit")
    ref, info = plain_newton(X, y, "probit")
    fit = irls(ArrayBlocks(X, y), Indefinite(L.Probit()),
               control=Control(direction="sampled", information="observed"), intercept=0)
    assert fit.converged and fit.information == "expected"
    np.testing.assert_allclose(fit.coef, ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(fit.gram, info, rtol=1e-8, atol=1e-10 * np.abs(info).max())


def test_a_canonical_link_s_fit_holds_the_expected_information():
    X, y = _data(20_000, 4, 23)
    fit = irls(ArrayBlocks(X, y), F.Binomial(),
               control=Control(direction="sampled", information="observed"), intercept=0)
    assert fit.information == "expected"  # the same matrix: results treat both alike


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_exact_irls_is_the_front_door_without_the_large_n_path(link):
    """``exact_irls`` (what the warm start fits its sample with) is ``irls`` with
    ``direction="exact"`` to the bit, whatever direction its control asks, also on a shifted
    design (a column of mean 1e4: the front door's retry in a shifted frame) and for a
    non-canonical link (the polishing Newton steps)."""
    from glmclass.solvers.irls_exact import exact_irls

    X, y = _data(40_000, 6, 31, link)
    X[:, 2] += 1e4
    fam = F.Binomial(L.Logit() if link == "logit" else L.Probit())
    ref = irls(ArrayBlocks(X, y), fam, control=Control(direction="exact"), intercept=0)
    assert ref.transform is not None  # the shifted frame was taken
    for direction in ["exact", "sampled", "auto"]:
        got = exact_irls(ArrayBlocks(X, y), fam, None, Control(direction=direction), None, 0)
        np.testing.assert_array_equal(got.coef, ref.coef)
        np.testing.assert_array_equal(got.gram, ref.gram)
        assert (got.deviance, got.n_iter, got.history) == (ref.deviance, ref.n_iter,
                                                           ref.history)
