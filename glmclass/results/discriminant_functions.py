"""Results of the discriminant functions without a probability model: least squares on
indicator targets and Fisher's linear discriminant.

Neither estimates class probabilities, so ``predict(which="prob")`` is refused with a message
that says why and what to use instead; scores and labels follow the prediction contract of
:mod:`glmclass.models.base`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import linalg

from ..data.model_data import output_index
from ..lazy import cached_property
from ..numerics.discriminant import ClassMoments
from ..rows.blocks import Block
from ..solvers.fit import Fit
from ..summary import Summary
from .base import check_which, num
from .dask import RowOutputs, new_rows_of, rows_of
from .frozen import FrozenResults
from .io import SaveMixin

#: Discriminants whose eigenvalue is below this share of the largest are dropped (class means
#: spanning fewer than K - 1 dimensions).
EIGEN_TOL = 1e-10

NO_PROB = ("{model} estimates no class probabilities: {why}. Use which='score' (or 'class'), "
            "or a probabilistic model (gc.Logit, gc.MNLogit, gc.LDA) for probabilities")


def new_rows(model, exog) -> tuple[np.ndarray, pd.Index]:
    """Design of the rows to predict (the model's own when ``exog`` is None) and their index."""
    if exog is None:
        return model.exog, model.data.index
    X = model.data.design(exog)
    return X, output_index(exog, X.shape[0])


def error_rate(table: pd.DataFrame) -> float:
    """Share of the rows off the diagonal of a confusion table."""
    t = table.to_numpy()
    return float((t.sum() - np.trace(t)) / t.sum())


def never_predicted(table: pd.DataFrame) -> list:
    """Levels (columns of a confusion table) that no row is assigned to."""
    return [lv for lv, c in zip(table.columns, table.to_numpy().sum(axis=0), strict=True)
            if c == 0]


def labels_of(levels: list, codes: np.ndarray, missing: np.ndarray, index,
              name: str = "class") -> pd.Series:
    """Labels of integer codes; None where ``missing``."""
    out = np.asarray(levels, dtype=object)[np.where(missing, 0, codes)]
    out[missing] = None
    return pd.Series(out, index=index, name=name)


def confusion(levels: list, observed: np.ndarray, predicted: np.ndarray) -> pd.DataFrame:
    """Counts of observed (rows) against predicted (columns) class codes."""
    k = len(levels)
    table = np.zeros((k, k), dtype=int)
    np.add.at(table, (observed, predicted), 1)
    lab = pd.Index(levels)
    return pd.DataFrame(table, index=lab.rename("observed"), columns=lab.rename("predicted"))


class LeastSquaresResults(RowOutputs, SaveMixin, FrozenResults,
                          rows={"predict": new_rows_of, "fittedvalues": rows_of,
                                "resid": rows_of}):
    """A fitted :class:`~glmclass.LeastSquaresClassifier`.

    Attributes
    ----------
    model : LeastSquaresClassifier
    params : pandas.DataFrame of shape (p, M)
        Coefficients W = X^+ T: rows the design columns, columns the class labels for 1-of-K
        targets (``"y"`` for one output, ``t1, t2, ...`` for another coding); NaN rows for
        aliased columns.
    levels : list
    nobs : int
    rank : int
    df_resid : int
        nobs - rank.
    aliased : list of str
    fittedvalues : pandas.DataFrame of shape (n_obs, K)
        In-sample scores.
    n_outside : int
        Number of fitted scores outside [0, 1] (of n_obs K): how far from probabilities the
        scores are.
    outside : bool
        Whether any fitted score lies outside [0, 1].
    masked_levels : list
        Levels never predicted in-sample: with three or more classes the symptom of masking.
    masked_share : pandas.Series
        By level, the share of its own training points that another class takes (the score
        of another class wins): 1 for a level never predicted, between 0 and 1 where the
        masking is partial (PRML Fig. 4.5).
    """

    #: how scores become a class; results saved before ``targets=`` existed read as 1-of-K
    _rule = "argmax"

    def __init__(self, model, fit: Fit) -> None:
        d = model.data
        self.model = model
        self._fit = fit
        self.levels = list(model.levels)
        self._rule, coding = model.target_rule, model.coding
        m = coding.shape[1]
        self._cols = (pd.Index(self.levels, name="level") if self._rule == "argmax"
                      else pd.Index(["y"] if m == 1 else [f"t{j + 1}" for j in range(m)],
                                    name="output"))
        self.params = pd.DataFrame(fit.coef, index=pd.Index(d.exog_names), columns=self._cols)
        self.nobs = int(d.nrows)
        self.rank = fit.rank
        self.df_resid = self.nobs - self.rank
        self.aliased = [n for n, a in zip(d.exog_names, fit.aliased, strict=True) if a]
        self.formula = d.formula
        keep, coef, k = ~fit.aliased, fit.coef[~fit.aliased], len(self.levels)
        classify = self._classify

        def one(b: Block) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """Scores outside [0, 1], squared residuals per output, the confusion counts."""
            s = b.X[:, keep] @ coef
            table = np.zeros((k, k))
            np.add.at(table, (b.y, classify(s)), 1.0)
            return (np.sum((s < 0.0) | (s > 1.0), dtype=float),
                    np.sum((coding[b.y] - s) ** 2, axis=0), table)

        outside, rss, table = model.row_source().reduce(
            one, (0.0, np.zeros(m), np.zeros((k, k))))
        self.n_outside = int(outside)
        self.outside = self.n_outside > 0
        self.rss = pd.Series(rss, index=self._cols, name="rss")
        self.masked_levels = [lv for lv, c in zip(self.levels, table.sum(axis=0), strict=True)
                              if c == 0]
        own = table.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = 1.0 - np.diag(table) / own
        self.masked_share = pd.Series(share, index=pd.Index(self.levels, name="level"),
                                      name="masked_share")

    def _classify(self, scores: np.ndarray) -> np.ndarray:
        """Class codes of score rows: the largest score (1-of-K), the sign of the one output
        (PRML's N/N_1, -N/N_2 coding: positive is the first class), or the nearest target."""
        if self._rule == "argmax":
            return np.argmax(scores, axis=1)
        if self._rule == "sign":
            return (scores[:, 0] <= 0.0).astype(int)
        coding = self.model.coding
        d2 = (np.sum(scores * scores, axis=1)[:, None] - 2.0 * scores @ coding.T
              + np.sum(coding * coding, axis=1))
        return np.argmin(d2, axis=1)

    @cached_property
    def fittedvalues(self) -> pd.DataFrame:
        """In-sample scores (n_obs, K): a DataFrame (a lazy Dask DataFrame on Dask data)."""
        return self.predict(which="score")

    def _scores(self, X: np.ndarray) -> np.ndarray:
        keep = ~self._fit.aliased
        return X[:, keep] @ self._fit.coef[keep]

    @cached_property
    def resid(self) -> pd.DataFrame:
        """Residuals T - scores (n_obs, K), as R's ``residuals(lm)`` on the indicator matrix."""
        return pd.DataFrame(self.model.targets(), index=self.fittedvalues.index,
                            columns=self._cols) - self.fittedvalues

    @cached_property
    def training_error(self) -> float:
        """Fraction of the training rows misclassified."""
        return error_rate(self.pred_table())

    def predict(self, exog=None, which: str = "score"):
        """Scores or labels, in-sample (``exog=None``) or for new data.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
            New data through the stored design.
        which : {"score", "mean", "linear", "class", "distance"}
            ``"score"``: a DataFrame of the linear scores $y_k(x) = w_k^\\top x + w_{k0}$
            (``"mean"`` and ``"linear"`` give the same: the least-squares estimate of the
            conditional mean of each target, with the identity link); ``"class"``: the label
            of the largest score (or as the ``targets`` coding says); ``"distance"``: the
            signed distances $y_k(x) / \\lVert w_k \\rVert$ of x to each surface
            $y_k(x) = 0$, $w_k$ the weights without the intercept (PRML §4.1.1, eq. 4.7).
            ``"prob"`` raises: the scores are no probabilities.

        Returns
        -------
        pandas.DataFrame or pandas.Series
            Rows with missing values give NaN (label missing).
        """
        if which == "prob":
            raise ValueError(NO_PROB.format(
                model="LeastSquaresClassifier",
                why=f"its scores sum to one but are not confined to [0, 1] ({self.n_outside} "
                    "fitted scores fall outside)"))
        check_which(which, ("score", "mean", "linear", "class", "distance"))
        X, index = new_rows(self.model, exog)
        scores = self._scores(X)
        if which == "distance":
            return pd.DataFrame(scores / self._weight_norms(), index=index, columns=self._cols)
        if which != "class":
            return pd.DataFrame(scores, index=index, columns=self._cols)
        bad = np.isnan(scores).any(axis=1)
        codes = self._classify(np.where(bad[:, None], 0.0, scores))
        return labels_of(self.levels, codes, bad, index)

    def _weight_norms(self) -> np.ndarray:
        """||w_k|| of each output over the non-intercept, non-aliased columns."""
        coef = self._fit.coef.copy()
        icpt = self.model.data.intercept_index
        if icpt is not None:
            coef[icpt] = 0.0
        return np.sqrt(np.nansum(coef * coef, axis=0))

    def pred_table(self) -> pd.DataFrame:
        """Confusion table of the training data: rows observed, columns predicted."""
        keep, coef, k = ~self._fit.aliased, self._fit.coef[~self._fit.aliased], len(self.levels)
        classify = self._classify

        def one(b: Block) -> np.ndarray:
            table = np.zeros((k, k))
            np.add.at(table, (b.y, classify(b.X[:, keep] @ coef)), 1.0)
            return table

        table = self.model.row_source().reduce(one, np.zeros((k, k))).astype(int)
        lab = pd.Index(self.levels)
        return pd.DataFrame(table, index=lab.rename("observed"), columns=lab.rename("predicted"))

    def summary(self) -> Summary:
        """Report: fit header and the coefficient matrix (no standard errors: the indicator
        regression's errors are neither Gaussian nor of constant variance)."""
        m = self.model
        header = [("Dep. Variable", m.data.endog_name), ("Model", "LeastSquaresClassifier"),
                  ("Method", f"least squares on {self._target_text()} targets (QR)"),
                  ("No. Classes", len(self.levels)), ("No. Observations", self.nobs),
                  ("Rank", self.rank), ("Training error", self.training_error),
                  ("Scores outside [0, 1]", f"{self.n_outside} of {self.nobs * len(self.levels)}")]
        notes = ["Scores are least-squares fits of class indicators, not probabilities."]
        if self.masked_levels:
            notes.append(f"Never predicted on the training data (masked): "
                         f"{', '.join(map(str, self.masked_levels))}.")
        partial = self.masked_share[(self.masked_share > 0.5)
                                    & ~self.masked_share.index.isin(self.masked_levels)]
        if len(partial):
            notes.append("Mostly taken by another class's score (partly masked): " + ", ".join(
                f"{lv} ({100 * v:.0f}% of its points)" for lv, v in partial.items()) + ".")
        if self.aliased:
            notes.append(f"Aliased columns with NaN coefficients: {', '.join(self.aliased)}.")
        return Summary("Least-Squares Classifier Results", header,
                       [("coefficients (columns: classes)", self.params)], notes)

    def _target_text(self) -> str:
        return {"argmax": "1-of-K", "sign": "N/N1, -N/N2 (Fisher)",
                "nearest": "given"}[self._rule]

    def __repr__(self) -> str:
        return f"<LeastSquaresResults: {len(self.levels)} classes, nobs={self.nobs}>"


class FisherResults(RowOutputs, SaveMixin, FrozenResults,
                    rows={"predict": new_rows_of, "transform": new_rows_of}):
    """A fitted :class:`~glmclass.FisherDiscriminant`.

    Attributes
    ----------
    model : FisherDiscriminant
    levels : list
        ``[C_1, C_2]``; positive scores predict C_2.
    direction : pandas.Series
        Unit-length $w \\propto S_W^{-1}(m_2 - m_1)$, by feature, pointing from the first
        class's mean to the second's.
    threshold : float
        Projections above it are classified C_2.
    threshold_kind : {"midpoint", "lda"}
    means : pandas.DataFrame
        Class means (levels x features).
    projected_means : pandas.Series
        $w^\\top m_k$ by level.
    within_scatter : pandas.DataFrame
        $S_W = \\sum_k \\sum_{n \\in C_k} (x_n - m_k)(x_n - m_k)^\\top$.
    criterion : float
        Fisher's criterion at w: $(w^\\top(m_2 - m_1))^2 / (w^\\top S_W w)$, the largest over
        all directions (PRML eq. 4.26, $S_B = (m_2 - m_1)(m_2 - m_1)^\\top$).
    directions : pandas.DataFrame of shape (D, 1)
        The same direction normalised $w^\\top S_W w = 1$ (column ``LD1``), as the K-class
        :class:`FisherMultiResults`.
    eigenvalues : pandas.Series
        The one non-zero eigenvalue of $S_W^{-1} S_B$ with the K-class $S_B = \\sum_k N_k
        (m_k - m)(m_k - m)^\\top$ (eq. 4.43): ``N_1 N_2 / N * criterion``.
    counts : pandas.Series
    nobs : int
    """

    def __init__(self, model, mom: ClassMoments, raw: np.ndarray, threshold: str) -> None:
        d = model.data
        self.model = model
        self.levels = list(model.levels)
        feats = pd.Index(d.exog_names)
        lev = pd.Index(self.levels, name=d.endog_name)
        w = raw / np.linalg.norm(raw)
        self.direction = pd.Series(w, index=feats, name="direction")
        self.means = pd.DataFrame(mom.means, index=lev, columns=feats)
        self.counts = pd.Series(mom.counts.astype(int), index=lev, name="count")
        self.nobs = int(mom.counts.sum())
        self.within_scatter = pd.DataFrame(mom.within, index=feats, columns=feats)
        proj = mom.means @ w
        self.projected_means = pd.Series(proj, index=lev, name="projected_mean")
        diff = proj[1] - proj[0]
        self.criterion = float(diff * diff / (w @ mom.within @ w))
        ld = pd.Index(["LD1"])
        self.directions = pd.DataFrame((raw / np.sqrt(raw @ mom.within @ raw))[:, None],
                                       index=feats, columns=ld)
        n1, n2 = mom.counts
        self.eigenvalues = pd.Series([n1 * n2 / (n1 + n2) * self.criterion], index=ld,
                                     name="eigenvalue")
        self.threshold_kind = threshold
        mid = float(proj.mean())
        if threshold == "midpoint":
            self.threshold = mid
        else:  # two-class LDA, Sigma = S_W / N: a = ||Sigma^-1 (m2 - m1)|| = N ||raw||
            a = self.nobs * float(np.linalg.norm(raw))
            self.threshold = mid - float(np.log(mom.counts[1] / mom.counts[0])) / a
        self.formula = d.formula

    def transform(self, exog=None) -> pd.Series:
        """Projections $w^\\top x$ (in-sample, or of new data): ``predict(which="linear")``."""
        return self.predict(exog, which="linear")

    def _projection(self, exog) -> pd.Series:
        X, index = new_rows(self.model, exog)
        return pd.Series(X @ self.direction.to_numpy(), index=index, name="projection")

    def predict(self, exog=None, which: str = "class"):
        """Labels, or the signed distance to the threshold along the direction.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
        which : {"class", "score", "distance", "linear"}
            ``"class"``: the second level where the projection exceeds the threshold;
            ``"score"``: projection minus threshold, which is also the signed distance of x to
            the boundary (``"distance"``, PRML eq. 4.7: ``direction`` has unit length);
            ``"linear"``: the projection itself (:meth:`transform`). ``"prob"`` raises:
            Fisher's criterion defines no probability.

        Returns
        -------
        pandas.Series
        """
        if which in ("prob", "mean"):
            raise ValueError(NO_PROB.format(
                model="FisherDiscriminant",
                why="its criterion gives a direction and a threshold, not a probability model "
                    "(gc.LDA adds the Gaussian model that gives one)"))
        check_which(which, ("class", "score", "distance", "linear"))
        y = self._projection(exog)
        if which == "linear":
            return y
        score = (y - self.threshold).rename("score")
        if which in ("score", "distance"):
            return score.rename(which)
        s = score.to_numpy()
        return labels_of(self.levels, (s > 0).astype(int), np.isnan(s), score.index)

    @cached_property
    def training_error(self) -> float:
        """Fraction of the training rows misclassified."""
        return error_rate(self.pred_table())

    def pred_table(self) -> pd.DataFrame:
        """Confusion table of the training data: rows observed, columns predicted."""
        w, c = self.direction.to_numpy(), self.threshold

        def one(b: Block) -> np.ndarray:
            table = np.zeros((2, 2))
            np.add.at(table, (b.y, (b.X @ w - c > 0).astype(int)), 1.0)
            return table

        table = self.model.row_source().reduce(one, np.zeros((2, 2))).astype(int)
        lab = pd.Index(self.levels)
        return pd.DataFrame(table, index=lab.rename("observed"), columns=lab.rename("predicted"))

    def summary(self) -> Summary:
        """Report: header, the direction and the class means."""
        m = self.model
        header = [("Dep. Variable", m.data.endog_name), ("Model", "FisherDiscriminant"),
                  ("Classes", f"{self.levels[0]} | {self.levels[1]}"),
                  ("No. Observations", num(self.nobs)), ("Threshold", self.threshold),
                  ("Threshold rule", self.threshold_kind), ("Fisher criterion", self.criterion),
                  ("Training error", self.training_error)]
        table = pd.concat([self.direction, self.means.T], axis=1)
        notes = ["direction is unit length, proportional to S_W^-1 (m2 - m1); projections "
                 f"above the threshold are classified {self.levels[1]}."]
        return Summary("Fisher Discriminant Results", header, [("direction and means", table)],
                       notes)

    def __repr__(self) -> str:
        return f"<FisherResults: {self.levels[0]!r} vs {self.levels[1]!r}, nobs={self.nobs}>"


class FisherMultiResults(RowOutputs, SaveMixin,
                         rows={"predict": new_rows_of, "transform": new_rows_of}):
    """A fitted :class:`~glmclass.FisherDiscriminant` of K > 2 classes (PRML §4.1.6).

    Attributes
    ----------
    model : FisherDiscriminant
    levels : list
    directions : pandas.DataFrame of shape (D, D')
        W: one column per discriminant (``LD1``, ``LD2``, ...), the eigenvectors of
        $S_W^{-1} S_B$ by decreasing eigenvalue, normalised $w^\\top S_W w = 1$ (so
        $W^\\top S_W W = I$), each signed so that the last class's projected mean is above the
        first's. $D' = \\min(K - 1, D)$, less when the class means span fewer dimensions.
        ``gc.LDA``'s ``scalings`` are ``sqrt(N) W`` (``cov="mle"``) or ``sqrt(N - K) W``
        (``cov="unbiased"``), up to the sign of each column.
    eigenvalues : pandas.Series
        The eigenvalues $\\lambda_j$ of $S_W^{-1} S_B$ (of $S_B w = \\lambda S_W w$), by
        discriminant. ``LDA.svd**2`` is ``eigenvalues * N / K`` (mle) or ``* (N - K) / (K - 1)``
        (unbiased).
    criterion : float
        $J(W) = \\mathrm{Tr}[(W^\\top S_W W)^{-1} W^\\top S_B W]$ (PRML eq. 4.50) at the
        directions: the sum of the eigenvalues, the largest over all D' projections.
    within_scatter, between_scatter : pandas.DataFrame of shape (D, D)
        $S_W = \\sum_k \\sum_{n \\in C_k} (x_n - m_k)(x_n - m_k)^\\top$ (eq. 4.40) and
        $S_B = \\sum_k N_k (m_k - m)(m_k - m)^\\top$ (eq. 4.43).
    means : pandas.DataFrame
        Class means (levels x features).
    projected_means : pandas.DataFrame
        $W^\\top m_k$ (levels x discriminants).
    counts : pandas.Series
    nobs : int
    """

    def __init__(self, model, mom: ClassMoments) -> None:
        d = model.data
        self.model = model
        self.levels = list(model.levels)
        feats = pd.Index(d.exog_names)
        lev = pd.Index(self.levels, name=d.endog_name)
        counts = mom.counts
        centred = mom.means - counts @ mom.means / counts.sum()
        between = (centred * counts[:, None]).T @ centred
        within = mom.within
        lam, vecs = linalg.eigh(between, within)  # S_B w = lambda S_W w, w' S_W w = 1
        lam, vecs = lam[::-1], vecs[:, ::-1]
        top = min(len(self.levels) - 1, vecs.shape[0])
        rank = int(np.sum(lam[:top] > EIGEN_TOL * max(lam[0], 0.0))) if lam[0] > 0 else 0
        W = vecs[:, :rank]
        W = W * np.where((mom.means[-1] - mom.means[0]) @ W < 0, -1.0, 1.0)
        ld = pd.Index([f"LD{j + 1}" for j in range(rank)])
        self.directions = pd.DataFrame(W, index=feats, columns=ld)
        self.eigenvalues = pd.Series(lam[:rank], index=ld, name="eigenvalue")
        sw, sb = W.T @ within @ W, W.T @ between @ W
        self.criterion = float(np.trace(np.linalg.solve(sw, sb))) if rank else 0.0
        self.within_scatter = pd.DataFrame(within, index=feats, columns=feats)
        self.between_scatter = pd.DataFrame(between, index=feats, columns=feats)
        self.means = pd.DataFrame(mom.means, index=lev, columns=feats)
        self.projected_means = pd.DataFrame(mom.means @ W, index=lev, columns=ld)
        self.counts = pd.Series(counts.astype(int), index=lev, name="count")
        self.nobs = int(counts.sum())
        self.formula = d.formula

    def transform(self, exog=None) -> pd.DataFrame:
        """The projections $y = W^\\top x$ (in-sample, or of new data), one column per
        discriminant. Not centred: ``gc.LDA.transform`` subtracts the mean first."""
        return self.predict(exog, which="linear")

    def _scores(self, Y: np.ndarray) -> np.ndarray:
        """Minus the squared distance of each projection to each projected class mean."""
        mu = self.projected_means.to_numpy()
        return -(np.sum(Y * Y, axis=1)[:, None] - 2.0 * Y @ mu.T + np.sum(mu * mu, axis=1))

    def predict(self, exog=None, which: str = "class"):
        """Labels, the closeness to each class, or the projections.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
        which : {"class", "score", "linear"}
            ``"class"``: the class whose projected mean is nearest (Euclidean in the
            discriminant space, where $W^\\top S_W W = I$: LDA with equal priors on the
            D' discriminants); ``"score"``: minus the squared distance to each projected
            class mean (a DataFrame, one column per class); ``"linear"``: the projections
            $W^\\top x$ (:meth:`transform`). ``"prob"`` raises.

        Returns
        -------
        pandas.Series or pandas.DataFrame
        """
        if which in ("prob", "mean"):
            raise ValueError(NO_PROB.format(
                model="FisherDiscriminant",
                why="its criterion gives directions, not a probability model (gc.LDA adds "
                    "the Gaussian model that gives one)"))
        check_which(which, ("class", "score", "linear"))
        X, index = new_rows(self.model, exog)
        Y = X @ self.directions.to_numpy()
        if which == "linear":
            return pd.DataFrame(Y, index=index, columns=self.directions.columns)
        scores = self._scores(Y)
        if which == "score":
            return pd.DataFrame(scores, index=index, columns=pd.Index(self.levels, name="level"))
        bad = np.isnan(scores).any(axis=1)
        codes = np.argmax(np.where(bad[:, None], 0.0, scores), axis=1)
        return labels_of(self.levels, codes, bad, index)

    @cached_property
    def training_error(self) -> float:
        """Fraction of the training rows misclassified."""
        return error_rate(self.pred_table())

    def pred_table(self) -> pd.DataFrame:
        """Confusion table of the training data: rows observed, columns predicted."""
        W, k = self.directions.to_numpy(), len(self.levels)

        def one(b: Block) -> np.ndarray:
            table = np.zeros((k, k))
            np.add.at(table, (b.y, np.argmax(self._scores(b.X @ W), axis=1)), 1.0)
            return table

        table = self.model.row_source().reduce(one, np.zeros((k, k))).astype(int)
        lab = pd.Index(self.levels)
        return pd.DataFrame(table, index=lab.rename("observed"), columns=lab.rename("predicted"))

    def summary(self) -> Summary:
        """Report: header, the directions with their eigenvalues, the projected means."""
        m = self.model
        header = [("Dep. Variable", m.data.endog_name), ("Model", "FisherDiscriminant"),
                  ("No. Classes", len(self.levels)), ("No. Observations", num(self.nobs)),
                  ("Discriminants", self.directions.shape[1]),
                  ("Fisher criterion J(W)", self.criterion),
                  ("Training error", self.training_error)]
        eig = pd.DataFrame({"eigenvalue": self.eigenvalues,
                            "share": self.eigenvalues / self.eigenvalues.sum()})
        notes = ["directions W are eigenvectors of S_W^-1 S_B, normalised W' S_W W = I; a "
                 "point goes to the class whose projected mean is nearest."]
        return Summary("Fisher Discriminant Results", header,
                       [("directions", self.directions), ("eigenvalues", eig),
                        ("projected class means", self.projected_means)], notes)

    def __repr__(self) -> str:
        return f"<FisherMultiResults: {len(self.levels)} classes, nobs={self.nobs}>"
