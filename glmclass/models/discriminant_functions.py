"""Discriminant functions fit without a probability model: least squares on 1-of-K targets
(indicator-matrix regression) and Fisher's linear discriminant.

Both assign a class from a linear function of x, as the probabilistic models do, but neither
estimates class probabilities: their results predict scores and labels only, in the same results
vocabulary as the probabilistic models so that they can be compared side by side.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.1.3-4.1.5.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*, §4.2.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..data.model_data import ModelData, check_finite
from ..data.response import multiclass_response
from ..numerics import discriminant as nd
from ..results.discriminant_functions import (
    FisherMultiResults,
    FisherResults,
    LeastSquaresResults,
)
from ..rows.blocks import Block
from ..solvers.least_squares import indicator_lstsq
from .base import Model, check_option
from .class_setup import CodedRows


class LeastSquaresClassifier(CodedRows, Model):
    """Classification by least-squares regression on 1-of-K indicator targets.

    Each class k gets a linear score $y_k(x) = x^\\top w_k$ fit by least squares to the
    indicator $t_{nk} = [\\text{class}_n = k]$ (``W = X^+ T``); a point goes to the class with
    the largest score.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Class labels (two or more levels; strings, integers, bool or a Categorical).
    exog : array-like of shape (n_obs, p)
        Design matrix (include a constant column for intercepts; a formula adds one).
    targets : None, "fisher", dict or array-like, optional
        The target coding. None: 1-of-K indicators (a point goes to the largest score).
        ``"fisher"`` (two classes): one output with targets N/N_1 for the first class and
        -N/N_2 for the second (PRML §4.1.5), whose weights are Fisher's direction
        $\\propto S_W^{-1}(m_2 - m_1)$ and whose bias is $-w^\\top m$; a point goes to the
        first class when $y(x) > 0$. A dict ``{level: target}`` or an array of one row per
        level (a number or a vector each): any coding, a point going to the class whose
        target is nearest to its scores.
    missing : {"drop", "raise"}

    Notes
    -----
    The scores of a point sum to one when the design has an intercept, but they are no
    probabilities: they leave [0, 1] freely (the results count how often), and least squares
    is pulled by points far on the correct side of the boundary (PRML Fig. 4.4). With three or
    more classes a class whose mean lies between the others' can be *masked*: its score is
    never the largest, so it is never predicted (ESL Fig. 4.2); basis functions such as
    ``I(x**2)`` in the formula can undo the masking.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.1.3.
    Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical
    Learning*, §4.2.
    """

    def __init__(self, endog, exog, targets=None, missing: str = "drop") -> None:
        super().__init__(endog, exog, missing, targets=targets)

    def _setup(self, data: ModelData, targets=None) -> None:
        if data.exog.shape[1] == 0:
            raise ValueError("the design has no columns: add an intercept or predictors")
        if not data.in_memory:  # rows not in memory (e.g. Dask partitions)
            from .class_parts import class_counts, multiclass_rows

            rows = multiclass_rows(data)
            self.endog, self.levels, self._rows_source = rows.codes, rows.levels, rows.source
            counts = lambda: class_counts(rows.source, len(rows.levels))  # noqa: E731
        else:
            check_finite(data)
            codes, levels = multiclass_response(data.endog, data.endog_name)
            self.endog = codes
            self.levels = list(levels)
            counts = lambda: np.bincount(codes, minlength=len(self.levels))  # noqa: E731
        self.coding, self.target_rule = target_coding(targets, self.levels, counts)

    @property
    def K(self) -> int:
        """Number of classes."""
        return len(self.levels)

    def targets(self) -> np.ndarray:
        """The target matrix T, shape (n_obs, M): 1-of-K rows (M = K) unless ``targets``
        gave another coding."""
        coding = self.coding

        def targets(b: Block) -> np.ndarray:
            return coding[b.y]

        return self.row_source().map(targets)

    def fit(self) -> LeastSquaresResults:
        """Least-squares fit of the indicator targets (QR of the design; aliased columns get
        NaN coefficients, as R's ``lm``).

        Returns
        -------
        LeastSquaresResults
        """
        fit = indicator_lstsq(self.row_source(), self.K, self.coding)
        return LeastSquaresResults(self, fit)

    def __repr__(self) -> str:
        return f"<LeastSquaresClassifier: {self.K} classes, nobs={self.exog.shape[0]}>"


class FisherDiscriminant(CodedRows, Model):
    """Fisher's linear discriminant for two or more classes.

    Two classes: the projection $y = w^\\top x$ that maximises the ratio of the between-class
    to the within-class variance of the projected data is $w \\propto S_W^{-1}(m_2 - m_1)$,
    with $m_k$ the class means and $S_W$ the pooled within-class scatter matrix (PRML eq.
    4.30); a threshold on $y$ turns it into a classifier.

    K > 2 classes (PRML §4.1.6): the $D' = \\min(K - 1, D)$ projections $y = W^\\top x$ that
    maximise $J(W) = \\mathrm{Tr}[(W^\\top S_W W)^{-1} W^\\top S_B W]$, $S_B = \\sum_k N_k
    (m_k - m)(m_k - m)^\\top$ (eq. 4.43, 4.50): the leading eigenvectors of $S_W^{-1} S_B$,
    found as the generalized symmetric eigenproblem $S_B w = \\lambda S_W w$ (no inverse);
    :meth:`fit` returns a :class:`~glmclass.results.discriminant_functions.FisherMultiResults`.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Two or more classes; the first level (Categorical order, else sorted) is $C_1$, the
        second $C_2$, and so on.
    exog : array-like of shape (n_obs, D)
        Features (a formula's intercept column is dropped: a constant is no feature).
    missing : {"drop", "raise"}

    Notes
    -----
    The direction is the one of two-class LDA (MASS's ``lda`` scaling, up to scale) and of
    least squares with targets N/N_1 and -N/N_2 (PRML §4.1.5). With K classes the directions
    are those of ``gc.LDA``'s ``scalings`` (MASS's normalisation ``a' Sigma a = 1``), scaled:
    ``directions`` are normalised ``w' S_W w = 1``, so ``scalings = sqrt(d) directions`` up to
    sign, with ``d = N`` (``LDA().fit(cov="mle")``) or ``N - K`` (``cov="unbiased"``); LDA's
    ``svd**2`` is ``eigenvalues`` times ``N / K`` (mle) or ``(N - K) / (K - 1)`` (unbiased).
    Fisher's criterion alone fixes no threshold: ``fit(threshold="midpoint")`` uses the
    midpoint of the projected class means, ``"lda"`` the Gaussian shared-covariance boundary
    with the class frequencies as priors (two classes; K classes go to the nearest projected
    class mean).

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.1.4-4.1.5.
    Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical
    Learning*, §4.3.3.
    """

    _features_only = True

    def __init__(self, endog, exog, missing: str = "drop") -> None:
        super().__init__(endog, exog, missing)

    def _setup(self, data: ModelData) -> None:
        name = data.endog_name
        if data.exog.shape[1] == 0:
            raise ValueError("FisherDiscriminant needs at least one feature; the design has none")
        if not data.in_memory:  # rows not in memory (e.g. Dask partitions)
            from .class_parts import class_counts, multiclass_rows

            rows = multiclass_rows(data)
            self._check_classes(rows.levels, name,
                                lambda: class_counts(rows.source, len(rows.levels)))
            self.endog, self.levels, self._rows_source = rows.codes, rows.levels, rows.source
            return
        check_finite(data)
        codes, levels = multiclass_response(data.endog, name)
        self._check_classes(levels, name, lambda: np.bincount(codes, minlength=len(levels)))
        self.endog = codes
        self.levels = list(levels)

    @staticmethod
    def _check_classes(levels: list, name: str, counts) -> None:
        """Two or more classes of at least two rows each (``counts()`` is a pass over the
        rows)."""
        if len(levels) < 2:
            raise ValueError(
                f"endog: FisherDiscriminant separates two or more classes, but the response "
                f"{name!r} has {len(levels)} level(s) ({', '.join(map(repr, levels[:5]))}); "
                "give data with at least two classes")
        counts = counts()
        if np.any(counts < 2):
            lv = levels[int(np.argmin(counts))]
            raise ValueError(f"class {lv!r} of {name!r} has {int(counts.min())} observation(s): "
                             "a within-class scatter needs at least two per class")

    @property
    def K(self) -> int:
        """Number of classes."""
        return len(self.levels)

    def fit(self, threshold: str = "midpoint") -> FisherResults | FisherMultiResults:
        """Fisher's direction and a threshold on the projection (two classes), or the K - 1
        discriminant directions (K classes).

        Parameters
        ----------
        threshold : {"midpoint", "lda"}
            Two classes only. ``"midpoint"``: halfway between the projected class means,
            $w^\\top(m_1 + m_2)/2$. ``"lda"``: the boundary of two-class LDA with the pooled
            maximum-likelihood covariance and the class frequencies as priors (then
            ``predict`` agrees with ``gc.LDA``). With K > 2 classes a point goes to the
            nearest projected class mean (``"midpoint"`` generalised); ``"lda"`` is refused.

        Returns
        -------
        FisherResults or FisherMultiResults
            For two classes, or for more.
        """
        check_option("threshold", threshold, ("midpoint", "lda"))
        k = self.K
        mom = nd.class_moments(self.row_source(), k)
        within = mom.within
        if k > 2:
            if threshold != "midpoint":
                raise ValueError("threshold='lda' is the two-class rule; with "
                                 f"{k} classes FisherDiscriminant assigns the nearest projected "
                                 "class mean: leave threshold='midpoint', or use gc.LDA")
            _singular(within, self.exog_names)
            return FisherMultiResults(self, mom)
        diff = mom.means[1] - mom.means[0]
        names = self.exog_names
        _singular(within, names)
        sph = nd.Sphering.of(within)
        raw = nd.shared_solve(sph, diff[:, None])[:, 0]  # S_W^-1 (m2 - m1), no inverse
        return FisherResults(self, mom, raw, threshold)

    def __repr__(self) -> str:
        if self.K > 2:
            return f"<FisherDiscriminant: {self.K} classes, nobs={self.exog.shape[0]}>"
        return f"<FisherDiscriminant: {self.levels[0]!r} vs {self.levels[1]!r}, " \
               f"nobs={self.exog.shape[0]}>"


def target_coding(targets, levels: list, counts) -> tuple[np.ndarray, str]:
    """The (K, M) target row of each class and the rule that turns scores into a class:
    ``"argmax"`` (1-of-K), ``"sign"`` (PRML's N/N_1, -N/N_2 coding) or ``"nearest"``
    (the class whose target row is nearest). ``counts()`` gives the rows per class."""
    k = len(levels)
    if targets is None:
        return np.eye(k), "argmax"
    if isinstance(targets, str):
        if targets != "fisher":
            raise ValueError(f"targets must be None, 'fisher', a dict by level or an array of "
                             f"one row per level, got {targets!r}")
        if k != 2:
            raise ValueError(f"targets='fisher' codes two classes (N/N_1 and -N/N_2), but the "
                             f"response has {k} levels; use targets=None (1-of-K)")
        n = np.asarray(counts(), dtype=float)
        return np.array([[n.sum() / n[0]], [-n.sum() / n[1]]]), "sign"
    if isinstance(targets, Mapping):
        unknown = [lv for lv in targets if lv not in levels]
        missing = [lv for lv in levels if lv not in targets]
        if unknown or missing:
            raise ValueError(f"targets: give one target per level {levels}; unknown "
                             f"{unknown}, missing {missing}")
        targets = [targets[lv] for lv in levels]
    try:
        coding = np.array(targets, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("targets must be numbers: one number or vector per level") from None
    coding = coding.reshape(k, -1) if coding.ndim == 1 and coding.size == k else coding
    if coding.ndim != 2 or coding.shape[0] != k or not np.all(np.isfinite(coding)):
        raise ValueError(f"targets must give one finite target (a number or a vector of one "
                         f"length) per level {levels}; got shape {np.shape(targets)}")
    return coding, "nearest"


def _singular(within: np.ndarray, names: list[str]) -> None:
    """Raise naming the features that make the within-class scatter singular."""
    bad = nd.collinear(within)
    if bad.any():
        cols = ", ".join(repr(names[j]) for j in np.flatnonzero(bad))
        raise ValueError(f"the within-class scatter is singular: {cols} "
                         f"{'is' if bad.sum() == 1 else 'are'} constant within the classes or "
                         "a linear combination of earlier features; drop "
                         f"{'it' if bad.sum() == 1 else 'them'}")
