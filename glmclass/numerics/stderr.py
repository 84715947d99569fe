"""Standard errors from a covariance's diagonal, saying so when a variance is negative.

References
----------
Cameron, A. C., Gelbach, J. B. and Miller, D. L. (2011). Robust inference with multiway
clustering. *J. Bus. Econ. Stat.* 29(2), 238-249.
Zeileis, A., Koell, S. and Graham, N. (2020). Various versatile variances. *J. Stat. Softw.*
95(1) (R's ``vcovCL``, its ``fix`` argument).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import GlmclassWarning, warn_user


def standard_errors(variances: np.ndarray, names: Any) -> np.ndarray:
    """Standard errors, the square roots of ``variances``; a negative variance gives NaN and
    one warning naming its coefficients (R's ``sqrt`` gives NaN with "NaNs produced").

    A covariance with a negative diagonal element is indefinite, as a two-way cluster-robust
    one can be (Cameron, Gelbach and Miller add the two one-way meats and subtract the
    intersection's): R's ``sandwich::vcovCL`` reports it as it is (``fix = FALSE``), and
    ``fix = TRUE`` sets its negative eigenvalues to zero.

    Parameters
    ----------
    variances : ndarray of shape (k,)
        The diagonal of a covariance (NaN for aliased coefficients: their errors stay NaN).
    names : sequence of length k, or a callable returning one
        The coefficients' labels, for the warning (a callable is called only when a variance
        is negative: labels can cost more than the square roots, e.g. a MultiIndex).

    Returns
    -------
    ndarray of shape (k,)
    """
    v = np.asarray(variances, dtype=float)
    negative = v < 0
    if not negative.any():  # the common case (NaN, of aliased coefficients, stays NaN)
        return np.sqrt(v)
    names = names() if callable(names) else names
    which = ", ".join(repr(_label(n)) for n, bad in zip(names, negative, strict=True) if bad)
    warn_user(f"the covariance has a negative variance for {which}: its standard error, "
              "z statistic, p-value and interval are NaN. A two-way cluster-robust "
              "covariance can be indefinite; fit(cov_type='cluster', cov_kwds={'groups': "
              "[...], 'fix': True}) sets its negative eigenvalues to zero (R's "
              "sandwich::vcovCL(fix = TRUE))", GlmclassWarning)
    return np.sqrt(np.where(negative, np.nan, v))


def _label(name) -> str:
    """A coefficient's label as a user reads it: a multinomial one, (level, term), as
    ``[level]term`` (the name wald_test reads)."""
    if isinstance(name, tuple) and len(name) == 2:
        return f"[{name[0]}]{name[1]}"
    return str(name)


def quadratic_form_errors(variances: np.ndarray, cov: np.ndarray, what: str) -> np.ndarray:
    """Standard errors of quadratic forms ``g' V g`` (predictions, marginal effects, linear
    combinations of the estimates) from their ``variances``.

    With a positive semi-definite covariance ``V`` a negative value is rounding below zero:
    its error is 0. With an indefinite ``V`` (a two-way cluster-robust covariance can be) a
    negative value is no variance: its error is NaN, with one warning (it used to be 0, an
    interval of width zero and a p-value of 0).

    Parameters
    ----------
    variances : ndarray
        ``g' V g`` of each quantity, any shape.
    cov : ndarray of shape (k, k)
        The covariance ``V`` they come from.
    what : str
        What the quantities are, for the warning (e.g. "predictions").

    Returns
    -------
    ndarray, the shape of ``variances``
    """
    v = np.asarray(variances, dtype=float)
    with np.errstate(invalid="ignore"):
        negative = v < 0
    if negative.any() and indefinite(cov):
        warn_user(f"the covariance of the estimates is indefinite (it has a negative "
                  f"eigenvalue), and {int(negative.sum())} of the {what} have a negative "
                  "variance: their standard errors are NaN. A two-way cluster-robust "
                  "covariance can be indefinite; fit(cov_type='cluster', cov_kwds={'groups': "
                  "[...], 'fix': True}) sets its negative eigenvalues to zero (R's "
                  "sandwich::vcovCL(fix = TRUE))", GlmclassWarning)
        return np.sqrt(np.where(negative, np.nan, v))
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.maximum(v, 0.0))


def indefinite(cov: np.ndarray, rtol: float = 1e-10) -> bool:
    """Whether the symmetric matrix ``cov`` has an eigenvalue below ``-rtol`` times its
    largest in magnitude (False when it has non-finite entries: nothing to decide)."""
    cov = np.asarray(cov, dtype=float)
    if cov.size == 0 or not np.all(np.isfinite(cov)):
        return False
    values = np.linalg.eigvalsh((cov + cov.T) / 2.0)
    return bool(values[0] < -rtol * max(float(np.abs(values).max()), np.finfo(float).tiny))
