"""One tidy coefficient table for every model with estimates and standard errors
(``results.tidy()``), in the layout of R's ``broom::tidy``."""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ["term", "estimate", "std_error", "statistic", "p_value", "conf_low", "conf_high"]


def tidy_frame(res, alpha: float = 0.05, exponentiate: bool = False,
               conf_int: pd.DataFrame | None = None) -> pd.DataFrame:
    """A long table with one row per coefficient.

    Parameters
    ----------
    res : LikelihoodResults
        Read through the public names of :class:`~glmclass.results.likelihood.
        LikelihoodResults`: ``tidy_labels``, ``flat_params``, ``flat()`` of ``bse``,
        ``tvalues`` and ``pvalues``, and ``conf_int`` (rows in the same flat order).
    alpha : float
        1 - confidence level of ``conf_low``/``conf_high``.
    exponentiate : bool
        exp() of ``estimate`` and of the interval (odds ratios for a logit link, relative
        risks for a multinomial logit); ``std_error``, ``statistic`` and ``p_value`` stay on
        the scale of the coefficients, as in broom.
    conf_int : pandas.DataFrame, optional
        Intervals to use instead of ``res.conf_int(alpha)`` (e.g. profile intervals).

    Returns
    -------
    pandas.DataFrame
        Columns ``term, estimate, std_error, statistic, p_value, conf_low, conf_high``;
        multinomial models have a ``level`` column first (broom's ``y.level``).
    """
    if not isinstance(exponentiate, (bool, np.bool_)):
        raise ValueError(f"exponentiate must be True or False, got {exponentiate!r}")
    ci = res.conf_int(alpha) if conf_int is None else conf_int
    cols = dict(res.tidy_labels)  # term (and level), in the flat order of the coefficients
    values = [res.flat_params, res.flat(res.bse), res.flat(res.tvalues), res.flat(res.pvalues)]
    lo, hi = ci["lower"].to_numpy(), ci["upper"].to_numpy()
    est = values[0]
    if exponentiate:
        with np.errstate(over="ignore"):
            est, lo, hi = np.exp(est), np.exp(lo), np.exp(hi)
    cols.update({"estimate": est, "std_error": values[1], "statistic": values[2],
                 "p_value": values[3], "conf_low": lo, "conf_high": hi})
    return pd.DataFrame(cols)


class TidyMixin:
    """``tidy()`` for results classes with Wald-type inference."""

    def tidy(self, alpha: float = 0.05, exponentiate: bool = False) -> pd.DataFrame:
        """Coefficient table as a DataFrame (R's ``broom::tidy``).

        Parameters
        ----------
        alpha : float
            1 - confidence level of the intervals (those of ``conf_int``).
        exponentiate : bool
            exp() of the estimates and interval bounds (odds ratios for a logit link).

        Returns
        -------
        pandas.DataFrame
            One row per coefficient: ``term, estimate, std_error, statistic, p_value,
            conf_low, conf_high`` (multinomial models: a ``level`` column first). The
            standard errors are those the fit reports (``cov_type``).
        """
        return tidy_frame(self, alpha, exponentiate)
