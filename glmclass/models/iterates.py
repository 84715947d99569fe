"""``fit(keep_iterates=True)``: the IRLS iterates of a GLM fit, replayed from its start.

The solver keeps no per-iteration state (it is a pure function of the rows, the start and a
control); the iterates are the fits stopped after 1, 2, ..., n iterations from the same start,
which the solver reaches deterministically, and each iteration's z and R are evaluated at the
coefficients before it. The cost is n(n + 1)/2 IRLS iterations, for the small data a reader
studies.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..results.iterates import IRLSIterates


def irls_iterates(problem, control, start: np.ndarray | None, n_iter: int) -> IRLSIterates:
    """The coefficients, working response z and weights R of each of ``n_iter`` iterations.

    Parameters
    ----------
    problem : GLMProblem
        The fitted model's problem (rows in memory).
    control : Control
        The fit's IRLS control (Newton's method, ``hessian="observed"``, weighs by the
        observed information).
    start : ndarray of shape (p,) or None
        The fit's starting coefficients (None: the family's starting means).
    n_iter : int
        Iterations of the fit.

    Returns
    -------
    IRLSIterates
    """
    fam, X, y = problem.family, problem.exog, problem.endog
    w, off = problem.prior_weights, problem.offset
    names = list(problem.data.exog_names)
    quiet = replace(control, progress=None)
    eta = fam.start_eta(y, w) if start is None else X @ start + off
    coefs, zs, rs, devs = [], [], [], []
    for k in range(1, n_iter + 1):
        r, u, _ = fam.irls_terms(y, eta, w, observed=control.hessian == "observed")
        with np.errstate(divide="ignore", invalid="ignore"):
            zs.append(np.where(r > 0, eta - off + u / r, np.nan))
        rs.append(r)
        fit = problem.irls(replace(quiet, maxiter=k), start)
        coefs.append(fit.coef)
        devs.append(fit.deviance)
        eta = problem.linear_predictor(fit.coef)
    it = pd.RangeIndex(1, n_iter + 1, name="iteration")
    rows = problem.data.index
    return IRLSIterates(pd.DataFrame(np.array(coefs).reshape(n_iter, len(names)), index=it,
                                     columns=names),
                        pd.DataFrame(np.array(zs).T, index=rows, columns=it),
                        pd.DataFrame(np.array(rs).T, index=rows, columns=it),
                        pd.Series(devs, index=it, name="deviance"))
