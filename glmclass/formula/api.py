"""Lowercase entry points: ``gcf.logit("y ~ x1 + C(g)", df)`` builds a model from a formula.

Each is the model class's ``from_formula`` with the caller's namespace captured here, once; the
names follow ``statsmodels.formula.api``. There is one per entry of the model list,
:data:`glmclass.models.registry.MODELS`.

This module is the package's one import that runs up a floor (formula, floor 2, reads the model
registry, floor 7): ``glmclass.formula.api`` is where statsmodels users look for these names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..models.registry import MODELS, ModelEntry
from .design import capture_env

_FEATURES = " (the intercept column is not a feature)"


def _entry(model: ModelEntry) -> Callable[..., Any]:
    """``model.cls.from_formula`` with the caller's namespace, named ``model.name``."""
    cls, fixed = model.cls, dict(model.options)

    def entry(formula: str, data: Any, eval_env: Any = None, **kwargs: Any) -> Any:
        clash = sorted(set(fixed) & set(kwargs))
        if clash:
            raise TypeError(f"gcf.{model.name} fixes {clash[0]}={fixed[clash[0]]!r}; use "
                            f"glmclass.{cls.__name__}.from_formula to choose it")
        return cls.from_formula(formula, data, eval_env=capture_env(eval_env, 1),
                                **fixed, **kwargs)

    entry.__name__ = entry.__qualname__ = model.name
    entry.__module__ = __name__
    entry.__doc__ = (f":meth:`glmclass.{cls.__name__}.from_formula`"
                     f"{_FEATURES if model.features else ''}: "
                     f"``gcf.{model.name}(formula, data, **kwargs)``.")
    return entry


globals().update({model.name: _entry(model) for model in MODELS})

__all__ = sorted(model.name for model in MODELS)
