"""Response encoding: labels (strings, bools, Categoricals, integers) to codes, labels kept.

Level order follows R and statsmodels: a Categorical's category order, else sorted values.
For binary models the first level is failure (0) and the second success (1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def levels_of(y) -> list:
    """Ordered levels of a response: Categorical order, else sorted unique non-missing values."""
    if isinstance(getattr(y, "dtype", None), pd.CategoricalDtype):
        cats = list(y.dtype.categories) if hasattr(y.dtype, "categories") else list(y.categories)
        present = set(pd.unique(pd.Series(y).dropna()))
        empty = [c for c in cats if c not in present]
        return [c for c in cats if c not in empty]
    vals = pd.unique(pd.Series(np.asarray(y, dtype=object)).dropna())
    try:
        return sorted(vals)
    except TypeError:
        return sorted(vals, key=str)


def encode(y, levels: list) -> np.ndarray:
    """Integer codes 0..K-1 of ``y`` against ``levels``."""
    codes = pd.Categorical(np.asarray(y, dtype=object), categories=levels).codes
    return codes.astype(np.intp)


def binary_response(y, name: str = "endog") -> tuple[np.ndarray, list | None]:
    """Encode a binary response as floats in [0, 1].

    Returns
    -------
    y01 : ndarray of float
        0/1 values, or proportions for a numeric response in [0, 1].
    levels : list or None
        The two labels ``[failure, success]``; None for proportions.

    Raises
    ------
    ValueError
        For one class, more than two labels, or numbers outside [0, 1].
    """
    arr = y.to_numpy() if isinstance(y, pd.Series) else y
    is_cat = isinstance(getattr(arr, "dtype", None), pd.CategoricalDtype)
    kind = getattr(getattr(arr, "dtype", None), "kind", "O")
    if not is_cat and kind in "iuf":
        v = np.asarray(arr, dtype=float)
        if np.any(~np.isfinite(v)):
            raise ValueError(f"response {name!r} has infinite values")
        if np.any((v < 0) | (v > 1)):
            bad = v[(v < 0) | (v > 1)][0]
            raise ValueError(
                f"response {name!r} has the value {bad:g}: a binary model needs 0/1 values, two "
                "labels, or proportions in [0, 1]; use MNLogit for more than two classes"
            )
        distinct = np.unique(v)
        if np.all(np.isin(distinct, (0.0, 1.0))):
            _check_two(distinct.tolist(), name)
            return v, [0, 1]
        return v, None
    levels = levels_of(arr)
    _check_two(levels, name)
    return encode(arr, levels).astype(float), levels


def _check_two(levels: list, name: str) -> None:
    if not levels:
        raise ValueError(f"response {name!r} has no values")
    if len(levels) < 2:
        raise ValueError(
            f"response {name!r} has a single class ({levels[0]!r} only): there is nothing to "
            "classify"
        )
    if len(levels) > 2:
        raise ValueError(
            f"response {name!r} has {len(levels)} levels ({', '.join(map(repr, levels[:5]))}"
            f"{', ...' if len(levels) > 5 else ''}): a binary model needs two; use MNLogit"
        )


def multiclass_response(y, name: str = "endog", ref=None) -> tuple[np.ndarray, list]:
    """Encode a multiclass response; ``ref`` (a level) is moved to the front.

    Returns
    -------
    codes : ndarray of int
    levels : list
        Levels with the reference level first.
    """
    arr = y.to_numpy() if isinstance(y, pd.Series) else y
    levels = levels_of(arr)
    if len(levels) < 2:
        raise ValueError(f"response {name!r} has a single class: there is nothing to classify")
    if ref is not None:
        if ref not in levels:
            raise ValueError(f"ref={ref!r} is not a level of {name!r}; levels are {levels}")
        levels = [ref] + [lv for lv in levels if lv != ref]
    return encode(arr, levels), levels
