"""The rows of one partition and what is learned from them, as plain NumPy and pandas (no
Dask here: :mod:`glmclass.data.dask` sends these functions to where the partitions live).

A *part* is ``(X, y, arrays, index)``: the design of a partition's complete rows, its response
(proportions when the response was (successes, failures) counts, the trials then folded into
``var_weights`` as :func:`glmclass.data.response.binomial_response` does in memory), its
per-row arrays (``offset`` already including the formula's ``offset()`` terms and
``log(exposure)``) and its row labels. :func:`part_facts` summarises a part and
:func:`merge_facts` merges the summaries into :class:`DataFacts` on the client.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import DataWarning, warn_user
from ..formula.fast_design import level_codes_of
from ..formula.incremental import PartitionDesign, Witness
from ..formula.spec import complete_rows
from .labelled import ByLabel
from .offsets import check_exposure, fold_exposure
from .response import INTEGER_TOL

#: Distinct numeric response values remembered (beyond: proportions or counts, not labels).
MAX_RESPONSE_VALUES = 10_000

# --- per-partition facts ------------------------------------------------------------------------

@dataclass
class ResponseFacts:
    """What the models need to know about the raw response, merged over partitions.

    Attributes
    ----------
    kind : str
        ``"i"`` integers, ``"f"`` other numbers, ``"b"`` booleans, ``"c"`` a pandas
        Categorical, else the NumPy kind of the labels (``"O"``, ``"U"``).
    categories : list or None
        A Categorical's categories, in order.
    ordered : bool
    values : dict
        Distinct values (keys), in order of appearance; at most
        :data:`MAX_RESPONSE_VALUES` for numbers (``truncated`` then).
    truncated : bool
    lo, hi : float
        Smallest and largest value of a numeric response.
    counts : bool
        The response was (successes, failures) counts (the values are then proportions).
    nonint : bool
        Some counts are not whole numbers.
    """

    kind: str = "f"
    categories: list | None = None
    ordered: bool = False
    values: dict = field(default_factory=dict)
    truncated: bool = False
    lo: float = np.inf
    hi: float = -np.inf
    counts: bool = False
    nonint: bool = False

    @classmethod
    def of(cls, y, trials: np.ndarray | None = None) -> ResponseFacts:
        """The facts of one partition's response values (proportions of ``trials`` for a
        counts response)."""
        if trials is not None:
            s = y * trials
            nonint = bool(np.any(np.abs(s - np.round(s)) > INTEGER_TOL)
                          or np.any(np.abs(trials - np.round(trials)) > INTEGER_TOL))
            return replace(cls.of(y), counts=True, nonint=nonint)
        dt = getattr(y, "dtype", None)
        if isinstance(dt, pd.CategoricalDtype):
            return cls("c", list(dt.categories), bool(dt.ordered),
                       dict.fromkeys(pd.unique(pd.Series(y).dropna())))
        arr = np.asarray(y)
        kind = arr.dtype.kind
        if kind in "iuf":
            kind = "i" if kind in "iu" else "f"  # integers keep their labels (1, not 1.0)
            arr = arr.astype(float, copy=False)
            with np.errstate(invalid="ignore"):
                lo = float(arr.min(initial=np.inf))
                hi = float(arr.max(initial=-np.inf))
            vals = pd.unique(arr)
            trunc = vals.size > MAX_RESPONSE_VALUES
            return cls(kind, None, False, dict.fromkeys(vals[:MAX_RESPONSE_VALUES].tolist()),
                       trunc, lo, hi)
        return cls(kind, None, False, dict.fromkeys(pd.unique(pd.Series(arr, dtype=object))))

    def merge(self, other: ResponseFacts) -> ResponseFacts:
        vals = dict(self.values)
        trunc = self.truncated or other.truncated
        for v in other.values:
            if v not in vals:
                if self.kind in "if" and len(vals) >= MAX_RESPONSE_VALUES:
                    trunc = True
                    break
                vals[v] = None
        kind = self.kind if self.kind == other.kind else (
            "f" if {self.kind, other.kind} <= {"i", "f"} else "O")
        return ResponseFacts(kind, self.categories or other.categories,
                             self.ordered or other.ordered, vals, trunc,
                             min(self.lo, other.lo), max(self.hi, other.hi),
                             self.counts or other.counts, self.nonint or other.nonint)

    def surrogate(self):
        """A small array with the response's distinct values (and extremes), that the
        in-memory encoders (:mod:`glmclass.data.response`) read as they would the whole
        column: same levels, same errors."""
        vals = list(self.values)
        if self.kind == "c":
            return pd.Categorical(vals, categories=self.categories, ordered=self.ordered)
        if self.kind in "if":
            extra = [self.lo, self.hi] if vals else []  # infinite extremes raise as in memory
            out = np.asarray(vals + extra, dtype=float)
            return out.astype(np.int64) if self.kind == "i" else out
        return np.asarray(vals, dtype=object if self.kind != "b" else bool)


@dataclass
class ArrayFacts:
    """Facts about a per-row array (weights, offset) of one or more partitions."""

    lo: float = np.inf
    nonfinite: int = 0
    nonunit: bool = False
    nonzero: bool = False
    positive: bool = False

    @classmethod
    def of(cls, a: np.ndarray) -> ArrayFacts:
        fin = np.isfinite(a)
        return cls(float(a.min(initial=np.inf)), int((~fin).sum()), bool(np.any(a != 1)),
                   bool(np.any(a != 0)), bool(np.any(a > 0)))

    def merge(self, o: ArrayFacts) -> ArrayFacts:
        return ArrayFacts(min(self.lo, o.lo), self.nonfinite + o.nonfinite,
                          self.nonunit or o.nonunit, self.nonzero or o.nonzero,
                          self.positive or o.positive)


@dataclass
class WeightSums:
    """Sums over rows of the prior weights ``pw = freq_weights * var_weights`` (trials
    included) and of the response, made in the facts pass so that no model needs a pass of
    its own for them (the null fit's mean, the binomial's class check, ``nobs``).

    Attributes
    ----------
    nobs : float
        Sum of the frequency weights of the rows with positive variance weight.
    total : float
        Sum of pw.
    zero : int
        Rows with pw = 0.
    numeric : ndarray of shape (4,) or None
        A numeric response: sum pw y, and among rows with pw > 0 the rows with y = 0, with
        y = 1, and with 0 < y < 1.
    labels : dict
        A response of labels (strings, booleans, a Categorical): per label, ``[sum pw, rows
        with pw > 0]``.
    """

    nobs: float = 0.0
    total: float = 0.0
    zero: int = 0
    numeric: np.ndarray | None = None
    labels: dict = field(default_factory=dict)

    @classmethod
    def of(cls, y, arrays: dict, n: int) -> WeightSums:
        """The sums of one part's response ``y`` (n rows) and ``arrays``."""
        f, v = arrays.get("freq_weights"), arrays.get("var_weights")
        pw = f * v if f is not None and v is not None else (f if f is not None else v)
        nobs = float(n if f is None and v is None else (
            (np.ones(n) if f is None else f)[(v > 0) if v is not None else slice(None)].sum()))
        pos = None if pw is None else pw > 0
        zero = 0 if pos is None else int(n - np.count_nonzero(pos))
        total = float(n if pw is None else pw.sum())
        dt = getattr(y, "dtype", None)
        if dt is not None and not isinstance(dt, pd.CategoricalDtype) and dt.kind in "iuf":
            yf = np.asarray(y, dtype=float)
            yp = yf if pos is None else yf[pos]
            numeric = np.array([float(yf.sum() if pw is None else pw @ yf),
                                float(np.count_nonzero(yp == 0)),
                                float(np.count_nonzero(yp == 1)),
                                float(np.count_nonzero((yp > 0) & (yp < 1)))])
            return cls(nobs, total, zero, numeric)
        codes, uniques = pd.factorize(np.asarray(y) if dt is None else y)
        k = len(uniques)
        w = np.ones(n) if pw is None else pw
        sums = np.bincount(codes, weights=w, minlength=k)
        kept = np.bincount(codes if pos is None else codes[pos], minlength=k)
        values = uniques.tolist() if hasattr(uniques, "tolist") else list(uniques)
        labels = {v_: [float(a), int(b)] for v_, a, b in zip(values, sums, kept, strict=True)}
        return cls(nobs, total, zero, None, labels)

    def merge(self, o: WeightSums) -> WeightSums:
        if self.numeric is not None and o.numeric is not None:
            numeric = self.numeric + o.numeric
        else:
            numeric = self.numeric if o.numeric is None else o.numeric
        labels = {k: list(v) for k, v in self.labels.items()}
        for k, (a, b) in o.labels.items():
            got = labels.setdefault(k, [0.0, 0])
            got[0] += a
            got[1] += b
        return WeightSums(self.nobs + o.nobs, self.total + o.total, self.zero + o.zero,
                          numeric, labels)

    def response_sums(self, levels: list | None) -> np.ndarray:
        """sum pw y, and among rows with pw > 0 the rows with y = 0, y = 1 and 0 < y < 1,
        for the response coded 0/1 by ``levels`` (``[failure, success]``) when it is labels.

        Returns
        -------
        ndarray of shape (4,)
        """
        if not self.labels:
            return np.zeros(4) if self.numeric is None else self.numeric
        if levels is None or len(levels) != 2:
            raise ValueError("a response of labels needs its two levels [failure, success]")
        fail, succ = (self.labels.get(lv, [0.0, 0]) for lv in levels)
        out = np.array([succ[0], fail[1], succ[1], 0.0])
        return out if self.numeric is None else out + self.numeric


@dataclass
class DataFacts:
    """Facts of all partitions, merged on the client.

    Attributes
    ----------
    lengths : tuple of int
        Complete rows of each partition.
    n_dropped : int
        Rows dropped for missing values.
    response : ResponseFacts
    x_nonfinite : ndarray of bool, shape (p,)
        Columns with an infinite value.
    x_ones : ndarray of bool, shape (p,)
        Columns whose every value is 1.
    arrays : dict of str -> ArrayFacts
    digests : tuple
        Per partition, hashes of the row labels and of the frequency weights.
    weights : WeightSums
        Sums of the prior weights and the response.
    x_absmax : ndarray of shape (p,)
        ``max |x_j|`` of each column (the scale of the separation symptoms).
    """

    lengths: tuple
    n_dropped: int
    response: ResponseFacts
    x_nonfinite: np.ndarray
    x_ones: np.ndarray
    arrays: dict
    digests: tuple
    weights: WeightSums = field(default_factory=WeightSums)
    x_absmax: np.ndarray | None = None

    def fingerprint(self) -> str:
        """The rows' fingerprint for :func:`glmclass.compare` (labels, and frequency weights
        when some are not 1)."""
        h = hashlib.sha1()
        for idx, _ in self.digests:
            h.update(idx)
        fw = self.arrays.get("freq_weights")
        if fw is not None and fw.nonunit:
            for _, w in self.digests:
                h.update(w)
        return h.hexdigest()


def part_facts(part: tuple, n_dropped: int) -> tuple:
    X, y, arrays, index = part
    ones = (X == 1.0).all(axis=0) if X.shape[0] else np.ones(X.shape[1], dtype=bool)
    nonfinite = ~np.isfinite(X).all(axis=0) if X.size else np.zeros(X.shape[1], dtype=bool)
    arr = {k: ArrayFacts.of(a) for k, a in arrays.items() if a is not None}
    idx = hashlib.sha1(pd.util.hash_array(np.asarray(index)).tobytes()).digest()
    fw = arrays.get("freq_weights")
    wd = hashlib.sha1(np.ascontiguousarray(fw if fw is not None else np.ones(X.shape[0]),
                                           dtype=float).tobytes()).digest()
    absmax = np.abs(X).max(axis=0, initial=0.0) if X.shape[0] else np.zeros(X.shape[1])
    sums = WeightSums.of(y, arrays, X.shape[0])
    return (X.shape[0], n_dropped, ResponseFacts.of(y, arrays.get("trials")), nonfinite, ones,
            arr, (idx, wd), sums, absmax)


def merge_facts(facts: list) -> DataFacts:
    lengths = tuple(int(f[0]) for f in facts)
    resp, nonfin, ones, arrays, sums, absmax = None, None, None, {}, WeightSums(), None
    for f in facts:
        resp = f[2] if resp is None else resp.merge(f[2])
        nonfin = f[3] if nonfin is None else nonfin | f[3]
        ones = f[4] if ones is None else ones & f[4]
        for k, a in f[5].items():
            arrays[k] = a if k not in arrays else arrays[k].merge(a)
        sums = sums.merge(f[7])
        absmax = f[8] if absmax is None else np.maximum(absmax, f[8])
    return DataFacts(lengths, int(sum(f[1] for f in facts)), resp or ResponseFacts(), nonfin,
                     ones, arrays, tuple(f[6] for f in facts), sums, absmax)


def array_part(X, y, arrays: dict, start: int, missing: str, names: list,
               endog_name: str = "y") -> tuple:
    """One partition of the array path: complete rows only, labelled by position."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    y = np.asarray(y)
    n = X.shape[0]
    for key, a in arrays.items():
        if a is not None and a.shape[0] != n:
            raise ValueError(f"{key} has {a.shape[0]} values in a partition where exog has {n} "
                             "rows: their chunks do not match; rechunk it like exog")
    if y.shape[0] != n:
        raise ValueError(f"endog has {y.shape[0]} values in a partition where exog has {n} "
                         "rows: their chunks do not match; rechunk it like exog")
    index = np.arange(start, start + n)
    check_exposure(arrays.get("exposure"), index)
    bad = np.isnan(X).any(axis=1) | _isna(y)
    for a in arrays.values():
        if a is not None:
            bad |= np.isnan(a)
    if bad.any() and missing == "raise":
        cols = [names[j] for j in range(X.shape[1]) if np.isnan(X[:, j]).any()]
        if _isna(y).any():
            cols.insert(0, "endog")
        cols += [k for k, a in arrays.items() if a is not None and np.isnan(a).any()]
        raise ValueError(f"missing values in {', '.join(map(repr, cols))}; pass "
                         "missing='drop' to drop incomplete rows")
    keep = ~bad
    if bad.any():
        X, y, index = X[keep], y[keep], index[keep]
        arrays = {k: (a[keep] if a is not None else None) for k, a in arrays.items()}
    y, arrays = _fold(y, arrays, None, endog_name)
    return (np.ascontiguousarray(X), y, arrays, index), int(bad.sum())


def _isna(y) -> np.ndarray:
    na = np.asarray(pd.isna(y))
    return na.any(axis=1) if na.ndim == 2 else na


def _fold(y, arrays: dict, formula_offset: np.ndarray | None, name: str) -> tuple:
    """A part's response and arrays as the models read them: ``offset`` = the given offset +
    the formula's ``offset()`` terms + log(exposure) (:func:`~glmclass.data.offsets.
    fold_exposure`, as in memory); (successes, failures) counts become proportions with the
    trials multiplied into ``var_weights`` (:func:`~glmclass.data.response.binomial_response`
    in memory), the trials kept as ``arrays["trials"]`` for the facts."""
    arrays = fold_exposure(arrays, formula_offset)[0]
    if np.ndim(y) != 2:
        return y, arrays
    y = np.asarray(y, dtype=float)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"response {name!r}: counts must be finite")
    if np.any(y < 0):
        raise ValueError(f"response {name!r}: counts of successes and failures must be "
                         f"non-negative, got {y[(y < 0).any(axis=1)][0].tolist()}")
    trials = y[:, 0] + y[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        prop = np.where(trials > 0, y[:, 0] / trials, 0.0)
    v = arrays.get("var_weights")
    arrays["var_weights"] = trials if v is None else trials * v
    arrays["trials"] = trials
    return prop, arrays


def formula_part(frame: pd.DataFrame, recipe: PartitionDesign, aligned: dict,
                  missing: str) -> tuple:
    """One partition of the formula path: the recipe's design of its complete rows."""
    aligned = {k: (None if a is None else _as_float(
        a.at(frame.index) if isinstance(a, ByLabel) else a, k))
        for k, a in aligned.items()}
    check_exposure(aligned.get("exposure"), frame.index)
    y, X, keep, off = recipe.build(frame, aligned, missing)
    if isinstance(y, pd.DataFrame):  # (successes, failures)
        values = y.to_numpy(dtype=float)
    else:
        values = y.array if isinstance(y.dtype, pd.CategoricalDtype) else y.to_numpy()
    every = bool(keep.all())  # then nothing is taken (an index is immutable: shared as it is)
    arrays = {k: (a if every else a[keep]) if a is not None else None
              for k, a in aligned.items()}
    values, arrays = _fold(values, arrays, off, recipe.endog_name)
    return (X, values, arrays, frame.index if every else frame.index[keep]), int((~keep).sum())


def _as_float(a, key: str) -> np.ndarray:
    a = np.asarray(a.to_numpy() if isinstance(a, (pd.Series, pd.DataFrame)) else a)
    if a.ndim > 1:
        a = a.reshape(a.shape[0], -1)[:, 0] if a.shape[1:] == (1,) * (a.ndim - 1) else a
    if a.ndim != 1:
        raise ValueError(f"{key} must be one-dimensional (one value per row)")
    try:
        return a.astype(float)
    except (ValueError, TypeError):
        raise ValueError(f"{key} must be numeric") from None


# --- moved from the Dask adapter: per-partition pieces that need no Dask -------------------
def check_counts(facts: DataFacts, name: str) -> None:
    """What :func:`~glmclass.data.response.counts_response` checks of all rows in memory,
    from the merged facts of a (successes, failures) response."""
    if not facts.response.counts:
        return
    if not facts.arrays["trials"].positive:
        raise ValueError(f"response {name!r} has no trials (successes + failures is 0 on every "
                         "row)")
    if facts.response.nonint:
        warn_user(f"response {name!r}: non-integer counts in a binomial GLM (as R warns); the "
                  "log-likelihood is not that of binomial counts", DataWarning)


def take_part_columns(part: tuple, cols: np.ndarray) -> tuple:
    X, y, arrays, index = part
    return (np.ascontiguousarray(X[:, cols]), y, arrays, index)


def level_codes(frame: pd.DataFrame, levels: dict) -> dict:
    """The level codes of a partition's columns ``levels`` names (``{column: levels}``, see
    :meth:`~glmclass.formula.incremental.PartitionDesign.level_columns`): -1 where the value
    is missing (or in no complete row, so in no level), a byte per row up to 127 levels."""
    out = {}
    for c, lv in levels.items():
        codes = level_codes_of(frame[c], lv)
        out[c] = codes.astype(np.int8 if len(lv) < 128 else np.int16 if len(lv) < 32768 else
                              np.int32)
    return out


def with_level_codes(frame: pd.DataFrame, codes: dict, levels: dict, columns: list
                     ) -> pd.DataFrame:
    """A partition's ``columns`` from its other columns read again and the held level codes
    of the columns ``levels`` names, as categoricals of those levels (whose codes the design
    reads as they are; a missing value stays missing)."""
    out = frame.copy(deep=False)
    for c, lv in levels.items():
        out[c] = pd.Categorical.from_codes(codes[c], categories=list(lv))
    return out[columns]


def witness_of(piece: pd.DataFrame, used: list) -> Witness:
    """The distinct values of one partition's complete rows (levels are learned on the rows
    the fit uses, as in memory)."""
    keep = complete_rows(piece)
    return Witness.of(piece if keep.all() else piece[keep], used)


def merge_witnesses(a: Witness, b: Witness) -> Witness:
    """``a`` then ``b``, in a new Witness (a task's result is never changed in place)."""
    return Witness(list(a.values)).merge(a).merge(b)


class DaskIndex:
    """The row labels of Dask data: never gathered on the client; its ``fingerprint`` stands
    in for the labels in :func:`glmclass.results.base.row_key`."""

    def __init__(self, parts, facts: DataFacts) -> None:
        self._parts = parts
        self._n = sum(facts.lengths)
        self.fingerprint = facts.fingerprint()

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"<DaskIndex: {self._n} rows in {len(self._parts)} partitions>"


def build_report(timings: dict, persisted: bool) -> str | None:
    """The build's passes and their times, e.g. ``design: 1 pass, 2.1 s; parts: built,
    checked and persisted in 3.4 s`` (``DaskModelData.timings``)."""
    if not timings:
        return None
    out = []
    if "design_s" in timings:
        n = timings.get("design_passes", 1)
        out.append(f"design: {n} pass{'es' if n != 1 else ''}, {timings['design_s']:.3f} s")
    how = "persisted" if persisted else "not persisted: rebuilt every pass"
    if "codes_s" in timings:
        held = ", ".join(repr(c) for c in timings.get("held", ()))
        out.append(f"level codes of {held} held in memory: 1 pass, {timings['codes_s']:.3f} s")
        how = "not persisted: rebuilt every pass from the held codes and the other columns"
    out.append(f"parts: built and checked in {timings.get('facts_s', 0.0):.3f} s ({how})")
    return "; ".join(out)


def numeric_column_names(frame) -> list[str]:
    """The column names of a Dask (or pandas) DataFrame or Series given as exog, each
    checked to be numeric (naming the first that is not)."""
    cols = [frame.name] if frame.ndim == 1 else list(frame.columns)
    for c, dt in zip(cols, [frame.dtype] if frame.ndim == 1 else frame.dtypes, strict=True):
        if dt.kind not in "biuf":
            raise ValueError(f"exog column {c!r} is not numeric ({dt}); encode it, or use "
                             "from_formula with C(column)")
    return [str(c) for c in cols]
