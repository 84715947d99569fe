"""Formula text before any engine sees it: the two sides, R's ``.``, two-column binomial
responses, named offsets, very long sums, and the Python expressions a formula contains.

Everything here works on the formula string (with Python's tokenizer, so that parentheses and
quoted names are respected) and on patsy's parser, which evaluates nothing. The result is a
:class:`ParsedFormula`: the right-hand side an engine builds, the response's parts, and every
expression the engines will evaluate, so that :mod:`glmclass.formula.namespace` can check them
all before any is run.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from dataclasses import dataclass

import patsy

from ..errors import DataError

#: Above this many top-level terms a sum is regrouped in balanced parentheses: patsy's parser
#: recurses once per ``+`` and stops near 1000 terms.
LONG_SUM = 64


def split_formula(formula: str) -> tuple[str | None, str]:
    """Split ``"lhs ~ rhs"`` into its two sides (lhs None for a one-sided formula)."""
    if not isinstance(formula, str):
        raise TypeError(
            f"formula must be a string like 'y ~ x1 + x2', got {type(formula).__name__}"
        )
    if "~" not in formula:
        return None, " ".join(formula.splitlines()).strip()
    lhs, rhs = " ".join(formula.splitlines()).split("~", 1)
    return lhs.strip(), rhs.strip()


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        raise DataError(f"cannot parse the formula {text!r}: {exc}") from None
    skip = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT,
            tokenize.COMMENT)
    return [t for t in toks if t.type not in skip]


def top_level(text: str, separators: tuple[str, ...] = ("+", "-")) -> list[tuple[str, str]]:
    """Split ``text`` at the separators outside parentheses and brackets.

    Returns
    -------
    list of (separator, chunk)
        The separator before each chunk ("" for the first), chunks stripped.
    """
    text = " ".join(text.splitlines())
    out, depth, start, sep = [], 0, 0, ""
    for tok in _tokens(text):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif depth == 0 and tok.type == tokenize.OP and tok.string in separators:
            pos = tok.start[1]
            out.append((sep, text[start:pos].strip()))
            sep, start = tok.string, pos + len(tok.string)
    out.append((sep, text[start:].strip()))
    return out


def quote(column) -> str:
    """A column as a formula term: the name itself if it is an identifier, else ``Q("...")``."""
    name = str(column)
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return f"Q({name!r})"


def expand_dot(rhs: str, columns: list) -> str:
    """Replace R's ``.`` ("all other columns") by the sum of ``columns``, in parentheses."""
    toks = _tokens(rhs)
    dots = []
    for i, tok in enumerate(toks):
        if tok.type != tokenize.OP or tok.string != ".":
            continue
        before = toks[i - 1] if i else None
        after = toks[i + 1] if i + 1 < len(toks) else None
        attribute = before is not None and (before.type in (tokenize.NAME, tokenize.NUMBER)
                                            or before.string in (")", "]"))
        if not attribute and (after is None or after.type != tokenize.NAME):
            dots.append(tok.start[1])
    if not dots:
        return rhs
    if not columns:
        raise DataError("the formula uses '.', but the data have no other columns")
    expansion = "(" + " + ".join(quote(c) for c in columns) + ")"
    for pos in reversed(dots):
        rhs = rhs[:pos] + expansion + rhs[pos + 1:]
    return rhs


def balance(rhs: str) -> str:
    """Regroup a long top-level sum as nested balanced sums (``(a + b) + (c + d)``), which
    patsy reads as the same terms in the same order without deep recursion.

    Intercept terms (``0``, ``1``, ``-1``) and removed terms stay at the top level: patsy
    honours ``+ 0`` only there.
    """
    parts = top_level(rhs)
    if len(parts) <= LONG_SUM:
        return rhs
    out, run = [], []

    def flush():
        if run:
            out.append(("+" if out else "", _nest(run)))
            run.clear()

    for sep, chunk in parts:
        if sep in ("", "+") and chunk not in ("0", "1", ""):
            run.append(chunk)
        else:
            flush()
            out.append((sep, chunk))
    flush()
    return " ".join(f"{sep} {chunk}".strip() for sep, chunk in out)


def _nest(terms: list[str]) -> str:
    if len(terms) == 1:
        return terms[0]
    mid = len(terms) // 2
    return f"({_nest(terms[:mid])}) + ({_nest(terms[mid:])})"


def response_parts(lhs: str) -> list[str]:
    """The response's expressions: one, or two for a binomial count response written as
    statsmodels does (``successes + failures``) or as R does (``cbind(successes, failures)``).
    """
    parts = top_level(lhs, ("+",))
    if len(parts) == 1:
        inner = _call_args(lhs, "cbind")
        if inner is None:
            return [lhs]
        parts = [("", a) for a in inner]
        what = "cbind(successes, failures)"
    else:
        what = "successes + failures"
    if len(parts) != 2 or not all(chunk for _, chunk in parts):
        raise DataError(f"the response {lhs!r} has {len(parts)} parts; a binomial response of "
                        f"counts has two, written '{what} ~ ...'")
    # each part is a Python expression (n - k is a difference, not patsy's term removal)
    return [chunk if _is_single(chunk) else f"I({chunk})" for _, chunk in parts]


def _is_single(code: str) -> bool:
    """A name or a call (``k``, ``Q("a b")``, ``I(n - k)``): one factor as it stands."""
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Name, ast.Call))


def _call_args(text: str, func: str) -> list[str] | None:
    """The argument texts of ``func(a, b)`` when ``text`` is exactly such a call, else None."""
    text = text.strip()
    if not (text.startswith(func) and text.endswith(")")):
        return None
    rest = text[len(func):].lstrip()
    if not rest.startswith("("):
        return None
    inner = rest[1:-1]
    parts = top_level(inner, (",",))
    if _balanced(inner):
        return [chunk for _, chunk in parts]
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for tok in _tokens(text):
        if tok.string in "([{":
            depth += 1
        elif tok.string in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def offset_terms(rhs: str) -> list[str]:
    """The ``offset(...)`` terms of a right-hand side (as written).

    Raises
    ------
    DataError
        When an offset is removed (``- offset(z)``) or used inside another term.
    """
    found = []
    for sep, chunk in top_level(rhs):
        if _call_args(chunk, "offset") is not None:
            if sep == "-":
                raise DataError(f"'- {chunk}' removes an offset; write the formula without it")
            found.append(chunk)
        elif _calls(chunk, "offset"):
            raise DataError(f"offset() must be a term of its own ('y ~ x + offset(np.log(n))'), "
                            f"not part of {chunk!r}")
    return found


def _calls(text: str, func: str) -> bool:
    """Whether ``text`` calls ``func(...)`` anywhere."""
    toks = _tokens(text)
    return any(t.type == tokenize.NAME and t.string == func and i + 1 < len(toks)
               and toks[i + 1].string == "(" for i, t in enumerate(toks))


@dataclass(frozen=True)
class ParsedFormula:
    """A formula ready for an engine.

    Attributes
    ----------
    formula : str
        The formula as the user wrote it.
    lhs : list of str
        The response's expressions: [] (one-sided), one, or two (successes, failures).
    rhs : str
        The right-hand side an engine builds (``.`` expanded, named offsets added, long sums
        regrouped).
    offsets : list of str
        The ``offset(...)`` terms of ``rhs`` (their columns are the offset, not the design).
    rhs_codes : list of str
        The Python expressions of the right-hand side's factors.
    """

    formula: str
    lhs: list[str]
    rhs: str
    offsets: list[str]
    rhs_codes: list[str]

    @property
    def codes(self) -> list[str]:
        """Every Python expression the engines will evaluate (both sides)."""
        return list(self.lhs) + list(self.rhs_codes)


def parse(formula: str, columns: list, extra_terms: tuple[str, ...] = (),
          exclude: tuple = ()) -> ParsedFormula:
    """Parse ``formula`` against the data's ``columns``.

    Parameters
    ----------
    formula : str
    columns : list
        The data's column labels (for ``.``).
    extra_terms : tuple of str
        Terms appended to the right-hand side (the offsets named by ``offset=``/``exposure=``).
    exclude : tuple
        Columns that ``.`` leaves out besides the response's (weights named by column).
    """
    lhs, rhs = split_formula(formula)
    lhs_parts = response_parts(lhs) if lhs else []
    if not rhs:
        raise DataError(f"the formula {formula!r} has no right-hand side: write 'y ~ x' (or "
                        "'y ~ 1' for an intercept only)")
    lhs_names = set().union(*(_names(p) for p in lhs_parts)) if lhs_parts else set()
    others = [c for c in columns if str(c) not in lhs_names and c not in exclude]
    rhs = expand_dot(rhs, others)
    if extra_terms:
        rhs = f"{rhs} + {' + '.join(extra_terms)}"
    offsets = offset_terms(rhs)
    rhs = balance(rhs)
    codes: list[str] = []
    try:
        desc = patsy.ModelDesc.from_formula("~ " + rhs)
    except patsy.PatsyError as exc:
        raise DataError(f"cannot parse the formula {formula!r}: {str(exc).splitlines()[0]}"
                        f"{_hint(formula)}") from None
    except RecursionError:
        raise DataError(f"the formula {formula!r} is too deeply nested to parse") from None
    for term in desc.rhs_termlist:
        for factor in term.factors:
            if factor.code not in codes:
                codes.append(factor.code)
    return ParsedFormula(formula, lhs_parts, rhs, offsets, codes)


def _hint(formula: str) -> str:
    """What an R user probably meant."""
    if "`" in formula:
        return ("; a column name with spaces or symbols is written Q('mean radius'), not in "
                "backticks")
    if "^" in formula:
        return "; powers and interaction orders are written ** (x ** 2 inside I(), (a + b) ** 2)"
    return ""


def _names(code: str) -> set[str]:
    """Identifiers and ``Q("...")`` names an expression uses (no checks)."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return set()
    out = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Q" \
                and n.args and isinstance(n.args[0], ast.Constant):
            out.add(str(n.args[0].value))
    return out


def names_in(codes: list[str]) -> set[str]:
    """Every identifier and quoted column name of the given expressions."""
    out: set[str] = set()
    for code in codes:
        out |= _names(code)
    return out


def written_term_order(formula: str, columns: list) -> dict[str, int]:
    """Position of each right-hand-side term of ``formula`` as written (patsy's term names),
    R's ``.`` expanded to ``columns`` in their order; patsy's parser reads the text and
    evaluates nothing. Empty when the formula cannot be read."""
    try:
        rhs = expand_dot(split_formula(formula)[1], columns)
        desc = patsy.ModelDesc.from_formula("~ " + rhs)
    except (patsy.PatsyError, DataError, SyntaxError, ValueError):
        return {}
    return {t.name(): i for i, t in enumerate(desc.rhs_termlist)}
