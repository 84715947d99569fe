"""What every formula engine shares: the data columns a formula uses, the complete rows, plain
NumPy dtypes, and :class:`SpecBase`, the stored design's checks and missing-value handling of new
data (an engine adds only how it builds the matrix)."""

from __future__ import annotations

import ast

import numpy as np
import pandas as pd

from ..errors import DataError


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

    def term_codes(self) -> list[tuple[str, ...]] | None:
        """The Python expressions of each right-hand-side term's factors (None: not known,
        then every column counts as needed by the design)."""
        return None

    @property
    def offset_terms(self) -> dict[str, tuple[str, ...]]:
        """The columns that only ``offset()`` terms use, each with the codes of the offset
        terms that use it: an offset given to ``predict`` replaces them, so new data may lack
        them."""
        terms = self.term_codes()
        if terms is None:
            return {}
        by_offset: dict[str, list[str]] = {}
        other: set[str] = set()
        for codes in terms:
            is_offset = len(codes) == 1 and codes[0].replace(" ", "").startswith("offset(")
            for code in codes:
                for c in code_columns(code, self.columns):
                    if is_offset:
                        by_offset.setdefault(c, []).append(code)
                    else:
                        other.add(c)
        return {c: tuple(v) for c, v in by_offset.items() if c not in other}

    def design(self, newdata, offset_given: bool = False
               ) -> tuple[np.ndarray, np.ndarray | None]:
        """The design matrix (n_new, p) and the formula's offset (n_new,) or None.

        With ``offset_given`` (``predict(..., offset=)`` or ``exposure=``), the columns only
        ``offset()`` terms use are not read from ``newdata`` (they may be absent): the given
        offset replaces the formula's, and the offset returned is then meaningless.
        """
        frame = self.new_frame(newdata, offset_given)
        n = len(frame)
        ok = complete_rows(frame)
        X = np.full((n, len(self.column_names)), np.nan)
        off = np.full(n, np.nan) if self.has_offset else None
        if ok.any():
            sub = self._check_numeric(plain_frame(frame if ok.all() else frame[ok]))
            x, o = self.split(self._matrix(sub))
            X[ok] = x
            if off is not None:
                off[ok] = o
        return X, off

    def new_frame(self, newdata, offset_given: bool = False) -> pd.DataFrame:
        """The columns the formula uses from ``newdata`` (by position, string names); with
        ``offset_given``, the columns only offset terms use hold a placeholder 1.0."""
        if isinstance(newdata, pd.Series):  # one row, by column name
            newdata = newdata.to_frame().T.infer_objects()
        if not isinstance(newdata, pd.DataFrame):
            try:
                newdata = pd.DataFrame(newdata)
            except (ValueError, TypeError) as exc:
                raise DataError(f"new data must be a DataFrame with the columns "
                                f"{list(self.columns)}; got {type(newdata).__name__} ({exc})") \
                    from None
        labels = {str(c): c for c in newdata.columns}
        only_offset = self.offset_terms if (offset_given or any(
            c not in labels for c in self.columns)) else {}
        placeholder = [c for c in self.columns if offset_given and c in only_offset]
        missing = [c for c in self.columns if c not in labels and c not in placeholder]
        if missing:
            raise DataError(self._lack_message(missing, only_offset))
        strs = [str(c) for c in newdata.columns]
        dup = [c for c in self.columns if strs.count(c) > 1 and c not in placeholder]
        if dup:
            raise DataError(f"new data have more than one column named {dup[0]!r}")
        read = [c for c in self.columns if c not in placeholder]
        frame = used_frame(newdata, [labels[c] for c in read])
        if not placeholder:
            return frame
        return frame.assign(**{c: 1.0 for c in placeholder})[list(self.columns)]

    def _lack_message(self, missing: list, only_offset: dict) -> str:
        """What new data lack, and what needs it: the design's terms, or the model's offset
        (a formula ``offset()`` term, or ``offset=``/``exposure=`` naming a column at fit)."""
        s = "s" if len(missing) > 1 else ""
        design = [c for c in missing if c not in only_offset]
        if design:
            return (f"new data lack the column{s} {', '.join(map(repr, missing))}, which the "
                    f"formula {self.formula!r} uses")
        codes = [code for c in missing for code in only_offset[c]]
        named = [code for code in codes if code not in self.formula]
        if named:
            arg = "exposure" if "exposure(" in named[0] else "offset"
            whose = f"{arg}={missing[0]!r} named when the model was fit"
        else:
            whose = f"the formula's {', '.join(dict.fromkeys(codes))}"
        return (f"new data lack the column{s} {', '.join(map(repr, missing))}, which the "
                f"model's offset needs ({whose}); add it to the new data, or give the offset "
                "of the new rows with predict(..., offset=...) (or exposure=), which then "
                "replaces the model's")

    def _check_numeric(self, frame: pd.DataFrame) -> pd.DataFrame:
        """New data's columns that held numbers at fit time must hold numbers (an object column
        of numbers is accepted; text is not). Returns the frame with such columns as numbers."""
        for c in self.numeric:
            kind = frame[c].dtype.kind
            if kind == "O":
                inferred = frame[c].infer_objects()
                if inferred.dtype.kind in "iufb":
                    frame = frame.assign(**{c: inferred})
                    continue
            if kind not in "iufb":
                example = frame[c].iloc[0]
                raise DataError(
                    f"column {c!r} held numbers when the model was fit, but new data have "
                    f"{frame[c].dtype} values (e.g. {example!r}); convert it, e.g. "
                    f"pd.to_numeric(newdata[{c!r}])")
        return frame

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

    def without_rows(self) -> SpecBase:
        """This design without training rows (an engine that keeps rows overrides it)."""
        return self

    def saved_fields(self) -> dict:
        """What every engine's :meth:`saved_design` writes: the formula and its columns."""
        return {"engine": self.engine, "formula": self.formula,
                "column_names": list(self.column_names), "columns": list(self.columns),
                "numeric": list(self.numeric), "offset_positions": list(self.offset_positions)}

    def saved_design(self) -> dict:
        """The design as plain data for a data-only results file.

        Raises
        ------
        ValueError
            For an engine whose design cannot be written as plain data (yet).
        """
        raise refuse_saving(self.engine)


def code_columns(code: str, columns) -> set[str]:
    """The columns (of ``columns``) one factor expression reads: its identifiers and
    ``Q("...")`` names; an expression Python cannot parse reads every column."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return set(columns)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Q" \
                and n.args and isinstance(n.args[0], ast.Constant):
            names.add(str(n.args[0].value))
    return {c for c in columns if c in names}


def describe_term(code: str, columns) -> str:
    """``column 'g'`` for a factor that is a column (``g``, ``C(g, ...)``, ``Q("g")``), else
    ``the term 'C(x > 3)'``."""
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


def plain_value(value):
    """A NumPy scalar as the Python value it holds, for readable messages (5, not np.int64(5))."""
    return value.item() if isinstance(value, np.generic) else value


def needs_own_names(formula: str, exc: Exception) -> ValueError:
    """The error for a formula a data-only file cannot hold: it reads names beyond the data's
    columns and the safe functions (it was evaluated with ``eval_env=``)."""
    return ValueError(f"the formula {formula!r} needs more than the columns and the safe "
                      f"functions ({exc}): it was evaluated with eval_env= (your own names), "
                      "which a data-only file cannot hold; save these results with "
                      "format='pickle'")


def refuse_saving(engine: str) -> ValueError:
    """The error for a design that a data-only results file cannot hold."""
    return ValueError(f"the design built by the {engine!r} formula engine cannot be written to "
                      "a data-only results file yet: save these results with "
                      "format='pickle', or fit with engine='patsy'")
