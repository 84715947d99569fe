"""The Laplace approximation of any density (PRML §4.4): ``gc.laplace(log_density, x0)``.

A density ``p(z) = f(z) / Z`` known up to its normaliser Z is approximated by the Gaussian
centred at the mode z* of ln f with precision ``A = -grad grad ln f(z*)`` (PRML eq. 4.131-4.134),
and ``ln Z ~ ln f(z*) + (M/2) ln 2 pi - (1/2) ln |A|`` (eq. 4.135). The Bayesian models use the
same record for their posterior (:attr:`BayesGLMResults.laplace
<glmclass.results.bayes.BayesGLMResults.laplace>`), whose ``log_normaliser`` is the evidence.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.4 (eq. 4.125-4.135,
Fig. 4.14: the 1-D example ``p(z) ~ exp(-z^2 / 2) sigma(20 z + 4)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ..lazy import cached_property
from ..plot.laplace import laplace_density
from .laplace import log_normaliser
from .linalg import NotPositiveDefinite, spd_inverse, spd_solve

#: Relative step of the central differences; each derivative is Richardson-extrapolated from
#: steps h and h/2 (error O(h^4)): about 1e-10 relative on PRML's Fig. 4.14 density.
DIFF_STEP = 1e-3


@dataclass(frozen=True)
class LaplaceApproximation:
    """A Gaussian approximation N(mode, A^-1) of the density proportional to exp(log_density).

    Attributes
    ----------
    mode : ndarray of shape (M,), or float
        z*, the maximum of ln f (a float when the start was a number).
    precision : ndarray of shape (M, M)
        A = -grad grad ln f(z*) (PRML eq. 4.132).
    log_density_at_mode : float
        ln f(z*).
    log_density : callable or None
        ln f itself (None when the record was built from a fit's mode and Hessian).
    derivatives : str
        Where the gradient and Hessian came from: ``"given"``, or which were computed by
        central differences.
    converged : bool
        Whether the search for the mode met its tolerance.
    n_iter : int
        Iterations of that search.
    """

    mode: np.ndarray | float
    precision: np.ndarray
    log_density_at_mode: float
    log_density: Callable | None = None
    derivatives: str = "given"
    converged: bool = True
    n_iter: int = 0

    @property
    def dim(self) -> int:
        """M, the dimension of z."""
        return int(self.precision.shape[0])

    @cached_property
    def cov(self) -> np.ndarray | float:
        """A^-1, the covariance of the Gaussian (a float in 1-D started from a number)."""
        cov = spd_inverse(self.precision)
        return float(cov[0, 0]) if np.ndim(self.mode) == 0 else cov

    @cached_property
    def log_normaliser(self) -> float:
        """ln Z ~ ln f(z*) + (M/2) ln 2 pi - (1/2) ln |A| (PRML eq. 4.135; ln|A| by Cholesky)."""
        return log_normaliser(self.log_density_at_mode, self.precision)

    def logpdf(self, z) -> np.ndarray:
        """ln N(z | z*, A^-1) of points ``z`` of shape (n, M) (or (n,) in 1-D)."""
        z = np.asarray(z, dtype=float).reshape(-1, self.dim)
        d = z - np.atleast_1d(self.mode)
        quad = np.einsum("ij,jk,ik->i", d, self.precision, d)
        return -0.5 * quad + self.log_density_at_mode - self.log_normaliser

    def plot(self, ax=None, bounds: tuple[float, float] | None = None, n: int = 400,
             log: bool = False):
        """Draw the density against its Gaussian (1-D only; PRML Fig. 4.14).

        The density ``f(z) / Z`` is normalised on the grid (trapezoidal rule) so that both
        curves integrate to one; ``log=True`` draws ``-ln`` of both instead (the figure's right
        panel). Returns the matplotlib Axes.
        """
        return laplace_density(self, ax=ax, bounds=bounds, n=n, log=log)

    def __repr__(self) -> str:
        return (f"<LaplaceApproximation: M={self.dim}, log_normaliser="
                f"{self.log_normaliser:.6g}, derivatives {self.derivatives}>")


def laplace(log_density: Callable, x0, grad: Callable | None = None,
            hess: Callable | None = None, tol: float = 1e-10,
            maxiter: int = 200) -> LaplaceApproximation:
    """The Laplace approximation of the density proportional to ``exp(log_density(z))``.

    The mode is found by maximising ``log_density`` from ``x0`` (BFGS, then Newton steps with
    the Hessian to polish it); ``A`` is minus the Hessian at the mode. Derivatives not given are
    computed by central differences (the gradient from values; the Hessian from the gradient,
    or from values when no gradient is given): :attr:`LaplaceApproximation.derivatives` says
    which.

    Parameters
    ----------
    log_density : callable
        ``ln f(z)`` up to a constant: takes a float when ``x0`` is a number, else an ndarray of
        shape (M,); returns a float.
    x0 : float or array-like of shape (M,)
        Where the search for the mode starts.
    grad : callable, optional
        Gradient of ``log_density``, shape (M,) (a float in 1-D).
    hess : callable, optional
        Hessian of ``log_density``, shape (M, M) (a float in 1-D).
    tol : float
        Stop when the gradient's largest entry falls below ``tol (1 + |ln f|)``.
    maxiter : int
        Largest number of iterations of the mode search.

    Returns
    -------
    LaplaceApproximation
        ``mode``, ``cov``, ``log_normaliser`` (ln Z ~ ln f(z*) + (M/2) ln 2 pi - ln|A| / 2)
        and ``plot()``.

    Raises
    ------
    ValueError
        When ``log_density`` is not finite at ``x0``, or ``-`` its Hessian at the mode found is
        not positive definite (no maximum there: start elsewhere).

    Examples
    --------
    PRML's Fig. 4.14, ``p(z) ~ exp(-z^2 / 2) sigma(20 z + 4)``:

    >>> import numpy as np
    >>> from scipy.special import log_expit
    >>> import glmclass as gc
    >>> lap = gc.laplace(lambda z: -z**2 / 2 + log_expit(20 * z + 4), 0.0)
    >>> round(lap.mode, 4), round(lap.cov, 4)
    (0.0775, 0.3931)
    >>> ax = lap.plot()                                              # doctest: +SKIP
    """
    scalar = np.ndim(x0) == 0
    x = np.atleast_1d(np.asarray(x0, dtype=float)).copy()
    shape = (lambda z: float(z[0])) if scalar else (lambda z: z)

    def f(z):
        return float(log_density(shape(z)))

    if not np.isfinite(f(x)):
        raise ValueError(f"x0: log_density is not finite at the start {x0!r}; start where the "
                         "density is positive")
    made = []
    if grad is None:
        made.append("gradient")
        g = _numerical_gradient(f)
    else:
        def g(z):
            return np.atleast_1d(np.asarray(grad(shape(z)), dtype=float))
    if hess is None:
        made.append("Hessian" + (" (from the gradient)" if grad is not None else " (from values)"))
        h = _numerical_hessian(g) if grad is not None else _hessian_from_values(f)
    else:
        def h(z):
            return np.atleast_2d(np.asarray(hess(shape(z)), dtype=float))
    best = optimize.minimize(lambda z: -f(z), x, jac=lambda z: -g(z), method="BFGS",
                             options={"gtol": 1e-8, "maxiter": maxiter})
    x, n_iter = best.x, int(best.nit)
    converged = False
    for _ in range(maxiter):  # Newton's steps on the mode (BFGS stops short of it)
        gx = g(x)
        if np.max(np.abs(gx)) <= tol * (1.0 + abs(f(x))):
            converged = True
            break
        try:
            step = spd_solve(-h(x), gx)
        except NotPositiveDefinite:
            break
        x, n_iter = x + step, n_iter + 1
    A = -h(x)
    A = (A + A.T) / 2.0
    try:
        spd_solve(A, np.ones(A.shape[0]))
    except NotPositiveDefinite:
        raise ValueError(f"the Hessian of log_density at z = {np.array2string(x)} is not "
                         "negative definite: no maximum there; start x0 nearer the mode") from None
    mode = float(x[0]) if scalar else x
    how = "given" if not made else "numerical " + " and ".join(made)
    return LaplaceApproximation(mode, A, f(x), log_density, how, converged, n_iter)


def _richardson(diff: Callable, h: np.ndarray):
    """Central difference ``diff(h)`` (error O(h^2)) extrapolated to O(h^4) from h and h/2."""
    return (4.0 * diff(h / 2.0) - diff(h)) / 3.0


def _steps(z: np.ndarray) -> np.ndarray:
    return DIFF_STEP * np.maximum(1.0, np.abs(z))


def _numerical_gradient(f: Callable) -> Callable:
    def g(z):
        out = np.empty(z.size)
        for i in range(z.size):
            e = np.zeros(z.size)
            e[i] = 1.0
            out[i] = _richardson(lambda h, e=e: (f(z + h * e) - f(z - h * e)) / (2.0 * h),
                                 _steps(z)[i])
        return out
    return g


def _numerical_hessian(g: Callable) -> Callable:
    def h(z):
        out = np.empty((z.size, z.size))
        for i in range(z.size):
            e = np.zeros(z.size)
            e[i] = 1.0
            out[:, i] = _richardson(lambda t, e=e: (g(z + t * e) - g(z - t * e)) / (2.0 * t),
                                    _steps(z)[i])
        return (out + out.T) / 2.0
    return h


def _hessian_from_values(f: Callable) -> Callable:
    def h(z):
        m = z.size
        step = _steps(z)
        out = np.empty((m, m))
        f0 = f(z)
        eye = np.eye(m)
        for i in range(m):
            ei = eye[i]
            out[i, i] = _richardson(
                lambda t, ei=ei: (f(z + t * ei) - 2.0 * f0 + f(z - t * ei)) / t**2, step[i])
            for j in range(i):
                ej, r = eye[j], step[j] / step[i]
                out[i, j] = out[j, i] = _richardson(
                    lambda t, ei=ei, ej=ej, r=r: (f(z + t * ei + r * t * ej)
                                                  - f(z + t * ei - r * t * ej)
                                                  - f(z - t * ei + r * t * ej)
                                                  + f(z - t * ei - r * t * ej))
                    / (4.0 * r * t * t), step[i])
        return out
    return h
