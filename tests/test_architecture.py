"""The house's layering (shared/ARCHITECTURE.md), read from the package's source with ``ast``.

Each rule is a small checker with a unit test on a synthetic snippet (so that it can fail), and
a test over the package. Code written before the rules still breaks some of them: each rule has
a list of today's violations in tests/architecture_known.json, exact pairs, and its test fails
on any violation not in the list AND on a listed one that has gone, so the lists only shrink
(delete the entry when you fix it). The messages give the count that remains.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "glmclass"

# --- the floors ---------------------------------------------------------------------------------
# A module may import its own floor and those below, never one above. Keys are module names or
# package prefixes (the longest match wins); "glmclass" is the package root only.
FLOORS = {
    # 0: exceptions, warnings, iteration logs, values computed once and the version: import
    # nothing of the package
    "glmclass.errors": 0, "glmclass.progress": 0, "glmclass.lazy": 0, "glmclass.version": 0,
    # 1: the row source, links as data, the bundled data, and the drawing functions (they read
    # the results they are given by their public names and import nothing of the package)
    "glmclass.rows": 1, "glmclass.links": 1, "glmclass.datasets": 1, "glmclass.plot": 1,
    # 2: families and their closed-form binomial terms, numerics, the design engines, the
    # summary tables the results lay out
    "glmclass.families": 2, "glmclass.binomial_terms": 2, "glmclass.numerics": 2,
    "glmclass.formula": 2, "glmclass.summary": 2,
    # 3: one likelihood per model kind
    "glmclass.likelihoods": 3,
    # 4: solvers (a likelihood, rows and a control in, a fit record out)
    "glmclass.solvers": 4,
    # 5: ModelData, the response, the Dask adapter
    "glmclass.data": 5,
    # 6: results
    "glmclass.results": 6,
    # 7: models and the model registry
    "glmclass.models": 7,
    # 8: the user's entry points: the package root, the command line, model comparison
    "glmclass": 8, "glmclass.__main__": 8, "glmclass.cli": 8, "glmclass.compare": 8,
    "glmclass.api": 8,
}

# The one import allowed to run up a floor, and why.
ALLOWED_UP = {
    ("glmclass.formula.api", "glmclass.models.registry"):
        "glmclass.formula.api is statsmodels' path for the lowercase entry points "
        "(gcf.logit(formula, data)); it makes them from the model registry and reads nothing else "
        "of the models",
}

# Only the row source and the data adapter import Dask (results/dask.py calls them).
DASK_MODULES = {"glmclass.rows.dask", "glmclass.data.dask"}

MAX_LINES = 600
# Modules allowed over MAX_LINES, each with its reason (none today).
LONG_ALLOWED: dict[str, str] = {}

# --- today's violations -------------------------------------------------------------------------
# In tests/architecture_known.json, one list of pairs per rule; they only shrink (delete an entry
# when you fix it). The pairs are:
#   up_floor             (importer, imported module)
#   cycle_edges          (importer, imported module), the imports on a circle
#   private_imports      (importer, "module:_name")
#   dask_imports         (importer, dask module), outside DASK_MODULES
#   kind_guesses         (module, the expression that guesses)
#   duplicate_constants  (module, constant name): one number named in several modules
#   long_modules         (module, "over 600 lines")
#   private_reads        (module, attribute name): reads of another object's private attribute
KNOWN_FILE = Path(__file__).resolve().with_name("architecture_known.json")


def known(rule: str) -> set[tuple[str, str]]:
    """Today's violations of ``rule``, from KNOWN_FILE."""
    return {tuple(pair) for pair in json.loads(KNOWN_FILE.read_text(encoding="utf-8"))[rule]}


# --- reading the package ------------------------------------------------------------------------
@dataclass(frozen=True)
class Module:
    name: str
    is_package: bool
    tree: ast.Module
    n_lines: int


@dataclass(frozen=True)
class Import:
    """One imported name: ``target`` the module it comes from (a submodule when the name is
    one), ``name`` the name (None for ``import x``)."""

    target: str
    name: str | None
    line: int


def read_package(root: Path = PACKAGE) -> dict[str, Module]:
    """Every module of the package by dotted name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        text = path.read_text(encoding="utf-8")
        out[name] = Module(name, is_package, ast.parse(text), len(text.splitlines()))
    return out


def module_from_source(name: str, source: str, is_package: bool = False) -> Module:
    return Module(name, is_package, ast.parse(source), len(source.splitlines()))


def _dynamic_import(node: ast.AST) -> str | None:
    """The module a call ``importlib.import_module("glmclass.x")``, ``import_module("glmclass.x")``
    or ``__import__("glmclass.x")`` imports, when it is named by a string constant."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return node.args[0].value if name in ("import_module", "__import__") else None


def imports(module: Module, known: Iterable[str] = ()) -> Iterator[Import]:
    """Every import of ``module``, at module or function level, resolved to absolute names;
    ``from pkg import sub`` names the submodule when ``sub`` is in ``known``; an
    ``importlib.import_module("glmclass.x")`` or ``__import__("glmclass.x")`` of a constant
    name counts as ``import glmclass.x``."""
    known = set(known)
    for node in ast.walk(module.tree):
        dynamic = _dynamic_import(node)
        if dynamic is not None:
            yield Import(dynamic, None, node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, None, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.name.split(".")
                base = base if module.is_package else base[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield Import(sub if sub in known else target, alias.name, node.lineno)


def import_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (the nearest known enclosing module)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, module in modules.items():
        for imp in imports(module, modules):
            target = imp.target
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def package_graph(graph: dict[str, set[str]], allowed: Iterable[tuple[str, str]] = ()
                  ) -> dict[str, set[str]]:
    """The import graph between the package's folders and top-level modules (``glmclass.models``
    for every module under models/, ``glmclass.cli``; the root is ``glmclass``), leaving out
    the ``allowed`` module imports."""
    allowed = set(allowed)

    def room(name: str) -> str:
        return ".".join(name.split(".")[:2])

    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        out.setdefault(room(a), set())
        for b in targets:
            if (a, b) not in allowed and room(a) != room(b):
                out[room(a)].add(room(b))
    return out


# --- the checkers ---------------------------------------------------------------------------------
def floor_of(name: str, floors: dict[str, int] = FLOORS) -> int | None:
    """The floor of a module: its longest key in ``floors`` (the root key matches only itself)."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        key = ".".join(parts[:n])
        if key in floors and (n > 1 or name == key):
            return floors[key]
    return None


def up_floor_imports(graph: dict[str, set[str]], floors: dict[str, int] = FLOORS,
                     allowed: Iterable[tuple[str, str]] = ()) -> set[tuple[str, str]]:
    """(importer, imported) pairs where the imported module is on a higher floor."""
    allowed = set(allowed)
    return {(a, b) for a, targets in graph.items() for b in targets
            if (a, b) not in allowed and floor_of(b, floors) > floor_of(a, floors)}


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def cycle_edges(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The imports that lie on an import circle: a -> b where b leads back to a."""
    reach = {name: reachable(graph, name) for name in graph}
    return {(a, b) for a, targets in graph.items() for b in targets if a in reach.get(b, ())}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(module: Module, known: Iterable[str]) -> set[tuple[str, str]]:
    """``from x import _name`` of another module's private name, as (module, "x:_name").

    A private *module* imported by a module of its own package (``from . import _common``) is
    not counted: it is private to that package, not to a module."""
    known = set(known)
    own_package = module.name if module.is_package else module.name.rpartition(".")[0]
    found = set()
    for imp in imports(module, known):
        if imp.name is None or not _is_private(imp.name):
            continue
        if imp.target in known and imp.target.rpartition(".")[0] == own_package \
                and imp.target.rpartition(".")[2] == imp.name:
            continue
        found.add((module.name, f"{imp.target}:{imp.name}"))
    return found


def _foreign_names(module: Module) -> set[str]:
    """Names bound by imports of modules outside the package (``np``, ``sys``, ``da``)."""
    out = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names
                    if not a.name.startswith("glmclass")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 \
                and not (node.module or "").startswith("glmclass"):
            out |= {a.asname or a.name for a in node.names}
    return out


def private_reads(module: Module) -> set[tuple[str, str]]:
    """Reads of another object's private attribute (``res._fit``, ``model._fit_levels``), as
    (module, attribute name). Not counted: ``self._x`` and ``cls._x``, ``super()._x``,
    protocol names ending in ``_`` (``_repr_html_``), and attributes of modules and names
    imported from outside the package (``sys._getframe``: their owners' business). A name
    given as a string to ``getattr``/``hasattr``/``setattr``/``delattr``
    (``getattr(env, "_namespaces", [])``) is read all the same."""
    foreign = _foreign_names(module)
    found = set()
    for node in ast.walk(module.tree):
        if _call_of(node, "getattr") or _call_of(node, "hasattr") or _call_of(node, "setattr") \
                or _call_of(node, "delattr"):
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                node = ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Load())
        if not (isinstance(node, ast.Attribute) and _is_private(node.attr)) \
                or node.attr.endswith("_"):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in {"self", "cls"} | foreign:
            continue
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                and value.func.id == "super":
            continue
        found.add((module.name, node.attr))
    return found


def dask_imports(module: Module) -> set[tuple[str, str]]:
    """Imports of dask or distributed, as (module, imported name)."""
    found = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found |= {(module.name, n) for n in names if n.split(".")[0] in ("dask", "distributed")}
    return found


_MODEL_NAMES = {"model", "m"}


def _is_model(node: ast.AST) -> bool:
    """``model``, ``m`` or ``<anything>.model``."""
    return (isinstance(node, ast.Name) and node.id in _MODEL_NAMES) or (
        isinstance(node, ast.Attribute) and node.attr == "model")


def _is_params(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "params") or (
        isinstance(node, ast.Attribute) and node.attr == "params")


def _reads_params_shape(test: ast.AST) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and node.attr in ("ndim", "shape") \
                and _is_params(node.value):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("ndim", "shape") and node.args \
                and _is_params(node.args[0]):  # np.ndim(params)
            return True
    return False


def _call_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
        and node.func.id == name and bool(node.args)


def kind_guesses(module: Module) -> set[tuple[str, str]]:
    """Code that guesses a model's kind, as (module, the source): ``hasattr(model, ...)`` (also
    ``m``, ``x.model``); a test of the shape of ``params`` (``params.ndim``, ``params.shape``
    in a comparison or a branch's condition; ``params.shape[0]`` as a size is fine); or of its
    type (``isinstance(res.params, pd.DataFrame)``)."""
    found = set()
    for node in ast.walk(module.tree):
        if (_call_of(node, "hasattr") and _is_model(node.args[0])) or (
                _call_of(node, "isinstance") and _is_params(node.args[0])):
            found.add((module.name, ast.unparse(node)))
        elif isinstance(node, ast.Compare) and _reads_params_shape(node):
            found.add((module.name, ast.unparse(node)))
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)) and _reads_params_shape(node.test) \
                and not isinstance(node.test, ast.Compare):
            found.add((module.name, ast.unparse(node.test)))
    return found


_CONSTANT = re.compile(r"_?[A-Z][A-Z0-9_]*")
_NUMERIC_CALLS = {"float", "int", "np", "numpy", "math"}


def _is_number(node: ast.AST) -> bool:
    """A number written in the code: literals, arithmetic, and numpy/math/float/int calls and
    attributes of such (``1e-10``, ``2 ** 20``, ``float(np.log(2 * np.pi))``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _is_number(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_number(node.left) and _is_number(node.right)
    if isinstance(node, ast.Call):
        return _is_numeric_callee(node.func) and all(_is_number(a) or _is_numeric_callee(a)
                                                     for a in node.args)
    if isinstance(node, ast.Attribute):
        return _is_numeric_callee(node)
    return False


def _is_numeric_callee(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Call):
        return _is_number(node)
    return isinstance(node, ast.Name) and node.id in _NUMERIC_CALLS


def numeric_constants(module: Module) -> set[str]:
    """Module-level UPPER_CASE names bound to a number (a threshold, a tolerance, a constant),
    without a leading underscore."""
    names = set()
    for node in module.tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for t in targets:
            if isinstance(t, ast.Name) and _CONSTANT.fullmatch(t.id) and _is_number(value):
                names.add(t.id.lstrip("_"))
    return names


def duplicate_constants(modules: Iterable[Module]) -> set[tuple[str, str]]:
    """(module, name) for each module defining a numeric constant that another module defines
    too."""
    where: dict[str, set[str]] = {}
    for m in modules:
        for name in numeric_constants(m):
            where.setdefault(name, set()).add(m.name)
    return {(m, name) for name, mods in where.items() if len(mods) > 1 for m in mods}


def long_modules(modules: Iterable[Module], limit: int = MAX_LINES,
                 allowed: Iterable[str] = ()) -> set[tuple[str, str]]:
    """(module, "over <limit> lines") for modules over ``limit`` lines."""
    allowed = set(allowed)
    return {(m.name, f"over {limit} lines") for m in modules if m.n_lines > limit
            and m.name not in allowed}


def compare_with_known(rule: str, found: set, listed: set) -> None:
    """Fail on a violation not in ``listed`` and on a listed one that has gone."""
    new, gone = sorted(found - listed), sorted(listed - found)
    remaining = len(found & listed)
    message = [f"{rule}: {remaining} known violation(s) remain"]
    if new:
        message.append(f"{len(new)} NEW violation(s) (fix them; do not list them): {new}")
    if gone:
        message.append(f"{len(gone)} listed violation(s) no longer found (delete them from the "
                       f"list in tests/architecture_known.json, it only shrinks): {gone}")
    assert not new and not gone, "\n".join(message)


# --- the package --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def package() -> dict[str, Module]:
    return read_package()


@pytest.fixture(scope="module")
def graph(package) -> dict[str, set[str]]:
    return import_graph(package)


def test_every_module_has_a_floor(package):
    missing = sorted(name for name in package if floor_of(name) is None)
    assert not missing, f"add these modules to FLOORS (with the floor of ARCHITECTURE.md): " \
                        f"{missing}"


def test_no_import_runs_up_a_floor(graph):
    for pair in ALLOWED_UP:
        assert pair[1] in graph[pair[0]], f"the allowed up-floor import {pair} is gone: " \
                                          "delete it from ALLOWED_UP"
    compare_with_known("imports up a floor", up_floor_imports(graph, allowed=ALLOWED_UP),
                       known("up_floor"))


def test_formula_api_reads_only_the_registry_of_the_models(graph):
    assert {m for m in graph["glmclass.formula.api"] if floor_of(m) > 2} == \
        {"glmclass.models.registry"}


def test_no_import_circles(graph):
    compare_with_known("imports on a circle", cycle_edges(graph), known("cycle_edges"))


def test_no_import_circles_between_folders(graph):
    # Modules may import without a circle while their folders import each other (formula/
    # <-> models/ through formula.api -> models.registry and models.base -> formula.design):
    # a drawing of the folders then has an arrow running back up. Only ALLOWED_UP may do so.
    found = cycle_edges(package_graph(graph, ALLOWED_UP))
    assert not found, f"folders that import each other (through modules not on a circle): " \
                      f"{sorted(found)}"


def test_no_private_names_imported_across_modules(package):
    found = set().union(*(private_imports(m, package) for m in package.values()))
    compare_with_known("private names imported", found, known("private_imports"))


def test_no_private_attributes_of_other_objects_are_read(package):
    found = set().union(*(private_reads(m) for m in package.values()))
    compare_with_known("private attributes of other objects read", found,
                       known("private_reads"))


def test_dask_is_imported_only_by_the_row_source_and_the_data_adapter(package):
    found = set().union(*(dask_imports(m) for m in package.values()))
    assert {m for m, _ in found} >= DASK_MODULES, "the row source and the data adapter moved?"
    outside = {pair for pair in found if pair[0] not in DASK_MODULES}
    compare_with_known("dask imports outside rows/dask.py and data/dask.py", outside,
                       known("dask_imports"))


def test_no_model_kind_is_guessed(package):
    found = set().union(*(kind_guesses(m) for m in package.values()))
    compare_with_known("model kinds guessed by hasattr or the shape of params", found,
                       known("kind_guesses"))


def test_each_numeric_constant_is_defined_once(package):
    compare_with_known("numeric constants defined in more than one module",
                       duplicate_constants(package.values()), known("duplicate_constants"))


def test_no_module_over_600_lines(package):
    assert set(LONG_ALLOWED) <= set(package), "LONG_ALLOWED names a module that is gone"
    sizes = {m.name: m.n_lines for m in package.values() if m.n_lines > MAX_LINES}
    compare_with_known(f"modules over {MAX_LINES} lines {sizes}",
                       long_modules(package.values(), allowed=LONG_ALLOWED),
                       known("long_modules"))


# --- the checkers on synthetic code (each must catch what it is for) ---------------------------
def test_imports_resolve_relative_and_function_level_imports():
    pkg = {
        "glmclass": module_from_source("glmclass", "", True),
        "glmclass.results": module_from_source("glmclass.results", "", True),
        "glmclass.results.io": module_from_source(
            "glmclass.results.io", "from .. import version\ndef f():\n    from .base import x\n"),
        "glmclass.results.base": module_from_source("glmclass.results.base", ""),
        "glmclass.version": module_from_source("glmclass.version", ""),
    }
    assert import_graph(pkg)["glmclass.results.io"] == {"glmclass.version",
                                                        "glmclass.results.base"}


def test_imports_resolve_importlib_and_dunder_import_of_a_constant_name():
    pkg = {
        "glmclass.results.io": module_from_source(
            "glmclass.results.io",
            "import importlib\ndef f(name):\n    importlib.import_module('glmclass.models.glm')\n"
            "    __import__('glmclass.cli')\n    import_module(name)\n"),
        "glmclass.models.glm": module_from_source("glmclass.models.glm", ""),
        "glmclass.cli": module_from_source("glmclass.cli", ""),
    }
    assert import_graph(pkg)["glmclass.results.io"] == {"glmclass.models.glm", "glmclass.cli"}


def test_folder_circle_checker_sees_a_circle_of_folders_without_one_of_modules():
    graph = {"glmclass.formula.api": {"glmclass.models.registry"},
             "glmclass.formula.design": set(), "glmclass.models.registry": {"glmclass.models.base"},
             "glmclass.models.base": {"glmclass.formula.design"}, "glmclass.cli": {"glmclass"},
             "glmclass": {"glmclass.models.registry"}}
    assert cycle_edges(graph) == set()
    folders = package_graph(graph)
    assert folders["glmclass.formula"] == {"glmclass.models"} and folders["glmclass"] == {
        "glmclass.models"}
    assert cycle_edges(folders) == {("glmclass.formula", "glmclass.models"),
                                    ("glmclass.models", "glmclass.formula")}
    assert cycle_edges(package_graph(graph, ALLOWED_UP)) == set()


def test_up_floor_checker_catches_an_upward_import():
    graph = {"glmclass.results.io": {"glmclass", "glmclass.errors"},
             "glmclass.formula.api": {"glmclass.models.registry"}}
    assert up_floor_imports(graph) == {("glmclass.results.io", "glmclass"),
                                       ("glmclass.formula.api", "glmclass.models.registry")}
    assert up_floor_imports(graph, allowed=ALLOWED_UP) == {("glmclass.results.io", "glmclass")}
    assert floor_of("glmclass.unknown") is None and floor_of("glmclass.rows.dask") == 1


def test_cycle_checker_catches_a_circle_and_only_its_edges():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"a"}}
    assert cycle_edges(graph) == {("a", "b"), ("b", "c"), ("c", "a")}
    assert cycle_edges({"a": {"b"}, "b": set()}) == set()


def test_private_import_checker():
    pkg = {
        "glmclass.plot": module_from_source("glmclass.plot", "", True),
        "glmclass.plot._common": module_from_source("glmclass.plot._common", ""),
        "glmclass.plot.roc": module_from_source("glmclass.plot.roc",
                                                "from . import _common\nfrom .x import __all__"),
        "glmclass.results.io": module_from_source(
            "glmclass.results.io", "from ..formula.design import _referenced_columns\n"
                                   "from ..plot import _common\n"),
    }
    found = set().union(*(private_imports(m, pkg) for m in pkg.values()))
    assert found == {("glmclass.results.io", "glmclass.formula.design:_referenced_columns"),
                     ("glmclass.results.io", "glmclass.plot._common:_common")}


def test_private_read_checker():
    src = ("import sys\nimport numpy as np\nfrom . import blocks\n"
           "class A(B):\n    def f(self, res):\n"
           "        a = self._x + res._fit + res.model._levels + blocks._add_into(1)\n"
           "        b = super()._setup() + sys._getframe() + np._NoValue + res._repr_html_()\n"
           "        c = getattr(res, '_env', None) or hasattr(self, '_y') or getattr(res, 'a')\n"
           "        return cls._y\n")
    assert private_reads(module_from_source("glmclass.m", src)) == {
        ("glmclass.m", "_fit"), ("glmclass.m", "_levels"), ("glmclass.m", "_add_into"),
        ("glmclass.m", "_env")}


def test_dask_checker():
    m = module_from_source("glmclass.results.x", "import dask.array as da\n"
                           "def f():\n    from distributed import Client\n"
                           "from .dask import y\nimport dasky\n")
    assert dask_imports(m) == {("glmclass.results.x", "dask.array"),
                               ("glmclass.results.x", "distributed")}


def test_kind_guess_checker():
    src = ("def f(model, res, params):\n"
           "    if hasattr(model, 'codes'):\n        pass\n"
           "    k = 1 if hasattr(res.model, 'family') else 2\n"
           "    if params.ndim == 2:\n        pass\n"
           "    while len(res.params.shape) > 1:\n        pass\n"
           "    n = params.shape[0]\n"
           "    multi = isinstance(res.params, pd.DataFrame) or np.ndim(params) > 1\n"
           "    if self.params.ndim:\n        pass\n"
           "    return hasattr(res, 'bse') or isinstance(x, pd.DataFrame)\n")
    found = {s for _, s in kind_guesses(module_from_source("m", src))}
    assert found == {"hasattr(model, 'codes')", "hasattr(res.model, 'family')",
                     "params.ndim == 2", "len(res.params.shape) > 1",
                     "isinstance(res.params, pd.DataFrame)", "np.ndim(params) > 1",
                     "self.params.ndim"}


def test_duplicate_constant_checker():
    a = module_from_source("a", "TOL = 1e-10\n_EPS = 2 ** -52\nNAME = 'x'\nLOG = float(np.log(2))")
    b = module_from_source("b", "EPS: float = 1e-16\nNAME = 'x'\ndef f():\n    TOL = 1\n")
    c = module_from_source("c", "LOG = float(np.log(2))\nT = TypeVar('T')\n")
    assert numeric_constants(a) == {"TOL", "EPS", "LOG"}
    assert duplicate_constants([a, b, c]) == {("a", "EPS"), ("b", "EPS"), ("a", "LOG"),
                                              ("c", "LOG")}


def test_long_module_checker():
    m = module_from_source("m", "x = 1\n" * 601)
    assert long_modules([m]) == {("m", "over 600 lines")}
    assert long_modules([m], allowed={"m"}) == set()
    assert long_modules([module_from_source("s", "x = 1\n" * 600)]) == set()


def test_known_violations_must_shrink():
    with pytest.raises(AssertionError, match="1 NEW violation"):
        compare_with_known("rule", {("a", "b")}, set())
    with pytest.raises(AssertionError, match="no longer found"):
        compare_with_known("rule", set(), {("a", "b")})
    compare_with_known("rule", {("a", "b")}, {("a", "b")})


# --- the version, written once (the model list: tests/models/test_registry.py) ---------------
def test_the_version_is_written_once():
    import glmclass as gc
    from glmclass import version

    text = (PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dynamic = \["version"\]', text, re.M)
    assert re.search(r'^version = \{ attr = "glmclass\.version\.__version__" \}$', text, re.M)
    assert not re.search(r'^version = "', text, re.M), "pyproject.toml writes the version again"
    assert gc.__version__ == version.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version.__version__)
