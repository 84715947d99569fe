"""R's analysis of deviance of ONE GLM fit: the sequential table ``anova(fit, test = "Chisq")``
(:func:`sequential_anova`, reached as ``gc.anova(res)``) and ``drop1(fit, test = "Chisq")``
(:func:`drop1`, reached as ``res.drop1()``).

Both refit the model on subsets of the columns of its own design, as R's ``anova.glm`` and
``drop1.glm`` call ``glm.fit(x[, cols], ...)``: the same rows, response, prior weights and
offset, the same coding of every kept column. The refits run the package's IRLS over the
fit's row source (:meth:`~glmclass.models.glm_problem.GLMProblem.fit_rows`), so they work on
Dask data as on data in memory.

Terms are taken in R's order: by degree (main effects, then two-way interactions, ...), in
the order the formula writes them within a degree. ``drop1`` respects marginality as R's
``drop.scope``: a term is dropped only when no other term contains all of its factors.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., §4.4.
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, 4th ed., §6.8
and §7.2 (``anova``, ``drop1``, marginality).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import ConvergenceWarning
from ..families import Gaussian
from ..formula.parse import written_term_order
from ..likelihoods import GLMLikelihood, likelihood_of
from ..solvers.control import Control
from ..solvers.solve import solve
from .terms import term_columns

#: The tests each table offers (R's names; "LRT" is R's other name of "Chisq").
ANOVA_TESTS = ("Chisq", "LRT", "F")
DROP1_TESTS = ("Chisq", "LRT", "F", "none")


def _check(res, what: str, test: str, tests: tuple[str, ...]) -> None:
    if test not in tests:
        raise ValueError(f"{what}: test must be one of {', '.join(map(repr, tests))}, got "
                         f"{test!r}")
    if not isinstance(likelihood_of(res.model), GLMLikelihood):
        raise ValueError(f"{what} of one fit is R's table for a GLM; for a "
                         f"{type(res.model).__name__} compare nested fits with "
                         "gc.anova(smaller, larger) or gc.lrtest")
    if not res.maximum_likelihood:
        raise ValueError(f"{what}: a {type(res.model).__name__} fit does not maximise the "
                         "likelihood, so deviance differences between refits do not test "
                         "its terms; use wald_test_terms() or wald_test()")
    if getattr(res, "data_removed", False):  # saved with remove_data=True
        raise ValueError(f"{what} refits the model on its rows, which these results were "
                         "saved without (remove_data=True); load results saved with their "
                         "data, or fit the model again")
    if test == "F" and res.model.family.fixed_scale:
        raise ValueError(f"{what}: test='F' is for families with an estimated dispersion "
                         f"(Gaussian, Gamma); the {type(res.model.family).__name__} family "
                         "has dispersion 1: use test='Chisq'")


def ordered_terms(res) -> list[tuple[str, list[int], frozenset]]:
    """The non-intercept terms of the fit in R's order: (name, design columns, factors).

    Array models have one term per column, each its own factor, in column order."""
    data = res.model.data
    cols = term_columns(data)
    spec = data.spec
    if spec is None:
        return [(t, c, frozenset([t])) for t, c in cols.items()
                if c != [data.intercept_index]]
    if spec.engine == "formulaic":  # patsy's term names: factor codes joined by ':'
        factors = {t: frozenset(t.split(":")) if t != "Intercept" else frozenset()
                   for t in cols}
    else:
        factors = {t.name(): frozenset(f.code for f in t.factors)
                   for t in spec.design_info.terms}
    frame = data.frame
    written = written_term_order(spec.formula, [] if frame is None else list(frame.columns))
    terms = [(t, c, factors.get(t, frozenset([t]))) for t, c in cols.items()
             if factors.get(t, frozenset([t]))]  # the intercept has no factor

    def key(item: tuple) -> tuple[int, int]:
        name, _, fac = item
        return len(fac), written.get(name, len(written))

    return sorted(terms, key=key)  # stable: design order where the formula says nothing


def _refit(res, cols: list[int]) -> tuple[float, int]:
    """Deviance and rank of the GLM on the design columns ``cols`` (sorted) of the fit."""
    if not cols:
        return float(res.null_deviance), 0
    problem = res.model.problem
    rows = problem.fit_rows().take_columns(np.asarray(cols, dtype=np.intp))
    icpt = res.model.data.intercept_index
    at = cols.index(icpt) if icpt in cols else None
    fit = solve(problem.family, rows, Control.for_method("irls"), intercept=at)
    if not fit.converged:
        warnings.warn(f"the refit on {len(cols)} of the design's columns did not converge "
                      f"({fit.message}); its deviance is the last iterate's",
                      ConvergenceWarning, stacklevel=4)
    return float(fit.deviance), int(np.count_nonzero(~fit.aliased))


def _with_intercept(res, cols) -> list[int]:
    icpt = res.model.data.intercept_index
    return sorted(set(cols) | ({icpt} if icpt is not None else set()))


def sequential_anova(res, test: str = "Chisq") -> pd.DataFrame:
    """R's ``anova(fit, test = "Chisq")`` of one GLM: the terms added one at a time.

    Parameters
    ----------
    res : GLMResults
        A maximum-likelihood GLM, Logit or Probit fit.
    test : {"Chisq", "LRT", "F"}
        The chi-squared test of ``deviance / dispersion`` (the dispersion of the full model:
        1 for the binomial and Poisson families), or (estimated dispersion only) the F test
        ``deviance / df / dispersion`` on ``df`` and the fit's ``df_resid``.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``NULL`` and then each term in R's order: ``df`` (parameters the term
        adds), ``deviance`` (deviance it removes), ``df_resid`` and ``resid_deviance`` after
        adding it, (``F``,) ``pvalue``. The first row is the intercept-only model.

    Raises
    ------
    ValueError
        A fit that is not a maximum-likelihood GLM, or an unknown ``test``.
    """
    _check(res, "anova", test, ANOVA_TESTS)
    terms = ordered_terms(res)
    icpt = res.model.data.intercept_index
    rank0 = 1 if icpt is not None else 0
    dev, rank = [float(res.null_deviance)], [rank0]
    used: list[int] = []
    everything = sorted(c for _, cols, _ in terms for c in cols) + (
        [] if icpt is None else [icpt])
    for i, (_, cols, _) in enumerate(terms):
        used += cols
        if i == len(terms) - 1 and sorted(everything) == _with_intercept(res, used):
            dev.append(float(res.deviance))
            rank.append(int(res.rank))
        else:
            d, r = _refit(res, _with_intercept(res, used))
            dev.append(d)
            rank.append(r)
    dev_a, rank_a = np.array(dev), np.array(rank, dtype=float)
    df_null = float(res.df_resid) + float(res.rank) - rank0
    df = np.r_[np.nan, np.diff(rank_a)]
    removed = np.r_[np.nan, -np.diff(dev_a)]
    phi = float(res.scale)
    table = {"df": df, "deviance": removed, "df_resid": df_null - (rank_a - rank0),
             "resid_deviance": dev_a}
    with np.errstate(invalid="ignore", divide="ignore"):
        if test == "F":
            F = removed / df / phi
            F[~(df > 0)] = np.nan
            table["F"] = F
            table["pvalue"] = stats.f.sf(F, df, float(res.df_resid))
        else:
            p = stats.chi2.sf(removed / phi, df)
            p[~(df > 0)] = np.nan
            table["pvalue"] = p
    return pd.DataFrame(table, index=pd.Index(["NULL"] + [t for t, _, _ in terms],
                                              name="term"))


def droppable(terms: list[tuple[str, list[int], frozenset]]) -> list[int]:
    """Positions of the terms no other term contains (R's ``drop.scope``)."""
    return [i for i, (_, _, fac) in enumerate(terms)
            if not any(j != i and fac < other for j, (_, _, other) in enumerate(terms))]


def drop1(res, test: str = "Chisq", k: float = 2.0) -> pd.DataFrame:
    """R's ``drop1(fit, test = "Chisq")`` of one GLM: each term left out in turn, marginality
    respected (a main effect inside an interaction is not dropped).

    Parameters
    ----------
    res : GLMResults
        A maximum-likelihood GLM, Logit or Probit fit.
    test : {"Chisq", "LRT", "F", "none"}
        The likelihood-ratio test of the scaled deviance change (R's ``LRT`` column: the
        change in ``deviance / dispersion``; for the Gaussian family ``n log(deviance / n)``),
        the F test (estimated dispersion only), or no test.
    k : float
        The weight of the degrees of freedom in the AIC column (2; ``log(n)`` gives BIC's).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``<none>`` (the fit) and each droppable term: ``df`` (parameters dropped),
        ``deviance`` (of the model without the term), ``aic``, then ``lrt`` and ``pvalue``
        (or ``F`` and ``pvalue``).

    Raises
    ------
    ValueError
        A fit that is not a maximum-likelihood GLM, or an unknown ``test``.
    """
    _check(res, "drop1", test, DROP1_TESTS)
    terms = ordered_terms(res)
    scope = [terms[i] for i in droppable(terms)]
    p = len(res.model.exog_names)
    dev, rank = [float(res.deviance)], [float(res.rank)]
    for _, cols, _ in scope:
        d, r = _refit(res, [c for c in range(p) if c not in set(cols)])
        dev.append(d)
        rank.append(float(r))
    dev_a, rank_a = np.array(dev), np.array(rank)
    n = float(res.model.data.nrows)
    if isinstance(res.model.family, Gaussian):  # R: the scale profiled out
        loglik = n * np.log(dev_a / n)
    else:
        loglik = dev_a / float(res.scale)
    aic = loglik + k * rank_a
    aic = aic + (float(res.aic) + (k - 2.0) * rank_a[0] - aic[0])  # R's extractAIC
    df = np.r_[np.nan, rank_a[0] - rank_a[1:]]
    table = {"df": df, "deviance": dev_a, "aic": aic}
    with np.errstate(invalid="ignore", divide="ignore"):
        if test in ("Chisq", "LRT"):
            lrt = np.r_[np.nan, np.maximum(0.0, loglik[1:] - loglik[0])]
            table["lrt"] = lrt
            table["pvalue"] = stats.chi2.sf(lrt, df)
        elif test == "F":
            rdf = float(res.df_resid)
            rms = dev_a[0] / rdf
            F = np.r_[np.nan, np.maximum(0.0, dev_a[1:] - dev_a[0])] / df / rms
            F[~(df >= 1e-4)] = np.nan
            table["F"] = F
            table["pvalue"] = stats.f.sf(F, df, rdf)
    return pd.DataFrame(table, index=pd.Index(["<none>"] + [t for t, _, _ in scope],
                                              name="term"))
