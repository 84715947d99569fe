"""Per-row outputs of results through the row source: arrays in memory, lazy maps on Dask.

There is one results class per model kind (``GLMResults``, ``MNLogitResults``, ``LDAResults``,
...), whichever data it was fit on. Each derives from :class:`RowOutputs` and names, with
``rows=`` in its class statement, the outputs that read the rows of the fit (fitted values,
residuals, scores, hat values, in-sample predictions, confusion tables, sums over rows) and
how each is made when those rows live in Dask partitions. :class:`RowOutputs` wraps these
outputs in place, in the class itself (no class is generated at run time, so results pickle):
in memory they run as written; on Dask data each runs, by the same in-memory code, where each
partition lives on a copy of the results that holds only that partition's rows
(:func:`local_results`), and the outputs are lazy Dask collections (per-row values) or sums
over the partitions (totals). Predictions for new Dask data are lazy for a fit on either data.

Estimates, standard errors and everything derived from them are computed on the client exactly
as in memory (they need only the p x p pieces the solvers return); the global p x p pieces a
per-row output needs (the inverse information of the hat values) are computed before the
results are shipped to the partitions.

No Dask here: the calls on every partition go through the data (``data.map_parts``,
``data.total_parts`` of :class:`glmclass.data.dask.DaskModelData`), and new Dask rows
through :func:`glmclass.rows.dask.map_new_partitions` (imported where it is needed: only for
Dask data, so that importing glmclass does not import dask). Whether the rows of a fit are
partitioned is the data's capability ``in_memory``.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from functools import cache, wraps
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..data.model_data import ModelData, is_dask
from ..data.response import encode
from ..lazy import cached_property

#: Cached results attributes that depend on the rows: never carried into a detached or local
#: copy (they are recomputed there from the rows that copy holds).
ROW_CACHES = frozenset({
    "_eta", "_null_eta", "fittedvalues", "linear_predictor", "resid_response", "resid_pearson",
    "resid_deviance", "resid_working", "pearson_chi2", "_log_joint", "_log_post", "llf",
    "llf_conditional", "llnull", "error_rate", "hat_matrix_diag", "cv_posterior", "cv_class",
    "cv_error", "_hats", "_firth_hat"})


class RecipeSpec:
    """A picklable stand-in for the formula's DesignSpec on workers: it rebuilds the patsy
    design (levels and the memorised stateful transforms) from the recipe where unpickled."""

    def __init__(self, recipe) -> None:
        self.recipe = recipe
        self._spec = None

    def __getstate__(self) -> dict:
        return {"recipe": self.recipe, "_spec": None}

    def _get(self):
        if self._spec is None:
            self._spec = self.recipe.spec()
        return self._spec

    def __getattr__(self, name: str):
        if name in ("recipe", "_spec"):
            raise AttributeError(name)
        return getattr(self._get(), name)


def _light_data(data) -> ModelData:
    """The model data without rows: names, design spec, intercept, feature mask."""
    p = len(data.exog_names)
    recipe = getattr(data, "recipe", None)
    spec = RecipeSpec(recipe) if recipe is not None else data.spec
    return ModelData(np.empty((0, p)), list(data.exog_names), np.empty(0), data.endog_name,
                     pd.RangeIndex(0), {}, spec, data.n_dropped, data.formula,
                     data.intercept_index, data.feature_mask)


def shallow_copy(obj: Any, **changes) -> Any:
    """A shallow copy of ``obj`` (frozen models included) without Dask collections and row
    caches, with ``changes`` set."""
    new = object.__new__(type(obj))
    state = {k: v for k, v in vars(obj).items() if not is_dask(v) and k not in ROW_CACHES}
    state.update(changes)
    new.__dict__.update(state)
    return new


def _is_rows(value: Any, n: int) -> bool:
    return is_dask(value) or (isinstance(value, np.ndarray) and value.ndim >= 1
                              and value.shape[0] == n and n > 0)


def detach(res) -> Any:
    """A copy of ``res`` with no rows and no Dask collections: small and picklable, shipped
    once to the workers (the model's ``problem``, when it has one, is asked for its copy
    without rows: ``problem.detached(data)``)."""
    m = res.model
    light = _light_data(m.data)
    extra: dict = {"data": light}
    problem = vars(m).get("problem")
    if problem is not None:
        extra["problem"] = problem.detached(light)
    n = m.data.nrows
    for key, value in vars(m).items():
        if key not in extra and _is_rows(value, n):
            extra[key] = None
    return shallow_copy(res, model=shallow_copy(m, **extra))


def local_results(det, part: tuple) -> Any:
    """The in-memory results of ``det`` (a :func:`detach`-ed copy) over one partition's rows
    ``(X, y, arrays, index)``: its per-row and summed quantities are the partition's share."""
    X, y, arrays, index = part
    d = det.model.data
    data = ModelData(X, d.exog_names, y, d.endog_name, pd.Index(index), dict(arrays), d.spec,
                     0, d.formula, d.intercept_index, d.feature_mask)
    return shallow_copy(det, model=det.partition_model(data))


def _local_call(det, part: tuple, path: tuple):
    """``local_results(det, part)`` followed along ``path``: (name, kwargs or None) steps,
    a step with kwargs a call."""
    out = local_results(det, part)
    for name, kwargs in path:
        if isinstance(name, int):  # an item of a tuple output
            out = out[name]
            continue
        out = getattr(out, name)
        if kwargs is not None:
            out = out(**kwargs)
    return out


def _part_call(part: tuple, det, path: tuple):
    """:func:`_local_call` with the partition first (the data's ``map_parts`` order)."""
    return _local_call(det, part, path)


def _meta(res, path: tuple, det):
    """The output's empty pandas shape: ``path`` on a partition of no rows."""
    d = res.model.data
    resp = d.facts.response
    y = np.empty(0, dtype=object if resp.kind not in "iufb" else
                 (bool if resp.kind == "b" else float))
    if resp.kind == "c":
        y = pd.Categorical([], categories=resp.categories, ordered=resp.ordered)
    arrays = {k: np.empty(0) for k in d.facts.arrays}
    part = (np.empty((0, len(d.exog_names))), y, arrays, pd.RangeIndex(0))
    return _local_call(det, part, path)


def lazy_rows(res, path: tuple, det=None):
    """A lazy Dask Series / DataFrame of the partitions' outputs along ``path`` (``det``: the
    results shipped, :func:`detach` of ``res`` by default)."""
    det = detach(res) if det is None else det
    return res.model.data.map_parts(_part_call, det, path, meta=_meta(res, path, det))


def row_total(res, path: tuple, det=None):
    """Sum over partitions of the outputs along ``path``."""
    return res.model.data.total_parts(_part_call, detach(res) if det is None else det, path)


def _predict_partition(frame: pd.DataFrame, offset, det, what: str, kwargs: dict,
                       after: tuple = ()):
    """``det.what(frame, **kwargs)`` on one partition of new rows, then the steps ``after``
    (as in :func:`_local_call`) on its output."""
    if offset is not None:
        kwargs = dict(kwargs, offset=np.asarray(offset, dtype=float))
    if isinstance(frame, pd.DataFrame) and det.model.data.spec is None:
        frame = frame.to_numpy(dtype=float)
    out = getattr(det, what)(frame, **kwargs)
    for name, step in after:
        out = getattr(out, name)
        if step is not None:
            out = out(**step)
    return out


def _sample(det, exog) -> pd.DataFrame:
    """One row shaped like the new data, to find the output's empty pandas shape."""
    spec = det.model.data.spec
    if isinstance(spec, RecipeSpec):
        return spec.recipe.witness.iloc[:1]
    if spec is None:
        return pd.DataFrame(np.zeros((1, len(det.model.data.exog_names))))
    witness = getattr(spec, "witness", None)
    if isinstance(witness, pd.DataFrame):
        return witness.iloc[:1]
    return exog.head(1, npartitions=-1)


def map_new_rows(det, exog, kwargs: dict, what: str = "predict", after: tuple = ()):
    """Lazy ``det.what(frame, **kwargs)`` for each partition of a Dask DataFrame (or
    row-chunked array) of new rows, followed by the steps ``after`` ((name, kwargs or None)
    pairs: an attribute, or a call); an ``offset`` must be a Dask Series aligned with it."""
    from ..rows.dask import map_new_partitions, new_rows_frame  # only for Dask data

    kwargs = dict(kwargs)
    offset = kwargs.pop("offset", None)
    exog = new_rows_frame(exog)
    sample = _sample(det, exog)
    meta_kw = dict(kwargs, offset=np.zeros(len(sample))) if offset is not None else kwargs
    meta = _predict_partition(sample, None, det, what, meta_kw, after).iloc[:0]
    return map_new_partitions(exog, _predict_partition, det, what, kwargs, after,
                              offset=offset, meta=meta)


def _fingerprint_in(res, data) -> str:
    """The fingerprint of the in-memory rows of ``res`` as Dask data ``data`` computes its own
    (per partition of ``data.lengths``: a hash of the labels, and of the frequency weights
    when some are not 1; :meth:`glmclass.data.dask.DataFacts.fingerprint`)."""
    mine = res.model.data
    index = mine.index
    fw = mine.arrays.get("freq_weights")
    ends = np.cumsum(data.lengths)
    starts = ends - np.asarray(data.lengths)
    h = hashlib.sha1()
    for s, e in zip(starts, ends, strict=True):
        h.update(hashlib.sha1(pd.util.hash_array(np.asarray(index[s:e])).tobytes()).digest())
    facts = data.facts.arrays.get("freq_weights")
    if facts is not None and facts.nonunit:
        for s, e in zip(starts, ends, strict=True):
            w = fw[s:e] if fw is not None else np.ones(e - s)
            h.update(hashlib.sha1(np.ascontiguousarray(w, dtype=float).tobytes()).digest())
    return h.hexdigest()


def same_rows(a, b) -> bool:
    """Whether two fits used the same rows (labels, order and frequency weights), whichever
    data each was fit on: a fit on Dask data and one in memory are compared in the layout of
    the Dask partitions."""
    if float(a.nobs) != float(b.nobs):
        return False
    if a.rows_fingerprint == b.rows_fingerprint:
        return True
    if a.model.data.in_memory == b.model.data.in_memory:
        return False
    lazy, mem = (b, a) if a.model.data.in_memory else (a, b)
    if mem.model.data.nrows != lazy.model.data.nrows:
        return False
    return _fingerprint_in(mem, lazy.model.data) == lazy.rows_fingerprint


# --- how each output is made (handlers: ``handler(original, res, *args, **kwargs)``) ---------


def rows_of(original: Callable, res, *args, **kwargs):
    """A per-row output: lazy over the partitions on Dask data."""
    if res.model.data.in_memory:
        return original(res, *args, **kwargs)
    call = None if is_property_body(original) else _named(original, args, kwargs)
    return lazy_rows(res, ((original.__name__, call),))


def rows_after(*needs: str) -> Callable:
    """A per-row output that needs the global (p x p) values ``needs`` of the results: they
    are computed on the client before the results are shipped to the partitions."""
    def handler(original: Callable, res, *args, **kwargs):
        if not res.model.data.in_memory:
            for name in needs:
                getattr(res, name)
        return rows_of(original, res, *args, **kwargs)

    return handler


def total_of(original: Callable, res, *args, **kwargs):
    """A sum over rows: one pass of per-partition sums on Dask data."""
    if res.model.data.in_memory:
        return original(res, *args, **kwargs)
    call = None if is_property_body(original) else _named(original, args, kwargs)
    return row_total(res, ((original.__name__, call),))


def lazy_output(res, exog) -> bool:
    """Whether an output of ``res`` for the rows ``exog`` is lazy: in-sample (``exog`` None)
    when the rows of the fit are not in memory, new rows when they are a Dask collection."""
    return not res.model.data.in_memory if exog is None else is_dask(exog)


def refuse_new_offset(what: str, named: dict) -> None:
    """In-sample outputs of a fit to Dask data take the fit's offsets: a new ``offset`` or
    ``exposure`` (one value per row, held on the client) is refused, naming what to do."""
    given = [k for k in ("offset", "exposure") if named.get(k) is not None]
    if given:
        raise ValueError(
            f"{what}(): {given[0]}= for the rows of a fit to Dask data: pass those rows as "
            f"new data with their {given[0]} as a column of it, e.g. {what}(ddf, "
            f"{given[0]}=ddf['column'])")


def new_rows_of(original: Callable, res, *args, **kwargs):
    """``predict``-like outputs: in-sample lazy on Dask data; new Dask data lazy for a fit on
    either data; new pandas data in memory."""
    exog = args[0] if args else kwargs.get("exog")
    if not lazy_output(res, exog):  # in memory: no argument binding on this path
        return original(res, *args, **kwargs)
    named = _named(original, args, kwargs)
    named.pop("exog", None)
    if exog is None:
        refuse_new_offset(original.__name__, named)
        return lazy_rows(res, ((original.__name__, named),))
    return map_new_rows(detach(res), exog, named, original.__name__)


def is_property_body(fn: Callable) -> bool:
    """Whether ``fn`` is the body of a (cached) property wrapped as a row output."""
    return getattr(fn, "row_property", False)


@cache
def _signature(fn: Callable) -> inspect.Signature:
    return inspect.signature(fn)


def _named(fn: Callable, args: tuple, kwargs: dict) -> dict:
    """The arguments of a call of ``fn`` (without self) by name."""
    sig = _signature(fn)
    named = dict(sig.bind(None, *args, **kwargs).arguments)
    named.pop(next(iter(sig.parameters)))
    extra = named.pop("kwargs", None) if "kwargs" in sig.parameters else None
    return named | (extra or {})


def _wrap(original: Any, handler: Callable, name: str, owner: type) -> Any:
    if isinstance(original, (cached_property, property)):
        body = original.func if isinstance(original, cached_property) else original.fget
        body.row_property = True

        @wraps(body)
        def get(self):
            return handler(body, self)

        new = type(original)(get)
        if isinstance(new, cached_property):
            new.__set_name__(owner, name)
        return new

    @wraps(original)
    def call(self, *args, **kwargs):
        return handler(original, self, *args, **kwargs)

    return call


class RowOutputs:
    """Base of every results class whose outputs read the rows (see the module docstring).

    A subclass names its row outputs in its class statement, ``class R(RowOutputs,
    rows={"fittedvalues": rows_of, "pearson_chi2": total_of, "predict": new_rows_of})``;
    subclasses inherit the table, and every output of the table a class defines is wrapped
    where it is defined.
    """

    row_outputs: ClassVar[dict] = {}

    def __init_subclass__(cls, rows: dict | None = None, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if rows is not None:
            cls.row_outputs = {**cls.row_outputs, **rows}
        for name, handler in cls.row_outputs.items():
            if name in cls.__dict__:
                setattr(cls, name, _wrap(cls.__dict__[name], handler, name, cls))

    def __getstate__(self) -> dict:
        """The state to pickle: lazy Dask collections cached from the rows are left out (they
        may hold functions of the graph; they are made again when asked)."""
        return {k: v for k, v in self.__dict__.items() if not is_dask(v)}

    def partition_model(self, data: ModelData) -> Any:
        """The model of these results over the rows ``data`` of one partition (in memory):
        the classifiers' response as codes of their levels; models holding other encoded
        rows override this."""
        m = self.model
        return shallow_copy(m, data=data, endog=encode(data.endog, m.levels))


def _error_rate(original: Callable, res):
    """Training misclassification rate: from the confusion table (one pass) on Dask data."""
    if res.model.data.in_memory:
        return original(res)
    table = res.pred_table().to_numpy()
    return float(1.0 - np.trace(table) / table.sum())


def _cv_error(original: Callable, res):
    """Leave-one-out misclassification rate: from its confusion table (one pass) on Dask
    data."""
    if res.model.data.in_memory:
        return original(res)
    table = res.cv_pred_table().to_numpy()
    return float((table.sum() - np.trace(table)) / table.sum())


#: The row outputs of the generative classifiers (LDA, QDA, naive Bayes).
GENERATIVE_ROWS = {"predict": new_rows_of, "transform": new_rows_of, "pred_table": total_of,
                   "llf": total_of, "llf_conditional": total_of, "error_rate": _error_rate,
                   "cv_posterior": rows_of, "cv_class": rows_of, "cv_pred_table": total_of,
                   "cv_error": _cv_error}
