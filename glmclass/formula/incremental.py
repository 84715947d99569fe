"""Formula designs over data that arrive in pieces (the partitions of a Dask DataFrame).

:func:`learn_design` learns a formula's design (categorical levels, the state of stateful
transforms such as ``center()``/``standardize()``) in one pass over the pieces with patsy's
incremental builder, :func:`patsy.incr_dbuilder`; patsy stops reading early when the formula
needs no more (numeric columns only). The result is a :class:`PartitionDesign`: a small,
picklable recipe that builds the response and the design of any one piece on a Dask worker, with
the same columns everywhere, and drops (and counts) its rows with missing values.

patsy's design objects do not pickle; a recipe sent to another process carries instead a few
rows that show every level of every used column (the *witness* frame) and the memorised state
of the stateful transforms, and rebuilds the patsy design from them there (once per process),
checking that the columns come out the same.
"""

from __future__ import annotations

import re
import types
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy

from .design import (
    DesignSpec,
    missing_message,
    patsy_message,
    response,
    with_numpy,
)
from .fast_design import fast_columns, fast_design
from .namespace import FormulaEnvironment, safe_namespace
from .parse import ParsedFormula, names_in, parse, split_formula
from .patsy_engine import offset_positions

#: Identifiers in a formula (candidate column names).
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")

#: Distinct values remembered per numeric column (for numbers used as categories, ``C(x)``).
MAX_NUMERIC_LEVELS = 1000

#: Values kept of a numeric column with more than MAX_NUMERIC_LEVELS (it is a number).
_FEW = 10

_INFO_CACHE: dict[str, Any] = {}  # design rebuilt in a worker process, by recipe token


class Witness:
    """Distinct non-missing values of the used columns, collected piece by piece (or per piece
    with :meth:`of` and merged with :meth:`merge`: a tree reduction over partitions).

    Attributes
    ----------
    values : dict
        Column -> {value: None}, in order of appearance.
    dtypes : dict
        Column -> the dtype of its first piece.
    truncated : set
        Numeric columns with more than :data:`MAX_NUMERIC_LEVELS` distinct values (only the
        first are kept: enough for a number, too few for its levels).
    rows : int
        Rows seen.
    """

    def __init__(self, columns: list) -> None:
        self.values: dict = {c: {} for c in columns}
        self.dtypes: dict = {}
        self.truncated: set = set()
        self.rows = 0

    def see(self, frame: pd.DataFrame) -> None:
        """Add the values of ``frame`` (its complete rows)."""
        self.merge(Witness.of(frame, list(self.values)))

    @classmethod
    def of(cls, frame: pd.DataFrame, columns: list) -> Witness:
        """The witness of one piece (its complete rows)."""
        out = cls(columns)
        out.rows = len(frame)
        for c in columns:
            col = frame[c]
            out.dtypes[c] = col.dtype
            valid = col.dropna() if col.hasnans else col
            if col.dtype.kind in "iuf" and isinstance(col.dtype, np.dtype):
                # a continuous column shows it in its first rows: no hashing of the rest
                head = pd.unique(valid.to_numpy()[:2 * MAX_NUMERIC_LEVELS])
                vals = head if head.size >= MAX_NUMERIC_LEVELS else pd.unique(valid.to_numpy())
                if vals.size >= MAX_NUMERIC_LEVELS:
                    out.truncated.add(c)
                    vals = vals[:_FEW]
            else:
                vals = pd.unique(valid)
            out.values[c] = dict.fromkeys(vals.tolist() if hasattr(vals, "tolist")
                                          else list(vals))
        return out

    def merge(self, other: Witness) -> Witness:
        """Add ``other``'s values after this one's (in place; returns self)."""
        self.rows += other.rows
        self.truncated |= other.truncated
        for c, seen in other.values.items():
            mine = self.values.setdefault(c, {})
            if c in other.dtypes:
                self.dtypes.setdefault(c, other.dtypes[c])
            numeric = self.dtypes.get(c) is not None and self.dtypes[c].kind in "iuf"
            for v in seen:
                if numeric and len(mine) >= MAX_NUMERIC_LEVELS:
                    self.truncated.add(c)
                    break
                mine.setdefault(v, None)
            if c in self.truncated and len(mine) > _FEW:  # a number: a few values show it
                self.values[c] = dict.fromkeys(list(mine)[:_FEW])
        return self

    def frame(self) -> pd.DataFrame:
        """Equal-length columns cycling through each column's values (at least one row)."""
        n = max([len(s) for s in self.values.values()] + [1])
        cols = {}
        for c, seen in self.values.items():
            vals = list(seen) or [1.0]
            cyc = [vals[i % len(vals)] for i in range(n)]
            dt = self.dtypes.get(c)
            if isinstance(dt, pd.CategoricalDtype):
                cols[c] = pd.Categorical(cyc, categories=dt.categories, ordered=dt.ordered)
            else:
                cols[c] = pd.Series(cyc, dtype=dt if dt is not None and seen else None)
        return pd.DataFrame(cols)


def _transform_states(info) -> dict:
    """The memorised stateful transforms of each factor, as ``(class, attributes)`` pairs
    (patsy's objects refuse to pickle; their attributes are plain numbers and arrays)."""
    out = {}
    for factor, fi in info.factor_infos.items():
        state = fi.state if isinstance(fi.state, dict) else {}
        objs = state.get("transforms") or {}
        if objs:
            out[factor.name()] = {k: (type(o), dict(vars(o))) for k, o in objs.items()}
    return out


@dataclass
class PartitionDesign:
    """A picklable recipe for the response and design of one piece of the data.

    Attributes
    ----------
    formula : str
    column_names : list of str
        Design columns, the same for every piece (``offset()`` terms excluded).
    used : list
        Data columns the right-hand side reads.
    witness : pandas.DataFrame
        A few rows showing every level of every used column.
    transforms : dict
        Memorised stateful transforms, by factor name.
    names : dict
        The caller's picklable names the formula uses (functions, constants).
    plain : list or None
        For a formula of plain numeric columns, each design column's data column (None for
        the intercept): the design is then built without patsy.
    token : str
        Identifies the recipe (its design is rebuilt once per process).
    parsed : ParsedFormula or None
        The parsed formula: the response's expressions (one, or two for ``cbind(k, f)`` and
        ``k + f``) and the right-hand side patsy builds (``.`` expanded, the ``offset()`` terms
        of ``offset=``/``exposure=`` named by column added).
    offsets : tuple of int
        Columns of patsy's matrix that are ``offset()`` terms: summed into the offset, not
        part of the design (as :func:`glmclass.formula.patsy_engine.learn_patsy`).
    fast : tuple or None
        When every term is the intercept, one numeric column, or one categorical column
        (``g``, ``C(g)``, ``C(g, Sum)``) with known levels: per term ``("one",)``,
        ``("num", column)`` or ``("cat", column, levels, contrast matrix)``, and the design
        is built with NumPy (:func:`fast_columns`); else None (patsy builds it).
    learned_info : patsy.DesignInfo or None
        The design patsy learned from the data, when this process learned it; None in a
        process that received a pickled recipe (:meth:`design_info` rebuilds it there).
    learned_env : patsy.EvalEnvironment or None
        The environment the design was learned in (None after unpickling: :meth:`env`
        rebuilds one from ``names``).
    """

    formula: str
    column_names: list
    used: list
    witness: pd.DataFrame = field(repr=False)
    transforms: dict = field(repr=False)
    names: dict = field(repr=False)
    plain: list | None = field(default=None, repr=False)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    parsed: ParsedFormula | None = field(default=None, repr=False)
    offsets: tuple = ()
    fast: tuple | None = field(default=None, repr=False)
    learned_info: Any = field(default=None, repr=False, compare=False)
    learned_env: Any = field(default=None, repr=False, compare=False)

    def __dask_tokenize__(self) -> str:
        return self.token

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["learned_info"] = state["learned_env"] = None  # patsy's: rebuilt where unpickled
        return state

    @property
    def rhs(self) -> str:
        """The right-hand side patsy builds."""
        return self.parsed.rhs if self.parsed is not None else split_formula(self.formula)[1]

    @property
    def lhs(self) -> str | None:
        return split_formula(self.formula)[0]

    @property
    def endog_name(self) -> str:
        """The response's name, as the in-memory path gives it: the column, or
        ``"k + f"`` for a (successes, failures) response."""
        codes = self.parsed.lhs if self.parsed is not None else [self.lhs]
        if len(codes) == 2:
            return " + ".join(codes)
        code = codes[0]
        return code[3:-2] if code.startswith(("Q('", 'Q("')) else code

    def level_columns(self) -> dict:
        """The data columns read only as categorical factors of string levels, with those
        levels: ``{column: levels}`` (empty unless NumPy builds the design, :attr:`fast`).

        A piece's design needs no more of such a column than each row's level code: a source
        that reads the data again for every pass may hold the codes (a byte per row) instead
        of reading and hashing the strings every time. A column the response, an offset or a
        numeric term also reads is left out, and so is one read with two sets of levels.
        """
        if self.fast is None or self.parsed is None:
            return {}
        levels: dict = {}
        other = names_in(list(self.parsed.lhs) + list(self.parsed.offsets))
        for term in self.fast:
            if term[0] == "num":
                other.add(str(term[1]))
            elif term[0] == "cat":
                column, lv = term[1], term[2]
                if not all(isinstance(v, str) for v in lv) or levels.get(column, lv) != lv:
                    other.add(str(column))
                levels[column] = lv
        return {c: lv for c, lv in levels.items() if str(c) not in other}

    def env(self) -> patsy.EvalEnvironment:
        """The environment the formula's names are looked up in: the one the design was
        learned in, or (after unpickling) the recipe's ``names`` with the safe namespace."""
        if self.learned_env is None:
            # checked like the client's: a recipe unpickled on a worker runs nothing else
            names = dict(self.names)
            self.learned_env = with_numpy(FormulaEnvironment([names, safe_namespace()],
                                                             trusted=bool(names)))
        return self.learned_env

    def design_info(self):
        """patsy's DesignInfo of the formula's right-hand side (rebuilt from the witness rows
        and the memorised transforms in a process that received a pickled recipe)."""
        if self.learned_info is not None:
            return self.learned_info
        info = _INFO_CACHE.get(self.token)
        if info is None:
            info = patsy.dmatrix(self.rhs, self.witness, eval_env=self.env(),
                                 NA_action=patsy.NAAction(NA_types=[])).design_info
            for factor, fi in info.factor_infos.items():
                saved = self.transforms.get(factor.name(), {})
                objs = fi.state.get("transforms") if isinstance(fi.state, dict) else None
                for key, (cls, attrs) in saved.items():
                    obj = cls.__new__(cls)
                    obj.__dict__.update(attrs)
                    objs[key] = obj
            built = [n for j, n in enumerate(info.column_names) if j not in self.offsets]
            if built != list(self.column_names):
                raise ValueError(
                    f"the design of {self.formula!r} cannot be rebuilt on the workers (columns "
                    f"{built[:6]} instead of {list(self.column_names)[:6]}): "
                    "a categorical factor derived from an expression of several columns; "
                    "compute that column in the DataFrame first")
            _INFO_CACHE[self.token] = info
        self.learned_info = info
        return info

    def build(self, frame: pd.DataFrame, aligned: dict | None = None, missing: str = "drop"
              ) -> tuple[pd.Series | pd.DataFrame | None, np.ndarray, np.ndarray,
                         np.ndarray | None]:
        """Response, design, kept-row mask and the formula's offset of one piece.

        Parameters
        ----------
        frame : pandas.DataFrame
            One piece (partition) of the data.
        aligned : dict of name -> ndarray, optional
            Weights or offsets of the same rows; their missing values count too.
        missing : {"drop", "raise"}

        Returns
        -------
        endog : pandas.Series, pandas.DataFrame or None
            Raw response of the kept rows; two columns (successes, failures) for
            ``cbind(k, f) ~`` or ``k + f ~``.
        exog : ndarray of shape (n_kept, p)
        keep : ndarray of bool, shape (len(frame),)
        offset : ndarray of shape (n_kept,) or None
            The sum of the formula's ``offset()`` terms on the kept rows (None without any).
        """
        n = len(frame)
        pos = frame.set_axis(pd.RangeIndex(n), axis=0)
        # rows with a missing value in a used column are left out before patsy sees them
        # (patsy's NA_action="drop" on a DataFrame result costs ~5x the matrix itself); NaN
        # that a transform makes (np.log(-1)) is dropped after, as patsy would
        keep = _complete(pos, self.used)
        rows = pos if keep.all() else pos[keep]
        x = fast_design(self.fast, rows) if self.fast is not None else None
        # NumPy's design copies complete numeric columns and rows of contrast matrices: it
        # makes no NaN, and the sum that looks for one costs a fifth of its own time
        transformed = x is None
        if x is None and self.plain is not None:
            x = self._plain_design(rows)
        if x is None:
            try:
                (x,) = patsy.build_design_matrices([self.design_info()], rows,
                                                   NA_action=patsy.NAAction(NA_types=[]))
            except patsy.PatsyError as exc:
                raise ValueError(patsy_message(exc, self.formula, frame)) from None
            x = np.asarray(x, dtype=float).reshape(len(rows),
                                                   len(self.column_names) + len(self.offsets))
        made_nan = np.isnan(x).any(axis=1) if transformed and np.isnan(x.sum()) else None
        if made_nan is not None:
            keep[np.flatnonzero(keep)[made_nan]] = False
            x = x[~made_nan]
        built = keep.copy()  # the rows of x
        y = None
        if self.lhs:
            parsed = self.parsed if self.parsed is not None else parse(self.formula, [])
            y = response(parsed, pos, self.env())
            na = y.isna().to_numpy()
            keep &= ~(na.any(axis=1) if na.ndim == 2 else na)
        for name, arr in (aligned or {}).items():
            if arr is not None:
                if arr.shape[0] != n:
                    raise ValueError(f"{name} has {arr.shape[0]} values in a partition of "
                                     f"{n} rows: its partitions do not match the data's; "
                                     "take it from the same DataFrame (a column name) or "
                                     "repartition both alike")
                if arr.dtype.kind in "fc":
                    keep &= ~np.isnan(arr)
        if missing == "raise" and not keep.all():
            raise ValueError(missing_message(frame, self.used, keep, aligned))
        if not keep[built].all():  # a missing response, weight or offset
            x = x[keep[built]]
        off = None
        if self.offsets:  # the offset() columns are summed, as DesignSpec.split does
            cols = list(self.offsets)
            off = x[:, cols].sum(axis=1)
            x = np.delete(x, cols, axis=1)
        exog = np.ascontiguousarray(x)
        if y is not None:
            y = y.iloc[np.flatnonzero(keep)]
        return y, exog, keep, off

    def _plain_design(self, rows: pd.DataFrame) -> np.ndarray | None:
        """The design of a formula of plain numeric columns (and an intercept) without patsy:
        the same numbers, ~10x faster than patsy's column-by-column fill. None when a column
        is not numeric in this piece (patsy then reports it)."""
        cols = [c for c in self.plain if c is not None]
        block = rows[cols]
        if not all(dt.kind in "biuf" for dt in block.dtypes):
            return None
        x = np.empty((len(rows), len(self.plain)))
        ones = [j for j, c in enumerate(self.plain) if c is None]
        at = [j for j, c in enumerate(self.plain) if c is not None]
        x[:, ones] = 1.0
        x[:, at] = block.to_numpy(dtype=float)
        return x

    def spec(self) -> DesignSpec:
        """The :class:`~glmclass.formula.design.DesignSpec` that builds the design of new
        in-memory data (predictions on pandas DataFrames)."""
        return DesignSpec(self.formula, list(self.column_names), self.design_info(),
                          self.witness, offset_positions=tuple(self.offsets), rhs=self.rhs)


def _complete(frame: pd.DataFrame, columns: list) -> np.ndarray:
    """Rows without a missing value in ``columns`` (pandas' ``isna``), a column at a time with
    no copy of the frame: NumPy integers and booleans cannot be missing, and a float column
    whose sum is not NaN has none."""
    keep = np.ones(len(frame), dtype=bool)
    for c in columns:
        col = frame[c]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind in "iub":
            continue
        if isinstance(col.dtype, np.dtype) and col.dtype.kind == "f":
            values = col.to_numpy()
            if not np.isnan(values.sum()):
                continue
            keep &= ~np.isnan(values)
        else:
            keep &= ~col.isna().to_numpy()
    return keep


def _formula_names(formula: str, env: patsy.EvalEnvironment) -> dict:
    """The caller's names that the formula uses (functions, constants), except modules (numpy
    is always there) and what cannot be pickled: they travel with the recipe. Only names in
    the formula are looked at, so nothing else in the caller's scope is pickled."""
    import cloudpickle

    out = {}
    for name in dict.fromkeys(_IDENT.findall(formula)):
        head = name.split(".")[0]
        try:
            value = env.namespace[head]
        except KeyError:
            continue
        if isinstance(value, types.ModuleType):
            continue
        try:
            cloudpickle.dumps(value)
        except Exception:  # noqa: BLE001 - anything unpicklable stays on the client
            continue
        out[head] = value
    return out


def _plain_columns(info, columns: list) -> list | None:
    """Each design column's data column (None: the intercept) when every term is the
    intercept or one numeric column taken as it is; else None."""
    out = []
    for term in info.terms:
        if not term.factors:
            out.append(None)
            continue
        (factor,) = term.factors if len(term.factors) == 1 else (None,)
        fi = info.factor_infos.get(factor)
        code = getattr(factor, "code", None)
        if fi is None or fi.type != "numerical" or fi.num_columns != 1 or code not in columns:
            return None
        out.append(code)
    return out if len(out) == len(info.column_names) else None


def used_columns(formula: str, columns: list, extra_terms: tuple = (),
                 exclude: tuple = ()) -> list:
    """The data columns the right-hand side of ``formula`` reads, in the data's order."""
    parsed = parse(formula, list(columns), tuple(extra_terms), tuple(exclude))
    names = names_in(parsed.rhs_codes)
    return [c for c in columns if str(c) in names]


def learn_design(formula: str, pieces: Callable[[], Iterator[pd.DataFrame]] | None,
                 columns: list, eval_env: patsy.EvalEnvironment, extra_terms: tuple = (),
                 exclude: tuple = (), witness: Witness | None = None
                 ) -> PartitionDesign | None:
    """Learn a formula's design over pieces of data with patsy's incremental builder.

    Parameters
    ----------
    formula : str
        ``"y ~ x1 + C(g) + center(x2)"``.
    pieces : callable or None
        ``pieces()`` returns an iterator over the pieces (pandas DataFrames with the used
        columns); patsy may call it more than once (nested stateful transforms) or stop early.
        None when ``witness`` is given.
    columns : list
        The data's columns (to find the ones the formula uses).
    eval_env : patsy.EvalEnvironment
        Where names that are not columns are looked up.
    extra_terms : tuple of str
        Terms added to the right-hand side (``offset(Q('t'))`` for ``offset="t"``), as
        :func:`glmclass.formula.design.build_design`.
    exclude : tuple
        Columns that ``.`` leaves out besides the response's.
    witness : Witness, optional
        The distinct values of the used columns over all the data's complete rows, merged from
        the partitions in one pass (:meth:`Witness.of`, :meth:`Witness.merge`): the levels are
        learned from it alone, without reading the data again.

    Returns
    -------
    PartitionDesign or None
        None when ``witness`` is given but the formula has a stateful transform
        (``center(x)``): its state needs the data themselves (call again with ``pieces``).

    Raises
    ------
    ValueError
        For a formula patsy refuses, a name that is not a column, or a numeric column with more
        than :data:`MAX_NUMERIC_LEVELS` values used as a categorical.
    """
    lhs = split_formula(formula)[0]
    if not lhs:
        raise ValueError(f"the formula {formula!r} has no response: write 'y ~ x1 + x2'")
    probe = pd.DataFrame(columns=list(columns))
    parsed = parse(formula, list(columns), tuple(extra_terms), tuple(exclude))
    rhs = parsed.rhs
    used = used_columns(formula, columns, extra_terms, exclude)
    if witness is not None:
        frame = witness.frame()[used] if used else witness.frame()

        def seen() -> Iterator[pd.DataFrame]:
            yield frame
    else:
        witness = Witness(used)

        def seen() -> Iterator[pd.DataFrame]:
            for piece in pieces():
                witness.see(piece)
                yield piece

    env = with_numpy(eval_env)
    try:
        info = patsy.incr_dbuilder(rhs, seen, eval_env=env, NA_action="drop")
    except patsy.PatsyError as exc:
        raise ValueError(patsy_message(exc, formula, probe)) from None
    except NameError as exc:
        raise ValueError(f"the formula {formula!r} names something that is not a column of "
                         f"data: {exc}") from None
    states = _transform_states(info)
    if pieces is None and states:
        return None
    _check_truncated(info, witness, formula)
    offsets = offset_positions(info.term_name_slices)
    design = PartitionDesign(formula,
                             [n for j, n in enumerate(info.column_names) if j not in offsets],
                             used, witness.frame(), states,
                             _formula_names(rhs + " " + lhs, env),
                             None if offsets else _plain_columns(info, list(columns)),
                             parsed=parsed, offsets=offsets,
                             fast=None if offsets else fast_columns(info, list(columns)),
                             learned_info=info, learned_env=env)
    return design


def _check_truncated(info, witness: Witness, formula: str) -> None:
    """A numeric column cut at :data:`MAX_NUMERIC_LEVELS` values cannot give a categorical's
    levels: say so instead of building a design that misses some."""
    if not witness.truncated:
        return
    for factor, fi in info.factor_infos.items():
        if fi.type != "categorical":
            continue
        for c in witness.truncated:
            if str(c) in names_in([factor.name()]):
                raise ValueError(
                    f"column {c!r} is used as a categorical in {formula!r} but has more than "
                    f"{MAX_NUMERIC_LEVELS} distinct values: bin it first (pandas.cut) or use it "
                    "as a number")
