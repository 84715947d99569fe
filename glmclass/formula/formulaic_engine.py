"""The formulaic engine: the same design matrices as patsy, built by formulaic (an optional
dependency, imported only when ``engine="formulaic"`` is asked for).

formulaic evaluates a formula's terms column-wise and is many times faster than patsy on large
data. Three differences are bridged so that both engines give the same columns, in the same
order, under the same names:

- patsy treats boolean values as categorical (``b[T.True]``); formulaic as numbers. A
  materializer that treats them as categorical restores patsy's rule.
- patsy orders terms by which numeric factors they hold (terms without any first); formulaic
  keeps the formula's order. :func:`patsy_layout` reorders the columns by patsy's rule.
- Names: patsy keeps a factor's code as written (``Q("x")``) and names contrast columns its own
  way (``.Linear``, ``[D.a]``, ``[0]``); :func:`patsy_layout` names the columns as patsy does.

Before anything is evaluated, every factor formulaic will evaluate passes the check of
:mod:`glmclass.formula.namespace`; formulaic then sees only the data, the safe names (or the
caller's, with ``eval_env=``) and its own transforms (``scale`` and ``standardize`` as patsy's:
without the degrees-of-freedom correction).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import formulaic
import numpy as np
import pandas as pd
import patsy
import patsy.builtins
from formulaic.materializers import PandasMaterializer
from formulaic.transforms import TRANSFORMS
from formulaic.transforms import contrasts as fc
from formulaic.utils.sentinels import UNSET
from interface_meta import override

from ..errors import DataError, GlmclassError, UnsafeFormulaError
from .formulaic_state import model_spec_from_state, model_spec_state
from .namespace import FormulaEnvironment, check_code, safe_namespace
from .parse import ParsedFormula
from .spec import SpecBase, describe_term, needs_own_names, plain_value

#: patsy's transforms, which formulaic's own (same names, same meaning) replace.
_PATSY = {name: getattr(patsy.builtins, name) for name in patsy.builtins.__all__}


class _Namespace(Mapping):
    """An environment's namespaces as one read-only mapping (formulaic's context), without
    patsy's transforms: formulaic's of the same names are used."""

    def __init__(self, namespaces: list) -> None:
        self._namespaces = namespaces

    def __getitem__(self, key):
        for ns in self._namespaces:
            try:
                value = ns[key]
            except KeyError:
                continue
            if _PATSY.get(key) is not value:
                return value
        raise KeyError(key)

    def __iter__(self) -> Iterator:
        seen: set = set()
        for ns in self._namespaces:
            for key in ns:
                if key not in seen and key in self:
                    seen.add(key)
                    yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _context(env: FormulaEnvironment, extra: dict | None = None) -> Mapping:
    """formulaic's context: the environment's names, then patsy's meaning of ``scale``."""
    patsy_like = {"scale": TRANSFORMS["standardize"], "standardize": TRANSFORMS["standardize"]}
    return _Namespace([extra or {}, *env.namespaces, patsy_like, TRANSFORMS])


class PatsyLikeMaterializer(PandasMaterializer):
    """formulaic's pandas materializer with patsy's rule that booleans are categorical."""

    REGISTER_NAME = "glmclass_patsy_like"
    REGISTER_INPUTS = ()

    @override
    def _is_categorical(self, values: Any) -> bool:
        if _is_bool(values):
            return True
        return super()._is_categorical(values)

    @override
    def _combine_columns(self, cols, spec, drop_rows) -> np.ndarray:
        """The columns as one C-ordered float matrix in patsy's order, written column by column
        (no stacked intermediate and no reordering copy)."""
        order = patsy_layout(spec)[0]
        out = np.empty((self.nrows - len(drop_rows), len(cols)))
        for j, k in enumerate(order):
            out[:, j] = np.asarray(cols[k][1], dtype=float)
        return out

    @override
    def _encode_evaled_factor(self, factor, spec, drop_rows, reduced_rank: bool = False):
        kind, state = spec.encoder_state.get(factor.expr, (None, {}))
        known = state.get("categories") if kind is not None and kind.value == "categorical" \
            else None
        if known is not None:  # new data: formulaic would code an unseen level as all zeros
            raw = getattr(factor.values, "__wrapped__", factor.values)
            seen = pd.unique(pd.Series(np.asarray(raw, dtype=object).ravel()).dropna())
            unseen = [v for v in seen if v not in set(known)]
            if unseen:
                raise UnseenLevel(unseen[0], list(known), factor.expr)
        return super()._encode_evaled_factor(factor, spec, drop_rows, reduced_rank)

    @override
    def _get_columns_for_term(self, factors, spec, scale: float = 1) -> dict:
        if scale == 1 and len(factors) == 1 and len(factors[0]) == 1:
            return dict(factors[0])  # a column as it is: copied once, into the design
        return super()._get_columns_for_term(factors, spec, scale)

    @override
    def _encode_categorical(self, values: Any, metadata: Any, encoder_state: dict, spec,
                            drop_rows, reduced_rank: bool = False) -> Any:
        if _is_bool(values):  # both levels, even when one is absent, as patsy
            values = pd.Categorical(np.asarray(values), categories=[False, True])
        return super()._encode_categorical(values, metadata, encoder_state, spec, drop_rows,
                                           reduced_rank)


class UnseenLevel(DataError):
    """A categorical value in new data that the factor did not have at fit time."""

    def __init__(self, value: Any, levels: list, expr: str, columns=()) -> None:
        super().__init__(f"{describe_term(expr, columns)} has level {plain_value(value)!r}, "
                         "which was not in the data the model was fit on (levels: "
                         f"{[plain_value(v) for v in levels]})")
        self.value, self.levels, self.expr = value, levels, expr


def _is_bool(values: Any) -> bool:
    return getattr(values, "dtype", None) is not None and values.dtype == bool


def _check_factors(formula, labels: set, env: FormulaEnvironment) -> None:
    """Every factor formulaic will evaluate passes the safety check (lookups are names)."""
    outer = _context(env)

    def known(name: str) -> bool:
        return name in labels or name in outer

    for term in formula:
        for factor in term.factors:
            method = factor.eval_method.value
            if method == "literal":
                continue
            code = factor.expr if method == "python" else _as_name(factor.expr)
            check_code(code, known, env.trusted, lambda name: name in labels)


def _as_name(expr: str) -> str:
    return expr if expr.isidentifier() else f"Q({expr!r})"


def _patsy_contrast(state) -> Any:
    """patsy's contrast object for a formulaic contrasts state (for patsy's column names)."""
    c = state.contrasts
    if type(c) is fc.TreatmentContrasts:
        return patsy.Treatment(reference=None if c.base is UNSET else c.base)
    simple = {fc.SumContrasts: patsy.Sum, fc.HelmertContrasts: patsy.Helmert,
              fc.DiffContrasts: patsy.Diff}
    for cls, target in simple.items():
        if type(c) is cls:
            return target()
    if isinstance(c, fc.PolyContrasts):
        return patsy.Poly(scores=getattr(c, "scores", None))
    raise DataError(f"engine='formulaic' cannot name the columns of the contrast {c!r} as patsy "
                    "does; use engine='patsy'")


@dataclass(frozen=True)
class _Factor:
    code: str  # patsy's code for the factor
    categorical: bool
    levels: tuple = ()
    contrast: Any = None


def _factor_info(model_spec, codes: dict) -> dict:
    out = {}
    for expr, (kind, state) in model_spec.encoder_state.items():
        code = codes.get(_key(expr), expr)
        if kind.value == "categorical":
            out[expr] = _Factor(code, True, tuple(state["categories"]),
                                _patsy_contrast(state["contrasts"]))
        else:
            out[expr] = _Factor(code, False)
    return out


def _key(code: str) -> str:
    """Codes that mean the same Python (quotes, spacing) share a key."""
    try:
        return ast.dump(ast.parse(code.strip(), mode="eval"))
    except SyntaxError:
        return code


def _suffixes(f: _Factor, reduced: bool, width: int) -> list[str]:
    if not f.categorical:
        return [""] if width == 1 else [f"[{i}]" for i in range(width)]
    if not reduced and not isinstance(f.contrast, patsy.Treatment):
        # patsy codes such a factor (in an interaction without its main effect) with the
        # full-rank version of its contrast, formulaic with indicators: the same model,
        # different columns
        raise DataError(f"engine='formulaic' codes {f.code} without its main effect "
                        "differently from patsy (indicators instead of the full-rank contrast);"
                        " use engine='patsy', or add the main effect")
    matrix = (f.contrast.code_without_intercept(list(f.levels)) if reduced
              else f.contrast.code_with_intercept(list(f.levels)))
    return list(matrix.column_suffixes)


def _scoped_names(scoped, info: dict, ncols: int) -> list[str]:
    """patsy's names of the ``ncols`` columns of one scoped term (first factor varying
    fastest); a numeric factor with several columns (a spline) gets the columns the
    categorical ones leave."""
    factors = list(scoped.factors)
    if not factors:
        return ["Intercept"]
    fixed = 1
    for sf in factors:
        f = info[sf.factor.expr]
        fixed *= len(_suffixes(f, sf.reduced, 1)) if f.categorical else 1
    wide = next((i for i, sf in enumerate(factors) if not info[sf.factor.expr].categorical), None)
    names = [""]
    for i, sf in enumerate(factors):
        f = info[sf.factor.expr]
        width = max(1, ncols // fixed) if i == wide else 1
        names = [f"{prev}{':' if prev else ''}{f.code}{suf}"
                 for suf in _suffixes(f, sf.reduced, width) for prev in names]
    return names


def patsy_layout(model_spec, rhs_codes: list[str] | None = None
                 ) -> tuple[np.ndarray, list[str], list[str]]:
    """Column order and names of patsy's design for a formulaic model spec (names with the
    factor codes as patsy wrote them when ``rhs_codes`` is given).

    Returns
    -------
    order : ndarray of int
        Positions of formulaic's columns in patsy's order.
    names : list of str
        patsy's column names, in that order.
    terms : list of str
        The term (patsy's name) of each column, in that order.
    """
    codes = {_key(c): c for c in rhs_codes or ()}
    info = _factor_info(model_spec, codes)
    start, items = 0, []
    for st in model_spec.structure:
        n = len(st.columns)
        factors = [f.expr for f in st.term.factors if f.eval_method.value != "literal"]
        numeric = frozenset(e for e in factors if not info[e].categorical)
        names: list[str] = []
        widths = _scoped_widths(st, info, n)
        for scoped, w in zip(st.scoped_terms, widths, strict=True):
            names += _scoped_names(scoped, info, w)
        if len(names) != n:
            raise DataError(f"engine='formulaic' cannot reproduce patsy's columns of the term "
                            f"{st.term}; use engine='patsy'")
        term = ":".join(info[e].code for e in factors) or "Intercept"
        items.append((numeric, len(factors), list(range(start, start + n)), names, term))
        start += n
    order, names, terms = [], [], []
    for i in _bucket_order([(it[0], it[1]) for it in items]):
        _, _, cols, nm, term = items[i]
        order += cols
        names += nm
        terms += [term] * len(cols)
    return np.asarray(order, dtype=int), names, terms


def _bucket_order(keys: list[tuple[frozenset, int]]) -> list[int]:
    """patsy's order of terms given (numeric factors, degree) of each: terms without numeric
    factors first, then by numeric factor set in order of first appearance; within a set, by
    degree (stable)."""
    buckets: dict = {}
    for i, (numeric, _) in enumerate(keys):
        buckets.setdefault(numeric, []).append(i)
    first = sorted(buckets, key=lambda k: (len(k) > 0, list(buckets).index(k)))
    return [i for k in first for i in sorted(buckets[k], key=lambda i: keys[i][1])]


def _patsy_order(model_spec) -> list:
    """The structure of a formulaic model spec (one entry per term) in patsy's order."""
    info = _factor_info(model_spec, {})
    keys = []
    for st in model_spec.structure:
        factors = [f.expr for f in st.term.factors if f.eval_method.value != "literal"]
        keys.append((frozenset(e for e in factors if not info[e].categorical), len(factors)))
    return [model_spec.structure[i] for i in _bucket_order(keys)]


def _scoped_widths(st, info: dict, n: int) -> list[int]:
    """Columns of each scoped term of a term (categorical widths known; the rest shared)."""
    widths, unknown = [], []
    for i, scoped in enumerate(st.scoped_terms):
        w, numeric = 1, False
        for sf in scoped.factors:
            f = info[sf.factor.expr]
            if f.categorical:
                w *= len(_suffixes(f, sf.reduced, 1))
            else:
                numeric = True
        widths.append(w)
        if numeric:
            unknown.append(i)
    if unknown:  # multi-column numeric factors (splines): the rest of the columns
        rest = n - sum(w for j, w in enumerate(widths) if j not in unknown)
        per = rest // max(1, sum(widths[j] for j in unknown))
        for j in unknown:
            widths[j] *= per
    return widths


@dataclass
class FormulaicSpec(SpecBase):
    """How formulaic built the design columns, to build them again for new data.

    Attributes
    ----------
    formula : str
    column_names : list of str
        patsy's names of the design columns.
    model_spec : formulaic.ModelSpec
        formulaic's record of factors, levels and transform state (pickles as it is); its
        materializer writes the columns in patsy's order.
    names : dict
        The caller's names the formula uses (``eval_env=``).
    trusted : bool
    """

    formula: str
    column_names: list[str]
    model_spec: Any = field(repr=False)
    columns: tuple = ()
    numeric: tuple = ()
    offset_positions: tuple = ()
    names: dict = field(repr=False, default_factory=dict)
    trusted: bool = False
    terms: list = field(repr=False, default_factory=list)
    engine: str = "formulaic"

    def _env(self) -> FormulaEnvironment:
        return FormulaEnvironment([self.names, safe_namespace()], trusted=self.trusted)

    def term_codes(self) -> list[tuple[str, ...]] | None:
        """The factor expressions of each term of formulaic's formula."""
        return [tuple(f.expr for f in t.factors) for t in self.model_spec.formula]

    def _matrix(self, frame: pd.DataFrame) -> np.ndarray:
        env = self._env()
        _check_factors(self.model_spec.formula, set(frame.columns), env)  # as at fit, always
        try:
            mm = self.model_spec.get_model_matrix(frame, context=_context(env))
        except Exception as exc:  # noqa: BLE001 - formulaic raises many kinds; say which level
            ours = _ours(exc)
            if isinstance(ours, UnseenLevel):  # named as the column, if it is one
                raise UnseenLevel(ours.value, ours.levels, ours.expr, frame.columns) from None
            if ours is not None:
                raise ours from None
            raise DataError(f"cannot build the design for new data: "
                            f"{str(exc).splitlines()[0]}") from None
        return np.asarray(mm)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["names"] = _picklable(state.get("names", {}))
        return state

    def saved_design(self) -> dict:
        """The design as plain data for a data-only results file (formulaic's model spec by
        :func:`~glmclass.formula.formulaic_state.model_spec_state`, with the spec's fields);
        :func:`spec_from_saved` reads it back.

        Raises
        ------
        ValueError
            When the formula needs the caller's names (``eval_env=``) or formulaic's spec
            holds something that is not plain data (naming the term).
        """
        columns = set(self.columns)
        env = FormulaEnvironment([safe_namespace()], trusted=False)
        try:  # as a file is read back: the data's columns and the safe names only
            _check_factors(self.model_spec.formula, columns, env)
        except UnsafeFormulaError as exc:
            raise needs_own_names(self.formula, exc) from None
        return {**self.saved_fields(), "terms": list(self.terms),
                "model_spec": model_spec_state(self.model_spec)}

    def factor_terms(self) -> list[list[tuple[str, tuple | None]]]:
        """The right-hand side's terms in patsy's order (the design's), each as its factors:
        ``(code, levels)`` with the levels of a categorical factor, None for a numeric one
        (what the reference grid of :func:`glmclass.emmeans` reads)."""
        encoders = self.model_spec.encoder_state
        out = []
        for st in _patsy_order(self.model_spec):
            factors = []
            for f in st.term.factors:
                if f.eval_method.value == "literal":
                    continue
                kind, state = encoders.get(f.expr, (None, {}))
                categorical = kind is not None and kind.value == "categorical"
                code = f.expr if f.eval_method.value == "python" else _as_name(f.expr)
                factors.append((code, tuple(state["categories"]) if categorical else None))
            out.append(factors)
        return out


def spec_from_saved(saved: dict) -> FormulaicSpec:
    """The :class:`FormulaicSpec` that :meth:`FormulaicSpec.saved_design` wrote (nothing
    evaluated; the caller's names are not kept: the formula uses none).

    Raises
    ------
    ValueError
        When ``saved`` is not such a record.
    """
    try:
        text = [saved["formula"], *saved["column_names"], *saved["columns"], *saved["terms"]]
        if not all(isinstance(t, str) for t in text):
            raise TypeError("a name is not text")
        model_spec = model_spec_from_state(saved["model_spec"], PatsyLikeMaterializer)
        return FormulaicSpec(saved["formula"], list(saved["column_names"]), model_spec,
                             tuple(saved["columns"]), tuple(saved["numeric"]),
                             tuple(int(i) for i in saved["offset_positions"]), {}, False,
                             list(saved["terms"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"the saved formula design is not valid ({exc})") from None


def _ours(exc: BaseException) -> GlmclassError | None:
    """Our own error, possibly wrapped by formulaic (as the cause of its exception)."""
    while exc is not None:
        if isinstance(exc, GlmclassError):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _picklable(names: dict) -> dict:
    import pickle
    import types

    out = {}
    for key, value in names.items():
        if isinstance(value, types.ModuleType):
            continue
        try:
            pickle.dumps(value)
        except Exception:  # noqa: BLE001 - leave out what does not pickle
            continue
        out[key] = value
    return out


def _used_names(formula, env: FormulaEnvironment) -> dict:
    """The caller's names a trusted formula uses (kept for prediction and pickling)."""
    if not env.trusted:
        return {}
    lookup = env.namespace
    out = {}
    for term in formula:
        for factor in term.factors:
            if factor.eval_method.value == "literal":
                continue
            try:
                tree = ast.parse(factor.expr, mode="eval")
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id in lookup and node.id not in out:
                    out[node.id] = lookup[node.id]
    return out


def learn_formulaic(parsed: ParsedFormula, frame: pd.DataFrame, env: FormulaEnvironment,
                    numeric: tuple) -> tuple[FormulaicSpec, np.ndarray]:
    """formulaic's design of ``parsed.rhs`` on complete rows: the spec and the matrix (patsy's
    columns, order and names)."""
    try:
        formula = formulaic.Formula(parsed.rhs, _ordering="none")
    except Exception as exc:  # noqa: BLE001 - formulaic's parser raises several kinds
        raise DataError(f"formulaic cannot parse {parsed.formula!r}: {exc}") from None
    _check_factors(formula, set(frame.columns), env)
    names = _used_names(formula, env)
    try:
        spec = formulaic.ModelSpec.from_spec(formula, materializer=PatsyLikeMaterializer,
                                             na_action="ignore", output="numpy")
        mm = spec.get_model_matrix(frame, context=_context(env, names))
    except Exception as exc:  # noqa: BLE001 - formulaic raises many kinds; keep its words
        if isinstance(exc.__cause__, GlmclassError) or isinstance(exc, GlmclassError):
            raise (exc if isinstance(exc, GlmclassError) else exc.__cause__) from None
        raise DataError(f"cannot build the design of {parsed.formula!r}: "
                        f"{str(exc).splitlines()[0]}") from None
    _, colnames, terms = patsy_layout(mm.model_spec, parsed.rhs_codes)  # mm is in this order
    offsets = tuple(j for j, t in enumerate(terms) if t.startswith("offset(") and ":" not in t)
    for j in offsets:
        if terms.count(terms[j]) != 1:
            raise DataError(f"{terms[j]} must be numeric (one column)")
    out = FormulaicSpec(parsed.formula, [n for j, n in enumerate(colnames) if j not in offsets],
                        mm.model_spec, tuple(frame.columns), numeric, offsets, names,
                        env.trusted, terms)
    return out, np.asarray(mm)


def formulaic_response(code: str, frame: pd.DataFrame, env: FormulaEnvironment) -> pd.Series:
    """The response: a column as it is (labels kept), or an expression evaluated by formulaic
    (a boolean expression gives its True indicator)."""
    if code in frame.columns:
        return frame[code].rename(code)
    if code.startswith("Q(") and code[3:-2] in frame.columns:
        return frame[code[3:-2]].rename(code[3:-2])
    labels = set(frame.columns)
    outer = _context(env)
    check_code(code, lambda n: n in labels or n in outer, env.trusted, lambda n: n in labels)
    try:
        mm = formulaic.model_matrix(f"0 + {code}", frame, context=_context(env),
                                    na_action="ignore", materializer=PatsyLikeMaterializer)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"cannot evaluate the response {code!r}: {exc}") from None
    values, names = np.asarray(mm), patsy_layout(mm.model_spec)[1]
    if values.shape[1] == 2 and str(names[1]).endswith("[True]"):
        return pd.Series(values[:, 1], index=frame.index, name=code)
    if values.shape[1] != 1:
        raise DataError(f"the response {code!r} must be one column, got {values.shape[1]}")
    return pd.Series(values[:, 0], index=frame.index, name=code)
