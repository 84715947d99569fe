"""Design matrices from patsy formulas on pandas DataFrames (the only module that imports patsy).

:func:`build_design` turns ``"y ~ x1 + C(g) + np.log(x2)"`` and a DataFrame into the response,
the design matrix and a :class:`DesignSpec` that rebuilds the same columns for new data
(categorical levels and stateful transforms such as ``center()``/``standardize()`` are
remembered from the training data).
"""

from __future__ import annotations

import pickle
import re
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def capture_env(eval_env: Any = 0, depth: int = 0) -> patsy.EvalEnvironment:
    """The environment in which a formula's names (``np``, user functions) are looked up.

    Parameters
    ----------
    eval_env : int or patsy.EvalEnvironment
        An environment, passed through; or a number of frames above the caller's.
    depth : int
        Frames between the caller of this function and the frame ``eval_env=0`` means: 1 when
        called from a public entry point on behalf of its caller.
    """
    if isinstance(eval_env, patsy.EvalEnvironment):
        return eval_env
    if isinstance(eval_env, bool) or not isinstance(eval_env, int) or eval_env < 0:
        raise TypeError(f"eval_env must be a number of frames (0: the caller's) or a "
                        f"patsy.EvalEnvironment, got {eval_env!r}")
    return patsy.EvalEnvironment.capture(eval_env + depth + 1)


def _with_numpy(env: patsy.EvalEnvironment) -> patsy.EvalEnvironment:
    return env.with_outer_namespace({"np": np, "numpy": np})


def _referenced_columns(formula: str, data: pd.DataFrame) -> list[str]:
    """Columns of ``data`` named in ``formula`` (identifiers and Q('...') quoting)."""
    names = set(_IDENT.findall(formula)) | set(re.findall(r"Q\(['\"](.+?)['\"]\)", formula))
    return [c for c in data.columns if str(c) in names]


def split_formula(formula: str) -> tuple[str | None, str]:
    """Split ``"lhs ~ rhs"`` into its two sides (lhs None for a one-sided formula)."""
    if not isinstance(formula, str):
        raise TypeError(
            f"formula must be a string like 'y ~ x1 + x2', got {type(formula).__name__}"
        )
    if "~" not in formula:
        return None, formula
    lhs, rhs = formula.split("~", 1)
    return lhs.strip(), rhs.strip()


@dataclass
class DesignSpec:
    """How the design columns were built, to build them again for new data.

    Attributes
    ----------
    formula : str
        The model formula.
    column_names : list of str
        Design-matrix column names, in order.
    design_info : patsy.DesignInfo
        patsy's record of factors, levels and stateful-transform state.
    """

    formula: str
    column_names: list[str]
    design_info: Any = field(repr=False)
    _rebuild: pd.DataFrame = field(repr=False, default=None)

    def exog(self, newdata: pd.DataFrame) -> np.ndarray:
        """The design matrix for ``newdata`` (rows with missing values give NaN rows).

        Raises
        ------
        ValueError
            If a column is missing from ``newdata`` or a categorical column has a level that
            was not in the training data (the message names the column and the level).
        """
        if not isinstance(newdata, pd.DataFrame):
            newdata = pd.DataFrame(newdata)
        self._check_levels(newdata)
        used = _referenced_columns(split_formula(self.formula)[1], newdata)
        incomplete = newdata[used].isna().any(axis=1).to_numpy()
        if incomplete.any():  # as R's na.pass: NaN rows, whatever the column type
            out = np.full((len(newdata), len(self.column_names)), np.nan)
            if not incomplete.all():
                out[~incomplete] = self.exog(newdata[~incomplete])
            return out
        try:
            (mat,) = patsy.build_design_matrices(
                [self.design_info], newdata, NA_action=patsy.NAAction(NA_types=[])
            )
        except patsy.PatsyError as exc:
            missing = re.search(r"NameError: name '(.+?)' is not defined", str(exc))
            if missing:
                raise ValueError(f"new data lack the column {missing.group(1)!r}, which the "
                                 f"formula {self.formula!r} uses") from None
            raise ValueError(f"cannot build the design for new data: {exc}") from None
        except NameError as exc:
            raise ValueError(f"new data lack a column the formula uses: {exc}") from None
        return np.asarray(mat, dtype=float)

    def _check_levels(self, newdata: pd.DataFrame) -> None:
        for factor, info in self.design_info.factor_infos.items():
            if info.type != "categorical":
                continue
            cols = _referenced_columns(factor.name(), newdata)
            if len(cols) != 1 or not _is_column_itself(factor.code, cols[0]):
                continue  # an expression such as I(race == 'white'): its values are no levels
            col = cols[0]
            seen = pd.unique(newdata[col].dropna())
            unseen = [v for v in seen if v not in set(info.categories)]
            if unseen:
                levels = [_plain(v) for v in info.categories]
                raise ValueError(
                    f"column {col!r} has level {_plain(unseen[0])!r}, which was not in the data "
                    f"the model was fit on (levels: {levels})"
                )

    # patsy's DesignInfo does not pickle: keep the training columns and rebuild it on load,
    # with the user's functions the formula calls (those that pickle by reference)
    def __getstate__(self) -> dict:
        return {"formula": self.formula, "column_names": self.column_names,
                "_rebuild": self._rebuild, "_names": _picklable_names(self.design_info)}

    def __setstate__(self, state: dict) -> None:
        names = state.pop("_names", {})
        self.__dict__.update(state)
        rhs = split_formula(self.formula)[1]
        env = _with_numpy(capture_env(0)).with_outer_namespace(names)
        self.design_info = patsy.dmatrix(rhs, self._rebuild, eval_env=env,
                                         NA_action="drop").design_info


def _is_column_itself(code: str, col: str) -> bool:
    """Whether a categorical factor is the column itself (``race``, ``C(race, ...)``,
    ``Q('race')``), whose values are its levels."""
    code = code.replace(" ", "")
    name = rf"(?:{re.escape(col)}|Q\(['\"]{re.escape(col)}['\"]\))"
    return re.fullmatch(rf"{name}|C\({name}(?:,.*)?\)", code) is not None


def _plain(value):
    """A NumPy scalar as the Python value it holds, for readable messages (5, not np.int64(5))."""
    return value.item() if isinstance(value, np.generic) else value


def _picklable_names(design_info) -> dict:
    """Names the formula's factors looked up in the caller's scope, minus modules and anything
    that does not pickle (lambdas, local functions): those are rebuilt or reported on load."""
    out = {}
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


@dataclass(frozen=True)
class Design:
    """A response, a design matrix and what is needed to rebuild it.

    Attributes
    ----------
    endog : pandas.Series or None
        Raw response values of the kept rows (not yet encoded).
    exog : ndarray of shape (n_obs, p)
    spec : DesignSpec
    rows : ndarray of int
        Positions in ``data`` of the kept rows.
    index : pandas.Index
        Labels of the kept rows.
    n_dropped : int
        Rows dropped for missing values.
    """

    endog: pd.Series | None
    exog: np.ndarray
    spec: DesignSpec
    rows: np.ndarray
    index: pd.Index
    n_dropped: int


def build_design(
    formula: str,
    data: pd.DataFrame,
    missing: str = "drop",
    aligned: dict[str, np.ndarray | None] | None = None,
    eval_env: patsy.EvalEnvironment | None = None,
) -> Design:
    """Build the response and the design matrix of ``formula`` on ``data``.

    Parameters
    ----------
    formula : str
        patsy formula, ``"y ~ x1 + C(g)"``; a one-sided ``"~ x1"`` has no response.
    data : pandas.DataFrame
    missing : {"drop", "raise"}
        Drop rows with a missing value in any used column (R's ``na.omit``) or raise.
    aligned : dict of name -> array, optional
        Weights or offsets aligned with ``data``; their missing values count too.
    eval_env : patsy.EvalEnvironment, optional
        Where names such as user functions are looked up (:func:`capture_env`; default the
        caller's frame); ``np`` is always available.

    Returns
    -------
    Design
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    if len(data) == 0:
        raise ValueError("data is an empty DataFrame: there is nothing to fit")
    lhs, rhs = split_formula(formula)
    used = _referenced_columns(formula, data)
    frame = data.set_axis(pd.RangeIndex(len(data)), axis=0)  # positions; no copy under CoW
    env = _with_numpy(eval_env if eval_env is not None else capture_env(0, 1))
    try:
        x = patsy.dmatrix(rhs, frame, eval_env=env, NA_action="drop", return_type="dataframe")
    except patsy.PatsyError as exc:
        raise ValueError(_patsy_message(exc, formula, data)) from None
    except NameError as exc:
        raise ValueError(
            f"the formula {formula!r} names something that is not a column of data: {exc}"
        ) from None
    keep = np.zeros(len(data), dtype=bool)
    keep[x.index.to_numpy()] = True
    endog = None
    if lhs:
        endog = _response(lhs, frame, env)
        keep &= ~endog.isna().to_numpy()
    for name, arr in (aligned or {}).items():
        if arr is not None:
            arr = np.asarray(arr)
            if arr.shape[0] != len(data):
                raise ValueError(f"{name} has {arr.shape[0]} values but data has {len(data)} rows")
            if arr.dtype.kind in "fc":
                keep &= ~np.isnan(arr)
    n_dropped = int(len(data) - keep.sum())
    if n_dropped and missing == "raise":
        raise ValueError(_missing_message(data, used, keep, aligned))
    rows = np.flatnonzero(keep)
    if not len(rows):
        raise ValueError("no complete rows: every row has a missing value in a used column")
    info = x.design_info
    x = x.loc[rows]
    exog = np.ascontiguousarray(x.to_numpy(dtype=float))
    spec = DesignSpec(formula, list(x.columns), info, frame[used].iloc[rows])
    y = endog.iloc[rows].set_axis(data.index[rows]) if endog is not None else None
    return Design(y, exog, spec, rows, data.index[rows], n_dropped)


def _response(lhs: str, frame: pd.DataFrame, env: patsy.EvalEnvironment) -> pd.Series:
    """The response: a column taken as it is (labels kept) or a numeric expression."""
    if lhs in frame.columns:
        return frame[lhs].rename(lhs)
    if lhs.startswith("Q(") and lhs[3:-2] in frame.columns:
        return frame[lhs[3:-2]].rename(lhs[3:-2])
    try:
        y = patsy.dmatrix(lhs + " - 1", frame, eval_env=env, NA_action=patsy.NAAction(NA_types=[]),
                          return_type="dataframe")
    except (patsy.PatsyError, NameError) as exc:
        raise ValueError(f"cannot evaluate the response {lhs!r}: {exc}") from None
    if y.shape[1] == 2 and str(y.columns[1]).endswith("[True]"):
        return y.iloc[:, 1].rename(lhs)  # a boolean expression such as I(species == 'a')
    if y.shape[1] != 1:
        raise ValueError(f"the response {lhs!r} must be one column, got {y.shape[1]}")
    return y.iloc[:, 0].rename(lhs)


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


def _patsy_message(exc: Exception, formula: str, data: pd.DataFrame) -> str:
    text = str(exc).splitlines()[0]
    missing = re.search(r"NameError: name '(.+?)' is not defined", text)
    if missing:
        cols = ", ".join(map(repr, list(data.columns)[:20]))
        return (f"the formula {formula!r} uses {missing.group(1)!r}, which is not a column of "
                f"data (columns: {cols}) nor a name in scope; check the spelling")
    return f"cannot build the design of {formula!r}: {text}"
