"""Konis' linear-programming separation test (``glmclass.numerics.separation``).

Reference behaviour: R's detectseparation (``detect_separation``: infinite directions are the
signs of the LP solution, aliased columns and zero-weight rows dropped, proportions counted as
both outcomes) and an independent check, safeBinaryRegression's "test" formulation (the same
cone without the box: the LP is unbounded exactly when the data are separated).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import patsy
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from glmclass.numerics import separation as sepmod
from glmclass.numerics.separation import Separation, detect_separation

DATA = Path(__file__).resolve().parents[1] / "reference" / "data"


def read(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv", keep_default_na=False, na_values=[""])


def design(formula: str, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    y, X = patsy.dmatrices(formula, df, return_type="dataframe")
    return X.to_numpy(), y.to_numpy()[:, 0], list(X.columns)


def unbounded_test(X: np.ndarray, y: np.ndarray) -> bool:
    """safeBinaryRegression's primal "test": max sum s_i x_i'b over the cone, b free."""
    s = 2 * y - 1
    A = X * s[:, None]
    res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(len(y)), bounds=(None, None),
                  method="highs")
    assert res.status in (0, 3)
    return res.status == 3


# --- real data --------------------------------------------------------------------------------

def test_endometrial_nv_is_infinite_as_detectseparation():
    # detectseparation's README: (Intercept) 0, NV Inf, PI 0, EH 0
    X, y, names = design("HG ~ NV + PI + EH", read("endometrial"))
    s = detect_separation(X, y)
    assert s.separated and s.kind == "quasi-complete"
    assert s.columns == (names.index("NV"),)
    np.testing.assert_array_equal(s.directions, [0, 1, 0, 0])
    assert s.directions.dtype.kind == "i"
    assert "NV (+inf)" in s.with_names(names).note


@pytest.mark.parametrize("data, formula, weights", [
    ("spector", "GRADE ~ GPA + TUCE + PSI", None),
    ("birthwt", "low ~ age + lwt + C(race) + smoke + ptl + ht + ui + ftv", None),
    ("birthwt", "low ~ age * lwt + C(race) + smoke", None),
    ("ucb", "admitted ~ Gender + Dept", "Freq"),
    ("ucb", "admitted ~ Gender * Dept", "Freq"),
    ("crabs", "sex ~ FL + RW + CL + CW + BD", None),
    ("survey", "Sex ~ Height + Wr_Hnd + NW_Hnd + Pulse", None),
    ("quine", "I(Days > 20) ~ Eth + Sex + Age + Lrn", None),
])
def test_no_false_positive_on_real_overlapping_data(data, formula, weights):
    df = read(data).dropna()
    lhs = formula.split("~")[0].strip()
    if lhs in ("sex", "Sex"):  # two labels: make a 0/1 response
        df = df.assign(**{lhs: (df[lhs] == df[lhs].iloc[0]).astype(float)})
    X, y, _ = design(formula, df)
    w = None if weights is None else df[weights].to_numpy(dtype=float)
    s = detect_separation(X, y, w)
    assert not s.separated and s.kind == "none" and s.columns == ()
    np.testing.assert_array_equal(s.directions, np.zeros(X.shape[1]))
    assert not unbounded_test(X[w > 0] if w is not None else X, y[w > 0] if w is not None else y)


def test_menarche_proportions_are_not_separated():
    m = read("menarche")
    X = np.column_stack([np.ones(len(m)), m.Age])
    y = (m.Menarche / m.Total).to_numpy()
    # the youngest groups have 0 of n and the oldest n of n, but the middle ones are interior
    assert y[0] == 0 and y[-1] == 1
    assert not detect_separation(X, y, m.Total.to_numpy()).separated
    # keeping only the all-or-nothing groups, the data are completely separated
    ends = (y == 0) | (y == 1)
    s = detect_separation(X[ends], y[ends])
    assert s.separated and s.kind == "complete" and 1 in s.columns and s.directions[1] == 1


@pytest.mark.parametrize("formula, kind", [
    ("I(Species == 'setosa') ~ Sepal_Length + Sepal_Width", "complete"),
    ("I(Species == 'setosa') ~ Petal_Length", "complete"),
])
def test_iris_setosa_is_completely_separated(formula, kind):
    X, y, _ = design(formula, read("iris"))
    s = detect_separation(X, y)
    assert s.separated and s.kind == kind
    assert unbounded_test(X, y)


def test_crabs_species_is_completely_separated():
    df = read("crabs")
    X, y, _ = design("I(sp == 'B') ~ FL + RW + CL + CW + BD", df)
    s = detect_separation(X, y)
    assert s.separated and s.kind == "complete" and unbounded_test(X, y)


def test_birthwt_single_observation_level_is_quasi_separated():
    # ftv = 6 occurs once (low = 0): its indicator's estimate is -inf, the others finite
    df = read("birthwt")
    X, y, names = design("low ~ C(ftv)", df)
    assert (df.ftv == 6).sum() == 1 and df.low[df.ftv == 6].item() == 0
    s = detect_separation(X, y)
    assert s.kind == "quasi-complete"
    assert [names[j] for j in s.columns] == ["C(ftv)[T.6]"]
    assert s.directions[names.index("C(ftv)[T.6]")] == -1


# --- constructed cases -------------------------------------------------------------------------

def xy(x, y):
    x = np.asarray(x, dtype=float)
    return np.column_stack([np.ones(len(x)), x]), np.asarray(y, dtype=float)


def test_complete_separation_directions():
    X, y = xy([-2, -1, 1, 2], [0, 0, 1, 1])
    s = detect_separation(X, y)
    assert s.separated and s.kind == "complete" and s.directions[1] == 1
    X, y = xy([-2, -1, 1, 2], [1, 1, 0, 0])
    assert detect_separation(X, y).directions[1] == -1


def test_quasi_complete_separation_with_ties_on_the_boundary():
    X, y = xy([0, 0, 1, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1, 1])
    s = detect_separation(X, y)
    assert s.separated and s.kind == "quasi-complete"
    assert s.directions[1] == 1 and s.directions[0] == -1  # b = (-1, 1): x - 1 >= 0 on y = 1


def test_overlap_is_not_separated():
    X, y = xy([0, 1, 2, 3, 4], [0, 1, 0, 1, 1])
    assert detect_separation(X, y) == Separation(False, "none", (), np.zeros(2, dtype=int))


def test_zero_weight_rows_are_ignored():
    X, y = xy([0, 1, 2, 3, 4], [0, 1, 0, 1, 1])
    w = np.array([1, 0, 1, 1, 1.0])  # dropping the (1, 1) row separates the data at x = 2.5
    assert detect_separation(X, y, w).kind == "complete"
    assert not detect_separation(X, y, 2.5 * np.ones(5)).separated


def test_interior_proportion_breaks_separation():
    X, y = xy([0, 1, 2, 3], [0, 0, 1, 1])
    assert detect_separation(X, y).separated
    assert not detect_separation(X, np.array([0, 0.3, 0.6, 1])).separated
    # a proportion on the separating point only makes the separation quasi-complete
    assert detect_separation(X, np.array([0, 0.3, 1, 1])).kind == "quasi-complete"
    s = detect_separation(np.column_stack([np.ones(5), [0, 1, 2, 3, 1.5]]),
                          np.array([0, 0, 1, 1, 0.5]))
    assert s.kind == "quasi-complete"
    assert detect_separation(*xy([0, 1, 2], [0.2, 0.5, 0.9])).kind == "none"


def test_single_class_means_an_infinite_intercept():
    X, y = xy([1, 2, 3], [1, 1, 1])
    s = detect_separation(X, y)
    assert s.separated and s.kind == "complete" and s.directions[0] != 0


def test_duplicated_rows_and_aliased_columns_do_not_create_separation():
    rng = np.random.default_rng(4)
    x = rng.normal(size=40)
    y = (rng.random(40) < 0.5).astype(float)
    X = np.column_stack([np.ones(40), x, 2 * x, np.zeros(40)])
    assert not detect_separation(np.vstack([X, X]), np.r_[y, y]).separated


def test_extreme_column_scales():
    rng = np.random.default_rng(7)
    n = 300
    X = np.column_stack([np.ones(n), 1e-8 * rng.normal(size=n), 1e8 * rng.normal(size=n)])
    y = (rng.random(n) < 0.5).astype(float)
    assert not detect_separation(X, y).separated
    ys = (X[:, 1] > 0).astype(float)
    s = detect_separation(X, ys)
    assert s.kind == "complete" and s.directions[1] == 1
    ys = (X[:, 2] < 0).astype(float)
    assert detect_separation(X, ys).directions[2] == -1


def test_empty_inputs():
    assert not detect_separation(np.empty((0, 2)), np.empty(0)).separated
    assert detect_separation(np.empty((3, 0)), np.array([0, 1, 1.0])).directions.shape == (0,)
    assert not detect_separation(np.ones((2, 1)), np.array([1, 0.0]), np.zeros(2)).separated


@pytest.mark.parametrize("kwargs, match", [
    (dict(X=np.ones((3, 2)), y=np.ones(4)), "same n"),
    (dict(X=np.full((3, 1), np.nan), y=np.ones(3)), "finite"),
    (dict(X=np.ones((3, 1)), y=np.array([0, 1, 2.0])), r"\[0, 1\]"),
    (dict(X=np.ones((3, 1)), y=np.array([0, 1, 1.0]), weights=-np.ones(3)), "weights"),
    (dict(X=np.ones((3, 1)), y=np.array([0, 1, 1.0]), weights=np.ones(2)), "weights"),
])
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        detect_separation(**kwargs)


def test_one_linear_program_when_not_separated(monkeypatch):
    calls = []
    real = sepmod.linprog

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sepmod, "linprog", counting)
    X, y, _ = design("GRADE ~ GPA + TUCE + PSI", read("spector"))
    detect_separation(X, y)
    assert len(calls) == 1


def test_record_messages_and_equality():
    s = Separation(True, "complete", (1,), np.array([0, -1]), ("a", "b"))
    assert "b (-inf)" in s.message() and "BayesLogit" in s.message()
    assert s == Separation(True, "complete", (1,), np.array([0, -1]))
    assert s != Separation(True, "complete", (1,), np.array([0, 1]))
    assert Separation(False, "none", (), np.zeros(1, dtype=int)).note == ""


# --- properties --------------------------------------------------------------------------------

@st.composite
def binary_designs(draw):
    n = draw(st.integers(2, 25))
    p = draw(st.integers(1, 4))
    ints = st.integers(-3, 3)  # small integers: many ties, many quasi-complete cases
    X = np.array(draw(st.lists(st.lists(ints, min_size=p, max_size=p), min_size=n, max_size=n)),
                 dtype=float)
    X[:, 0] = 1.0
    y = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    return X, y


@given(binary_designs())
def test_agrees_with_the_unbounded_test(data):
    X, y = data
    assert detect_separation(X, y).separated == unbounded_test(X, y)


@given(binary_designs(), st.lists(st.floats(1e-6, 1e6), min_size=4, max_size=4),
       st.randoms(use_true_random=False))
def test_invariant_to_column_scaling_and_row_order(data, scales, rnd):
    X, y = data
    s = detect_separation(X, y)
    d = np.array(scales[: X.shape[1]])
    perm = list(range(len(y)))
    rnd.shuffle(perm)
    t = detect_separation(X[perm] * d, y[perm])
    assert t.separated == s.separated and t.kind == s.kind


@given(binary_designs())
def test_found_direction_separates(data):
    X, y = data
    s = detect_separation(X, y)
    if s.separated:
        # a separating direction exists within the reported sign pattern (zero elsewhere)
        A = X * (2 * y - 1)[:, None]
        bounds = [(0, 1) if d > 0 else (-1, 0) if d < 0 else (0, 0) for d in s.directions]
        res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(len(y)), bounds=bounds,
                      method="highs")
        assert res.status == 0 and -res.fun > 1e-9
        assert s.kind in ("complete", "quasi-complete") and s.columns
        assert s.columns == tuple(np.flatnonzero(s.directions))
    else:
        assert s.kind == "none" and not s.columns
