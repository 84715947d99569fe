"""The words a statsmodels or R user types first, answered on every model.

The likelihood of a model at any parameters (``model.loglike(params)``, ``score``,
``hessian``, ``information``) is a reduction of the likelihood contract over the model's row
source, :mod:`glmclass.likelihoods.totals`. What lives here are the spellings of other
libraries (statsmodels' ``priors=``, ``exposure=`` on a logit, ``method="l1"`` in
``fit_regularized``, a fit option given to the model): a TypeError that names the model, the
argument and the glmclass equivalent, instead of Python's message about a private method.
"""

from __future__ import annotations

from collections.abc import Iterable

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
