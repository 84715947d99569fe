"""The words a statsmodels or R user types first, answered on every model.

Two things live here:

- the likelihood of a model at any parameters, ``model.loglike(params)``, ``score``,
  ``hessian`` and ``information`` (statsmodels' ``LikelihoodModel`` methods), as reductions of
  the likelihood contract (:class:`glmclass.likelihoods.base.Likelihood`) over the model's row
  source, in memory or in Dask partitions alike;
- the spellings of other libraries (statsmodels' ``priors=``, ``exposure=`` on a logit,
  ``method="l1"`` in ``fit_regularized``, a model option given to ``fit``): a TypeError that
  names the model, the argument and the glmclass equivalent, instead of Python's message about
  a private method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from ..likelihoods.base import Likelihood
from ..likelihoods.glm import GLMLikelihood
from ..rows.blocks import Block, RowBlocks

# --- the likelihood at any parameters ---------------------------------------------------------


def flat_params(lik: Likelihood, params, k: int) -> np.ndarray:
    """``params`` as a flat equation-major vector of ``n_equations * k`` floats (a Series, a
    (k, n_equations) DataFrame or array, or a flat vector); NaN entries (aliased columns)
    count as 0, as R's predictions treat them.

    Raises
    ------
    ValueError
        When the shape fits neither form, naming both.
    """
    B = lik.coef_matrix(np.asarray(params, dtype=float), k)
    return np.nan_to_num(B.T.ravel(), nan=0.0)


def _sum(rows: RowBlocks, fn: Callable[[Block], np.ndarray], zero):
    return rows.reduce(fn, zero)


def _mle_scale(lik: Likelihood, rows: RowBlocks, params: np.ndarray) -> float:
    """The dispersion at its maximum-likelihood value, the weighted deviance over the number
    of rows (R's ``logLik`` of a Gaussian GLM)."""
    fam = lik.family

    def part(b: Block) -> np.ndarray:
        eta = lik.linear_predictor(b.X, params, b.offset)[:, 0]
        dev = np.where(b.weights > 0, b.weights * fam.unit_deviance(b.y, eta), 0.0)
        n = b.freq_weights.sum() if b.freq_weights is not None else np.count_nonzero(
            b.weights > 0)
        return np.array([dev.sum(), n])

    dev, n = _sum(rows, part, np.zeros(2))
    return float(dev / n)


def loglike(lik: Likelihood, rows: RowBlocks, params, scale: float | None = None) -> float:
    """Sum of the rows' log-likelihood terms at ``params`` (see :func:`flat_params`);
    ``scale``: the dispersion of a family that estimates one (default its maximum-likelihood
    value at ``params``)."""
    b = flat_params(lik, params, rows.n_cols)
    if isinstance(lik, GLMLikelihood) and not lik.family.fixed_scale:
        lik = GLMLikelihood(lik.family, _mle_scale(lik, rows, b) if scale is None else scale)

    def part(block: Block) -> float:
        ll = lik.loglike_obs(block, b)
        return float(np.sum(np.where(block.weights > 0, ll, 0.0)))

    return float(_sum(rows, part, 0.0))


def score(lik: Likelihood, rows: RowBlocks, params) -> np.ndarray:
    """Gradient of the log-likelihood at ``params`` (dispersion 1), flat equation-major."""
    b = flat_params(lik, params, rows.n_cols)
    return _sum(rows, lambda block: lik.score_obs(block, b).sum(axis=0), np.zeros(b.size))


def hessian(lik: Likelihood, rows: RowBlocks, params, observed: bool = True) -> np.ndarray:
    """Second derivatives of the log-likelihood at ``params`` (dispersion 1), equation-major
    ``(n_equations k, n_equations k)``: ``-sum_i x_i' W_i x_i`` with the rows' observed (or,
    ``observed=False``, expected) weights."""
    b = flat_params(lik, params, rows.n_cols)
    k, m = rows.n_cols, lik.n_equations

    def part(block: Block) -> np.ndarray:
        W = lik.weights(block, b, observed=observed)
        X = block.X
        if W.ndim == 1:
            return -(X.T @ (X * W[:, None]))
        return -np.einsum("rjl,ra,rb->jalb", W, X, X).reshape(m * k, m * k)

    return _sum(rows, part, np.zeros((m * k, m * k)))


# --- other libraries' spellings ---------------------------------------------------------------

#: Regularised fits: statsmodels' arguments and what glmclass does instead.
ALPHA_SCALING = ("glmclass scales alpha as glmnet: it minimises -llf/n + alpha * penalty with "
                 "the intercept unpenalised, while statsmodels' fit_regularized(method='l1') "
                 "minimises -llf + alpha * penalty and penalises the intercept; so "
                 "alpha_glmclass = alpha_statsmodels / n")
REGULARIZED_HINTS = {
    "method": "fit_regularized has one method, coordinate descent on glmnet's objective (no "
              "method= argument); " + ALPHA_SCALING,
    "refit": "to refit the selected columns without penalty, fit the model again on the "
             "columns whose coefficients are not zero (or use regularization_path(...)."
             "refit(...))",
    "trim_mode": "glmclass's lasso gives exact zeros, so nothing needs trimming (no "
                 "trim_mode=, size_trim_tol= or qc_tol=)",
    "size_trim_tol": "glmclass's lasso gives exact zeros: there is nothing to trim",
    "qc_tol": "glmclass's lasso gives exact zeros: there is no quality check to tune",
    "auto_trim_tol": "glmclass's lasso gives exact zeros: there is nothing to trim",
    "disp": "no progress printing here; see regularization_path(..., disp=True)",
}


def _constructor_hint(arg: str, model: str, takes: set[str], fit_args: set[str]) -> str:
    """What to use instead of constructor argument ``arg`` of ``model``."""
    if arg in fit_args:
        return f"{arg}= is an option of fit(), not of the model: {model}(...).fit({arg}=...)"
    if arg == "priors" and "prior" in takes:
        return "use prior= (class priors, R MASS's spelling)"
    if arg == "exposure":
        hint = ("exposure= adds log(exposure) to the linear predictor, which needs a log "
                "link: use gc.GLM(..., family=gc.families.Poisson(), exposure=...)")
        return hint + (", or offset= for a known shift of the linear predictor"
                       if "offset" in takes else "")
    if arg in ("freq_weights", "var_weights", "weights", "sample_weight"):
        if "freq_weights" in takes:
            return "use freq_weights= (case counts) or var_weights= (binomial trials)"
        return (f"{model} is fit without weights: repeat each row by its count "
                "(df.loc[df.index.repeat(counts)]) instead")
    if arg == "subset":
        return ("subset= selects rows in from_formula(formula, data, subset=...); with arrays, "
                "select the rows before building the model")
    if arg == "family":
        return f"{model} has a fixed family: use gc.GLM(..., family=...) for another"
    return ""


def unknown_constructor_args(model: str, unknown: Iterable[str], takes: Iterable[str],
                             fit_args: Iterable[str]) -> TypeError:
    """The TypeError for constructor arguments the model does not take, each with the glmclass
    equivalent."""
    takes, fit_args = set(takes), set(fit_args)
    lines = []
    for arg in unknown:
        hint = _constructor_hint(arg, model, takes, fit_args)
        lines.append(f"{model} does not take {arg}=" + (f": {hint}" if hint else ""))
    return TypeError("; ".join(lines) + f". {model} takes: {', '.join(sorted(takes))}")


def unknown_fit_args(model: str, method: str, unknown: Iterable[str], takes: Iterable[str],
                     model_args: Iterable[str]) -> TypeError:
    """The TypeError for arguments of ``model.method(...)`` it does not take: a model option
    given to ``fit`` points to the constructor; statsmodels' regularisation options to what
    glmclass does."""
    model_args = set(model_args)
    lines = []
    for arg in unknown:
        if arg in model_args:
            hint = (f"{arg}= is an argument of the model, not of {method}(): "
                    f"{model}(endog, exog, {arg}=...) or {model}.from_formula(formula, data, "
                    f"{arg}=...)")
        elif method == "fit_regularized" and arg in REGULARIZED_HINTS:
            hint = REGULARIZED_HINTS[arg]
        else:
            hint = ""
        lines.append(f"{model}.{method}() does not take {arg}=" + (f": {hint}" if hint else ""))
    return TypeError("; ".join(lines) + f". {method}() takes: {', '.join(takes)}")
