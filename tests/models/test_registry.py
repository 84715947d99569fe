"""The model registry is the package's one model list: ``glmclass`` exports its classes,
``glmclass.formula.api`` has one entry point per name, and nothing else lists models (the
command line's ``--model`` choices are tested in tests/test_cli.py)."""

from __future__ import annotations

import pytest
from statsmodels.datasets import spector

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.models.registry import MODELS, model_entry


def test_the_registry_is_the_package_s_model_list():
    names = [e.name for e in MODELS]
    assert len(set(names)) == len(names) and all(n.isidentifier() and n.islower() for n in names)
    for e in MODELS:
        assert getattr(gc, e.cls.__name__) is e.cls and e.cls.__name__ in gc.__all__
        assert model_entry(e.name) is e and getattr(gcf, e.name).__name__ == e.name
    assert gcf.__all__ == sorted(names)
    exported = {n for n in gc.__all__ if isinstance(getattr(gc, n), type)
                and not issubclass(getattr(gc, n), (Exception, Warning))}
    assert exported == {e.cls.__name__ for e in MODELS}
    with pytest.raises(ValueError, match="no model is called 'logistic'; the models are glm"):
        model_entry("logistic")


def test_every_entry_point_builds_its_model():
    df = spector.load_pandas().data
    for e in MODELS:
        formula = {"bernoulli_nb": "GRADE ~ PSI"}.get(e.name, "GRADE ~ PSI + TUCE")
        if e.name.startswith("mixed_"):  # mixed models need a random-effect term
            formula += " + (1 | PSI)"
        model = getattr(gcf, e.name)(formula, df)
        assert type(model) is e.cls, e.name
