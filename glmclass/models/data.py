"""Validated model data: the array and formula paths end in one :class:`ModelData`.

Every check raises a ``ValueError`` naming the column, level or argument, and says what to do.
The caller's arrays and DataFrames are never modified.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..formula.design import DesignSpec, build_design


def intercept_index(X: np.ndarray) -> int | None:
    """Position of the first column of X that is all ones, None if there is none.

    Only columns whose first value is 1 are scanned, one at a time: no n x p temporary.
    """
    if X.shape[0] == 0:
        return None
    for j in np.flatnonzero(X[0] == 1.0):
        if np.all(X[:, j] == 1.0):
            return int(j)
    return None


@dataclass(frozen=True)
class ModelData:
    """What a model holds: the design, the response and the aligned per-row arrays.

    Attributes
    ----------
    exog : ndarray of shape (n_obs, p)
    exog_names : list of str
    endog : ndarray of shape (n_obs,)
        Raw response values (encoded later by the model).
    endog_name : str
    index : pandas.Index
        Labels of the rows used.
    arrays : dict of str -> ndarray
        ``offset``, ``freq_weights``, ``var_weights`` aligned with the rows used (None if absent).
    spec : DesignSpec or None
        Present on the formula path.
    n_dropped : int
        Rows dropped for missing values.
    formula : str or None
    intercept_index : int or None
        Position of the first constant column of ones (the intercept), None without one.
    feature_mask : ndarray of bool or None
        Formula columns kept as features (None: all): generative models drop the intercept,
        and :meth:`design` drops it from new data too.
    frame : pandas.DataFrame or None
        The DataFrame a formula was evaluated on (a reference, not a copy), so that other
        columns of it can be named later (cluster groups); None on the array path.
    source_rows : ndarray of int or None
        Positions of the rows used among the rows given (None: every row was used).
    n_source : int or None
        Number of rows given, before rows with missing values were dropped.
    """

    exog: np.ndarray
    exog_names: list[str]
    endog: np.ndarray
    endog_name: str
    index: pd.Index
    arrays: dict = field(default_factory=dict)
    spec: DesignSpec | None = None
    n_dropped: int = 0
    formula: str | None = None
    intercept_index: int | None = None
    feature_mask: np.ndarray | None = None
    frame: pd.DataFrame | None = field(default=None, repr=False)
    source_rows: np.ndarray | None = field(default=None, repr=False)
    n_source: int | None = None

    def rows_given(self, values: np.ndarray, name: str) -> np.ndarray:
        """Per-row values given for the rows the user passed (length ``n_source``) or for
        the rows used (length ``nrows``), as the values of the rows used."""
        n_given = self.nrows if self.n_source is None else self.n_source
        if values.shape[0] == n_given:
            return values if self.source_rows is None else values[self.source_rows]
        if values.shape[0] == self.nrows:
            return values
        dropped = f" ({self.nrows} after dropping rows with missing values)" \
            if n_given != self.nrows else ""
        raise ValueError(f"{name} has {values.shape[0]} values, but the data have {n_given} "
                         f"rows{dropped}")

    @property
    def nrows(self) -> int:
        return self.exog.shape[0]

    def without_intercept(self) -> ModelData:
        """The same data with the intercept column removed from the design (and from the
        designs of new data)."""
        if self.intercept_index is None:
            return self
        keep = np.ones(self.exog.shape[1], dtype=bool)
        keep[self.intercept_index] = False
        return replace(self, exog=np.ascontiguousarray(self.exog[:, keep]),
                       exog_names=[n for n, k in zip(self.exog_names, keep, strict=True) if k],
                       intercept_index=None, feature_mask=keep)

    def design(self, newdata) -> np.ndarray:
        """Design matrix of new data: through the formula, or as given for array models."""
        if self.spec is not None:
            x = self.spec.exog(newdata)
            return x if self.feature_mask is None else x[:, self.feature_mask]
        x = _as_2d(newdata, "exog")
        if x.shape[1] != self.exog.shape[1]:
            raise ValueError(
                f"exog has {x.shape[1]} columns but the model was fit with {self.exog.shape[1]}"
            )
        return x


def _as_2d(x, name: str) -> np.ndarray:
    if isinstance(x, pd.Series):
        x = x.to_frame()
    if isinstance(x, pd.DataFrame):
        # by position: duplicated column labels must not turn x[c] into a DataFrame
        for c, dt in zip(x.columns, x.dtypes, strict=True):
            if dt.kind not in "biuf":
                raise ValueError(
                    f"{name} column {c!r} is not numeric ({dt}); encode it, or use from_formula "
                    "with C(column) to expand it into indicator columns"
                )
        return x.to_numpy(dtype=float, na_value=np.nan)
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"{name} is not a rectangular array ({exc}); pass an (n_obs, p) "
                         "array or a DataFrame") from None
    if arr.dtype.kind == "O":
        arr = _object_to_float(arr, name)
    if arr.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} must be numeric, got dtype {arr.dtype}; use from_formula with C(column) "
            "for categorical columns"
        )
    arr = arr.astype(float, copy=False)
    return arr[:, None] if arr.ndim == 1 else arr


def _object_to_float(arr: np.ndarray, name: str) -> np.ndarray:
    """Object arrays of numbers (None = missing) become floats; else name the bad column."""
    flat = arr.reshape(arr.shape[0], -1) if arr.ndim > 1 else arr[:, None]
    out = np.empty(flat.shape, dtype=float)
    for j in range(flat.shape[1]):
        try:
            out[:, j] = pd.to_numeric(pd.Series(flat[:, j]), errors="raise")
        except (ValueError, TypeError):
            raise ValueError(
                f"{name} column {j} is not numeric (e.g. {flat[0, j]!r}); encode it, or use "
                "from_formula with C(column) for categorical columns"
            ) from None
    return out.reshape(arr.shape)


def _names(x, p: int) -> list[str]:
    if isinstance(x, pd.DataFrame):
        return [str(c) for c in x.columns]
    if isinstance(x, pd.Series):
        return [str(x.name) if x.name is not None else "x1"]
    return [f"x{j + 1}" for j in range(p)]


def from_arrays(endog, exog, missing: str = "drop", **arrays) -> ModelData:
    """Validate the array path: numeric exog, equal lengths, missing values handled.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
    exog : array-like of shape (n_obs, p)
    missing : {"drop", "raise"}
    **arrays : array-like of shape (n_obs,) or None
        Offsets and weights aligned with the rows.
    """
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    x = _as_2d(exog, "exog")
    if x.ndim != 2:
        raise ValueError(f"exog must be 2-dimensional, got shape {x.shape}")
    names = _names(exog, x.shape[1])
    if endog is None:
        raise ValueError("endog is None: pass the response as an array of length n_obs")
    col = endog
    if isinstance(endog, pd.DataFrame):
        if endog.shape[1] != 1:
            raise ValueError(f"endog must be one column, got {endog.shape[1]}")
        col = endog.iloc[:, 0]
    if isinstance(getattr(col, "dtype", None), pd.CategoricalDtype):
        y = pd.Categorical(col)  # keeps the category order, which sets the levels
    else:
        y = col.to_numpy() if isinstance(col, (pd.Series, pd.Index)) else np.asarray(col)
        y = y.ravel() if y.ndim > 1 and y.shape[1:] == (1,) else y
    if y.ndim != 1:
        raise ValueError(f"endog must be one-dimensional (one response per row), got shape "
                         f"{y.shape}; for counts of successes and failures pass proportions as "
                         "endog and the totals as var_weights")
    n = x.shape[0]
    if n == 0:
        raise ValueError("exog has no rows: there is nothing to fit")
    if y.shape[0] != n:
        raise ValueError(f"endog has {y.shape[0]} rows but exog has {n}")
    index = _index(endog, exog, n)
    arrs = {}
    for key, a in arrays.items():
        if a is None:
            arrs[key] = None
            continue
        a = _per_row(a, key)
        if a.shape[0] != n:
            raise ValueError(f"{key} has {a.shape[0]} values but exog has {n} rows")
        arrs[key] = a
    # a NaN-free sum means no NaN anywhere: skip the n x p mask in the common case
    bad = (np.isnan(x).any(axis=1) if np.isnan(x.sum()) else np.zeros(n, bool)) | pd.isna(y)
    for a in arrs.values():
        if a is not None:
            bad |= np.isnan(a)
    if bad.any():
        if missing == "raise":
            cols = [names[j] for j in range(x.shape[1]) if np.isnan(x[:, j]).any()]
            if pd.isna(y).any():
                cols.insert(0, "endog")
            cols += [k for k, a in arrs.items() if a is not None and np.isnan(a).any()]
            raise ValueError(
                f"missing values in {', '.join(map(repr, cols))} ({int(bad.sum())} rows); pass "
                "missing='drop' to drop incomplete rows"
            )
        keep = ~bad
        if not keep.any():
            raise ValueError("no complete rows: every row has a missing value")
        x, y, index = x[keep], y[keep], index[keep]
        arrs = {k: (a[keep] if a is not None else None) for k, a in arrs.items()}
    x = np.ascontiguousarray(x)
    return ModelData(x, names, y, _endog_name(endog), index, arrs, None, int(bad.sum()),
                     None, intercept_index(x), source_rows=np.flatnonzero(~bad) if bad.any()
                     else None, n_source=n)


def _per_row(a, key: str) -> np.ndarray:
    """A per-row array (offset, weights) as float, naming the argument when it is not one."""
    a = np.asarray(a.to_numpy() if isinstance(a, (pd.Series, pd.DataFrame)) else a)
    if a.ndim > 1 and a.shape[1:] == (1,) * (a.ndim - 1):
        a = a.reshape(-1)
    if a.ndim != 1:
        raise ValueError(f"{key} must be one-dimensional (one value per row), got shape {a.shape}")
    try:
        return a.astype(float)
    except (ValueError, TypeError):
        raise ValueError(f"{key} must be numeric, got values like {a[0]!r}") from None


def from_formula(formula: str, data: pd.DataFrame, missing: str = "drop", eval_env=None,
                 **arrays) -> ModelData:
    """Validate the formula path; ``arrays`` are aligned with ``data``'s rows; ``eval_env`` is
    the environment captured at the public entry point."""
    d = build_design(formula, data, missing, arrays, eval_env=eval_env)
    if d.endog is None:
        raise ValueError(f"the formula {formula!r} has no response: write 'y ~ x1 + x2'")
    arrs = {k: (_per_row(a, k)[d.rows] if a is not None else None) for k, a in arrays.items()}
    y = d.endog
    values = y.array if isinstance(y.dtype, pd.CategoricalDtype) else y.to_numpy()
    names = d.spec.column_names
    icpt = names.index("Intercept") if "Intercept" in names else intercept_index(d.exog)
    return ModelData(d.exog, names, values, str(y.name), d.index, arrs, d.spec, d.n_dropped,
                     formula, icpt, frame=data,
                     source_rows=d.rows if d.n_dropped else None, n_source=len(data))


def _index(endog, exog, n: int) -> pd.Index:
    for obj in (exog, endog):
        if isinstance(obj, (pd.DataFrame, pd.Series)):
            return obj.index
    return pd.RangeIndex(n)


def _endog_name(endog) -> str:
    name = getattr(endog, "name", None)
    if isinstance(endog, pd.DataFrame):
        name = endog.columns[0]
    return str(name) if name is not None else "y"


def check_finite(data: ModelData) -> None:
    """Raise on infinite values in the design or the per-row arrays, naming the column."""
    if not np.isfinite(data.exog.sum()) and not np.all(np.isfinite(data.exog)):  # sum: no mask
        cols = [data.exog_names[j] for j in range(data.exog.shape[1])
                if not np.all(np.isfinite(data.exog[:, j]))]
        raise ValueError(f"exog column {cols[0]!r} has infinite values; remove or cap them")
    for key, a in data.arrays.items():
        if a is not None and not np.all(np.isfinite(a)):
            raise ValueError(f"{key} has infinite values")
