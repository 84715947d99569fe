"""Pieces every results class shares: information criteria, tests and the row fingerprint."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import one_of
from ..lazy import cached_property


def row_key(index: pd.Index, freq_weights: np.ndarray | None, rows: int = 65536) -> str:
    """Fingerprint of the rows a model was fit on, so that :func:`compare` can refuse to
    compare models fit on different data.

    Hashed over blocks of rows: a RangeIndex is never materialised (pandas would cache its
    values for good) and equals an integer index with the same labels. The rows of Dask data
    carry their fingerprint (hashed partition by partition where they live).
    """
    fingerprint = getattr(index, "fingerprint", None)
    if isinstance(fingerprint, str):
        return fingerprint
    h = hashlib.sha1()
    values = index if isinstance(index, pd.RangeIndex) else index.to_numpy()
    for s in range(0, len(index), rows):
        h.update(pd.util.hash_array(np.asarray(values[s : s + rows])).tobytes())
    if freq_weights is not None and not np.all(freq_weights == 1):  # unit weights = none
        h.update(np.ascontiguousarray(freq_weights, dtype=float).tobytes())
    return h.hexdigest()


class CriteriaMixin:
    """AIC and BIC from ``llf``, ``k_params`` and ``nobs`` (defined by the results class)."""

    llf: float
    k_params: int
    nobs: float

    @cached_property
    def aic(self) -> float:
        """Akaike information criterion, -2 llf + 2 k."""
        return -2.0 * self.llf + 2.0 * self.k_params

    @cached_property
    def bic(self) -> float:
        """Bayesian information criterion, -2 llf + k ln(nobs)."""
        return -2.0 * self.llf + self.k_params * np.log(self.nobs)


class LikelihoodMixin(CriteriaMixin):
    """AIC, BIC and the likelihood-ratio test against the intercept-only model (``llnull``,
    ``df_model`` defined by the results class)."""

    llnull: float
    df_model: float

    @cached_property
    def llr(self) -> float:
        """Likelihood-ratio statistic against the intercept-only model, 2 (llf - llnull)."""
        return 2.0 * (self.llf - self.llnull)

    @cached_property
    def llr_pvalue(self) -> float:
        """Chi-squared p-value of :attr:`llr` on ``df_model`` degrees of freedom."""
        return float(stats.chi2.sf(self.llr, self.df_model)) if self.df_model > 0 else np.nan

    @cached_property
    def prsquared(self) -> float:
        """McFadden's pseudo R-squared, 1 - llf / llnull."""
        return 1.0 - self.llf / self.llnull


def check_which(which: str, allowed: tuple[str, ...]) -> str:
    """The one check of ``predict(which=...)`` (the contract is in :mod:`glmclass.models.base`)."""
    if not isinstance(which, str) or which not in allowed:
        raise ValueError(f"which must be {one_of(allowed)}, got {which!r}")
    return which


def coef_table(params, bse, stat, pvalues, ci, stat_name: str, alpha: float) -> pd.DataFrame:
    """The coefficient table of a summary: coef, std err, z, P>|z| and the interval."""
    lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
    return pd.DataFrame({
        "coef": params, "std err": bse, stat_name: stat,
        f"P>|{stat_name}|": pvalues, lo: ci.iloc[:, 0], hi: ci.iloc[:, 1],
    })


def num(x: float):
    """A whole number as an int (for reports: 32, not 32.0)."""
    return int(x) if float(x).is_integer() else x
