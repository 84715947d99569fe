"""The one base of the results of every likelihood model (GLM, Logit, Probit, MNLogit, the
Bayesian GLM's Laplace posterior, Firth's logit): Wald inference, information criteria, the
likelihood-ratio test against the null model, the covariance and its labels, and the freezing
of results once built.

A results class gives a small set of public inputs and gets the rest:

- ``params`` (a Series, or a DataFrame with one column per equation for a multinomial
  model) and ``coef_index``, the labels of the coefficients in their flat order (for a
  multinomial model level-major, as :meth:`cov_params`);
- ``cov_values``, the covariance of the flat coefficients as an array (NaN for aliased
  ones): from the fit's information, a sandwich around it, or a Laplace posterior;
- ``estimable``, which design columns have an estimate (not aliased), and
  ``solver_inverse``, the inverse of the information the solver ended with on them (None
  when it is not positive definite);
- ``llf``, ``llnull``, ``nobs``, ``k_params``, ``df_model``, ``df_resid`` (and ``use_t``
  when the reference distribution is Student's t on ``df_resid``).

Results are complete when built: every attribute is set in ``__init__`` and each derived
number is a cached property (:class:`functools.cached_property` writes the instance
``__dict__`` directly, which assignment rules do not see); assigning an attribute afterwards
raises (:mod:`glmclass.results.frozen`). A changed copy is made with ``replaced()``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from ..lazy import cached_property
from ..numerics.stderr import standard_errors
from ..summary import Summary
from . import deviance_tables as DT
from . import hypothesis as H
from .base import LikelihoodMixin
from .frozen import FrozenResults
from .io import without_data
from .terms import wald_test_terms


class LikelihoodResults(LikelihoodMixin, FrozenResults):
    """Wald inference (``bse``, ``tvalues``, ``pvalues``, ``conf_int``, ``cov_params``,
    ``wald_test_terms``), ``aic``/``bic`` and ``llr``/``llr_pvalue``/``prsquared`` of a
    likelihood model, from the public inputs the module docstring lists.

    Attributes
    ----------
    use_t : bool
        Whether the reference distribution of the Wald statistics is Student's t on
        ``df_resid`` (an estimated dispersion) rather than the normal.
    """

    params: pd.Series | pd.DataFrame
    df_resid: float
    use_t: bool = False
    #: Number of equations (linear predictors): K - 1 for a multinomial logit.
    n_equations: int = 1
    #: Whether the estimates maximise the likelihood (False for a posterior mode or a
    #: penalised fit): only then do deviance differences between refits test terms.
    maximum_likelihood: ClassVar[bool] = True

    # --- the flat coefficients and their labels ---------------------------------------------
    @property
    def coef_index(self) -> pd.Index:
        """Labels of the coefficients in the order of ``cov_values`` (a results class may know
        them without labelling ``params``)."""
        return self.params.index

    @property
    def flat_params(self) -> np.ndarray:
        """The coefficients in the order of :attr:`coef_index` (level-major for a multinomial
        model)."""
        return self.params.to_numpy()

    def like_params(self, values: np.ndarray, name: str) -> pd.Series | pd.DataFrame:
        """Values in the order of :attr:`coef_index`, shaped and labelled like ``params``
        (a Series called ``name``; a multinomial model gives a DataFrame by level)."""
        return pd.Series(values, index=self.coef_index, name=name)

    def on_every_coefficient(self, kept: np.ndarray | None) -> np.ndarray:
        """A square matrix over the estimable coefficients (level-major over
        ``n_equations``), placed among every coefficient with NaN for the aliased ones (a
        new array; all NaN for ``kept=None``, a covariance that does not exist)."""
        keep = self.estimable
        size = self.n_equations * keep.size
        full = np.full((size, size), np.nan)
        if kept is not None and keep.all():
            full[:] = kept
        elif kept is not None:
            pos = np.flatnonzero(np.tile(keep, self.n_equations))
            full[np.ix_(pos, pos)] = kept
        return full

    @property
    def tidy_labels(self) -> dict[str, np.ndarray]:
        """The label columns of :meth:`tidy`, one entry per coefficient in the order of
        :attr:`coef_index`: ``term`` (a multinomial model adds ``level`` first)."""
        return {"term": np.asarray(self.params.index, dtype=object)}

    @cached_property
    def _cov(self) -> pd.DataFrame:
        index = self.coef_index
        return pd.DataFrame(self.cov_values, index=index, columns=index, copy=False)

    def cov_params(self) -> pd.DataFrame:
        """Covariance of the estimates, labelled by :attr:`coef_index` (a copy: changing it
        leaves ``bse`` and the other cached values alone)."""
        return self._cov.copy()

    # --- Wald inference ---------------------------------------------------------------------
    @cached_property
    def bse(self) -> pd.Series | pd.DataFrame:
        """Standard errors, the square roots of the diagonal of ``cov_params()``."""
        return self.like_params(standard_errors(self.cov_values.diagonal(),
                                                lambda: self.coef_index), "bse")

    @cached_property
    def tvalues(self) -> pd.Series | pd.DataFrame:
        """Wald statistics params / bse (z, or t when the dispersion is estimated)."""
        b, se = self.flat_params, self.flat(self.bse)
        return self.like_params(b / se, "t" if self.use_t else "z")

    @property
    def zvalues(self) -> pd.Series | pd.DataFrame:
        """Alias of ``tvalues``."""
        return self.tvalues

    def flat(self, values: pd.Series | pd.DataFrame) -> np.ndarray:
        """Values shaped like ``params`` in the order of :attr:`coef_index`."""
        return values.to_numpy()

    def raw_bse(self) -> np.ndarray:
        """Standard errors of the estimable coefficients (level-major) from the solver's
        information, ``solver_inverse`` (no further pass over the data; along a separating
        direction the information vanishes), inf where it is singular: the separation
        check's symptom, without the warning ``bse`` gives."""
        inverse = self.solver_inverse
        if inverse is None:
            return np.full(self.n_equations * int(np.count_nonzero(self.estimable)), np.inf)
        var = inverse.diagonal()  # (no NaN or negative value reaches the sqrt: no errstate)
        return np.sqrt(np.where(np.isfinite(var), np.maximum(var, 0.0), np.inf))

    def critical_value(self, alpha: float) -> float:
        """The two-sided critical value of level ``alpha`` of the Wald statistics (normal, or
        Student's t on ``df_resid``)."""
        return float(stats.t.isf(alpha / 2, self.df_resid) if self.use_t
                     else stats.norm.isf(alpha / 2))

    @cached_property
    def pvalues(self) -> pd.Series | pd.DataFrame:
        """Two-sided p-values of ``tvalues`` (normal; Student t on df_resid when the dispersion
        is estimated)."""
        t = np.abs(self.flat(self.tvalues))
        p = 2 * (stats.t.sf(t, self.df_resid) if self.use_t else stats.norm.sf(t))
        return self.like_params(p, "pvalues")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Wald intervals ``params -+ q bse``: a DataFrame with columns ``lower`` and
        ``upper``, one row per label of :attr:`coef_index`."""
        if not (isinstance(alpha, (int, float, np.number)) and 0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        q = self.critical_value(alpha)
        b, se = self.flat_params, self.flat(self.bse)
        return pd.DataFrame({"lower": b - q * se, "upper": b + q * se}, index=self.coef_index)

    def aliased_note(self) -> str:
        """The summary note naming the aliased columns (``aliased``, a list of names)."""
        return f"Aliased (linearly dependent) columns with NaN estimates: " \
               f"{', '.join(self.aliased)}."

    def wald_test_terms(self) -> pd.DataFrame:
        """Joint Wald chi-squared test of each formula term (``C(race)``'s columns together,
        over every equation), with the covariance the fit reports (``cov_type``).

        Returns
        -------
        pandas.DataFrame
            Indexed by term (the intercept included): ``statistic``, ``df``, ``pvalue``.
            Array models have one term per column.
        """
        return wald_test_terms(self)

    # --- linear hypotheses (glmclass.results.hypothesis) ------------------------------------
    def wald_test(self, hypothesis, scalar: bool = True, use_f: bool = False
                  ) -> H.WaldTestResults:
        """Joint Wald test of linear constraints ``R b = q`` on the coefficients, with the
        covariance the fit reports (``cov_type``): R's ``car::linearHypothesis(fit, ...,
        test = "Chisq")``, statsmodels' ``wald_test(..., scalar=True)``.

        Parameters
        ----------
        hypothesis : str, list of str, dict, ndarray of shape (m, k) or tuple (R, q)
            Constraints in patsy's syntax over the design-column names: ``"x1 = x2"``,
            ``"x1 = 0, x2 + x3 = 1"``, ``"2*x1 - x2 = 0"``, ``"C(race)[T.2] = C(race)[T.3]"``
            (names are matched whole, longest first; a constraint without ``=`` is ``= 0``).
            A multinomial model names the coefficient of term ``x`` for level ``2`` as
            ``[2]x`` (or statsmodels' ``y2_x``). A dict ``{name: value}`` tests each name at
            its value; a matrix R has one column per coefficient in the order of
            :meth:`cov_params` (q = 0 unless given as ``(R, q)``). The text is parsed, never
            evaluated.
        scalar : bool
            Give the statistic as a float (True) or a (1, 1) array (statsmodels' old form).
        use_f : bool
            The F form: ``chi2 / m`` on ``m`` and ``df_resid`` degrees of freedom.

        Returns
        -------
        WaldTestResults
            ``statistic``, ``pvalue``, ``df`` (m), ``df_denom`` (F only), ``summary()``.

        Raises
        ------
        ValueError
            An unknown name, text that is not a linear constraint, linearly dependent
            constraints, or constraints on aliased (NaN) coefficients, naming them.
        """
        return H.wald_test(self, hypothesis, scalar=scalar, use_f=use_f)

    def t_test(self, hypothesis) -> H.TTestResults:
        """One Wald test per linear constraint (statsmodels' ``t_test``): the effect ``R b``,
        its standard error, the z statistic ``(R b - q) / sd`` (t on ``df_resid`` when
        ``use_t``), the two-sided p-value, ``conf_int()`` and ``summary_frame()``.

        Parameters
        ----------
        hypothesis : str, list of str, dict, ndarray or tuple (R, q)
            As :meth:`wald_test`.

        Returns
        -------
        TTestResults
        """
        return H.t_test(self, hypothesis)

    # --- R's drop1 (glmclass.results.deviance_tables) ----------------------------------------
    def drop1(self, test: str = "Chisq", k: float = 2.0) -> pd.DataFrame:
        """R's ``drop1(fit, test = "Chisq")``: each term left out in turn (marginality
        respected: a term inside a higher-order term is not dropped), refit on the same rows.

        Parameters
        ----------
        test : {"Chisq", "LRT", "F", "none"}
            The likelihood-ratio test of the scaled deviance change, the F test (families
            with an estimated dispersion), or none.
        k : float
            Weight of the degrees of freedom in the ``aic`` column.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``<none>`` and each droppable term: ``df``, ``deviance``, ``aic``,
            ``lrt`` (or ``F``) and ``pvalue``.

        Raises
        ------
        ValueError
            For fits that are not maximum-likelihood GLMs (MNLogit: compare nested fits
            with ``gc.anova``; Bayes, Firth: use Wald tests).
        """
        return DT.drop1(self, test=test, k=k)

    # --- statsmodels' vocabulary --------------------------------------------------------------
    @property
    def mle_retvals(self) -> dict:
        """What the optimiser returned, in statsmodels' names: ``converged``, ``iterations``,
        ``method`` and ``fopt`` (the minimised objective, ``-llf / nobs``)."""
        return {"converged": bool(self.converged), "iterations": int(self.n_iter),
                "method": vars(self).get("method"), "fopt": -float(self.llf) / float(self.nobs)}

    def remove_data(self) -> LikelihoodResults:
        """These results without the rows of the fit (statsmodels' ``remove_data``; what
        ``save(remove_data=True)`` keeps): estimates, inference, ``summary()``, ``predict`` on
        new data and Wald tests work, in-sample values raise. A new object: these results keep
        their rows."""
        return without_data(self)

    def summary2(self, alpha: float = 0.05) -> Summary:
        """The report in statsmodels' ``summary2`` layout: a title ``Results: <Model>``, the
        header items under statsmodels' names, and the coefficient table with columns
        ``Coef.``, ``Std.Err.``, ``z`` (or ``t``), ``P>|z|``, ``[0.025``, ``0.975]``;
        ``tables`` gives them as DataFrames, as statsmodels' ``summary2().tables``."""
        base = self.summary(alpha=alpha)
        header = [(SUMMARY2_NAMES.get(k, k), v) for k, v in base.header]
        sections = [(title, df.rename(columns=COLUMNS2)) for title, df in base.sections]
        return Summary(f"Results: {type(self.model).__name__}", header, sections, base.notes,
                       subtitle=base.subtitle)


#: statsmodels' summary2 names of the header items and table columns.
SUMMARY2_NAMES = {"Dep. Variable": "Dependent Variable", "Pseudo R-squ.": "Pseudo R-squared",
                  "LLR p-value": "LLR p-value", "Covariance Type": "Covariance Type",
                  "Df Residuals": "Df Residuals"}
COLUMNS2 = {"coef": "Coef.", "std err": "Std.Err."}
