"""lme4's random-effect terms read from the formula text (glmclass.formula.bars): never
evaluated, expanded as lme4 expands them, and lme4's order of terms and of random effects."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glmclass.errors import DataError
from glmclass.formula.bars import BarTerm, build_blocks, split_bars, z_matrix


@pytest.mark.parametrize("formula, fixed, terms", [
    ("y ~ x + (1 | g)", "y ~ x", [("1", ("g",))]),
    ("y ~ x + (x | g)", "y ~ x", [("x", ("g",))]),
    ("y ~ (0 + x | g)", "y ~ 1", [("0 + x", ("g",))]),
    ("y ~ x + (x || g)", "y ~ x", [("1", ("g",)), ("0 + x", ("g",))]),
    ("y ~ x + (0 + x + z || g)", "y ~ x", [("0 + x", ("g",)), ("0 + z", ("g",))]),
    ("y ~ x + (1 | a) + (1 | b)", "y ~ x", [("1", ("a",)), ("1", ("b",))]),
    ("y ~ x + (1 | a/b)", "y ~ x", [("1", ("a",)), ("1", ("b", "a"))]),
    ("y ~ (1 | a:b) + x", "y ~ x", [("1", ("a", "b"))]),
    ("cbind(k, n - k) ~ C(p) + offset(np.log(t)) + (1 | h)", "cbind(k, n - k) ~ C(p) + "
     "offset(np.log(t))", [("1", ("h",))]),
])
def test_split_bars(formula, fixed, terms):
    got_fixed, got = split_bars(formula)
    assert got_fixed == fixed
    assert got == tuple(BarTerm(e, f) for e, f in terms)


@pytest.mark.parametrize("formula, message", [
    ("y ~ x", "no random-effect term"),
    ("~ x + (1 | g)", "no response"),
    ("y ~ x + (1 | np.log(g))", "must name columns"),
    ("y ~ x - (1 | g)", "cannot be removed"),
    ("y ~ x + ( | g)", "needs effects left of the bar"),
])
def test_split_bars_errors_name_the_term(formula, message):
    with pytest.raises(DataError, match=message):
        split_bars(formula)


def test_bar_terms_are_never_evaluated():
    """What stands right of a bar must be a column name; code there is refused unread."""
    with pytest.raises(DataError, match="must name columns"):
        split_bars("y ~ x + (1 | __import__('os').getcwd())")


def test_blocks_follow_lme4s_order_and_layout():
    d = pd.DataFrame({"a": list("ppqqrr") * 2, "b": ["u", "v"] * 6,
                      "x": np.arange(12.0), "y": [0, 1] * 6})
    _, terms = split_bars("y ~ x + (x | b) + (1 | a)")
    blocks = build_blocks(terms, d, None)
    # lme4 sorts terms by decreasing number of levels: a (3) before b (2)
    assert [b.group for b in blocks] == ["a", "b"]
    assert blocks[1].names == ["(Intercept)", "x"]
    Z = z_matrix(blocks).toarray()
    assert Z.shape == (12, 3 + 2 * 2)
    # level-major within a term: the intercept and slope of level "u", then of level "v"
    row = 3  # a = "q", b = "v", x = 3
    np.testing.assert_array_equal(Z[row], [0, 1, 0, 0, 0, 1, 3])
    L = [np.array([[2.0]]), np.array([[1.0, 0.0], [0.5, 2.0]])]
    np.testing.assert_allclose(z_matrix(blocks, L).toarray()[row], [0, 2, 0, 0, 0, 1 + 1.5, 6])


def test_single_level_factor_is_refused():
    d = pd.DataFrame({"g": ["a"] * 4, "x": np.arange(4.0)})
    with pytest.raises(ValueError, match="'g' has a single level"):
        build_blocks(split_bars("y ~ x + (1 | g)")[1], d, None)
