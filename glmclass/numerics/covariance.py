"""Covariance of M-estimates: model-based, heteroskedasticity-robust (HC0-HC3) and clustered.

One function, :func:`covariance`, turns the pieces every GLM-like model already has into any
covariance type:

- the *bread* ``B`` (k, k): the inverse information, unscaled for a GLM (``(X'WX)^-1``
  with the IRLS working weights W); given already inverted, nothing here inverts a matrix;
- the per-row *scores* ``s_i`` (n, k): each row's contribution to the estimating equations,
  including its prior weight and *without* the dispersion; for a GLM
  ``s_i = w_i (y_i - mu_i) mu'(eta_i) / V(mu_i) x_i`` (form it as ``X * u[:, None]``);
- the *hat values* ``h_i`` (n,) of the weighted design, R's ``hatvalues(glm)``
  (:func:`hat_values`), for HC2 and HC3;
- cluster labels (n,) or (n, 2) for one- and two-way clustering.

With bread and scores both free of the dispersion phi, the robust types need no ``scale``:
phi would enter the bread squared and the scores' outer products divided by phi squared, and
cancel (R's ``sandwich`` scales ``bread.glm`` by phi and ``estfun.glm`` by 1/phi).

Everything takes and returns ndarrays. The scores are read in row blocks: the meat
``sum_i c_i s_i s_i'`` goes through :func:`glmclass.rows.gram.weighted_gram` (one block
copy, BLAS ``syrk``), and cluster sums are segment sums over blocks of the rows sorted by
cluster, so nothing of shape (n, k) is allocated beyond the caller's scores, however many
clusters there are.

References
----------
Zeileis, A. (2004). Econometric computing with HC and HAC covariance matrix estimators.
*J. Stat. Softw.* 11(10) (R's ``vcovHC``).
Zeileis, A., Koell, S. and Graham, N. (2020). Various versatile variances: an object-oriented
implementation of clustered covariances in R. *J. Stat. Softw.* 95(1) (R's ``vcovCL``).
MacKinnon, J. G. and White, H. (1985). Some heteroskedasticity-consistent covariance matrix
estimators with improved finite sample properties. *J. Econometrics* 29, 305-325.
Cameron, A. C., Gelbach, J. B. and Miller, D. L. (2011). Robust inference with multiway
clustering. *J. Bus. Econ. Stat.* 29(2), 238-249.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..rows.blocks import ArrayBlocks, Block, RowBlocks, block_rows
from ..rows.gram import weighted_gram

#: A per-block piece of the sandwich: ``fn(block) -> ndarray`` with one entry (or row) per row.
PerBlock = Callable[[Block], np.ndarray]

#: The covariance types :func:`covariance` computes.
COV_TYPES = ("nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster")

#: Hat values above this count as 1, as in R's ``lm.influence``: the row is fitted exactly and
#: HC2/HC3, which divide by ``1 - h``, are undefined.
HAT_ONE = 1.0 - 10.0 * np.finfo(float).eps


def covariance(
    bread: np.ndarray,
    scores: np.ndarray | None = None,
    cov_type: str = "nonrobust",
    *,
    hat: np.ndarray | None = None,
    groups: np.ndarray | None = None,
    freq_weights: np.ndarray | None = None,
    nobs: float | None = None,
    use_correction: bool = True,
    fix: bool = False,
    scale: float = 1.0,
    rows: int | None = None,
) -> np.ndarray:
    """Covariance matrix of the estimates, of any type in :data:`COV_TYPES`.

    Parameters
    ----------
    bread : ndarray of shape (k, k)
        Unscaled inverse information (``(X'WX)^-1`` for a GLM) of the k estimable parameters:
        aliased columns left out of it and of ``scores``.
    scores : ndarray of shape (n_rows, k), optional
        Per-row score contributions, each including the row's whole prior weight (frequency
        times variance weight) and no dispersion. Required by every type but "nonrobust".
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}
        See Notes.
    hat : ndarray of shape (n_rows,), optional
        Hat values of the weighted design, ``w_i x_i' B x_i`` (:func:`hat_values`; R's
        ``hatvalues(glm)``); with frequency weights, those of the weighted fit, not per
        replicate. Required by HC2 and HC3, ignored by the others.
    groups : array-like of shape (n_rows,) or (n_rows, 2), optional
        Cluster labels for "cluster" (any sortable labels: ints, strings, ...); two columns
        for two-way clustering. Must not contain NaN or None.
    freq_weights : ndarray of shape (n_rows,), optional
        Frequency weights (finite, >= 0): row i stands for ``freq_weights[i]`` identical
        observations. The result is then that of the data with each row repeated (see Notes).
    nobs : float, optional
        Number of observations n in the HC1 and cluster corrections. Default: the number of
        rows, or ``freq_weights.sum()``.
    use_correction : bool
        "cluster" only: multiply each clustered term by ``G/(G-1)`` and the sum by
        ``(n-1)/(n-k)``; False drops both.
    fix : bool
        "cluster" only: set negative eigenvalues of the result to 0 (two-way clustering can
        give an indefinite matrix), as ``fix = TRUE`` of R's ``vcovCL``.
    scale : float
        Dispersion; "nonrobust" returns ``scale * bread``. The robust types ignore it.
    rows : int, optional
        Rows per block when reading ``scores`` (default from
        :func:`glmclass.rows.blocks.block_rows`); changes no result beyond rounding.

    Returns
    -------
    ndarray of shape (k, k)
        Symmetric covariance matrix.

    Raises
    ------
    ValueError
        For an unknown ``cov_type``; a missing, misshapen or invalid argument the type needs
        (``scores``, ``hat``, ``groups``); ``groups``, ``use_correction=False`` or ``fix``
        with a type other than "cluster"; a hat value of 1 under HC2/HC3; fewer than two
        clusters; ``nobs <= k`` where a correction divides by ``n - k``; non-finite scores.

    Notes
    -----
    With ``M = sum_i c_i s_i s_i'``, every robust type is ``B M B``:

    - HC0: ``c_i = 1``; HC1: HC0 times ``n / (n - k)``;
    - HC2: ``c_i = 1 / (1 - h_i)``; HC3: ``c_i = 1 / (1 - h_i)^2``;
    - cluster: ``G/(G-1) (n-1)/(n-k) B (sum_g S_g S_g') B`` with ``S_g`` the sum of the
      scores of cluster g, as R's ``vcovCL(type = "HC1")`` and statsmodels'
      ``cov_type="cluster"``. Two-way: ``V_1 + V_2 - V_12``, ``V_12`` clustered on the pairs
      of labels, each term with its own ``G/(G-1)`` (``vcovCL(multi0 = FALSE)``).

    The score of a row with frequency weight f stands for f replicates with score ``s_i/f``
    and hat value ``h_i/f`` each. Hence ``c_i`` above is taken per replicate:
    ``c_i = 1/f`` (HC0, HC1), ``1/(f - h_i)`` (HC2), ``f/(f - h_i)^2`` (HC3), while the
    cluster sums ``S_g`` (replicates share their row's cluster) are plain sums of the scores.
    Rows with ``f = 0`` contribute nothing (their scores, which include f, are zero), and a
    cluster with no other rows is not counted in G. statsmodels agrees for HC0 and cluster except
    that its n is the row count; pass ``nobs=len(rows)`` to reproduce it.
    """
    if cov_type not in COV_TYPES:
        raise ValueError(f"covariance: unknown cov_type {cov_type!r}; use one of {COV_TYPES}")
    bread = np.asarray(bread, dtype=float)
    if bread.ndim != 2 or bread.shape[0] != bread.shape[1]:
        raise ValueError(f"covariance: bread must be a square (k, k) matrix, got shape "
                         f"{bread.shape}")
    if cov_type != "cluster":
        _reject_cluster_options(cov_type, groups, use_correction, fix)
    if cov_type == "nonrobust":
        return scale * bread
    k = bread.shape[0]
    scores = _check_scores(scores, k, cov_type)
    n_rows = scores.shape[0]
    f = _check_freq_weights(freq_weights, n_rows)
    n = _check_nobs(nobs, n_rows if f is None else float(f.sum()))
    rows = max(1, min(rows or block_rows(k), max(n_rows, 1)))
    if cov_type == "cluster":
        labels = _check_groups(groups, n_rows)
        present = None if f is None else f > 0
        meat = _clustered_meat(scores, labels, use_correction, rows, present)
        if use_correction:
            meat *= (n - 1.0) / _residual_df(n, k, cov_type)
    else:
        meat = weighted_gram(ArrayBlocks(scores, weights=_hc_weights(cov_type, hat, f, n_rows),
                                          rows=rows))
        if cov_type == "HC1":
            meat *= n / _residual_df(n, k, cov_type)
    if not np.all(np.isfinite(meat)):
        _raise_non_finite(scores, rows)
    cov = bread @ meat @ bread
    cov = cov / 2.0 + cov.T / 2.0
    return _clip_negative_eigenvalues(cov) if fix else cov


def covariance_from_rows(
    bread: np.ndarray,
    rows: RowBlocks,
    scores: PerBlock,
    cov_type: str,
    *,
    nobs: float,
    hat: PerBlock | None = None,
    freq_weights: PerBlock | None = None,
    groups=None,
    ways: int | None = None,
    use_correction: bool = True,
    fix: bool = False,
) -> np.ndarray:
    """:func:`covariance` with the per-row pieces computed block by block over a row source.

    The meat of HC0-HC3 is one reduce over ``rows``: each block contributes
    ``sum_i c_i s_i s_i'`` (k x k), with its scores, hat values and frequency weights computed
    from the block itself, so nothing of length N is formed and an out-of-core source (Dask
    partitions) is summed where its rows live. The clustered meat is a reduce too
    (:meth:`~glmclass.rows.blocks.RowBlocks.reduce_by_label`): the blocks carry their rows'
    cluster labels, each block (each partition) sums its scores by cluster, and the partial
    sums are merged by label, so only the G x k cluster sums reach the caller (G clusters;
    memory O(G k + k^2), which is O(N k) only when the clusters are about as many as the
    rows).

    Parameters
    ----------
    bread : ndarray of shape (k, k)
        As :func:`covariance`.
    rows : RowBlocks
        The rows of the fit (every row, zero-weight rows included: their scores are 0).
    scores : callable
        ``scores(block) -> (r, k)``: the block's per-row score contributions (prior weights
        included, no dispersion).
    cov_type : {"HC0", "HC1", "HC2", "HC3", "cluster"}
    nobs : float
        Number of observations n of the HC1 and cluster corrections.
    hat : callable, optional
        ``hat(block) -> (r,)``: hat values; required by HC2 and HC3.
    freq_weights : callable, optional
        ``freq_weights(block) -> (r,)``; None when every row stands for one observation.
    groups : ndarray of shape (n_rows,) or (n_rows, 2), optional
        Cluster labels of the rows, in row order ("cluster" only); or whatever ``rows``'
        :meth:`~glmclass.rows.blocks.RowBlocks.with_groups` takes (a source over partitions:
        one piece of labels per partition), with ``ways``.
    ways : {1, 2}, optional
        One- or two-way clustering; default: the columns of an ndarray ``groups``.
    use_correction, fix : bool
        As :func:`covariance`.

    Returns
    -------
    ndarray of shape (k, k)

    Raises
    ------
    ValueError
        As :func:`covariance`; a hat value of 1 names the row by its position in ``rows``.
    """
    if cov_type not in COV_TYPES or cov_type == "nonrobust":
        raise ValueError(f"covariance_from_rows: cov_type must be one of {COV_TYPES[1:]}, got "
                         f"{cov_type!r}; 'nonrobust' is scale * bread")
    bread = np.asarray(bread, dtype=float)
    k = bread.shape[0]
    if cov_type != "cluster":
        _reject_cluster_options(cov_type, groups, use_correction, fix)
    if cov_type in ("HC2", "HC3") and hat is None:
        raise ValueError(f"covariance_from_rows: cov_type={cov_type!r} needs the hat values; "
                         "pass hat=, a function of a block")
    n = _check_nobs(nobs, float("nan"))
    if cov_type == "cluster":
        meat = _clustered_meat_of_rows(rows, scores, freq_weights, groups, ways, k,
                                       use_correction)
        if use_correction:
            meat *= (n - 1.0) / _residual_df(n, k, cov_type)
        cov = bread @ meat @ bread
        cov = cov / 2.0 + cov.T / 2.0
        return _clip_negative_eigenvalues(cov) if fix else cov

    def part(b: Block) -> np.ndarray:
        sb = scores(b)
        r = sb.shape[0]
        f = None if freq_weights is None else np.asarray(freq_weights(b), dtype=float)
        try:
            c = _hc_weights(cov_type, None if hat is None else hat(b), f, r)
        except ValueError as exc:  # name the rows by their position in the source
            raise ValueError(str(exc).replace("(rows ", f"(rows of the block at {b.start}: ")
                             ) from None
        with np.errstate(over="ignore", invalid="ignore"):  # reported below
            return sb.T @ (sb * c[:, None])

    meat = rows.reduce(part, np.zeros((k, k)))
    if not np.all(np.isfinite(meat)):
        raise ValueError("covariance: the meat sum_i c_i s_i s_i' is not finite: the scores "
                         "overflowed on some row, or are too large to square in double "
                         "precision")
    if cov_type == "HC1":
        meat = meat * (n / _residual_df(n, k, cov_type))
    cov = bread @ meat @ bread
    return cov / 2.0 + cov.T / 2.0


def _clustered_meat_of_rows(rows: RowBlocks, scores: PerBlock, freq_weights: PerBlock | None,
                            groups, ways: int | None, k: int, cadjust: bool) -> np.ndarray:
    """The clustered meat (as :func:`_clustered_meat`) from one reduce by label over ``rows``
    carrying ``groups``: per cluster the sum of its scores and of its rows of positive
    frequency weight (which G counts)."""
    if groups is None:
        raise ValueError("covariance: cov_type='cluster' needs groups=, the cluster label of "
                         "each row (n_rows,), or (n_rows, 2) for two-way clustering")
    if isinstance(groups, np.ndarray):
        groups = _check_groups(groups, rows.n_rows)
        ways = 1 if groups.ndim == 1 else 2
    if ways not in (1, 2):
        raise ValueError(f"covariance: ways must be 1 or 2 (one- or two-way clustering), got "
                         f"{ways!r}")

    def values(b: Block) -> np.ndarray:
        sb = np.asarray(scores(b), dtype=float)
        if sb.ndim != 2 or sb.shape[1] != k:
            raise ValueError(f"covariance: scores must have shape (n_rows, {k}) to match "
                             f"bread {(k, k)}, got {sb.shape[1:]} per row")
        present = (np.ones(sb.shape[0]) if freq_weights is None
                   else (np.asarray(freq_weights(b)) > 0).astype(float))
        return np.column_stack([sb, present])

    groupings = ((0,),) if ways == 1 else ((0,), (1,), (0, 1))
    sums = rows.with_groups(groups).reduce_by_label(values, groupings)
    meat = np.zeros((k, k))
    for sign, part in zip((1.0, 1.0, -1.0), sums, strict=False):
        n_groups = int(np.count_nonzero(part.sums[:, k] > 0)) if part.n_labels else 0
        if n_groups < 2:
            raise ValueError(f"covariance: cov_type='cluster' needs at least 2 clusters"
                             f"{' in each column of groups' if ways == 2 else ''}, "
                             f"got {n_groups}; use HC0/HC1 for a single cluster")
        adj = n_groups / (n_groups - 1.0) if cadjust else 1.0
        s = part.sums[:, :k]
        with np.errstate(over="ignore", invalid="ignore"):  # reported below
            meat += (sign * adj) * (s.T @ s)
    if not np.all(np.isfinite(meat)):
        raise ValueError("covariance: the clustered meat is not finite: the scores overflowed "
                         "on some row, or their cluster sums are too large to square in "
                         "double precision")
    return meat


def hat_values_of(X: np.ndarray, weights: np.ndarray, bread: np.ndarray) -> np.ndarray:
    """Hat values ``w_i x_i' B x_i`` of one block's rows (see :func:`hat_values`).

    Parameters
    ----------
    X : ndarray of shape (r, k)
    weights : ndarray of shape (r,)
    bread : ndarray of shape (k, k)

    Returns
    -------
    ndarray of shape (r,)
    """
    return np.einsum("ij,ij->i", X @ bread, X) * weights


def hat_values(X: np.ndarray, weights: np.ndarray, bread: np.ndarray,
               rows: int | None = None, shift: np.ndarray | None = None) -> np.ndarray:
    """Hat values of a weighted design, ``h_i = w_i x_i' B x_i``, over row blocks.

    The diagonal of ``W^1/2 X B X' W^1/2``: with ``B = (X'WX)^-1`` and W the IRLS working
    weights at convergence (prior weight times ``mu'^2 / V``), these are R's
    ``hatvalues(glm)``; with W = prior weights and an identity link, those of (weighted)
    least squares.

    Parameters
    ----------
    X : ndarray of shape (n_obs, k)
        Design of the estimable columns (aliased columns left out).
    weights : ndarray of shape (n_obs,)
        Working weights, including any prior (frequency and variance) weights.
    bread : ndarray of shape (k, k)
        ``(X'WX)^-1``.
    rows : int, optional
        Rows per block.
    shift : ndarray of shape (k,), optional
        Hat values of ``X - 1 shift'`` (one block at a time), with ``bread`` that design's:
        the same hat values when X has a column of ones, with the digits that large column
        means would take from the raw ``(X'WX)^-1``.

    Returns
    -------
    ndarray of shape (n_obs,)
    """
    X = np.asarray(X, dtype=float)
    weights = np.asarray(weights, dtype=float)
    bread = np.asarray(bread, dtype=float)
    n, k = X.shape
    if weights.shape != (n,) or bread.shape != (k, k):
        raise ValueError(f"hat_values: X has shape {X.shape}, weights {weights.shape} and "
                         f"bread {bread.shape}; need (n, k), (n,) and (k, k)")
    rows = max(1, min(rows or block_rows(k), max(n, 1)))
    out = np.empty(n)
    for s in range(0, n, rows):
        xb = X[s : s + rows] if shift is None else X[s : s + rows] - shift
        out[s : s + rows] = np.einsum("ij,ij->i", xb @ bread, xb)
    out *= weights
    return out


# --- validation ------------------------------------------------------------------------------


def _reject_cluster_options(cov_type: str, groups: object, use_correction: bool,
                            fix: bool) -> None:
    """Options of "cluster" given with another type: refuse rather than ignore them."""
    if groups is not None:
        raise ValueError(f"covariance: groups is only used by cov_type='cluster', not "
                         f"{cov_type!r}; pass cov_type='cluster' for clustered errors")
    if not use_correction:
        raise ValueError(f"covariance: use_correction only applies to cov_type='cluster', not "
                         f"{cov_type!r}; for HC errors without n/(n-k) use 'HC0'")
    if fix:
        raise ValueError(f"covariance: fix only applies to cov_type='cluster' (whose two-way "
                         f"form can be indefinite); {cov_type!r} is positive semi-definite")


def _check_scores(scores: np.ndarray | None, k: int, cov_type: str) -> np.ndarray:
    if scores is None:
        raise ValueError(f"covariance: cov_type={cov_type!r} needs the per-row scores "
                         f"(n_rows, k); pass scores=, or use cov_type='nonrobust'")
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[1] != k:
        raise ValueError(f"covariance: scores must have shape (n_rows, {k}) to match bread "
                         f"{(k, k)}, got {scores.shape}")
    return scores


def _check_freq_weights(freq_weights: np.ndarray | None, n_rows: int) -> np.ndarray | None:
    if freq_weights is None:
        return None
    f = np.asarray(freq_weights, dtype=float)
    if f.shape != (n_rows,):
        raise ValueError(f"covariance: freq_weights must have shape ({n_rows},), one per row "
                         f"of scores, got {f.shape}")
    if not np.all(np.isfinite(f)) or np.any(f < 0):
        raise ValueError("covariance: freq_weights must be finite and non-negative")
    return f


def _check_nobs(nobs: float | None, default: float) -> float:
    n = default if nobs is None else float(nobs)
    if not (np.isfinite(n) and n > 0):
        raise ValueError(f"covariance: nobs must be a positive number, got {n:g}"
                         + (" (no rows of scores)" if nobs is None else ""))
    return n


def _residual_df(n: float, k: int, cov_type: str) -> float:
    if n <= k:
        raise ValueError(f"covariance: cov_type={cov_type!r} divides by nobs - k, but nobs = "
                         f"{n:g} <= k = {k}; use HC0"
                         + (" or use_correction=False" if cov_type == "cluster" else ""))
    return n - k


def _check_hat(hat: np.ndarray | None, n_rows: int, cov_type: str) -> np.ndarray:
    if hat is None:
        raise ValueError(f"covariance: cov_type={cov_type!r} needs the hat values (n_rows,) "
                         f"of the weighted design; pass hat= (see hat_values)")
    h = np.asarray(hat, dtype=float)
    if h.shape != (n_rows,):
        raise ValueError(f"covariance: hat must have shape ({n_rows},), one per row of "
                         f"scores, got {h.shape}")
    if not np.all((h >= 0) & (h <= 1 + 1e-8)):  # also catches NaN
        raise ValueError("covariance: hat values must lie in [0, 1] (the diagonal of the "
                         "weighted hat matrix); check that hat matches the fit")
    return h


def _hc_weights(cov_type: str, hat: np.ndarray | None, f: np.ndarray | None,
                n_rows: int) -> np.ndarray:
    """Per-row factors c_i of the meat sum_i c_i s_i s_i' (per replicate, see Notes)."""
    if cov_type in ("HC0", "HC1"):
        if f is None:
            return np.ones(n_rows)
        return np.divide(1.0, f, out=np.zeros(n_rows), where=f > 0)
    h = _check_hat(hat, n_rows, cov_type)
    f = np.ones(n_rows) if f is None else f
    # per replicate the hat value is h/f, and 1 - h/f = (f - h)/f
    one = (h > HAT_ONE * f) & (f > 0)
    if np.any(one):
        bad = np.flatnonzero(one)
        raise ValueError(
            f"covariance: {cov_type} divides by 1 - h, but {bad.size} row(s) have hat value 1 "
            f"(h/f >= 1 with frequency weights f) "
            f"(rows {bad[:10].tolist()}{' ...' if bad.size > 10 else ''}): the fit passes "
            f"through them exactly, typically a column that only they use; use HC0 or HC1, "
            f"or drop those rows and columns")
    d = np.where(f > 0, f - h, 1.0)
    c = 1.0 / d if cov_type == "HC2" else f / d**2
    return np.where(f > 0, c, 0.0)


def _check_groups(groups: object, n_rows: int) -> np.ndarray:
    if groups is None:
        raise ValueError("covariance: cov_type='cluster' needs groups=, the cluster label of "
                         "each row (n_rows,), or (n_rows, 2) for two-way clustering")
    g = np.asarray(groups)
    if g.ndim == 2 and g.shape[1] == 1:
        g = g[:, 0]
    if g.shape not in ((n_rows,), (n_rows, 2)):
        raise ValueError(f"covariance: groups must have shape ({n_rows},) or ({n_rows}, 2), "
                         f"one label (or two) per row of scores, got {g.shape}")
    return g


def _factorize(labels: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 of the labels, and G; refuses missing labels."""
    msg = ("covariance: groups contains missing labels (NaN/None/NaT); drop those rows "
           "before fitting, or give them a label")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError(msg)
    if labels.dtype.kind in "mM" and np.isnat(labels).any():
        raise ValueError(msg)
    try:
        uniques, codes = np.unique(labels, return_inverse=True)
    except TypeError:
        raise ValueError("covariance: groups mixes labels that cannot be compared (e.g. "
                         "strings and None or numbers); use one type of label") from None
    if labels.dtype.kind == "O" and any(u is None or u != u for u in uniques):
        raise ValueError(msg)
    return codes.reshape(-1).astype(np.int64, copy=False), len(uniques)


# --- computation ----------------------------------------------------------------------------


def _clustered_meat(scores: np.ndarray, labels: np.ndarray, cadjust: bool, rows: int,
                    present: np.ndarray | None) -> np.ndarray:
    """sum over clusterings of sign * G/(G-1) * sum_g S_g S_g' (one- or two-way).

    ``present`` marks the rows with a positive frequency weight: G counts the clusters that
    have one (a row with weight 0 has zero scores and stands for no observation).
    """
    if labels.ndim == 1:
        codes, n_groups = _factorize(labels)
        terms = [(1.0, codes, n_groups)]
    else:
        (c1, g1), (c2, g2) = _factorize(labels[:, 0]), _factorize(labels[:, 1])
        c12, g12 = _factorize(c1 * g2 + c2)
        terms = [(1.0, c1, g1), (1.0, c2, g2), (-1.0, c12, g12)]
    meat = np.zeros((scores.shape[1], scores.shape[1]))
    for sign, codes, n_groups in terms:
        if present is not None:
            n_groups = int(np.count_nonzero(np.bincount(codes[present], minlength=n_groups)))
        if n_groups < 2:
            raise ValueError(f"covariance: cov_type='cluster' needs at least 2 clusters"
                             f"{' in each column of groups' if labels.ndim == 2 else ''}, "
                             f"got {n_groups}; use HC0/HC1 for a single cluster")
        adj = n_groups / (n_groups - 1.0) if cadjust else 1.0
        meat += (sign * adj) * _cluster_outer(scores, codes, rows)
    return meat


def _cluster_outer(scores: np.ndarray, codes: np.ndarray, rows: int) -> np.ndarray:
    """sum_g S_g S_g' with S_g the column sums of the scores of cluster g.

    Rows are visited in cluster order, a block at a time; ``np.add.reduceat`` sums each
    cluster's run within the block, and the sum of a cluster that runs on into the next block
    is carried over. Memory: the sort order and one gathered block.
    """
    n, k = scores.shape
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    out = np.zeros((k, k))
    carry = np.zeros(k)  # partial sum of the cluster straddling the block boundary
    for a in range(0, n, rows):
        b = min(a + rows, n)
        sc = sorted_codes[a:b]
        starts = np.flatnonzero(np.concatenate(([True], sc[1:] != sc[:-1])))
        sums = np.add.reduceat(scores[order[a:b]], starts, axis=0)
        sums[0] += carry  # carry is zero unless it belongs to this block's first cluster
        if b < n and sorted_codes[b] == sc[-1]:
            carry = sums[-1].copy()
            sums = sums[:-1]
        else:
            carry[:] = 0.0
        out += sums.T @ sums
    return out


def _raise_non_finite(scores: np.ndarray, rows: int) -> None:
    bad = [s + int(i) for s in range(0, scores.shape[0], rows)
           for i in np.flatnonzero(~np.isfinite(scores[s : s + rows]).all(axis=1))]
    if bad:
        raise ValueError(f"covariance: scores are not finite in {len(bad)} row(s) (rows "
                         f"{bad[:10]}{' ...' if len(bad) > 10 else ''}); the fit or its "
                         f"scores overflowed there")
    raise ValueError("covariance: the meat sum_i s_i s_i' overflows; the scores are too large "
                     "to square in double precision")


def _clip_negative_eigenvalues(cov: np.ndarray) -> np.ndarray:
    """Nearest positive semi-definite matrix in the spectral sense: negative eigenvalues -> 0."""
    values, vectors = np.linalg.eigh(cov)
    if np.all(values >= 0):
        return cov
    root = vectors * np.sqrt(np.maximum(values, 0.0))
    return root @ root.T
