"""Likelihood-ratio tests and analysis-of-deviance tables for nested fits (R's ``lmtest::
lrtest`` and ``anova(..., test = "Chisq")``).

Both refuse what they cannot test: fits to different rows (data, missing-value drops or
weights) or of different responses, Bayesian posterior modes, and models that are not
nested in their parameter counts. They do not check that the smaller model's columns span a
subspace of the larger one's (a formula can reach the same space with other columns); that
is the caller's claim, as in R.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., §4.4.
Zeileis, A. and Hothorn, T. (2002). Diagnostic checking in regression relationships.
*R News* 2(3) (``lmtest::lrtest``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import GlmclassWarning
from ..families import Family
from ..likelihoods import GLMLikelihood, likelihood_of
from ..summary import keyed_table
from .bayes import BayesGLMResults
from .dask import same_rows
from .deviance_tables import sequential_anova
from .firth import FirthResults
from .mixed import MixedGLMResults
from .regularized import RegularizedMNLogitResults, RegularizedResults


@dataclass(frozen=True)
class LRTestResults:
    """A likelihood-ratio test of a restricted model against a fuller one.

    Attributes
    ----------
    statistic : float
        ``2 (llf_full - llf_restricted)``.
    df : float
        Difference in the number of estimated parameters.
    pvalue : float
        Upper tail of the chi-squared distribution with ``df`` degrees of freedom.
    note : str
        What the numbers rest on when mixed models are compared: a fit by adaptive
        quadrature enters with its ``llf_marginal``; a variance tested at its boundary makes the
        p-value conservative. Empty otherwise.
    """

    statistic: float
    df: float
    pvalue: float
    note: str = ""

    def __str__(self) -> str:
        text = (f"Likelihood-ratio test: chi2 = {self.statistic:.6g} on {self.df:g} df, "
                f"p-value = {self.pvalue:.4g}")
        return f"{text}\nNote: {self.note}" if self.note else text


def comparison_llf(res) -> float:
    """The log-likelihood a comparison of fits uses: a mixed fit's ``llf_marginal`` (its ``llf``
    with the saturated constant that lme4 leaves out of ``nAGQ > 1`` fits), else ``llf``.

    Parameters
    ----------
    res : results

    Returns
    -------
    float
    """
    return float(res.llf_marginal) if isinstance(res, MixedGLMResults) else float(res.llf)


def mixed_notes(results: Sequence, tested: bool = True) -> list[str]:
    """What a comparison of fits that include mixed models must say.

    Parameters
    ----------
    results : sequence of results
        From the smallest model to the largest when ``tested``.
    tested : bool
        A likelihood-ratio test (the boundary note applies) rather than a table of criteria.

    Returns
    -------
    list of str
        Empty without mixed fits.
    """
    mixed = [r for r in results if isinstance(r, MixedGLMResults)]
    notes = []
    quad = sorted({int(r.nagq) for r in mixed if r.nagq > 1})
    if quad:
        notes.append(f"the log-likelihood of the adaptive-quadrature fit (nAGQ = "
                     f"{', '.join(map(str, quad))}) includes the saturated log-likelihood that "
                     "lme4's logLik leaves out, so it is on the footing of the others (lme4's "
                     "anova refuses a glm against such a fit)")
    n_theta = [r.theta.size if isinstance(r, MixedGLMResults) else 0 for r in results]
    if tested and any(b > a for a, b in zip(n_theta, n_theta[1:], strict=False)):
        notes.append("random-effect variances are tested at their boundary (0): the "
                     "chi-squared p-value is conservative (for one variance the right "
                     "p-value is half of it)")
    return notes


def _check_results(results: Sequence, what: str) -> None:
    """Every fit a maximum-likelihood fit of the same response on the same rows."""
    for i, r in enumerate(results, 1):
        if not all(hasattr(r, a) for a in ("llf", "k_params", "nobs", "rows_fingerprint", "model")):
            raise TypeError(f"{what}: argument {i} is not a fitted glmclass model (got "
                            f"{type(r).__name__}); pass results of .fit()")
        if isinstance(r, BayesGLMResults):
            raise ValueError(f"{what}: model {i} is a Bayesian fit: its llf is at the "
                             "posterior mode, not a maximum of the likelihood; compare "
                             "Bayesian models by log_evidence (gc.compare)")
        if isinstance(r, FirthResults):
            raise ValueError(f"{what}: model {i} is a FirthLogit fit: its llf is not a maximum "
                             "of the likelihood, so likelihood-ratio tests between fits do not "
                             "apply; use its penalised likelihood-ratio tests (plr_test(), "
                             "llr_pvalue) or Wald tests (wald_test_terms())")
        if isinstance(r, (RegularizedResults, RegularizedMNLogitResults)):
            raise ValueError(f"{what}: model {i} is a penalised fit (fit_regularized): its llf "
                             "is not a maximum of the likelihood, so likelihood-ratio tests do "
                             "not apply; refit the selected columns by maximum likelihood "
                             "(path.refit(...) or .fit()) and test those fits")
    first = results[0]
    for i, r in enumerate(results[1:], 2):
        _check_same_family(first, r, i, what)
        if not same_rows(first, r):
            raise ValueError(
                f"{what}: model {i} was fit to different rows than model 1 ({r.nobs:g} and "
                f"{first.nobs:g} observations, or other rows or weights; missing values in "
                "a column only one formula uses drop different rows); fit both to the same "
                "rows, e.g. data.dropna(subset=[...every column either model uses...])")
        if not _same_response(first, r):
            raise ValueError(f"{what}: model {i} has a different response than model 1; "
                             "the likelihoods of different responses cannot be compared")


def _glm_family(res) -> Family | None:
    """The family of a GLM-type fit (None for other likelihoods)."""
    try:
        lik = likelihood_of(res.model)
    except TypeError:
        return None
    return lik.family if isinstance(lik, GLMLikelihood) else None


def _check_same_family(first, other, i: int, what: str) -> None:
    """GLMs of different families or links are not nested: their likelihood-ratio statistic has
    no chi-squared distribution (a logit against a probit is not a test of anything)."""
    fa, fb = _glm_family(first), _glm_family(other)
    if fa is None or fb is None:
        return
    if type(fa) is not type(fb) or fa.link.name != fb.link.name:
        raise ValueError(f"{what}: model 1 is a {fa.name} GLM with the {fa.link.name} link and "
                         f"model {i} a {fb.name} GLM with the {fb.link.name} link: the models "
                         "are not nested, so the likelihood-ratio test does not apply; compare "
                         "them by AIC/BIC (gc.compare)")


def _same_response(ra, rb) -> bool:
    """The same response column (its values; on Dask data, where the response stays in the
    partitions, or for results saved without their rows, its name: the rows are checked the
    same)."""
    a, b = ra.model, rb.model
    if not (a.data.in_memory and b.data.in_memory) or ra.data_removed or rb.data_removed:
        return a.data.endog_name == b.data.endog_name
    ya, yb = a.data.endog, b.data.endog
    try:
        return bool(np.array_equal(np.asarray(ya, dtype=object), np.asarray(yb, dtype=object)))
    except (TypeError, ValueError):  # pragma: no cover - exotic label types
        return False


def lrtest(restricted, full) -> LRTestResults:
    """Likelihood-ratio test of a restricted model against a fuller one (R ``lmtest::lrtest``).

    Parameters
    ----------
    restricted, full : results
        Maximum-likelihood fits (GLM, Logit, Probit, MNLogit, ...) of the same response on
        the same rows; ``restricted`` with fewer parameters.

    Returns
    -------
    LRTestResults
        ``statistic = 2 (llf_full - llf_restricted)``, ``df`` the difference in estimated
        parameters (the dispersion of a Gaussian GLM counts in both), ``pvalue`` from the
        chi-squared distribution. Mixed fits (:class:`~glmclass.MixedGLM`) enter with
        ``llf_marginal``, on a GLM's footing also for ``nagq > 1`` (lme4's ``anova`` refuses a
        ``glm`` against those), and ``note`` says what applies.

    Raises
    ------
    ValueError
        When the fits used different rows or responses, or ``restricted`` does not have fewer
        parameters than ``full`` (the message says which).
    """
    _check_results([restricted, full], "lrtest")
    _check_nested(restricted, full)
    k0, k1 = restricted.k_params, full.k_params
    if not k0 < k1:
        raise ValueError(f"lrtest: the restricted model has {k0} parameters and the full model "
                         f"{k1}; the first must have fewer (call lrtest(restricted, full))")
    stat = 2.0 * (comparison_llf(full) - comparison_llf(restricted))
    _warn_negative(stat, comparison_llf(full), "lrtest")
    df = float(k1 - k0)
    return LRTestResults(float(stat), df, float(stats.chi2.sf(stat, df)),
                         "; ".join(mixed_notes([restricted, full])))


def _check_nested(restricted, full) -> None:
    """Refuse two fits whose likelihoods say they cannot be nested (e.g. an ordinal model and
    a multinomial logit of the same response)."""
    try:
        a, b = likelihood_of(restricted.model), likelihood_of(full.model)
    except TypeError:  # models without a likelihood object: nesting is the caller's claim
        return
    if a.nested_with(b) is False or b.nested_with(a) is False:
        names = f"{type(restricted.model).__name__} and {type(full.model).__name__}"
        raise ValueError(f"lrtest: the {names} fits are not nested (neither model is a "
                         "restriction of the other), so the likelihood-ratio statistic has no "
                         "chi-squared distribution; compare them by AIC/BIC with gc.compare")


def _warn_negative(stat: float, llf: float, what: str) -> None:
    if stat < -1e-8 * max(1.0, abs(llf)):
        warnings.warn(f"{what}: the larger model fits worse than the smaller one "
                      f"(statistic {stat:.4g} < 0): the models are not nested, or a fit did "
                      "not converge", GlmclassWarning, stacklevel=3)


class _AnovaTable(pd.DataFrame):
    """The DataFrame :func:`anova` of two or more fits returns, printed to fit a terminal.

    Its rows are indexed by the model names (the formulas by default): ``table.loc[formula]``
    works. Printed, when the names make the table wider than 80 columns, the rows are numbered
    ``[1]``, ``[2]``, ... with the names listed above the table as a key (as R's ``anova`` and
    :func:`glmclass.compare` do), so pandas never hides columns behind a long formula.
    Frames derived from it are plain DataFrames.
    """

    @property
    def _constructor(self):
        return pd.DataFrame

    def to_text(self, width: int = 80) -> str:
        """The table as text at most ``width`` columns wide (what ``print(table)`` shows)."""
        lines = keyed_table(pd.DataFrame(self), width)
        lines += [f"Note: {n}" for n in self.attrs.get("notes", [])]
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return self.to_text()

    def __str__(self) -> str:
        return self.to_text()


def _names(results: Sequence, names: Sequence[str] | None) -> list[str]:
    if names is None:
        names = [getattr(r, "formula", None) or f"model {i}" for i, r in enumerate(results, 1)]
    names = [str(n) for n in names]
    if len(names) != len(results):
        raise ValueError(f"anova: {len(names)} names for {len(results)} models")
    return [f"{n} [{i}]" if names.count(n) > 1 else n for i, n in enumerate(names, 1)]


def anova(*results, test: str = "Chisq", names: Sequence[str] | None = None) -> pd.DataFrame:
    """Analysis of deviance of nested fits, R's ``anova(m1, m2, ..., test = "Chisq")``; of
    one GLM fit, R's sequential table ``anova(fit, test = "Chisq")``.

    Parameters
    ----------
    *results : results
        Two or more maximum-likelihood fits of the same response on the same rows, from the
        smallest to the largest, each with more parameters than the one before. One GLM fit
        gives the sequential table instead: each formula term added in turn (R's order: by
        degree, then as written), refit on the same rows
        (:func:`~glmclass.results.deviance_tables.sequential_anova`): rows ``NULL`` and one
        per term, columns ``df``, ``deviance``, ``df_resid``, ``resid_deviance``, ``pvalue``.
    test : {"Chisq", "LRT"}
        The chi-squared test of the scaled deviance differences (R's two names for it); one
        fit with an estimated dispersion also takes ``"F"``.
    names : sequence of str, optional
        Row labels; default the formulas (``model 1``, ... without one).

    Returns
    -------
    pandas.DataFrame
        One row per model (indexed by name; printed as ``[1]``, ``[2]`` with a
        key when the names are long): ``df_resid``, ``deviance`` (residual), and for every
        model after
        the first ``df`` (parameters added), ``deviance_diff`` (deviance removed) and
        ``pvalue``: ``P(chi2_df > deviance_diff / phi)`` with phi the dispersion of the
        largest model (1 for the binomial and Poisson families, as R). With a mixed fit,
        ``deviance`` is ``-2 llf_marginal`` of every model (lme4's ``anova``), and
        ``attrs["notes"]`` (printed under the table) says what the test rests on.

    Raises
    ------
    ValueError
        Fewer than two fits, fits to different rows or responses, or a model without more
        parameters than the one before it (the message names both).
    """
    if len(results) == 1 and isinstance(results[0], (list, tuple)):
        results = tuple(results[0])
    if len(results) == 1:  # R's anova(fit): the terms of one fit, added in turn
        _check_results(results, "anova")
        if names is not None:
            raise ValueError("anova of one fit labels its rows by term; names= is for "
                             "two or more fits")
        return sequential_anova(results[0], test=test)
    if test not in ("Chisq", "LRT"):
        raise ValueError(f"anova: test must be 'Chisq' (or its alias 'LRT'), got {test!r}")
    if len(results) < 2:
        raise ValueError("anova needs one fitted GLM (the sequential table of its terms) or "
                         "two or more fitted models, from the smallest to the largest")
    _check_results(results, "anova")
    for i in range(1, len(results)):
        k0, k1 = results[i - 1].k_params, results[i].k_params
        if not k0 < k1:
            raise ValueError(
                f"anova: model {i + 1} has {k1} parameters and model {i} has {k0}; list the "
                "models from the smallest to the largest, each with more parameters than the "
                "one before")
    # lme4's anova of mixed models compares -2 llf (a GLMM's deviance is conditional on the
    # modes); for GLMs of one response the deviance differences are the same numbers
    mixed = any(isinstance(r, MixedGLMResults) for r in results)
    dev = np.array([-2.0 * comparison_llf(r) if mixed else float(r.deviance) for r in results])
    df_resid = np.array([float(r.df_resid) for r in results])
    biggest = results[int(np.argmin(df_resid))]
    phi = float(getattr(biggest, "scale", 1.0))
    df = np.r_[np.nan, -np.diff(df_resid)]
    diff = np.r_[np.nan, -np.diff(dev)]
    for d in diff[1:]:
        _warn_negative(d, dev[-1] / 2.0, "anova")
    with np.errstate(invalid="ignore"):
        p = np.r_[np.nan, stats.chi2.sf(diff[1:] / phi, df[1:])]
    table = _AnovaTable({"df_resid": df_resid, "deviance": dev, "df": df,
                        "deviance_diff": diff, "pvalue": p},
                       index=pd.Index(_names(results, names), name="model"))
    table.attrs["notes"] = mixed_notes(results)
    return table
