"""patsy's design as plain data: what predictions on new data need, and nothing of the rows.

A patsy ``DesignInfo`` records, per factor of the formula, its code (``center(x)``,
``C(race)``), whether it is numerical or categorical, its levels, the contrast matrix of each
term and the memorised state of its stateful transforms (a mean and a count for ``center()``,
a mean and a sum of squares for ``standardize()``, the knots of ``bs()``/``cr()``). patsy's
objects do not pickle, and rebuilding them from the training rows keeps those rows;
:func:`design_state` writes the record as plain data (strings, numbers, lists, NumPy arrays)
and :func:`design_from_state` builds the same ``DesignInfo`` from it, without data and without
evaluating anything: each factor's code is rewritten by patsy (its stateful transforms become
fresh objects of the same classes, given the saved numbers), and is evaluated only later, on
new data, through the checking :class:`~glmclass.formula.namespace.FormulaEnvironment`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import patsy
from patsy.design_info import FactorInfo, SubtermInfo

from .namespace import FormulaEnvironment, check_code, safe_namespace

#: Types a transform's or a level's saved value may have.
_PLAIN = (str, int, float, bool, type(None), np.ndarray, np.generic)


def design_state(info) -> dict[str, Any]:
    """The design of a patsy ``DesignInfo`` as plain data.

    Parameters
    ----------
    info : patsy.DesignInfo

    Returns
    -------
    dict
        ``column_names`` (all of patsy's columns, offset terms included), ``factors`` (per
        factor: ``code``, ``type``, ``num_columns``, ``categories``, ``transforms`` as
        {name: {"class": class name, "attrs": {attribute: value}}}) and ``terms`` (per term:
        its factors' positions and its subterms' factors, contrast matrices and column count).

    Raises
    ------
    ValueError
        For a factor that is not a formula expression or a transform whose state is not plain
        numbers (the message says to save with ``format="pickle"``).
    """
    factors = list(info.factor_infos)
    position = {f: i for i, f in enumerate(factors)}
    out_factors = []
    for factor in factors:
        fi = info.factor_infos[factor]
        if not isinstance(factor, patsy.EvalFactor):
            raise ValueError(f"the design factor {factor!r} is not a formula expression: save "
                             "these results with format='pickle'")
        transforms = {}
        for name, obj in (fi.state.get("transforms") or {}).items():
            attrs = dict(vars(obj))
            bad = [k for k, v in attrs.items() if not _plain(v)]
            if bad:
                raise ValueError(f"the transform in {factor.name()!r} keeps {bad[0]!r}, which is "
                                 "not a number: save these results with format='pickle'")
            transforms[name] = {"class": type(obj).__name__, "attrs": attrs}
        out_factors.append({
            "code": factor.code, "type": fi.type, "num_columns": fi.num_columns,
            "categories": None if fi.categories is None else list(fi.categories),
            "transforms": transforms})
    terms = []
    for term, subterms in info.term_codings.items():
        terms.append({
            "factors": [position[f] for f in term.factors],
            "subterms": [{
                "factors": [position[f] for f in sub.factors],
                "contrasts": [[position[f], np.asarray(cm.matrix), list(cm.column_suffixes)]
                              for f, cm in sub.contrast_matrices.items()],
                "num_columns": sub.num_columns} for sub in subterms]})
    return {"column_names": list(info.column_names), "factors": out_factors, "terms": terms}


def _plain(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"
    return isinstance(value, _PLAIN)


def design_from_state(state: dict[str, Any]) -> patsy.DesignInfo:
    """The patsy ``DesignInfo`` that :func:`design_state` described.

    Parameters
    ----------
    state : dict
        As returned by :func:`design_state` (possibly read back from a file).

    Returns
    -------
    patsy.DesignInfo

    Raises
    ------
    ValueError
        When the description is not consistent (a code that is not a safe formula expression,
        a transform of another class than the code makes, factors or columns that do not
        match): the file was not written by glmclass or was changed.
    """
    try:
        return _build(state)
    except (KeyError, TypeError, IndexError, AttributeError, patsy.PatsyError) as exc:
        raise ValueError(f"the saved formula design is not valid ({exc})") from None


def _build(state: dict[str, Any]) -> patsy.DesignInfo:
    env = FormulaEnvironment([safe_namespace()])
    factors, infos = [], {}
    for saved in state["factors"]:
        code = saved["code"]
        if not isinstance(code, str):
            raise ValueError(f"the saved formula design has a factor {code!r} that is not text")
        check_code(code, lambda name: True, False, lambda name: False)
        factor = patsy.EvalFactor(code)
        fstate: dict = {}
        factor.memorize_passes_needed(fstate, env)  # rewrites the code; evaluates nothing
        made = fstate["transforms"]
        kept = saved["transforms"]
        if set(made) != set(kept):
            raise ValueError(f"the saved transforms of {code!r} do not match its code")
        for name, obj in made.items():
            if type(obj).__name__ != kept[name]["class"]:
                raise ValueError(f"the saved transform of {code!r} is of another class")
            vars(obj).clear()  # the memorised state only, as it was saved (no fresh _tmp)
            for attr, value in kept[name]["attrs"].items():
                if not isinstance(attr, str) or attr.startswith("__") or not _plain(value):
                    raise ValueError(f"the saved transform of {code!r} is not plain numbers")
                setattr(obj, attr, value)
        categories = saved["categories"]
        kind = saved["type"]
        if kind not in ("numerical", "categorical"):
            raise ValueError(f"the saved factor {code!r} has an unknown type {kind!r}")
        infos[factor] = FactorInfo(factor, kind, fstate, saved["num_columns"],
                                   None if categories is None else tuple(categories))
        factors.append(factor)
    codings: OrderedDict = OrderedDict()
    for term in state["terms"]:
        subterms = []
        for sub in term["subterms"]:
            contrasts = {factors[i]: patsy.ContrastMatrix(np.asarray(m, dtype=float), list(s))
                         for i, m, s in sub["contrasts"]}
            subterms.append(SubtermInfo([factors[i] for i in sub["factors"]], contrasts,
                                        int(sub["num_columns"])))
        codings[patsy.desc.Term([factors[i] for i in term["factors"]])] = subterms
    return patsy.DesignInfo(list(state["column_names"]), infos, codings)
