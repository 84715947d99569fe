"""Iteratively reweighted least squares with R's ``glm.fit`` semantics: the front door.

:func:`irls` chooses between the exact loop (:mod:`~glmclass.solvers.irls_exact`) and the large-N
path (:mod:`~glmclass.solvers.irls_sampled`); it takes the one
:class:`~glmclass.solvers.control.Control` and gives the one :class:`~glmclass.solvers.fit.Fit`;
its prior :class:`Penalty` lives in :mod:`~glmclass.solvers.irls_records` and is named here for
the callers.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.3 (IRLS).
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, §2.5.
R Core Team, ``glm.fit`` (stats package): step-halving and the relative-deviance rule.
"""

from __future__ import annotations

import numpy as np

from ..families import Family
from ..rows.blocks import RowBlocks
from .control import Control
from .fit import Fit
from .irls_exact import Retry, begin, block_terms, iterate, over_frames, start_etas
from .irls_records import Frame, Penalty, weight_scale
from .irls_sampled import sampled_irls, sampled_start, use_sampled
from .sampled import State

__all__ = ["Penalty", "irls"]


def irls(
    blocks: RowBlocks,
    family: Family,
    start: np.ndarray | None = None,
    control: Control = Control(),
    penalty: Penalty | None = None,
    intercept: int | None = None,
) -> Fit:
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
    Fit

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
    return over_frames(penalty, intercept,
                       lambda frame: _in_frame(blocks, family, frame, start, control),
                       control.weight_scale or weight_scale(blocks))


def _in_frame(blocks: RowBlocks, family: Family, frame: Frame, start: np.ndarray | None,
              control: Control) -> Fit | Retry:
    """The fit in the frame's coordinates: the large-N path from a sample's start when it
    applies (and the sample can stand in for the start pass), else R's start pass and
    aliasing (:func:`~glmclass.solvers.irls_exact.begin`), then the large-N path or the
    exact loop."""
    terms = block_terms(blocks, family)
    coef, start_eta = start_etas(family, frame, start)
    if coef is None and frame.shift is None and use_sampled(
            control, blocks, np.ones(blocks.n_cols, dtype=bool), family):
        fit = sampled_start(blocks, family, frame, frame.penalty_gamma(), control, terms,
                            start_eta)
        if fit is not None:
            return fit
    begun = begin(blocks, family, frame, control, terms, coef, start_eta)
    if isinstance(begun, Retry):
        return begun
    if not begun.qr_mode and use_sampled(control, blocks, begun.keep, family):
        state = State(begun.objective, begun.rhs, begun.gram, (begun.deviance, None, False))
        return sampled_irls(blocks, family, frame, begun.keep, begun.aliased, begun.penalty,
                            control, begun.coef, state, terms, exact=begun.coef is None)
    return iterate(family, frame, control, begun, start is not None)
