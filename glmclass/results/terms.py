"""Formula terms of a fitted model and the Wald test of each (``results.wald_test_terms()``).

A term is what a formula adds with ``+``: ``age``, ``C(race)`` (one column per non-reference
level), ``age:smoke``, ``I(age ** 2)``. Its columns are tested jointly: the statistic
``b' V^-1 b`` over the term's estimable coefficients (and, for a multinomial logit, over every
non-reference level), with V the covariance the fit reports (``cov_type``), is chi-squared on
as many degrees of freedom as coefficients. Array models have one term per column.

References
----------
Fox, J. and Weisberg, S. (2019). *An R Companion to Applied Regression*, 3rd ed., §5.3
(``car::Anova(test.statistic = "Wald")``, ``linearHypothesis``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .hypothesis import quadratic_form


def term_columns(data) -> dict[str, list[int]]:
    """Design-column positions of each formula term, in formula order (array models: one
    term per column)."""
    spec = data.spec
    names = data.exog_names
    if spec is None:
        return {name: [j] for j, name in enumerate(names)}
    out = {}
    if spec.engine == "formulaic":  # patsy's term name of each column of the engine's matrix
        offsets = set(spec.offset_positions)
        terms = [t for j, t in enumerate(spec.terms) if j not in offsets]
        for c, term in zip(spec.column_names, terms, strict=True):
            if c in names:
                out.setdefault(term, []).append(names.index(c))
        return out
    for term, sl in spec.design_info.term_name_slices.items():
        cols = [names.index(c) for c in spec.column_names[sl] if c in names]
        if cols:  # a generative model's dropped intercept has none
            out[term] = cols
    return out


def wald_test_terms(res) -> pd.DataFrame:
    """Joint Wald chi-squared test of each formula term (see the module docstring).

    Parameters
    ----------
    res : LikelihoodResults
        Read through its public names: ``flat_params`` and ``cov_values`` (level-major over
        the equations), ``estimable`` and ``model.data``.

    Returns
    -------
    pandas.DataFrame
        Indexed by term: ``statistic``, ``df`` (the number of estimable coefficients tested)
        and ``pvalue``. A term whose coefficients are all aliased has df 0 and NaN.
    """
    flat = res.flat_params  # level-major over the equations, the order of cov_values
    cov = res.cov_values
    keep = res.estimable
    p = keep.size
    n_levels = flat.size // p  # the number of equations (non-reference levels)
    rows = []
    for term, cols in term_columns(res.model.data).items():
        pos = [lv * p + c for lv in range(n_levels) for c in cols if keep[c]]
        rows.append((term, *_wald(flat[pos], cov[np.ix_(pos, pos)])))
    frame = pd.DataFrame(rows, columns=["term", "statistic", "df", "pvalue"])
    return frame.set_index("term")


def _wald(b: np.ndarray, V: np.ndarray) -> tuple[float, int, float]:
    """b' V^-1 b, its degrees of freedom and p-value (NaN when V is not positive definite)."""
    k = b.size
    w = quadratic_form(b, V)
    return w, k, float(stats.chi2.sf(w, k)) if np.isfinite(w) else np.nan
