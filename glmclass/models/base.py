"""What every model shares: one constructor path, one ``from_formula``, one fit-argument
validator, immutability.

A model is built in one way, whichever constructor the user calls: the data are validated into a
:class:`~glmclass.data.model_data.ModelData` (arrays, or a formula on a DataFrame), then the model's
``_setup(data, **options)`` encodes the response and checks its own options, and the model is
frozen. The formula environment is captured once, in :meth:`Model.from_formula` (or in the
lowercase entry points of :mod:`glmclass.formula.api`), and passed down as an object, so no code
below counts stack frames.

The prediction contract, shared by every classifier's results (``results.predict(exog=None,
which=...)``):

- ``exog=None`` gives in-sample values; new data go through the stored design (a DataFrame with
  the formula's columns, or a design matrix for array models). Rows with missing values give
  NaN (and a missing label).
- ``which="prob"``: a DataFrame of class probabilities, one column per level label;
  ``"mean"``: the mean of the response (for binary models the Series of success probabilities,
  for multiclass models the same DataFrame as ``"prob"``); ``"linear"``: the linear predictor
  (log-odds); ``"class"``: a Series of predicted labels. Models add their own kinds
  (``"log_prob"``, ``"log_joint"``, ``"score"``) where they have them.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..data.model_data import ModelData, from_arrays, from_formula, has_dask, is_dask
from ..errors import one_of
from ..formula.design import capture_env
from ..solvers.control import Control


def fit_control(maxiter: Any = 50, tol: Any = 1e-10, method: str = "irls",
                **settings: Any) -> Control:
    """The solver settings of a fit: ``maxiter`` and ``tol`` validated once, for every model,
    with the same messages, on ``method``'s defaults (:meth:`Control.for_method`), with the
    other ``settings`` (``hessian``, ``information``, ``progress``, ...).

    Raises
    ------
    ValueError
        When ``maxiter`` is not a positive integer (``2.5``, ``0``, ``True``) or ``tol`` is not a
        positive finite number.
    """
    return Control.for_method(method, maxiter=maxiter, tol=tol, **settings)


def check_option(name: str, value: Any, choices: tuple) -> Any:
    """Return ``value`` if it is one of ``choices``; else raise a ValueError that lists them."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        if value in choices:
            return value
    raise ValueError(f"{name} must be {one_of(choices)}, got {value!r}")


def real_number(value: Any, what: str) -> float:
    """``value`` as a float, or a ValueError naming ``what`` (strings, None and bools are not
    numbers here)."""
    if isinstance(value, (str, bytes, bool)) or value is None or not isinstance(
            value, (numbers.Real, np.number)):
        raise ValueError(f"{what} must be a number, got {value!r}")
    return float(value)


def per_column(value: Any, names: list[str], default: float, arg: str) -> np.ndarray:
    """A per-coefficient setting (``start_params``, prior means and scales) as one float per
    design column: a scalar, a sequence of one per column, or a dict/Series by column name
    (columns not named get ``default``). NaN is kept for the caller to judge.

    Raises
    ------
    ValueError
        Naming the argument and, where there is one, the column: unknown names, wrong lengths,
        values that are not numbers (strings, None).
    """
    p = len(names)
    if isinstance(value, (Mapping, pd.Series)):
        out = np.full(p, float(default))
        for key, v in dict(value).items():
            if key not in names:
                raise ValueError(f"{arg}: {key!r} is not a design column; columns are {names}")
            out[names.index(key)] = real_number(v, f"{arg} of {key!r}")
        return out
    if value is None or isinstance(value, (str, bytes)):
        raise ValueError(f"{arg} must be a number, one number per column or a dict by column "
                         f"name; got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{arg} must be numbers, got {value!r}") from None
    if arr.ndim == 0:
        return np.full(p, float(arr))
    if arr.shape != (p,):
        raise ValueError(f"{arg} has {arr.size} values for {p} design columns ({names}); give "
                         "one number, one per column, or a dict by column name")
    return arr.copy()


def check_start(start_params: Any, names: list[str], levels: int = 1) -> np.ndarray | None:
    """Starting values as a float array of ``levels * len(names)`` finite values.

    A dict or Series by design-column name is accepted for single-equation models (columns not
    named start at 0).
    """
    if start_params is None:
        return None
    p = len(names) * levels
    if isinstance(start_params, (Mapping, pd.Series)):
        if levels != 1:
            raise ValueError("start_params by name is available for single-equation models; "
                             f"pass an array of {p} values")
        start = per_column(start_params, names, 0.0, "start_params")
    else:
        if isinstance(start_params, (str, bytes)) or np.ndim(start_params) == 0:
            raise ValueError(f"start_params must be an array of {p} numbers (one per column of "
                             f"exog{' and level' if levels > 1 else ''}), got {start_params!r}")
        try:
            start = np.asarray(start_params, dtype=float).ravel()
        except (TypeError, ValueError):
            raise ValueError(f"start_params must be numbers, got {start_params!r}") from None
    if start.shape != (p,):
        raise ValueError(f"start_params must have {p} values (one per column of exog"
                         f"{' and level' if levels > 1 else ''}), got {start.size}")
    bad = ~np.isfinite(start)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        where = f" ({names[j % len(names)]!r}: {start[j]})" if names else ""
        raise ValueError(f"start_params must be finite (no NaN or inf){where}")
    return start


def check_weights(arrays: Mapping) -> None:
    """Weights must be finite and non-negative, and not all zero; raise naming the argument."""
    for key in ("freq_weights", "var_weights"):
        w = arrays.get(key)
        if w is None:
            continue
        bad = (w < 0) | ~np.isfinite(w)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{key} must be finite and non-negative; row {row} has {w[row]}")
        if w.size and not np.any(w > 0):
            raise ValueError(f"{key} are all zero: no row would take part in the fit")


def check_weight_facts(arrays: Mapping) -> None:
    """:func:`check_weights` from the merged facts of data not in memory
    (:attr:`glmclass.data.parts.DataFacts.arrays`)."""
    for key in ("freq_weights", "var_weights"):
        a = arrays.get(key)
        if a is None:
            continue
        if a.lo < 0 or a.nonfinite:
            raise ValueError(f"{key} must be finite and non-negative; a row has "
                             f"{a.lo if a.lo < 0 else 'a non-finite value'}")
        if not a.positive:
            raise ValueError(f"{key} are all zero: no row would take part in the fit")


def _overrides_above() -> int:
    """How many ``from_formula`` overrides of model subclasses (each calling ``super()``) stand
    between :meth:`Model.from_formula` and the user's frame: the formula's names are the
    user's, not those of a subclass's method."""
    depth, frame = 0, sys._getframe(2)  # the caller of Model.from_formula
    while frame is not None and frame.f_code.co_name == "from_formula":
        owner = frame.f_locals.get("cls")
        if not (isinstance(owner, type) and issubclass(owner, Model)):
            break
        depth, frame = depth + 1, frame.f_back
    return depth


class Model:
    """Base class of every glmclass model.

    Subclasses declare which constructor arguments are per-row arrays (``row_args``: offsets
    and weights, aligned with the data's rows) and implement ``_setup(data, **options)``; their
    ``__init__`` only states the public signature and calls ``Model.__init__``. After
    ``_setup`` the model is frozen: assigning an attribute raises, so a fitted model can never
    be changed under its results.
    """

    #: Constructor arguments that are per-row arrays aligned with the data.
    row_args: ClassVar[tuple[str, ...]] = ()
    #: Whether a formula's intercept column is dropped (a constant is no feature of a
    #: generative classifier; ``C(g)`` still gets K - 1 indicators).
    _features_only: ClassVar[bool] = False

    data: ModelData

    def __init__(self, endog, exog, missing: str = "drop", **options) -> None:
        rows = {k: options.pop(k, None) for k in self.row_args}
        if has_dask(endog, exog, *rows.values()):  # rows in the partitions of Dask collections
            from ..data.dask import from_dask_arrays

            self.construct(from_dask_arrays(endog, exog, missing, **rows), options)
            return
        self.construct(from_arrays(endog, exog, missing, **rows), options)

    @classmethod
    def from_formula(cls, formula: str, data, missing: str = "drop", eval_env: Any = None,
                     engine: str = "patsy", **options):
        """Build the model from a formula on a pandas DataFrame.

        Parameters
        ----------
        formula : str
            ``"y ~ x1 + C(group) + np.log(x2)"``; the response column is taken as it is
            (labels kept). ``"y ~ ."`` uses every other column (R's ``.``); a binomial GLM
            accepts counts as ``"successes + failures ~ x"`` or ``"cbind(successes, failures)
            ~ x"``; ``offset(expr)`` terms are added to the linear predictor.
        data : pandas.DataFrame
        missing : {"drop", "raise"}
            Drop rows with a missing value in any used column (R's ``na.omit``), or raise.
        eval_env : None, int, dict or patsy.EvalEnvironment
            None (the default): the formula may use the data's columns, numpy (``np``) and the
            formula transforms (``C``, ``I``, ``Q``, ``center``, ``standardize``, ``offset``,
            ...) only, and nothing else is evaluated. To call your own functions, pass a dict
            of names (``{"f": f}``), a number of frames above the caller (0: the caller's own
            namespace) or a patsy ``EvalEnvironment``: the formula is then trusted code.
        engine : {"patsy", "formulaic"}
            The library that builds the design; formulaic (an optional dependency) gives the
            same columns, much faster on large data.
        **options
            The model's other constructor arguments; per-row arguments (weights, offsets) are
            arrays aligned with the rows of ``data``, scalars, or names of columns of ``data``.
        """
        env = capture_env(eval_env, 1 + _overrides_above())
        rows = {k: options.pop(k, None) for k in cls.row_args}
        if is_dask(data):  # a Dask DataFrame: the design is built partition by partition
            from ..data.dask import from_dask_formula

            md = from_dask_formula(formula, data, missing, env, **rows)
        else:
            md = from_formula(formula, data, missing, env, engine, **rows)
        if md.arrays.get("offset") is not None and "offset" not in cls.row_args:
            raise ValueError(f"{cls.__name__} has no offset: remove the offset() term from "
                             f"the formula {formula!r}")
        if cls._features_only:
            md = md.without_intercept()
        self = cls.__new__(cls)
        self.construct(md, options)
        return self

    def construct(self, data: ModelData, options: dict) -> None:
        """Set the model up on ``data`` with its constructor ``options`` (``_setup``) and
        freeze it; for a model made with ``cls.__new__(cls)`` from data another model holds
        (e.g. :func:`glmclass.models.robust_link.robust_logit_profile`)."""
        self.data = data
        self._setup(data, **options)
        object.__setattr__(self, "_frozen", True)

    def _setup(self, data: ModelData, **options) -> None:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} does not define _setup")

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_frozen", False):
            raise AttributeError(f"{type(self).__name__} models are immutable: build a new "
                                 f"model instead of assigning {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} models are immutable")

    # --- what every model exposes -------------------------------------------------------------
    @property
    def formula(self) -> str | None:
        """The formula the model was built from (None on the array path)."""
        return self.data.formula

    @property
    def exog(self) -> np.ndarray:
        """The design matrix (features only for generative models)."""
        return self.data.exog

    @property
    def exog_names(self) -> list[str]:
        """Design-column names."""
        return self.data.exog_names

    @property
    def has_intercept(self) -> bool:
        """Whether the design has a constant column of ones."""
        return self.data.intercept_index is not None

    def design(self, exog) -> np.ndarray:
        """Design matrix of new data (through the stored formula design, or as given)."""
        return self.data.design(exog)
