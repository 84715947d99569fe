"""How well a classifier's probabilities rank and how well they are calibrated: ROC curves with
their AUC, and reliability curves with the number of rows behind each point."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from . import _common as C

# --- ROC ----------------------------------------------------------------------------------------


def _roc_points(score: np.ndarray, positive: np.ndarray, w: np.ndarray) -> pd.DataFrame:
    """The ROC curve of one score: a point per distinct threshold, tied scores taken together
    (so that ties give a diagonal segment and the AUC counts them one half)."""
    order = np.argsort(-score, kind="mergesort")
    s, pos, w = score[order], positive[order], w[order]
    tp, fp = np.cumsum(w * pos), np.cumsum(w * ~pos)
    last = np.r_[np.flatnonzero(np.diff(s)), s.size - 1]   # the last row of each tie group
    P, N = tp[-1], fp[-1]
    if P <= 0 or N <= 0:
        raise ValueError("a ROC curve needs rows of both the level and the others; "
                         f"these rows have {'none' if P <= 0 else 'only'} of the level")
    return pd.DataFrame({"threshold": np.r_[np.inf, s[last]],
                         "fpr": np.r_[0.0, fp[last] / N],
                         "tpr": np.r_[0.0, tp[last] / P]})


def roc_curve(results, data=None, y=None, level=None, weights=None) -> pd.DataFrame:
    """ROC curve(s) of a fitted classifier's predicted probabilities.

    Parameters
    ----------
    results : results object
        Any fitted classifier whose ``predict(exog, which="prob")`` gives class probabilities.
    data : pandas.DataFrame or array-like, optional
        New data to predict; default the rows the model was fit to.
    y : array-like or str, optional
        True labels of ``data`` (or the name of its column); default the column named as the
        model's response.
    level : label, optional
        The level scored against the others; default the modelled level (the second) of a
        binary model, every level in turn (one-vs-rest) of a multiclass model.
    weights : array-like, optional
        Row weights; in-sample the model's frequency weights are used.

    Returns
    -------
    pandas.DataFrame
        Columns ``level``, ``threshold``, ``fpr`` (false-positive rate) and ``tpr``
        (true-positive rate); one row per distinct threshold, from (0, 0) to (1, 1).
    """
    probs, labels, w = C.scored(results, data, y, weights)
    frames = []
    for lv in C.levels_to_show(probs, level):
        pts = _roc_points(probs[lv].to_numpy(), labels == lv, w)
        frames.append(pts.assign(level=lv))
    out = pd.concat(frames, ignore_index=True)
    return out[["level", "threshold", "fpr", "tpr"]]


def _auc(curve: pd.DataFrame) -> float:
    """Trapezoidal area under one level's curve (exact: the curve is piecewise linear)."""
    x, y = curve["fpr"].to_numpy(), curve["tpr"].to_numpy()
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1])) / 2)


def roc_auc(results, data=None, y=None, level=None, weights=None):
    """Area under the ROC curve: the probability that a random row of the level gets a higher
    predicted probability than a random row of another level (ties count one half).

    Parameters are those of :func:`roc_curve`.

    Returns
    -------
    float or pandas.Series
        The AUC of a binary model (or of ``level``); a Series by level (one-vs-rest) for a
        multiclass model.
    """
    curve = roc_curve(results, data, y, level, weights)
    levels = list(dict.fromkeys(curve["level"]))
    aucs = pd.Series([_auc(curve[curve["level"] == lv]) for lv in levels], index=levels,
                     name="auc")
    return float(aucs.iloc[0]) if len(aucs) == 1 else aucs


def roc(results, data=None, y=None, *, level=None, weights=None, label: str | None = None,
        ax=None):
    """Plot the ROC curve of a fitted classifier, with its AUC in the legend.

    Parameters
    ----------
    results : results object
        A fitted classifier (Logit, Probit, GLM, MNLogit, LDA, QDA, BayesLogit, naive Bayes).
    data, y, level, weights
        As :func:`roc_curve`: new data and its labels (default in-sample), the level scored.
    label : str, optional
        Legend text before the AUC; default the model's class name (``Logit``), numbered
        ``[1] Logit``, ``[2] Probit``, ... once a second model is drawn on the same axes
        (with the level for a multiclass model). Call again with the same ``ax`` to overlay
        models. The legend sits in the lower right, below the curves of any model better
        than chance.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        With one line per level, the chance diagonal, unit limits and an equal aspect.

    Examples
    --------
    >>> ax = gc.plot.roc(logit_results)                          # doctest: +SKIP
    >>> gc.plot.roc(probit_results, ax=ax, label="probit")       # doctest: +SKIP
    """
    curve = roc_curve(results, data, y, level, weights)
    ax = C.get_axes(ax)
    name, gid = _name(results, ax)
    if label is not None:
        name, gid = label, gid[:-2]
    levels = list(dict.fromkeys(curve["level"]))
    for lv in levels:
        pts = curve[curve["level"] == lv]
        text = name if len(levels) == 1 else f"{name}: {C.label(lv)}"
        ax.plot(pts["fpr"], pts["tpr"], drawstyle="default",
                label=f"{text} (AUC = {_auc(pts):.3f})", gid=gid)
    if not any(line.get_label() == "chance" for line in ax.get_lines()):
        ax.plot([0, 1], [0, 1], linestyle=":", color="0.5", label="chance")
    ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal",
           xlabel="False-positive rate (1 - specificity)",
           ylabel="True-positive rate (sensitivity)")
    handles, texts = ax.get_legend_handles_labels()
    order = sorted(range(len(texts)), key=lambda i: texts[i] == "chance")   # chance last
    ax.legend([handles[i] for i in order], [texts[i] for i in order], loc="lower right",
              fontsize="small")
    return ax


#: The gid of the lines drawn for a model: ``glmclass-model:<k>`` (``:d`` when the label is
#: the default), by which a later call on the same axes numbers its model.
_GID = "glmclass-model"


def _name(results, ax) -> tuple[str, str]:
    """A short legend name and the gid of a model's lines: the model class (``Logit``); from
    the second model drawn on the same axes ``[2] Probit``, and the first default name
    becomes ``[1] Logit`` (the formula is too long for a legend)."""
    mine = [a for a in (*ax.get_lines(), *ax.containers)
            if str(_gid(a)).startswith(_GID + ":")]
    k = len({_gid(a).split(":")[1] for a in mine}) + 1
    if k == 2:
        for a in mine:
            if _gid(a).endswith(":1:d") and a.get_label()[:1] not in ("[", "_"):
                a.set_label("[1] " + a.get_label())
    name = C.model_name(results)
    return (name if k == 1 else f"[{k}] {name}"), f"{_GID}:{k}:d"


def _gid(artist) -> str:
    """The gid of a line, or of an error-bar container's data line."""
    if hasattr(artist, "get_gid"):
        return artist.get_gid() or ""
    return artist.lines[0].get_gid() or ""


# --- calibration --------------------------------------------------------------------------------


def _wilson(k: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion k / n."""
    z = stats.norm.isf(alpha / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def calibration_table(results, data=None, y=None, level=None, bins: int = 10,
                      strategy: str = "uniform", weights=None,
                      alpha: float = 0.05) -> pd.DataFrame:
    """Reliability table: predicted probabilities binned, against the observed frequencies.

    Parameters
    ----------
    results, data, y, level, weights
        As :func:`roc_curve`.
    bins : int
        Number of bins of the predicted probability.
    strategy : {"uniform", "quantile"}
        Equal-width bins over [0, 1], or bins holding equal numbers of rows.
    alpha : float
        The observed frequency's Wilson interval has coverage ``1 - alpha``.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: ``level``, ``bin_lower``, ``bin_upper``, ``predicted``
        (mean predicted probability), ``observed`` (fraction of rows of the level), ``count``
        (rows, or their weights), ``lower`` and ``upper`` (the interval of ``observed``).
    """
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool) or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    if strategy not in ("uniform", "quantile"):
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")
    probs, labels, w = C.scored(results, data, y, weights)
    frames = []
    for lv in C.levels_to_show(probs, level):
        p = probs[lv].to_numpy()
        if strategy == "uniform":
            edges = np.linspace(0.0, 1.0, bins + 1)
        else:
            edges = np.unique(np.quantile(p, np.linspace(0, 1, bins + 1)))
        # right-closed bins, the first one closed on both sides (0 belongs to it)
        idx = np.clip(np.searchsorted(edges, p, side="left") - 1, 0, edges.size - 2)
        hit = (labels == lv).astype(float)
        n = np.bincount(idx, weights=w, minlength=edges.size - 1)
        k = np.bincount(idx, weights=w * hit, minlength=edges.size - 1)
        s = np.bincount(idx, weights=w * p, minlength=edges.size - 1)
        used = n > 0
        lo, hi = _wilson(k[used], n[used], alpha)
        frames.append(pd.DataFrame({
            "level": lv, "bin_lower": edges[:-1][used], "bin_upper": edges[1:][used],
            "predicted": s[used] / n[used], "observed": k[used] / n[used], "count": n[used],
            "lower": lo, "upper": hi}))
    return pd.concat(frames, ignore_index=True)


def calibration(results, data=None, y=None, *, level=None, bins: int = 10,
                strategy: str = "uniform", weights=None, alpha: float = 0.05,
                counts: bool = True, label: str | None = None, ax=None):
    """Plot a reliability (calibration) curve: observed frequency against mean predicted
    probability per bin, with Wilson intervals and the number of rows in each bin.

    Parameters
    ----------
    results, data, y, level, bins, strategy, weights, alpha
        As :func:`calibration_table`.
    counts : bool
        Write each bin's count next to its point.
    label : str, optional
        Legend text; default the model's class name, numbered from the second model on the
        same axes, as :func:`roc`. The legend sits in the upper left, above the points of any
        model that is not wildly miscalibrated.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        With the diagonal of perfect calibration, one error-bar line per level and unit limits.
    """
    table = calibration_table(results, data, y, level, bins, strategy, weights, alpha)
    ax = C.get_axes(ax)
    name, gid = _name(results, ax)
    if label is not None:
        name, gid = label, gid[:-2]
    levels = list(dict.fromkeys(table["level"]))
    if not any(line.get_label() == "perfectly calibrated" for line in ax.get_lines()):
        ax.plot([0, 1], [0, 1], linestyle=":", color="0.5", label="perfectly calibrated")
    for lv in levels:
        t = table[table["level"] == lv]
        text = name if len(levels) == 1 else f"{name}: {C.label(lv)}"
        err = np.vstack([t["observed"] - t["lower"], t["upper"] - t["observed"]])
        bars = ax.errorbar(t["predicted"], t["observed"], yerr=err, marker="o", capsize=2,
                           label=text)
        bars.lines[0].set_gid(gid)
        if counts:
            for px, py, n in zip(t["predicted"], t["observed"], t["count"], strict=True):
                ax.annotate(f"{n:g}", (px, py), xytext=(4, -10), textcoords="offset points",
                            fontsize="x-small", color=bars.lines[0].get_color())
    ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", xlabel="Mean predicted probability",
           ylabel="Observed frequency")
    ax.legend(loc="upper left", fontsize="small")
    return ax
