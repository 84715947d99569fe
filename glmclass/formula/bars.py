"""lme4's random-effect terms in a formula: ``(1 | g)``, ``(x | g)``, ``(0 + x | g)``,
``(x || g)``, crossed ``(1 | a) + (1 | b)`` and nested ``(1 | a/b)``.

The bar terms are found with Python's tokenizer (never evaluated): what stands left of the bar
is a one-sided formula built by the ordinary design engines (:func:`build_design`, with their
safety rules), what stands right of it names grouping columns. The rest of the formula (the
fixed part) goes to the engines unchanged.

Each term gives a block of the random-effects design: for a term with ``p`` columns and ``l``
levels, the ``l * p`` random effects are ordered level-major (the ``p`` effects of level 1,
then of level 2, ...) and the terms are ordered by decreasing number of levels, as lme4's
``mkReTrms`` orders them, so that the covariance parameters ``theta`` follow lme4's order.

References
----------
Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting linear mixed-effects
models using lme4. *Journal of Statistical Software* 67(1), §2.2-2.3 (the bar syntax, Z and
the relative covariance factor Lambda).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from ..errors import DataError
from .design import build_design
from .parse import split_formula, top_level

#: Rows per chunk when the grouping factors are coded (:func:`group_codes`).
CODE_CHUNK = 1 << 16


@dataclass(frozen=True)
class BarTerm:
    """One random-effect term ``(expr | factors)`` as written (after ``||`` and ``/`` are
    expanded).

    Attributes
    ----------
    expr : str
        The one-sided formula of the effects: ``"1"``, ``"1 + x"``, ``"0 + x"``.
    factors : tuple of str
        The grouping columns; several (``("b", "a")``) group by their interaction, named
        ``"b:a"`` as lme4 names the inner factor of ``a/b``.
    """

    expr: str
    factors: tuple[str, ...]

    @property
    def group(self) -> str:
        """The grouping factor's name (lme4's: ``"herd"``, ``"b:a"``)."""
        return ":".join(self.factors)


def _strip_parens(chunk: str) -> str | None:
    """The inside of a chunk wrapped in one pair of parentheses, else None."""
    if not (chunk.startswith("(") and chunk.endswith(")")):
        return None
    inner = chunk[1:-1]
    depth = 0
    for ch in inner:  # "(a) + (b)" is not one parenthesised chunk
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return None
    return inner.strip()


def _uncorrelated(expr: str) -> list[str]:
    """``(x + z || g)`` as lme4 expands it: ``(1 | g) + (0 + x | g) + (0 + z | g)``."""
    parts = [c for s, c in top_level(expr, ("+", "-")) if c and s != "-"]
    removed = [c for s, c in top_level(expr, ("+", "-")) if s == "-"]
    intercept = not any(c in ("0", "-1") for c in parts) and "1" not in removed
    out = ["1"] if intercept else []
    out += [f"0 + {c}" for c in parts if c not in ("0", "1", "-1")]
    return out


def _groupings(text: str, formula: str) -> list[tuple[str, ...]]:
    """The grouping factors of the right of a bar: ``g``, ``a:b``, nested ``a/b/c`` (=
    ``a``, ``b:a``, ``c:b:a`` as lme4 names them)."""
    levels = [c for _, c in top_level(text, ("/",))]
    out = []
    for i in range(len(levels)):
        names: list[str] = []
        for piece in reversed(levels[:i + 1]):
            names += [c for _, c in top_level(piece, (":",))]
        if any(not n.isidentifier() for n in names):
            raise DataError(f"the grouping factor {text!r} in {formula!r} must name columns of "
                            "the data (e.g. (1 | school) or (1 | school/class)); transform "
                            "the column in the DataFrame first")
        out.append(tuple(names))
    return out


def split_bars(formula: str) -> tuple[str, tuple[BarTerm, ...]]:
    """Split a formula into its fixed part and its random-effect terms.

    Parameters
    ----------
    formula : str
        ``"y ~ x + (1 | g) + (0 + x | g)"``.

    Returns
    -------
    fixed : str
        The formula without the bar terms (``"y ~ x"``; ``"y ~ 1"`` when nothing is left).
    terms : tuple of BarTerm
        In the order written, ``||`` and ``/`` expanded as lme4 expands them.

    Raises
    ------
    DataError
        A formula without a random-effect term or response, or a bar term that cannot be
        read, naming it.
    """
    lhs, rhs = split_formula(formula)
    if not lhs:
        raise DataError(f"the formula {formula!r} has no response: write 'y ~ x + (1 | g)'")
    keep, terms = [], []
    for sep, chunk in top_level(rhs, ("+", "-")):
        inner = _strip_parens(chunk)
        bars = top_level(inner, ("|",)) if inner is not None else []
        if len(bars) < 2:
            keep.append(f"{sep} {chunk}" if sep else chunk)
            continue
        if sep == "-":
            raise DataError(f"a random-effect term cannot be removed with '-': {chunk!r}")
        if len(bars) == 2:
            exprs, group = [bars[0][1]], bars[1][1]
        elif len(bars) == 3 and bars[1][1] == "":
            exprs, group = _uncorrelated(bars[0][1]), bars[2][1]
        else:
            raise DataError(f"cannot read the random-effect term {chunk!r}: write (x | g), "
                            "(x || g) or (1 | a/b)")
        if not exprs or not all(exprs) or not group:
            raise DataError(f"the random-effect term {chunk!r} needs effects left of the bar "
                            "and a grouping column right of it, e.g. (1 | g)")
        for factors in _groupings(group, formula):
            terms += [BarTerm(e, factors) for e in exprs]
    if not terms:
        raise DataError(f"the formula {formula!r} has no random-effect term such as (1 | g); "
                        "fit a model without random effects with gc.GLM")
    fixed = " ".join(keep).strip().lstrip("+").strip() or "1"
    return f"{lhs} ~ {fixed}", tuple(terms)


def bar_columns(terms: tuple[BarTerm, ...], data: pd.DataFrame) -> list:
    """Columns of ``data`` the bar terms use (grouping columns and those of their effects)."""
    names: set[str] = set()
    for t in terms:
        names.update(t.factors)
        for _, c in top_level(t.expr, ("+", "-", "*", ":", "(", ")", ",")):
            names.add(c.strip())
    return [c for c in data.columns if str(c) in names]


@dataclass(frozen=True)
class RandomBlock:
    """The design of one random-effect term on the rows of a fit.

    Attributes
    ----------
    group : str
        Grouping factor name.
    names : list of str
        The term's effect columns (``"(Intercept)"``, ``"x"``).
    levels : pandas.Index
        The grouping factor's levels, sorted.
    codes : ndarray of int of shape (n_obs,)
        Each row's level (position in ``levels``): int32 when the levels allow (half the
        bytes of NumPy's default integers).
    X : ndarray of shape (n_obs, p)
        The effect columns at each row; for effects the same on every row (a random
        intercept's column of ones) a read-only broadcast view of one row, which takes no
        memory per row (:attr:`shared_row`).
    spec : object
        The term's design spec, which builds ``X`` for new data.
    """

    group: str
    names: list[str]
    levels: pd.Index
    codes: np.ndarray
    X: np.ndarray
    spec: Any

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    @property
    def n_effects(self) -> int:
        return self.X.shape[1]

    @property
    def shared_row(self) -> bool:
        """Whether every row has the same effect values (``X`` a broadcast view of one row,
        as for a random intercept)."""
        return self.X.shape[0] > 0 and self.X.strides[0] == 0

    def times(self, L: np.ndarray, rows: slice = slice(None)) -> np.ndarray:
        """``X[rows] @ L``, the rows' effect columns times a p x p factor; for a
        :attr:`shared_row` block a broadcast view of the one row's product (no per-row
        array and no per-row multiply; the same values)."""
        if self.shared_row:
            n = len(range(*rows.indices(self.X.shape[0])))
            return np.broadcast_to(self.X[:1] @ L, (n, L.shape[1]))
        return self.X[rows] @ L

    def without_rows(self) -> RandomBlock:
        """This block without the rows of the fit (codes and effect columns of no row):
        the levels and the design spec, what predictions on new rows read."""
        return replace(self, codes=self.codes[:0], X=self.X[:0])

    def new_codes(self, frame: pd.DataFrame, factors: tuple[str, ...]) -> np.ndarray:
        """Levels of new rows (-1 for a level not seen in the fit)."""
        keys = group_keys(frame, factors)
        return self.levels.get_indexer(keys)


def group_keys(frame: pd.DataFrame, factors: tuple[str, ...]) -> pd.Index:
    """The grouping factor's value on each row: the column itself, or the ``":"``-joined
    values of several (lme4's interaction labels)."""
    missing = [f for f in factors if f not in frame.columns]
    if missing:
        raise ValueError(f"the data lack the grouping column {missing[0]!r} of the "
                         "random-effect terms")
    if len(factors) == 1:
        return pd.Index(frame[factors[0]].to_numpy(), copy=False)
    parts = [frame[f].astype(str).to_numpy(dtype=object) for f in factors]
    out = parts[0]
    for p in parts[1:]:
        out = out + ":" + p
    return pd.Index(out)


def intercept_column(n: int) -> np.ndarray:
    """A random intercept's effect column: ones on ``n`` rows, as a read-only broadcast view
    (no memory per row)."""
    return np.broadcast_to(np.ones((1, 1)), (n, 1))


def group_codes(frame: pd.DataFrame, term: BarTerm) -> tuple[np.ndarray, Any]:
    """Each row's level of the term's grouping factor (int32 codes) and the sorted levels.

    Raises
    ------
    ValueError
        A grouping factor with a missing value or with a single level, naming it.
    """
    keys = group_keys(frame, term.factors)
    if pd.isna(keys).any():  # on the Index itself: no object array of n values
        raise ValueError(f"the grouping column {term.group!r} has missing values; drop "
                         "those rows or fill them in")
    # pandas' sorted factorize (the same levels and codes) by chunks of rows: factorize
    # itself holds a hash table sized to the rows, 2.6 times the codes' bytes at the peak
    values = keys.to_numpy()
    chunks = [slice(a, a + CODE_CHUNK) for a in range(0, len(values), CODE_CHUNK)]
    seen = [pd.unique(values[c]) for c in chunks]
    levels = pd.factorize(pd.Index(np.concatenate(seen)).unique(), sort=True)[1]
    if len(levels) < 2:
        raise ValueError(f"the grouping factor {term.group!r} has a single level: a "
                         "variance between groups needs at least two")
    codes = np.empty(len(values), dtype=np.int32 if len(levels) < 2**31 - 1 else np.intp)
    for c in chunks:
        codes[c] = levels.get_indexer(values[c])
    return codes, levels


def build_blocks(terms: tuple[BarTerm, ...], frame: pd.DataFrame, eval_env: Any,
                 engine: str = "patsy") -> list[RandomBlock]:
    """The random-effects design of each term on ``frame`` (rows already complete), in
    lme4's order of terms (by decreasing number of levels).

    Raises
    ------
    ValueError
        A grouping factor with a missing value or with a single level, naming it.
    """
    blocks = []
    for t in terms:
        # a random intercept's design (a column of ones) is learned on one row, and its
        # effect column is a broadcast view: no n x 1 array of ones is made
        intercept = t.expr.strip() == "1"
        design = build_design(f"~ {t.expr}", frame.iloc[:1] if intercept else frame, "raise",
                              eval_env=eval_env, engine=engine)
        names = [str(n) for n in design.spec.column_names]
        names = ["(Intercept)" if n == "Intercept" else n for n in names]
        X = intercept_column(len(frame)) if intercept else np.asarray(design.exog, dtype=float)
        spec = design.spec
        del design
        codes, levels = group_codes(frame, t)
        blocks.append(RandomBlock(t.group, names, pd.Index(levels).astype(str)
                                  if len(t.factors) > 1 else pd.Index(levels), codes, X, spec))
    nl = [b.n_levels for b in blocks]
    if any(np.diff(nl) > 0):  # lme4: rev(order(nl)), only when some term has more levels
        order = list(reversed(np.argsort(nl, kind="stable")))
        blocks = [blocks[i] for i in order]
    return blocks


def term_factors(terms: tuple[BarTerm, ...]) -> dict[str, tuple[str, ...]]:
    """Grouping factor name -> its columns."""
    return {t.group: t.factors for t in terms}


def z_matrix(blocks: list[RandomBlock], factors: list[np.ndarray] | None = None
             ) -> sparse.csc_matrix:
    """The random-effects design Z (n_obs x q, q = sum of levels x effects), or Z Lambda when
    ``factors`` (one lower-triangular p x p factor per term) is given: the same sparsity, the
    values ``X_k L_k``.

    Parameters
    ----------
    blocks : list of RandomBlock
    factors : list of ndarray of shape (p_k, p_k), optional
    """
    cols = []
    for k, b in enumerate(blocks):
        X = b.X if factors is None else b.X @ factors[k]
        n, p = X.shape
        rows = np.repeat(np.arange(n), p)
        idx = (b.codes.astype(np.intp)[:, None] * p + np.arange(p)[None, :]).ravel()
        cols.append(sparse.csr_matrix((X.ravel(), (rows, idx)), shape=(n, b.n_levels * p)))
    return sparse.hstack(cols, format="csc")


@dataclass(frozen=True)
class RandomFormula:
    """The random-effect terms of a formula with what builds their designs: the terms, the
    formula environment and the design engine of the fixed part, and the whole formula.

    Attributes
    ----------
    terms : tuple of BarTerm
    eval_env : FormulaEnvironment or None
        None once saved and loaded (a pickle or a data-only file): the environment holds
        the caller's namespace, which is code; the designs of the terms are kept in the
        model's blocks (their specs), so nothing needs it after the fit.
    engine : str
    formula : str
    """

    terms: tuple[BarTerm, ...]
    eval_env: Any
    engine: str
    formula: str

    def __getstate__(self) -> dict:
        """The state to save: the terms (plain data), the engine and the formula, without the
        evaluation environment (see ``eval_env``)."""
        return {**self.__dict__, "eval_env": None}
