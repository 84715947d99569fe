"""Per-row offsets of the linear predictor: ``offset=``, ``exposure=`` (its log) and the
formula's ``offset()`` terms, folded into the one ``offset`` a model reads.

Shared by the in-memory path (:mod:`glmclass.data.model_data`) and the partitions of Dask data
(:mod:`glmclass.data.parts`), so that both give the same offset from the same arguments.
"""

from __future__ import annotations

import numpy as np

from ..formula.namespace import exposure as log_exposure
from ..formula.parse import quote

#: Per-row arguments that name a column of ``data`` on the formula path and are evaluated on new
#: data at prediction time (as R does with ``offset=``); weights are taken from ``data`` once.
PREDICTED_BY_NAME = ("offset", "exposure")


def check_exposure(e: np.ndarray | None, labels=None) -> None:
    """Raise unless every exposure is positive (NaN passes: a missing value), naming the
    first bad row by position, or by ``labels[position]`` when given."""
    if e is not None:
        bad = e <= 0
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"exposure must be positive (its log is added to the linear "
                             f"predictor); row {row if labels is None else labels[row]} has "
                             f"{e[row]:g}")


def fold_exposure(arrs: dict, formula_offset: np.ndarray | None) -> tuple[dict, bool]:
    """``offset`` = given offset + the formula's offset + log(exposure); exposure recorded."""
    arrs = dict(arrs)
    e = arrs.pop("exposure", None)
    off = arrs.get("offset")
    for extra in (formula_offset, None if e is None else log_exposure(e)):
        if extra is not None:
            off = extra if off is None else off + extra
    if "offset" in arrs or off is not None:
        arrs["offset"] = off
    return arrs, e is not None


def named_columns(arrays: dict, columns) -> tuple[tuple, tuple, bool]:
    """Per-row arguments given as column names: the ``offset()`` terms an offset or exposure
    column adds to the formula, the columns ``.`` leaves out, and whether exposure is named."""
    extra, exclude = [], []
    for key, a in arrays.items():
        if isinstance(a, str):
            if a not in columns:
                raise ValueError(f"{key}={a!r} is not a column of data; pass a column name or "
                                 "an array aligned with the rows")
            exclude.append(a)
            if key in PREDICTED_BY_NAME:
                extra.append(f"offset(exposure({quote(a)}))" if key == "exposure"
                             else f"offset({quote(a)})")
    return tuple(extra), tuple(exclude), isinstance(arrays.get("exposure"), str)
