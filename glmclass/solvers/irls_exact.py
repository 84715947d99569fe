"""The exact IRLS loop, R's ``glm.fit``: the start pass with R's aliasing decision (and the
QR mode of an ill-conditioned kept design), then full float64 X'WX iterations with
step-halving. The large-N path (:mod:`glmclass.solvers.irls_sampled`) takes over after the same
start, and the front door :func:`glmclass.solvers.irls.irls` chooses between the two; this
module knows neither.

References
----------
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
from ..numerics.linalg import clearly_full_rank
from ..rows.blocks import Block, OneBlock, RowBlocks
from ..rows.gram import fused_pass, shift_from_gram
from .control import Control
from .fit import Fit, submatrix
from .irls_qr import QR_MODE_CLEAR, QRSystem, qr_pass
from .irls_records import Frame, Penalty, weight_scale
from .irls_steps import domain_check, is_pd, penalised, polish, solve_step
from .rank import aliased_design_columns, deciding_factor

#: ``terms(block, eta, observed, check=True, wz=False) -> (w, u or wz, deviance)``: the IRLS
#: terms of a block at eta (see :func:`block_terms`).
Terms = Callable[..., tuple]
#: ``run(coef, observed=..., check=True) -> (deviance, objective, gram, rhs)``: one full pass.
Run = Callable[..., tuple]


@dataclass(frozen=True)
class Retry:
    """What a fit in one frame asks instead of a fit: start again with this shift (None:
    unshifted, no shift asked again)."""

    shift: np.ndarray | None


def over_frames(penalty: Penalty | None, intercept: int | None,
                once: Callable[[Frame], Fit | Retry], scale: float = 1.0) -> Fit:
    """The fit ``once(frame)`` in the frame it settles on: unshifted first, then shifted when
    the first pass asks for a shift, or unshifted again (and never shifted) when the column of
    ones the shift relies on is itself aliased. ``scale``: the rows' mean prior weight
    (:func:`~glmclass.solvers.irls_records.weight_scale`)."""
    shift = None
    for _ in range(3):
        fit = once(Frame(shift, intercept, penalty, scale))
        if not isinstance(fit, Retry):
            return fit
        shift, intercept = fit.shift, (intercept if fit.shift is not None else None)
    raise AssertionError("unreachable")  # pragma: no cover


def exact_irls(blocks: RowBlocks, family: Family, start: np.ndarray | None = None,
               control: Control = Control(), penalty: Penalty | None = None,
               intercept: int | None = None) -> Fit:
    """R's IRLS with full float64 Gram matrices at every iteration, whatever
    ``control.direction`` says: :func:`glmclass.solvers.irls.irls` without its large-N path
    (same parameters and result)."""
    blocks = blocks.gathered()  # a small source: one block, read once for every pass

    def once(frame: Frame) -> Fit | Retry:
        terms = block_terms(blocks, family)
        coef, start_eta = start_etas(family, frame, start)
        begun = begin(blocks, family, frame, control, terms, coef, start_eta)
        return begun if isinstance(begun, Retry) else iterate(family, frame, control, begun,
                                                              start is not None)

    return over_frames(penalty, intercept, once, control.weight_scale or weight_scale(blocks))


def block_terms(blocks: RowBlocks, family: Family) -> Terms:
    """The IRLS terms of a block at eta: Fisher's (or, with ``observed``, Newton's) weights,
    the working residual ``u`` (or with ``wz`` the weighted working response) and the
    deviance, infinite when eta leaves the family's domain (then the step gets halved)."""
    valid = domain_check(family)
    # rows held as one block: what the terms need of y and the weights is found once
    single = blocks.block if isinstance(blocks, OneBlock) else None
    single_terms = None if single is None else family.terms_for(single.y, single.weights)

    def terms(b: Block, eta_b: np.ndarray, obs: bool, check: bool = True, wz: bool = False):
        if b is single:
            w, u, dev = single_terms(eta_b, obs)
        else:
            w, u, dev = family.irls_terms(b.y, eta_b, b.weights, observed=obs)
        # outside the domain: the step gets halved
        if check and (not math.isfinite(dev) if valid is None else not valid(eta_b)):
            dev = np.inf
        if not wz:
            return w, u, dev
        with np.errstate(over="ignore", invalid="ignore"):  # a wild step: inf, then halving
            wz = np.subtract(eta_b, b.offset)  # w (eta - offset) + u, in one new vector
            wz *= w
            wz += u
            return w, wz, dev

    return terms


def start_etas(family: Family, frame: Frame, start: np.ndarray | None
               ) -> tuple[np.ndarray | None, Callable[[Block], np.ndarray]]:
    """The starting coefficients in the frame's coordinates (None: R's ``mustart``, from the
    weights relative to their mean, ``frame.scale``) and the linear predictor they give a
    block."""
    if start is None:  # R's mustart, block by block
        scale = frame.scale

        def from_means(b: Block) -> np.ndarray:
            return family.start_eta(b.y, b.weights if scale == 1.0 else b.weights / scale)

        return None, from_means
    coef = frame.to_gamma(np.asarray(start, dtype=float))
    shift = frame.shift

    def from_coef(b: Block) -> np.ndarray:
        xb = b.X if shift is None else b.X - shift
        return xb @ coef + b.offset

    return coef, from_coef


def make_run(blocks: RowBlocks, terms: Terms, shift: np.ndarray | None,
             penalty: Penalty | None, observed: bool, keep: np.ndarray,
             kept: np.ndarray | None, qr_mode: bool, fisher_instead: list) -> Run:
    """One full pass at ``coef``: deviance, objective (deviance plus prior), and the step's
    system (X'WX and the score; a :class:`QRSystem` in QR mode). An indefinite observed
    information falls back to Fisher's, whose Gram is then recorded in ``fisher_instead``."""
    def run(coef, observed=observed, check=True):
        if qr_mode:  # an ill-conditioned kept design: R's QR on the weighted design
            dev, sys = qr_pass(blocks, keep, shift, penalty, coef,
                               lambda b, e: terms(b, e, False, check))
            pen = penalty.value(coef) if penalty is not None else 0.0
            return dev, dev + pen, sys, None
        dev, g, r = fused_pass(blocks, None, lambda b, e: terms(b, e, observed, check),
                               coef=coef, shift=shift)
        if observed and not is_pd(submatrix(penalised(g, penalty), kept)):
            # far from the optimum the observed information may be indefinite: score instead
            dev, g, r = fused_pass(blocks, None, lambda b, e: terms(b, e, False, check),
                                   coef=coef, shift=shift)
            fisher_instead.append(g)
        pen = penalty.value(coef) if penalty is not None else 0.0
        return dev, dev + pen, g, r

    return run


@dataclass(slots=True)
class Begun:
    """The loop's state after the start pass and R's aliasing decision (local to one fit,
    handed from :func:`begin` to :func:`iterate` or the large-N path; not frozen, since a
    frozen record's fifteen checked assignments cost ~3-6 us, ~1 % of a fit at n = 50).

    ``coef`` None: the start was R's starting means, and ``gram``/``rhs`` are X'WX and X'Wz
    there. ``deviance_before`` is the start pass's deviance when QR mode made the pass again
    (``deviance`` is the new pass's). ``factor`` is the Cholesky factor that decided the rank
    (None: not decided). ``fisher_instead`` is shared with ``run``.
    """

    penalty: Penalty | None
    run: Run
    keep: np.ndarray
    kept: np.ndarray | None
    aliased: np.ndarray
    qr_mode: bool
    observed: bool
    factor: tuple | None
    coef: np.ndarray | None
    objective: float
    deviance: float
    deviance_before: float
    gram: np.ndarray | QRSystem
    rhs: np.ndarray | None
    fisher_instead: list


def begin(blocks: RowBlocks, family: Family, frame: Frame, control: Control, terms: Terms,
          coef_old: np.ndarray | None, start_eta: Callable[[Block], np.ndarray]
          ) -> Begun | Retry:
    """The start pass at ``coef_old`` (None: R's starting means, ``start_eta``), the frame's
    shift decision, R's aliasing and the QR mode of an ill-conditioned kept design."""
    p = blocks.n_cols
    observed = control.hessian == "observed"
    shift, penalty = frame.shift, frame.penalty_gamma()
    keep, kept, qr_mode = np.ones(p, dtype=bool), None, False
    fisher_instead: list[np.ndarray] = []  # Gram matrices of observed passes made with Fisher's
    run = make_run(blocks, terms, shift, penalty, observed, keep, kept, qr_mode, fisher_instead)
    if coef_old is None:
        dev, g, r = fused_pass(blocks, start_eta,
                               lambda b, e: terms(b, e, observed, check=False, wz=True),
                               shift=shift)
        obj_old = dev
    else:  # as before, a given start is not checked against the domain
        dev, obj_old, g, r = run(coef_old, check=False)
    dev_old = dev
    if shift is None and frame.intercept is not None:  # large means: work on a shifted design
        wanted = shift_from_gram(g, frame.intercept) if (g.diagonal() >= 0).all() else None
        if wanted is not None:
            return Retry(wanted)
    # the first step solves with the factor that decided (None: not decided)
    factor = deciding_factor(penalised(g, penalty), shift, frame.intercept)
    decided = factor is not None
    if decided:  # the common case: every pivot clear, so no QR and no QR mode either
        aliased = np.zeros(p, dtype=bool)
    else:
        aliased = _aliased(blocks, family, g, frame, penalty, start_eta)
    if shift is not None and aliased[frame.intercept]:
        return Retry(None)
    keep = ~aliased
    kept = None if decided else keep  # None: every column kept (no indexing)
    if not decided and keep.any() and not clearly_full_rank(
            submatrix(penalised(g, penalty), keep), QR_MODE_CLEAR):
        # the Gram squares a condition number this large beyond what refinement recovers
        qr_mode = True
        run = make_run(blocks, terms, shift, penalty, observed, keep, kept, qr_mode,
                       fisher_instead)
        observed = False
        if coef_old is None:
            dev, g = qr_pass(blocks, keep, shift, penalty, None,
                             lambda b, e: terms(b, e, False, False, wz=True), start_eta)
        else:
            dev, obj_old, g, r = run(coef_old, check=False)
    else:
        run = make_run(blocks, terms, shift, penalty, observed, keep, kept, qr_mode,
                       fisher_instead)
    return Begun(penalty, run, keep, kept, aliased, qr_mode, observed, factor, coef_old,
                 obj_old, dev, dev_old, g, r, fisher_instead)


def iterate(family: Family, frame: Frame, control: Control, begun: Begun,
            given_start: bool) -> Fit:
    """The IRLS iterations from :func:`begin`'s state, with R's step-halving and
    relative-deviance rule (``given_start``: the deviance may not rise from the first step
    on, as from a start the caller gave), then Newton polishing of a non-canonical fit."""
    run, keep, kept, penalty = begun.run, begun.keep, begun.kept, begun.penalty
    qr_mode, observed, factor = begun.qr_mode, begun.observed, begun.factor
    coef_old, obj_old, dev, dev_old = begun.coef, begun.objective, begun.deviance, \
        begun.deviance_before
    g, r = begun.gram, begun.rhs
    history, converged, message, it = [], False, "", 0
    floor = 0.1 * frame.scale  # R's 0.1, in units of the prior weights
    for it in range(1, control.maxiter + 1):
        coef = solve_step(g, r, kept, penalty, coef_old, factor)
        factor = None  # the next steps solve with new Gram matrices
        dev, obj, g_new, r_new = run(coef)  # an eta outside the domain gives obj = inf
        halvings = 0
        while not math.isfinite(obj) or (
            (it > 1 or given_start) and (obj - obj_old) / (floor + abs(obj)) >= control.tol
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
        converged = abs(obj - obj_old) / (abs(obj) + floor) < control.tol
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
        coef_old, dev, obj_old, g, r = polish(run, coef_old, (dev, obj_old, g, r), kept,
                                              penalty, scale=frame.scale)
    if not converged and not message:
        message = f"no convergence in {control.maxiter} iterations"
    information = "observed" if (observed and not family.is_canonical and not qr_mode and not any(
        g is f for f in begun.fisher_instead)) else "expected"
    return _record(frame, keep, kept, coef_old, dev, g, begun.aliased, it, converged,
                   tuple(history), message, information)


def _record(frame: Frame, keep: np.ndarray, kept: np.ndarray | None, coef: np.ndarray,
            dev: float, g: np.ndarray | QRSystem, aliased: np.ndarray, it: int,
            converged: bool, history: tuple, message: str, information: str) -> Fit:
    """The fit record in beta coordinates, aliased columns blanked out."""
    if isinstance(g, QRSystem):
        g = g.gram()
    if kept is None:  # every column kept: nothing to blank out
        out = frame.to_beta(coef.copy())
        g_shift = None if frame.shift is None else g.copy()
        g = frame.gram_to_beta(g).copy()
    else:
        out = np.where(keep, frame.to_beta(np.where(keep, coef, 0.0)), np.nan)
        both = np.outer(keep, keep)
        g_shift = None if frame.shift is None else np.where(both, g, 0.0)
        g = np.where(both, frame.gram_to_beta(g), 0.0)
    return Fit(coef=out, deviance=dev, gram=g, aliased=aliased, n_iter=it, converged=converged,
               history=history, message=message, transform=frame.t, gram_shifted=g_shift,
               information=information)


def _aliased(blocks: RowBlocks, family: Family, g: np.ndarray, frame: Frame,
             penalty: Penalty | None, start_eta: Callable[[Block], np.ndarray]) -> np.ndarray:
    """R's aliasing decision on the first step's weighted (shifted) design; a proper prior
    makes any design full rank (its square-root precision joins the rows)."""
    extra = None
    if penalty is not None:
        e, v = np.linalg.eigh(penalty.precision)
        extra = (v * np.sqrt(np.maximum(e, 0.0))).T
    gram = penalised(g, penalty)

    def fisher(b: Block) -> np.ndarray:  # R's QR uses the Fisher weights at the start
        return family.irls_terms(b.y, start_eta(b), b.weights)[0]

    return aliased_design_columns(blocks, gram, fisher, frame.shift, extra, frame.intercept)
