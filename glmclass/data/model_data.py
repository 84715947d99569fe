"""Validated model data: the array and formula paths end in one :class:`ModelData`.

Every check raises a ``ValueError`` naming the column, level or argument, and says what to do.
The caller's arrays and DataFrames are never modified.

The pieces are small functions so that another data source (Dask collections) can reuse them:
:func:`as_matrix` (a design as floats), :func:`per_row` (one per-row argument: weights, offset,
exposure), :func:`check_index` (pandas objects paired by label, never silently by position),
:func:`drop_missing`, and :func:`check_finite` (what the solvers can represent).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..formula.design import build_design
from ..formula.namespace import exposure as log_exposure
from ..formula.spec import SpecBase
from ..lazy import cached_property
from .finite import check_finite  # noqa: F401  (its home before; re-exported)
from .offsets import PREDICTED_BY_NAME, check_exposure, fold_exposure, named_columns
from .pieces import reduce_model_rows


def is_dask(obj: Any) -> bool:
    """Whether ``obj`` is a Dask collection (checked without importing Dask): such data go
    through :mod:`glmclass.data.dask`."""
    return type(obj).__module__.split(".")[0] == "dask"


def has_dask(*objs: Any) -> bool:
    """Whether any of ``objs`` is a Dask collection."""
    return any(is_dask(o) for o in objs)


def output_index(exog, n: int) -> pd.Index:
    """The index of predictions for new data: the caller's pandas index, else 0..n-1."""
    if isinstance(exog, pd.Series) and n == 1 and len(exog) != 1:
        return pd.Index([exog.name])  # one row of a formula model, by column name
    if isinstance(exog, (pd.DataFrame, pd.Series)):
        return exog.index
    return pd.RangeIndex(n)


def intercept_index(X: np.ndarray) -> int | None:
    """Position of the first column of X that is all ones, None if there is none.

    Only columns whose first value is 1 are scanned, one at a time: no n x p temporary.
    """
    if X.shape[0] == 0:
        return None
    for j in np.flatnonzero(X[0] == 1.0):
        if np.logical_and.reduce(X[:, j] == 1.0):  # np.all without its wrapper
            return int(j)
    return None


@lru_cache(maxsize=256)
def names_index(names: tuple, types: tuple) -> pd.Index:
    """The Index of a tuple of column names, shared by the models with those names (an Index
    is immutable): a bootstrap loop's refits would otherwise rebuild the same Index of strings
    every time (~50 us, more than a small fit's arithmetic). ``types`` (the names' types) is
    part of the key, since 1, 1.0 and True are equal as keys but not as labels."""
    return pd.Index(list(names))


@dataclass(frozen=True)
class ModelData:
    """What a model holds: the design, the response and the aligned per-row arrays.

    Attributes
    ----------
    exog : ndarray of shape (n_obs, p)
    exog_names : list of str
    endog : ndarray of shape (n_obs,) or (n_obs, 2)
        Raw response values (encoded later by the model); two columns (successes, failures)
        for a binomial count response.
    endog_name : str
    index : pandas.Index
        Labels of the rows used.
    arrays : dict of str -> ndarray
        ``offset``, ``freq_weights``, ``var_weights`` aligned with the rows used (None if absent);
        ``offset`` includes the formula's ``offset()`` terms and ``log(exposure)``.
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
    frame_columns : tuple or None
        The labels of a DataFrame given as ``exog`` on the array path: new DataFrames are
        matched by these labels, not by position.
    exposure : bool
        Whether ``exposure=`` was given (its log is part of ``offset``).
    labelled : bool
        Whether the rows carry the caller's labels: later pandas objects must have that index.
    """

    exog: np.ndarray
    exog_names: list[str]
    endog: np.ndarray
    endog_name: str
    index: pd.Index
    arrays: dict = field(default_factory=dict)
    spec: SpecBase | None = None
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
    frame_columns: tuple | None = None
    exposure: bool = False
    labelled: bool = True

    #: Whether the rows are NumPy arrays on this machine, which any pass may index, gather or
    #: hand to an in-memory algorithm (the exact separation LP, a leave-one-out refit). Data
    #: whose rows live elsewhere (:class:`glmclass.data.dask.DaskModelData`) say False and
    #: offer their rows as parts instead: ``encoded_rows(fn, *args)`` (a row source over
    #: ``fn(part, *args)``), ``row_array(key, default)`` (a lazy per-row array) and
    #: ``sum_parts(fn, *args, along=None)`` (a sum over the parts, one pass).
    in_memory: ClassVar[bool] = True

    @property
    def supports_exact_lp(self) -> bool:
        """Whether the exact separation LP (:func:`glmclass.numerics.separation.
        detect_separation`), which reads every row at once, can run on these rows."""
        return self.in_memory

    @property
    def nrows(self) -> int:
        return self.exog.shape[0]

    reduce_rows = reduce_model_rows  # sum fn(raw, X, offset, freq) over pieces of the rows used

    @cached_property
    def exog_index(self) -> pd.Index:
        """``exog_names`` as a pandas Index, made once: every labelled result reuses it (an
        Index of strings costs more to build than the rest of a small Series)."""
        names = tuple(self.exog_names)
        return names_index(names, tuple(map(type, names)))

    def build_report(self) -> str | None:
        """A line on how the data were read, for ``fit(disp=True)`` (None: nothing to say
        about data held in memory)."""
        return None

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
        """Design matrix of new data: through the formula, or as given for array models (a
        DataFrame's columns picked by the labels the model was fit with)."""
        return self._design(newdata)[0]

    def _design(self, newdata, offset_given: bool = False
                ) -> tuple[np.ndarray, np.ndarray | None]:
        if self.spec is not None:
            x, off = self.spec.design(newdata, offset_given=offset_given)
            return (x if self.feature_mask is None else x[:, self.feature_mask]), off
        if self.frame_columns is not None and isinstance(newdata, pd.DataFrame):
            newdata = _by_label(newdata, self.frame_columns)
        x = as_matrix(newdata, "exog")
        if x.shape[1] != self.exog.shape[1]:
            raise ValueError(
                f"exog has {x.shape[1]} columns but the model was fit with {self.exog.shape[1]}"
            )
        return x, None

    def new_rows(self, exog=None, offset=None, exposure=None
                 ) -> tuple[np.ndarray, np.ndarray | None, pd.Index]:
        """The design, offset and index of the rows to predict.

        Parameters
        ----------
        exog : DataFrame or array-like, optional
            New data; None for the rows the model was fit on.
        offset, exposure : array-like of shape (n,), optional
            The offset of those rows (``offset + log(exposure)``); when given they replace the
            model's offset (in-sample) or the formula's (new data). Without them new data get
            the offset their formula defines (``offset()`` terms, a column named by
            ``offset=``/``exposure=``), else none.

        Returns
        -------
        X : ndarray of shape (n, p)
        offset : ndarray of shape (n,) or None
        index : pandas.Index
        """
        given = offset is not None or exposure is not None
        if exog is None:
            X, formula_off, index = self.exog, self.arrays.get("offset"), self.index
            labels = self.index
        else:
            X, formula_off = self._design(exog, offset_given=given)
            index = output_index(exog, X.shape[0])
            labels = index if isinstance(exog, (pd.DataFrame, pd.Series)) else None
        n = X.shape[0]
        off = None
        if offset is not None:
            off = per_row(offset, "offset", n, labels)
        if exposure is not None:
            e = log_exposure(per_row(exposure, "exposure", n, labels))
            off = e if off is None else off + e
        return X, (formula_off if off is None else off), index


def _by_label(frame: pd.DataFrame, labels: tuple) -> pd.DataFrame:
    """The columns of ``frame`` with the given labels, in that order (raise naming any that
    are missing)."""
    missing = [c for c in labels if c not in frame.columns]
    if missing:
        raise ValueError(f"new data lack the column{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(map(repr, missing))}; the model was fit with the "
                         f"columns {list(labels)} (new DataFrames are matched by column name)")
    dup = [c for c in labels if list(frame.columns).count(c) > 1]
    if dup:
        raise ValueError(f"new data have more than one column named {dup[0]!r}")
    return frame[list(labels)]


# --- the pieces --------------------------------------------------------------------------------
def _dense(x):
    """A scipy.sparse matrix as a dense array (the solvers work on dense designs), and a numpy
    masked array with its masked entries missing (NaN, or None for labels), never used as data."""
    if isinstance(x, np.ma.MaskedArray):
        if not np.ma.is_masked(x):
            return np.asarray(x.data)
        if x.dtype.kind in "biuf":
            return x.astype(float).filled(np.nan)
        return x.astype(object).filled(None)
    return x.toarray() if hasattr(x, "toarray") and hasattr(x, "tocsr") else x


def _kind_message(name: str, label, dt) -> str | None:
    if dt.kind == "M" or isinstance(dt, pd.DatetimeTZDtype):
        return (f"{name} column {label!r} holds dates ({dt}); convert it to numbers first, e.g. "
                "(d - d.min()).dt.days for days since the first date")
    if dt.kind == "m":
        return (f"{name} column {label!r} holds time spans ({dt}); convert it to numbers first, "
                "e.g. t.dt.total_seconds() / 3600 for hours")
    if dt.kind == "c":
        return f"{name} column {label!r} is complex ({dt}); a design must be real numbers"
    if dt.kind not in "biuf":
        return (f"{name} column {label!r} is not numeric ({dt}); encode it, or use from_formula "
                "with C(column) to expand it into indicator columns")
    return None


def as_matrix(x, name: str) -> np.ndarray:
    """A design as a float array of shape (n, p): numpy arrays, pandas objects (nullable dtypes
    with NA become NaN), scipy.sparse matrices, or lists.

    Raises
    ------
    ValueError
        Naming the column that is not numeric (strings, dates, time spans, complex numbers).
    """
    x = _dense(x)
    if isinstance(x, pd.Series):
        x = x.to_frame()
    if isinstance(x, pd.DataFrame):
        # by position: duplicated column labels must not turn x[c] into a DataFrame
        for c, dt in zip(x.columns, x.dtypes, strict=True):
            why = _kind_message(name, c, dt)
            if why:
                raise ValueError(why)
        return x.to_numpy(dtype=float, na_value=np.nan)
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"{name} is not a rectangular array ({exc}); pass an (n_obs, p) "
                         "array or a DataFrame") from None
    if arr.dtype.kind == "O":
        arr = _object_to_float(arr, name)
    why = _kind_message(name, "", arr.dtype)
    if why:
        raise ValueError(why.replace(" column ''", "").replace(
            "is not numeric", "must be numeric, got dtype"))
    arr = arr.astype(float, copy=False)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an (n_obs, p) array, got a single value")
    return arr[:, None] if arr.ndim == 1 else arr


_as_2d = as_matrix  # the name other modules used


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


def check_index(name: str, obj, index: pd.Index | None) -> None:
    """Raise when a pandas object's index differs from the rows' (statsmodels raises too):
    pandas objects are paired by label, never silently by position."""
    if index is None or not isinstance(obj, (pd.Series, pd.DataFrame)) or obj.index.equals(index):
        return
    if len(obj.index) == len(index):
        diff = np.flatnonzero(obj.index.to_numpy(dtype=object) != index.to_numpy(dtype=object))
        j = int(diff[0]) if diff.size else 0
        where = (f"first difference at position {j}: {_plain(obj.index[j])!r} against "
                 f"{_plain(index[j])!r}")
    else:
        where = f"{len(obj.index)} labels against {len(index)}"
    raise ValueError(f"{name} and the rows of the data have different indexes ({where}); align "
                     f"them (e.g. {name}.reindex(exog.index)), or pass {name}.to_numpy() to pair "
                     "rows by position")


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def per_row(value, name: str, n: int, index: pd.Index | None = None) -> np.ndarray:
    """One per-row argument (weights, offset, exposure) as n floats; missing values are NaN.

    A scalar is the same value on every row; a pandas object must have the rows' index.

    Raises
    ------
    ValueError
        For a string (a column name needs ``from_formula``), more than one column, a wrong
        length, non-numeric values or a mismatched index, naming the argument.
    """
    if isinstance(value, str):
        raise ValueError(f"{name}={value!r} names a column: that needs from_formula (with "
                         "data); with arrays pass the values")
    if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, bool):
        return np.full(n, float(value))
    check_index(name, value, index)
    a = _dense(value)
    if isinstance(a, (pd.Series, pd.DataFrame)):
        a = a.to_numpy(dtype=object, na_value=None) if _nullable(a) else a.to_numpy()
    a = np.asarray(a)
    if a.ndim == 0:
        raise ValueError(f"{name} must be a number or one value per row, got {value!r}")
    if a.ndim > 1 and a.shape[1:] == (1,) * (a.ndim - 1):
        a = a.reshape(-1)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per row), got shape {a.shape}")
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} values but the data have {n} rows")
    if a.dtype.kind == "O":
        try:
            return pd.to_numeric(pd.Series(a), errors="raise").to_numpy(dtype=float)
        except (ValueError, TypeError):
            bad = next(v for v in a if v is not None and not isinstance(v, numbers.Real))
            raise ValueError(f"{name} must be numeric, got values like {bad!r}") from None
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {a.dtype} (values like {a[0]!r})")
    return a.astype(float)


def _nullable(obj) -> bool:
    dts = [obj.dtype] if isinstance(obj, pd.Series) else list(obj.dtypes)
    return any(getattr(dt, "na_value", None) is pd.NA for dt in dts)


def _response_values(endog):
    """The response as a 1-D array (labels kept, Categoricals kept) or an (n, 2) array of
    (successes, failures)."""
    endog = _dense(endog)
    col = endog
    if isinstance(endog, pd.DataFrame):
        if endog.shape[1] == 2:
            return endog.to_numpy(dtype=float, na_value=np.nan)
        if endog.shape[1] != 1:
            raise ValueError(f"endog must be one column (or two: successes, failures), got "
                             f"{endog.shape[1]}")
        col = endog.iloc[:, 0]
    if isinstance(getattr(col, "dtype", None), pd.CategoricalDtype):
        return pd.Categorical(col)  # keeps the category order, which sets the levels
    y = col.to_numpy() if isinstance(col, (pd.Series, pd.Index)) else np.asarray(col)
    y = y.ravel() if y.ndim > 1 and y.shape[1:] == (1,) else y
    if y.ndim == 2 and y.shape[1] == 2 and y.dtype.kind in "biuf":
        return y.astype(float)
    if y.ndim != 1:
        raise ValueError(f"endog must be one-dimensional (one response per row), or two columns "
                         f"(successes, failures) for a binomial model; got shape {y.shape}")
    return y


def _isna(y) -> np.ndarray:
    na = np.asarray(pd.isna(y))
    return na.any(axis=1) if na.ndim == 2 else na


def from_arrays(endog, exog, missing: str = "drop", **arrays) -> ModelData:
    """Validate the array path: numeric exog, equal lengths, aligned indexes, missing values.

    Parameters
    ----------
    endog : array-like of shape (n_obs,) or (n_obs, 2)
    exog : array-like of shape (n_obs, p)
        numpy array, pandas DataFrame (its labels are kept and used to select the columns of new
        DataFrames), or scipy.sparse matrix (made dense).
    missing : {"drop", "raise"}
    **arrays : array-like of shape (n_obs,), scalar or None
        Offsets, exposures and weights aligned with the rows.
    """
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    if endog is None:
        raise ValueError("endog is None: pass the response as an array of length n_obs")
    if isinstance(exog, pd.DataFrame):
        dup = exog.columns[exog.columns.duplicated()]
        if len(dup):
            raise ValueError(f"exog has more than one column named {dup[0]!r}; rename them")
    x = as_matrix(exog, "exog")
    if x.ndim != 2:
        raise ValueError(f"exog must be 2-dimensional, got shape {x.shape}")
    names = _names(exog, x.shape[1])
    y = _response_values(endog)
    n = x.shape[0]
    if n == 0:
        raise ValueError("exog has no rows: there is nothing to fit")
    if y.shape[0] != n:
        raise ValueError(f"endog has {y.shape[0]} rows but exog has {n}")
    if isinstance(exog, (pd.DataFrame, pd.Series)):
        check_index("endog", endog, exog.index)
    index = _index(endog, exog, n)
    pandas_index = index if isinstance(exog, (pd.DataFrame, pd.Series)) or isinstance(
        endog, (pd.DataFrame, pd.Series)) else None
    arrs = {k: (per_row(a, k, n, pandas_index) if a is not None else None)
            for k, a in arrays.items()}
    check_exposure(arrs.get("exposure"))
    bad = (np.isnan(x).any(axis=1) if np.isnan(x.sum()) else np.zeros(n, bool)) | _isna(y)
    for a in arrs.values():
        if a is not None:
            bad |= np.isnan(a)
    any_bad = bool(bad.any())
    if any_bad:
        if missing == "raise":
            cols = [names[j] for j in range(x.shape[1]) if np.isnan(x[:, j]).any()]
            if _isna(y).any():
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
    frame_columns = tuple(exog.columns) if isinstance(exog, pd.DataFrame) else None
    arrs, has_exposure = fold_exposure(arrs, None)
    return ModelData(x, names, y, _endog_name(endog), index, arrs, None,
                     int(bad.sum()) if any_bad else 0, None, intercept_index(x),
                     source_rows=np.flatnonzero(~bad) if any_bad else None, n_source=n,
                     frame_columns=frame_columns, exposure=has_exposure,
                     labelled=pandas_index is not None)


def from_formula(formula: str, data: pd.DataFrame, missing: str = "drop", eval_env=None,
                 engine: str = "patsy", **arrays) -> ModelData:
    """Validate the formula path.

    Per-row ``arrays`` are aligned with ``data``'s rows, or name a column of ``data``: weights
    are then taken from it, an offset or exposure column becomes part of the formula (and is
    read from new data when predicting, as R does). ``.`` in the formula leaves such columns
    out. ``eval_env`` is the environment captured at the public entry point.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    extra, exclude, named_exposure = named_columns(arrays, data.columns)
    aligned = {}
    for key, a in arrays.items():
        if isinstance(a, str):
            if key in PREDICTED_BY_NAME:
                continue
            a = data[a]
        aligned[key] = None if a is None else per_row(a, key, len(data), data.index)
    check_exposure(aligned.get("exposure"))
    d = build_design(formula, data, missing, aligned, eval_env, engine, extra, exclude)
    if d.endog is None:
        raise ValueError(f"the formula {formula!r} has no response: write 'y ~ x1 + x2'")
    arrs = {k: (a[d.rows] if a is not None else None) for k, a in aligned.items()}
    for key in arrays:
        arrs.setdefault(key, None)
    arrs, has_exposure = fold_exposure(arrs, d.offset)
    y = d.endog
    if isinstance(y, pd.DataFrame):
        values, name = y.to_numpy(dtype=float), " + ".join(map(str, y.columns))
    else:
        values = y.array if isinstance(y.dtype, pd.CategoricalDtype) else y.to_numpy()
        name = str(y.name)
    names = d.spec.column_names
    icpt = names.index("Intercept") if "Intercept" in names else intercept_index(d.exog)
    return ModelData(d.exog, names, values, name, d.index, arrs, d.spec, d.n_dropped,
                     formula, icpt, frame=data, source_rows=d.rows if d.n_dropped else None,
                     n_source=len(data), exposure=has_exposure or named_exposure)


def _index(endog, exog, n: int) -> pd.Index:
    for obj in (exog, endog):
        if isinstance(obj, (pd.DataFrame, pd.Series)):
            return obj.index
    return pd.RangeIndex(n)


def _endog_name(endog) -> str:
    name = getattr(endog, "name", None)
    if isinstance(endog, pd.DataFrame):
        name = endog.columns[0] if endog.shape[1] == 1 else " + ".join(map(str, endog.columns))
    return str(name) if name is not None else "y"
