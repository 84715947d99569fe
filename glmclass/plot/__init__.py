"""Plots of fitted models (matplotlib, the ``plot`` extra: ``pip install "glmclass[plot]"``).

Every function takes a results object (or what its docstring says), draws on ``ax`` or on a new
figure's axes (constrained layout, so nothing is cut off by ``savefig``) when ``ax`` is None,
and returns the :class:`matplotlib.axes.Axes`. matplotlib is
imported when a function is first called, never by ``import glmclass``.

================================  ==========================================================
:func:`decision_boundary`         any classifier of two features, the posterior as colours
:func:`roc`                       ROC curve with its AUC (:func:`roc_curve`, :func:`roc_auc`)
:func:`calibration`               reliability curve with counts (:func:`calibration_table`)
:func:`coefficients`              forest plot of estimates and intervals, odds ratios
:func:`evidence_curve`            BayesLogit's Laplace evidence against the prior precision
:func:`discriminant_projection`   Fisher / LDA discriminant coordinates by class
:func:`loss_history`              loss per iteration or epoch of gradient fits
:func:`laplace_density`           a 1-D density against its Laplace approximation
:func:`regularization_path`       coefficients against the penalty, named at the right edge
:func:`cv_curve`                  cross-validated deviance against the penalty
:func:`influence`                 studentized residuals against leverage, sized by Cook's D
:func:`binned_residuals`          mean residual per bin with +-2 SE bands (arm::binnedplot)
================================  ==========================================================

Examples
--------
>>> import glmclass as gc
>>> import glmclass.formula.api as gcf
>>> from statsmodels.datasets import spector
>>> df = spector.load_pandas().data
>>> res = gcf.logit("GRADE ~ GPA + PSI", df).fit()
>>> ax = gc.plot.decision_boundary(res, df)          # doctest: +SKIP
>>> ax = gc.plot.roc(res)                            # doctest: +SKIP
"""

from .classifier import decision_boundary, discriminant_projection
from .diagnostics import binned_residuals, binned_residuals_table, influence
from .estimates import (
    coefficients,
    cv_curve,
    evidence_curve,
    loss_history,
    regularization_path,
)
from .laplace import laplace_density
from .performance import calibration, calibration_table, roc, roc_auc, roc_curve

__all__ = [
    "decision_boundary", "roc", "roc_curve", "roc_auc", "calibration", "calibration_table",
    "coefficients", "evidence_curve", "discriminant_projection", "loss_history",
    "regularization_path", "cv_curve", "laplace_density", "influence", "binned_residuals",
    "binned_residuals_table",
]
