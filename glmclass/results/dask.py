"""Results of fits on Dask data: the same results classes, with lazy per-row outputs.

A fit on Dask partitions builds the usual results class (``GLMResults``, ``MNLogitResults``,
``LDAResults``, ...) through :func:`on_dask`, which adds one mixin: every quantity that the
in-memory class computes from full-length arrays is computed partition by partition instead, by
the *in-memory* code itself, run where each partition lives on a results object that holds only
that partition's rows (:func:`local_results`). Per-row outputs (fitted values, residuals,
in-sample predictions, predictions for a Dask DataFrame) are lazy Dask collections; sums over
rows (Pearson's chi-squared, the generative log-likelihoods, confusion tables) are reductions.

Estimates, standard errors and everything derived from them are computed on the client exactly
as in memory (they need only the p x p pieces the solvers return).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import dask
import numpy as np
import pandas as pd
from dask import delayed

from ..data.model_data import ModelData, is_dask
from ..data.response import encode
from ..rows.dask import _literal

#: Cached results attributes that depend on the rows: never carried into a detached or local
#: copy (they are recomputed there from the rows that copy holds).
ROW_CACHES = frozenset({
    "_eta", "_null_eta", "fittedvalues", "linear_predictor", "resid_response", "resid_pearson",
    "resid_deviance", "resid_working", "pearson_chi2", "_log_joint", "_log_post", "llf",
    "llf_conditional", "llnull", "error_rate", "hat_matrix_diag", "cv_posterior", "cv_class",
    "cv_error"})


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


def _plain(cls: type) -> type:
    """The in-memory results class of a (possibly Dask) results class."""
    return getattr(cls, "_in_memory", cls)


def _light_data(data) -> ModelData:
    """The model data without rows: names, design spec, intercept, feature mask."""
    p = len(data.exog_names)
    spec = RecipeSpec(data.recipe) if getattr(data, "recipe", None) is not None else data.spec
    return ModelData(np.empty((0, p)), list(data.exog_names), np.empty(0), data.endog_name,
                     pd.RangeIndex(0), {}, spec, data.n_dropped, data.formula,
                     data.intercept_index, data.feature_mask)


def _copy(obj: Any, cls: type | None = None, **changes) -> Any:
    """A shallow copy (frozen models included) without Dask collections and row caches."""
    new = object.__new__(cls or type(obj))
    state = {k: v for k, v in vars(obj).items() if not is_dask(v) and k not in ROW_CACHES}
    state.update(changes)
    new.__dict__.update(state)
    return new


def detach(res) -> Any:
    """A copy of ``res`` (its in-memory class) with no rows and no Dask collections: small
    and picklable, shipped once to the workers for predictions."""
    m = res.model
    light = _light_data(m.data)
    extra = {"data": light}
    problem = getattr(m, "problem", None)
    if problem is not None and hasattr(problem, "detached"):
        extra["problem"] = problem.detached(light)
    for key in ("codes", "freq_weights", "offset", "endog"):
        if is_dask(vars(m).get(key)):
            extra[key] = None
    return _copy(res, _plain(type(res)), model=_copy(m, **extra))


def local_results(det, part: tuple) -> Any:
    """The in-memory results of ``det`` (a :func:`detach`-ed copy) over one partition's rows
    ``(X, y, arrays, index)``: its per-row and summed quantities are the partition's share."""
    from ..models.glm_base import GLMProblem, constant

    X, y, arrays, index = part
    m = det.model
    d = m.data
    n = X.shape[0]
    data = ModelData(X, d.exog_names, y, d.endog_name, pd.Index(index), dict(arrays), d.spec,
                     0, d.formula, d.intercept_index, d.feature_mask)
    extra: dict = {"data": data}
    a = {k: v for k, v in arrays.items() if v is not None}
    if isinstance(getattr(m, "problem", None), GLMProblem):
        from ..models.dask_glm import _encode_y

        pr = m.problem
        extra["problem"] = GLMProblem(
            data, pr.family, _encode_y(y, pr.levels), pr.levels,
            a.get("offset", constant(0.0, n)), a.get("freq_weights", constant(1.0, n)),
            a.get("var_weights", constant(1.0, n)))
    elif hasattr(m, "_fit_levels"):  # MNLogit
        extra.update(codes=encode(y, m._fit_levels), freq_weights=a.get("freq_weights",
                     constant(1.0, n)), offset=a.get("offset", constant(0.0, n)))
    else:  # generative classifiers
        extra["endog"] = encode(y, m.levels)
    return _copy(det, model=_copy(m, **extra))


def _local_call(det, part: tuple, what: str, kwargs: dict | None):
    out = getattr(local_results(det, part), what)
    return out(**kwargs) if kwargs is not None else out


class DaskRows:
    """What every results class gets on Dask data (see the module docstring)."""

    @cached_property
    def _detached(self):
        return detach(self)

    def _per_partition(self, what: str, kwargs: dict | None = None) -> list:
        """Delayed ``local_results(part).what`` (called with ``kwargs`` if given) per
        partition."""
        det = _literal(self._detached, "results")
        return [delayed(_local_call, pure=False)(det, p, what, kwargs)
                for p in self.model.data.parts]

    def _rows(self, what: str, kwargs: dict | None = None):
        """A lazy Dask Series / DataFrame of the partitions' ``what``."""
        import dask.dataframe as dd

        meta = self._meta(what, kwargs)
        return dd.from_delayed(self._per_partition(what, kwargs), meta=meta, verify_meta=False)

    def _meta(self, what: str, kwargs: dict | None):
        """The output's empty pandas shape: ``what`` on a partition of no rows."""
        d = self.model.data
        resp = d.facts.response
        y = np.empty(0, dtype=object if resp.kind not in "iufb" else
                     (bool if resp.kind == "b" else float))
        if resp.kind == "c":
            y = pd.Categorical([], categories=resp.categories, ordered=resp.ordered)
        arrays = {k: np.empty(0) for k in d.facts.arrays}
        part = (np.empty((0, len(d.exog_names))), y, arrays, pd.RangeIndex(0))
        return _local_call(self._detached, part, what, kwargs)

    def _total(self, what: str, kwargs: dict | None = None):
        """Sum over partitions of ``local_results(part).what``."""
        parts = dask.compute(*self._per_partition(what, kwargs))
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total

    def predict(self, exog=None, which: str | None = None, **kwargs):
        """As the in-memory ``predict``; on Dask data in-sample predictions, and predictions
        for a Dask DataFrame or array, are lazy Dask Series / DataFrames."""
        if which is not None:
            kwargs["which"] = which
        if exog is None:
            return self._rows("predict", kwargs)
        if is_dask(exog):
            return predict_dask(self._detached, exog, kwargs)
        return super().predict(exog, **kwargs)

    def pred_table(self, *args, **kwargs) -> pd.DataFrame:
        """Confusion table of the training rows (summed over partitions)."""
        named = dict(zip(_pred_table_args(self)[:len(args)], args, strict=True))
        return self._total("pred_table", named | kwargs)

    def _unavailable(self, what: str):
        raise NotImplementedError(
            f"{what} needs every row at once and is not available for a fit on Dask data; "
            "fit the model on a pandas DataFrame (or a sample) for it")


def _pred_table_args(res) -> tuple:
    return ("threshold",) if hasattr(res, "_labels") else ()


def _predict_partition(frame: pd.DataFrame, offset, det, kwargs: dict):
    if offset is not None:
        kwargs = dict(kwargs, offset=np.asarray(offset, dtype=float))
    if isinstance(frame, pd.DataFrame) and det.model.data.spec is None:
        frame = frame.to_numpy(dtype=float)
        out = det.predict(frame, **kwargs)
        return out
    return det.predict(frame, **kwargs)


def predict_dask(det, exog, kwargs: dict):
    """Lazy predictions for a Dask DataFrame (or row-chunked array) of new rows."""
    import dask.array as da
    import dask.dataframe as dd

    offset = kwargs.pop("offset", None)
    if isinstance(exog, da.Array):
        exog = dd.from_dask_array(exog if exog.ndim == 2 else exog[:, None])
    if offset is not None and not is_dask(offset):
        raise TypeError("with Dask new data, offset must be a Dask Series aligned with it")
    spec = det.model.data.spec
    sample = exog._meta
    if isinstance(spec, RecipeSpec):
        sample = spec.recipe.witness.iloc[:1]
    elif spec is None:
        sample = pd.DataFrame(np.zeros((1, len(det.model.data.exog_names))))
    meta_kw = dict(kwargs, offset=np.zeros(len(sample))) if offset is not None else kwargs
    meta = _predict_partition(sample, None, det, meta_kw).iloc[:0]
    if offset is not None:
        return exog.map_partitions(_predict_partition, offset, det, kwargs, meta=meta,
                                   align_dataframes=False)
    return exog.map_partitions(_predict_partition, None, det, kwargs, meta=meta)


class DaskGLMRows(DaskRows):
    """GLM-like results (GLM, Logit, Probit, BayesLogit) on Dask data."""

    @cached_property
    def fittedvalues(self):
        """Fitted means mu (a lazy Dask Series)."""
        return self._rows("fittedvalues")

    @cached_property
    def linear_predictor(self):
        """Linear predictor eta (a lazy Dask Series)."""
        return self._rows("linear_predictor")

    @cached_property
    def resid_response(self):
        return self._rows("resid_response")

    @cached_property
    def resid_pearson(self):
        return self._rows("resid_pearson")

    @cached_property
    def resid_deviance(self):
        return self._rows("resid_deviance")

    @cached_property
    def resid_working(self):
        return self._rows("resid_working")

    @cached_property
    def pearson_chi2(self) -> float:
        """Pearson's chi-squared statistic (one pass over the partitions)."""
        return float(self._total("pearson_chi2"))

    def score_obs(self):
        self._unavailable("score_obs (per-row scores for sandwich covariances)")

    @cached_property
    def hat_matrix_diag(self):
        self._unavailable("hat_matrix_diag")


class DaskGenerativeRows(DaskRows):
    """LDA, QDA and naive Bayes results on Dask data."""

    @cached_property
    def llf(self) -> float:
        """Joint log-likelihood (one pass over the partitions)."""
        return float(self._total("llf"))

    @cached_property
    def llf_conditional(self) -> float:
        """Conditional log-likelihood sum_n ln p(class_n | x_n) (one pass)."""
        return float(self._total("llf_conditional"))

    @cached_property
    def error_rate(self) -> float:
        """Training misclassification rate (one pass)."""
        table = self.pred_table()
        return float(1.0 - np.trace(table.to_numpy()) / table.to_numpy().sum())

    def transform(self, exog=None, n_components: int | None = None):
        """Discriminant coordinates (LDA): lazy on Dask data."""
        kwargs = {"n_components": n_components}
        if exog is None:
            return self._rows("transform", kwargs)
        if is_dask(exog):
            det = self._detached
            return exog.map_partitions(lambda f: det.transform(f, n_components),
                                       meta=det.transform(_sample(det), n_components).iloc[:0])
        return super().transform(exog, n_components)

    @cached_property
    def cv_posterior(self):
        """Leave-one-out posteriors (a lazy Dask DataFrame: a closed form per row)."""
        return self._rows("cv_posterior")

    @cached_property
    def cv_class(self):
        """Leave-one-out labels (a lazy Dask Series)."""
        return self._rows("cv_class")

    def cv_pred_table(self) -> pd.DataFrame:
        """Leave-one-out confusion table (summed over partitions)."""
        return self._total("cv_pred_table", {})

    @cached_property
    def cv_error(self) -> float:
        """Leave-one-out misclassification rate (one pass)."""
        table = self.cv_pred_table().to_numpy()
        return float((table.sum() - np.trace(table)) / table.sum())


def _sample(det) -> pd.DataFrame:
    spec = det.model.data.spec
    if isinstance(spec, RecipeSpec):
        return spec.recipe.witness.iloc[:1]
    return pd.DataFrame(np.zeros((1, len(det.model.data.exog_names))))


class DaskMNLogitRows(DaskRows):
    """MNLogit results on Dask data."""

    @cached_property
    def fittedvalues(self):
        """In-sample probabilities, one column per level (a lazy Dask DataFrame)."""
        return self.predict()


_CACHE: dict = {}


def on_dask(cls: type) -> type:
    """The results class ``cls`` for a fit on Dask data (same name, a subclass)."""
    if cls not in _CACHE:
        from .discriminant import GenerativeResults
        from .glm_base import GLMBaseResults
        from .mnlogit import MNLogitResults

        mixin = DaskRows
        for base, m in ((GLMBaseResults, DaskGLMRows), (GenerativeResults, DaskGenerativeRows),
                        (MNLogitResults, DaskMNLogitRows)):
            if issubclass(cls, base):
                mixin = m
        _CACHE[cls] = type(cls.__name__, (mixin, cls),
                           {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                            "__doc__": cls.__doc__, "_in_memory": cls})
    return _CACHE[cls]

