"""Residual diagnostics of a fitted GLM: the influence plot (studentized residuals against
leverage, points sized by Cook's distance) and the binned residual plot, the residual plot
that works for binary data.

References
----------
Gelman, A. and Hill, J. (2007). *Data Analysis Using Regression and Multilevel/Hierarchical
Models*, §5.6 (binned residuals; R ``arm::binnedplot``).
Fox, J. (2016). *Applied Regression Analysis and Generalized Linear Models*, 3rd ed., §11.5
(the influence plot; statsmodels ``influence_plot``, R ``car::influencePlot``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from . import _common as C

# --- influence ----------------------------------------------------------------------------------


def influence(results, *, external: bool = True, alpha: float = 0.05, size: float = 48,
              labels: bool = True, ax=None):
    """Influence plot: studentized residuals against leverage, points sized by Cook's distance
    (statsmodels' ``influence_plot``).

    Parameters
    ----------
    results : GLM, Logit or Probit results
        A maximum-likelihood fit with ``get_influence()``.
    external : bool
        Externally studentized residuals (R ``rstudent``, each row left out of its own
        dispersion), else internally studentized Pearson residuals (statsmodels'
        ``resid_studentized``, R ``rstandard(type="pearson")``).
    alpha : float
        Rows with ``|residual|`` above the ``1 - alpha/2`` quantile of t(df_resid), or with
        leverage above ``2 (df_model + 1) / nobs``, are named (statsmodels' rule); both
        thresholds are drawn as dotted lines.
    size : float
        Marker size (diameter in points) of the row with the largest Cook's distance; the
        smallest gets 8, as statsmodels scales them (area linear in Cook's distance).
    labels : bool
        Name the rows beyond a threshold by their index label.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        One point per row with positive weight (its offsets: leverage, residual).
    """
    infl = results.get_influence()
    lev = infl.hat_matrix_diag
    resid = infl.resid_studentized_external if external else infl.resid_studentized
    cooks = infl.cooks_distance[0].to_numpy(dtype=float)
    span = np.ptp(cooks)
    area = (cooks - cooks.min()) * (size**2 - 8**2) / (span if span > 0 else 1.0) + 8**2
    ax = C.get_axes(ax)
    ax.scatter(lev.to_numpy(), resid.to_numpy(), s=area, alpha=0.6, edgecolors="0.2",
               linewidths=0.5)
    cut = float(stats.t.ppf(1 - alpha / 2, results.df_resid))
    high = 2.0 * (results.df_model + 1) / results.nobs
    for y in (-cut, cut):
        ax.axhline(y, color="0.5", linestyle=":", linewidth=1)
    ax.axvline(high, color="0.5", linestyle=":", linewidth=1)
    ax.axhline(0.0, color="0.7", linewidth=0.8)
    if labels:
        big = (np.abs(resid.to_numpy()) > cut) | (lev.to_numpy() > high)
        for name, x, y in zip(lev.index[big], lev.to_numpy()[big], resid.to_numpy()[big],
                              strict=True):
            ax.annotate(str(name), (x, y), xytext=(4, 4), textcoords="offset points",
                        fontsize="x-small")
    kind = "externally" if external else "internally"
    ax.set(xlabel="Leverage (hat value)", ylabel=f"Studentized residual ({kind})")
    ax.margins(0.08)
    return ax


# --- binned residuals ---------------------------------------------------------------------------


def default_bins(n: int) -> int:
    """arm's ``binnedplot`` default: sqrt(n) bins from 100 rows, 10 from 11 to 99, n/2 below."""
    if n >= 100:
        return int(np.floor(np.sqrt(n)))
    return 10 if n > 10 else max(n // 2, 1)


def _breaks(x: np.ndarray, nclass: int) -> np.ndarray:
    """arm's ``binned.resids`` breaks: equal counts of x, a break inside a run of ties moved
    below the run."""
    n = x.size
    index = np.floor(n * np.arange(1, nclass) / nclass).astype(int)   # 1-based in arm
    if np.any(index == 0):
        nclass = 1
    xs = np.sort(x)
    out = [-np.inf]
    if nclass > 1:
        for i in index:
            lo, hi = xs[i - 1], xs[i]
            if lo == hi:
                lo = -np.inf if lo == xs[0] else x[x < lo].max()
            out.append((lo + hi) / 2)
    else:
        out.append((xs[0] + xs[-1]) / 2)
    out.append(np.inf)
    return np.unique(out)


def binned_residuals_table(results, x=None, bins: int | None = None) -> pd.DataFrame:
    """Binned residuals (R ``arm::binned.resids``): the rows cut into bins of about equal
    counts of ``x``; per bin the mean of x, the mean response residual and its band.

    Parameters
    ----------
    results : results object
        A fit with one mean per row: ``fittedvalues`` and ``resid_response`` (GLM, Logit,
        Probit, Firth, BayesLogit).
    x : array-like or str, optional
        What to bin by: default the fitted mean (arm's "expected values"); an array of one
        value per row of the fit, or the name of a design column (e.g. ``"age"``) to look for
        a predictor's missing curvature.
    bins : int, optional
        Number of bins; default arm's (``floor(sqrt(n))`` from 100 rows).

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: ``xbar`` (mean x), ``ybar`` (mean residual), ``n`` (rows),
        ``x_lo`` and ``x_hi`` (range of x), ``two_se`` (2 sd / sqrt(n) of the residuals;
        arm's ``2se``): about 95 % of the ``ybar`` lie within +- ``two_se`` when the model
        is right.
    """
    resid = np.asarray(results.resid_response, dtype=float)
    if resid.ndim != 1:
        raise TypeError("binned residuals need one fitted mean per row (a binary or count "
                        "GLM); for a multinomial model, fit the level against the others "
                        "as a Logit")
    values = _binning_values(results, x, resid.size)
    keep = np.isfinite(values) & np.isfinite(resid)
    values, resid = values[keep], resid[keep]
    if bins is None:
        bins = default_bins(values.size)
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool) or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    edges = _breaks(values, int(bins))
    which = np.searchsorted(edges, values, side="left")     # (edges[k-1], edges[k]]: bin k
    rows = []
    for k in range(1, edges.size):
        sel = which == k
        m = int(sel.sum())
        if m == 0:
            continue
        xv, yv = values[sel], resid[sel]
        sd = float(np.std(yv, ddof=1)) if m > 1 else 0.0
        rows.append((xv.mean(), yv.mean(), m, xv.min(), xv.max(), 2 * sd / np.sqrt(m)))
    return pd.DataFrame(rows, columns=["xbar", "ybar", "n", "x_lo", "x_hi", "two_se"])


def _binning_values(results, x, n: int) -> np.ndarray:
    if x is None:
        return np.asarray(results.fittedvalues, dtype=float)
    if isinstance(x, str):
        names = list(results.model.exog_names)
        if x not in names:
            raise ValueError(f"x={x!r} is not a design column; the columns are {names} (or "
                             "pass an array of one value per row)")
        return np.asarray(results.model.exog, dtype=float)[:, names.index(x)]
    values = np.asarray(x, dtype=float).ravel()
    if values.size != n:
        raise ValueError(f"x has {values.size} values for the fit's {n} rows: pass one value "
                         "per row the model used")
    return values


def binned_residuals(results, x=None, *, bins: int | None = None, ax=None):
    """Binned residual plot (R ``arm::binnedplot``): the mean response residual per bin of the
    fitted mean (or of ``x``) with +-2 standard-error bands.

    Raw residuals of binary data fall on two curves and say nothing by eye; their bin means
    should scatter around 0 within the bands (about 95 % of them) when the model is right.

    Parameters
    ----------
    results, x, bins
        As :func:`binned_residuals_table`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The bin means as points (first line), the bands ``+-two_se`` as grey lines through
        the bins' mean x (second and third) and a dashed line at 0.
    """
    table = binned_residuals_table(results, x, bins)
    ax = C.get_axes(ax)
    xb = table["xbar"].to_numpy()
    ax.plot(xb, table["ybar"].to_numpy(), "o", markersize=4, color="k",
            label="mean residual")
    ax.plot(xb, table["two_se"].to_numpy(), color="0.6", label="+-2 SE")
    ax.plot(xb, -table["two_se"].to_numpy(), color="0.6")
    ax.axhline(0.0, color="0.3", linestyle="--", linewidth=1)
    outside = int(np.sum(np.abs(table["ybar"]) > table["two_se"]))
    what = "Expected value (fitted mean)" if x is None else (
        x if isinstance(x, str) else "x")
    ax.set(xlabel=what, ylabel="Average residual")
    ax.set_title(f"{len(table)} bins, {outside} outside +-2 SE", fontsize="small")
    return ax
