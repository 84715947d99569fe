"""Iteratively reweighted least squares with R's ``glm.fit`` semantics.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.3 (IRLS).
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, §2.5.
R Core Team, ``glm.fit`` (stats package): step-halving and the relative-deviance rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..blocks import Block, OneBlock, RowBlocks
from ..errors import DataError
from ..families import Family
from ..numerics.linalg import (
    GRAM_CLEAR,
    NotPositiveDefinite,
    clearly_full_rank,
    min_pivot,
    spd_inverse,
    spd_solve,
)
from .gram import fused_pass, score_pass, shift_from_gram, shift_transform
from .irls_qr import QR_MODE_CLEAR, QRSystem, qr_pass
from .irls_steps import (
    _domain_check,
    _is_pd,
    _kept,
    _penalised,
    _polish,
    _start_weights,
    _step,
)
from .rank import aliased_design_columns, deciding_factor, gram_decides
from .sampled import State, sample_fraction, sampled_newton


@dataclass(frozen=True)
class Control:
    """Settings of the IRLS loop.

    Attributes
    ----------
    maxiter : int
        Largest number of iterations.
    tol : float
        Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol`` (R's rule).
    maxhalf : int
        Largest number of step halvings in one iteration.
    hessian : {"expected", "observed"}
        Fisher scoring (IRLS) or Newton's method with the exact Hessian.
    progress : callable, optional
        ``progress(iteration, objective, step, halvings)`` after each accepted iteration
        (:class:`glmclass.progress.IterationLog` for ``fit(disp=True)``); ``step`` is the
        largest change of a coefficient.
    direction : {"auto", "exact", "sampled"}
        Where the steps' Gram matrices come from after the first step. ``"exact"``: every
        iteration makes a full float64 X'WX (R's IRLS). ``"sampled"``: Newton steps from
        the exact score with the Gram of a row sample (or of an earlier point) and a full
        float64 Gram only to confirm convergence (:mod:`glmclass.solvers.sampled`): the same
        estimates (to ~``tol`` standard errors) for a fraction of the cost at large N;
        without a ``start`` and from 1e6 rows or so it starts from the fit of a systematic
        sample of the rows (:func:`_warm_start`). ``"auto"`` samples from
        :data:`SAMPLED_MIN_ROWS` rows on, on sources that allow it
        (``RowBlocks.sample_hessians``: not on Dask).

    The size of a block of rows is the row source's business, not the solver's.
    """

    maxiter: int = 50
    tol: float = 1e-10
    maxhalf: int = 25
    hessian: str = "expected"
    progress: Callable[[int, float, float, int], None] | None = None
    direction: str = "auto"


#: Fewest rows for which ``Control(direction="auto")`` samples the Gram: below them a full pass
#: costs little more than a gradient pass, and R's IRLS iterates are kept.
SAMPLED_MIN_ROWS = 100_000
#: For a canonical link (logit) sampling starts at this many times :data:`SAMPLED_MIN_ROWS`:
#: exact IRLS is then plain Newton (no observed-Hessian polishing, which the sampled steps
#: replace for the other links); with the sample fit's start the two were as fast at 1e5-2e5
#: rows and sampling 5-40 % faster from 3e5 for p = 2 to 200 (benchmarks/README.md, issue 14
#: round three).
CANONICAL_ROWS_FACTOR = 1.5
#: Largest share of the rows in the sample whose fit starts a large fit (:func:`_warm_start`):
#: from R's starting means the sampled steps already need few passes, so the sample fit pays
#: only when it is small (1e6 rows, 2 % samples: 5-12 % faster at p = 10, 50; 4 % at p = 200
#: and 8-40 % at 1e5-5e5 rows: 4-90 % slower; benchmarks/README.md, issue 14 round three).
WARM_MAX_FRACTION = 0.025
#: How far above :data:`~glmclass.numerics.linalg.GRAM_CLEAR` the bound on the start Gram's
#: pivots must be for a fit without a full start pass (it absorbs that Gram's rounding).
RANK_MARGIN = 100.0


@dataclass(frozen=True)
class Penalty:
    """A Gaussian prior N(mean, precision^-1) on the coefficients: the objective becomes
    ``deviance + (b - mean)' precision (b - mean)`` (minus twice the log posterior)."""

    precision: np.ndarray
    mean: np.ndarray

    def value(self, coef: np.ndarray) -> float:
        d = coef - self.mean
        return float(d @ self.precision @ d)


@dataclass(frozen=True)
class IRLSFit:
    """Result record of :func:`irls`.

    Attributes
    ----------
    coef : ndarray of shape (p,)
        Estimates; NaN for aliased columns. The solver keeps nothing of length N: the linear
        predictor is ``blocks.linear_predictor(np.where(aliased, 0, coef))``.
    deviance : float
        Deviance at ``coef`` (without any penalty).
    gram : ndarray of shape (p, p)
        X'WX (Fisher weights) at ``coef``; rows/columns of aliased columns are zero.
    aliased : ndarray of bool, shape (p,)
    n_iter : int
    converged : bool
    history : tuple of float
        Objective after each iteration.
    message : str
        Why the loop stopped, when it did not converge.
    transform : ndarray of shape (p, p) or None
        ``T`` of the shifted design the solver worked on (``gamma = T beta``), None unshifted.
    gram_shifted : ndarray of shape (p, p) or None
        The Gram of the shifted design, ``gram = T' gram_shifted T``: it keeps the digits that
        ``gram`` loses to large column means.
    """

    coef: np.ndarray
    deviance: float
    gram: np.ndarray
    aliased: np.ndarray
    n_iter: int
    converged: bool
    history: tuple
    message: str = ""
    transform: np.ndarray | None = None
    gram_shifted: np.ndarray | None = None

    def gram_inverse(self, keep: np.ndarray) -> np.ndarray:
        """``inv(gram[keep, keep])``, through the shifted Gram when there is one (accurate
        where ``gram`` is nearly singular only because of large column means).

        Raises
        ------
        NotPositiveDefinite
        """
        sel = None if keep.all() else keep  # every column kept: no np.ix_ copy
        if self.transform is None:
            return spd_inverse(_kept(self.gram, sel))
        tinv = np.linalg.inv(_kept(self.transform, sel))  # I - e_i s': exact
        inner = spd_inverse(_kept(self.gram_shifted, sel))
        out = tinv @ inner @ tinv.T
        return out / 2.0 + out.T / 2.0


def irls(
    blocks: RowBlocks,
    family: Family,
    start: np.ndarray | None = None,
    control: Control = Control(),
    penalty: Penalty | None = None,
    intercept: int | None = None,
) -> IRLSFit:
    """Fit a GLM by IRLS (or Newton's method) with step-halving.

    Parameters
    ----------
    blocks : RowBlocks
        The rows: design X (n_obs, p), response y (n_obs,) on the family's scale, prior weights
        (frequency weights times variance weights) and offset. Only these rows take part (drop
        rows of weight 0 with ``blocks.take_rows``, as R's ``glm.fit``).
    family : Family
    start : ndarray of shape (p,), optional
        Starting coefficients; default starts from the family's ``start_eta`` (R's
        ``mustart``, moved inside the link's range).
    control : Control
    penalty : Penalty, optional
        Gaussian prior turning the fit into penalised IRLS for the posterior mode.
    intercept : int, optional
        Index of a column of X that is all ones. The solver then works on the design with the
        later columns centred (:func:`~glmclass.solvers.gram.shift_from_gram`): the same model,
        reparametrised, whose Gram keeps the digits a raw Gram loses to large column means
        (decided on the first pass's Gram, :func:`~glmclass.solvers.gram.shift_from_gram`,
        which is then made again on the shifted design: one more pass, only then).

    Returns
    -------
    IRLSFit

    Notes
    -----
    Every iteration is one :func:`~glmclass.solvers.gram.fused_pass` over the rows; the
    linear predictor exists one block at a time, so the solver holds O(p^2) memory. After the
    first step (from R's starting means) each iteration solves for the *change* of the
    coefficients, ``(X'WX) delta = X'u`` with the score ``X'u`` computed afresh in float64: the
    same iterates as R's weighted least squares, but each step also corrects the rounding of the
    previous solve (iterative refinement), so the normal equations' squared condition number
    costs iterations, not digits. The aliased columns are decided on the first step's design
    as in R (:func:`~glmclass.solvers.rank.aliased_design_columns`).
    """
    blocks = blocks.gathered()  # a small source: one block, read once for every pass
    shift = None
    for _ in range(3):
        frame = _Frame(shift, intercept, penalty)
        fit = _irls(blocks, family, frame, start, control)
        if not isinstance(fit, _Retry):
            return fit
        # the first pass asked for a shift, or the column of ones the shift relies on is
        # itself aliased: then fit the unshifted design
        shift, intercept = fit.shift, (intercept if fit.shift is not None else None)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class _Retry:
    """Sentinel: start again with this shift (None: unshifted, no shift asked again)."""

    shift: np.ndarray | None


@dataclass(frozen=True)
class _Frame:
    """The coordinates the solver works in: ``gamma = T beta`` on ``Xc = X - 1 s'``."""

    shift: np.ndarray | None
    intercept: int | None
    penalty: Penalty | None

    @property
    def t(self) -> np.ndarray | None:
        return None if self.shift is None else shift_transform(self.shift, self.intercept)

    def to_gamma(self, beta: np.ndarray) -> np.ndarray:
        return beta if self.shift is None else beta + np.eye(beta.shape[0])[self.intercept] * (
            self.shift @ beta)

    def to_beta(self, gamma: np.ndarray) -> np.ndarray:
        if self.shift is None:
            return gamma
        beta = gamma.copy()
        beta[self.intercept] -= self.shift @ gamma
        return beta

    def gram_to_beta(self, g: np.ndarray) -> np.ndarray:
        t = self.t
        return g if t is None else t.T @ g @ t

    def penalty_gamma(self) -> Penalty | None:
        """The prior in gamma coordinates: precision ``T^-T P T^-1``, mean ``T m``."""
        pen = self.penalty
        if pen is None or self.shift is None:
            return pen
        tinv = np.eye(self.shift.shape[0])
        tinv[self.intercept] -= self.shift
        return Penalty(tinv.T @ pen.precision @ tinv, self.to_gamma(pen.mean))


def _irls(blocks: RowBlocks, family: Family, frame: _Frame, start: np.ndarray | None,
          control: Control) -> IRLSFit | _Retry:
    """The IRLS loop in the frame's coordinates (see :func:`irls`)."""
    p = blocks.n_cols
    observed = control.hessian == "observed"
    valid = _domain_check(family)
    shift, penalty = frame.shift, frame.penalty_gamma()
    # rows held as one block: what the terms need of y and the weights is found once
    single = blocks.block if isinstance(blocks, OneBlock) else None
    single_terms = None if single is None else family.terms_for(single.y, single.weights)

    def terms(b: Block, eta_b: np.ndarray, obs: bool, check: bool = True, wz: bool = False):
        if b is single:
            w, u, dev = single_terms(eta_b, obs)
        else:
            w, u, dev = family.irls_terms(b.y, eta_b, b.weights, observed=obs)
        if check and not valid(eta_b):  # outside the domain: the step gets halved
            dev = np.inf
        if not wz:
            return w, u, dev
        with np.errstate(over="ignore", invalid="ignore"):  # a wild step: inf, then halving
            return w, w * (eta_b - b.offset) + u, dev

    def run(coef, observed=observed, check=True):
        if qr_mode:  # an ill-conditioned kept design: R's QR on the weighted design
            dev, sys = qr_pass(blocks, keep, shift, penalty, coef,
                                lambda b, e: terms(b, e, False, check))
            pen = penalty.value(coef) if penalty is not None else 0.0
            return dev, dev + pen, sys, None
        dev, g, r = fused_pass(blocks, None, lambda b, e: terms(b, e, observed, check),
                               coef=coef, shift=shift)
        if observed and not _is_pd(_kept(_penalised(g, penalty), kept)):
            # far from the optimum the observed information may be indefinite: score instead
            dev, g, r = fused_pass(blocks, None, lambda b, e: terms(b, e, False, check),
                                   coef=coef, shift=shift)
        pen = penalty.value(coef) if penalty is not None else 0.0
        return dev, dev + pen, g, r

    keep, kept, qr_mode = np.ones(p, dtype=bool), None, False
    if start is None:  # R's mustart, block by block
        def start_eta(b: Block) -> np.ndarray:
            return family.start_eta(b.y, b.weights)

        if shift is None and _use_sampled(control, blocks, keep, family):
            fit = _sampled_start(blocks, family, frame, penalty, control, terms, start_eta)
            if fit is not None:
                return fit
        dev, g, r = fused_pass(blocks, start_eta,
                               lambda b, e: terms(b, e, observed, check=False, wz=True),
                               shift=shift)
        coef_old, obj_old = None, dev
    else:  # as before, a given start is not checked against the domain
        coef_old = frame.to_gamma(np.asarray(start, dtype=float))

        def start_eta(b: Block) -> np.ndarray:
            xb = b.X if shift is None else b.X - shift
            return xb @ coef_old + b.offset

        dev, obj_old, g, r = run(coef_old, check=False)
    dev_old = dev
    if shift is None and frame.intercept is not None:  # large means: work on a shifted design
        wanted = shift_from_gram(g, frame.intercept) if (g.diagonal() >= 0).all() else None
        if wanted is not None:
            return _Retry(wanted)
    # the first step solves with the factor that decided (None: not decided)
    factor = deciding_factor(_penalised(g, penalty), shift, frame.intercept)
    decided = factor is not None
    if decided:  # the common case: every pivot clear, so no QR and no QR mode either
        aliased = np.zeros(p, dtype=bool)
    else:
        aliased = _aliased(blocks, family, g, frame, penalty, start_eta)
    if shift is not None and aliased[frame.intercept]:
        return _Retry(None)
    keep = ~aliased
    kept = None if decided else keep  # None: every column kept (no indexing)
    if not decided and keep.any() and not clearly_full_rank(
            _kept(_penalised(g, penalty), keep), QR_MODE_CLEAR):
        # the Gram squares a condition number this large beyond what refinement recovers
        qr_mode, observed = True, False
        if start is None:
            dev, g = qr_pass(blocks, keep, shift, penalty, None,
                              lambda b, e: terms(b, e, False, False, wz=True), start_eta)
        else:
            dev, obj_old, g, r = run(coef_old, check=False)

    if not qr_mode and _use_sampled(control, blocks, keep, family):
        return _sampled(blocks, family, frame, keep, aliased, penalty, control, coef_old,
                        State(obj_old, r, g, (dev, None)), lambda b, e: terms(b, e, False),
                        exact=coef_old is None)

    history, converged, message, it = [], False, "", 0
    for it in range(1, control.maxiter + 1):
        coef = _step(g, r, kept, penalty, coef_old, factor)
        factor = None  # the next steps solve with new Gram matrices
        dev, obj, g_new, r_new = run(coef)  # an eta outside the domain gives obj = inf
        halvings = 0
        while not math.isfinite(obj) or (
            (it > 1 or start is not None) and (obj - obj_old) / (0.1 + abs(obj)) >= control.tol
        ):
            if coef_old is None or halvings >= control.maxhalf:
                message = "step-halving could not reduce the deviance"
                break
            halvings += 1
            coef = (coef + coef_old) / 2.0
            dev, obj, g_new, r_new = run(coef)
        if message:
            dev = dev_old  # back to the last accepted point
            break
        history.append(obj)
        converged = abs(obj - obj_old) / (abs(obj) + 0.1) < control.tol
        if control.progress is not None:
            moved = coef - (coef_old if coef_old is not None else 0.0)
            control.progress(it, obj, float(np.max(np.abs(moved[keep]), initial=0.0)), halvings)
        coef_old, obj_old, dev_old, g, r = coef, obj, dev, g_new, r_new
        if converged:
            break
    if coef_old is None:  # the first step from the starting means left the domain (as R)
        raise DataError(
            "no valid set of coefficients has been found: the first IRLS step left the domain "
            f"of the {family.name} family with the {family.link.name} link; pass start_params "
            "inside it (e.g. an intercept of link(mean(y)) and zero slopes)")
    if converged and not observed and not family.is_canonical and keep.any() and not qr_mode:
        # Fisher scoring converges only linearly for a non-canonical link, so R's deviance rule
        # stops ~sqrt(tol) away from the optimum: finish with exact-Hessian Newton steps
        coef_old, dev, obj_old, g, r = _polish(run, coef_old, (dev, obj_old, g, r), kept,
                                               penalty)
    if not converged and not message:
        message = f"no convergence in {control.maxiter} iterations"
    if isinstance(g, QRSystem):
        g = g.gram()
    if kept is None:  # every column kept: nothing to blank out
        out = frame.to_beta(coef_old.copy())
        g_shift = None if frame.shift is None else g.copy()
        g = frame.gram_to_beta(g).copy()
    else:
        out = np.where(keep, frame.to_beta(np.where(keep, coef_old, 0.0)), np.nan)
        both = np.outer(keep, keep)
        g_shift = None if frame.shift is None else np.where(both, g, 0.0)
        g = np.where(both, frame.gram_to_beta(g), 0.0)
    return IRLSFit(out, dev, g, aliased, it, converged, tuple(history), message, frame.t, g_shift)


def _use_sampled(control: Control, blocks: RowBlocks, keep: np.ndarray,
                 family: Family) -> bool:
    if control.direction == "auto":
        rows = SAMPLED_MIN_ROWS * (CANONICAL_ROWS_FACTOR if family.is_canonical else 1.0)
        return blocks.sample_hessians and blocks.n_rows >= rows and bool(keep.any())
    return control.direction == "sampled" and bool(keep.any())


def _sampled_start(blocks: RowBlocks, family: Family, frame: _Frame, penalty: Penalty | None,
                   control: Control, terms: Callable,
                   start_eta: Callable[[Block], np.ndarray]) -> IRLSFit | None:
    """The sampled iterations from R's starting means with the start's Gram from the sample
    too, so that the only full Gram is the one at the estimates; None when the sample cannot
    stand in for the full start pass (large column means, a column near the span of others)
    or when the end of the fit cannot show that R's rank rule on the start's weights keeps
    every column (then the caller makes the full start pass).

    R decides aliasing on the start's weighted design. With start weights ``w_s`` and final
    weights ``w_f`` (``a <= w_s / w_f <= b`` on every row), ``a G_f <= G_s <= b G_f``, so every
    pivot of the (equilibrated) start Gram is at least ``min(a, 1) / max(b, 1)`` times the
    smallest pivot of the final one (a prior precision keeps the bound): when that is far
    above :data:`~glmclass.numerics.linalg.GRAM_CLEAR`, the start's Gram would have kept every
    column without a QR, exactly as the full start pass decides.
    """
    p = blocks.n_cols
    known: dict = {}

    def ratio_range(b: Block, w_final: np.ndarray) -> np.ndarray:
        w_start = _start_weights(family, b, start_eta, known)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = w_start / w_final
        ratio = np.where((w_start == 0) & (w_final == 0), 1.0, ratio)  # in neither Gram
        ratio = np.where(np.isnan(ratio), np.inf, ratio)
        return np.array([ratio.min(initial=np.inf), -ratio.max(initial=-np.inf)])

    keep = np.ones(p, dtype=bool)
    warm = _warm_start(blocks, family, frame, penalty, control)
    if warm is not None:
        return _sampled(blocks, family, frame, keep, ~keep, penalty, control, warm[0], None,
                        lambda b, e: terms(b, e, False), False, ratio_range, warm[1])
    frac = sample_fraction(blocks.n_rows, p)
    dev, r, g = score_pass(blocks, lambda b, e: terms(b, e, False, False, wz=True), None,
                           sample=frac, eta=start_eta)
    if frame.intercept is not None and np.all(np.diag(g) >= 0) and (
            shift_from_gram(g, frame.intercept) is not None):
        return None  # large means: the full start pass decides the shift
    if not gram_decides(_penalised(g, penalty), None, frame.intercept):
        return None
    return _sampled(blocks, family, frame, keep, ~keep, penalty, control, None,
                    State(dev, r, g, (dev, None)), lambda b, e: terms(b, e, False), False,
                    ratio_range)


def _warm_start(blocks: RowBlocks, family: Family, frame: _Frame, penalty: Penalty | None,
                control: Control) -> tuple[np.ndarray, RowBlocks] | None:
    """Coefficients of the exact IRLS fit of a systematic sample of the rows
    (:meth:`~glmclass.blocks.RowBlocks.subsample`, the size of the Hessian's sample, at most
    :data:`WARM_MAX_FRACTION` of the rows), to start the full fit from, and that sample (its
    Gram then stands for the full one: unlike whole blocks, every k-th row is a fair sample of
    rows sorted by the response or a covariate);
    None when the source cannot sample or the sample's fit is not a clean one (no
    convergence, a column aliased or near the span of others, large column means).

    The sample's estimate is a few standard errors from the full one, so the sampled Newton
    steps from it need about half the passes that they need from R's starting means; a poor
    sample (e.g. rows in a periodic order) only costs passes: convergence is still confirmed
    by a full pass's exact Newton decrement.
    """
    frac = sample_fraction(blocks.n_rows, blocks.n_cols)
    if frac > WARM_MAX_FRACTION:
        return None
    sub = blocks.subsample(int(math.ceil(frac * blocks.n_rows)))
    if sub is None:
        return None
    pen = None if penalty is None else Penalty(penalty.precision * (sub.n_rows / blocks.n_rows),
                                               penalty.mean)
    ctrl = Control(control.maxiter, control.tol, control.maxhalf, control.hessian,
                   direction="exact")
    try:
        with np.errstate(all="ignore"):
            fit = irls(sub, family, None, ctrl, pen, frame.intercept)
    except (DataError, NotPositiveDefinite):
        return None
    if (not fit.converged or fit.aliased.any() or fit.transform is not None
            or not np.isfinite(fit.coef).all()
            or not gram_decides(_penalised(fit.gram, pen), None, frame.intercept)):
        return None
    return fit.coef, sub


def _sampled(blocks: RowBlocks, family: Family, frame: _Frame, keep: np.ndarray,
             aliased: np.ndarray, penalty: Penalty | None, control: Control,
             coef: np.ndarray | None, state: State | None, terms: Callable, exact: bool,
             ratio_range: Callable | None = None,
             sub: RowBlocks | None = None) -> IRLSFit | None:
    """The iterations after the set-up by :func:`~glmclass.solvers.sampled.sampled_newton`:
    Fisher-scoring directions from sampled Gram matrices and the exact score, ending at a full
    float64 pass (the Gram returned is the Fisher Gram at the estimates). With
    ``ratio_range`` (see :func:`_sampled_start`), None when the final pass cannot confirm that
    no column is aliased. The sampled Gram is that of ``sub`` (rows of ``blocks``) scaled to
    all rows, or else of a share of the blocks (:func:`~glmclass.solvers.sampled.in_sample`)."""
    shift = frame.shift
    frac = sample_fraction(blocks.n_rows, int(keep.sum()))
    pk = None if penalty is None else penalty.precision[np.ix_(keep, keep)]

    def evaluate(c: np.ndarray, mode: str) -> State:
        low = None
        if mode == "full":
            dev, g, r, *low = fused_pass(blocks, None, terms, coef=c, shift=shift,
                                         extremes=ratio_range)
        elif mode == "hessian":  # for directions only: single precision, no rank check
            dev, g, r = fused_pass(blocks, None, terms, coef=c, shift=shift,
                                   gram_dtype=np.float32)
        elif mode == "sample" and sub is not None:
            dev, r, _ = score_pass(blocks, terms, c, shift)
            g = fused_pass(sub, None, terms, coef=c, shift=shift)[1]
            g *= blocks.n_rows / sub.n_rows
        else:
            dev, r, g = score_pass(blocks, terms, c, shift, frac if mode == "sample" else 0.0)
        obj = dev + (penalty.value(c) if penalty is not None else 0.0)
        return State(obj, r, g, (dev, low[0] if low else None))

    def solve(g: np.ndarray, st: State, c: np.ndarray | None, strict: bool) -> np.ndarray:
        if c is None or not strict:
            return _step(g, st.rhs, keep, penalty, c)
        gk, rk = g[np.ix_(keep, keep)], st.rhs[keep]
        if pk is not None:
            gk, rk = gk + pk, rk - pk @ (c[keep] - penalty.mean[keep])
        out = np.where(keep, c, 0.0)
        out[keep] += spd_solve(gk, rk)
        return out

    def decrement(g: np.ndarray, delta: np.ndarray) -> float:
        gk, dk = g[np.ix_(keep, keep)], delta[keep]
        if pk is not None:
            gk = gk + pk
        return float(dk @ gk @ dk)

    if state is None:  # a warm start: the first pass is a sampled one at ``coef``
        state = evaluate(coef, "sample")
        if not math.isfinite(state.objective):
            return None
    fit = sampled_newton(evaluate, solve, decrement, coef, state, exact, control.maxiter,
                         control.tol, control.maxhalf, control.progress)
    if fit.coef is None:
        raise DataError(
            "no valid set of coefficients has been found: the first IRLS step left the domain "
            f"of the {family.name} family with the {family.link.name} link; pass start_params "
            "inside it (e.g. an intercept of link(mean(y)) and zero slopes)")
    dev, low = fit.state.extra
    g = fit.state.hessian
    if ratio_range is not None:
        lo, hi = low[0], -low[1]
        bound = min_pivot(_penalised(g, penalty)) * min(lo, 1.0) / max(hi, 1.0)
        if not bound > RANK_MARGIN * GRAM_CLEAR:  # NaN fails too
            return None
    out = np.where(keep, frame.to_beta(np.where(keep, fit.coef, 0.0)), np.nan)
    both = np.outer(keep, keep)
    g_shift = None if frame.shift is None else np.where(both, g, 0.0)
    g = np.where(both, frame.gram_to_beta(g), 0.0)
    return IRLSFit(out, float(dev), g, aliased, fit.n_iter, fit.converged,
                   fit.history, fit.message, frame.t, g_shift)


def _aliased(blocks: RowBlocks, family: Family, g: np.ndarray, frame: _Frame,
             penalty: Penalty | None, start_eta: Callable[[Block], np.ndarray]) -> np.ndarray:
    """R's aliasing decision on the first step's weighted (shifted) design; a proper prior
    makes any design full rank (its square-root precision joins the rows)."""
    extra = None
    if penalty is not None:
        e, v = np.linalg.eigh(penalty.precision)
        extra = (v * np.sqrt(np.maximum(e, 0.0))).T
    gram = _penalised(g, penalty)

    def fisher(b: Block) -> np.ndarray:  # R's QR uses the Fisher weights at the start
        return family.irls_terms(b.y, start_eta(b), b.weights)[0]

    return aliased_design_columns(blocks, gram, fisher, frame.shift, extra, frame.intercept)
