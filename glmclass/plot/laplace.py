"""The 1-D Laplace approximation drawn against its density (PRML Fig. 4.14)."""

from __future__ import annotations

import numpy as np

from . import _common as C


def laplace_density(approx, *, ax=None, bounds: tuple[float, float] | None = None,
                    n: int = 400, log: bool = False):
    """Plot a 1-D density and its Laplace approximation N(z | z*, A^-1).

    Parameters
    ----------
    approx : LaplaceApproximation
        The result of ``gc.laplace`` on a 1-D density (it needs ``log_density``, ``mode``,
        ``cov`` and ``log_normaliser``).
    ax : matplotlib.axes.Axes, optional
    bounds : (float, float), optional
        The range of z drawn; default the mode -+ 5 standard deviations of the Gaussian.
    n : int
        Grid points.
    log : bool
        Draw ``-ln`` of both curves (PRML Fig. 4.14, right) instead of the densities.

    Returns
    -------
    matplotlib.axes.Axes
        The density ``f(z) / Z``, Z by the trapezoidal rule on the grid, and the Gaussian.
    """
    if approx.dim != 1:
        raise ValueError(f"plot draws 1-D densities; this approximation has M = {approx.dim} "
                         "dimensions")
    if approx.log_density is None:
        raise ValueError("this approximation was built from a mode and a Hessian, without the "
                         "density: there is no density to draw (use gc.laplace(log_density, x0))")
    mode, sd = float(np.ravel(approx.mode)[0]), float(np.sqrt(np.ravel(approx.cov)[0]))
    lo, hi = bounds if bounds is not None else (mode - 5 * sd, mode + 5 * sd)
    z = np.linspace(lo, hi, n)
    logf = np.array([float(approx.log_density(v)) for v in z])
    f = np.exp(logf - np.max(logf))
    dens = f / np.trapezoid(f, z)
    gauss = np.exp(approx.logpdf(z))
    ax = C.get_axes(ax)
    if log:
        with np.errstate(divide="ignore"):
            ax.plot(z, -np.log(dens), label="-ln p(z)")
        ax.plot(z, -np.log(gauss), "--", label="-ln q(z), Laplace")
    else:
        ax.fill_between(z, dens, alpha=0.35, label="p(z), normalised on the grid")
        ax.plot(z, gauss, "--", label=f"Laplace N(z | {mode:.3g}, {sd:.3g}^2)")
    ax.axvline(mode, color="0.5", lw=0.8)
    ax.set(xlabel="z", ylabel="-ln density" if log else "density")
    ax.legend(fontsize="small")
    return ax
