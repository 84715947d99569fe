"""First-order fits of GLMs and the multinomial logit: batch gradient descent, stochastic
gradient descent (one row at a time) and mini-batch gradient descent.

These are the optimisers the chapter starts from (PRML §3.1.3, §4.3.2; the lecture notes'
``gd`` / ``sgd`` / ``minibatch``), offered next to IRLS so that their loss curves can be
compared with its few Newton steps. They minimise the same negative log-likelihood and, run to
convergence, reach the same maximum-likelihood estimate.

- ``"gd"``: full-batch steps; without a learning rate, Armijo backtracking (the step halves
  until the loss falls by half the first-order prediction, and may double again next time),
  which converges for any family and link.
- ``"sgd"`` and ``"minibatch"``: steps on random rows (batch size 1) or random batches, in a
  fresh seeded order every epoch. By default each epoch starts with one full-gradient pass and
  every stochastic step is corrected by it (SVRG, Johnson & Zhang 2013): the gradient noise
  then vanishes at the optimum, so a constant learning rate converges to the exact MLE instead
  of wandering around it. ``variance_reduction=False`` gives plain SGD, which needs a decaying
  ``schedule`` and never gets much closer than its noise allows.

Every full pass (the loss and gradient of each epoch, the final Fisher Gram) reads the rows
through a :class:`~glmclass.rows.blocks.RowBlocks` source. The stochastic steps read the rows
in windows of :data:`SHUFFLE_ROWS` consecutive rows (:func:`windows`, from the source's
:meth:`~glmclass.rows.blocks.RowBlocks.stream`), in row order, each window in a fresh random
order: data of at most that many rows are shuffled as a whole, and larger data (out of core,
on Dask) need only one window on the caller's side, with the same steps wherever the rows
live. The loss is reported on the deviance scale (twice the negative log-likelihood up to
the saturated model's constant), as the IRLS history; the step and the gradient tolerance work
on the mean over rows, so the defaults do not depend on N.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §3.1.3, §4.3.2-4.3.4.
Johnson, R. and Zhang, T. (2013). Accelerating stochastic gradient descent using predictive
variance reduction. *NIPS* 26.
Nocedal, J. and Wright, S. J. (2006). *Numerical Optimization*, 2nd ed., §3.1 (Armijo).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator

import numpy as np

from ..families import Family
from ..likelihoods.multinomial import softmax_parts
from ..rows.blocks import Block, RowBlocks
from .control import GRADIENT_METHODS, Control
from .fit import Fit

#: Rows shuffled together by the sequential methods (SGD, mini-batches, the perceptron):
#: each epoch visits consecutive windows of this many rows in row order, each in a fresh random
#: order, so the order does not depend on where the rows live (memory, Dask partitions).
SHUFFLE_ROWS = 65536

METHODS = GRADIENT_METHODS
SCHEDULES = ("constant", "inverse_sqrt", "inverse")

#: ``loss(X, y, weights, offset, coef) -> (half_deviance, gradient)``, sums over the rows given.
Loss = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                tuple[float, np.ndarray]]




def gradient_control(method: str, n_rows: int, learning_rate=None, schedule: str = "constant",
                     batch_size=None, max_epochs=None, gtol=1e-6, seed=None,
                     variance_reduction: bool = True, shuffle: bool = True,
                     history: str = "epoch") -> Control:
    """Validate the gradient settings, naming the argument at fault.

    Raises
    ------
    ValueError
        For a learning rate that is not positive and finite, an unknown schedule, a batch size
        outside 1..n_rows (or given with "sgd"/"gd"), a non-positive max_epochs or gtol, or a
        bad seed.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if callable(learning_rate):
        if schedule != "constant":
            raise ValueError("learning_rate is a callable k -> eta_k, which is the schedule: "
                             f"leave schedule='constant' (got {schedule!r})")
    elif learning_rate is not None:
        ok = isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool)
        if not ok or not (np.isfinite(learning_rate) and learning_rate > 0):
            raise ValueError(f"learning_rate must be a positive, finite number (or None for the "
                             f"default), got {learning_rate!r}")
        learning_rate = float(learning_rate)
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    defaults = {"gd": n_rows, "sgd": 1, "minibatch": min(32, n_rows)}
    if batch_size is None:
        batch_size = defaults[method]
    elif method != "minibatch":
        raise ValueError(f"batch_size is for method='minibatch' ({method!r} uses "
                         f"{'every row' if method == 'gd' else 'one row'} per step)")
    elif (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
          or not 1 <= batch_size <= n_rows):
        raise ValueError(f"batch_size must be an integer from 1 to the number of rows "
                         f"({n_rows}), got {batch_size!r}")
    if max_epochs is None:
        max_epochs = 5000 if method == "gd" else 500
    if isinstance(max_epochs, bool) or not isinstance(max_epochs, numbers.Integral) \
            or max_epochs < 1:
        raise ValueError(f"max_epochs must be a positive integer, got {max_epochs!r}")
    if isinstance(gtol, bool) or not isinstance(gtol, numbers.Real) or not (
            np.isfinite(gtol) and gtol > 0):
        raise ValueError(f"gtol must be a positive, finite number (e.g. 1e-6), got {gtol!r}")
    if not (seed is None or isinstance(seed, np.random.Generator)
            or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)
                and seed >= 0)):
        raise ValueError(f"seed must be None, a non-negative integer or a "
                         f"numpy.random.Generator, got {seed!r}")
    if not isinstance(variance_reduction, (bool, np.bool_)):
        raise ValueError(f"variance_reduction must be True or False, got "
                         f"{variance_reduction!r}")
    if not isinstance(shuffle, (bool, np.bool_)):
        raise ValueError(f"shuffle must be True or False, got {shuffle!r}")
    if history not in ("epoch", "step"):
        raise ValueError(f"history must be 'epoch' or 'step', got {history!r}")
    return Control.for_method(method, learning_rate=learning_rate, schedule=schedule,
                              batch_size=int(batch_size), max_epochs=int(max_epochs),
                              gtol=float(gtol), seed=seed,
                              variance_reduction=bool(variance_reduction),
                              shuffle=bool(shuffle), history=history)



# --- losses ----------------------------------------------------------------------------------
def glm_loss(family: Family) -> Loss:
    """Half the deviance of a GLM and its gradient ``-X'u`` (u the score per unit of eta)."""

    def loss(X, y, w, off, coef):
        eta = X @ coef + off
        with np.errstate(over="ignore", invalid="ignore"):
            _, u, dev = family.irls_terms(y, eta, w)
            return 0.5 * dev, -(X.T @ u)

    return loss


def multinomial_loss(n_levels: int) -> Loss:
    """Negative log-likelihood of the baseline-category multinomial logit and its gradient
    (coefficients level-major, as :func:`glmclass.solvers.newton.multinomial_deviance`);
    ``y`` holds integer codes, 0 the reference level."""
    k1 = n_levels - 1
    levels = np.arange(1, n_levels)[None, :]

    def loss(X, y, w, off, coef):
        B = coef.reshape(k1, -1).T
        with np.errstate(over="ignore", invalid="ignore"):
            eta = X @ B + off[:, None]
        if not np.all(np.isfinite(eta)):
            return np.inf, np.zeros_like(coef)
        codes = y.astype(np.intp, copy=False)
        lse, prob, _ = softmax_parts(eta)
        obs = np.where(codes > 0, eta[np.arange(eta.shape[0]), np.maximum(codes - 1, 0)], 0.0)
        resid = (codes[:, None] == levels) - prob  # t - p on the non-reference levels
        grad = -(X.T @ (w[:, None] * resid))
        return float(-(w @ (obs - lse))), grad.T.ravel()

    return loss


# --- the optimiser ---------------------------------------------------------------------------
def _joined(blocks: list[Block]) -> Block:
    if len(blocks) == 1:
        return blocks[0]
    y = None if blocks[0].y is None else np.concatenate([b.y for b in blocks])
    return Block(np.concatenate([b.X for b in blocks]), y,
                 np.concatenate([b.weights for b in blocks]),
                 np.concatenate([b.offset for b in blocks]), blocks[0].start)


def _head(b: Block, r: int) -> Block:
    return Block(b.X[:r], None if b.y is None else b.y[:r], b.weights[:r], b.offset[:r], 0)


def _tail(b: Block, r: int) -> Block:
    return Block(b.X[r:], None if b.y is None else b.y[r:], b.weights[r:], b.offset[r:], 0)


def windows(rows: RowBlocks, size: int | None = None) -> Iterator[Block]:
    """Consecutive windows of ``size`` rows (the last one shorter) in row order, gathered from
    the source's stream whatever its block or partition sizes.

    Parameters
    ----------
    rows : RowBlocks
    size : int, optional
        Rows per window (default :data:`SHUFFLE_ROWS`).

    Yields
    ------
    Block
        The window's rows (``start`` is not meaningful).
    """
    size = SHUFFLE_ROWS if size is None else int(size)
    buf: list[Block] = []
    have = 0
    for b in rows.stream():
        if b.X.shape[0] == 0:
            continue
        buf.append(b)
        have += b.X.shape[0]
        while have >= size:
            joined = _joined(buf)
            yield _head(joined, size)
            rest = _tail(joined, size)
            have -= size
            buf = [rest] if have else []
    if buf:
        yield _joined(buf)


def window_source(rows: RowBlocks) -> Callable[[], Iterator[Block]]:
    """What an epoch iterates: the windows gathered once when the rows fit in one (small data
    are read once, not once per epoch), else a fresh stream each epoch."""
    if rows.n_rows <= SHUFFLE_ROWS:
        held = list(windows(rows))
        return lambda: iter(held)
    return lambda: windows(rows)


def _full(blocks: RowBlocks, loss: Loss, coef: np.ndarray) -> tuple[float, np.ndarray]:
    """Loss and gradient summed over every row (one pass over the blocks)."""

    def one(b: Block):
        f, g = loss(b.X, b.y, b.weights, b.offset, coef)
        return f, g

    return blocks.reduce(one, (0.0, np.zeros(coef.shape)))


def _step_size(control: Control, epoch: int, base: float, k: int = 0) -> float:
    """The step of this epoch (schedules) or of update ``k`` (a callable learning rate)."""
    if callable(control.learning_rate):
        eta = control.learning_rate(k)
        ok = isinstance(eta, numbers.Real) and not isinstance(eta, bool)
        if not ok or not (np.isfinite(eta) and eta > 0):
            raise ValueError(f"learning_rate({k}) returned {eta!r}; it must return a positive, "
                             "finite number")
        return float(eta)
    if control.schedule == "inverse_sqrt":
        return base / np.sqrt(1.0 + epoch)
    if control.schedule == "inverse":
        return base / (1.0 + epoch)
    return base


def minimise(loss: Loss, blocks: RowBlocks, start: np.ndarray,
             control: Control, smoothness: tuple[float, float]) -> Fit:
    """Minimise a loss by (stochastic / mini-batch) gradient descent.

    Parameters
    ----------
    loss : callable
        ``loss(X, y, weights, offset, coef) -> (value, gradient)``, sums over the rows given.
    blocks : RowBlocks
        The rows, for full passes and (streamed in windows) for the random batches.
    start : ndarray of shape (m,)
    control : Control
    smoothness : (float, float)
        Upper bounds of the curvature of the mean loss over all rows (L) and over one row
        (L_max), for the default step of the stochastic methods.

    Returns
    -------
    Fit
    """
    coef = np.asarray(start, dtype=float).copy()
    wsum = float(blocks.reduce(lambda b: float(np.sum(b.weights)), 0.0))
    f, g = _full(blocks, loss, coef)
    if not np.isfinite(f):
        raise ValueError("the loss is not finite at the starting values; give start_params")
    if control.method == "gd":
        return _batch(loss, blocks, coef, f, g, wsum, control)
    return _stochastic(loss, blocks, coef, f, g, wsum, control, smoothness)


def _batch(loss, blocks, coef, f, g, wsum, control: Control) -> Fit:
    """Full-batch gradient descent: a fixed step, or Armijo backtracking."""
    step = control.learning_rate if control.learning_rate is not None else 1.0
    first = _step_size(control, 0, step)
    history, norms = [], []
    message, converged, it = "", False, 0
    for it in range(1, control.max_epochs + 1):
        gm = g / wsum
        eta = _step_size(control, it - 1, step, it - 1)
        while True:
            new = coef - eta * gm
            f_new, g_new = _full(blocks, loss, new)
            if control.learning_rate is not None:
                break
            # Armijo: the mean loss falls by at least half the first-order prediction
            if np.isfinite(f_new) and f_new / wsum <= f / wsum - 0.5 * eta * (gm @ gm):
                break
            eta /= 2.0
            if eta < 1e-14:
                message = "the line search could not reduce the loss"
                break
        if message:
            break
        if not np.isfinite(f_new):
            message = "the loss became infinite: lower the learning rate"
            break
        coef, f, g = new, f_new, g_new
        if control.learning_rate is None:
            step = 2.0 * eta  # try a longer step next time
        history.append(2.0 * f)
        norms.append(float(np.max(np.abs(g / wsum))))
        if norms[-1] < control.gtol:
            converged = True
            break
    if not converged and not message:
        message = f"the gradient norm did not fall below gtol in {control.max_epochs} iterations"
    return Fit(coef=coef, loss=f, gradient=g, n_iter=it, converged=converged,
               history=tuple(history), grad_norms=tuple(norms), learning_rate=first,
               message=message)


def _stochastic(loss, blocks, coef, f, g, wsum, control: Control,
                smoothness) -> Fit:
    """SGD / mini-batch steps in a random order per window and epoch (SVRG-corrected by
    default)."""
    n, b = blocks.n_rows, control.batch_size
    L, L_max = smoothness
    # curvature of a batch of b rows drawn without replacement (between L_max and L)
    L_b = (n - b) / (b * max(n - 1, 1)) * L_max + n * (b - 1) / (b * max(n - 1, 1)) * L
    base = control.learning_rate if control.learning_rate is not None else 1.0 / (4.0 * L_b)
    first = _step_size(control, 0, base)
    steps = {"k": 0, "history": [], "norms": []}  # update count; per-step records

    def record(c):
        fc, gc = _full(blocks, loss, c)
        steps["history"].append(2.0 * fc)
        steps["norms"].append(float(np.max(np.abs(gc / wsum))))

    rng = np.random.default_rng(control.seed)
    history, norms = [], []
    message, converged, epoch = "", False, 0
    mean_w = wsum / n
    epoch_rows = window_source(blocks)
    for epoch in range(1, control.max_epochs + 1):

        def eta(k, e=epoch):
            return _step_size(control, e - 1, base, k)

        snap, mu = coef.copy(), g / wsum  # SVRG anchor: the full mean gradient at the snapshot
        for win in epoch_rows():
            coef = _window_steps(loss, win, rng, coef, snap, mu, eta, mean_w, control, steps,
                                 record if control.history == "step" else None)
        f, g = _full(blocks, loss, coef)
        if not np.isfinite(f):
            message = "the loss became infinite: lower the learning rate"
            break
        history.append(2.0 * f)
        norms.append(float(np.max(np.abs(g / wsum))))
        if norms[-1] < control.gtol:
            converged = True
            break
    if not converged and not message:
        message = f"the gradient norm did not fall below gtol in {control.max_epochs} epochs"
    if control.history == "step":
        history, norms = steps["history"], steps["norms"]
    return Fit(coef=coef, loss=f, gradient=g, n_iter=epoch, converged=converged,
               history=tuple(history), grad_norms=tuple(norms), learning_rate=first,
               message=message)


def _window_steps(loss, win: Block, rng: np.random.Generator, coef: np.ndarray,
                  snap: np.ndarray, mu: np.ndarray, eta: Callable, mean_w: float,
                  control: Control, steps: dict,
                  record: Callable | None) -> np.ndarray:
    """The stochastic steps over one window's rows, in batches of a fresh random order (row
    order with ``shuffle=False``); ``eta(k)`` is the step of update k, counted in ``steps``;
    ``record(coef)`` after each step when the history is per step."""
    X, y, w, off = win.X, win.y, win.weights, win.offset
    m, b = X.shape[0], control.batch_size
    order = rng.permutation(m) if control.shuffle else np.arange(m)
    for s in range(0, m, b):
        at = order[s:s + b]
        xb, yb, wb, ob = X.take(at, axis=0), y.take(at), w.take(at), off.take(at)
        scale = 1.0 / (mean_w * at.size)  # batch sums -> means on the scale of the full loss
        _, gb = loss(xb, yb, wb, ob, coef)
        step = gb * scale
        if control.variance_reduction:
            _, ga = loss(xb, yb, wb, ob, snap)
            step = step - ga * scale + mu
        coef = coef - eta(steps["k"]) * step
        steps["k"] += 1
        if record is not None:
            record(coef)
    return coef
