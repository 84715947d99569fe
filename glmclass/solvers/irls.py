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

from ..errors import DataError
from ..families import Family
from ..numerics.linalg import (
    clearly_full_rank,
)
from ..rows.blocks import Block, OneBlock, RowBlocks
from ..rows.gram import fused_pass, shift_from_gram
from .irls_qr import QR_MODE_CLEAR, QRSystem, qr_pass
from .irls_records import Control, IRLSFit, Penalty, _Frame
from .irls_sampled import _sampled, _sampled_start, _use_sampled
from .irls_steps import (
    _domain_check,
    _is_pd,
    _kept,
    _penalised,
    _polish,
    _step,
)
from .rank import aliased_design_columns, deciding_factor
from .sampled import State


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
        later columns centred (:func:`~glmclass.rows.gram.shift_from_gram`): the same model,
        reparametrised, whose Gram keeps the digits a raw Gram loses to large column means
        (decided on the first pass's Gram, :func:`~glmclass.rows.gram.shift_from_gram`,
        which is then made again on the shifted design: one more pass, only then).

    Returns
    -------
    IRLSFit

    Notes
    -----
    Every iteration is one :func:`~glmclass.rows.gram.fused_pass` over the rows; the
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
            fisher_instead.append(g)
        pen = penalty.value(coef) if penalty is not None else 0.0
        return dev, dev + pen, g, r

    keep, kept, qr_mode = np.ones(p, dtype=bool), None, False
    fisher_instead: list[np.ndarray] = []  # Gram matrices of observed passes made with Fisher's
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
                        State(obj_old, r, g, (dev, None, False)), terms,
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
    information = "observed" if (observed and not family.is_canonical and not qr_mode and not any(
        g is f for f in fisher_instead)) else "expected"
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
    return IRLSFit(out, dev, g, aliased, it, converged, tuple(history), message, frame.t, g_shift,
                   information)


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
