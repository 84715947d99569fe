"""The encoded data of a GLM whose rows live in Dask partitions (:class:`DaskGLMProblem`).

The same :class:`~glmclass.models.glm_base.GLMProblem`, with every full-length operation routed
through the partitions: the response is encoded against levels found from the merged
per-partition facts (the in-memory encoders read a small surrogate of the column, so the levels
and the error messages are the same), the weight and single-class checks, ``nobs`` and the null
model's mean come from one pass of per-partition sums, and IRLS, the null deviance, the
information and the log-likelihood are reductions over :class:`~glmclass.rows.dask.DaskBlocks`.
The per-row arrays (response, weights, offset) are lazy Dask arrays chunked like the partitions.
"""

from __future__ import annotations

from dataclasses import dataclass

import dask
import dask.array as da
import numpy as np
from dask import delayed

from .. import families as F
from ..data.dask import DaskModelData, lazy_column
from ..data.response import binary_response, encode
from ..rows.blocks import Block
from ..rows.dask import DaskBlocks
from ..rows.gram import weighted_gram
from ..solvers.irls import Control, IRLSFit, Penalty, irls
from .glm_problem import GLMProblem, NullFit, gram_applies


def _encode_y(y, levels) -> np.ndarray:
    """A partition's response on the family's scale: codes of the labels, or the numbers
    (0/1, proportions, counts), as :func:`~glmclass.data.response.binary_response`."""
    if levels is not None and getattr(y.dtype, "kind", "O") not in "iuf":
        return encode(y, levels).astype(float)
    return np.asarray(y, dtype=float)


def _glm_part(part: tuple, levels) -> tuple:
    """``(X, y, prior weights, offset)`` of one partition for DaskBlocks."""
    X, y, arrays, _ = part
    f, v = arrays.get("freq_weights"), arrays.get("var_weights")
    pw = f * v if f is not None and v is not None else (f if f is not None else v)
    return (X, _encode_y(y, levels), pw, arrays.get("offset"))


def _glm_stats(part: tuple) -> np.ndarray:
    """Per-partition sums: nobs, sum pw, sum pw y, rows with pw = 0, positive-weight rows with
    y = 0 and with y = 1, positive-weight rows with 0 < y < 1."""
    X, y, pw, _ = part
    n = X.shape[0]
    w = np.ones(n) if pw is None else pw
    pos = w > 0
    yp = y[pos]
    return np.array([0.0, float(w.sum()), float(w @ y), float((~pos).sum()),
                     float((yp == 0).sum()), float((yp == 1).sum()),
                     float(((yp > 0) & (yp < 1)).sum())])


def _nobs(part: tuple) -> float:
    _, _, arrays, index = part
    f, v = arrays.get("freq_weights"), arrays.get("var_weights")
    n = len(index)
    f = np.ones(n) if f is None else f
    return float(f.sum() if v is None else f[v > 0].sum())


def _loglik_part(part: tuple, eta: np.ndarray, family: F.Family, scale: float | None):
    """A partition's share of the log-likelihood, or (scale is None) of sum pw * deviance."""
    _, y, pw, _ = part[0]
    arrays = part[1]
    n = y.shape[0]
    w = np.ones(n) if pw is None else pw
    if scale is None:
        return float(np.sum(w * family.unit_deviance(y, eta)))
    v = arrays.get("var_weights")
    f = arrays.get("freq_weights")
    ll = family.loglik_obs(y, eta, np.ones(n) if v is None else v, scale)
    f = np.ones(n) if f is None else f
    with np.errstate(invalid="ignore"):
        return float(np.sum(np.where(f > 0, f * ll, 0.0)))


def _both(encoded: tuple, raw: tuple) -> tuple:
    return encoded, raw[2]


@dataclass(frozen=True)
class DaskGLMProblem(GLMProblem):
    """A :class:`GLMProblem` over Dask partitions (see the module docstring).

    Attributes
    ----------
    parts : tuple of dask.delayed.Delayed
        Per partition ``(X, y, prior weights, offset)`` on the family's scale.
    stats : ndarray of shape (7,)
        Per-partition sums, merged: nobs, sum pw, sum pw y, zero-weight rows, positive-weight
        rows with y = 0, y = 1, 0 < y < 1.
    """

    parts: tuple = ()
    stats: np.ndarray | None = None

    @classmethod
    def build(cls, data: DaskModelData, family: F.Family) -> DaskGLMProblem:
        if not isinstance(family, F.Family):
            raise TypeError(f"family must be a glmclass family, e.g. gc.families.Binomial(); "
                            f"got {family!r}")
        facts, name = data.facts, data.endog_name
        check_weight_facts(facts.arrays)
        surrogate = facts.response.surrogate()
        if facts.response.counts:  # proportions of (successes, failures): binomial_response
            if not isinstance(family, F.Binomial):
                raise ValueError(f"response {name!r} has two columns (successes, failures): "
                                 "that is a binomial response; use the Binomial family")
            y, levels = np.asarray(surrogate, dtype=float), None
        elif isinstance(family, F.Binomial):
            y, levels = binary_response(surrogate, name)
        else:
            levels = None
            if facts.response.kind not in "iuf":
                raise ValueError(f"response {name!r} must be numeric for the {family.name} "
                                 "family")
            y = np.asarray(surrogate, dtype=float)
            if not np.all(np.isfinite(y)):
                raise ValueError(f"response {name!r} has infinite values")
        try:
            family.check_endog(y)
        except ValueError as exc:
            raise ValueError(f"response {name!r}: {exc}") from None
        parts = data.encoded(_glm_part, levels)
        if data.persisted:
            parts = tuple(dask.persist(*parts))
        sums = dask.compute(*[delayed(_glm_stats)(p) for p in parts],
                            *[delayed(_nobs)(p) for p in data.parts])
        k = len(parts)
        stats = np.sum(sums[:k], axis=0) if k else np.zeros(7)
        stats[0] = float(sum(sums[k:]))
        lengths = data.lengths
        n = sum(lengths)

        def lazy(key, default):
            if key in facts.arrays:
                return lazy_column(data.parts, lengths, key, (), np.float64)
            return da.full(n, default, chunks=(lengths,))

        self = cls(data, family, lazy_column(parts, lengths, 1, (), np.float64), levels,
                   lazy("offset", 0.0), lazy("freq_weights", 1.0), lazy("var_weights", 1.0),
                   parts, stats)
        if isinstance(family, F.Binomial):
            total = stats[4] + stats[5] + stats[6]  # rows with positive weight
            for count, outcome in ((stats[4], "failures"), (stats[5], "successes")):
                if count == total:
                    raise ValueError(
                        f"response {name!r} has only {outcome} among the rows with positive "
                        "weight (a single class): there is nothing to classify")
        return self

    # --- what GLMProblem computes from full-length arrays ---------------------------------------
    @property
    def prior_weights(self):
        """``freq_weights * var_weights``, lazily (a Dask array)."""
        return self.freq_weights * self.var_weights

    @property
    def nobs(self) -> float:
        return float(self.stats[0])

    @property
    def _positive_only(self) -> bool:
        return self.stats[3] == 0

    def blocks(self, X=None) -> DaskBlocks:
        if X is not None:
            raise TypeError("a DaskGLMProblem reads its own design: use blocks().take_columns")
        return DaskBlocks(self.parts, self.data.lengths, len(self.data.exog_names),
                          y_dtype=np.float64)

    def _fit_rows(self, blocks: DaskBlocks) -> DaskBlocks:
        """Rows with positive prior weight (as R's ``glm.fit``)."""
        return blocks if self._positive_only else blocks.positive_weights()

    def fit_rows(self) -> DaskBlocks:
        return self._fit_rows(self.blocks())

    def irls(self, control: Control, start: np.ndarray | None = None,
             penalty: Penalty | None = None, X=None) -> IRLSFit:
        blocks = self.blocks().intercept_only() if isinstance(X, str) else self.blocks(X)
        return irls(self._fit_rows(blocks), self.family, start, control, penalty)

    def null_fit(self, control: Control, lazy: bool = False) -> NullFit:
        # always with the deviance: on Dask it is one pass, made while the fit has the
        # partitions at hand (``lazy`` is for in-memory rows)
        if self.data.intercept_index is None:
            return NullFit(0.0, self.deviance_at(0.0))
        off = self.data.facts.arrays.get("offset")
        if off is None or not off.nonzero:
            c = float(self.family.link.link(np.array([self.stats[2] / self.stats[1]]))[0])
            if np.isfinite(c):
                return NullFit(c, self.deviance_at(c))
        fit = self.irls(control, X="intercept")
        return NullFit(float(fit.coef[0]), float(fit.deviance))

    def deviance_at(self, intercept: float) -> float:
        fam = self.family

        def dev(b: Block) -> float:
            return float(np.sum(b.weights * fam.unit_deviance(b.y, b.offset + intercept)))

        return self.blocks().intercept_only().reduce(dev, 0.0)

    def loglik(self, eta, nobs: float) -> float:
        """Log-likelihood at ``eta``, a Dask array chunked like the partitions (the results'
        linear predictor); one pass (two for an estimated dispersion)."""
        lengths = self.data.lengths
        filled = tuple(n for n in lengths if n)  # Dask drops empty chunks when concatenating
        if not isinstance(eta, da.Array):
            eta = da.from_array(np.asarray(eta), chunks=(filled,))
        if eta.chunks[0] != filled:
            eta = eta.rechunk({0: filled})
        chunks = eta.to_delayed().ravel()
        pairs = [delayed(_both)(p, r)
                 for p, r, n in zip(self.parts, self.data.parts, lengths, strict=True) if n]
        fam = self.family
        scale = 1.0
        if not fam.fixed_scale:
            devs = dask.compute(*[delayed(_loglik_part)(pr, e, fam, None)
                                  for pr, e in zip(pairs, chunks, strict=True)])
            scale = float(sum(devs)) / nobs
        parts = dask.compute(*[delayed(_loglik_part)(pr, e, fam, scale)
                               for pr, e in zip(pairs, chunks, strict=True)])
        return float(sum(parts))

    def information(self, coef: np.ndarray, keep: np.ndarray, observed: bool,
                    gram: np.ndarray | None = None, gram_information: str = "expected",
                    shift: np.ndarray | None = None) -> np.ndarray:
        fam = self.family
        if shift is None and gram_applies(fam, observed, gram, gram_information):
            return gram[np.ix_(keep, keep)]
        b = coef[keep]

        def w(blk: Block) -> np.ndarray:
            eta = blk.X @ b + blk.offset
            if observed:
                return blk.weights * fam.observed_weights(blk.y, eta)
            return blk.weights * fam.working_weights(eta)

        return weighted_gram(self.blocks().take_columns(keep), w,
                             None if shift is None else shift[keep])



def check_weight_facts(arrays: dict) -> None:
    """:func:`~glmclass.models.base.check_weights` from the merged facts."""
    for key in ("freq_weights", "var_weights"):
        a = arrays.get(key)
        if a is None:
            continue
        if a.lo < 0 or a.nonfinite:
            raise ValueError(f"{key} must be finite and non-negative; a row has "
                             f"{a.lo if a.lo < 0 else 'a non-finite value'}")
        if not a.positive:
            raise ValueError(f"{key} are all zero: no row would take part in the fit")

