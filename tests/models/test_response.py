"""Response encoding: the NumPy fast path gives exactly what the pandas path gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glmclass.data.response import encode, levels_of, multiclass_levels, multiclass_response


def pandas_levels(y) -> list:
    """What levels_of computes through pandas for any response."""
    return sorted(pd.unique(pd.Series(np.asarray(y, dtype=object)).dropna()))


RNG = np.random.default_rng(0)
RESPONSES = {
    "float codes": RNG.integers(0, 4, 100).astype(float),
    "negative ints": RNG.integers(-3, 4, 100),
    "uint8": RNG.integers(0, 3, 20).astype(np.uint8),
    "float32": np.array([3, 1, 3], dtype=np.float32),
    "bool": RNG.integers(0, 2, 50).astype(bool),
    "text": np.array(list("cabdd")),
    "fractions": np.array([0.5, -0.25, 1.5, 0.5]),
    "infinite": np.array([np.inf, 1.0, -np.inf, 1.0]),
    "negative zero first": np.array([-0.0, 0.0, 2.0]),
    "negative zero later": np.array([0.5, 0.0, -0.0]),
    "missing": np.array([1.0, np.nan, 2.0]),
    "objects": np.array(["b", "a", None], dtype=object),
    # counted, not sorted: small non-negative whole numbers (a level absent between others)
    "int codes with a gap": RNG.choice([0, 2, 5], 200),
    "float codes with a gap": RNG.choice([1.0, 7.0, 3.0], 200),
    "int32 codes": RNG.integers(0, 5, 60).astype(np.int32),
    # sorted: codes too large to count, and uint64 values beyond intp
    "large codes": RNG.choice([3, 40_000, 9], 50),
    "huge uint64": np.array([2**63 + 5, 1, 2**63 + 5], dtype=np.uint64),
}


@pytest.mark.parametrize("y", RESPONSES.values(), ids=RESPONSES.keys())
def test_levels_and_codes_match_the_pandas_path(y):
    levels = levels_of(y)
    expected = pandas_levels(y)
    assert levels == expected
    assert [type(v) for v in levels] == [type(v) for v in expected]
    assert [np.signbit(v) for v in levels if v == 0] == [np.signbit(v) for v in expected if v == 0]
    for ref in (None, levels[-1]):
        codes, fit_levels = multiclass_response(y, "y", ref)
        assert fit_levels[0] == (levels[0] if ref is None else ref)
        expected_codes = pd.Categorical(np.asarray(y, dtype=object), categories=fit_levels).codes
        np.testing.assert_array_equal(codes, expected_codes)
        assert codes.dtype == np.intp


@pytest.mark.parametrize("y", RESPONSES.values(), ids=RESPONSES.keys())
def test_multiclass_levels_is_levels_of_and_multiclass_response(y):
    ref = levels_of(y)[-1]
    codes, natural, levels = multiclass_levels(y, "y", ref)
    assert natural == levels_of(y)
    expected_codes, expected_levels = multiclass_response(y, "y", ref)
    assert levels == expected_levels
    np.testing.assert_array_equal(codes, expected_codes)
    np.testing.assert_array_equal(encode(y, levels), expected_codes)


def test_a_reference_level_equal_to_a_value_of_another_type():
    y = np.array([2.0, 0.0, 1.0, 2.0])
    codes, natural, levels = multiclass_levels(y, "y", 2)
    assert natural == [0.0, 1.0, 2.0] and levels == [2, 0.0, 1.0]
    np.testing.assert_array_equal(codes, [0, 1, 2, 0])


def test_errors_name_the_response():
    with pytest.raises(ValueError, match="response 'y' has a single class"):
        multiclass_levels(np.ones(4), "y")
    with pytest.raises(ValueError, match=r"ref=5 is not a level of 'y'"):
        multiclass_levels(np.array([0, 1, 2]), "y", 5)
    with pytest.raises(ValueError, match="response 'y' mixes labels"):
        multiclass_levels(np.array([1, "a"], dtype=object), "y")
