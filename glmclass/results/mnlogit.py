"""Results of a multinomial logit fit: labelled by level and term, derived numbers cached."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..data.model_data import ModelData
from ..data.response import encode
from ..errors import GlmclassWarning
from ..lazy import cached_property
from ..likelihoods import likelihood_of
from ..likelihoods.multinomial import softmax_parts
from ..numerics.covariance import covariance
from ..numerics.linalg import NotPositiveDefinite, spd_inverse
from ..rows.constant import constant
from ..solvers.fit import Fit
from ..summary import Summary
from .base import check_which, coef_table, num, row_key
from .dask import RowOutputs, new_rows_of, rows_of, shallow_copy, total_of
from .glm import MaximumLikelihoodReport, exp_table
from .io import SaveMixin, require_data
from .likelihood import LikelihoodResults
from .prediction import mnlogit_prediction
from .profile import newton_profile_conf_int
from .robust import NONROBUST, CovSpec, freq_per_block, sandwich_over_rows
from .tidy import TidyMixin

#: The outputs of MNLogit results that read the rows of the fit (see
#: :mod:`glmclass.results.dask`).
MNLOGIT_ROWS = {"fittedvalues": rows_of, "score_obs": rows_of, "pred_table": total_of,
                "predict": new_rows_of}


class MNLogitResults(MaximumLikelihoodReport, RowOutputs, LikelihoodResults, TidyMixin, SaveMixin,
                     rows=MNLOGIT_ROWS):
    """Estimates, inference and predictions of a fitted :class:`~glmclass.MNLogit`.

    Built by :meth:`MNLogit.fit`.

    Attributes
    ----------
    model : MNLogit
        The model that was fit (never modified).
    params : pandas.DataFrame of shape (p, K-1)
        Coefficients: rows the design columns, columns the non-reference levels. Column ``j``
        holds the log-odds of level ``j`` against the reference level.
    llf, llnull : float
        Log-likelihood at the estimates and of the intercept-only model.
    deviance, null_deviance : float
        -2 llf and -2 llnull (``nnet::multinom``'s deviance).
    nobs : float
        Number of observations, counting frequency weights.
    df_model : float
        (K-1) (rank - 1) with an intercept, (K-1) rank without.
    df_resid : float
        nobs - k_params.
    k_params : int
        Number of estimated coefficients, (K-1) rank.
    converged : bool
    n_iter : int
    method : str
    information : {"observed", "expected"}
        Recorded choice; for this canonical model both give the same matrix.
    cov_type : {"nonrobust", "HC0", "HC1", "cluster"}
        What ``cov_params`` is: the inverse information or a sandwich around it.
    cov_spec : CovSpec
        The validated covariance request (cluster groups, corrections).
    ref : label
        The reference level.
    levels : list
        All levels, in their natural order (Categorical order, else sorted).
    aliased : list of str
        Columns dropped as linear combinations of earlier ones (NaN coefficients).
    separation : Separation or None
        What the separation check found (``separated`` False when nothing; None when not
        run): the model gives it with
        :meth:`~glmclass.results.likelihood.LikelihoodResults.replaced`.
    fit_levels : list
        The levels in fit order, the reference first (the codes of the response).
    nonref_levels : list
        The non-reference levels, in fit order: the columns of :attr:`params`.
    """

    def __init__(self, model, fit: Fit, keep: np.ndarray, null_deviance: float,
                 method: str, information: str, fit_levels: list, cov: CovSpec = NONROBUST,
                 separation=None) -> None:
        d = model.data
        self.model = model
        self._fit = fit
        self._keep = keep
        k1, p = model.K - 1, keep.size
        self.n_equations = k1
        self._coef = np.full((p, k1), np.nan)  # params' values (NaN for aliased columns)
        self._coef[keep] = fit.coef.reshape(k1, -1).T
        self.fit_levels = list(fit_levels)
        self.nonref_levels = self.fit_levels[1:]
        self.deviance = float(fit.objective)
        self.null_deviance = float(null_deviance)
        self.llf = -self.deviance / 2.0
        self.llnull = -self.null_deviance / 2.0
        self.converged = bool(fit.converged)
        self.n_iter = int(fit.n_iter)
        self.fit_history = fit.history
        self.method = method
        self.information = information
        self.cov_spec = cov
        self.cov_type = cov.cov_type
        self.ref = model.ref
        self.levels = list(model.levels)
        self.aliased = [n for n, k in zip(d.exog_names, keep, strict=True) if not k]
        self.rank = int(keep.sum())
        self.nobs = float(model.freq_weights.sum())
        self.k_params = k1 * self.rank
        self.df_model = float(k1 * (self.rank - (1 if model.has_intercept else 0)))
        self.df_resid = float(self.nobs - self.k_params)
        self.separation = separation
        self.formula = d.formula

    # --- labels: made when first asked for (pandas objects cost more than a small fit) -------
    @cached_property
    def params(self) -> pd.DataFrame:
        """Coefficients: rows the design columns, columns the non-reference levels."""
        return pd.DataFrame(self._coef, index=self.model.data.exog_index,
                            columns=self._level_index)

    @cached_property
    def _level_index(self) -> pd.Index:
        return pd.Index(self.nonref_levels, name="level")

    @cached_property
    def rows_fingerprint(self) -> str:
        """Fingerprint of the rows of the fit, for :func:`glmclass.compare`."""
        return row_key(self.model.data.index, self.model.freq_weights)

    # --- inference: the inputs of LikelihoodResults --------------------------------------------
    @property
    def estimable(self) -> np.ndarray:
        """Which design columns have an estimate (not aliased), a boolean array."""
        return self._keep

    @property
    def solver_fit(self) -> Fit:
        """The solver's record of the fit (``coef`` level-major on the estimable columns)."""
        return self._fit

    @property
    def coef_index(self) -> pd.MultiIndex:
        """Labels (level, term) of the coefficients, level-major: the rows and columns of
        :meth:`cov_params` and the rows of :meth:`conf_int`."""
        return self._multi_index

    @cached_property
    def _multi_index(self) -> pd.MultiIndex:
        return pd.MultiIndex.from_product([self.nonref_levels, self.model.data.exog_names],
                                          names=["level", "term"])

    @property
    def solver_inverse(self) -> np.ndarray | None:
        """The inverse information of the kept coefficients (level-major) at the estimates,
        None when it is not positive definite (:attr:`_bread`)."""
        return self._bread

    @cached_property
    def _bread(self) -> np.ndarray | None:
        """Inverse information of the kept coefficients (level-major), None when the
        information is not positive definite. The link is canonical: observed = expected
        information = the Hessian of -llf, half the deviance's."""
        try:
            return spd_inverse(self._fit.hessian / 2.0)
        except NotPositiveDefinite:
            return None

    @cached_property
    def cov_values(self) -> np.ndarray:
        """The covariance of every coefficient, level-major ((K-1) p square, NaN for aliased
        columns): what :attr:`bse` needs, without the labels of :meth:`cov_params`."""
        if self._bread is None:
            warnings.warn("the information matrix is not positive definite at the estimates; "
                          "standard errors are NaN (the fit may not be at a maximum)",
                          GlmclassWarning, stacklevel=5)  # from res.bse: the caller
            return self.on_every_coefficient(None)
        if not self.cov_spec.robust:
            return self.on_every_coefficient(covariance(self._bread, None, "nonrobust"))
        m = self.model
        return self.on_every_coefficient(sandwich_over_rows(
            self._bread, m.blocks(self._keep), likelihood_of(m), self._fit.coef, self.cov_spec,
            nobs=self.nobs, freq_weights=freq_per_block(m.freq_weights)))

    def partition_model(self, data: ModelData):
        """The model over the rows ``data`` of one partition, in memory: the response as codes
        of the fit's levels (the reference first), its frequency weights and offset."""
        m = self.model
        n, a = data.nrows, data.arrays
        fit_levels = [m.ref] + [lv for lv in m.levels if lv != m.ref]
        f, off = a.get("freq_weights"), a.get("offset")
        return shallow_copy(m, data=data, codes=encode(data.endog, fit_levels),
                            freq_weights=constant(1.0, n) if f is None else f,
                            offset=constant(0.0, n) if off is None else off)

    def _scores(self) -> np.ndarray:
        """Per-row scores of the kept coefficients, level-major: ``f_i (y_ij - p_ij) x_i``
        for each non-reference level j, shape (n_obs, (K-1) rank)."""
        require_data(self, "the per-row scores")
        m = self.model
        X = m.exog if self._keep.all() else m.exog[:, self._keep]
        _, prob, _ = softmax_parts(self.linear_of(m.exog, m.offset))
        resid = (m.codes[:, None] == np.arange(1, m.K)[None, :]) - prob  # (n, K-1)
        resid *= np.asarray(m.freq_weights, dtype=float)[:, None]
        return (resid[:, :, None] * X[:, None, :]).reshape(X.shape[0], resid.shape[1] * X.shape[1])

    def score_obs(self) -> pd.DataFrame:
        """Per-row contributions to the score of the log-likelihood at the estimates,
        ``f_i (y_ij - p_ij) x_i``: rows as the data, columns (level, term) as
        :meth:`cov_params` (NaN for aliased columns). They sum to zero at the estimate."""
        k1, p = len(self.nonref_levels), self._keep.size
        kept = np.flatnonzero(np.tile(self._keep, k1))
        out = np.full((self.model.exog.shape[0], k1 * p), np.nan)
        out[:, kept] = self._scores()
        return pd.DataFrame(out, index=self.model.data.index, columns=self._multi_index)

    def like_params(self, values: np.ndarray, name: str) -> pd.DataFrame:
        """Level-major values of every coefficient (a new array, which the frame takes without
        a copy), shaped and labelled like :attr:`params` (the model's design Index, made once
        per model, and one Index of levels); ``name`` is not used (a frame has columns)."""
        k1 = len(self.nonref_levels)
        return pd.DataFrame(values.reshape(k1, -1).T, index=self.model.data.exog_index,
                            columns=self._level_index, copy=False)

    def flat(self, values: pd.DataFrame) -> np.ndarray:
        """Values shaped like :attr:`params`, level-major (the order of :attr:`coef_index`)."""
        return values.to_numpy().T.ravel()

    @property
    def tidy_labels(self) -> dict[str, np.ndarray]:
        """The label columns of :meth:`tidy`, level-major: ``level`` and ``term``."""
        params = self.params
        return {"level": np.repeat(np.asarray(params.columns, dtype=object), params.shape[0]),
                "term": np.tile(np.asarray(params.index, dtype=object), params.shape[1])}

    @property
    def flat_params(self) -> np.ndarray:
        """The coefficients level-major, the order of :meth:`cov_params`."""
        return self._coef.T.ravel()

    # --- prediction ---------------------------------------------------------------------------
    def linear_of(self, X: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """Log-odds of each non-reference level against the reference, ``(n, K-1)``, of the
        design rows ``X`` (every design column) with ``offset``."""
        coef = self.params.to_numpy()[self._keep]
        return X[:, self._keep] @ coef + offset[:, None]

    def predict(self, exog=None, which: str = "prob", offset=None):
        """Predictions in-sample (``exog=None``) or for new data through the stored design.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
            New data: a DataFrame with the formula's columns, or a design matrix for array
            models.
        which : {"prob", "mean", "class", "linear"}
            ``"prob"`` (and ``"mean"``, the mean of the indicator response): a DataFrame of
            probabilities, one column per level (natural level order); ``"class"``: a Series
            with the most probable level; ``"linear"``: a DataFrame of log-odds against the
            reference, one column per non-reference level (the contract of
            :mod:`glmclass.models.base`).
        offset : array-like of shape (n,), optional
            Offset of the new rows (default 0).

        Returns
        -------
        pandas.DataFrame or pandas.Series
        """
        check_which(which, ("prob", "mean", "class", "linear"))
        X, off, index = self.design_rows(exog, offset)
        eta = self.linear_of(X, off)
        return by_which(which, eta, self.probabilities, self.levels, self.params.columns, index)

    def design_rows(self, exog, offset) -> tuple[np.ndarray, np.ndarray, pd.Index]:
        """Design, offset and index of the rows to predict (in-sample for ``exog=None``)."""
        return prediction_rows(self, exog, offset)

    @cached_property
    def natural_order(self) -> list[int]:
        """Positions in fit order (reference first) of the levels in natural order."""
        return [self.fit_levels.index(lv) for lv in self.levels]

    def probabilities(self, eta: np.ndarray, natural: bool = True) -> np.ndarray:
        """Probabilities in natural level order, or in fit order (reference first); rows with
        missing values give NaN."""
        fit_order = fit_order_probabilities(eta)
        return fit_order[:, self.natural_order] if natural else fit_order

    def get_prediction(self, exog=None, which: str = "mean", offset=None):
        """Predicted probabilities (or log-odds) with delta-method standard errors and
        confidence intervals, per level.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
            New data (default: the rows of the fit).
        which : {"mean", "linear"}
            ``"mean"``: the probability of every level, its standard error by the delta method
            through the softmax, and an interval built on the scale of the level's log-odds
            against all others, ``logit(p_k) -+ z se``, mapped back (it stays in (0, 1)).
            ``"linear"``: the log-odds of each non-reference level against the reference,
            with a symmetric interval.
        offset : array-like of shape (n,), optional
            Offset of the new rows.

        Returns
        -------
        PredictionResults
            ``predicted`` and ``se`` are DataFrames (one column per level);
            ``summary_frame(alpha)`` is long, with a ``level`` column. The covariance is the
            one the fit reports (``cov_type``).
        """
        return mnlogit_prediction(self, exog, which, offset)

    @cached_property
    def fittedvalues(self) -> pd.DataFrame:
        """In-sample probabilities, one column per level."""
        return self.predict()

    def pred_table(self) -> pd.DataFrame:
        """Confusion table: rows the observed level, columns the most probable level (counts
        weighted by frequency weights)."""
        m = self.model
        prob = self.fittedvalues.to_numpy()
        observed = np.argsort(self.natural_order)[m.codes]  # natural position of each row's level
        table = np.zeros((len(self.levels), len(self.levels)))
        np.add.at(table, (observed, np.argmax(prob, axis=1)), m.freq_weights)
        lab = pd.Index(self.levels)
        return pd.DataFrame(table, index=lab.rename("observed"), columns=lab.rename("predicted"))

    def conf_int(self, alpha: float = 0.05, method: str = "wald") -> pd.DataFrame:
        """Confidence intervals of the coefficients, one row per (level, term).

        Parameters
        ----------
        alpha : float
            1 - confidence level.
        method : {"wald", "profile"}
            ``"wald"``: ``params -+ q bse`` with the covariance the fit reports
            (``cov_type``). ``"profile"``: profile-likelihood intervals, the coefficients b
            whose signed root ``sign(b - b_hat) sqrt(2 (llf - llf_j(b)))`` lies within the
            normal quantile, ``llf_j(b)`` the log-likelihood maximised over every other
            coefficient with this one held at b (Newton refits; each bound found exactly by
            Brent's method); likelihood-based, so ``cov_type`` does not enter.

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``, indexed by (level, term); NaN for aliased
            columns, an infinite bound where the profile never reaches the cutoff.
        """
        return self._wald_or_profile(alpha, method, newton_profile_conf_int)

    # --- report -------------------------------------------------------------------------------
    def summary(self, exp: bool = False, alpha: float = 0.05) -> Summary:
        """Statistical report: fit header and one coefficient block per non-reference level.

        Parameters
        ----------
        exp : bool
            Show exp(coef) (relative risk ratios against the reference level) and its interval.
        alpha : float
            1 - confidence level of the intervals.
        """
        m = self.model
        ci = self.conf_int(alpha)
        tables = []
        for lv in self.nonref_levels:
            t = coef_table(self.params[lv], self.bse[lv], self.tvalues[lv], self.pvalues[lv],
                           ci.loc[lv].set_axis(self.params.index), "z", alpha)
            tables.append((f"{m.data.endog_name} = {lv} (against {self.ref})",
                           exp_table(t, "exp(coef)") if exp else t))
        header = [
            ("Dep. Variable", m.data.endog_name), ("Model", "MNLogit"),
            ("Link", "softmax (baseline logit)"), *self._method_rows(),
            ("Reference level", str(self.ref)), ("No. Levels", len(self.levels)),
            *self._size_rows(), *self._likelihood_rows(), *self._dropped_rows(),
        ]
        notes = [self.cov_spec.describe(self.information)[:-1] + " (observed and expected "
                 "information are identical for this canonical model).",
                 f"Coefficients are log-odds against the reference level {self.ref!r}.",
                 *self._fit_notes()]
        return Summary("MNLogit Regression Results", header, tables, notes)

    def __repr__(self) -> str:
        return (f"<MNLogitResults: {len(self.levels)} levels, ref={self.ref!r}, "
                f"nobs={num(self.nobs)}>")


# --- the prediction steps shared with the penalised fits (results/regularized.py) ------------
def prediction_rows(res, exog, offset) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Design, offset and index of the rows to predict (in-sample for ``exog=None``;
    :meth:`glmclass.data.model_data.ModelData.new_rows`)."""
    m = res.model
    if exog is None:
        require_data(res, "in-sample prediction")
    X, off, index = m.data.new_rows(exog, offset)
    if off is None:
        off = m.offset if exog is None else np.zeros(X.shape[0])
    return X, off, index


def fit_order_probabilities(eta: np.ndarray) -> np.ndarray:
    """Probabilities in fit order (reference first) from the log-odds against the reference;
    rows with missing values give NaN."""
    ok = ~np.isnan(eta).any(axis=1)
    out = np.full((eta.shape[0], eta.shape[1] + 1), np.nan)
    _, prob, p0 = softmax_parts(eta[ok])
    out[ok] = np.column_stack([p0, prob])
    return out


def by_which(which: str, eta: np.ndarray, probabilities, levels, columns, index):
    """The prediction contract of :mod:`glmclass.models.base` for a multinomial response:
    log-odds (``"linear"``), probabilities in natural level order (``"prob"``/``"mean"``, from
    ``probabilities(eta)``) or the most probable level (missing where a row has NaN)."""
    if which == "linear":
        return pd.DataFrame(eta, index=index, columns=columns)
    prob = probabilities(eta)
    if which in ("prob", "mean"):
        return pd.DataFrame(prob, index=index, columns=pd.Index(levels, name="level"))
    ok = ~np.isnan(prob).any(axis=1)
    labels = np.full(prob.shape[0], None, dtype=object)
    labels[ok] = np.asarray(levels, dtype=object)[np.argmax(prob[ok], axis=1)]
    return pd.Series(labels, index=index, name="class")
