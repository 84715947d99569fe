"""What the solvers can represent: :func:`check_finite` refuses a design or per-row array
with infinite values, or a column whose squares overflow or underflow double precision (a Gram
matrix, a variance or a covariance could not be formed, or could not tell the column from 0),
naming the column and the rescaling that helps."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..rows.constant import is_constant

#: Largest magnitude whose squares, summed over a design, stay finite in float64 (about
#: sqrt(1.8e308)): beyond it no Gram matrix or covariance can be formed.
_SQUARE_LIMIT = 1.3e154
#: Smallest largest-magnitude of a column (not all 0) whose squares stay normal floats
#: (about sqrt(2.2e-308), with room for weights): below it a Gram, a variance or a QR's
#: norms lose the column to underflow (it looked aliased, or gave NaN standard errors).
_SQUARE_FLOOR = 1e-150


def check_finite(data: Any) -> None:
    """Raise on infinite values in the design or the per-row arrays, or on values so large that
    their squares overflow or so small that they underflow (a Gram matrix or a covariance could
    not be formed), naming the column.

    One pass (the column sums of squares of X) decides in the common case.

    Parameters
    ----------
    data : ModelData
        Its ``exog`` (n_obs, p), ``exog_names`` and per-row ``arrays`` (the type is not
        imported here: :mod:`~glmclass.data.model_data` imports this module).

    Raises
    ------
    ValueError
        Naming the column or array, and what to do.
    """
    X = data.exog
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        sq = np.einsum("ij,ij->j", X, X) if X.size else np.zeros(X.shape[1])
    total = float(np.add.reduce(sq))
    # a column whose squares sum to below 1e-250: all 0 (aliased, as R), or lost to underflow
    low = np.minimum.reduce(sq, initial=np.inf) < 1e-250  # (NaN: the check below raises)
    for j in (np.flatnonzero(sq < 1e-250) if low else ()):
        big = float(np.abs(X[:, j]).max(initial=0.0))
        if 0.0 < big < _SQUARE_FLOOR:
            raise ValueError(
                f"feature {data.exog_names[j]!r} is too small in scale (its values are at "
                f"most {big:.3g}): each square underflows double precision (below 2.2e-308), "
                "so a Gram matrix, a variance or a covariance cannot tell the column from 0 "
                "(it would look aliased or constant); rescale it (e.g. multiply it by "
                f"1e{-int(np.floor(np.log10(big)))})")
    if not math.isfinite(total):
        for j in range(X.shape[1]):
            col = X[:, j]
            if not np.all(np.isfinite(col)):
                raise ValueError(f"exog column {data.exog_names[j]!r} has infinite values; "
                                 "remove or cap them")
        big = np.abs(X).max(axis=0)
        j = int(np.argmax(big))
        raise ValueError(
            f"exog column {data.exog_names[j]!r} has values as large as {big[j]:.3g}: their "
            f"squares overflow double precision (beyond {_SQUARE_LIMIT ** 2:.2g} summed over "
            "the rows), so no Gram matrix or covariance can be formed; rescale the column "
            f"(e.g. divide it by {10.0 ** np.floor(np.log10(big[j])):.0e})")
    for key, a in data.arrays.items():
        # a broadcast view of one value (the default weights, no offset): that value decides
        if a is not None and not (math.isfinite(a[0]) if is_constant(a) else np.isfinite(a).all()):
            raise ValueError(f"{key} has infinite values")
