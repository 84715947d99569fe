"""What the plotting functions share: matplotlib imported on first use, new axes, class colours,
and the probabilities and true labels of a fitted classifier."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def pyplot():
    """``matplotlib.pyplot``, imported on first use so that ``import glmclass`` never needs it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("glmclass.plot needs matplotlib: pip install 'glmclass[plot]'") from exc
    return plt


def get_axes(ax=None, **subplots: Any):
    """``ax``, or the axes of a new figure with constrained layout (so that tick labels,
    axis labels and legends outside the axes are inside the figure when it is saved)."""
    if ax is not None:
        return ax
    subplots.setdefault("layout", "constrained")
    _, ax = pyplot().subplots(**subplots)
    return ax


def model_name(results) -> str:
    """A short legend name of a fit: its model class (``Logit``, ``MNLogit``, ``GLM``)."""
    model = getattr(results, "model", None)
    return type(model).__name__ if model is not None else type(results).__name__


def spread(values: np.ndarray, gap: float, low: float, high: float) -> np.ndarray:
    """Positions close to ``values`` at least ``gap`` apart, kept within [low, high] when they
    fit (text labels stacked along an axis without overlapping), in the input order."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    y = values[order].copy()
    for i in range(1, y.size):               # push up
        y[i] = max(y[i], y[i - 1] + gap)
    if y.size and y[-1] > high:              # then down from the top
        y[-1] = high
        for i in range(y.size - 2, -1, -1):
            y[i] = min(y[i], y[i + 1] - gap)
    if y.size and y[0] < low:                # more labels than room: spread evenly
        y = np.linspace(low, max(high, low + gap * (y.size - 1)), y.size)
    out = np.empty_like(y)
    out[order] = y
    return out


def class_colors(levels: list) -> dict:
    """One colour per level, the same in every plot of this module (matplotlib's ``tab10``)."""
    cmap = pyplot().get_cmap("tab10")
    return {lv: cmap(i % 10) for i, lv in enumerate(levels)}


def label(level) -> str:
    """A level as shown in legends: ``1.0`` as ``1``."""
    if isinstance(level, (float, np.floating)) and float(level).is_integer():
        return str(int(level))
    return str(level)


def probabilities(results, exog=None) -> pd.DataFrame:
    """Class probabilities, one column per level (the prediction contract's ``which="prob"``)."""
    p = results.predict(exog, which="prob")
    if not isinstance(p, pd.DataFrame):
        raise TypeError(f"{type(results).__name__}.predict(which='prob') did not return a "
                        "DataFrame of class probabilities")
    return p


def truth(results, data=None, y=None, n: int | None = None) -> np.ndarray:
    """True labels of the rows predicted.

    In-sample (``data`` None): the response of the rows the model used. New data: ``y`` (an
    array, or a column name of ``data``), by default the column named as the model's response.
    """
    if data is None and y is None:
        return np.asarray(results.model.data.endog, dtype=object)
    if y is None:
        name = results.model.data.endog_name
        if not (isinstance(data, pd.DataFrame) and name in data.columns):
            raise ValueError(f"pass the true labels of the new data as y= (an array or a column "
                             f"name): data has no column {name!r}, the model's response")
        y = name
    if isinstance(y, str) and isinstance(data, pd.DataFrame):
        if y not in data.columns:
            raise ValueError(f"y={y!r} is not a column of data")
        y = data[y]
    y = np.asarray(y, dtype=object).ravel()
    if n is not None and y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} values for {n} predicted rows")
    return y


def freq_weights(results, data=None, weights=None) -> np.ndarray | None:
    """Row weights: ``weights`` if given, else the model's frequency weights in-sample."""
    if weights is not None:
        w = np.asarray(weights, dtype=float).ravel()
        if np.any(~np.isfinite(w)) or np.any(w < 0):
            raise ValueError("weights must be finite and non-negative")
        return w
    if data is None:
        arrays = getattr(results.model.data, "arrays", {}) or {}
        w = arrays.get("freq_weights")
        return None if w is None else np.asarray(w, dtype=float)
    return None


def scored(results, data=None, y=None, weights=None):
    """Probabilities, true labels and weights of the rows that have all three.

    Returns
    -------
    probs : pandas.DataFrame of shape (n, K)
    labels : ndarray of object, shape (n,)
    weights : ndarray of float, shape (n,)
    """
    probs = probabilities(results, data)
    labels = truth(results, data, y, n=probs.shape[0])
    w = freq_weights(results, data, weights)
    w = np.ones(probs.shape[0]) if w is None else w
    if w.shape[0] != probs.shape[0]:
        raise ValueError(f"weights has {w.shape[0]} values for {probs.shape[0]} predicted rows")
    levels = list(probs.columns)
    known = pd.Series(labels).isin(levels).to_numpy()
    if not known[~pd.isna(labels)].all():
        bad = pd.Series(labels[~known & ~pd.isna(labels)]).unique()[:3]
        raise ValueError(f"labels {list(bad)} are not levels of the model ({levels}); a model "
                         "fit to proportions has no labels to score against")
    keep = known & probs.notna().all(axis=1).to_numpy()
    return probs[keep], labels[keep], w[keep]


def levels_to_show(probs: pd.DataFrame, level) -> list:
    """The levels a one-vs-rest plot shows: ``level``, the success of a binary model, or all."""
    levels = list(probs.columns)
    if level is not None:
        if level not in levels:
            raise ValueError(f"level={level!r} is not one of the model's levels {levels}")
        return [level]
    return levels[1:] if len(levels) == 2 else levels
