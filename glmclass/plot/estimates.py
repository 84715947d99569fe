"""Pictures of estimates and of fits: coefficient forest plots, the evidence curve of a
Bayesian logistic regression, loss histories of gradient fits and regularisation paths."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from . import _common as C


def _named(results, labels) -> list[tuple[str, object]]:
    """(label, results) pairs from one results object, a sequence or a mapping of them."""
    if isinstance(results, Mapping):
        return [(str(k), v) for k, v in results.items()]
    if isinstance(results, (list, tuple)):
        if labels is not None and len(labels) != len(results):
            raise ValueError(f"labels has {len(labels)} names for {len(results)} results")
        names = labels if labels is not None else [_default_name(r, i)
                                                   for i, r in enumerate(results)]
        return list(zip(map(str, names), results, strict=True))
    name = labels if isinstance(labels, str) else _default_name(results, 0)
    return [(name, results)]


def _default_name(results, i: int) -> str:
    method = getattr(results, "method", None)
    if isinstance(method, str):
        return method
    model = getattr(results, "model", None)
    return type(model).__name__ if model is not None else f"fit {i + 1}"


# --- coefficients -------------------------------------------------------------------------------


def _coef_frame(results, alpha: float) -> pd.DataFrame:
    """Estimates and intervals as one frame: columns ``group``, ``term``, ``coef``, ``lower``,
    ``upper``, one row per coefficient in the results' flat order (``coef_index``); ``group``
    is the level of a multinomial model (its ``tidy_labels`` name one), None otherwise."""
    labels = results.tidy_labels
    ci = results.conf_int(alpha).loc[results.coef_index]
    return pd.DataFrame({"group": labels.get("level"), "term": labels["term"],
                         "coef": results.flat_params, "lower": ci.iloc[:, 0].to_numpy(),
                         "upper": ci.iloc[:, 1].to_numpy()})


def _separated(results, frame: pd.DataFrame) -> np.ndarray:
    """Whether each row of :func:`_coef_frame` is a coefficient whose estimate does not exist
    (the fit's ``separation`` record: it diverges along a separating direction)."""
    sep = getattr(results, "separation", None)
    out = np.zeros(len(frame), dtype=bool)
    if sep is None or not sep.separated:
        return out
    names = list(results.params.index)
    directions = np.atleast_2d(np.asarray(sep.directions))
    levels = list(sep.equations) if directions.shape[0] > 1 else [None]
    for i, (group, term) in enumerate(zip(frame["group"], frame["term"], strict=True)):
        row = levels.index(group) if group in levels else 0
        out[i] = directions[row, names.index(term)] != 0
    return out


def _is_intercept(term) -> bool:
    return str(term) in ("Intercept", "const", "(Intercept)")


def coefficients(results, *, alpha: float = 0.05, odds_ratios: bool = False,
                 intercept: bool = False, terms=None, labels=None, ax=None):
    """Forest plot of the estimates with their confidence (or credible) intervals.

    Parameters
    ----------
    results : results object, or a list or dict of them
        Results of a likelihood model (their ``conf_int(alpha)``, ``flat_params``,
        ``coef_index`` and ``tidy_labels``): GLM, Logit, Probit, FirthLogit, MNLogit (one
        colour per level), BayesLogit (posterior intervals). Several results are drawn side by
        side, one colour each (e.g. a logit and its Bayesian or Firth counterpart).
    alpha : float
        Intervals of coverage ``1 - alpha``.
    odds_ratios : bool
        Plot ``exp(coef)`` and ``exp(interval)`` on a logarithmic axis, with the reference line
        at 1 (odds ratios for a logit link).
    intercept : bool
        Include the intercept (its scale usually dwarfs the slopes).
    terms : list of str, optional
        The terms to show, in this order (default: all, in design order).
    labels : str or list of str, optional
        Legend names of the results (default: their fit method or model class, or the keys
        of a dict).
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        One error bar per (results, level) with terms on the y axis, first at the top, and a
        dotted reference line at 0 (or 1). A coefficient whose estimate does not exist
        (separated data: the fit's ``separation`` record) or whose interval is not finite is
        off-scale: the axis spans the other intervals, and the off-scale one is drawn dashed
        to the edge, with a triangle pointing to its estimate and its numbers written in.
    """
    fits = _named(results, labels)
    frames = []
    for name, res in fits:
        f = _coef_frame(res, alpha)
        f["off"] = _separated(res, f) | ~np.isfinite(f[["coef", "lower", "upper"]]).all(axis=1)
        f["series"] = name if f["group"].isna().all() else \
            [f"{name}: {C.label(g)}" if len(fits) > 1 else C.label(g) for g in f["group"]]
        frames.append(f)
    table = pd.concat(frames, ignore_index=True)
    if not intercept:
        table = table[~table["term"].map(_is_intercept)]
    order = list(dict.fromkeys(table["term"])) if terms is None else list(terms)
    missing = [t for t in order if t not in set(table["term"])]
    if missing:
        raise ValueError(f"terms {missing} are not estimated by the model(s); they have "
                         f"{list(dict.fromkeys(table['term']))}")
    rank = {t: i for i, t in enumerate(order)}
    table = table[table["term"].isin(order)]
    table = table.iloc[np.argsort(table["term"].map(rank).to_numpy(), kind="stable")]
    if odds_ratios:
        with np.errstate(over="ignore"):   # an infinite odds ratio is drawn off-scale
            table = table.assign(**{c: np.exp(table[c]) for c in ("coef", "lower", "upper")})
    ax = C.get_axes(ax, figsize=(6.4, 1.2 + 0.45 * len(order)))
    series = list(dict.fromkeys(table["series"]))
    step = 0.7 / max(len(series), 1)
    pos = {t: len(order) - 1 - i for i, t in enumerate(order)}   # first term at the top
    ref = 1.0 if odds_ratios else 0.0
    limits = _finite_limits(table, ref, odds_ratios)
    for j, s in enumerate(series):
        t = table[table["series"] == s]
        # the first series on top within each term, as in the legend
        ypos = np.array([pos[v] for v in t["term"]]) + ((len(series) - 1) / 2 - j) * step
        on, off = ~t["off"].to_numpy(), t["off"].to_numpy()
        err = np.vstack([t["coef"] - t["lower"], t["upper"] - t["coef"]])[:, on]
        bars = ax.errorbar(t["coef"].to_numpy()[on], ypos[on], xerr=err, fmt="o", capsize=3,
                           markersize=5, label=s if len(series) > 1 else None)
        if off.any():
            _off_scale(ax, t[off], ypos[off], limits, bars.lines[0].get_color())
    ax.axvline(ref, color="0.4", linestyle=":", linewidth=1)
    ax.set_yticks(range(len(order)), [str(t) for t in reversed(order)])
    ax.set_ylim(-0.6, len(order) - 0.4)
    level = int(round(100 * (1 - alpha)))
    if odds_ratios:
        _log_axis(ax)
        ax.set_xlabel(f"{_or_name(fits)} ({level}% interval, log scale)")
    else:
        ax.set_xlabel(f"Coefficient ({level}% interval)")
    if limits is not None:
        ax.set_xlim(*limits)
    if len(series) > 1:
        ax.legend(fontsize="small")
    return ax


def _finite_limits(table: pd.DataFrame, ref: float, log: bool) -> tuple[float, float] | None:
    """x limits spanning the intervals that are not off-scale and the reference line, padded
    by 5 % (of the log range on a log axis); None when nothing is off-scale (autoscale)."""
    if not table["off"].any():
        return None
    kept = table[~table["off"]]
    values = np.r_[kept["lower"], kept["upper"], kept["coef"], ref]
    if not kept.size:   # every interval off-scale: a unit range around the reference
        values = np.r_[values, ref * np.e, ref / np.e] if log else np.r_[values, ref - 1, ref + 1]
    values = np.log(values) if log else values
    lo, hi = float(values.min()), float(values.max())
    pad = 0.05 * (hi - lo if hi > lo else 1.0)
    lo, hi = lo - pad, hi + pad
    return (float(np.exp(lo)), float(np.exp(hi))) if log else (lo, hi)


def _off_scale(ax, rows: pd.DataFrame, ypos: np.ndarray, limits, color) -> None:
    """Draw intervals beyond the axis limits: a dashed line to the edge, a triangle at the
    edge pointing where the estimate lies, and its numbers written inside the axes."""
    from matplotlib import transforms

    lo, hi = limits
    blend = transforms.blended_transform_factory(ax.transAxes, ax.transData)
    for (_, r), y in zip(rows.iterrows(), ypos, strict=True):
        a = np.clip(np.nan_to_num(r["lower"], nan=lo, neginf=lo, posinf=hi), lo, hi)
        b = np.clip(np.nan_to_num(r["upper"], nan=hi, neginf=lo, posinf=hi), lo, hi)
        ax.plot([a, b], [y, y], linestyle="--", color=color, linewidth=1)
        c = r["coef"]
        if lo < c < hi:
            ax.plot([c], [y], "o", markersize=5, markerfacecolor="none", color=color)
        right = not c <= lo
        if not lo < c < hi:   # a triangle just inside the edge, pointing to the estimate
            ax.plot([0.988 if right else 0.012], [y], ">" if right else "<", markersize=7,
                    color=color, transform=blend)
        ax.text(0.98 if right else 0.02, y,
                f"off scale: {c:.3g} [{r['lower']:.3g}, {r['upper']:.3g}]",
                transform=blend, ha="right" if right else "left", va="bottom",
                fontsize="x-small", color=color)


def _log_axis(ax) -> None:
    """A logarithmic x axis labelled 0.5, 1, 2, 5, ... rather than 5 x 10^-1."""
    from matplotlib import ticker

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())


def _or_name(fits) -> str:
    links = {getattr(getattr(getattr(r.model, "family", None), "link", None), "name", None)
             for _, r in fits}
    return "Odds ratio" if links <= {"logit", None} else "exp(coefficient)"


# --- evidence -----------------------------------------------------------------------------------


def evidence_curve(results, alphas=None, group=None, *, components: bool = False, ax=None):
    """Plot the Laplace log evidence of a Bayesian logistic regression against the prior
    precision (BayesLogit's ``evidence_curve``).

    Parameters
    ----------
    results : BayesLogit results, or the DataFrame its ``evidence_curve()`` returned
        The fitted model (the curve is computed) or a curve already computed.
    alphas : array-like of float, optional
        Prior precisions ``alpha = 1 / prior_scale**2`` to evaluate (see
        ``BayesGLMResults.evidence_curve``); ignored for a DataFrame.
    group : str, optional
        The prior group whose precision varies (default: the first).
    components : bool
        Also draw the log-likelihood at the mode and the log prior density, whose sum with
        the Occam term is the evidence.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The curve on a logarithmic alpha axis, its maximum marked, and a vertical line at the
        fitted model's precision (when ``results`` is a fit).
    """
    if isinstance(results, pd.DataFrame):
        curve, fitted = results, None
    else:
        curve = results.evidence_curve(alphas, group)
        names = list(results.alpha.index)
        fitted = float(results.alpha.iloc[0 if group is None else names.index(group)])
    needed = {"alpha", "log_evidence"}
    if not needed <= set(curve.columns):
        raise ValueError(f"an evidence curve needs the columns {sorted(needed)}; got "
                         f"{list(curve.columns)}")
    ax = C.get_axes(ax)
    a, ev = curve["alpha"].to_numpy(), curve["log_evidence"].to_numpy()
    line, = ax.semilogx(a, ev, label="log evidence (Laplace)")
    if components:
        for col, style, text in (("llf", "--", "log-likelihood at the mode"),
                                 ("log_prior", ":", "log prior density at the mode")):
            if col in curve.columns:
                ax.semilogx(a, curve[col], style, label=text)
    best = int(np.nanargmax(ev))
    ax.plot([a[best]], [ev[best]], "o", color=line.get_color(),
            label=f"maximum on the grid: alpha = {a[best]:.3g}")
    if fitted is not None and np.isfinite(fitted):
        ax.axvline(fitted, color="0.3", linestyle="-.", linewidth=1,
                   label=f"fitted: alpha = {fitted:.3g}")
    ax.set(xlabel="Prior precision alpha = 1 / prior_scale^2", ylabel="Log evidence")
    ax.legend(fontsize="small")
    return ax


# --- fit histories ------------------------------------------------------------------------------


def loss_history(results, *, reference: float | None = None, labels=None, ax=None):
    """Plot the loss after each iteration or epoch of one or more fits.

    Parameters
    ----------
    results : results object, or a list or dict of them
        Anything with a ``history`` attribute, a sequence of losses (the gradient fits of
        ``Logit.fit(method="gd" | "sgd" | "minibatch")``: the deviance per epoch; a
        perceptron: misclassified rows per epoch) and optionally ``method`` (its legend name).
        A pandas Series names the axes by its name and index name.
    reference : float, optional
        Plot ``loss - reference`` on a logarithmic axis instead, e.g. the deviance of the
        IRLS fit, to compare rates of convergence.
    labels : str or list of str, optional
        Legend names (default: each result's ``method``, or the keys of a dict).
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        One line per fit, starting at iteration (epoch) 1.
    """
    fits = _named(results, labels)
    ax = C.get_axes(ax)
    yname, xname = None, None
    for name, res in fits:
        hist = getattr(res, "history", None)
        if hist is None:
            raise TypeError(f"{type(res).__name__} has no history: fit by a gradient method "
                            "(method='gd', 'sgd' or 'minibatch') to record one")
        if isinstance(hist, pd.Series):
            yname = yname or hist.name
            xname = xname or hist.index.name
        values = np.asarray(hist, dtype=float).ravel()
        x = np.arange(1, values.size + 1)
        if reference is not None:
            excess = values - float(reference)
            ax.semilogy(x, np.where(excess > 0, excess, np.nan), label=name)
        else:
            ax.plot(x, values, label=name)
    what = str(yname) if yname else "loss"
    ax.set(xlabel=str(xname) if xname else "iteration",
           ylabel=f"{what} - {reference:g}" if reference is not None else what)
    if len(fits) > 1 or labels is not None:
        ax.legend(fontsize="small")
    return ax


def regularization_path(path, *, intercept: bool = False, log: bool = True,
                        labels: bool = True, ax=None):
    """Plot coefficients against the penalty: one line per coefficient.

    Parameters
    ----------
    path : pandas.DataFrame or RegularizationPath
        Coefficients by penalty: index the penalty ``alpha``, one column per coefficient; or
        the result of ``regularization_path()``, whose ``coefs`` are drawn with dashed
        vertical lines at ``alpha_min`` and ``alpha_1se``, named at their top, when it was
        cross-validated.
    intercept : bool
        Include an intercept column (it is not penalised, so usually left out).
    log : bool
        Logarithmic penalty axis.
    labels : bool
        Name each curve at the right edge, where the penalty is weakest (glmnet's
        ``plot(fit, label=TRUE)``), the names spread apart so that they do not overlap,
        instead of a legend (which overflows with a few dozen columns).
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure (taller with many columns).

    Returns
    -------
    matplotlib.axes.Axes
        One line per coefficient (its ``label`` the column name) against alpha, the penalty
        decreasing from left to right (the model grows to the right, as glmnet draws it), and
        a dotted line at zero.
    """
    marks = _cv_marks(path)
    if hasattr(path, "coefs") and isinstance(path.coefs, pd.DataFrame):
        path = path.coefs
    if not isinstance(path, pd.DataFrame):
        raise TypeError("path must be a DataFrame: index the penalty, one column per "
                        f"coefficient; got {type(path).__name__}")
    cols = [c for c in path.columns if intercept or not _is_intercept(
        c[-1] if isinstance(c, tuple) else c)]
    ax = C.get_axes(ax, figsize=(6.4, max(4.8, 1.6 + 0.13 * len(cols))))
    a = np.asarray(path.index, dtype=float)
    lines = []
    for c in cols:
        label = ": ".join(map(str, c)) if isinstance(c, tuple) else str(c)
        lines += ax.plot(a, path[c].to_numpy(dtype=float), label=label, linewidth=1.2)
    if log:
        ax.set_xscale("log")
    if a.size > 1:
        ax.set_xlim(a.max(), a.min())   # decreasing penalty: weakest at the right edge
    ax.axhline(0.0, color="0.4", linestyle=":", linewidth=1)
    _draw_marks(ax, marks, named=True)
    ax.set(xlabel=str(path.index.name or "alpha"),
           ylabel="Coefficient")
    if labels and lines:
        _label_ends(ax, lines, a.argmin())
    return ax


def _label_ends(ax, lines: list, end: int) -> None:
    """Write each line's label just outside the right edge of the axes at its last value,
    moved apart by one text height where labels would overlap (a thin leader joins them)."""
    from matplotlib import transforms
    from matplotlib.lines import Line2D

    ends = np.array([line.get_ydata()[end] for line in lines], dtype=float)
    lo, hi = ax.get_ylim()
    fig = ax.figure
    height_pt = ax.get_position().height * fig.get_figheight() * 72
    size = 7.0
    gap = 1.15 * size * (hi - lo) / max(height_pt, 1.0)
    ys = C.spread(np.nan_to_num(ends, nan=0.0), gap, lo, hi)
    blend = transforms.blended_transform_factory(ax.transAxes, ax.transData)
    for line, end_y, y in zip(lines, ends, ys, strict=True):
        ax.text(1.03, y, line.get_label(), transform=blend, fontsize=size, va="center",
                ha="left", color=line.get_color(), clip_on=False)
        if np.isfinite(end_y):   # a leader from the curve's end to its name
            ax.add_artist(Line2D([1.0, 1.028], [end_y, y], transform=blend, clip_on=False,
                                 color=line.get_color(), linewidth=0.6))


def _cv_marks(path) -> list[tuple[str, float]]:
    """``[("alpha_min", a), ("alpha_1se", b)]`` of a cross-validated path, else []."""
    out = []
    for name in ("alpha_min", "alpha_1se"):
        value = getattr(path, name, None)
        if isinstance(value, (float, int, np.floating)):
            out.append((name, float(value)))
    return out


def _draw_marks(ax, marks: list[tuple[str, float]], named: bool = False) -> None:
    """Vertical lines at ``alpha_min`` and ``alpha_1se`` (labelled for a legend), with
    ``named`` also their names written along them at the top of the axes."""
    from matplotlib import transforms

    blend = transforms.blended_transform_factory(ax.transData, ax.transAxes)
    for (name, value), style in zip(marks, ("--", "-."), strict=False):
        ax.axvline(value, color="0.3", linestyle=style, linewidth=1, label=name)
        if named:
            ax.text(value, 0.98, f" {name} ", transform=blend, rotation=90, ha="right",
                    va="top", fontsize="x-small", color="0.3")


def cv_curve(path, *, log: bool = True, ax=None):
    """Cross-validated deviance against the penalty, with one-standard-error bars.

    Parameters
    ----------
    path : RegularizationPath
        A path fit with ``cv=`` (``regularization_path(cv=10)``).
    log : bool
        Logarithmic penalty axis.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The mean held-out deviance per observation with error bars of ``cv_se`` against
        alpha, decreasing from left to right as in :func:`regularization_path`, and dashed
        vertical lines at ``alpha_min`` and ``alpha_1se`` (named at their top and in the
        legend).
    """
    mean = getattr(path, "cv_mean", None)
    if not isinstance(mean, pd.Series):
        raise TypeError("cv_curve needs a path fit with cross-validation: "
                        "model.regularization_path(cv=10)")
    ax = C.get_axes(ax)
    a = np.asarray(mean.index, dtype=float)
    ax.errorbar(a, mean.to_numpy(), yerr=path.cv_se.to_numpy(), fmt="o", markersize=3,
                capsize=2, color="C3", ecolor="0.6", label="CV deviance")
    if log:
        ax.set_xscale("log")
    if a.size > 1:   # as the path: decreasing penalty from left to right
        pad = (a.max() / a.min()) ** 0.02 if log and a.min() > 0 else 1.0
        ax.set_xlim(a.max() * pad, a.min() / pad)
    _draw_marks(ax, _cv_marks(path), named=True)
    ax.set(xlabel="alpha",
           ylabel=f"{path.n_folds}-fold CV deviance per observation")
    ax.legend(fontsize="small")
    return ax
