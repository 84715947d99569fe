"""formulaic's model spec as plain data, and back, for data-only results files.

A formulaic ``ModelSpec`` records what the design of new data needs: the formula's terms (each
a list of factors: an expression, how it is evaluated, its kind), the structure of the
columns (per term, the scoped terms with each factor's reduced or full rank, and the column
names), the state of the stateful transforms (``center``, ``scale``, ``bs``: numbers and
lists) and the encoders' state (a categorical factor's levels and contrasts). formulaic
pickles it but has no data-only form; :func:`model_spec_state` writes these pieces as plain
values (text, numbers, lists, dicts, NumPy numbers) and :func:`model_spec_from_state` makes the
formulaic objects again from them, without parsing or evaluating any expression: a factor's
expression stays text until a design is built, when it passes the engine's safety check as
at fit time (:mod:`glmclass.formula.namespace`).

Contrasts are written by name from a fixed table (treatment, SAS, sum, Helmert, difference,
polynomial) with their settings; a construct outside it (custom contrast matrices, a
transform whose state holds other objects) is refused, naming the term.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import numpy as np
from formulaic import ModelSpec
from formulaic.formula import SimpleFormula
from formulaic.materializers.base import EncodedTermStructure
from formulaic.materializers.types import EvaluatedFactor, ScopedFactor, ScopedTerm
from formulaic.parser.types import Factor, Term
from formulaic.transforms import contrasts as fc
from formulaic.utils.sentinels import UNSET

#: The contrasts a file may name, with formulaic's class of each.
CONTRASTS = {"treatment": fc.TreatmentContrasts, "sas": fc.SASContrasts, "sum": fc.SumContrasts,
             "helmert": fc.HelmertContrasts, "diff": fc.DiffContrasts, "poly": fc.PolyContrasts}
#: Keys marking formulaic objects inside a state dict (formulaic's own keys are names).
_CONTRASTS_KEY = "formulaic:contrasts_state"
_UNSET_KEY = "formulaic:unset"
#: The configuration fields of a ModelSpec written as they are (enums by their value).
_CONFIG = ("ensure_full_rank", "na_action", "output", "cluster_by")
ADVICE = "save these results with format='pickle', or fit with engine='patsy'"


def _plain(value: Any, where: str) -> Any:
    """``value`` as plain data (contrasts and formulaic's UNSET marked), else a ValueError
    naming ``where``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if value is UNSET:
        return {_UNSET_KEY: True}
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v, where) for v in value)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain(v, where) for k, v in value.items()}
    if isinstance(value, fc.ContrastsState):
        return {_CONTRASTS_KEY: {"contrasts": _contrasts(value.contrasts, where),
                                 "levels": _plain(list(value.levels), where)}}
    raise ValueError(f"the formula term {where!r} keeps a {type(value).__name__} in formulaic's "
                     f"model spec, which a data-only results file cannot hold: {ADVICE}")


def _contrasts(c: Any, where: str) -> dict:
    name = next((k for k, cls in CONTRASTS.items() if type(c) is cls), None)
    if name is None:
        raise ValueError(f"the formula term {where!r} uses the contrasts {type(c).__name__}, "
                         f"which a data-only results file cannot hold (it names only "
                         f"{', '.join(CONTRASTS)}): {ADVICE}")
    return {"name": name, "fields": {f.name: _plain(getattr(c, f.name), where)
                                     for f in dataclasses.fields(c)}}


def _restore(value: Any) -> Any:
    """The values :func:`_plain` wrote, with formulaic's objects made again."""
    if isinstance(value, list):
        return [_restore(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_restore(v) for v in value)
    if not isinstance(value, dict):
        return value
    if set(value) == {_UNSET_KEY}:
        return UNSET
    if set(value) == {_CONTRASTS_KEY}:
        saved = value[_CONTRASTS_KEY]
        cls = CONTRASTS[str(saved["contrasts"]["name"])]
        fields = {f.name for f in dataclasses.fields(cls)}
        given = {k: _restore(v) for k, v in saved["contrasts"]["fields"].items()}
        if not set(given) <= fields:
            raise ValueError(f"unknown settings {sorted(set(given) - fields)} of {cls.__name__}")
        return fc.ContrastsState(cls(**given), _restore(saved["levels"]))
    return {str(k): _restore(v) for k, v in value.items()}


def _factor(f: Factor, where: str) -> dict:
    return {"expr": str(f.expr), "eval": f.eval_method.value, "kind": f.kind.value,
            "metadata": _plain(dict(f.metadata), where)}


def model_spec_state(spec: ModelSpec) -> dict:
    """formulaic's model spec as plain data (see the module docstring).

    Raises
    ------
    ValueError
        For a piece that is not plain data (custom contrasts, a transform keeping objects),
        naming the term and saying to save as a pickle or fit with engine='patsy'.
    """
    terms = list(spec.formula)
    structure = []
    for st in spec.structure or ():
        where = str(st.term)
        position = next((i for i, t in enumerate(terms) if t is st.term), None)
        if position is None:
            position = terms.index(st.term)
        scoped = [{"factors": [[str(sf.factor.expr), bool(sf.reduced)] for sf in sc.factors],
                   "scale": _plain(sc.scale, where)} for sc in st.scoped_terms]
        structure.append({"term": position, "scoped": scoped,
                          "columns": [str(c) for c in st.columns]})
    encoders = {}
    for expr, (kind, state) in spec.encoder_state.items():
        encoders[str(expr)] = {"kind": kind.value, "state": _plain(dict(state), expr)}
    config = {}
    for name in _CONFIG:
        value = getattr(spec, name)
        config[name] = value.value if isinstance(value, enum.Enum) else _plain(value, name)
    return {"terms": [[_factor(f, str(t)) for f in t.factors] for t in terms],
            "structure": structure,
            "transform_state": {str(k): _plain(v, k) for k, v in spec.transform_state.items()},
            "encoder_state": encoders,
            "materializer_params": _plain(dict(spec.materializer_params or {}),
                                          "materializer"),
            "config": config}


def model_spec_from_state(state: dict, materializer: type) -> ModelSpec:
    """The formulaic model spec that :func:`model_spec_state` wrote (nothing evaluated).

    Parameters
    ----------
    state : dict
    materializer : type
        The formulaic materializer the spec builds designs with.

    Raises
    ------
    ValueError
        When ``state`` is not such a record.
    """
    try:
        by_expr: dict[str, Factor] = {}
        terms = []
        for factors in state["terms"]:
            made = []
            for f in factors:
                factor = Factor(str(f["expr"]), eval_method=str(f["eval"]),
                                kind=str(f["kind"]), metadata=_restore(f["metadata"]))
                by_expr.setdefault(factor.expr, factor)
                made.append(factor)
            terms.append(Term(made))
        structure = []
        for s in state["structure"]:
            scoped = [ScopedTerm([ScopedFactor(EvaluatedFactor(by_expr[str(e)], None), bool(r))
                                  for e, r in sc["factors"]], scale=_restore(sc["scale"]))
                      for sc in s["scoped"]]
            structure.append(EncodedTermStructure(terms[int(s["term"])], scoped,
                                                  [str(c) for c in s["columns"]]))
        encoders = {str(k): (Factor.Kind(str(v["kind"])), _restore(v["state"]))
                    for k, v in state["encoder_state"].items()}
        config = dict(state["config"])
        if set(config) != set(_CONFIG):
            raise ValueError(f"the settings {sorted(config)} are not formulaic's")
        return ModelSpec(formula=SimpleFormula(terms, _ordering="none"),
                         materializer=materializer,
                         materializer_params=_restore(state["materializer_params"]),
                         structure=structure,
                         transform_state={str(k): _restore(v)
                                          for k, v in state["transform_state"].items()},
                         encoder_state=encoders, **config)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValueError(f"the saved formulaic design is not valid ({type(exc).__name__}: "
                         f"{exc})") from None
