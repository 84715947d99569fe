"""What the classifiers share when they read a class response: priors by level, the tidy
labels of a numeric response, the binary-feature check and the "no feature" message.

One module that the classifier models (:mod:`.discriminant`, :mod:`.naive_bayes`,
:mod:`.mnlogit`, :mod:`.discriminant_functions`, :mod:`.perceptron`) and their Dask set-up
(:mod:`.class_parts`) import, one way: it imports none of them, so they form no circle.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..rows.blocks import ArrayBlocks, RowBlocks


def parse_prior(prior, levels: list) -> np.ndarray | None:
    """Class priors in level order from a dict/Series by level or an array; None for default.

    Parameters
    ----------
    prior : dict, pandas.Series, array-like of shape (K,) or None
    levels : list
        The K class labels, in order.

    Returns
    -------
    ndarray of shape (K,) or None

    Raises
    ------
    ValueError
        For a missing or unknown level, a non-positive prior or priors not summing to 1.
    """
    if prior is None:
        return None
    k = len(levels)
    if isinstance(prior, (dict, pd.Series)):
        given = dict(prior.items())
        unknown = [lv for lv in given if lv not in levels]
        if unknown:
            raise ValueError(f"prior has the level {unknown[0]!r}, which is not a class of the "
                             f"response; classes are {levels}")
        missing = [lv for lv in levels if lv not in given]
        if missing:
            raise ValueError(f"prior gives no value for the class {missing[0]!r}; give one prior "
                             f"per class ({levels})")
        try:
            p = np.array([given[lv] for lv in levels], dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"prior must give a probability per class; got {given!r}") \
                from None
    else:
        try:
            p = np.asarray(prior, dtype=float).ravel()
        except (TypeError, ValueError):
            raise ValueError(f"prior must be one probability per class ({levels}), in that "
                             f"order, or a dict by class such as {{{levels[0]!r}: 0.5, ...}}; "
                             f"got {prior!r}") from None
        if p.shape != (k,):
            raise ValueError(f"prior has {p.size} values but the response has {k} classes "
                             f"({levels}); give one per class in that order, or a dict by class")
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        j = int(np.flatnonzero(~(np.isfinite(p) & (p > 0)))[0])
        raise ValueError(f"prior for class {levels[j]!r} is {p[j]}; priors must be positive")
    if abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"prior sums to {p.sum():g}; class priors must sum to 1")
    return p / p.sum()


def tidy_labels(levels: list) -> list:
    """Integral float labels (a numeric response read with missing values) become ints; NumPy
    scalars become Python scalars."""
    if levels and all(isinstance(v, (float, np.floating)) and float(v).is_integer()
                      for v in levels):
        return [int(v) for v in levels]
    return [v.item() if isinstance(v, np.generic) else v for v in levels]


def check_binary(X: np.ndarray, names: list[str]) -> None:
    """Raise naming the first column whose values are not all 0 or 1.

    Parameters
    ----------
    X : ndarray of shape (n_obs, D)
    names : list of str
        The D feature names.
    """
    bad = ~((X == 0) | (X == 1))
    if bad.any():
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        v = X[bad[:, j], j][0]
        raise ValueError(f"feature {names[j]!r} has the value {float(v)!r}: BernoulliNB needs "
                         "binary "
                         "(0/1 or bool) features; binarise it (e.g. from_formula with "
                         "'I(x > c)' or C(x) indicators)")


def first_not_binary(X: np.ndarray) -> np.ndarray:
    """Per column, the first value of ``X`` that is not 0 or 1 (NaN where all are): a block's
    share of :func:`check_binary`, combined over blocks in row order by :func:`earlier`."""
    bad = ~((X == 0) | (X == 1))
    out = np.full(X.shape[1], np.nan)
    cols = np.flatnonzero(bad.any(axis=0))
    for j in cols:
        out[j] = X[bad[:, j], j][0]
    return out


def earlier(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per column, ``a``'s value where it has one (not NaN), else ``b``'s: an associative
    combine that keeps the first value in row order."""
    return np.where(np.isnan(a), b, a)


def raise_not_binary(first: np.ndarray, names: list[str]) -> None:
    """:func:`check_binary`'s error from the per-column first values of
    :func:`first_not_binary` (nothing when every column is binary)."""
    if np.isnan(first).all():
        return
    check_binary(np.where(np.isnan(first), 0.0, first)[None, :], names)


def check_has_features(model: str, n_features: int) -> None:
    """Raise when a model that needs features has none (a formula ``y ~ 1``)."""
    if n_features == 0:
        raise ValueError(f"{model} needs at least one feature; the design has none (a formula "
                         "'y ~ 1' has no features)")


class CodedRows:
    """For models that hold class codes as ``endog``: the codes, and the row source of the
    design with the codes as the response (the data adapter's parts when the rows are not in
    memory, set up as ``_rows_source`` by the model)."""

    @property
    def codes(self) -> np.ndarray:
        """Class codes 0..K-1 of the rows (a lazy Dask array on Dask data)."""
        return self.endog

    def row_source(self) -> RowBlocks:
        """The design rows with the class codes as the response."""
        if not self.data.in_memory:  # rows not in memory (e.g. Dask partitions)
            return self._rows_source
        return ArrayBlocks(self.exog, self.endog)
