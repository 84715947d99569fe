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
3. :func:`~glmclass.formula.spec.used_frame` and :func:`~glmclass.formula.spec.complete_rows`:
   the used columns, and the rows with no missing value in them (R's ``na.omit``) — engines
   only ever see complete rows;
4. :func:`~glmclass.formula.spec.plain_frame`: pandas' nullable dtypes become NumPy ones; dates
   are refused;
5. an engine learns the design and builds the matrix: patsy
   (:mod:`glmclass.formula.patsy_engine`) or formulaic
   (:mod:`glmclass.formula.formulaic_engine`, imported only when asked for).

The names other modules import from here (``DesignSpec``, ``split_formula``, ...) stay here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import patsy

from ..errors import DataError
from .namespace import FormulaEnvironment, check_code, formula_env
from .parse import ParsedFormula, names_in, parse, split_formula
from .patsy_engine import (  # noqa: F401 - re-exported: the names other modules use
    DesignSpec,
    learn_patsy,
    patsy_message,
    patsy_response,
    picklable_names,
    unseen_level,
)
from .spec import (  # noqa: F401 - re-exported
    SpecBase,
    complete_rows,
    numeric_columns,
    plain_frame,
    used_frame,
)

__all__ = ["ENGINES", "Design", "DesignSpec", "build_design", "capture_env", "split_formula"]

#: Formula engines: patsy (always available) and formulaic (optional, faster on large data).
ENGINES = ("patsy", "formulaic")

#: The environment a public entry point captures (kept under its old name).
capture_env = formula_env


def with_numpy(env: patsy.EvalEnvironment) -> patsy.EvalEnvironment:
    """``env`` with ``np`` and ``numpy`` as outer names (a formula's ``np.log(x)``)."""
    return env.with_outer_namespace({"np": np, "numpy": np})


# --- steps shared by every engine ---------------------------------------------------------------
def check_formula(parsed: ParsedFormula, columns, env: FormulaEnvironment,
                  engine: str = "patsy") -> list:
    """Check every expression of a parsed formula; return the data columns it uses (in the
    data's order). ``engine``: formulaic reads ``{expr}`` as an expression, patsy does not.

    Raises
    ------
    UnsafeFormulaError
        For a refused name, attribute or construct (see :mod:`glmclass.formula.namespace`).
    DataError
        When a used column name appears more than once in the data.
    """
    labels = {str(c) for c in columns}
    outer = env.namespace

    def known(name: str) -> bool:
        return name in labels or name in outer

    for code in parsed.codes:
        check_code(code, known, env.trusted, lambda name: name in labels,
                   braces=engine == "formulaic")
    names = names_in(parsed.codes)
    used = [c for c in columns if str(c) in names]
    strs = [str(c) for c in used]
    dup = sorted({s for s in strs if strs.count(s) > 1})
    if dup:
        raise DataError(f"the data have more than one column named {dup[0]!r}, which the "
                        "formula uses; rename the duplicates (e.g. df.columns = [...])")
    return used



def _formulaic_engine():
    """The formulaic engine module (formulaic is imported only when asked for)."""
    try:
        from . import formulaic_engine
    except ImportError as exc:
        raise ImportError(f"engine='formulaic' needs the formulaic package ({exc}): pip install "
                          "formulaic, or use engine='patsy'") from None
    return formulaic_engine



def response(parsed: ParsedFormula, frame: pd.DataFrame, env, engine: str = "patsy"):
    """The response of the rows of ``frame``: a Series, or a DataFrame of (successes, failures)
    for a two-column binomial response (None for a one-sided formula)."""
    if not parsed.lhs:
        return None
    if engine == "formulaic":
        evaluate = _formulaic_engine().formulaic_response
    else:
        evaluate = patsy_response
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
    _check_arguments(data, missing, engine)
    env = formula_env(eval_env, 1)
    parsed = parse(formula, list(data.columns), extra_terms, exclude)
    used = check_formula(parsed, list(data.columns), env, engine)
    frame = used_frame(data, used)
    rows = rows_to_fit(frame, data, used, aligned, missing)
    sub = plain_frame(frame if len(rows) == len(data) else frame.iloc[rows])
    rhs_names = names_in(parsed.rhs_codes)
    rhs_frame = sub[[c for c in sub.columns if c in rhs_names]]
    if engine == "formulaic":
        learn = _formulaic_engine().learn_formulaic
    else:
        learn = learn_patsy
    spec, full = learn(parsed, rhs_frame, env, numeric_columns(rhs_frame))
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


def _check_arguments(data, missing: str, engine: str) -> None:
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be 'patsy' or 'formulaic', got {engine!r}")
    if len(data) == 0:
        raise ValueError("data is an empty DataFrame: there is nothing to fit")


def rows_to_fit(frame: pd.DataFrame, data: pd.DataFrame, used: list, aligned: dict | None,
                missing: str) -> np.ndarray:
    """Positions of the rows with no missing value in a used column or an aligned array
    (R's ``na.omit``), or raise: for ``missing="raise"`` naming the columns, or when no row is
    complete."""
    keep = complete_rows(frame)
    for name, arr in (aligned or {}).items():
        if arr is not None:
            if arr.shape[0] != len(data):
                raise ValueError(f"{name} has {arr.shape[0]} values but data has {len(data)} rows")
            keep &= ~np.isnan(arr)
    if missing == "raise" and not keep.all():
        raise ValueError(missing_message(data, used, keep, aligned))
    rows = np.flatnonzero(keep)
    if not len(rows):
        raise ValueError("no complete rows: every row has a missing value in a used column")
    return rows


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


def referenced_columns(formula: str, data: pd.DataFrame) -> list:
    """Columns of ``data`` that ``formula`` uses (identifiers and ``Q('...')`` quoting)."""
    parsed = parse(formula, list(data.columns))
    names = names_in(parsed.codes)
    return [c for c in data.columns if str(c) in names]


def missing_message(data: pd.DataFrame, used: list, keep: np.ndarray,
                    aligned: dict | None) -> str:
    """The error for rows with missing values: the columns that have them, with counts."""
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
