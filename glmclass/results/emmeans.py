"""Estimated marginal means and joint tests (R's ``emmeans``, ``contrast``, ``joint_tests``).

An estimated marginal mean is an average of the model's predictions over a reference grid
(:mod:`glmclass.results.emmeans_grid`): for each combination of the ``specs`` variables (within
each ``by`` group), ``m = sum_o w_o h(x_o)`` over the cells o of the other variables, with h the
linear predictor (``type="link"``), or, for models with several outcome levels, the
probability of each level (``mode="prob"``; the outcome is then a factor of the grid named
after the response) or the mean class ``sum_k k p_k`` (``mode="mean.class"``). Its gradient in
the coefficients is ``g = sum_o w_o dh(x_o)/db`` and its variance ``g' V g`` with V the
covariance the fit reports (its ``cov_type``): the same linear functions of the estimates as
R's emmeans, so the numbers are emmeans' to rounding. On ``type="response"`` the link-scale
mean is back-transformed: ``g^-1(m)``, with delta-method SE ``|dmu/deta| se`` and the interval
``g^-1`` of the link-scale interval (emmeans' ``type = "response"``). Contrasts of a
back-transformed logit (log) link are odds ratios (ratios): ``exp`` of the link-scale
differences, as emmeans; other links keep their contrasts on the link scale.

Weights (emmeans' ``weights``): ``"equal"`` (every cell alike), ``"proportional"`` (the
frequencies of the combinations averaged over, pooled over the ``specs``), ``"outer"``
(products of each averaged factor's own frequencies) and ``"cells"`` (the frequencies of the
cells within each mean: the ordinary means of the predictions over the data).

Models with several outcome levels (a multinomial or an ordinal likelihood) give the
probability of each level on the grid and its Jacobian in the estimable parameters through
their likelihood's ``mean`` and ``mean_jacobian`` (:func:`level_probabilities`); a model whose
likelihood cannot may register its own function in :data:`OUTCOME_PROBABILITIES`.

References
----------
Searle, S. R., Speed, F. M. and Milliken, G. A. (1980). Population marginal means in the linear
model. *The American Statistician* 34(4), 216-221.
Lenth, R. V. (2023). *emmeans: Estimated Marginal Means*, R package version 1.8.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from ..families import Binomial, Poisson
from ..likelihoods import GLMLikelihood, likelihood_of
from ..links import Identity, Log, Logit
from ..numerics.stderr import quadratic_form_errors
from . import emmeans_contrasts as C
from .emmeans_grid import design_terms, formula_variables, reference_grid

TYPES = ("link", "response")
WEIGHTS = ("equal", "proportional", "outer", "cells")
MODES = ("prob", "mean.class")


def level_probabilities(res, X: np.ndarray, offset: np.ndarray | None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Per-level probabilities of a fit with several outcome levels on the grid's design rows
    and their Jacobian in the estimable parameters, from the model's likelihood (``mean`` and
    ``mean_jacobian``), levels in the order of ``res.levels`` (``res.natural_order``).

    Parameters
    ----------
    res : results
        ``flat_params``, ``estimable`` (per design column and equation, or per parameter when
        parameters beyond the coefficients follow them, as an ordinal fit's thresholds),
        ``n_equations`` and ``natural_order``.
    X : ndarray of shape (g, k)
        The grid's design rows (every design column).
    offset : ndarray of shape (g,) or None

    Returns
    -------
    P : ndarray of shape (g, K)
    J : ndarray of shape (g, K, n_estimable)
    """
    lik = likelihood_of(res.model)
    keep = res.estimable
    cols = keep[:X.shape[1]]
    b = res.flat_params[np.tile(keep, res.n_equations)]
    P = lik.mean(X[:, cols], b, offset)
    J = lik.mean_jacobian(X[:, cols], b, offset)
    order = res.natural_order
    return P[:, order], J[:, order, :]


#: Overrides of :func:`level_probabilities` by likelihood type, for a model whose likelihood's
#: ``mean``/``mean_jacobian`` do not give its levels' probabilities in the estimable
#: parameters: ``fn(res, X, offset) -> (P (g, K), J (g, K, n_estimable))``.
OUTCOME_PROBABILITIES: dict[type, Callable] = {}


class Scale:
    """How marginal means are reported: the column name, the back-transformation (None on
    the scale they are computed on) and the name of back-transformed contrasts (None: the
    contrasts stay on the computing scale)."""

    def __init__(self, name: str, link=None, ratio: str | None = None) -> None:
        self.name, self.link, self.ratio = name, link, ratio


def _response_scale(lik) -> Scale:
    family = lik.family
    link = family.link
    if isinstance(link, Identity):
        return Scale("emmean")
    name = "prob" if isinstance(family, Binomial) else \
        "rate" if isinstance(family, Poisson) else "response"
    ratio = "odds.ratio" if isinstance(link, Logit) else "ratio" if isinstance(link, Log) \
        else None
    return Scale(name, link, ratio)


class EMMeans:
    """Estimated marginal means (``gc.emmeans``): :meth:`summary_frame`, :meth:`contrast`,
    :meth:`plot`.

    Attributes
    ----------
    levels : pandas.DataFrame
        The specs' and by variables' values of each mean (one row per mean).
    estimate : ndarray of shape (n_means,)
        The means on the scale they are computed on (link, probability or mean class).
    gradient : ndarray of shape (n_means, n_estimable)
        Their gradients in the estimable coefficients.
    cov : ndarray of shape (n_means, n_means)
        Their covariance ``G V G'``.
    specs, by : list of str
    level : float
    df : float
        Degrees of freedom of the reference distribution (inf: normal).
    coef_cov : ndarray of shape (n_estimable, n_estimable)
        The fit's covariance of the estimable coefficients (its ``cov_type``).
    cov_type : str or None
        The fit's covariance type (None for a posterior covariance: BayesLogit).
    scale : Scale
    contrasts : Contrasts or None
        For specs given as ``"pairwise ~ race"``: that contrast with its default adjustment.
    """

    def __init__(self, levels: pd.DataFrame, estimate: np.ndarray, gradient: np.ndarray,
                 V: np.ndarray, specs: list, by: list, scale: Scale, level: float, df: float,
                 cov_type: str, method: str | None = None) -> None:
        self.levels, self.estimate, self.gradient = levels, estimate, gradient
        self.coef_cov = V
        cov = gradient @ V @ gradient.T
        self.cov = (cov + cov.T) / 2.0
        self.specs, self.by, self.level, self.df = specs, by, level, df
        self.scale, self.cov_type = scale, cov_type
        self.contrasts = None if method is None else self.contrast(method)

    @property
    def se(self) -> np.ndarray:
        """Standard errors on the scale of :attr:`estimate` (NaN, with a warning, for a
        negative variance from an indefinite covariance: a two-way cluster-robust one)."""
        return quadratic_form_errors(np.diag(self.cov), self.cov, "marginal means")

    def _interval_names(self) -> tuple[str, str]:
        return ("asymp.LCL", "asymp.UCL") if not np.isfinite(self.df) \
            else ("lower.CL", "upper.CL")

    def _quantile(self, level: float) -> float:
        tail = (1.0 - level) / 2.0
        return float(stats.norm.isf(tail) if not np.isfinite(self.df)
                     else stats.t.isf(tail, self.df))

    def summary_frame(self) -> pd.DataFrame:
        """emmeans' table: the variables' levels, the mean (``emmean``, or ``prob``/``rate``/
        ``response`` back-transformed, ``mean.class``), ``SE``, ``df`` and the interval
        (``asymp.LCL``, ``asymp.UCL``; ``lower.CL``, ``upper.CL`` on t)."""
        est, se = self.estimate, self.se
        q = self._quantile(self.level)
        lo, hi = est - q * se, est + q * se
        link = self.scale.link
        if link is not None:
            with np.errstate(invalid="ignore", over="ignore"):
                a, b = link.inverse(lo), link.inverse(hi)
                se = np.abs(link.mu_eta(est)) * se
                est = link.inverse(est)
            lo, hi = np.fmin(a, b), np.fmax(a, b)
        out = self.levels.copy()
        lname, uname = self._interval_names()
        out[self.scale.name] = est
        out["SE"], out["df"], out[lname], out[uname] = se, self.df, lo, hi
        return out

    def contrast(self, method: str = "pairwise", adjust: str | None = None) -> C.Contrasts:
        """Contrasts of the means within each ``by`` group, with z tests.

        Parameters
        ----------
        method : {"pairwise", "revpairwise", "trt.vs.ctrl", "consec", "poly", "eff"}
        adjust : {"tukey", "holm", "bonferroni", "sidak", "fdr", "mvt", "none"}, optional
            The multiplicity adjustment within each group; None: emmeans' default for the
            method (tukey for pairwise comparisons, mvt for trt.vs.ctrl and consec, none for
            poly, fdr for eff). ``tukey`` with another method is ``sidak``, as emmeans.

        Returns
        -------
        Contrasts
        """
        if method not in C.METHODS:
            raise ValueError(f"method must be one of {C.METHODS}, got {method!r}")
        used = C.effective_adjust(adjust, method)
        return C.Contrasts(self, method, used)

    def plot(self, ax=None):
        """The means and their intervals, one row per mean (matplotlib; constrained layout).

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt  # optional dependency

        if ax is None:
            _, ax = plt.subplots(layout="constrained")
        frame = self.summary_frame()
        lname, uname = self._interval_names()
        labels = [" ".join(C.level_label(c, v)
                           for c, v in zip(self.levels.columns, row, strict=True))
                  for row in self.levels.itertuples(index=False)]
        y = np.arange(len(frame))
        est = frame[self.scale.name].to_numpy()
        ax.errorbar(est, y, xerr=[est - frame[lname].to_numpy(), frame[uname].to_numpy() - est],
                    fmt="o", capsize=3)
        ax.set_yticks(y, labels)
        ax.invert_yaxis()
        ax.set_xlabel(f"{self.scale.name} ({self.level:.0%} interval)")
        return ax

    def __repr__(self) -> str:
        return f"<EMMeans: {len(self.estimate)} means of {self.specs}" + \
            (f" by {self.by}>" if self.by else ">")



# --- specs ------------------------------------------------------------------------------------
_NAME = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.]*$")


def parse_specs(specs, by) -> tuple[str | None, list[str], list[str]]:
    """(contrast method or None, specs variables, by variables) of ``specs`` (a name, a list of
    names, or ``"pairwise ~ race | smoke"``) and ``by``. Nothing is evaluated.

    Raises
    ------
    ValueError
        For names that are not plain variable names, or an unknown method on the left.
    """
    method = None
    by_names: list[str] = []
    if isinstance(specs, str):
        text = specs
        if "~" in text:
            lhs, text = text.split("~", 1)
            method = lhs.strip() or None
            if method is not None and method not in C.METHODS:
                raise ValueError(f"specs: the left of '~' must be one of {C.METHODS}, got "
                                 f"{method!r}")
        if "|" in text:
            text, after = text.split("|", 1)
            by_names = _names(after, "specs")
        names = _names(text, "specs")
    elif isinstance(specs, (list, tuple)):
        names = [str(s) for s in specs]
    else:
        raise ValueError(f"specs must be a variable name, a list of names or a formula string "
                         f"such as 'pairwise ~ race | smoke'; got {specs!r}")
    if by is not None:
        by_names += [by] if isinstance(by, str) else [str(b) for b in by]
    if not names:
        raise ValueError("specs names no variable")
    return method, names, by_names


def _names(text: str, what: str) -> list[str]:
    out = [t.strip() for t in re.split(r"[*+:]", text) if t.strip()]
    bad = [t for t in out if not _NAME.match(t)]
    if bad:
        raise ValueError(f"{what}: {bad[0]!r} is not a variable name (write e.g. "
                         "'pairwise ~ race | smoke'); nothing in specs is evaluated")
    return out


# --- the grid's values ------------------------------------------------------------------------
def _grid_values(res, lik, grid, mode: str | None) -> tuple[list, np.ndarray, np.ndarray,
                                                             np.ndarray]:
    """(variables with their values, h, J, counts) over the full grid: h of shape
    (*grid.shape[, K]), J of h.shape + (n_estimable,); the outcome is the last dimension."""
    data = res.model.data
    X, off, _ = data.new_rows(grid.frame())
    variables = [(v.name, v.values) for v in grid.variables]
    counts = grid.counts
    if lik.n_outputs > 1:
        fn = OUTCOME_PROBABILITIES.get(type(lik), level_probabilities)
        P, J = fn(res, X, off)
        K = P.shape[1]
        if mode == "mean.class":
            k = np.arange(1.0, K + 1.0)
            h, J = P @ k, np.einsum("gkp,k->gp", J, k)
        else:
            name = data.endog_name
            variables.append((name, tuple(res.levels)))
            counts = np.repeat(counts[..., None], K, axis=-1)
            h = P.reshape(*grid.shape, K)
            return variables, h, J.reshape(*grid.shape, K, -1), counts
    else:
        keep = res.estimable
        Xk = X[:, keep]
        b = res.flat_params[keep]
        h = Xk @ b + (0.0 if off is None else off)
        J = Xk
    return variables, h.reshape(grid.shape), J.reshape(*grid.shape, -1), counts


def _averaged(variables, h, J, counts, names: list[str], weights: str):
    """Means over the cells of the variables not in ``names``: (levels frame, estimates,
    gradients), the first name varying fastest."""
    all_names = [v[0] for v in variables]
    for n in names:
        if n not in all_names:
            raise ValueError(f"{n!r} is not a variable of the reference grid; its variables "
                             f"are {all_names}")
    keep_axes = [all_names.index(n) for n in reversed(names)]
    other = [a for a in range(len(all_names)) if a not in keep_axes]
    perm = keep_axes + other
    rows = int(np.prod([len(variables[a][1]) for a in keep_axes]))
    hh = np.transpose(h, perm).reshape(rows, -1)
    JJ = np.transpose(J, perm + [J.ndim - 1]).reshape(rows, hh.shape[1], -1)
    cc = np.transpose(counts, perm).reshape(rows, -1)
    W = _weights(cc, counts, keep_axes, other, weights)
    combos = list(itertools.product(*(variables[a][1] for a in keep_axes)))
    levels = pd.DataFrame({n: [c[len(names) - 1 - j] for c in combos]
                           for j, n in enumerate(names)})
    return levels, np.einsum("ro,ro->r", W, hh), np.einsum("ro,rop->rp", W, JJ)


def _weights(cc: np.ndarray, counts: np.ndarray, keep_axes: list, other: list,
             weights: str) -> np.ndarray:
    rows, n_o = cc.shape
    if weights == "equal" or not other:
        return np.full((rows, n_o), 1.0 / n_o)
    if weights == "cells":
        total = cc.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return cc / total
    table = np.transpose(counts, keep_axes + other).reshape(rows, *[counts.shape[a]
                                                                   for a in other]).sum(0)
    if weights == "outer":
        w = np.ones(())
        total = table.sum()
        for d in range(table.ndim):
            margin = table.sum(axis=tuple(a for a in range(table.ndim) if a != d)) / total
            w = np.multiply.outer(w, margin)
        table = w
    w = table.reshape(-1)
    return np.broadcast_to(w / w.sum(), (rows, n_o))


def _fit_parts(res):
    """The fit's covariance of the estimable coefficients and its reference distribution's
    degrees of freedom."""
    kept = np.tile(res.estimable, res.n_equations)
    V = res.cov_values[np.ix_(kept, kept)]
    df = float(res.df_resid) if res.use_t else np.inf
    return V, df


def emmeans(res, specs, by=None, at: dict | None = None, type: str = "link",  # noqa: A002
            weights: str = "equal", level: float = 0.95, mode: str | None = None) -> EMMeans:
    """Estimated marginal means of a fit (R's ``emmeans``; see the module docstring).

    Parameters
    ----------
    res : results
        A fit of a formula model: any GLM family and link, MNLogit, BayesLogit (posterior
        mode and Laplace covariance), robust covariances (the fit's ``cov_type``), Dask data.
    specs : str or list of str
        The variables of the means: ``"race"``, ``["race", "smoke"]``, ``"race * smoke"`` or
        ``"pairwise ~ race | smoke"`` (the left: a contrast method computed at once, in
        :attr:`EMMeans.contrasts`; after ``|``: by variables).
    by : str or list of str, optional
        Variables the means are given within (contrasts stay within their groups).
    at : dict, optional
        Values of grid variables (a covariate's value or values; a subset of levels).
    type : {"link", "response"}
        The scale of GLM means: the linear predictor, or back-transformed.
    weights : {"equal", "proportional", "outer", "cells"}
    level : float
        Confidence level of the intervals.
    mode : {"prob", "mean.class"}, optional
        Fits with several outcome levels: the probability of each level (default; the
        outcome is a grid factor named after the response) or the mean class (levels
        numbered 1..K in their order).

    Returns
    -------
    EMMeans

    Raises
    ------
    ValueError
        For a model without a formula, an unknown variable, argument value or method.
    """
    if type not in TYPES:
        raise ValueError(f"type must be one of {TYPES}, got {type!r}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    if not (isinstance(level, (int, float, np.number)) and 0 < level < 1):
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    lik = likelihood_of(res.model)
    if mode is not None and (mode not in MODES or lik.n_outputs == 1):
        raise ValueError(f"mode must be one of {MODES}, for fits with several outcome levels "
                         f"(MNLogit, ordinal); got {mode!r}")
    method, names, by_names = parse_specs(specs, by)
    grid = reference_grid(res, at)
    variables, h, J, counts = _grid_values(res, lik, grid, mode)
    levels, est, G = _averaged(variables, h, J, counts, names + by_names, weights)
    if lik.n_outputs > 1:
        scale = Scale(mode or "prob")
    elif type == "response" and isinstance(lik, GLMLikelihood):
        scale = _response_scale(lik)
    else:
        scale = Scale("emmean")
    V, df = _fit_parts(res)
    cov_type = getattr(res, "cov_type", None)  # BayesLogit: the Laplace posterior covariance
    return EMMeans(levels, est, G, V, names, by_names, scale, float(level), df, cov_type,
                   method)


def joint_tests(res) -> pd.DataFrame:
    """Joint Wald tests of each model term on the reference grid (R's
    ``emmeans::joint_tests``): for the variables of a term, the interaction contrasts of their
    marginal means (equal weights over the other variables, numeric covariates at their
    minimum and maximum) are tested together; ``df1`` is their rank.

    Returns
    -------
    pandas.DataFrame
        Columns ``model term``, ``df1``, ``df2`` (inf, or the residual df of a fit on t),
        ``F.ratio`` (chi-square / df1), ``Chisq`` and ``p.value``.

    Raises
    ------
    ValueError
        For fits with several outcome levels (use ``results.wald_test_terms()``), or a
        model without a formula.
    """
    lik = likelihood_of(res.model)
    if lik.n_outputs > 1:
        raise ValueError("joint_tests covers models with one linear predictor; for "
                         f"{type(res.model).__name__} use results.wald_test_terms()")
    grid = reference_grid(res, covariates="range")
    variables, h, J, counts = _grid_values(res, lik, grid, None)
    V, df2 = _fit_parts(res)
    b = res.flat_params[res.estimable]
    rows = []
    for term in model_terms(res.model.data.spec, [v[0] for v in variables]):
        _, _, G = _averaged(variables, h, J, counts, term, "equal")
        Cm = np.ones((1, 1))
        for name in term:  # the first name varies fastest: it is the last Kronecker factor
            k = len(dict(variables)[name])
            Cm = np.kron(C.contrast_rows("consec", [""] * k)[0], Cm)
        rows.append((":".join(term), *_joint_wald(Cm @ G, b, V)))
    frame = pd.DataFrame(rows, columns=["model term", "df1", "Chisq"])
    frame["df2"] = df2
    frame["F.ratio"] = frame["Chisq"] / frame["df1"]
    frame["p.value"] = stats.chi2.sf(frame["Chisq"], frame["df1"]) if not np.isfinite(df2) \
        else stats.f.sf(frame["F.ratio"], frame["df1"], df2)
    return frame[["model term", "df1", "df2", "F.ratio", "Chisq", "p.value"]]


def model_terms(spec, order: list[str]) -> list[list[str]]:
    """The formula's terms as sets of variables (terms of the same variables merged: ``age``
    and ``I(age**2)``), main effects first, each in order of appearance in the formula."""
    formula_order, _ = formula_variables(spec)
    groups: list[list[str]] = []
    for term in design_terms(spec):
        if any(code.startswith("offset(") for code, _ in term):
            continue
        names = set()
        for code, _ in term:
            names |= {c for c in formula_order if re.search(rf"\b{re.escape(c)}\b", code)}
        group = [c for c in order if c in names]
        if group and group not in groups:
            groups.append(group)
    rhs = spec.formula.split("~", 1)[-1]

    def first(name: str) -> int:
        m = re.search(rf"\b{re.escape(name)}\b", rhs)
        return m.start() if m else len(rhs)

    return sorted(groups, key=lambda g: (len(g), min(first(n) for n in g)))


def _joint_wald(L: np.ndarray, b: np.ndarray, V: np.ndarray) -> tuple[int, float]:
    """(rank, chi-square) of the joint test L b = 0 on the row space of L."""
    U, s, _ = np.linalg.svd(L, full_matrices=False)
    r = int(np.sum(s > s.max() * 1e-8)) if s.size and s.max() > 0 else 0
    if r == 0:
        return 0, np.nan
    Q = U[:, :r].T @ L
    est = Q @ b
    return r, float(est @ np.linalg.solve(Q @ V @ Q.T, est))
