"""Saving and loading fitted results (``results.save(path)``, ``gc.load(path)``).

Results are written with :mod:`pickle`, wrapped in a small header that names the format and
the glmclass version. **Loading a pickle runs code from the file: only load files you
trust** (your own, or from a source you would run a script from).

``remove_data=True`` writes a copy without the rows: the design matrix, the response, weights
and offsets, the DataFrame a formula was evaluated on and every per-row value already
computed (fitted values, residuals, ...). The summary numbers (estimates, covariance,
likelihoods, criteria) are computed first and kept, and predictions on new data still work:
the formula design is kept (when it has no stateful transform such as ``center()``, it is
rebuilt on load from one row per level instead of from the training rows). In-sample values,
robust covariances not yet computed, profile intervals and marginal effects need the rows and
raise a ``ValueError`` on a copy without them. The results in memory are not changed.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import pickle
import warnings
from typing import IO

import numpy as np
import pandas as pd

from .. import version  # read at call time: the version a file is stamped with
from ..data.model_data import is_dask
from ..errors import GlmclassWarning
from ..formula.design import referenced_columns
from .dask import detach

FORMAT = "glmclass-results"
#: Version of the file layout (the header around the pickled results).
LAYOUT = 1
REMOVED = ("the data were removed when these results were saved (remove_data=True): {what} "
           "needs the rows of the fit; refit the model, or save without remove_data")

#: Numbers computed before the rows are removed, when the results have them.
_SUMMARY = ("_cov", "_information", "_bread", "bse", "tvalues", "pvalues", "scale",
            "pearson_chi2", "llf", "llnull", "null_deviance", "llr", "llr_pvalue", "prsquared",
            "aic", "bic",
            "log_evidence", "log_prior", "log_posterior", "effective_params", "_cov_evidence",
            "_natural_order", "_multi_index", "rows_fingerprint")


def require_data(res, what: str) -> None:
    """Raise when ``res`` was saved without its rows (see :func:`save`)."""
    if getattr(res, "data_removed", False):
        raise ValueError(REMOVED.format(what=what))


class SaveMixin:
    """``save(path, remove_data=False)`` for results classes."""

    data_removed: bool = False

    def save(self, path, remove_data: bool = False) -> None:
        """Write these results to a file, to be read back with :func:`glmclass.load`.

        Parameters
        ----------
        path : str, os.PathLike or binary file object
        remove_data : bool
            Leave out the rows of the fit (design, response, weights, the formula's
            DataFrame, per-row values): a small file whose summary numbers and predictions
            on new data still work (see :mod:`glmclass.results.io`).

        Notes
        -----
        The file is a pickle: :func:`glmclass.load` runs code from it, so only load files you
        trust.
        """
        save(self, path, remove_data)


def save(res, path, remove_data: bool = False) -> None:
    """Pickle ``res`` (optionally without its rows) with a format header."""
    if not isinstance(remove_data, (bool, np.bool_)):
        raise ValueError(f"remove_data must be True or False, got {remove_data!r}")
    obj = without_data(res) if remove_data else res
    payload = {"format": FORMAT, "layout": LAYOUT, "glmclass": version.__version__,
               "results": obj}
    if hasattr(path, "write"):
        pickle.dump(payload, path, protocol=pickle.HIGHEST_PROTOCOL)
        return
    with open(os.fspath(path), "wb") as fh:
        pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)


def load(path: str | os.PathLike | IO[bytes]):
    """Read results written by ``results.save(path)``.

    Parameters
    ----------
    path : str, os.PathLike or binary file object

    Returns
    -------
    results
        The saved results object (with its model).

    Raises
    ------
    ValueError
        When the file was not written by ``save``.

    Warnings
    --------
    The file is a pickle, and unpickling runs code from it: **only load files you trust**.
    """
    if hasattr(path, "read"):
        payload = pickle.load(path)  # noqa: S301 - documented: trusted files only
    else:
        with open(os.fspath(path), "rb") as fh:
            payload = pickle.load(fh)  # noqa: S301 - documented: trusted files only
    if not (isinstance(payload, dict) and payload.get("format") == FORMAT):
        raise ValueError(f"{path!r} is not a glmclass results file (written by "
                         "results.save(path))")
    if payload.get("glmclass") != version.__version__:
        warnings.warn(f"these results were saved by glmclass {payload.get('glmclass')} and are "
                      f"loaded by {version.__version__}; check them", GlmclassWarning,
                      stacklevel=2)
    return payload["results"]


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
    # Dask data: the model as shipped to the partitions (names, design recipe, no rows)
    out.__dict__["model"] = detach(res).model if lazy else _model_without_data(res.model, n)
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
        spec=_small_spec(data.spec) if data.spec is not None else None)
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
    return out


def _small_spec(spec):
    """The formula design with its rebuild frame cut to one row per level, when the design
    has no stateful transform and the cut frame rebuilds the same design; else as it is."""
    frame = spec._rebuild
    info = spec.design_info
    stateful = any(isinstance(fi.state, dict) and fi.state.get("transforms")
                   for fi in info.factor_infos.values())
    if stateful or frame is None or len(frame) <= 1:
        return spec
    categorical = {c for f, fi in info.factor_infos.items() if fi.type == "categorical"
                   for c in referenced_columns(f.code, frame)}
    rows = {0}
    for col in frame.columns:
        if col in categorical or frame[col].dtype.kind not in "iuf":
            codes = pd.factorize(frame[col])[0]  # the first row of every value
            rows.update(int(i) for i in np.unique(codes, return_index=True)[1])
    small = dataclasses.replace(spec, _rebuild=frame.iloc[sorted(rows)])
    try:
        again = pickle.loads(pickle.dumps(small))
    except Exception:  # noqa: BLE001 - anything that does not round-trip keeps the full frame
        return spec
    same = again.design_info.column_names == info.column_names and all(
        getattr(again.design_info.factor_infos.get(f), "categories", None)
        == getattr(fi, "categories", None) for f, fi in info.factor_infos.items())
    return small if same else spec
