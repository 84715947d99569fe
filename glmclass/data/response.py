"""Response encoding: labels (strings, bools, Categoricals, integers) to codes, labels kept.

Level order follows R and statsmodels: a Categorical's category order, else sorted values.
For binary models the first level is failure (0) and the second success (1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DataWarning, warn_user

#: R's tolerance for "non-integer #successes in a binomial glm!" (binomial()$initialize).
INTEGER_TOL = 1e-3


def _check_labels(y, name: str = "endog") -> None:
    """One label per row, and no complex numbers (they have no order; sorted as text they
    would flip which level is the success)."""
    if np.ndim(y) == 2:
        raise ValueError(f"response {name!r} has two columns (successes, failures), which only "
                         "a binomial GLM understands; give one label per row")
    kind = getattr(getattr(y, "dtype", None), "kind", "O")
    if kind == "c" or (kind == "O" and any(isinstance(v, complex) for v in np.asarray(y))):
        raise ValueError(f"response {name!r} holds complex numbers; give 0/1, bool, labels or "
                         "real proportions (e.g. y.real)")


def levels_of(y, name: str = "endog") -> list:
    """Ordered levels of a response: Categorical order, else the unique non-missing values
    sorted as values (numbers numerically, strings alphabetically).

    Raises
    ------
    ValueError
        For complex numbers, two columns, or labels of types that cannot be ordered together
        (numbers mixed with strings).
    """
    if isinstance(getattr(y, "dtype", None), pd.CategoricalDtype):
        cats = list(y.dtype.categories) if hasattr(y.dtype, "categories") else list(y.categories)
        present = set(pd.unique(pd.Series(y).dropna()))
        empty = [c for c in cats if c not in present]
        return [c for c in cats if c not in empty]
    _check_labels(y, name)
    fast = _numpy_levels(y)
    if fast is not None:
        return fast[0].tolist()
    vals = pd.unique(pd.Series(np.asarray(y, dtype=object)).dropna())
    try:
        return sorted(vals)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in vals})
        raise ValueError(f"response {name!r} mixes labels of different types ({', '.join(kinds)})"
                         "; convert them to one type (e.g. y.astype(str)) so that their order "
                         "is defined") from None


def _numpy_levels(y, inverse: bool = False):
    """The distinct values of a numeric or text NumPy response, sorted, as :func:`levels_of`
    finds them through pandas (10x faster on small data), and with ``inverse`` the position
    of each row's value among them; None where pandas must decide: other types, missing
    values, or a negative zero (pandas keeps the first zero it sees)."""
    if type(y) is not np.ndarray or y.ndim != 1 or y.dtype.kind not in "biufU":
        return None
    small = _small_counts(y)
    if small is not None:
        return small if inverse else (small[0], None)
    u = np.unique(y)
    if y.dtype.kind == "f" and u.size and (np.isnan(u[-1]) or (
            np.any(u == 0.0) and np.signbit(y[y == 0.0]).any())):
        return None
    # a search of the few sorted values: 2-5x faster than np.unique(return_inverse=True)
    return u, (np.searchsorted(u, y) if inverse else None)


def _small_counts(y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_numpy_levels` with the inverse by counting, for responses of small
    non-negative whole numbers (class codes 0..K-1 as ints or floats; no -0.0): a few passes
    instead of a sort (1e6 rows: 4 ms against 16 ms); None for other responses."""
    if not y.size or y.dtype.kind == "U":
        return None
    with np.errstate(invalid="ignore"):  # NaN and inf cast to junk, then fail the comparison
        codes = y.astype(np.intp)
    if y.dtype.kind == "f":
        step = 1 << 16  # in chunks: no temporaries of N values
        for i in range(0, y.size, step):
            part = y[i:i + step]
            if np.signbit(part).any() or not np.array_equal(codes[i:i + step], part):
                return None
    elif np.minimum.reduce(codes) < 0:
        return None
    if np.maximum.reduce(codes) >= 4096:
        return None
    present = np.flatnonzero(np.bincount(codes))
    position = np.zeros(int(present[-1]) + 1, dtype=np.intp)
    position[present] = np.arange(present.size)
    # in place (no second array of N codes); "clip" takes unbuffered, element by element
    return present.astype(y.dtype), np.take(position, codes, out=codes, mode="clip")


def encode(y, levels: list) -> np.ndarray:
    """Integer codes 0..K-1 of ``y`` against ``levels``."""
    fast = _numpy_levels(y, inverse=True)
    if fast is not None:
        codes = _recode(fast[0].tolist(), levels, fast[1])
        if codes is not None:
            return codes
    codes = pd.Categorical(np.asarray(y, dtype=object), categories=levels).codes
    return codes.astype(np.intp)


def _recode(values: list, levels: list, inverse: np.ndarray) -> np.ndarray | None:
    """Codes against ``levels`` of rows whose value is ``values[inverse]``, written over
    ``inverse`` (one array of N codes at a time); None unless the values are the levels, in
    another order."""
    where = {v: j for j, v in enumerate(levels)}
    order = [where.get(v) for v in values]  # the position in ``levels`` of each value
    if len(values) != len(levels) or None in order or len(set(order)) != len(order):
        return None
    if order == list(range(len(order))):
        return inverse.astype(np.intp, copy=False)
    # "clip" takes unbuffered, element by element: safe in place
    return np.take(np.asarray(order, dtype=np.intp), inverse, out=inverse, mode="clip")


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
    if not is_cat:
        _check_labels(arr, name)
    kind = getattr(getattr(arr, "dtype", None), "kind", "O")
    if not is_cat and kind in "iuf":
        v = np.asarray(arr, dtype=float)
        # (ufunc reductions rather than the ndarray.all wrapper: a small fit's response is a
        # few hundred values, checked in a few microseconds)
        if not np.logical_and.reduce(np.isfinite(v)):
            raise ValueError(f"response {name!r} has infinite values")
        ones = v == 1.0
        if not np.logical_and.reduce(ones | (v == 0.0)):  # proportions, or outside [0, 1]
            if ((v < 0) | (v > 1)).any():
                bad = v[(v < 0) | (v > 1)][0]
                raise ValueError(
                    f"response {name!r} has the value {float(bad)!r}: a binary model needs 0/1 "
                    "values, two labels, or proportions in [0, 1]; use MNLogit for more than two "
                    "classes"
                )
            return v, None
        n_ones = int(np.count_nonzero(ones))  # 0/1 values: both must occur (no sort)
        _check_two([x for x, c in ((0.0, v.size - n_ones), (1.0, n_ones)) if c], name)
        return v, [0, 1]
    levels = levels_of(arr, name)
    _check_two(levels, name)
    return encode(arr, levels).astype(float), levels


def binomial_response(y, name: str, var_weights: np.ndarray | None
                      ) -> tuple[np.ndarray, list | None, np.ndarray | None]:
    """A binomial GLM's response: labels or 0/1, proportions, or (successes, failures) counts.

    Parameters
    ----------
    y : array-like of shape (n,) or (n, 2)
    name : str
    var_weights : ndarray of shape (n,) or None
        The numbers of trials of a proportion response.

    Returns
    -------
    y01 : ndarray of shape (n,)
        0/1 or proportions.
    levels : list or None
        ``[failure, success]`` labels; None for proportions and counts.
    trials : ndarray of shape (n,) or None
        For counts, successes + failures (to multiply into the variance weights; rows with no
        trial get weight 0, as R's ``glm``).

    Warns
    -----
    DataWarning
        As R does, when the numbers of successes are not whole numbers: proportions without
        ``var_weights`` (the numbers of trials), or non-integer counts.
    """
    if np.ndim(y) == 2:
        prop, trials = counts_response(np.asarray(y, dtype=float), name)
        return prop, None, trials
    y01, levels = binary_response(y, name)
    if levels is None:
        successes = y01 if var_weights is None else y01 * var_weights
        off = np.abs(successes - np.round(successes)) > INTEGER_TOL
        if off.any():
            row = int(np.flatnonzero(off)[0])
            hint = ("a proportion needs the number of trials as var_weights (statsmodels), or "
                    "the response as two columns of counts, 'successes + failures ~ ...' "
                    "(statsmodels) or 'cbind(successes, failures) ~ ...' (R)"
                    if var_weights is None else "check the counts behind the proportions")
            warn_user(f"response {name!r}: non-integer numbers of successes in a binomial GLM "
                      f"(row {row}: {successes[row]:.6g}); {hint}. The log-likelihood, AIC and "
                      "BIC are then not those of binomial counts.", DataWarning)
    return y01, levels, None


def counts_response(y: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Proportions and numbers of trials of an (n, 2) array of (successes, failures)."""
    if not np.all(np.isfinite(y)):
        raise ValueError(f"response {name!r}: counts must be finite")
    if np.any(y < 0):
        raise ValueError(f"response {name!r}: counts of successes and failures must be "
                         f"non-negative, got {y[(y < 0).any(axis=1)][0].tolist()}")
    if np.any(np.abs(y - np.round(y)) > INTEGER_TOL):
        warn_user(f"response {name!r}: non-integer counts in a binomial GLM (as R warns); the "
                  "log-likelihood is not that of binomial counts", DataWarning)
    trials = y[:, 0] + y[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        prop = np.where(trials > 0, y[:, 0] / trials, 0.0)
    if not np.any(trials > 0):
        raise ValueError(f"response {name!r} has no trials (successes + failures is 0 on every "
                         "row)")
    return prop, trials


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
    codes, _, levels = multiclass_levels(y, name, ref)
    return codes, levels


def multiclass_levels(y, name: str = "endog", ref=None) -> tuple[np.ndarray, list, list]:
    """:func:`multiclass_response` and the levels in their natural order, from one pass.

    Returns
    -------
    codes : ndarray of int
        Positions in ``levels`` (0 the reference level).
    natural : list
        The levels as :func:`levels_of` orders them.
    levels : list
        Levels with the reference level first.
    """
    arr = y.to_numpy() if isinstance(y, pd.Series) else y
    fast = _numpy_levels(arr, inverse=True)
    natural = fast[0].tolist() if fast is not None else levels_of(arr, name)
    if len(natural) < 2:
        raise ValueError(f"response {name!r} has a single class: there is nothing to classify")
    levels = natural
    if ref is not None:
        if ref not in levels:
            raise ValueError(f"ref={ref!r} is not a level of {name!r}; levels are {levels}")
        levels = [ref] + [lv for lv in levels if lv != ref]
    codes = None if fast is None else _recode(natural, levels, fast[1])
    return (encode(arr, levels) if codes is None else codes), natural, levels
