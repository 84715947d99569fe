"""The IRLS solver: R's glm.fit semantics on plain arrays."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest
import statsmodels.api as sm

import glmclass.solvers.irls as irls_mod
import glmclass.solvers.irls_exact as irls_exact
import glmclass.solvers.irls_steps as irls_steps
from glmclass import families as F
from glmclass import links as L
from glmclass.rows.blocks import ArrayBlocks, OneBlock, RowBlocks, add
from glmclass.solvers.control import Control
from glmclass.solvers.fit import Fit
from glmclass.solvers.irls import irls

RNG = np.random.default_rng(11)
N = 400
X = np.column_stack([np.ones(N), RNG.normal(size=(N, 3))])
BETA = np.array([-0.3, 0.8, -0.5, 0.25])
Y = (RNG.uniform(size=N) < 1 / (1 + np.exp(-X @ BETA))).astype(float)
ONES, ZEROS = np.ones(N), np.zeros(N)


def fit(family=F.Binomial(), y=Y, X=X, weights=ONES, offset=ZEROS, start=None, rows=None,
        **control):
    return irls(ArrayBlocks(X, y, weights, offset, rows), family, start, Control(**control))


def eta_of(res, X=X, offset=ZEROS):
    """The linear predictor at a fit, as callers compute it (the solver keeps no eta)."""
    return ArrayBlocks(X, offset=offset).linear_predictor(np.where(res.aliased, 0, res.coef))


def rule(history):
    """R's relative-deviance criterion between consecutive iterations."""
    h = np.asarray(history)
    return np.abs(np.diff(h)) / (np.abs(h[1:]) + 0.1)


def test_returns_frozen_record_with_consistent_fields():
    res = fit()
    assert isinstance(res, Fit)
    assert res.converged and res.message == ""
    eta = eta_of(res)
    np.testing.assert_allclose(eta, X @ res.coef, rtol=1e-13)
    assert not hasattr(res, "eta")  # nothing of length N in the record
    dev = np.sum(F.Binomial().unit_deviance(Y, eta))
    assert res.deviance == pytest.approx(dev, rel=1e-13)
    mu = 1 / (1 + np.exp(-eta))
    np.testing.assert_allclose(res.gram, (X * (mu * (1 - mu))[:, None]).T @ X, rtol=1e-8)
    assert res.history[-1] == pytest.approx(res.deviance, rel=1e-14)
    assert len(res.history) == res.n_iter
    with pytest.raises(AttributeError):
        res.coef = None


def test_score_vanishes_at_the_estimate():
    res = fit()
    mu = 1 / (1 + np.exp(-eta_of(res)))
    assert np.max(np.abs(X.T @ (Y - mu))) < 1e-8


def test_stops_by_r_rule():
    """Converged at the first iteration whose relative deviance change is below tol."""
    tol = 1e-8
    res = fit(family=F.Binomial(link=L.CLogLog()), tol=tol)
    crit = rule(res.history)
    assert crit[-1] < tol
    assert np.all(crit[:-1] >= tol)
    assert res.converged


@pytest.mark.parametrize("tol", [1e-4, 1e-8, 1e-12])
def test_tighter_tol_never_takes_fewer_iterations(tol):
    loose = fit(family=F.Binomial(link=L.Cauchit()), tol=tol)
    tight = fit(family=F.Binomial(link=L.Cauchit()), tol=tol * 1e-2)
    assert tight.n_iter >= loose.n_iter
    assert tight.deviance <= loose.deviance + 1e-12


def test_maxiter_stops_unconverged_with_message():
    res = fit(family=F.Binomial(link=L.Cauchit()), maxiter=2)
    assert not res.converged
    assert res.n_iter == 2
    assert "no convergence in 2 iterations" in res.message
    assert np.all(np.isfinite(res.coef))


def test_start_params_at_the_estimate_converge_at_once():
    ref = fit()
    again = fit(start=ref.coef)
    assert again.converged and again.n_iter <= 2
    np.testing.assert_allclose(again.coef, ref.coef, rtol=1e-10)


def test_start_params_far_away_reach_the_same_estimate():
    ref = fit(family=F.Binomial(link=L.Probit()))
    far = fit(family=F.Binomial(link=L.Probit()), start=np.array([3.0, -4.0, 4.0, 2.0]))
    np.testing.assert_allclose(far.coef, ref.coef, rtol=1e-7)


def test_step_halving_is_exercised_and_keeps_deviance_decreasing(monkeypatch):
    """Log-binomial: the full step leaves mu < 1, and step-halving pulls it back (as R)."""
    calls = []
    real = irls_exact.fused_pass

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(irls_exact, "fused_pass", counting)
    x = np.linspace(0, 3, 60)
    Xl = np.column_stack([np.ones(60), x])
    y = (RNG.uniform(size=60) < np.exp(-2.5 + 0.7 * x)).astype(float)
    fam = F.Binomial(link=L.Log())
    res = irls(ArrayBlocks(Xl, y), fam, np.array([-3.0, 0.05]), Control())
    assert res.converged
    assert fam.valid(eta_of(res, Xl, np.zeros(60)))
    assert len(calls) > res.n_iter + 1  # some passes were half steps
    h = np.asarray(res.history)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[1:]))
    with pytest.warns(sm.tools.sm_exceptions.DomainWarning):
        sm_model = sm.GLM(y, Xl, family=sm.families.Binomial(sm.families.links.Log()))
    sm_res = sm_model.fit(start_params=res.coef, tol=1e-12)
    np.testing.assert_allclose(res.coef, sm_res.params, rtol=1e-6)


class SpyPoisson(F.Poisson):
    """Records every domain check the solver makes."""

    seen: list = []

    def valid(self, eta):
        ok = super().valid(eta)
        SpyPoisson.seen.append(ok)
        return ok


def test_step_halving_after_a_step_out_of_the_domain():
    """Identity-link Poisson: a full step to mu < 0 is halved back into the domain, not taken."""
    x = np.linspace(0, 1, 40)
    Xp = np.column_stack([np.ones(40), x])
    y = np.random.default_rng(0).poisson(0.15 + 6 * x).astype(float)
    SpyPoisson.seen = []
    fam = SpyPoisson(link=L.Identity())
    res = irls(ArrayBlocks(Xp, y), fam, np.array([0.1, 6.0]), Control())
    assert False in SpyPoisson.seen  # a step left the domain ...
    assert res.converged and np.all(eta_of(res, Xp, np.zeros(40)) > 0)  # ... the accepted never
    h = np.asarray(res.history)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[1:]))


def test_newton_agrees_with_irls():
    for link in [lk for lk in L.registered(within=(0, 1)) if lk.canonical is None]:
        fam = F.Binomial(link=link)
        a = fit(family=fam, tol=1e-14)
        b = fit(family=fam, hessian="observed", tol=1e-14)
        np.testing.assert_allclose(b.coef, a.coef, rtol=1e-8)
        assert b.n_iter <= a.n_iter


def test_offset_and_weights_against_statsmodels():
    counts = RNG.poisson(np.exp(0.2 + 0.3 * X[:, 1] - 0.2 * X[:, 2]) * 3).astype(float)
    offset = np.log(np.full(N, 3.0)) + 0.1 * X[:, 3]
    w = RNG.uniform(0.5, 2.0, N)
    res = fit(family=F.Poisson(), y=counts, offset=offset, weights=w, tol=1e-14)
    ref = sm.GLM(counts, X, family=sm.families.Poisson(), offset=offset, var_weights=w).fit(
        tol=1e-14)
    np.testing.assert_allclose(res.coef, ref.params, rtol=1e-9)
    assert res.deviance == pytest.approx(ref.deviance, rel=1e-10)


def test_rank_deficient_design_aliases_later_column():
    Xd = np.column_stack([X, X[:, 1] + X[:, 2]])
    res = fit(X=Xd)
    full = fit()
    np.testing.assert_array_equal(res.aliased, [False] * 4 + [True])
    assert np.isnan(res.coef[4])
    np.testing.assert_allclose(res.coef[:4], full.coef, rtol=1e-9)
    assert np.all(res.gram[4] == 0) and np.all(res.gram[:, 4] == 0)


@pytest.mark.parametrize("rows", [3, 64, None])
def test_block_size_does_not_change_the_fit(rows):
    ref = fit(tol=1e-14)
    res = fit(tol=1e-14, rows=rows)
    np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-11)


def test_inputs_are_not_modified():
    x, y, w, o = X.copy(), Y.copy(), ONES.copy(), ZEROS.copy()
    irls(ArrayBlocks(x, y, w, o), F.Binomial(), None, Control())
    for a, b in ((x, X), (y, Y), (w, ONES), (o, ZEROS)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("link", [L.Probit(), L.CLogLog()])
def test_every_column_aliased_gives_nan_not_a_crash(link):
    """A non-canonical fit with nothing to estimate skips the Newton polish."""
    res = irls(ArrayBlocks(np.zeros((2, 1)), np.array([1.0, 0.0])), F.Binomial(link))
    assert res.aliased.all() and np.isnan(res.coef).all() and np.isfinite(res.deviance)


def test_domain_check_per_block_agrees_with_family_valid():
    """The cached check gives family.valid's answer for every block, in any order."""
    fam = F.Binomial(link=L.Log())  # eta must be < 0
    check = irls_steps.domain_check(fam)
    blocks = [np.array([-3.0, -1.0]), np.array([-2.0, -1.5]), np.array([-0.5, 0.2]),
              np.array([-1.2, np.nan]), np.array([-np.inf, -1.0]), np.array([-4.0, -0.1]),
              np.array([-3.5, -0.2]), np.array([1e-3])]
    for b in blocks:
        assert check(b) == fam.valid(b), b


# --- the small-data path gives the bits of the general one ------------------------------------
class Plain(RowBlocks):
    """An in-memory source read through the general block path: never gathered into one block,
    its terms from ``family.irls_terms`` per block and pass."""

    def __init__(self, src: ArrayBlocks) -> None:
        self.src = src

    n_rows = property(lambda self: self.src.n_rows)
    n_cols = property(lambda self: self.src.n_cols)

    def reduce(self, fn, zero, combine=add):
        return self.src.reduce(fn, zero, combine)

    def map(self, fn):
        return self.src.map(fn)

    def take_columns(self, keep):
        return Plain(self.src.take_columns(keep))

    def take_rows(self, mask):
        return Plain(self.src.take_rows(mask))

    def intercept_only(self):
        return Plain(self.src.intercept_only())


def _same_fit(a: Fit, b: Fit) -> None:
    for name in ("coef", "gram", "aliased", "transform", "gram_shifted"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None and y is None) or x.tobytes() == y.tobytes(), name
    for x, y in ((a.deviance, b.deviance), (a.history, b.history)):  # NaN too
        assert np.asarray(x, dtype=float).tobytes() == np.asarray(y, dtype=float).tobytes()
    assert (a.n_iter, a.converged, a.message) == (b.n_iter, b.converged, b.message)


SMALL_CASES = {
    "plain": {},
    "weights": {"weights": RNG.integers(1, 4, N).astype(float)},
    "offset": {"offset": 0.2 * RNG.normal(size=N)},
    "large means": {"X": X + np.array([0.0, 1e6, 0.0, 0.0]), "intercept": 0},
    "aliased": {"X": np.column_stack([X, X[:, 1] - X[:, 2]])},
    "near-collinear (QR mode)": {"X": np.column_stack([X, X[:, 1] + 1e-6 * X[:, 3]])},
    "observed": {"control": Control(hessian="observed")},
    "prior": {"penalty": irls_mod.Penalty(0.3 * np.eye(4), np.full(4, 0.1))},
    "start": {"start": np.array([0.1, 0.5, -0.2, 0.0])},
    "separated": {"y": (X[:, 1] > 0).astype(float)},
    "rows taken": {"take": RNG.random(N) < 0.6},
}


@pytest.mark.parametrize("fam", [F.Binomial(), F.Binomial(link=L.Probit()),
                                 F.Binomial(link=L.CLogLog()), F.Binomial(link=L.Log()),
                                 F.Poisson(), F.Gaussian()], ids=lambda f: f.link.name)
@pytest.mark.parametrize("case", list(SMALL_CASES))
def test_small_data_path_equals_the_general_path_to_the_bit(fam, case):
    kw = dict(SMALL_CASES[case])
    y = kw.get("y", Y)
    if fam.name == "Poisson":
        y = np.round(3 * y + X[:, 1] ** 2)
    elif fam.name == "Gaussian":
        y = X @ BETA + y
    elif isinstance(fam.link, L.Log):
        y = (RNG.uniform(size=N) < 0.2 + 0.1 * (X[:, 1] > 0)).astype(float)
    src = ArrayBlocks(kw.get("X", X), y, kw.get("weights"), kw.get("offset"))
    if "take" in kw:
        src = src.take_rows(kw["take"])
    start = kw.get("start")
    if isinstance(fam.link, L.Log) and fam.name == "Binomial" and start is None:
        start = np.array([-1.5, 0.0, 0.0, 0.0, 0.0][: src.n_cols])
    args = (fam, start, kw.get("control", Control()), kw.get("penalty"), kw.get("intercept"))
    assert isinstance(src.gathered(), OneBlock)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # separated: estimates run off
        _same_fit(irls(src, *args), irls(Plain(src), *args))


def test_the_domain_check_asks_the_family_about_once_per_fit():
    calls = []

    @dataclass(frozen=True, repr=False)
    class Counting(F.Binomial):
        def valid(self, eta):
            calls.append(eta.shape)
            return super().valid(eta)

    res = fit(family=Counting())
    assert res.n_iter >= 4 and len(calls) <= 2
    _same_fit(res, fit())


def test_a_known_valid_interval_never_admits_an_invalid_eta():
    check = irls_steps.domain_check(F.Binomial(link=L.Log()))  # mu = exp(eta) < 1: eta < 0
    assert check(np.array([-3.0, -1.0]))  # its widened interval reaches eta > 0: not kept
    assert check(np.array([-3.5, -0.5]))
    assert not check(np.array([-2.0, 0.5]))
    assert not check(np.array([-2.0, np.nan]))
    assert check(np.array([-2.9, -1.1]))
    probit = irls_steps.domain_check(F.Binomial(link=L.Probit()))
    assert probit(np.array([-3.0, 2.0])) and not probit(np.array([0.0, np.inf]))


def test_the_logit_domain_is_decided_by_the_deviance_as_family_valid_decides_it():
    """For exactly Binomial(Logit()) the domain is every finite eta, and the closed-form terms
    give a non-finite deviance at any infinite or NaN eta: the checked terms leave out the
    min and max per pass and give, on every block, the deviance family.valid's check gives
    (inf outside the domain; the overflowing sum of a huge but finite eta is inf either way)."""
    fam = F.Binomial(link=L.Logit())
    assert irls_steps.domain_check(fam) is None
    assert irls_steps.domain_check(F.Binomial(link=L.Probit())) is not None
    big = np.finfo(float).max
    blocks = [np.array([-3.0, 1.0]), np.array([-big, big]), np.array([800.0, -800.0]),
              np.array([1e300, 2.0]), np.array([0.0, np.nan]), np.array([np.inf, 0.0]),
              np.array([-np.inf, 1.0]), np.array([5e-324, -5e-324]), np.array([np.nan, np.inf])]
    for y in ([0.0, 1.0], [1.0, 0.0], [0.3, 1.0]):
        for w in (None, [2.0, 0.5]):
            for eta in blocks:
                src = ArrayBlocks(np.ones((2, 1)), np.array(y),
                                  None if w is None else np.array(w))
                for rows in (src, src.gathered()):  # closed-form terms, one block or many
                    terms = irls_exact.block_terms(rows, fam)
                    block = next(iter(rows.stream()))
                    with np.errstate(all="ignore"):
                        dev = terms(block, eta, False, check=True)[2]
                        raw = terms(block, eta, False, check=False)[2]
                    assert dev == (raw if fam.valid(eta) else np.inf), (y, w, eta, dev, raw)


#: The IRLS stack from the bottom up: each module imports only modules before it.
IRLS_STACK = ["irls_records", "irls_qr", "irls_steps", "irls_exact", "irls_sampled", "irls"]


def test_the_irls_modules_import_one_way():
    """records -> qr -> steps -> the exact loop -> the large-N path -> the front door: no IRLS
    module imports one above it (at module level or inside a function), so there is no
    circle."""
    import ast
    from pathlib import Path

    here = Path(irls_mod.__file__).parent
    for level, name in enumerate(IRLS_STACK):
        tree = ast.parse((here / f"{name}.py").read_text())
        imported = {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}
        above = imported & set(IRLS_STACK[level:])
        assert not above, f"{name} imports {sorted(above)}, which sit at or above it"
