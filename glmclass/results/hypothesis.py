"""Linear hypotheses on the coefficients of a fit: ``results.wald_test(...)`` and
``results.t_test(...)`` (statsmodels' names, R's ``car::linearHypothesis``).

A hypothesis is ``R b = q`` with ``R`` of shape (m, k) over the k flat coefficients. It is given
as

- a string of linear constraints over the design-column names, in patsy's constraint syntax:
  ``"x1 = x2"``, ``"x1 = 0, x2 + x3 = 1"``, ``"2*x1 - x2/3 = 0"``, ``"C(race)[T.2] =
  C(race)[T.3]"``, ``"a = b = c"`` (two constraints); a constraint without ``=`` means ``= 0``.
  Names are matched as whole column names, longest first, so ``np.log(age)`` or ``I(age **
  2)`` are names, not calls. Numbers may multiply or divide a term; nothing else may.
  For a multinomial logit the coefficient of term ``x`` in the equation of level ``2`` is
  ``[2]x`` (or statsmodels' MNLogit spelling ``y2_x``);
- a list of such strings, or a dict ``{name: value}`` (``name = value`` for each entry);
- a matrix ``R`` (q = 0) or a tuple ``(R, q)``.

The string is parsed by a small tokenizer and a recursive-descent parser; nothing in it is
ever evaluated as code.

References
----------
Fox, J. and Weisberg, S. (2019). *An R Companion to Applied Regression*, 3rd ed., §5.3.5
(``car::linearHypothesis``).
Greene, W. H. (2012). *Econometric Analysis*, 7th ed., §5.4 (the Wald statistic).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import linalg, stats

from ..numerics.stderr import indefinite, quadratic_form_errors

#: Characters that continue an identifier: a name followed by one of them is a longer word.
_WORD = re.compile(r"[A-Za-z0-9_.]")
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_OPERATORS = "+-*/=,()"


@dataclass(frozen=True)
class Constraints:
    """Linear constraints ``R b = q`` on the flat coefficients.

    Attributes
    ----------
    R : ndarray of shape (m, k)
    q : ndarray of shape (m,)
    labels : list of str
        One label per constraint (its text, or ``c0``, ``c1``, ... for a matrix).
    """

    R: np.ndarray
    q: np.ndarray
    labels: list[str] = field(default_factory=list)


# --- the parser ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Token:
    kind: str  # "name", "number", or the operator itself
    value: object
    pos: int


def _tokens(text: str, names: Sequence[str]) -> list[_Token]:
    """Split ``text`` into names (longest first), numbers and operators."""
    ordered = sorted(set(names), key=len, reverse=True)
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        hit = next((nm for nm in ordered if text.startswith(nm, i)
                    and not (_WORD.match(nm[-1]) and i + len(nm) < n
                             and _WORD.match(text[i + len(nm)]))), None)
        if hit is not None:
            out.append(_Token("name", hit, i))
            i += len(hit)
            continue
        m = _NUMBER.match(text, i)
        if m and not (m.end() < n and _WORD.match(text[m.end()])
                      and text[m.end()] not in "0123456789."):
            out.append(_Token("number", float(m.group()), i))
            i = m.end()
            continue
        if ch in _OPERATORS:
            out.append(_Token(ch, ch, i))
            i += 1
            continue
        word = re.match(r"[^\s=,+\-*/]+", text[i:]).group()
        raise ValueError(f"hypothesis {text!r}: {word!r} (at character {i}) is neither "
                         f"a coefficient name nor a number (nothing in a hypothesis is "
                         f"evaluated); names are {list(names)}")
    return out


class _Parser:
    """Recursive descent over the tokens; every value is a linear form ``(coefs, const)``.

    Grammar (lowest precedence first)::

        constraints := equation ("," equation)*
        equation    := sum ("=" sum)*
        sum         := product (("+" | "-") product)*
        product     := unary (("*" | "/") unary)*
        unary       := ("+" | "-") unary | atom
        atom        := number | name | "(" sum ")"
    """

    def __init__(self, text: str, tokens: list[_Token], position: Mapping[str, int], k: int):
        self.text, self.tokens, self.position, self.k = text, tokens, position, k
        self.i = 0

    def error(self, what: str) -> ValueError:
        return ValueError(f"hypothesis {self.text!r} is not a linear constraint over the "
                          f"coefficient names: {what}. Write e.g. 'x1 = x2', "
                          "'x1 = 0, x2 + x3 = 1' or '2*x1 - x2 = 0'")

    def peek(self) -> str | None:
        return self.tokens[self.i].kind if self.i < len(self.tokens) else None

    def take(self) -> _Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def parse(self) -> tuple[list[np.ndarray], list[float], list[str]]:
        rows, consts, labels = [], [], []
        while True:
            start = self.tokens[self.i].pos if self.i < len(self.tokens) else len(self.text)
            for r, c in self.equation():
                rows.append(r)
                consts.append(c)
            end = self.tokens[self.i].pos if self.i < len(self.tokens) else len(self.text)
            part = self.text[start:end].strip()
            labels += [part] * (len(rows) - len(labels))
            if self.peek() is None:
                break
            if self.peek() != ",":
                raise self.error(f"unexpected {self.tokens[self.i].value!r} at character "
                                 f"{self.tokens[self.i].pos}")
            self.take()
        return rows, consts, labels

    def equation(self) -> list[tuple[np.ndarray, float]]:
        sides = [self.sum()]
        while self.peek() == "=":
            self.take()
            sides.append(self.sum())
        if len(sides) == 1:
            sides.append((np.zeros(self.k), 0.0))
        out = []
        for (a, ca), (b, cb) in zip(sides[:-1], sides[1:], strict=True):
            coefs = a - b
            if not np.any(coefs):
                raise self.error("a constraint without any coefficient")
            out.append((coefs, cb - ca))
        return out

    def sum(self) -> tuple[np.ndarray, float]:
        coefs, const = self.product()
        while self.peek() in ("+", "-"):
            sign = 1.0 if self.take().kind == "+" else -1.0
            c2, k2 = self.product()
            coefs, const = coefs + sign * c2, const + sign * k2
        return coefs, const

    def product(self) -> tuple[np.ndarray, float]:
        coefs, const = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()
            c2, k2 = self.unary()
            if op.kind == "/":
                if np.any(c2) or k2 == 0:
                    raise self.error(f"division by {'a coefficient' if np.any(c2) else 'zero'}"
                                     f" at character {op.pos}")
                coefs, const = coefs / k2, const / k2
            elif np.any(coefs) and np.any(c2):
                raise self.error(f"a product of two coefficients at character {op.pos} "
                                 "(not linear)")
            elif np.any(coefs):
                coefs, const = coefs * k2, const * k2
            else:
                coefs, const = c2 * const, k2 * const
        return coefs, const

    def unary(self) -> tuple[np.ndarray, float]:
        if self.peek() in ("+", "-"):
            sign = 1.0 if self.take().kind == "+" else -1.0
            coefs, const = self.unary()
            return sign * coefs, sign * const
        return self.atom()

    def atom(self) -> tuple[np.ndarray, float]:
        kind = self.peek()
        if kind is None:
            raise self.error("it ends where a coefficient name or number is expected")
        tok = self.take()
        if kind == "number":
            return np.zeros(self.k), float(tok.value)
        if kind == "name":
            coefs = np.zeros(self.k)
            coefs[self.position[tok.value]] = 1.0
            if self.peek() in ("name", "number", "("):
                raise self.error(f"{self.tokens[self.i].value!r} follows {tok.value!r} "
                                 "without an operator (a call or an unknown name?)")
            return coefs, 0.0
        if kind == "(":
            value = self.sum()
            if self.peek() != ")":
                raise self.error(f"a '(' at character {tok.pos} is not closed")
            self.take()
            return value
        raise self.error(f"unexpected {tok.value!r} at character {tok.pos}")


def parse_constraints(text: str, names: Mapping[str, int], k: int) -> Constraints:
    """``R`` and ``q`` of a constraint string (see the module docstring).

    Parameters
    ----------
    text : str
    names : mapping of str to int
        Each accepted coefficient name and its position among the k flat coefficients
        (several names may point to one position).
    k : int
        Number of flat coefficients.

    Returns
    -------
    Constraints

    Raises
    ------
    ValueError
        An unknown name, or text that is not a linear constraint (a product of two
        coefficients, a call, unbalanced parentheses), with the offending piece.
    """
    if not text.strip():
        raise ValueError("hypothesis is an empty string; write e.g. 'x1 = x2'")
    parser = _Parser(text, _tokens(text, list(names)), names, k)
    rows, consts, labels = parser.parse()
    return Constraints(np.vstack(rows), np.asarray(consts, dtype=float), labels)


# --- the names of a fit's coefficients and the hypothesis as (R, q) ------------------------------

def coefficient_names(labels: Mapping[str, np.ndarray]) -> dict[str, int]:
    """Every accepted name of each flat coefficient, from a results' ``tidy_labels``: the
    term itself for a single equation; ``[level]term`` and ``y{level}_{term}`` (statsmodels'
    MNLogit) when the labels have a ``level``."""
    terms = [str(t) for t in labels["term"]]
    if "level" not in labels:
        return {t: j for j, t in enumerate(terms)}
    out: dict[str, int] = {}
    for j, (lv, t) in enumerate(zip(labels["level"], terms, strict=True)):
        out[f"[{lv}]{t}"] = j
        out[f"y{lv}_{t}"] = j
    return out


def _from_strings(hypothesis, names: dict[str, int], k: int, labels) -> Constraints:
    parts = [hypothesis] if isinstance(hypothesis, str) else list(hypothesis)
    cons = []
    for text in parts:
        if not isinstance(text, str):
            raise TypeError(f"hypothesis: a list of constraints holds strings, got {text!r}")
        try:
            cons.append(parse_constraints(text, names, k))
        except ValueError as err:
            raise ValueError(_multi_hint(str(err), text, labels)) from None
    return Constraints(np.vstack([c.R for c in cons]), np.concatenate([c.q for c in cons]),
                       [lab for c in cons for lab in c.labels])


def _multi_hint(message: str, text: str, labels) -> str:
    """Add, for a multinomial model, how to name a term of one equation."""
    if "level" not in labels:
        return message
    terms = {str(t) for t in labels["term"]}
    if any(t in text for t in terms):
        lv = labels["level"][0]
        t = str(labels["term"][1 if len(labels["term"]) > 1 else 0])
        message += (f". A multinomial model has one coefficient of each term per "
                    f"non-reference level: name it '[{lv}]{t}' (or statsmodels' 'y{lv}_{t}')")
    return message


def as_constraints(hypothesis, labels: Mapping[str, np.ndarray], k: int) -> Constraints:
    """The hypothesis as ``R b = q`` over ``k`` flat coefficients whose labels (a results'
    ``tidy_labels``) are ``labels``.

    Raises
    ------
    ValueError
        A matrix of the wrong width, a ``q`` of the wrong length, non-finite entries, or a
        string that does not parse (see :func:`parse_constraints`).
    TypeError
        A hypothesis of another type.
    """
    names = coefficient_names(labels)
    if isinstance(hypothesis, str) or (isinstance(hypothesis, list) and hypothesis
                                       and all(isinstance(h, str) for h in hypothesis)):
        return _from_strings(hypothesis, names, k, labels)
    if isinstance(hypothesis, Mapping):
        R, q = [], []
        for name, value in hypothesis.items():
            if name not in names:
                raise ValueError(f"hypothesis: {name!r} is not a coefficient name; names "
                                 f"are {list(names)}")
            row = np.zeros(k)
            row[names[name]] = 1.0
            R.append(row)
            q.append(float(value))
        return Constraints(np.vstack(R), np.asarray(q), [f"{n} = {v}" for n, v in
                                                           hypothesis.items()])
    if isinstance(hypothesis, tuple) and len(hypothesis) == 2:
        R, q = hypothesis
    elif isinstance(hypothesis, (np.ndarray, pd.DataFrame, list)):
        R, q = hypothesis, None
    else:
        raise TypeError("hypothesis must be a string of constraints ('x1 = x2'), a list of "
                        "them, a dict {name: value}, a matrix R or a tuple (R, q); got "
                        f"{type(hypothesis).__name__}")
    try:
        R = np.atleast_2d(np.asarray(R, dtype=float))
    except (TypeError, ValueError):
        raise ValueError("hypothesis: the matrix R must hold numbers") from None
    if R.ndim != 2 or R.shape[1] != k:
        raise ValueError(f"hypothesis: R has shape {R.shape}; it needs {k} columns, one per "
                         "coefficient in the order of cov_params()")
    q = np.zeros(R.shape[0]) if q is None else np.atleast_1d(np.asarray(q, dtype=float)).ravel()
    if q.shape != (R.shape[0],):
        raise ValueError(f"hypothesis: q has {q.size} values for {R.shape[0]} rows of R")
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(q))):
        raise ValueError("hypothesis: R and q must be finite")
    return Constraints(R, q, [f"c{i}" for i in range(R.shape[0])])


def checked(cons: Constraints, estimable: np.ndarray, flat_names: list[str]) -> np.ndarray:
    """The positions of the coefficients the constraints use, after checking that R has full
    row rank and uses no aliased coefficient.

    Raises
    ------
    ValueError
        Naming the aliased coefficients, or the constraints that repeat earlier ones.
    """
    R = cons.R
    if R.shape[0] == 0:
        raise ValueError("hypothesis has no constraint")
    used = np.flatnonzero(np.any(R != 0, axis=0))
    bad = [flat_names[j] for j in used if not estimable[j]]
    if bad:
        raise ValueError(f"hypothesis constrains aliased coefficients ({', '.join(bad)}): "
                         "they have no estimate (NaN); leave them out of the hypothesis")
    rank, dependent = 0, []
    for i in range(R.shape[0]):
        r = np.linalg.matrix_rank(R[: i + 1, used])
        if r == rank:
            dependent.append(cons.labels[i] if cons.labels else f"c{i}")
        rank = r
    if dependent:
        raise ValueError("hypothesis: the constraints are linearly dependent (R is "
                         f"rank-deficient): {'; '.join(dependent)} follow(s) from the ones "
                         "before; drop the repeated constraints")
    return used


# --- the test records ----------------------------------------------------------------------------

@dataclass(frozen=True)
class WaldTestResults:
    """A joint Wald test of linear constraints (statsmodels' ``ContrastResults`` names).

    Attributes
    ----------
    statistic : float (or ndarray of shape (1, 1) with ``scalar=False``)
        ``(R b - q)' (R V R')^-1 (R b - q)``, or that divided by ``df`` for the F form.
    pvalue : float
    df : int
        Number of constraints (``df_num``).
    df_denom : float or None
        ``df_resid`` of the fit for the F form; None for chi-squared.
    distribution : {"chi2", "F"}
    constraints : list of str
        The constraints tested.
    """

    statistic: float | np.ndarray
    pvalue: float
    df: int
    df_denom: float | None
    distribution: str
    constraints: list[str]

    @property
    def df_num(self) -> int:
        """statsmodels' name of :attr:`df`."""
        return self.df

    def summary(self) -> str:
        """One line, as statsmodels prints a Wald test, preceded by the constraints."""
        stat = float(np.asarray(self.statistic).ravel()[0])
        head = "Linear hypothesis: " + "; ".join(self.constraints)
        if self.distribution == "F":
            body = (f"Wald test (F): F = {stat:.6g} on {self.df} and {self.df_denom:g} df, "
                    f"p-value = {self.pvalue:.4g}")
        else:
            body = f"Wald test (chi2): chi2 = {stat:.6g} on {self.df} df, " \
                   f"p-value = {self.pvalue:.4g}"
        return f"{head}\n{body}"

    def __str__(self) -> str:
        return self.summary()


@dataclass(frozen=True)
class TTestResults:
    """One Wald test per constraint (statsmodels' ``t_test`` names).

    Attributes
    ----------
    effect : ndarray of shape (m,)
        ``R b``.
    sd : ndarray of shape (m,)
        Standard errors ``sqrt(diag(R V R'))``.
    statistic : ndarray of shape (m,)
        ``(R b - q) / sd``: z (t on ``df_denom`` when the fit's ``use_t``).
    pvalue : ndarray of shape (m,)
        Two-sided.
    df_denom : float or None
        ``df_resid`` when the reference distribution is Student's t, else None.
    constraints : list of str
    """

    effect: np.ndarray
    sd: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    df_denom: float | None
    constraints: list[str]

    @property
    def tvalue(self) -> np.ndarray:
        """statsmodels' name of :attr:`statistic`."""
        return self.statistic

    def _critical(self, alpha: float) -> float:
        if not (isinstance(alpha, (int, float, np.number)) and 0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        return float(stats.norm.isf(alpha / 2) if self.df_denom is None
                     else stats.t.isf(alpha / 2, self.df_denom))

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """Wald intervals of the effects, ``effect -+ q sd``: shape (m, 2)."""
        c = self._critical(alpha)
        return np.column_stack([self.effect - c * self.sd, self.effect + c * self.sd])

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """The table statsmodels' ``t_test(...).summary_frame()`` gives: ``coef``, ``std
        err``, ``z`` (or ``t``), ``P>|z|``, ``Conf. Int. Low``, ``Conf. Int. Upp.``, one row
        per constraint."""
        s = "z" if self.df_denom is None else "t"
        ci = self.conf_int(alpha)
        return pd.DataFrame({"coef": self.effect, "std err": self.sd, s: self.statistic,
                             f"P>|{s}|": self.pvalue, "Conf. Int. Low": ci[:, 0],
                             "Conf. Int. Upp.": ci[:, 1]},
                            index=pd.Index(self.constraints, name="constraint"))

    def summary(self, alpha: float = 0.05) -> str:
        """The table of :meth:`summary_frame` as text."""
        return "Test for constraints\n" + self.summary_frame(alpha).to_string()

    def __str__(self) -> str:
        return self.summary()


# --- the tests -----------------------------------------------------------------------------------

def quadratic_form(d: np.ndarray, V: np.ndarray) -> float:
    """``d' V^-1 d`` by a Cholesky factor of V: the Wald statistic of ``d`` with covariance
    V (NaN when V is not finite or not positive definite). Also the statistic of
    :func:`~glmclass.results.terms.wald_test_terms`."""
    if d.size == 0 or not np.all(np.isfinite(V)):
        return np.nan
    try:
        c = linalg.cho_factor(V, lower=True)
    except linalg.LinAlgError:
        return np.nan
    return float(d @ linalg.cho_solve(c, d))


def _pieces(res, hypothesis) -> tuple[Constraints, np.ndarray, np.ndarray, np.ndarray]:
    """Constraints on the used coefficients: (cons, R restricted, b, V) over them."""
    labels = res.tidy_labels
    b_all = res.flat_params
    cons = as_constraints(hypothesis, labels, b_all.size)
    flat_names = _flat_names(labels)
    used = checked(cons, np.tile(res.estimable, res.n_equations), flat_names)
    V = np.asarray(res.cov_values, dtype=float)[np.ix_(used, used)]
    if not np.all(np.isfinite(V)):
        raise ValueError("hypothesis: the covariance of the coefficients it uses is not "
                         "finite (see the fit's warnings); no Wald test can be made")
    return cons, cons.R[:, used], b_all[used], V


def _flat_names(labels: Mapping[str, np.ndarray]) -> list[str]:
    if "level" in labels:
        return [f"[{lv}]{t}" for lv, t in zip(labels["level"], labels["term"], strict=True)]
    return [str(t) for t in labels["term"]]


def wald_test(res, hypothesis, scalar: bool = True, use_f: bool = False) -> WaldTestResults:
    """The joint Wald test of ``hypothesis`` on the fit ``res`` (see
    :meth:`~glmclass.results.likelihood.LikelihoodResults.wald_test`)."""
    if not isinstance(use_f, bool) or not isinstance(scalar, bool):
        raise TypeError("use_f and scalar must be True or False")
    cons, R, b, V = _pieces(res, hypothesis)
    chi2 = quadratic_form(R @ b - cons.q, R @ V @ R.T)
    if not np.isfinite(chi2):
        why = (" The covariance of the estimates is indefinite, as a two-way cluster-robust "
               "one can be: fit(cov_type='cluster', cov_kwds={'groups': [...], 'fix': True}) "
               "sets its negative eigenvalues to zero (R's sandwich::vcovCL(fix = TRUE))."
               if indefinite(V) else "")
        raise ValueError("hypothesis: R V R' is not positive definite (the covariance of the "
                         "constrained combinations has no inverse); test fewer or other "
                         "constraints." + why)
    m = R.shape[0]
    if use_f:
        stat, df_denom = chi2 / m, float(res.df_resid)
        p = float(stats.f.sf(stat, m, df_denom))
    else:
        stat, df_denom = chi2, None
        p = float(stats.chi2.sf(chi2, m))
    return WaldTestResults(stat if scalar else np.array([[stat]]), p, m, df_denom,
                           "F" if use_f else "chi2", cons.labels)


def t_test(res, hypothesis) -> TTestResults:
    """One Wald test per constraint of ``hypothesis`` on the fit ``res`` (see
    :meth:`~glmclass.results.likelihood.LikelihoodResults.t_test`)."""
    cons, R, b, V = _pieces(res, hypothesis)
    effect = R @ b
    sd = quadratic_form_errors(np.einsum("ij,jk,ik->i", R, V, R), V, "constraints")
    stat = (effect - cons.q) / sd
    use_t = bool(res.use_t)
    p = 2 * (stats.t.sf(np.abs(stat), res.df_resid) if use_t else stats.norm.sf(np.abs(stat)))
    return TTestResults(effect, sd, stat, p, float(res.df_resid) if use_t else None,
                        cons.labels)
