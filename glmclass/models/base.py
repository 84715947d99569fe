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

import functools
import inspect
import numbers
import sys
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..data.model_data import ModelData, from_arrays, from_formula, has_dask, is_dask
from ..errors import one_of
from ..formula.design import capture_env
from ..likelihoods import likelihood_of
from ..likelihoods import totals as LT
from ..rows.blocks import RowBlocks
from ..solvers.control import Control
from . import vocabulary as V


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
    key = tuple((k, type(v), v) for k, v in
                (("method", method), ("maxiter", maxiter), ("tol", tol), *sorted(settings.items())))
    if not all(t in _PLAIN for _, t, _ in key):  # e.g. a progress printer: built afresh
        return Control.for_method(method, maxiter=maxiter, tol=tol, **settings)
    return _control(key)


#: Setting types whose Controls are shared between fits (:func:`_control`).
_PLAIN = frozenset({int, float, str, bool, type(None)})


@functools.lru_cache(maxsize=256)
def _control(key: tuple) -> Control:
    """The :class:`Control` of ``key`` (name, type, value of each setting), made once: a
    Control is frozen, so fits with the same settings share it (building and validating one
    costs ~7 us, ~1 % of a fit at n = 50). The types are in the key so that ``maxiter=True``
    is still refused rather than found as ``maxiter=1``."""
    settings = {k: v for k, _, v in key}
    return Control.for_method(settings.pop("method"), **settings)


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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap the subclass's own ``fit`` and ``fit_regularized`` so that statsmodels'
        arguments (``method="l1"``, ``refit``, ``trim_mode``), model options and per-row
        arrays (``offset=``, ``freq_weights=``, ...) given to them are answered with the
        glmclass equivalent (:mod:`glmclass.models.vocabulary`) instead of Python's "got an
        unexpected keyword argument". Their warnings find the user's call whatever the depth
        (:func:`glmclass.errors.warn_user`)."""
        super().__init_subclass__(**kwargs)
        for name in ("fit", "fit_regularized"):
            fn = cls.__dict__.get(name)
            if callable(fn):  # a class's own definition, never one already wrapped
                setattr(cls, name, _checked(fn, name))
        init = cls.__dict__.get("__init__")
        if callable(init):  # R's glm(weights=), statsmodels' exposure= on a Logit, ...
            cls.__init__ = _checked_init(init)

    @classmethod
    def from_formula(cls, formula: str, data, missing: str = "drop", eval_env: Any = None,
                     engine: str = "patsy", subset: Any = None, **options):
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
        subset : boolean array or Series, or index labels, optional
            The rows of ``data`` to use (statsmodels' ``subset=``): a boolean mask aligned with
            the rows (a Series by its index), or a list/Index of row labels. Per-row arrays in
            ``options`` are aligned with ``data`` and subset alike.
        **options
            The model's other constructor arguments; per-row arguments (weights, offsets) are
            arrays aligned with the rows of ``data``, scalars, or names of columns of ``data``.
        """
        env = capture_env(eval_env, 1 + _overrides_above())
        rows = {k: options.pop(k, None) for k in cls.row_args}
        if subset is not None:
            data, rows = _subset(data, rows, subset)
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
        (e.g. :func:`glmclass.models.robust_link.robust_logit_profile`).

        Raises
        ------
        TypeError
            For an option the model does not take, naming it and the glmclass equivalent
            (``priors=`` -> ``prior=``, ``exposure=`` needs a log link, a fit option given to
            the model).
        """
        takes = _parameters(self._setup) - {"self", "data"}
        unknown = [k for k in options if k not in takes]
        if unknown:
            public = (_parameters(type(self).__init__) | set(type(self).row_args)) - {
                "self", "endog", "exog"}
            raise V.unknown_constructor_args(type(self).__name__, unknown, public,
                                             _parameters(getattr(type(self), "fit", None)))
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
    def endog_names(self) -> str:
        """The response's name (statsmodels' ``endog_names``): the formula's left-hand side,
        or the name of the array or Series given."""
        return self.data.endog_name

    # --- the likelihood at any parameters (statsmodels' LikelihoodModel methods) ---------------
    def blocks(self) -> RowBlocks:
        """The model's rows as a block source (design, encoded response, weights, offset), in
        memory or in Dask partitions; models with a likelihood define it."""
        raise TypeError(f"{type(self).__name__} has no likelihood to evaluate at given "
                        "parameters; loglike/score/hessian are for GLM-type and multinomial "
                        "models")

    def loglike(self, params, scale: float | None = None) -> float:
        """Log-likelihood of the model's rows at ``params``.

        Parameters
        ----------
        params : array-like of shape (k,) or (k, n_equations), Series or DataFrame
            Coefficients by design column (a multinomial model: one column per non-reference
            level, or a flat vector level by level, as ``cov_params``); NaN (an aliased
            column) counts as 0.
        scale : float, optional
            The dispersion of a family that estimates one (Gaussian, Gamma); default its
            maximum-likelihood value at ``params`` (R's ``logLik``). Ignored otherwise.

        Returns
        -------
        float
            At the estimates, the results' ``llf``.
        """
        return LT.loglike(likelihood_of(self), self.blocks(), params, scale)

    def score(self, params) -> np.ndarray:
        """Gradient of the log-likelihood at ``params`` (dispersion 1), an array of shape
        (n_equations * k,), level by level for a multinomial model."""
        return LT.score(likelihood_of(self), self.blocks(), params)

    def hessian(self, params, observed: bool = True) -> np.ndarray:
        """Second derivatives of the log-likelihood at ``params`` (dispersion 1), shape
        (n_equations * k, n_equations * k); ``observed=False``: minus the Fisher
        information."""
        return LT.hessian(likelihood_of(self), self.blocks(), params, observed)

    def information(self, params, observed: bool = False) -> np.ndarray:
        """Fisher information at ``params`` (statsmodels' ``information``: the expected
        one), or the observed information with ``observed=True``; minus :meth:`hessian`,
        positive definite at a maximum (statsmodels' ``GLM.information`` returns the expected
        Hessian, this matrix's negative)."""
        return -self.hessian(params, observed)

    @property
    def has_intercept(self) -> bool:
        """Whether the design has a constant column of ones."""
        return self.data.intercept_index is not None

    def design(self, exog) -> np.ndarray:
        """Design matrix of new data (through the stored formula design, or as given)."""
        return self.data.design(exog)


def _parameters(fn: Any) -> set[str]:
    """Names of the keyword parameters of ``fn`` (empty for None); a bound method is read
    through its function, so ``self`` is among them."""
    if fn is None:
        return set()
    return set(_function_parameters(getattr(fn, "__func__", fn)))


@functools.lru_cache(maxsize=512)
def _function_parameters(fn: Any) -> frozenset[str]:
    # inspect.signature costs ~40 us; every model construction asks, with the same functions
    return frozenset(n for n, p in inspect.signature(fn).parameters.items()
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _checked_init(fn: Any) -> Any:
    """A model's ``__init__`` answering a keyword it does not take with
    :func:`glmclass.models.vocabulary.unknown_constructor_args` (what to use instead) rather
    than Python's "got an unexpected keyword argument"."""
    sig = inspect.signature(fn)
    takes = {n for n, p in sig.parameters.items()
             if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return fn

    @functools.wraps(fn)
    def init(self, *args: Any, **kwargs: Any) -> None:
        unknown = [k for k in kwargs if k not in takes]
        if unknown:
            cls = type(self)
            raise V.unknown_constructor_args(cls.__name__, unknown,
                                             takes - {"endog", "exog"},
                                             _parameters(getattr(cls, "fit", None)) - {"self"})
        fn(self, *args, **kwargs)

    return init


def _checked(fn: Any, name: str) -> Any:
    """``fn`` (a model's ``fit`` or ``fit_regularized``) answering an unknown keyword with
    :func:`glmclass.models.vocabulary.unknown_fit_args`."""
    sig = inspect.signature(fn)
    takes = [n for n, p in sig.parameters.items()
             if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    open_ended = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())

    @functools.wraps(fn)
    def method(self, *args: Any, **kwargs: Any) -> Any:
        if not open_ended:
            unknown = [k for k in kwargs if k not in takes]
            if unknown:
                model_args = (_parameters(type(self).__init__) | set(type(self).row_args)
                              | {"subset", "missing", "eval_env", "engine"}) - {
                    "self", "endog", "exog"}
                error = str(V.unknown_fit_args(type(self).__name__, name, unknown, takes,
                                               model_args))
                if not takes:
                    error = error.replace(f"{name}() takes: ", f"{name}() takes no arguments")
                raise TypeError(". ".join([error, *_row_hints(type(self), name, unknown)]))
        return fn(self, *args, **kwargs)

    return method


#: Per-row arrays a user may give to ``fit`` (statsmodels and R habits): each belongs to the
#: model's constructor (``weights`` is R's ``glm(weights=)``, glmclass's ``var_weights``).
ROW_NAMES = ("offset", "exposure", "freq_weights", "var_weights", "weights")


def _row_hints(cls: type, method: str, unknown: list[str]) -> list[str]:
    """What to do with per-row arrays given to ``method``: name the constructor argument, or
    say that the model takes none of that kind."""
    name, rows = cls.__name__, tuple(cls.row_args)
    takes = f"its per-row arguments are {', '.join(rows)}" if rows else "it takes none"
    out = []
    for arg in unknown:
        if arg == "weights":
            weights = [w for w in ("var_weights", "freq_weights") if w in rows]
            out.append(f"weights= is R's glm(weights=): here {weights[0]}= (var_weights: "
                       "precision weights; freq_weights: counts of identical rows), an argument "
                       f"of the model: {name}(endog, exog, {weights[0]}=...) or "
                       f"{name}.from_formula(formula, data, {weights[0]}=...)" if weights else
                       f"weights=: {name} takes no per-row weights")
        elif arg in ROW_NAMES and arg not in rows:
            out.append(f"{arg}= is a per-row array, given to a model's constructor (or "
                       f"from_formula), not to {method}(), and {name} does not take it: "
                       f"{takes}")
    return out


def _subset(data: Any, rows: dict, subset: Any) -> tuple[Any, dict]:
    """``data`` and the per-row arrays in ``rows`` restricted to ``subset`` (a boolean mask,
    or row labels), as statsmodels' ``from_formula(..., subset=)``."""
    if is_dask(data):
        if not is_dask(subset):  # Dask would select columns, or fail on a pandas mask
            raise TypeError("subset= with Dask data must be a Dask boolean Series of that "
                            "DataFrame (e.g. ddf['age'] > 30), got "
                            f"{type(subset).__name__}")
        return data[subset], rows
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"subset= needs a pandas DataFrame as data, got {type(data).__name__}")
    n = len(data)
    if isinstance(subset, pd.Series) and subset.dtype == bool:
        if not subset.index.equals(data.index):
            missing = data.index.difference(subset.index)
            if len(missing):
                raise ValueError(f"subset is a boolean Series without the rows {list(missing[:5])}"
                                 " of data: give one value per row of data")
            subset = subset.reindex(data.index)
        pos = np.flatnonzero(subset.to_numpy())
    else:
        arr = np.asarray(subset)
        if arr.dtype == bool:
            if arr.shape != (n,):
                raise ValueError(f"subset is a boolean mask of {arr.size} values for {n} rows of "
                                 "data: give one value per row")
            pos = np.flatnonzero(arr)
        else:
            labels = pd.Index(arr.ravel())
            bad = labels.difference(data.index)
            if len(bad):
                raise ValueError(f"subset names rows {list(bad[:5])} that are not in the index "
                                 "of data: give row labels of data or a boolean mask")
            pos = data.index.get_indexer(labels)
    if pos.size == 0:
        raise ValueError("subset selects no rows of data")
    out = {}
    for key, value in rows.items():
        if isinstance(value, pd.Series):
            out[key] = value  # aligned by label with the rows kept
        elif value is None or isinstance(value, str) or np.ndim(value) == 0:
            out[key] = value
        else:
            arr = np.asarray(value)
            if arr.shape[0] != n:
                raise ValueError(f"{key} has {arr.shape[0]} values for {n} rows of data: give "
                                 "one per row of data (subset= selects from them too)")
            out[key] = arr[pos]
    return data.iloc[pos], out
