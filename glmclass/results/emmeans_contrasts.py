"""Contrasts of estimated marginal means and their multiplicity adjustments (R's
``emmeans::contrast``).

A contrast is a linear combination ``c' m`` of the marginal means m of one ``by`` group, with
covariance ``c' G V G' c`` (G the gradient of the means in the coefficients, V the fit's
covariance), tested by ``z = c' m / se``. The methods build the coefficient rows c as emmeans'
``*.emmc`` functions (``pairwise``, ``revpairwise``, ``trt.vs.ctrl``, ``consec``, ``poly``,
``eff``). The adjustments within each group of m contrasts of k means:

- ``tukey``: the studentized range of k means at df = inf, ``p = P(Q_k > sqrt(2) |z|)``,
  intervals ``+- q_k(level) / sqrt(2)`` (pairwise comparisons only; other methods use
  ``sidak``, as emmeans);
- ``mvt``: the joint normal distribution of the m statistics (their correlation from the
  covariance), ``p = 1 - P(max_j |Z_j| < |z|)`` and intervals at the quantile of ``max |Z|``:
  exact (the Tukey or Dunnett adjustment, and any other set) up to the error of the numerical
  integration (scipy's Genz algorithm, absolute error ~1e-5, fixed seed);
- ``bonferroni``, ``sidak``: p-values and intervals for m tests;
- ``holm``, ``fdr`` (Benjamini-Hochberg): step-wise p-values with Bonferroni intervals (the
  step-wise methods have no intervals of their own; emmeans does the same);
- ``none``.

References
----------
Hsu, J. C. (1996). *Multiple Comparisons: Theory and Methods*. Chapman & Hall, ch. 5.
Genz, A. and Bretz, F. (2009). *Computation of Multivariate Normal and t Probabilities*.
Lenth, R. V. (2023). *emmeans*, R package 1.8 (``contrast``, ``summary.emmGrid``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ..numerics.stderr import quadratic_form_errors

METHODS = ("pairwise", "revpairwise", "trt.vs.ctrl", "consec", "poly", "eff")
ADJUSTS = ("tukey", "holm", "bonferroni", "sidak", "fdr", "mvt", "none")
#: The adjustment emmeans uses when none is named, per method (``dunnettx`` for
#: ``trt.vs.ctrl`` is an approximation of the exact Dunnett adjustment ``mvt`` gives).
DEFAULT_ADJUST = {"pairwise": "tukey", "revpairwise": "tukey", "trt.vs.ctrl": "mvt",
                  "consec": "mvt", "poly": "none", "eff": "fdr"}
#: Absolute error asked of the multivariate normal integrals of ``mvt``.
MVT_ABSEPS = 1e-5
_POLY_NAMES = ("linear", "quadratic", "cubic", "quartic")


def contrast_rows(method: str, labels: list[str], sep: str = " - "
                  ) -> tuple[np.ndarray, list[str]]:
    """The coefficient rows (n_contrasts, k) of ``method`` over k means and their labels.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    labels : list of str
        The k means' labels.
    sep : str
        ``" - "`` for differences, ``" / "`` for ratios (back-transformed log scales).
    """
    k = len(labels)
    rows, names = [], []

    def diff(i: int, j: int) -> None:
        c = np.zeros(k)
        c[i], c[j] = 1.0, -1.0
        rows.append(c)
        names.append(f"{labels[i]}{sep}{labels[j]}")

    if method == "pairwise":
        for i in range(k):
            for j in range(i + 1, k):
                diff(i, j)
    elif method == "revpairwise":
        for i in range(1, k):
            for j in range(i):
                diff(i, j)
    elif method == "trt.vs.ctrl":
        for i in range(1, k):
            diff(i, 0)
    elif method == "consec":
        for i in range(1, k):
            diff(i, i - 1)
    elif method == "poly":
        poly = _poly(k)
        rows = list(poly.T)
        names = [_POLY_NAMES[d] if d < len(_POLY_NAMES) else f"degree {d + 1}"
                 for d in range(poly.shape[1])]
    elif method == "eff":
        for i in range(k):
            c = np.full(k, -1.0 / k)
            c[i] += 1.0
            rows.append(c)
            names.append(f"{labels[i]} effect")
    else:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return np.array(rows).reshape(len(rows), k), names


def _poly(k: int) -> np.ndarray:
    """Orthogonal polynomial contrasts of degrees 1..min(6, k-1) in integer form (emmeans'
    ``poly.emmc``: R's ``poly(1:k)`` columns scaled to small integers)."""
    x = np.arange(1.0, k + 1.0)
    degree = min(6, k - 1)
    q, _ = np.linalg.qr(np.vander(x - x.mean(), degree + 1, increasing=True))
    out = np.empty((k, degree))
    for d in range(degree):
        con = q[:, d + 1] * np.sign(q[-1, d + 1])  # R's poly: the last value is positive
        con = con / con[con > 0.01].min()
        z = np.max(np.abs(con - np.round(con)))
        while z > 0.05:
            con = con / z
            z = np.max(np.abs(con - np.round(con)))
        out[:, d] = np.round(con)
    return out


def effective_adjust(adjust: str | None, method: str) -> str:
    """The adjustment used: the method's default when None; ``tukey`` is for pairwise
    comparisons only and becomes ``sidak`` otherwise (as emmeans)."""
    if adjust is None:
        return DEFAULT_ADJUST[method]
    if adjust not in ADJUSTS:
        raise ValueError(f"adjust must be one of {ADJUSTS}, got {adjust!r}")
    if adjust == "tukey" and method not in ("pairwise", "revpairwise"):
        return "sidak"
    return adjust


def adjusted(z: np.ndarray, corr: np.ndarray, n_means: int, adjust: str, level: float,
             df: float = np.inf) -> tuple[np.ndarray, float]:
    """Adjusted two-sided p-values of the statistics ``z`` of one family and the critical
    value of its intervals.

    Parameters
    ----------
    z : ndarray of shape (m,)
    corr : ndarray of shape (m, m)
        Correlation of the statistics (read by ``mvt``).
    n_means : int
        The number of means compared (``tukey``'s k).
    adjust : str
    level : float
    df : float
        Degrees of freedom of the reference distribution (inf: normal).
    """
    dist = stats.norm if not np.isfinite(df) else stats.t(df)
    m = z.size
    if m == 0:  # one mean in the group: nothing to compare
        return np.empty(0), np.nan
    raw = 2.0 * dist.sf(np.abs(z))
    alpha = 1.0 - level
    bonf_q = float(dist.isf(alpha / (2.0 * m)))
    if adjust == "none" or m == 1 and adjust != "tukey":
        return raw, float(dist.isf(alpha / 2.0))
    if adjust == "bonferroni":
        return np.minimum(1.0, m * raw), bonf_q
    if adjust == "sidak":
        return 1.0 - (1.0 - raw) ** m, float(dist.isf((1.0 - level ** (1.0 / m)) / 2.0))
    if adjust == "holm":
        return _holm(raw), bonf_q
    if adjust == "fdr":
        return _fdr(raw), bonf_q
    if adjust == "tukey":
        rng = stats.studentized_range(n_means, df)
        return rng.sf(np.sqrt(2.0) * np.abs(z)), float(rng.ppf(level) / np.sqrt(2.0))
    return _mvt(z, corr, level)


def _holm(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p)
    steps = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(1.0, steps)
    return out


def _fdr(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p)[::-1]
    steps = np.minimum.accumulate(m / np.arange(m, 0, -1) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(1.0, steps)
    return out


def _box_probability(q: float, corr: np.ndarray) -> float:
    """P(max_j |Z_j| < q) for Z ~ N(0, corr)."""
    m = corr.shape[0]
    return float(stats.multivariate_normal.cdf(
        np.full(m, q), mean=np.zeros(m), cov=corr, allow_singular=True, maxpts=200000 * m,
        abseps=MVT_ABSEPS, releps=0.0, lower_limit=np.full(m, -q),
        rng=np.random.default_rng(0)))


def _mvt(z: np.ndarray, corr: np.ndarray, level: float) -> tuple[np.ndarray, float]:
    """p-values and critical value of the ``mvt`` adjustment (see the module docstring)."""
    p = np.array([1.0 - _box_probability(abs(v), corr) for v in z])
    m = z.size
    lo, hi = float(stats.norm.isf((1.0 - level) / 2.0)), \
        float(stats.norm.isf((1.0 - level) / (2.0 * m))) + 0.1
    q = optimize.brentq(lambda t: _box_probability(t, corr) - level, lo, hi, xtol=1e-8)
    return np.clip(p, 0.0, 1.0), float(q)


def level_label(name: str, value) -> str:
    """A level's label in contrasts: numeric levels carry the variable's name (``smoke0``),
    as emmeans."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)  # a covariate's value 20.0 reads age20, as R prints it
    text = str(value)
    try:
        float(text)
    except ValueError:
        return text
    return f"{name}{text}"


class Contrasts:
    """Contrasts of estimated marginal means (``EMMeans.contrast``).

    Attributes
    ----------
    method, adjust : str
        The contrast method and the adjustment used.
    estimate : ndarray of shape (n_contrasts,)
        On the scale the means are computed on (the link scale for ratios).
    cov : ndarray of shape (n_contrasts, n_contrasts)
    labels : pandas.DataFrame
        ``contrast`` and the by variables of each row.
    level, df : float
    """

    def __init__(self, means, method: str, adjust: str) -> None:
        self.method, self.adjust = method, adjust
        self.level, self.df = means.level, means.df
        self.ratio = means.scale.ratio
        sep = " / " if self.ratio else " - "
        frame = means.levels
        specs, by = means.specs, means.by
        groups = (frame[by].astype(str).agg("\x00".join, axis=1).to_numpy() if by
                  else np.zeros(len(frame), dtype=object))
        rows, labels, by_rows = [], [], []
        for key in dict.fromkeys(groups):
            idx = np.flatnonzero(groups == key)
            names = [" ".join(level_label(c, frame[c].iloc[i]) for c in specs) for i in idx]
            coef, con = contrast_rows(method, names, sep)
            full = np.zeros((coef.shape[0], len(frame)))
            full[:, idx] = coef
            rows.append(full)
            labels += con
            by_rows += [frame.iloc[idx[0]][by].tolist()] * len(con)
        L = np.vstack(rows)
        self.coefficients = L
        self.estimate = L @ means.estimate
        cov = L @ means.cov @ L.T
        self.cov = (cov + cov.T) / 2.0
        self.labels = pd.DataFrame({"contrast": labels})
        for j, c in enumerate(by):
            self.labels[c] = [r[j] for r in by_rows]
        self._groups = groups_of_rows(rows)
        self._n_means = [int(np.count_nonzero(r.any(axis=0))) for r in rows]

    @property
    def se(self) -> np.ndarray:
        """Standard errors of the contrasts (NaN, with a warning, for a negative variance
        from an indefinite covariance)."""
        return quadratic_form_errors(np.diag(self.cov), self.cov, "contrasts")

    def summary_frame(self) -> pd.DataFrame:
        """emmeans' table: ``contrast``, the by variables, ``estimate`` (``odds.ratio`` or
        ``ratio`` back-transformed), ``SE``, ``df``, the interval (``asymp.LCL``,
        ``asymp.UCL``; adjusted as the p-values, Bonferroni for holm and fdr), ``z.ratio``
        and the adjusted ``p.value``."""
        est, se = self.estimate, self.se
        with np.errstate(invalid="ignore", divide="ignore"):
            z = est / se
        p = np.empty_like(est)
        q = np.empty_like(est)
        for sel, k in zip(self._groups, self._n_means, strict=True):
            cov = self.cov[np.ix_(sel, sel)]
            d = se[sel]
            if not np.isfinite(d).all():  # a negative variance (warned): nothing to adjust
                p[sel] = q[sel] = np.nan
                continue
            corr = cov / np.outer(d, d)
            p[sel], q[sel] = adjusted(z[sel], corr, k, self.adjust, self.level, self.df)
        lo, hi = est - q * se, est + q * se
        name = "estimate"
        if self.ratio:
            name = self.ratio
            lo, hi, est = np.exp(lo), np.exp(hi), np.exp(est)
            se = est * se
        finite = np.isfinite(self.df)
        out = self.labels.copy()
        out[name], out["SE"], out["df"] = est, se, self.df
        out["lower.CL" if finite else "asymp.LCL"] = lo
        out["upper.CL" if finite else "asymp.UCL"] = hi
        out["t.ratio" if finite else "z.ratio"] = z
        out["p.value"] = p
        return out

    def __repr__(self) -> str:
        return f"<Contrasts: {self.method}, adjust={self.adjust!r}, {len(self.estimate)} rows>"


def groups_of_rows(rows: list[np.ndarray]) -> list[np.ndarray]:
    """Row positions of each by group's contrasts in the stacked table."""
    out, start = [], 0
    for r in rows:
        out.append(np.arange(start, start + r.shape[0]))
        start += r.shape[0]
    return out
