"""Safe formula evaluation: which names a formula may use, and the check every expression passes
before Python evaluates it.

A formula's terms are Python expressions (``np.log(x)``, ``I(x ** 2)``, ``C(g)``) that patsy and
formulaic hand to :func:`eval`. A formula is therefore code, and a formula read from a file, a
command line or a web form must not be able to do anything but compute columns. By default
(``eval_env=None``) an expression may use only

- the columns of the data (also as ``Q("a name")``),
- numpy as ``np``/``numpy``, and only its element-wise and summary functions and constants
  (:data:`NUMPY_FUNCTIONS`; no I/O, no submodules),
- patsy's transforms (``C``, ``I``, ``Q``, ``center``, ``standardize``, ``scale``, contrasts,
  splines), glmclass's (``offset``) and a few harmless builtins (``abs``, ``round``, ...),

and never a dunder name, attribute access other than ``np.<function>``, lambdas,
comprehensions, assignment expressions or f-strings. A caller who trusts the formula passes
``eval_env=`` (a number of frames, a dict, or a patsy ``EvalEnvironment``): its names become
available and attribute access is allowed, but dunder names stay refused.

The check runs on the parsed expression (:func:`check_code`), up front in
:func:`glmclass.formula.design.build_design` (for a clear message) and again inside
:class:`FormulaEnvironment` at every evaluation patsy makes, so that designs rebuilt for new data,
after unpickling or on other processes are held to the same rule.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import patsy
import patsy.builtins

from ..errors import UnsafeFormulaError

#: numpy functions (beyond its ufuncs) and constants a formula may call as ``np.<name>``.
NUMPY_FUNCTIONS = frozenset({
    "where", "clip", "round", "around", "nan_to_num", "isin", "digitize", "select", "interp",
    "piecewise", "cumsum", "cumprod", "mean", "median", "std", "var", "sum", "prod", "min",
    "max", "amin", "amax", "ptp", "quantile", "percentile", "nanmean", "nanmedian", "nanstd",
    "nanvar", "nansum", "nanmin", "nanmax", "asarray", "array", "zeros_like", "ones_like",
    "full_like", "isclose", "sinc", "i0", "real", "imag", "angle", "float64", "float32",
    "int64", "int32", "int16", "int8", "uint8", "bool_", "pi", "e", "inf", "nan", "euler_gamma",
    "newaxis",
})

#: Python builtins a formula may call.
BUILTINS = ("abs", "round", "min", "max", "pow", "float", "int", "bool", "str", "len")

_STATEFUL_OBJECT = re.compile(r"_patsy_stobj\d+__\w+__")  # patsy's rewrite of center(x) etc.
_STATEFUL_METHODS = ("transform", "memorize_chunk")


def _numpy_allowed() -> frozenset:
    ufuncs = {name for name in dir(np) if isinstance(getattr(np, name, None), np.ufunc)}
    return frozenset(ufuncs | {n for n in NUMPY_FUNCTIONS if hasattr(np, n)})


NUMPY_ALLOWED = _numpy_allowed()


def offset(x):
    """Mark a term as an offset: ``y ~ x + offset(np.log(n))`` adds ``np.log(n)`` to the linear
    predictor with coefficient 1 (R's ``offset()``); the term is not a column of the design."""
    return x


def exposure(x):
    """``log(x)`` of positive exposures, the offset that ``exposure=`` adds (statsmodels)."""
    arr = np.asarray(x, dtype=float)
    bad = arr <= 0
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"exposure must be positive (its log is the offset); row {row} has "
                         f"{arr[row]:g}")
    with np.errstate(invalid="ignore"):
        return np.log(arr)


#: glmclass's own transforms, available in every formula.
GLMCLASS_TRANSFORMS = {"offset": offset, "exposure": exposure}


def safe_namespace() -> dict[str, Any]:
    """The names every formula may use besides the data's columns (a new dict each call)."""
    ns: dict[str, Any] = {name: getattr(builtins, name) for name in BUILTINS}
    ns.update({name: getattr(patsy.builtins, name) for name in patsy.builtins.__all__})
    ns.update(GLMCLASS_TRANSFORMS)
    ns.update({"np": np, "numpy": np})
    return ns


def _refuse(code: str, why: str, hint: str = "") -> UnsafeFormulaError:
    return UnsafeFormulaError(f"the formula term {code!r} {why}{hint}")


_TRUST_HINT = ("; to evaluate a trusted formula with your own functions pass eval_env= "
               "(a dict such as {'f': f}, or 0 for the calling namespace)")

_ALLOWED_NODES = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.keyword,
    ast.IfExp, ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple,
    ast.List, ast.Dict, ast.Set, ast.Starred, ast.operator, ast.cmpop, ast.boolop,
    ast.unaryop, ast.expr_context,
)


def _chain(node: ast.Attribute) -> tuple[ast.expr, list[str]]:
    """The root of ``a.b.c`` and the attribute names after it (``[b, c]``)."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return node, attrs[::-1]


def check_code(code: str, known: Callable[[str], bool], trusted: bool = False,
               is_column: Callable[[str], bool] | None = None,
               braces: bool = False) -> set[str]:
    """Refuse an expression that does more than compute a column; return the names it uses.

    Parameters
    ----------
    code : str
        One Python expression of a formula (a factor such as ``"np.log(x)"``).
    known : callable
        ``known(name)``: whether a name is a column or an allowed function.
    trusted : bool
        The caller passed ``eval_env=``: attribute access is allowed (dunders still are not).
    is_column : callable, optional
        ``is_column(name)``: whether a name is a data column (for ``Q("...")``); default
        ``known``.
    braces : bool
        The engine reads ``{expr}`` as a Python expression (formulaic): a term wrapped in
        braces is not a set. With patsy, a ``{...}`` is refused with a message.

    Returns
    -------
    set of str
        The names the expression uses, including the columns quoted with ``Q("...")``.

    Raises
    ------
    UnsafeFormulaError
        Naming the term and what in it is refused.
    """
    is_column = known if is_column is None else is_column
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        raise UnsafeFormulaError(f"the formula term {code!r} is not a valid expression (a column "
                                 "name with spaces or symbols is written Q('mean radius'))") \
            from None
    nodes = list(ast.walk(tree))
    for node in nodes:
        if not isinstance(node, _ALLOWED_NODES):
            raise _refuse(code, f"uses Python syntax that formulas do not allow "
                                f"({type(node).__name__}): a term computes a column from "
                                "columns and functions")
    _check_habits(code, nodes, braces)
    # the gravest first: dunder names, then unknown names, then attributes and quoting
    names = [node.id for node in nodes if isinstance(node, ast.Name)]
    attrs = [node.attr for node in nodes if isinstance(node, ast.Attribute)]
    for name in names + attrs:
        if name.startswith("__"):
            raise _refuse(code, f"uses {name!r}: names that start with '__' are not allowed "
                                "in formulas")
    for name in names:
        _check_name(code, name, known)
    found = set(names)
    for node in nodes:
        if isinstance(node, ast.Attribute):
            _check_attribute(code, node, trusted, is_column)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "Q":
            found.add(_check_quoted(code, node, is_column, known, trusted))
    return found


def _check_habits(code: str, nodes: list[ast.AST], braces: bool) -> None:
    """R's and formulaic's spellings that Python reads otherwise, refused before they give a
    silently different column: ``^`` is XOR in Python (``19 ^ 2 == 17``), and ``{...}`` a set."""
    if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitXor) for n in nodes):
        raise _refuse(code, "uses '^', which in Python is bitwise XOR, not a power (19 ^ 2 is "
                            "17): write ** for a power, e.g. I(age**2) (or np.bitwise_xor(a, b) "
                            "if you meant XOR)")
    outer = nodes[0].body if nodes and isinstance(nodes[0], ast.Expression) else None
    if any(isinstance(n, ast.Set) and not (braces and n is outer) for n in nodes):
        if braces:
            raise _refuse(code, "uses a Python set {...} inside an expression; a term computes "
                                "a column from columns and functions")
        raise _refuse(code, "uses {...}, formulaic's syntax for a Python expression: with the "
                            "patsy engine write I(z**2), or pass engine='formulaic'")


def _check_name(code: str, name: str, known: Callable[[str], bool]) -> None:
    if not known(name):
        hint = f" (numpy's is np.{name})" if name in NUMPY_ALLOWED else ""
        raise _refuse(code, f"uses {name!r}, which is neither a column of the data nor an "
                            f"allowed function{hint} (numpy as np, patsy's C, I, Q, center, "
                            "standardize, ..., glmclass's offset)", _TRUST_HINT)


def _check_attribute(code: str, node: ast.Attribute, trusted: bool,
                     is_column: Callable[[str], bool]) -> None:
    root, attrs = _chain(node)
    dotted = ".".join(attrs)
    if any(a.startswith("_") for a in attrs):
        raise _refuse(code, f"uses the attribute {dotted!r}: names that start with '_' are not "
                            "allowed in formulas")
    if isinstance(root, ast.Name):
        if root.id in ("np", "numpy") and not is_column(root.id):
            if len(attrs) == 1 and attrs[0] in NUMPY_ALLOWED:
                return
            raise _refuse(code, f"uses {root.id}.{dotted}, which is not one of the numpy "
                                "functions formulas may call (element-wise functions, where, "
                                "clip, round, ... and constants; no I/O or submodules)",
                          _TRUST_HINT)
        if _STATEFUL_OBJECT.fullmatch(root.id) and attrs[0] in _STATEFUL_METHODS:
            return
    if not trusted:
        raise _refuse(code, f"uses attribute access (.{dotted}), which formulas allow only "
                            "for numpy functions (np.log)", _TRUST_HINT)


def _check_quoted(code: str, node: ast.Call, is_column, known, trusted: bool) -> str:
    arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        raise _refuse(code, "calls Q() with something other than one column name in quotes")
    name = arg.value
    if name.startswith("__") or not (is_column(name) or (trusted and known(name))):
        raise _refuse(code, f"quotes {name!r}, which is not a column of the data")
    return name


class FormulaEnvironment(patsy.EvalEnvironment):
    """A patsy evaluation environment that checks every expression before evaluating it.

    patsy evaluates formula terms through its environment's ``eval``; this one first passes
    the expression through :func:`check_code`, with the data (patsy's inner namespace) and the
    environment's own names as the known names. Environments derived from it (patsy adds its
    builtins and keeps a subset of the names a term uses) stay of this class.

    Parameters
    ----------
    namespaces : list of mappings
        Looked up in order after the data.
    flags : int
        ``__future__`` flags (patsy's).
    trusted : bool
        Whether the caller passed ``eval_env=`` (attribute access allowed).
    """

    def __init__(self, namespaces, flags: int = 0, trusted: bool = False) -> None:
        super().__init__(namespaces, flags)
        self.trusted = trusted

    @property
    def namespaces(self) -> list:
        """The mappings names are looked up in, in order (a new list of the same mappings)."""
        return list(self._namespaces)

    def with_outer_namespace(self, outer_namespace) -> FormulaEnvironment:
        return FormulaEnvironment(self._namespaces + [outer_namespace], self.flags, self.trusted)

    def subset(self, names) -> FormulaEnvironment:
        lookup = self.namespace
        return FormulaEnvironment([{name: lookup[name] for name in names}], self.flags,
                                  self.trusted)

    def eval(self, expr, source_name="<string>", inner_namespace=None):
        inner = {} if inner_namespace is None else inner_namespace
        outer = self.namespace

        def known(name: str) -> bool:
            return name in inner or name in outer

        check_code(expr, known, self.trusted, lambda name: name in inner)
        return super().eval(expr, source_name, inner)

    def __eq__(self, other) -> bool:
        return super().__eq__(other) and self.trusted == getattr(other, "trusted", None)

    def __hash__(self) -> int:
        return super().__hash__()


class PatsyNames(Mapping):
    """The names of a patsy ``EvalEnvironment`` as one namespace, looked up through patsy's
    public ``namespace``.

    patsy has no public way to list an environment's names, so this mapping finds every name
    the environment holds but lists none (iterating it gives nothing): the formula engines
    only look names up.

    Parameters
    ----------
    env : patsy.EvalEnvironment
    """

    def __init__(self, env: patsy.EvalEnvironment) -> None:
        self.lookup = env.namespace

    def __getitem__(self, key: str) -> Any:
        return self.lookup[key]

    def __contains__(self, key: object) -> bool:
        return key in self.lookup

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0


def formula_env(eval_env: Any = None, depth: int = 0) -> FormulaEnvironment:
    """The environment in which a formula's names are looked up.

    Parameters
    ----------
    eval_env : None, int, dict or patsy.EvalEnvironment
        None (the default): only the safe names of :func:`safe_namespace`. An explicit
        environment (the caller trusts the formula): a number of frames above the caller's
        (0: the caller's own namespace), a dict of names, or a patsy ``EvalEnvironment``; the
        safe names stay available behind it.
    depth : int
        Frames between the caller of this function and the frame ``eval_env=0`` means: 1 when
        called from a public entry point on behalf of its caller.

    Raises
    ------
    TypeError
        For anything else.
    """
    if isinstance(eval_env, FormulaEnvironment):
        return eval_env
    if eval_env is None:
        return FormulaEnvironment([safe_namespace()])
    if isinstance(eval_env, patsy.EvalEnvironment):
        namespaces, flags = [PatsyNames(eval_env)], eval_env.flags
    elif isinstance(eval_env, Mapping):
        namespaces, flags = [dict(eval_env)], 0
    elif isinstance(eval_env, int) and not isinstance(eval_env, bool) and eval_env >= 0:
        env = FormulaEnvironment.capture(eval_env + depth + 1)  # the frame's names, untrusted
        namespaces, flags = env.namespaces, env.flags
    else:
        raise TypeError(f"eval_env must be None (safe evaluation: columns, numpy and the formula "
                        f"transforms only), a number of frames (0: the caller's namespace), a "
                        f"dict of names or a patsy.EvalEnvironment; got {eval_env!r}")
    return FormulaEnvironment(namespaces + [safe_namespace()], flags, trusted=True)
