"""Which covariance a fit reports: the validated ``fit(cov_type=..., cov_kwds=...)`` and the
sandwich built from the pieces a results object has.

:func:`cov_spec` checks the arguments once, before any fitting, and resolves cluster groups
(an array, or column names of the DataFrame a formula was evaluated on) to one integer label
per row the model uses: rows dropped for missing values are dropped from the groups too. For
rows not in memory the data adapter keeps the labels in the partitions
(``data.cluster_labels``) and the clustered meat is a reduce by label over them.
:func:`sandwich_over_rows` hands a likelihood's per-block scores (and hat values) to
:func:`glmclass.numerics.covariance.covariance_from_rows`, next to the one
home of every covariance formula.

The bread is the inverse of the information matrix the fit was asked for
(``information="observed"`` or ``"expected"``). R's ``sandwich`` package uses the expected
(Fisher) information of a ``glm``; the two coincide for canonical links (logit, Poisson log,
Gaussian identity), and ``information="expected"`` reproduces R for the others.

References
----------
Zeileis, A. (2004). Econometric computing with HC and HAC covariance matrix estimators.
*J. Stat. Softw.* 11(10).
Zeileis, A., Koell, S. and Graham, N. (2020). Various versatile variances. *J. Stat. Softw.*
95(1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.labelled import check_row_labels
from ..data.pieces import column_values
from ..errors import one_of
from ..likelihoods import Likelihood
from ..numerics.covariance import COV_TYPES, covariance_from_rows, hat_values_of
from ..rows.blocks import Block, RowBlocks
from ..rows.constant import is_constant

#: Keys of ``cov_kwds`` each covariance type accepts.
COV_KWDS = {"cluster": ("groups", "use_correction", "fix")}

_TEXT = {
    "HC0": "HC0 (White)", "HC1": "HC1 (HC0 times n/(n-k))", "HC2": "HC2 (leverage-adjusted)",
    "HC3": "HC3 (jackknife-like, 1/(1-h)^2)",
}


@dataclass(frozen=True)
class CovSpec:
    """A validated covariance request.

    Attributes
    ----------
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}
    groups : ndarray of int of shape (n_obs,) or (n_obs, 2), tuple, or None
        Cluster codes of the rows the model uses (two columns: two-way clustering); for
        rows not in memory, one lazy piece of labels per partition, which the row source's
        blocks carry (the labels never reach the client).
    group_names : tuple of str
        Where the groups came from (column names, or ``"groups"`` for an array).
    n_groups : tuple of int
        Number of clusters in each grouping.
    use_correction : bool
        Cluster only: the ``G/(G-1)`` and ``(n-1)/(n-k)`` corrections (R's ``vcovCL(type=
        "HC1")``, statsmodels' default).
    fix : bool
        Cluster only: clip negative eigenvalues (two-way clustering can be indefinite).
    """

    cov_type: str = "nonrobust"
    groups: np.ndarray | None = field(default=None, repr=False)
    group_names: tuple[str, ...] = ()
    n_groups: tuple[int, ...] = ()
    use_correction: bool = True
    fix: bool = False

    def __reduce__(self) -> tuple:
        """Pickled without the lazy label pieces of rows not in memory (they reference the
        data's partitions, which a saved or shipped copy must not hold); the covariance
        computed from them travels with the results."""
        groups = self.groups if self.groups is None or isinstance(self.groups, np.ndarray) \
            else None
        return (CovSpec, (self.cov_type, groups, self.group_names, self.n_groups,
                          self.use_correction, self.fix))

    @property
    def robust(self) -> bool:
        """Whether the covariance is a sandwich (anything but "nonrobust")."""
        return self.cov_type != "nonrobust"

    def describe(self, information: str) -> str:
        """One sentence for a summary: what the standard errors are."""
        if not self.robust:
            return f"Standard errors from the {information} information matrix."
        bread = f"bread = inverse {information} information"
        if self.cov_type != "cluster":
            return (f"Standard errors: {_TEXT[self.cov_type]} sandwich, {bread} "
                    f"(R sandwich::vcovHC(type = \"{self.cov_type}\")).")
        by = " and ".join(f"{n} ({g} clusters)"
                          for n, g in zip(self.group_names, self.n_groups, strict=True))
        corr = ("with the G/(G-1) and (n-1)/(n-k) corrections (R sandwich::vcovCL(type = "
                "\"HC1\"))" if self.use_correction else "without small-sample corrections")
        two = "two-way " if len(self.group_names) == 2 else ""
        return f"Standard errors: {two}cluster-robust by {by}, {corr}; {bread}."


NONROBUST = CovSpec()


def cov_spec(data, cov_type: str = "nonrobust", cov_kwds: Mapping | None = None, *,
             leverage: bool = True) -> CovSpec:
    """Validate ``cov_type`` and ``cov_kwds`` and resolve cluster groups to the rows used.

    Parameters
    ----------
    data : ModelData
        The model's data (for the rows used and the formula's DataFrame).
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}
    cov_kwds : mapping, optional
        For "cluster": ``groups`` (required; an array with one label per row given or per row
        used, a DataFrame/array with two columns for two-way clustering, or one or two column
        names of the formula's DataFrame), ``use_correction`` (bool, default True) and ``fix``
        (bool, default False). Other types take none.
    leverage : bool
        Whether the model has scalar leverages (hat values), needed by HC2 and HC3.

    Raises
    ------
    ValueError
        An unknown type or key, a misshapen or incomplete ``groups`` (the message names the
        column), a column that does not exist, HC2/HC3 without leverages.
    """
    if not isinstance(cov_type, str) or cov_type not in COV_TYPES:
        raise ValueError(f"cov_type must be {one_of(COV_TYPES)}, got {cov_type!r}")
    if cov_kwds is None:
        cov_kwds = {}
    if not isinstance(cov_kwds, Mapping):
        raise TypeError(f"cov_kwds must be a dict, e.g. {{'groups': 'school'}}, got "
                        f"{type(cov_kwds).__name__}")
    allowed = COV_KWDS.get(cov_type, ())
    unknown = [k for k in cov_kwds if k not in allowed]
    if unknown:
        what = f"accepts {one_of(allowed)}" if allowed else "takes no cov_kwds"
        raise ValueError(f"cov_type={cov_type!r} {what}; got {', '.join(map(repr, unknown))}")
    if cov_type in ("HC2", "HC3") and not leverage:
        raise ValueError(f"cov_type={cov_type!r} divides by 1 - h_i with a scalar leverage "
                         "per row, which a multi-equation model does not have (its leverage "
                         "is a block per row; R's sandwich has no HC2/HC3 for multinomial "
                         "models); use 'HC0', 'HC1' or 'cluster'")
    if cov_type != "cluster":
        return CovSpec(cov_type)
    if "groups" not in cov_kwds or cov_kwds["groups"] is None:
        raise ValueError("cov_type='cluster' needs cov_kwds={'groups': ...}: the cluster label "
                         "of each row (an array), or the name of a column of the formula's "
                         "DataFrame; two for two-way clustering")
    flags = {}
    for key, default in (("use_correction", True), ("fix", False)):
        value = cov_kwds.get(key, default)
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"cov_kwds[{key!r}] must be True or False, got {value!r}")
        flags[key] = bool(value)
    codes, names, counts = _resolve_groups(data, cov_kwds["groups"])
    return CovSpec("cluster", codes, names, counts, **flags)


def _resolve_groups(data, groups) -> tuple[np.ndarray | tuple, tuple[str, ...],
                                           tuple[int, ...]]:
    """Integer cluster codes of the rows used (or, for rows not in memory, one lazy piece of
    labels per part: ``data.cluster_labels``), where they came from, and the cluster
    counts."""
    columns = _column_names(data, groups)
    if columns is not None:
        frame = getattr(data, "frame", None)
        absent = [c for c in columns if c not in frame.columns]
        if absent:
            cols = ", ".join(map(repr, list(frame.columns)[:20]))
            raise ValueError(f"cov_kwds['groups']: {absent[0]!r} is not a column of the data "
                             f"(columns: {cols})")
    if not data.in_memory:  # the labels stay where the rows are
        if columns is None and isinstance(groups, (pd.Series, pd.DataFrame)):
            _positional_only(groups)
        return data.cluster_labels(groups, columns)
    if columns is not None:
        values = [column_values(data, c) for c in columns]
        names = tuple(columns)
    else:
        values, names = _arrays(data, groups)
    codes = []
    for v, name in zip(values, names, strict=True):
        c, uniques = pd.factorize(pd.Series(v, copy=False), use_na_sentinel=True)
        if np.any(c < 0):
            raise ValueError(
                f"cluster groups {name!r} have {int(np.sum(c < 0))} missing labels among the "
                f"{c.size} rows the model uses; drop those rows from the data (or give them a "
                "label)")
        codes.append(c.astype(np.int64))
    counts = tuple(int(c.max()) + 1 for c in codes)
    out = codes[0] if len(codes) == 1 else np.column_stack(codes)
    return out, names, counts


def _column_names(data, groups) -> list[str] | None:
    """The column names ``groups`` gives (a string, or a list of one or two), or None when
    ``groups`` holds labels."""
    frame = getattr(data, "frame", None)
    if isinstance(groups, str):
        cols = [groups]
    elif (isinstance(groups, (list, tuple)) and len(groups) > 2 and len(groups) != data.nrows
          and all(isinstance(g, str) for g in groups)):
        raise ValueError(f"cov_kwds['groups'] names {len(groups)} columns "
                         f"({', '.join(map(repr, groups))}); at most two-way clustering is "
                         "supported: name one column, or two for two-way clustering (to "
                         "cluster by a combination of columns, make it one column first, e.g. "
                         "df['a'].astype(str) + '/' + df['b'].astype(str))")
    elif (isinstance(groups, (list, tuple)) and 0 < len(groups) <= 2
          and all(isinstance(g, str) for g in groups)
          and (frame is None or all(g in frame.columns for g in groups))
          and len(groups) != data.nrows):
        cols = list(groups)
    else:
        return None
    if frame is None:
        raise ValueError(f"cov_kwds['groups']={groups!r} names columns, but the model was not "
                         "built from a formula on a DataFrame; pass the cluster labels as an "
                         "array with one label per row")
    return cols


def _arrays(data, groups) -> tuple[list[np.ndarray], tuple[str, ...]]:
    """Label arrays (one or two) of the rows used, from an array, Series or DataFrame."""
    if isinstance(groups, pd.DataFrame):
        check_row_labels(groups, data, "cov_kwds['groups']")
        values = [groups.iloc[:, j].to_numpy() for j in range(groups.shape[1])]
        names = tuple(str(c) for c in groups.columns)
    elif isinstance(groups, pd.Series):
        check_row_labels(groups, data, "cov_kwds['groups']")
        values, names = [groups.to_numpy()], (str(groups.name) if groups.name is not None
                                               else "groups",)
    else:
        arr = np.asarray(groups)
        if arr.ndim == 2 and arr.shape[1] in (1, 2):
            values = [arr[:, j] for j in range(arr.shape[1])]
        elif arr.ndim == 1:
            values = [arr]
        else:
            raise ValueError(f"cov_kwds['groups'] must have one label per row (shape (n,)) or "
                             f"two (shape (n, 2)), got shape {arr.shape}")
        names = ("groups",) if len(values) == 1 else ("groups[0]", "groups[1]")
    if not 1 <= len(values) <= 2:
        raise ValueError(f"cov_kwds['groups'] must have one or two columns (one- or two-way "
                         f"clustering), got {len(values)}")
    return [_rows_used(data, np.asarray(v), "cov_kwds['groups']") for v in values], names


def _default_index(index: pd.Index) -> bool:
    """Whether ``index`` is 0, 1, ..., n-1 (a Series built from values, or reset): such
    labels say nothing about the rows, and the values pair with the rows by position."""
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _positional_only(groups) -> None:
    """On rows not in memory, labels in a pandas object pair with the rows by position:
    refuse one whose index says otherwise."""
    if not _default_index(groups.index):
        raise ValueError(
            "cov_kwds['groups'] is a pandas object with its own row labels, which cannot be "
            "matched to the rows of Dask data; name the column of the data "
            "(cov_kwds={'groups': 'firm'}), pass a Dask Series of the data, or pass "
            "groups.to_numpy() to pair the labels with the rows by position")


def _rows_used(data, values: np.ndarray, name: str) -> np.ndarray:
    """Values given per row of the data passed (or per row used) as those of the rows used."""
    rows_given = getattr(data, "rows_given", None)
    if rows_given is not None:
        return rows_given(values, name)
    if values.shape[0] != data.nrows:  # a data source that drops no rows
        raise ValueError(f"{name} has {values.shape[0]} values, but the data have "
                         f"{data.nrows} rows")
    return values


def sandwich_over_rows(bread: np.ndarray, rows: RowBlocks, likelihood: Likelihood,
                       coef: np.ndarray, spec: CovSpec, *, nobs: float,
                       hat_bread: np.ndarray | None = None,
                       freq_weights: Callable[[Block], np.ndarray] | None = None) -> np.ndarray:
    """The robust covariance ``spec`` asks for, its meat a reduce over the rows of the fit.

    Each block's scores (and, for HC2/HC3, hat values ``w_i x_i' H x_i`` with the
    likelihood's Fisher weights) come from ``likelihood`` at ``coef``: the same code whether
    the rows are in memory or in Dask partitions.

    Parameters
    ----------
    bread : ndarray of shape (k, k)
        Inverse information of the estimable parameters (no dispersion).
    rows : RowBlocks
        Every row of the fit, the design restricted to the estimable columns.
    likelihood : Likelihood
    coef : ndarray
        Estimable coefficients, equation-major (as ``bread``).
    spec : CovSpec
        A robust type.
    nobs : float
        Number of observations in the n/(n-k) corrections.
    hat_bread : ndarray of shape (k, k), optional
        Inverse Fisher information of the design's columns, for the hat values of HC2/HC3
        (one-equation likelihoods only).
    freq_weights : callable, optional
        ``freq_weights(block) -> (r,)`` (:func:`freq_per_block`); None when all are 1. A
        :class:`FreqWeights` (frequency and variance weights both given) is attached to
        ``rows`` first, so that each block carries its rows' frequency weights.

    Returns
    -------
    ndarray of shape (k, k)
    """
    hat = None
    if spec.cov_type in ("HC2", "HC3"):
        if likelihood.n_equations != 1 or hat_bread is None:
            raise ValueError(f"cov_type={spec.cov_type!r} needs one hat value per row: a "
                             "one-equation likelihood and hat_bread")

        def hat(b: Block) -> np.ndarray:
            return hat_values_of(b.X, likelihood.weights(b, coef), hat_bread)

    def scores(b: Block) -> np.ndarray:
        return likelihood.score_obs(b, coef)

    if isinstance(freq_weights, FreqWeights):  # the blocks carry them apart from the prior
        rows = rows.with_freq_weights(freq_weights.values)
    return covariance_from_rows(bread, rows, scores, spec.cov_type, nobs=nobs, hat=hat,
                                freq_weights=freq_weights, groups=spec.groups,
                                ways=len(spec.group_names) or None,
                                use_correction=spec.use_correction, fix=spec.fix)


@dataclass(frozen=True)
class FreqWeights:
    """Frequency weights that differ from a block's prior weights (both frequency and
    variance weights were given): :func:`sandwich_over_rows` has the blocks carry them
    (:meth:`~glmclass.rows.blocks.RowBlocks.with_freq_weights`), and a block's are then
    ``self(block)``.

    Attributes
    ----------
    values : ndarray of shape (n_obs,), or a lazy array chunked like the row source's parts
    """

    values: object = field(repr=False)

    def __call__(self, b: Block) -> np.ndarray:
        if b.freq_weights is None:
            raise ValueError("the rows carry no frequency weights: attach them with "
                             "rows.with_freq_weights(values) first")
        return b.freq_weights


def freq_per_block(freq_weights, var_weights=None) -> Callable[[Block], np.ndarray] | None:
    """The frequency weights of a block, given the model's per-row weights, or None when
    every row stands for one observation.

    A block's weights are the prior weights ``freq * var``: they are the frequency weights when
    no variance weights were given. With both, a :class:`FreqWeights` of the frequency
    weights (an array, in memory or lazy), which the blocks then carry.

    Parameters
    ----------
    freq_weights, var_weights : ndarray of shape (n_obs,), lazy array, or None
    """
    if freq_weights is None:
        return None
    if isinstance(freq_weights, np.ndarray) and freq_or_none(freq_weights) is None:
        return None
    if var_weights is None or (isinstance(var_weights, np.ndarray)
                               and freq_or_none(var_weights) is None):
        return _block_weights
    if isinstance(freq_weights, np.ndarray):
        return FreqWeights(np.asarray(freq_weights, dtype=float))
    return FreqWeights(freq_weights)


def glm_freq_per_block(problem) -> Callable[[Block], np.ndarray] | None:
    """:func:`freq_per_block` of a GLM problem: its frequency weights, and its variance
    weights (binomial trials included) as given, in memory or not."""
    given = problem.data.arrays
    freq, var = problem.freq_weights, problem.var_weights
    return freq_per_block(freq if isinstance(freq, np.ndarray) else given.get("freq_weights"),
                          var if isinstance(var, np.ndarray) else given.get("var_weights"))


def _block_weights(b: Block) -> np.ndarray:
    return b.weights


def freq_or_none(f: np.ndarray) -> np.ndarray | None:
    """Frequency weights of in-memory rows: None when every weight is 1."""
    if is_constant(f) and f[0] == 1:
        return None
    return None if np.all(f == 1) else np.asarray(f, dtype=float)
