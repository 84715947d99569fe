"""The patsy engine: patsy builds the design, :class:`DesignSpec` rebuilds it for new data.

patsy's design objects do not pickle; a :class:`DesignSpec` keeps the training rows of the used
columns and rebuilds patsy's design from them when first needed after unpickling (so that
unpickling itself evaluates nothing), under the same safety check
(:class:`~glmclass.formula.namespace.FormulaEnvironment`).
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy

from ..errors import DataError, GlmclassError, UnsafeFormulaError
from .namespace import FormulaEnvironment, check_code, safe_namespace
from .parse import ParsedFormula, names_in, parse, split_formula
from .patsy_state import design_from_state, design_state
from .spec import SpecBase, describe_term, needs_own_names, numeric_columns, plain_value


class _CompleteRows(patsy.NAAction):
    """patsy's NA handling for rows already complete (no value counts as missing): the
    factors' values are passed on as they are, where patsy's ``"drop"`` copies every one
    through an all-true mask (as many bytes as the design again at the peak)."""

    def __init__(self) -> None:
        super().__init__(NA_types=[])

    def handle_NA(self, values: list, is_NAs: list, origins: list) -> list:
        return values


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

    def term_codes(self) -> list[tuple[str, ...]] | None:
        """The factor codes of each term of the right-hand side patsy built."""
        rhs = self.rhs or split_formula(self.formula)[1]
        try:
            desc = patsy.ModelDesc.from_formula("~ " + rhs)
        except patsy.PatsyError:
            return None
        return [tuple(f.code for f in t.factors) for t in desc.rhs_termlist]

    def _matrix(self, frame: pd.DataFrame) -> np.ndarray:
        try:
            (mat,) = patsy.build_design_matrices(
                [self.design_info], frame, NA_action=_CompleteRows())
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
    # pickle by reference); unpickling itself evaluates nothing. A spec without its rows
    # (without_rows()) keeps the design as plain data (glmclass.formula.patsy_state) instead.
    def __getstate__(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k != "design_info"}
        if "design_info" in self.__dict__:  # else unpickled and not rebuilt: keep its names
            state["_names"] = picklable_names(self.__dict__["design_info"])
            if self._rebuild is None:
                state["_design"] = design_state(self.__dict__["design_info"])
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __getattr__(self, name: str):
        if name != "design_info" or "_rebuild" not in self.__dict__:
            raise AttributeError(name)
        if self.__dict__.get("_design") is not None:
            info = design_from_state(self.__dict__["_design"])
            self.__dict__["design_info"] = info
            return info
        names = self.__dict__.get("_names", {})
        env = FormulaEnvironment([names, safe_namespace()], trusted=self.trusted)
        rhs = self.rhs or split_formula(self.formula)[1]
        info = patsy.dmatrix(rhs, self._rebuild, eval_env=env,
                             NA_action=_CompleteRows()).design_info
        self.__dict__["design_info"] = info
        return info

    def without_rows(self) -> DesignSpec:
        """This design without the training rows: levels, contrasts and the transforms'
        memorised numbers only (a mean, an SD, knots), enough to build the design of new data.

        Raises
        ------
        ValueError
            When the formula uses names of the caller's (``eval_env=``) that are not plain
            data, or a transform keeps something that is not a number.
        """
        info = self.design_info
        names = picklable_names(info)
        state = design_state(info)  # refuses what is not plain data
        out = DesignSpec(self.formula, list(self.column_names), info, None, tuple(self.columns),
                         tuple(self.numeric), tuple(self.offset_positions), self.rhs,
                         self.trusted, self.engine)
        out.__dict__["_design"] = state
        out.__dict__["_names"] = names
        return out

    def saved_design(self) -> dict:
        """The design as plain data (:func:`glmclass.formula.patsy_state.design_state`) with
        the spec's fields, for a data-only file; :func:`spec_from_saved` reads it back.

        Raises
        ------
        ValueError
            When the formula was evaluated with the caller's names (``eval_env=``), which a
            data-only file cannot hold.
        """
        columns, safe = set(self.columns), safe_namespace()
        for factor in self.design_info.factor_infos:
            try:  # as a file is read back: the data's columns and the safe names only
                check_code(factor.code, lambda n: n in columns or n in safe, False,
                           lambda n: n in columns)
            except UnsafeFormulaError as exc:
                raise needs_own_names(self.formula, exc) from None
        return {**self.saved_fields(), "rhs": self.rhs,
                "design": design_state(self.design_info)}


def spec_from_saved(saved: dict) -> DesignSpec:
    """The :class:`DesignSpec` that :meth:`DesignSpec.saved_design` wrote (no rows; nothing
    evaluated).

    Raises
    ------
    ValueError
        When ``saved`` is not such a record.
    """
    try:
        info = design_from_state(saved["design"])
        text = [saved["formula"], saved["rhs"] or "", *saved["column_names"], *saved["columns"]]
        if not all(isinstance(t, str) for t in text):
            raise TypeError("a name is not text")
        spec = DesignSpec(saved["formula"], list(saved["column_names"]), info, None,
                          tuple(saved["columns"]), tuple(saved["numeric"]),
                          tuple(int(i) for i in saved["offset_positions"]), saved["rhs"],
                          False, "patsy")
    except (KeyError, TypeError) as exc:
        raise ValueError(f"the saved formula design is not valid ({exc})") from None
    spec.__dict__["_design"] = saved["design"]
    return spec


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
                levels = [plain_value(c) for c in finfo.categories]
                what = describe_term(factor.name(), frame.columns)
                return (f"{what} has level {plain_value(v)!r}, which was not in the data the model "
                        f"was fit on (levels: {levels})")
    return None



def picklable_names(design_info) -> dict:
    """Names the formula's factors looked up outside the data, minus modules and anything that
    does not pickle (lambdas, local functions)."""
    import pickle

    out: dict = {}
    if design_info is None:
        return out
    for info in design_info.factor_infos.values():
        env = info.state.get("eval_env") if isinstance(info.state, dict) else None
        for ns in env.namespaces if isinstance(env, FormulaEnvironment) else []:
            for key, value in ns.items():
                if key in out or isinstance(value, types.ModuleType):
                    continue
                try:
                    pickle.dumps(value)
                except Exception:  # noqa: BLE001 - any pickling failure means "leave it out"
                    continue
                out[key] = value
    return out


def offset_positions(term_slices: dict) -> tuple[int, ...]:
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
                            NA_action=_CompleteRows())
    except patsy.PatsyError as exc:
        _reraise_ours(exc)
        raise DataError(patsy_message(exc, parsed.formula, frame)) from None
    info = mat.design_info
    offsets = offset_positions(info.term_name_slices)
    names = [n for j, n in enumerate(info.column_names) if j not in offsets]
    spec = DesignSpec(parsed.formula, names, info, frame, tuple(frame.columns), numeric,
                      offsets, parsed.rhs, env.trusted)
    return spec, np.asarray(mat, dtype=float).reshape(len(frame), -1)


def patsy_message(exc: Exception, formula: str, data: pd.DataFrame) -> str:
    """A patsy error as a message naming the unknown name and the data's columns."""
    text = str(exc).splitlines()[0]
    missing = re.search(r"NameError: name '(.+?)' is not defined", text)
    if missing:
        cols = ", ".join(map(repr, list(data.columns)[:20]))
        return (f"the formula {formula!r} uses {missing.group(1)!r}, which is not a column of "
                f"data (columns: {cols}) nor an allowed function; check the spelling")
    return f"cannot build the design of {formula!r}: {text}"



def patsy_response(lhs: str, frame: pd.DataFrame, env: patsy.EvalEnvironment) -> pd.Series:
    """The response: a column taken as it is (labels kept) or a numeric expression."""
    if lhs in frame.columns:
        return frame[lhs].rename(lhs)
    if lhs.startswith("Q(") and lhs[3:-2] in frame.columns:
        return frame[lhs[3:-2]].rename(lhs[3:-2])
    try:
        y = patsy.dmatrix(lhs + " - 1", frame, eval_env=env,
                          NA_action=_CompleteRows(), return_type="dataframe")
    except patsy.PatsyError as exc:
        _reraise_ours(exc)
        raise DataError(f"cannot evaluate the response {lhs!r}: {exc}") from None
    if y.shape[1] == 2 and str(y.columns[1]).endswith("[True]"):
        return y.iloc[:, 1].rename(lhs)  # a boolean expression such as I(species == 'a')
    if y.shape[1] != 1:
        raise DataError(f"the response {lhs!r} must be one column, got {y.shape[1]}")
    return y.iloc[:, 0].rename(lhs)
