"""The large-N path of IRLS: Fisher-scoring (or Newton) directions from sampled Gram matrices
and the exact score (:func:`~glmclass.solvers.sampled.sampled_newton`), from the fit of a
systematic sample of the rows or from R's starting means, ending at one full float64 pass whose
Gram is the information the caller asked for at the estimates."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..errors import DataError
from ..families import Family
from ..numerics.linalg import NotPositiveDefinite, spd_solve
from ..rows.blocks import Block, RowBlocks
from ..rows.gram import fused_pass, score_pass, shift_from_gram
from . import sampled
from .control import Control
from .fit import Fit, submatrix
from .irls_exact import exact_irls
from .irls_records import Frame, Penalty
from .irls_steps import is_pd, penalised, solve_step, start_weights
from .rank import bound_decides, gram_decides
from .sampled import State, sample_fraction, sampled_newton

#: For a canonical link (logit) sampling starts at this many times
#: :data:`~glmclass.solvers.sampled.SAMPLED_MIN_ROWS`: exact IRLS is then plain Newton (no
#: observed-Hessian polishing, which the sampled steps replace for the other links); with the
#: sample fit's start the two were as fast at 1e5-2e5 rows and sampling 5-40 % faster from 3e5
#: for p = 2 to 200 (benchmarks/README.md, issue 14 round three).
CANONICAL_ROWS_FACTOR = 1.5


def use_sampled(control: Control, blocks: RowBlocks, keep: np.ndarray,
                family: Family) -> bool:
    """Whether the fit takes the large-N path (``control.direction``; with ``"auto"``, from
    :data:`~glmclass.solvers.sampled.SAMPLED_MIN_ROWS` rows on a source that can sample its
    Hessians) with the columns ``keep``."""
    if control.direction == "auto":
        if not blocks.sample_hessians:  # (rows in memory held as one block, e.g.)
            return False
        rows = sampled.SAMPLED_MIN_ROWS * (CANONICAL_ROWS_FACTOR if family.is_canonical else 1.0)
        return blocks.n_rows >= rows and bool(keep.any())
    return control.direction == "sampled" and bool(keep.any())


def sampled_start(blocks: RowBlocks, family: Family, frame: Frame, penalty: Penalty | None,
                   control: Control, terms: Callable,
                   start_eta: Callable[[Block], np.ndarray]) -> Fit | None:
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
        w_start = start_weights(family, b, start_eta, known)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = w_start / w_final
        ratio = np.where((w_start == 0) & (w_final == 0), 1.0, ratio)  # in neither Gram
        ratio = np.where(np.isnan(ratio), np.inf, ratio)
        return np.array([ratio.min(initial=np.inf), -ratio.max(initial=-np.inf)])

    keep = np.ones(p, dtype=bool)
    warm = _warm_start(blocks, family, frame, penalty, control)
    if warm is not None:
        return sampled_irls(blocks, family, frame, keep, ~keep, penalty, control, warm[0], None,
                        terms, False, ratio_range, warm[1])
    frac = sample_fraction(blocks.n_rows, p)
    dev, r, g = score_pass(blocks, lambda b, e: terms(b, e, False, False, wz=True), None,
                           sample=frac, eta=start_eta)
    if frame.intercept is not None and np.all(np.diag(g) >= 0) and (
            shift_from_gram(g, frame.intercept) is not None):
        return None  # large means: the full start pass decides the shift
    if not gram_decides(penalised(g, penalty), None, frame.intercept):
        return None
    return sampled_irls(blocks, family, frame, keep, ~keep, penalty, control, None,
                    State(dev, r, g, (dev, None, False)), terms, False,
                    ratio_range)


def _warm_start(blocks: RowBlocks, family: Family, frame: Frame, penalty: Penalty | None,
                control: Control) -> tuple[np.ndarray, RowBlocks] | None:
    """Coefficients of the exact IRLS fit of a systematic sample of the rows
    (:meth:`~glmclass.rows.blocks.RowBlocks.subsample`, the size of the Hessian's sample, at most
    :data:`~glmclass.solvers.sampled.IRLS_WARM_MAX_FRACTION` of the rows), to start the full
    fit from, and that sample (its Gram then stands for the full one: unlike whole blocks,
    every k-th row is a fair sample of rows sorted by the response or a covariate);
    None when the source cannot sample or the sample's fit is not a clean one (no
    convergence, a column aliased or near the span of others, large column means).

    The sample's estimate is a few standard errors from the full one, so the sampled Newton
    steps from it need about half the passes that they need from R's starting means; a poor
    sample (e.g. rows in a periodic order) only costs passes: convergence is still confirmed
    by a full pass's exact Newton decrement.
    """
    frac = sample_fraction(blocks.n_rows, blocks.n_cols)
    if frac > sampled.IRLS_WARM_MAX_FRACTION:
        return None
    sub = blocks.subsample(int(math.ceil(frac * blocks.n_rows)))
    if sub is None:
        return None
    pen = None if penalty is None else Penalty(penalty.precision * (sub.n_rows / blocks.n_rows),
                                               penalty.mean)
    ctrl = Control(maxiter=control.maxiter, tol=control.tol, maxhalf=control.maxhalf,
                   hessian=control.hessian, direction="exact")
    try:
        with np.errstate(all="ignore"):
            fit = exact_irls(sub, family, None, ctrl, pen, frame.intercept)
    except (DataError, NotPositiveDefinite):
        return None
    if (not fit.converged or fit.aliased.any() or fit.transform is not None
            or not np.isfinite(fit.coef).all()
            or not gram_decides(penalised(fit.gram, pen), None, frame.intercept)):
        return None
    return fit.coef, sub


def sampled_irls(blocks: RowBlocks, family: Family, frame: Frame, keep: np.ndarray,
                 aliased: np.ndarray, penalty: Penalty | None, control: Control,
                 coef: np.ndarray | None, state: State | None, terms: Callable, exact: bool,
                 ratio_range: Callable | None = None,
                 sub: RowBlocks | None = None) -> Fit | None:
    """The iterations after the set-up by :func:`~glmclass.solvers.sampled.sampled_newton`:
    Fisher-scoring directions from sampled Gram matrices and the exact score, ending at a full
    float64 pass (the Gram returned is the Fisher Gram at the estimates). With
    ``ratio_range`` (see :func:`sampled_start`), None when the final pass cannot confirm that
    no column is aliased. The sampled Gram is that of ``sub`` (rows of ``blocks``) scaled to
    all rows, or else of a share of the blocks (:func:`~glmclass.rows.blocks.in_sample`).
    ``terms(block, eta, observed)`` gives the IRLS terms; the full passes use the observed
    information when ``control.information`` asks for it (non-canonical links), unless it is
    not positive definite there."""
    shift = frame.shift
    frac = sample_fraction(blocks.n_rows, int(keep.sum()))
    pk = None if penalty is None else penalty.precision[np.ix_(keep, keep)]
    want_observed = control.information == "observed" and not family.is_canonical

    def fisher(b: Block, e: np.ndarray):
        return terms(b, e, False)

    def evaluate(c: np.ndarray, mode: str) -> State:
        low, observed = None, False
        if mode in ("full", "hessian"):
            # "hessian": for directions only, single precision, no rank check
            observed = want_observed
            extra = {"extremes": ratio_range} if mode == "full" else {"gram_dtype": np.float32}
            dev, g, r, *low = fused_pass(blocks, None, lambda b, e: terms(b, e, observed),
                                         coef=c, shift=shift, **extra)
            if observed and not is_pd(submatrix(penalised(g, penalty), keep)):
                observed = False  # e.g. far from the optimum of a likelihood that is not concave
                dev, g, r, *low = fused_pass(blocks, None, fisher, coef=c, shift=shift, **extra)
        elif mode == "sample" and sub is not None:
            dev, r, _ = score_pass(blocks, fisher, c, shift)
            g = fused_pass(sub, None, fisher, coef=c, shift=shift)[1]
            g *= blocks.n_rows / sub.n_rows
        else:
            dev, r, g = score_pass(blocks, fisher, c, shift, frac if mode == "sample" else 0.0)
        obj = dev + (penalty.value(c) if penalty is not None else 0.0)
        return State(obj, r, g, (dev, low[0] if low else None, observed))

    def solve(g: np.ndarray, st: State, c: np.ndarray | None, strict: bool) -> np.ndarray:
        if c is None or not strict:
            return solve_step(g, st.rhs, keep, penalty, c)
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
                         control.tol, control.maxhalf, control.progress, scale=frame.scale)
    if fit.coef is None:
        raise DataError(
            "no valid set of coefficients has been found: the first IRLS step left the domain "
            f"of the {family.name} family with the {family.link.name} link; pass start_params "
            "inside it (e.g. an intercept of link(mean(y)) and zero slopes)")
    dev, low, observed = fit.state.extra
    g = fit.state.hessian
    if ratio_range is not None:
        lo, hi = low[0], -low[1]
        # a prior precision P is in both: a (G_f + P) <= G_s + P needs a <= 1, and b >= 1
        if not bound_decides(penalised(g, penalty), min(lo, 1.0), max(hi, 1.0)):
            return None
    out = np.where(keep, frame.to_beta(np.where(keep, fit.coef, 0.0)), np.nan)
    both = np.outer(keep, keep)
    g_shift = None if frame.shift is None else np.where(both, g, 0.0)
    g = np.where(both, frame.gram_to_beta(g), 0.0)
    return Fit(coef=out, deviance=float(dev), gram=g, aliased=aliased, n_iter=fit.n_iter,
               converged=fit.converged, history=fit.history, message=fit.message,
               transform=frame.t, gram_shifted=g_shift,
               information="observed" if observed else "expected")
