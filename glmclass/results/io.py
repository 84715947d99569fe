"""Saving and loading fitted results (``results.save(path)``, ``gc.load(path)``).

Two formats:

- ``format="safe"`` (the default): data only, JSON and NumPy arrays in one zip
  (:mod:`glmclass.results.safe_io`). :func:`glmclass.load` reads it without running anything
  from the file. Use it for files you share, receive or keep.
- ``format="pickle"``: a :mod:`pickle` in a small header that names the format and the glmclass
  version. It holds anything (your own link functions, Dask-backed results), but **loading a
  pickle runs code from the file**: ``gc.load(path, trusted=True)`` is required, for files
  you wrote yourself or would run as a script.

``remove_data=True`` writes a copy without the rows: the design matrix, the response, weights
and offsets, the DataFrame a formula was evaluated on and every per-row value already
computed (fitted values, residuals, ...). The summary numbers (estimates, covariance,
likelihoods, criteria) are computed first and kept, and predictions on new data still work:
the formula design is kept as its levels, contrasts and the memorised numbers of its
stateful transforms (a mean and an SD for ``standardize()``, the knots of ``bs()``), never the
training rows. In-sample values, robust covariances not yet computed, profile intervals and
marginal effects need the rows and raise a ``ValueError`` on a copy without them. The
results in memory are not changed.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import os
import pickle
import pickletools
import warnings
from collections.abc import Mapping
from typing import IO, Any

import numpy as np
import pandas as pd

from .. import version  # read at call time: the version a file is stamped with
from ..data.model_data import is_dask
from ..errors import GlmclassWarning
from ..families import Family
from ..rows.blocks import RowBlocks
from . import safe_io
from .dask import detach, shallow_copy

FORMAT = "glmclass-results"
#: Version of the file layout (the header around the pickled results).
LAYOUT = 1
FORMATS = ("safe", "pickle")
REMOVED = ("the data were removed when these results were saved (remove_data=True): {what} "
           "needs the rows of the fit; refit the model, or save without remove_data")
NOT_RESULTS = ("{path!r} is not a glmclass results file (written by results.save(path)){why}")
UNTRUSTED = ("{path!r} is a pickled glmclass results file: loading a pickle runs code from "
             "the file, so gc.load refuses it by default. If you wrote it yourself or trust "
             "its source as you would a script, call gc.load(path, trusted=True); to share "
             "results, save them with format='safe' (the default)")

#: Numbers computed before the rows are removed, when the results have them.
_SUMMARY = ("_cov", "_information", "_bread", "bse", "tvalues", "pvalues", "scale",
            "pearson_chi2", "llf", "llnull", "null_deviance", "llr", "llr_pvalue", "prsquared",
            "aic", "bic",
            "log_evidence", "log_prior", "log_posterior", "effective_params", "_cov_evidence",
            "_natural_order", "_multi_index", "rows_fingerprint", "llf_conditional", "error_rate",
            "training_error")


def require_data(res, what: str) -> None:
    """Raise when ``res`` was saved without its rows (see :func:`save`)."""
    if getattr(res, "data_removed", False):
        raise ValueError(REMOVED.format(what=what))


class SaveMixin:
    """``save(path, remove_data=False, format="safe")`` for results classes."""

    data_removed: bool = False

    def save(self, path, remove_data: bool = False, format: str = "safe") -> None:
        """Write these results to a file, to be read back with :func:`glmclass.load`.

        Parameters
        ----------
        path : str, os.PathLike or binary file object
        remove_data : bool
            Leave out the rows of the fit (design, response, weights, the formula's
            DataFrame, per-row values): a small file whose summary numbers and predictions
            on new data still work (see :mod:`glmclass.results.io`).
        format : {"safe", "pickle"}
            ``"safe"``: data only (JSON and arrays in a zip), read by ``gc.load(path)``
            without running code from the file. ``"pickle"``: anything (your own links, Dask
            results), read only by ``gc.load(path, trusted=True)``.

        Raises
        ------
        ValueError
            With ``format="safe"``, for something the data-only format cannot hold (a
            user-defined link or family, Dask partitions, a formula evaluated with your own
            names); the message names it and says to use ``format="pickle"``.
        """
        save(self, path, remove_data, format)


def save(res, path, remove_data: bool = False, format: str = "safe") -> None:
    """Write ``res`` (optionally without its rows) as a data-only zip or a pickle."""
    if not isinstance(remove_data, (bool, np.bool_)):
        raise ValueError(f"remove_data must be True or False, got {remove_data!r}")
    if format not in FORMATS:
        raise ValueError(f"format must be 'safe' (data only) or 'pickle', got {format!r}")
    if format == "safe" and not remove_data and not res.model.data.in_memory:
        raise ValueError("the rows of this fit live in Dask partitions, which a data-only file "
                         "cannot hold: save(path, remove_data=True) keeps the estimates, the "
                         "summary and predictions on new data; format='pickle' keeps the Dask "
                         "collections (and needs gc.load(path, trusted=True))")
    obj = without_data(res) if remove_data else res
    if format == "safe":
        buf = io.BytesIO()
        safe_io.write(obj, buf, _meta(obj, bool(remove_data)))  # nothing written if refused
        data = buf.getvalue()
    else:
        payload = {"format": FORMAT, "layout": LAYOUT, "glmclass": version.__version__,
                   "results": obj}
        data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    if hasattr(path, "write"):
        path.write(data)
        return
    with open(os.fspath(path), "wb") as fh:
        fh.write(data)


def _meta(res, removed: bool) -> dict:
    """What a data-only file says about itself (read without building the results)."""
    model = res.model
    family = getattr(model, "family", None)
    spec = model.data.spec
    return {"model": type(model).__name__, "results": type(res).__name__,
            "formula": None if spec is None else spec.formula,
            "family": type(family).__name__ if isinstance(family, Family) else None,
            "link": type(family.link).__name__ if isinstance(family, Family) else None,
            "remove_data": removed}


def load(path: str | os.PathLike | IO[bytes], trusted: bool = False,
         classes: Mapping[str, type] | None = None,
         models: Mapping[str, type] | None = None) -> Any:
    """Read results written by ``results.save(path)`` (see :func:`glmclass.load`).

    Parameters
    ----------
    path : str, os.PathLike or binary file object
    trusted : bool
        Allow a pickle (which runs code from the file).
    classes : mapping of name -> class
        The glmclass classes a data-only file may name.
    models : mapping of name -> class
        The model classes (by class name) a data-only file may hold at its root.

    Returns
    -------
    results

    Raises
    ------
    ValueError
        "not a glmclass results file" for anything else (empty, truncated, CSV, random
        bytes); a pickle without ``trusted=True``.
    """
    if not isinstance(trusted, (bool, np.bool_)):
        raise ValueError(f"trusted must be True or False, got {trusted!r}")
    data = _read_bytes(path)
    if safe_io.is_safe_file(data):
        meta, res = safe_io.read(io.BytesIO(data), classes or {})
        model = getattr(res, "model", None)
        if models is None or type(model) is not models.get(meta.get("model")) or \
                type(res).__name__ != meta.get("results"):
            raise ValueError(NOT_RESULTS.format(path=_name(path), why=": its model is not one "
                                                "of glmclass's models"))
    else:
        if not _glmclass_pickle(data):
            raise ValueError(NOT_RESULTS.format(path=_name(path), why=""))
        if not trusted:
            raise ValueError(UNTRUSTED.format(path=_name(path)))
        try:
            meta = pickle.loads(data)  # noqa: S301 - the caller said trusted=True
        except Exception as exc:  # noqa: BLE001 - a damaged pickle
            raise ValueError(NOT_RESULTS.format(path=_name(path), why=f" ({exc})")) from None
        if not (isinstance(meta, dict) and meta.get("format") == FORMAT):
            raise ValueError(NOT_RESULTS.format(path=_name(path), why=""))
        res = meta["results"]
    if meta.get("glmclass") != version.__version__:
        warnings.warn(f"these results were saved by glmclass {meta.get('glmclass')} and are "
                      f"loaded by {version.__version__}; check them", GlmclassWarning,
                      stacklevel=3)
    return res


def _name(path) -> str:
    return getattr(path, "name", None) or (str(os.fspath(path)) if not hasattr(path, "read")
                                           else "the file object")


def _read_bytes(path) -> bytes:
    if hasattr(path, "read"):
        return path.read()
    with open(os.fspath(path), "rb") as fh:
        return fh.read()


def _glmclass_pickle(data: bytes) -> bool:
    """Whether ``data`` is a complete pickle holding glmclass's header, read with
    :mod:`pickletools` (which parses the opcodes and runs nothing)."""
    try:
        for _op, arg, _pos in pickletools.genops(data):
            if isinstance(arg, str) and arg == FORMAT:
                return True
    except Exception:  # noqa: BLE001 - not a (complete) pickle
        return False
    return False


# --- a copy without the rows ------------------------------------------------------------------


def without_data(res):
    """A shallow copy of ``res`` with its model's rows removed (``res`` is not changed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fit already warned about anything found here
        for name in _SUMMARY:
            try:
                getattr(res, name)
            except (AttributeError, ValueError, TypeError):
                pass
    n = res.model.data.nrows
    out = copy.copy(res)
    index = res.model.data.index
    lazy = not res.model.data.in_memory
    for name, value in list(out.__dict__.items()):
        if is_dask(value) or (not lazy and _per_row(value, n, index)):
            del out.__dict__[name]
        elif _has_rows(value):  # a record of the fit holding per-row values of its own
            out.__dict__[name] = value.without_rows()
    # Dask data: the model as shipped to the partitions (names, design, no rows)
    out.__dict__["model"] = _detached_model(res) if lazy else _model_without_data(res.model, n)
    out.__dict__["data_removed"] = True
    return out


def _per_row(value, n: int, index: pd.Index) -> bool:
    """Whether a cached value has one entry per row of the fit."""
    if isinstance(value, (pd.Series, pd.DataFrame)):
        return len(value.index) == n and value.index.equals(index)
    return isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n and n > 0


def _model_without_data(model, n: int):
    out = copy.copy(model)  # shallow: shares nothing it will change
    attrs = out.__dict__
    data = model.data
    attrs["data"] = dataclasses.replace(
        data, exog=np.empty((0, data.exog.shape[1])), endog=np.empty(0, dtype=object),
        index=data.index[:0], arrays={k: None for k in data.arrays}, frame=None,
        source_rows=None, n_source=None,
        spec=data.spec.without_rows() if data.spec is not None else None)
    problem = attrs.get("problem")
    if problem is not None and dataclasses.is_dataclass(problem):
        empty = np.empty(0)
        attrs["problem"] = dataclasses.replace(problem, data=attrs["data"], endog=empty,
                                               offset=empty, freq_weights=empty,
                                               var_weights=empty)
    for name, value in list(attrs.items()):
        if name not in ("data", "problem") and isinstance(value, np.ndarray) and \
                value.ndim >= 1 and value.shape[0] == n:
            attrs[name] = value[:0]
        elif isinstance(value, RowBlocks):  # a model's own row source holds its rows
            attrs[name] = None
        elif isinstance(value, tuple) and value and all(_has_rows(v) for v in value):
            attrs[name] = tuple(v.without_rows() for v in value)  # e.g. random-effect blocks
    return out


def _has_rows(value: Any) -> bool:
    """Whether ``value`` is a glmclass record that knows how to drop the rows it holds
    (``without_rows()``: random-effect blocks, a mixed fit's record); formula designs are
    handled with the model's data."""
    return type(value).__module__.startswith("glmclass.") and \
        callable(getattr(value, "without_rows", None)) and not isinstance(value, type)


def _detached_model(res: Any) -> Any:
    """The model of a Dask fit as shipped to the partitions, without its row source (the Dask
    partitions: a pickled Dask collection holds the data it was made from) and its design
    without the few example rows the partitions' recipe keeps (levels and transform numbers
    only)."""
    model = detach(res).model
    data = model.data
    changes: dict = {k: None for k, v in vars(model).items() if isinstance(v, RowBlocks)}
    if data.spec is None:
        return shallow_copy(model, **changes) if changes else model
    light = dataclasses.replace(data, spec=data.spec.without_rows())
    changes["data"] = light
    problem = vars(model).get("problem")
    if problem is not None and dataclasses.is_dataclass(problem) and \
            any(f.name == "data" for f in dataclasses.fields(problem)):
        changes["problem"] = dataclasses.replace(problem, data=light)
    return shallow_copy(model, **changes)
