"""Design matrices from formulas on pandas DataFrames.

:func:`build_design` turns ``"y ~ x1 + C(g) + np.log(x2)"`` and a DataFrame into the response,
the design matrix, the offset and a spec that rebuilds the same columns for new data
(categorical levels and stateful transforms such as ``center()``/``standardize()`` are
remembered from the training data). It runs in small steps, each its own function, so that
other data sources (Dask partitions) can reuse them:

1. :func:`glmclass.formula.parse.parse`: the formula text (``.``, two-column responses,
   ``offset()`` terms, long sums) and every Python expression in it;
2. :func:`check_formula`: every expression passes the safety check of
   :mod:`glmclass.formula.namespace`, and the data columns it uses are found;
3. :func:`used_frame` and :func:`complete_rows`: the used columns, and the rows with no missing
   value in them (R's ``na.omit``) — engines only ever see complete rows;
4. :func:`plain_frame`: pandas' nullable dtypes become NumPy ones; dates are refused;
5. an engine learns the design and builds the matrix: patsy (:class:`DesignSpec`, here) or
   formulaic (:mod:`glmclass.formula.formulaic_engine`, imported only when asked for).
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy

from ..errors import DataError, GlmclassError
from .namespace import FormulaEnvironment, formula_env, safe_namespace
from .parse import ParsedFormula, names_in, parse, split_formula

__all__ = ["ENGINES", "Design", "DesignSpec", "build_design", "capture_env", "split_formula"]

#: Formula engines: patsy (always available) and formulaic (optional, faster on large data).
ENGINES = ("patsy", "formulaic")

#: The environment a public entry point captures (kept under its old name).
capture_env = formula_env


def _with_numpy(env: patsy.EvalEnvironment) -> patsy.EvalEnvironment:
    return env.with_outer_namespace({"np": np, "numpy": np})


# --- steps shared by every engine ---------------------------------------------------------------
def check_formula(parsed: ParsedFormula, columns, env: FormulaEnvironment) -> list:
    """Check every expression of a parsed formula; return the data columns it uses (in the
    data's order).

    Raises
    ------
    UnsafeFormulaError
        For a refused name, attribute or construct (see :mod:`glmclass.formula.namespace`).
    DataError
        When a used column name appears more than once in the data.
    """
    from .namespace import check_code

    labels = {str(c) for c in columns}
    outer = env.namespace

    def known(name: str) -> bool:
        return name in labels or name in outer

    for code in parsed.codes:
        check_code(code, known, env.trusted, lambda name: name in labels)
    names = names_in(parsed.codes)
    used = [c for c in columns if str(c) in names]
    strs = [str(c) for c in used]
    dup = sorted({s for s in strs if strs.count(s) > 1})
    if dup:
        raise DataError(f"the data have more than one column named {dup[0]!r}, which the "
                        "formula uses; rename the duplicates (e.g. df.columns = [...])")
    return used


def used_frame(data: pd.DataFrame, used: list) -> pd.DataFrame:
    """The used columns under their string names, indexed by row position (no copy of the
    data under pandas' copy-on-write)."""
    frame = data[used] if used else pd.DataFrame(index=data.index)
    return frame.set_axis([str(c) for c in used], axis=1).set_axis(
        pd.RangeIndex(len(data)), axis=0)


def complete_rows(frame: pd.DataFrame) -> np.ndarray:
    """Rows with no missing value in any column (pandas' NA, NaN, None, NaT), one column at a
    time (integer and boolean NumPy columns cannot hold one)."""
    keep = np.ones(len(frame), dtype=bool)
    for name in frame.columns:
        col = frame[name]
        kind = col.dtype.kind
        if kind in "iub" and isinstance(col.dtype, np.dtype):
            continue
        if kind == "f" and isinstance(col.dtype, np.dtype):
            values = col.to_numpy()
            if not np.isnan(values.sum()):  # no NaN: no mask needed
                continue
            keep &= ~np.isnan(values)
        else:
            keep &= ~col.isna().to_numpy()
    return keep


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns the engines understand: nullable numbers (``Float64``, ``Int64``) as float64,
    ``boolean`` as bool, nullable strings as Python strings. Rows must be complete.

    Raises
    ------
    DataError
        For dates and time spans (naming the column and a conversion).
    """
    out = {}
    for name in frame.columns:
        col = frame[name]
        dt = col.dtype
        if dt.kind == "M" or isinstance(dt, (pd.DatetimeTZDtype, pd.PeriodDtype)):
            raise DataError(
                f"column {name!r} holds dates ({dt}): a formula needs numbers or categories; "
                f"convert it first, e.g. (df[{name!r}] - df[{name!r}].min()).dt.days for days "
                f"since the first date, or df[{name!r}].dt.year")
        if dt.kind == "m":
            raise DataError(
                f"column {name!r} holds time spans ({dt}): convert it to numbers first, e.g. "
                f"df[{name!r}].dt.total_seconds() / 3600 for hours")
        if getattr(dt, "na_value", None) is pd.NA and not isinstance(dt, pd.CategoricalDtype):
            if dt.kind in "iuf":
                out[name] = col.to_numpy(dtype=float, na_value=np.nan)
            elif dt.kind == "b":
                out[name] = col.to_numpy(dtype=bool, na_value=False)
            else:
                out[name] = col.to_numpy(dtype=object, na_value=None)
    return frame.assign(**out) if out else frame


def numeric_columns(frame: pd.DataFrame) -> tuple[str, ...]:
    """Names of the columns holding numbers (not bools): new data must give numbers there."""
    return tuple(c for c in frame.columns if frame[c].dtype.kind in "iuf")


# --- the design of a formula --------------------------------------------------------------------
class SpecBase:
    """What every engine's spec shares: the columns a formula needs and the checks and missing
    values handling of new data; the engine builds the matrix (``_matrix``).

    Attributes
    ----------
    formula : str
    column_names : list of str
        Design-matrix column names, in order (offset terms excluded).
    columns : tuple of str
        The data columns the formula uses (response excluded for new data).
    numeric : tuple of str
        Those that held numbers when the model was fit.
    offset_positions : tuple of int
        Columns of the engine's matrix that are ``offset()`` terms (summed into the offset).
    engine : str
    """

    formula: str
    column_names: list
    columns: tuple = ()
    numeric: tuple = ()
    offset_positions: tuple = ()
    engine: str = "patsy"

    @property
    def has_offset(self) -> bool:
        """Whether the formula defines an offset (``offset()`` terms, or ``offset=``/
        ``exposure=`` given by column name)."""
        return bool(self.offset_positions)

    def exog(self, newdata) -> np.ndarray:
        """The design matrix of ``newdata``, shape (n_new, p) (rows with missing values give
        NaN rows).

        Raises
        ------
        ValueError
            If a column the formula uses is missing from ``newdata``, holds text where the model
            had numbers, or a categorical term has a level it did not have when the model was
            fit (the message names the column or term and the level).
        """
        return self.design(newdata)[0]

    def offset(self, newdata) -> np.ndarray | None:
        """The offset the formula defines for ``newdata`` (None without one)."""
        return self.design(newdata)[1]

    def design(self, newdata) -> tuple[np.ndarray, np.ndarray | None]:
        """The design matrix (n_new, p) and the formula's offset (n_new,) or None."""
        frame = self.new_frame(newdata)
        n = len(frame)
        ok = complete_rows(frame)
        X = np.full((n, len(self.column_names)), np.nan)
        off = np.full(n, np.nan) if self.has_offset else None
        if ok.any():
            sub = plain_frame(frame if ok.all() else frame[ok])
            self._check_numeric(sub)
            x, o = self.split(self._matrix(sub))
            X[ok] = x
            if off is not None:
                off[ok] = o
        return X, off

    def new_frame(self, newdata) -> pd.DataFrame:
        """The columns the formula uses from ``newdata`` (by position, string names)."""
        if isinstance(newdata, pd.Series):
            newdata = newdata.to_frame().T
        if not isinstance(newdata, pd.DataFrame):
            try:
                newdata = pd.DataFrame(newdata)
            except (ValueError, TypeError) as exc:
                raise DataError(f"new data must be a DataFrame with the columns "
                                f"{list(self.columns)}; got {type(newdata).__name__} ({exc})") \
                    from None
        labels = {str(c): c for c in newdata.columns}
        missing = [c for c in self.columns if c not in labels]
        if missing:
            raise DataError(f"new data lack the column{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(map(repr, missing))}, which the formula "
                            f"{self.formula!r} uses")
        strs = [str(c) for c in newdata.columns]
        dup = [c for c in self.columns if strs.count(c) > 1]
        if dup:
            raise DataError(f"new data have more than one column named {dup[0]!r}")
        return used_frame(newdata, [labels[c] for c in self.columns])

    def _check_numeric(self, frame: pd.DataFrame) -> None:
        for c in self.numeric:
            kind = frame[c].dtype.kind
            if kind not in "iufb":
                example = frame[c].iloc[0]
                raise DataError(
                    f"column {c!r} held numbers when the model was fit, but new data have "
                    f"{frame[c].dtype} values (e.g. {example!r}); convert it, e.g. "
                    f"pd.to_numeric(newdata[{c!r}])")

    def split(self, full: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The design columns and the summed offset columns of an engine's matrix."""
        if not self.offset_positions:
            return np.ascontiguousarray(full, dtype=float), None
        pos = list(self.offset_positions)
        keep = np.ones(full.shape[1], dtype=bool)
        keep[pos] = False
        return np.ascontiguousarray(full[:, keep], dtype=float), full[:, pos].sum(axis=1)

    def _matrix(self, frame: pd.DataFrame) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass
class DesignSpec(SpecBase):
    """How the design columns were built by patsy, to build them again for new data.

    Attributes
    ----------
    formula : str
        The model formula.
    column_names : list of str
        Design-matrix column names, in order.
    design_info : patsy.DesignInfo
        patsy's record of factors, levels and stateful-transform state (rebuilt from the
        training rows when first needed after unpickling).
    rhs : str
        The right-hand side patsy built (``.`` expanded, named offsets added).
    trusted : bool
        Whether the formula was evaluated in a namespace the caller passed (``eval_env=``).
    """

    formula: str
    column_names: list[str]
    design_info: Any = field(repr=False)
    _rebuild: pd.DataFrame = field(repr=False, default=None)
    columns: tuple = ()
    numeric: tuple = ()
    offset_positions: tuple = ()
    rhs: str | None = None
    trusted: bool = False
    engine: str = "patsy"

    def __post_init__(self) -> None:
        # built from the first four fields only (formula, names, patsy's design, training
        # rows): the columns the right-hand side uses are those of the training rows it names
        if not self.columns and self._rebuild is not None:
            rhs = self.rhs or split_formula(self.formula)[1]
            names = names_in(parse("~ " + rhs, list(self._rebuild.columns)).rhs_codes)
            used = [c for c in self._rebuild.columns if str(c) in names]
            self.columns = tuple(str(c) for c in used)
            self.numeric = numeric_columns(self._rebuild[used].set_axis(self.columns, axis=1))

    def _matrix(self, frame: pd.DataFrame) -> np.ndarray:
        try:
            (mat,) = patsy.build_design_matrices(
                [self.design_info], frame, NA_action=patsy.NAAction(NA_types=[]))
        except patsy.PatsyError as exc:
            _reraise_ours(exc)
            raise DataError(self._why(exc, frame)) from None
        return np.asarray(mat, dtype=float).reshape(len(frame), -1)

    def _why(self, exc: Exception, frame: pd.DataFrame) -> str:
        """A message for patsy's failure on new data: an unseen level, named by column or
        term, or patsy's own words."""
        found = unseen_level(self.design_info, frame)
        if found is not None:
            return found
        return f"cannot build the design for new data: {str(exc).splitlines()[0]}"

    # patsy's DesignInfo does not pickle: keep the training rows of the used columns and
    # rebuild it when first needed, with the user's functions the formula calls (those that
    # pickle by reference); unpickling itself evaluates nothing
    def __getstate__(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k != "design_info"}
        state["_names"] = _picklable_names(self.__dict__.get("design_info"))
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __getattr__(self, name: str):
        if name != "design_info" or "_rebuild" not in self.__dict__:
            raise AttributeError(name)
        names = self.__dict__.get("_names", {})
        env = FormulaEnvironment([names, safe_namespace()], trusted=self.trusted)
        rhs = self.rhs or split_formula(self.formula)[1]
        info = patsy.dmatrix(rhs, self._rebuild, eval_env=env,
                             NA_action=patsy.NAAction(NA_types=[])).design_info
        self.__dict__["design_info"] = info
        return info


def _reraise_ours(exc: Exception) -> None:
    """patsy wraps every error of an evaluation; raise ours (a refused name, a bad exposure)
    as it was."""
    cause = exc.__cause__
    if isinstance(cause, GlmclassError) or (isinstance(cause, ValueError)
                                            and "exposure" in str(cause)):
        raise cause from None


def unseen_level(info, frame: pd.DataFrame) -> str | None:
    """The first value of a categorical factor in ``frame`` that was not among the factor's
    levels at fit time, as a message (None if there is none).

    The factor is evaluated on the new rows, so levels of derived factors (``C(x > 3)``,
    ``C(np.floor(age / 10))``) are checked as the model sees them, not as raw columns.
    """
    for factor, finfo in info.factor_infos.items():
        if finfo.type != "categorical":
            continue
        try:
            values = factor.eval(finfo.state, frame)
        except Exception:  # noqa: BLE001 - the caller reports patsy's own error instead
            continue
        values = getattr(values, "data", values)  # C()'s box around the values
        known = set(finfo.categories)
        for v in pd.unique(pd.Series(np.asarray(values, dtype=object).ravel()).dropna()):
            if v not in known:
                levels = [_plain(c) for c in finfo.categories]
                what = _describe(factor.name(), frame.columns)
                return (f"{what} has level {_plain(v)!r}, which was not in the data the model "
                        f"was fit on (levels: {levels})")
    return None


def _describe(code: str, columns) -> str:
    """``column 'g'`` for a factor that is a column (``g``, ``C(g, ...)``, ``Q("g")``), else
    ``the term 'C(x > 3)'``."""
    import ast

    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        node = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        if node.func.id == "C":
            node = node.args[0]
        elif node.func.id == "Q" and isinstance(node.args[0], ast.Constant):
            return f"column {node.args[0].value!r}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Q" \
            and node.args and isinstance(node.args[0], ast.Constant):
        return f"column {node.args[0].value!r}"
    if isinstance(node, ast.Name) and node.id in columns:
        return f"column {node.id!r}"
    return f"the term {code!r}"


def _plain(value):
    """A NumPy scalar as the Python value it holds, for readable messages (5, not np.int64(5))."""
    return value.item() if isinstance(value, np.generic) else value


def _picklable_names(design_info) -> dict:
    """Names the formula's factors looked up outside the data, minus modules and anything that
    does not pickle (lambdas, local functions)."""
    import pickle

    out: dict = {}
    if design_info is None:
        return out
    for info in design_info.factor_infos.values():
        env = info.state.get("eval_env") if isinstance(info.state, dict) else None
        for ns in getattr(env, "_namespaces", []):
            for key, value in ns.items():
                if key in out or isinstance(value, types.ModuleType):
                    continue
                try:
                    pickle.dumps(value)
                except Exception:  # noqa: BLE001 - any pickling failure means "leave it out"
                    continue
                out[key] = value
    return out


def _offset_positions(term_slices: dict) -> tuple[int, ...]:
    """Matrix columns of the ``offset(...)`` terms."""
    pos: list[int] = []
    for name, sl in term_slices.items():
        if name.startswith("offset(") and name.endswith(")") and ":" not in name:
            cols = list(range(sl.start, sl.stop))
            if len(cols) != 1:
                raise DataError(f"{name} must be numeric (one column), got {len(cols)} columns")
            pos += cols
    return tuple(pos)


def learn_patsy(parsed: ParsedFormula, frame: pd.DataFrame, env: FormulaEnvironment,
                numeric: tuple) -> tuple[DesignSpec, np.ndarray]:
    """patsy's design of ``parsed.rhs`` on complete rows: the spec and the matrix."""
    try:
        mat = patsy.dmatrix(parsed.rhs, frame, eval_env=env,
                            NA_action=patsy.NAAction(NA_types=[]))
    except patsy.PatsyError as exc:
        _reraise_ours(exc)
        raise DataError(_patsy_message(exc, parsed.formula, frame)) from None
    info = mat.design_info
    offsets = _offset_positions(info.term_name_slices)
    names = [n for j, n in enumerate(info.column_names) if j not in offsets]
    spec = DesignSpec(parsed.formula, names, info, frame, tuple(frame.columns), numeric,
                      offsets, parsed.rhs, env.trusted)
    return spec, np.asarray(mat, dtype=float).reshape(len(frame), -1)


def _patsy_message(exc: Exception, formula: str, data: pd.DataFrame) -> str:
    text = str(exc).splitlines()[0]
    missing = re.search(r"NameError: name '(.+?)' is not defined", text)
    if missing:
        cols = ", ".join(map(repr, list(data.columns)[:20]))
        return (f"the formula {formula!r} uses {missing.group(1)!r}, which is not a column of "
                f"data (columns: {cols}) nor an allowed function; check the spelling")
    return f"cannot build the design of {formula!r}: {text}"


def _formulaic_engine():
    """The formulaic engine module (formulaic is imported only when asked for)."""
    try:
        from . import formulaic_engine
    except ImportError as exc:
        raise ImportError(f"engine='formulaic' needs the formulaic package ({exc}): pip install "
                          "formulaic, or use engine='patsy'") from None
    return formulaic_engine


# --- the response -------------------------------------------------------------------------------
def _response(lhs: str, frame: pd.DataFrame, env: patsy.EvalEnvironment) -> pd.Series:
    """The response: a column taken as it is (labels kept) or a numeric expression."""
    if lhs in frame.columns:
        return frame[lhs].rename(lhs)
    if lhs.startswith("Q(") and lhs[3:-2] in frame.columns:
        return frame[lhs[3:-2]].rename(lhs[3:-2])
    try:
        y = patsy.dmatrix(lhs + " - 1", frame, eval_env=env,
                          NA_action=patsy.NAAction(NA_types=[]), return_type="dataframe")
    except patsy.PatsyError as exc:
        _reraise_ours(exc)
        raise DataError(f"cannot evaluate the response {lhs!r}: {exc}") from None
    if y.shape[1] == 2 and str(y.columns[1]).endswith("[True]"):
        return y.iloc[:, 1].rename(lhs)  # a boolean expression such as I(species == 'a')
    if y.shape[1] != 1:
        raise DataError(f"the response {lhs!r} must be one column, got {y.shape[1]}")
    return y.iloc[:, 0].rename(lhs)


def response(parsed: ParsedFormula, frame: pd.DataFrame, env, engine: str = "patsy"):
    """The response of the rows of ``frame``: a Series, or a DataFrame of (successes, failures)
    for a two-column binomial response (None for a one-sided formula)."""
    if not parsed.lhs:
        return None
    if engine == "formulaic":
        evaluate = _formulaic_engine().formulaic_response
    else:
        evaluate = _response
    parts = [evaluate(code, frame, env) for code in parsed.lhs]
    if len(parts) == 1:
        return parts[0]
    for part, code in zip(parts, parsed.lhs, strict=True):
        if part.dtype.kind not in "iufb":
            raise DataError(f"the response {code!r} of a two-column (successes, failures) "
                            f"response must be numbers, got {part.dtype}")
    out = pd.concat([p.astype(float) for p in parts], axis=1)
    out.columns = list(parsed.lhs)
    return out


# --- the whole design ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Design:
    """A response, a design matrix and what is needed to rebuild it.

    Attributes
    ----------
    endog : pandas.Series, pandas.DataFrame or None
        Raw response values of the kept rows (not yet encoded); two columns (successes,
        failures) for a count response ``k + f ~`` or ``cbind(k, f) ~``.
    exog : ndarray of shape (n_obs, p)
    spec : DesignSpec
    rows : ndarray of int
        Positions in ``data`` of the kept rows.
    index : pandas.Index
        Labels of the kept rows.
    n_dropped : int
        Rows dropped for missing values.
    offset : ndarray of shape (n_obs,) or None
        The offset the formula defines (``offset()`` terms, named offset/exposure columns).
    """

    endog: pd.Series | pd.DataFrame | None
    exog: np.ndarray
    spec: SpecBase
    rows: np.ndarray
    index: pd.Index
    n_dropped: int
    offset: np.ndarray | None = None


def build_design(
    formula: str,
    data: pd.DataFrame,
    missing: str = "drop",
    aligned: dict[str, np.ndarray | None] | None = None,
    eval_env: Any = None,
    engine: str = "patsy",
    extra_terms: tuple[str, ...] = (),
    exclude: tuple = (),
) -> Design:
    """Build the response and the design matrix of ``formula`` on ``data``.

    Parameters
    ----------
    formula : str
        ``"y ~ x1 + C(g)"``; a one-sided ``"~ x1"`` has no response; ``"y ~ ."`` uses every
        other column; ``"k + f ~ x"`` or ``"cbind(k, f) ~ x"`` is a (successes, failures)
        response; ``offset(expr)`` terms are the offset.
    data : pandas.DataFrame
    missing : {"drop", "raise"}
        Drop rows with a missing value in any used column (R's ``na.omit``) or raise.
    aligned : dict of name -> ndarray of shape (n,), optional
        Weights or offsets aligned with ``data``; their missing values count too.
    eval_env : None, int, dict or patsy.EvalEnvironment
        Where names other than columns are looked up (:func:`formula_env`); None: numpy and the
        formula transforms only.
    engine : {"patsy", "formulaic"}
    extra_terms : tuple of str
        Terms added to the right-hand side (``offset(w)`` for an offset named by column).
    exclude : tuple
        Columns that ``.`` leaves out besides the response's.

    Returns
    -------
    Design
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be 'patsy' or 'formulaic', got {engine!r}")
    if len(data) == 0:
        raise ValueError("data is an empty DataFrame: there is nothing to fit")
    env = formula_env(eval_env, 1)
    parsed = parse(formula, list(data.columns), extra_terms, exclude)
    used = check_formula(parsed, list(data.columns), env)
    frame = used_frame(data, used)
    keep = complete_rows(frame)
    for name, arr in (aligned or {}).items():
        if arr is not None:
            if arr.shape[0] != len(data):
                raise ValueError(f"{name} has {arr.shape[0]} values but data has {len(data)} rows")
            keep &= ~np.isnan(arr)
    if missing == "raise" and not keep.all():
        raise ValueError(_missing_message(data, used, keep, aligned))
    rows = np.flatnonzero(keep)
    if not len(rows):
        raise ValueError("no complete rows: every row has a missing value in a used column")
    sub = plain_frame(frame if keep.all() else frame.iloc[rows])
    rhs_names = names_in(parsed.rhs_codes)
    rhs_frame = sub[[c for c in sub.columns if c in rhs_names]]
    numeric = numeric_columns(rhs_frame)
    if engine == "formulaic":
        learn_formulaic = _formulaic_engine().learn_formulaic
        spec, full = learn_formulaic(parsed, rhs_frame, env, numeric)
    else:
        spec, full = learn_patsy(parsed, rhs_frame, env, numeric)
    exog, offset = spec.split(full)
    endog = response(parsed, sub, env, engine)
    made = _made_missing(exog, offset, endog)  # NaN an expression made (np.log(-1))
    if made is not None:
        if missing == "raise":
            raise ValueError("the formula's expressions give missing values (NaN) on "
                             f"{int(made.sum())} complete rows (e.g. the log of a negative "
                             "number); fix the data or the formula, or pass missing='drop'")
        exog, rows = exog[~made], rows[~made]
        offset = offset[~made] if offset is not None else None
        endog = endog.iloc[np.flatnonzero(~made)] if endog is not None else None
        if not len(rows):
            raise ValueError("no complete rows: every row has a missing value after the "
                             "formula's expressions")
    if endog is not None:
        endog = endog.set_axis(data.index[rows], axis=0)
    return Design(endog, np.ascontiguousarray(exog), spec, rows, data.index[rows],
                  int(len(data) - len(rows)), offset)


def _made_missing(exog, offset, endog) -> np.ndarray | None:
    """Rows where an expression made a missing value, or None when there are none (the sum
    finds NaN without an n x p mask)."""
    bad = None
    if np.isnan(exog.sum()):
        bad = np.isnan(exog).any(axis=1)
    if offset is not None and np.isnan(offset.sum()):
        bad = np.isnan(offset) if bad is None else bad | np.isnan(offset)
    if endog is not None:
        na = endog.isna().to_numpy()
        na = na.any(axis=1) if na.ndim == 2 else na
        if na.any():
            bad = na if bad is None else bad | na
    return bad


def _referenced_columns(formula: str, data: pd.DataFrame) -> list:
    """Columns of ``data`` that ``formula`` uses (identifiers and ``Q('...')`` quoting)."""
    parsed = parse(formula, list(data.columns))
    names = names_in(parsed.codes)
    return [c for c in data.columns if str(c) in names]


def _missing_message(data, used, keep, aligned) -> str:
    bad = [c for c in used if data[c].isna().any()]
    bad += [n for n, a in (aligned or {}).items()
            if a is not None and np.asarray(a).dtype.kind in "fc" and np.isnan(a).any()]
    counts = ", ".join(
        f"{c!r} ({int(data[c].isna().sum() if c in data.columns else np.isnan(aligned[c]).sum())})"
        for c in bad
    )
    return (
        f"missing values in {counts}: {int((~keep).sum())} incomplete rows; pass missing='drop' "
        "to drop them, or fill them in"
    )
