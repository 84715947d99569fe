"""Pictures of a classifier in its feature space: the decision boundary of any classifier of two
features with its posterior as a colour map, and the discriminant coordinates of LDA."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from . import _common as C

_IDENT = re.compile(r"Q\(\s*['\"](.+?)['\"]\s*\)|([A-Za-z_][A-Za-z0-9_.]*)")


def _rhs_columns(formula: str, columns) -> list:
    """Columns named on the right-hand side of a formula, in order of first appearance."""
    rhs = formula.split("~", 1)[-1]
    names = [m.group(1) or m.group(2) for m in _IDENT.finditer(rhs)]
    cols = {str(c): c for c in columns}
    return list(dict.fromkeys(cols[n] for n in names if n in cols))


def _held_value(col: pd.Series):
    """Where a column not on the axes is held: its median, or its most frequent value."""
    if col.dropna().empty:
        raise ValueError(f"the column {col.name!r} of data has no value (all missing): it is "
                         f"held fixed in the plot; pass fixed={{{col.name!r}: value}}")
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        return float(col.median())
    return col.mode(dropna=True).iloc[0]


class _Space:
    """The two plotted features of a fitted model and how to predict on a grid of them."""

    def __init__(self, results, data, x, y, fixed):
        self.results, self.model = results, results.model
        self.fixed = dict(fixed or {})
        if getattr(self.model, "formula", None):
            self._formula_space(data, x, y)
        else:
            self._array_space(x, y)

    def _formula_space(self, data, x, y) -> None:
        if not isinstance(data, pd.DataFrame):
            raise ValueError("pass data=, the DataFrame the formula model was fit to (or any "
                             "DataFrame with its columns): the plot needs the features' values")
        used = _rhs_columns(self.model.formula, data.columns)
        x, y = self._choose(used, x, y, data.columns)
        self.x, self.y = x, y
        held = [c for c in used if c not in (x, y)]
        self.held = {c: self.fixed[c] if c in self.fixed else _held_value(data[c]) for c in held}
        for name, col in (("x", x), ("y", y)):
            if not pd.api.types.is_numeric_dtype(data[col]) or \
                    pd.api.types.is_bool_dtype(data[col]):
                raise ValueError(f"{name}={col!r} is not numeric: a decision boundary needs two "
                                 "numeric features on its axes (hold a categorical one fixed)")
        self.points = data[[x, y]].to_numpy(dtype=float)
        for col, values in zip((x, y), self.points.T, strict=True):
            if not np.isfinite(values).any():
                raise ValueError(f"the column {col!r} of data has no finite value (all missing "
                                 "or infinite): the plot's axis needs its range; pass data "
                                 "with values of it")
        resp = self.model.data.endog_name
        self.labels = data[resp].to_numpy(dtype=object) if resp in data.columns else None

    def _array_space(self, x, y) -> None:
        names = list(self.model.exog_names)
        icpt = self.model.data.intercept_index
        features = [n for i, n in enumerate(names) if i != icpt]
        x, y = self._choose(features, x, y, names)
        self.x, self.y = x, y
        X = self.model.exog
        self.held = {n: self.fixed[n] if n in self.fixed else float(np.median(X[:, i]))
                     for i, n in enumerate(names) if i != icpt and n not in (x, y)}
        self.points = X[:, [names.index(x), names.index(y)]]
        self.labels = np.asarray(self.model.data.endog, dtype=object)

    @staticmethod
    def _choose(used: list, x, y, columns) -> tuple:
        if x is None and y is None:
            if len(used) != 2:
                raise ValueError(
                    f"the model uses {len(used)} features ({', '.join(map(str, used))}): name "
                    "the two to plot with x= and y=; the others are held at fixed= values "
                    "(default: their median, or their most frequent value)")
            return used[0], used[1]
        if x is None or y is None:
            raise ValueError("name both features to plot, x= and y=")
        for name, v in (("x", x), ("y", y)):
            if v not in list(columns):
                raise ValueError(f"{name}={v!r} is not a feature of the model; it uses "
                                 f"{', '.join(map(str, used))}")
        if x == y:
            raise ValueError("x and y must be two different features")
        return x, y

    def grid(self, resolution: int, padding: float):
        lo, hi = np.nanmin(self.points, axis=0), np.nanmax(self.points, axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        lo, hi = lo - padding * span, hi + padding * span
        gx, gy = np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution)
        return gx, gy

    def exog(self, gx: np.ndarray, gy: np.ndarray):
        """Rows of the grid (x varying fastest) as the model's predict takes them."""
        xx, yy = np.meshgrid(gx, gy)
        cols = {self.x: xx.ravel(), self.y: yy.ravel()}
        if getattr(self.model, "formula", None):
            frame = pd.DataFrame(cols)
            for c, v in self.held.items():
                frame[c] = v
            return frame
        names = list(self.model.exog_names)
        X = np.ones((xx.size, len(names)))
        for i, n in enumerate(names):
            if n in cols:
                X[:, i] = cols[n]
            elif n in self.held:
                X[:, i] = self.held[n]
        return X


def _boundaries(ax, gx, gy, P: np.ndarray) -> None:
    """The 0-contour of P_k - max_{j != k} P_j for every class k: where the predicted class
    changes, drawn from the probabilities (smooth) rather than from the labels (stairs)."""
    for k in range(P.shape[-1]):
        others = np.delete(P, k, axis=-1).max(axis=-1)
        margin = P[..., k] - others
        if margin.min() < 0 < margin.max():
            ax.contour(gx, gy, margin, levels=[0.0], colors="k", linewidths=1.0)


#: ``decision_boundary(method=...)`` to the Bayesian results' ``predict(method=...)``.
BAYES_METHODS = {"map": "map", "moderated": "probit"}


def _bayes_probabilities(results, exog, method: str) -> pd.DataFrame:
    """Class probabilities of a Bayesian fit at the MAP or moderated (PRML eq. 4.155)."""
    if method not in BAYES_METHODS:
        raise ValueError(f"method must be 'map' or 'moderated', got {method!r}")
    try:
        p = results.predict(exog, which="prob", method=BAYES_METHODS[method])
    except TypeError:
        raise ValueError(f"method={method!r} is for Bayesian fits (gc.BayesLogit, gc.BayesGLM), "
                         f"whose predictions integrate over the posterior; "
                         f"{type(results).__name__} has one set of probabilities: drop method="
                         ) from None
    if not isinstance(p, pd.DataFrame):
        raise TypeError(f"{type(results).__name__}.predict(which='prob') did not return a "
                        "DataFrame of class probabilities")
    return p


def decision_boundary(results, data=None, x=None, y=None, *, fixed=None, level=None,
                      resolution: int = 200, padding: float = 0.05, scatter: bool = True,
                      cmap=None, colorbar: bool = True, method: str | None = None, ax=None):
    """Plot a classifier's decision boundary over two features, its posterior as a colour map.

    Parameters
    ----------
    results : results object
        Any fitted classifier with ``predict(exog, which=...)``: Logit, Probit, GLM, MNLogit,
        LDA, QDA, BayesLogit, naive Bayes (probabilities), or one with ``which="class"`` only
        (class regions without a colour scale).
    data : pandas.DataFrame, optional
        For a formula model, the data it was fit to (any DataFrame with its columns): it sets
        the axes' ranges and gives the points drawn. Array models use their own design.
    x, y : str, optional
        The features on the horizontal and vertical axes: columns of ``data`` (formula) or
        design-column names (arrays). Default: the model's two features; a model of more
        features needs them named.
    fixed : dict, optional
        Values of the features not on the axes (default: each one's median, or its most
        frequent value); they are named in the title.
    level : label, optional
        Colour by the probability of this level (default: the modelled level of a binary
        model; for a multiclass model, the colour of the most probable class, paler where it
        is less probable).
    resolution : int
        Grid points along each axis.
    padding : float
        Margin around the points, as a fraction of their range.
    scatter : bool
        Draw the data's points, coloured by their class.
    cmap : str or matplotlib colormap, optional
        Colour map of a probability (default ``"RdBu_r"``: 0 blue, 1/2 white, 1 red).
    colorbar : bool
        Add a colour bar for a probability.
    method : {"map", "moderated"}, optional
        Bayesian fits (``gc.BayesLogit``, ``gc.BayesGLM``): colour by the plug-in probability
        at the posterior mode ``sigma(w_MAP' x)`` (``"map"``) or by the moderated predictive
        probability ``sigma(kappa(sigma_a^2) mu_a)`` (``"moderated"``, PRML eq. 4.155, the
        default of their ``predict``): PRML Fig. 4.13 compares the two. The 0.5 contour is the
        same line; the moderated colours spread out where the posterior is wide.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        Its image holds the probabilities on the grid (rows: y, columns: x); black contours
        mark where the predicted class changes. The data's points are drawn with a black edge,
        so that they stand out on a background of their own colour.

    Examples
    --------
    >>> df = statsmodels.datasets.spector.load_pandas().data      # doctest: +SKIP
    >>> res = gcf.logit("GRADE ~ GPA + TUCE", df).fit()           # doctest: +SKIP
    >>> ax = gc.plot.decision_boundary(res, df)                   # doctest: +SKIP
    """
    if not isinstance(resolution, (int, np.integer)) or resolution < 2:
        raise ValueError(f"resolution must be an integer of at least 2, got {resolution!r}")
    space = _Space(results, data, x, y, fixed)
    gx, gy = space.grid(int(resolution), padding)
    exog = space.exog(gx, gy)
    ax = C.get_axes(ax)
    extent = (gx[0], gx[-1], gy[0], gy[-1])
    if method is not None:
        probs = _bayes_probabilities(results, exog, method)
    else:
        try:
            probs = C.probabilities(results, exog)
        except (TypeError, ValueError):  # a classifier without probabilities: class regions
            probs = None
    if probs is not None:
        levels = list(probs.columns)
        P = probs.to_numpy(dtype=float).reshape(gy.size, gx.size, len(levels))
    else:
        codes = pd.Series(results.predict(exog, which="class"))
        levels = sorted(pd.unique(codes.dropna()), key=str)
        if space.labels is not None:
            levels = sorted(set(levels) | set(pd.unique(space.labels)), key=str)
        P = np.stack([(codes.to_numpy() == lv) for lv in levels], axis=-1).astype(float)
        P = P.reshape(gy.size, gx.size, len(levels))
    colors = C.class_colors(levels)
    shown = level if level is not None else (levels[1] if len(levels) == 2 else None)
    if shown is not None and probs is not None:
        if shown not in levels:
            raise ValueError(f"level={shown!r} is not one of the model's levels {levels}")
        plt = C.pyplot()
        cm = plt.get_cmap(cmap or "RdBu_r")
        img = ax.imshow(P[..., levels.index(shown)], origin="lower", extent=extent,
                        aspect="auto", cmap=cm, vmin=0.0, vmax=1.0, interpolation="nearest")
        if colorbar:
            ax.figure.colorbar(img, ax=ax, label=f"P({_response(results)} = {C.label(shown)})")
        if len(levels) == 2:
            colors = {levels[0]: cm(0.1), levels[1]: cm(0.9)}
    else:
        K = len(levels)
        top = P.argmax(axis=-1)
        strength = (P.max(axis=-1) - 1.0 / K) / (1.0 - 1.0 / K)
        rgb = np.array([colors[lv][:3] for lv in levels])[top]
        img = 1.0 - strength[..., None] * (1.0 - rgb) * 0.6   # paler where less certain
        ax.imshow(img, origin="lower", extent=extent, aspect="auto", interpolation="nearest")
    _boundaries(ax, gx, gy, P)
    if scatter:
        _scatter_classes(ax, space.points, space.labels, levels, colors)
    ax.set(xlim=(gx[0], gx[-1]), ylim=(gy[0], gy[-1]), xlabel=str(space.x), ylabel=str(space.y))
    if space.held:
        ax.set_title("held at " + ", ".join(f"{k} = {_short(v)}" for k, v in space.held.items()),
                     fontsize="small")
    return ax


def _response(results) -> str:
    return str(results.model.data.endog_name)


def _short(v) -> str:
    return f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v)


def _scatter_classes(ax, points: np.ndarray, labels, levels: list, colors: dict) -> None:
    if labels is None:
        ax.scatter(points[:, 0], points[:, 1], s=14, color="0.2", edgecolor="white",
                   linewidth=0.5)
        return
    for lv in levels:
        sel = labels == lv
        if np.any(sel):
            ax.scatter(points[sel, 0], points[sel, 1], s=18, color=colors[lv],
                       edgecolor="black", linewidth=0.5, label=C.label(lv))
    ax.legend(title=None, loc="best", fontsize="small")


def discriminant_projection(results, data=None, y=None, *, components=(1, 2),
                            means: bool = True, bins: int = 20, ax=None):
    """Plot the data in discriminant coordinates (Fisher's projection, LDA's ``transform``).

    Parameters
    ----------
    results : results object
        A fitted LDA, or any result with ``transform(exog)`` giving discriminant coordinates
        (a two-class Fisher discriminant gives one).
    data : pandas.DataFrame or array-like, optional
        Rows to project; default the rows the model was fit to.
    y : array-like or str, optional
        Their classes (or the column holding them); default the model's response.
    components : tuple of two int
        The coordinates on the axes, counted from 1 (LD1 and LD2). With a single discriminant
        direction (two classes) a histogram of LD1 by class is drawn instead.
    means : bool
        Mark each class's mean in the projection.
    bins : int
        Histogram bins of the one-direction plot.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        One scatter (or histogram) per class, labelled by level; axis labels carry each
        direction's share of the between-class variance (MASS's "proportion of trace").
    """
    coords = results.transform(data)
    coords = coords.to_frame() if isinstance(coords, pd.Series) else pd.DataFrame(coords)
    labels = C.truth(results, data, y, n=coords.shape[0])
    levels = list(getattr(results, "levels", None) or sorted(pd.unique(labels), key=str))
    colors = C.class_colors(levels)
    names = [str(c) for c in coords.columns]
    if coords.shape[1] == 1:
        names = ["LD1"] if names == ["0"] else names
    share = _trace_share(results, coords.shape[1])
    ax = C.get_axes(ax)
    V = coords.to_numpy(dtype=float)
    if coords.shape[1] == 1:
        edges = np.histogram_bin_edges(V[:, 0], bins=bins)
        for lv in levels:
            sel = labels == lv
            ax.hist(V[sel, 0], bins=edges, histtype="stepfilled", alpha=0.45,
                    color=colors[lv], edgecolor=colors[lv], label=C.label(lv))
        ax.set(xlabel=_axis_label(names[0], share, 0), ylabel="Count")
        ax.legend(fontsize="small")
        return ax
    a, b = (int(c) - 1 for c in components)
    if not (0 <= a < V.shape[1] and 0 <= b < V.shape[1]) or a == b:
        raise ValueError(f"components must be two different numbers from 1 to {V.shape[1]}, "
                         f"got {components!r}")
    for lv in levels:
        sel = labels == lv
        ax.scatter(V[sel, a], V[sel, b], s=16, color=colors[lv], edgecolor="white",
                   linewidth=0.4, alpha=0.85, label=C.label(lv))
    if means:
        centres = np.array([V[labels == lv][:, [a, b]].mean(axis=0) for lv in levels])
        ax.scatter(centres[:, 0], centres[:, 1], marker="X", s=120,
                   color=[colors[lv] for lv in levels], edgecolor="black", linewidth=1.0,
                   label="class means")
    ax.set(xlabel=_axis_label(names[a], share, a), ylabel=_axis_label(names[b], share, b))
    ax.legend(fontsize="small")
    return ax


def _trace_share(results, r: int) -> np.ndarray | None:
    """Each direction's share of the between-class variance, svd^2 / sum(svd^2) (MASS)."""
    svd = getattr(results, "svd", None)
    if svd is None:
        return None
    s = np.asarray(svd, dtype=float)
    return (s**2 / np.sum(s**2))[:r]


def _axis_label(name: str, share, i: int) -> str:
    return name if share is None else f"{name} ({100 * share[i]:.1f}% of trace)"
