"""What a mixed model built from a formula holds (issue 27): a random intercept keeps no column
of ones, the grouping codes are int32 and coded by chunks of rows, the default prior weights
stay a broadcast view; and none of it changes a number, to the bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass.formula import bars
from glmclass.formula.bars import BarTerm, RandomBlock, build_blocks, group_codes
from glmclass.likelihoods.mixed import MixedDeviance


def _data(n: int = 400, groups: int = 23, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    x = rng.standard_normal(n)
    eta = -0.2 + 0.6 * x + rng.normal(0, 0.8, groups)[g]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    return pd.DataFrame({"y": y, "x": x, "g": g * 7 - 40, "s": [f"k{v:02d}" for v in g],
                         "h": rng.integers(0, 3, n)})


@pytest.mark.parametrize("factors", [("g",), ("s",), ("h", "s")])
def test_chunked_codes_are_pandas_sorted_factorize(monkeypatch, factors):
    monkeypatch.setattr(bars, "CODE_CHUNK", 37)  # many chunks, levels first seen in later ones
    d = _data()
    keys = bars.group_keys(d, factors)
    want_codes, want_levels = pd.factorize(keys, sort=True)
    codes, levels = group_codes(d, BarTerm("1", factors))
    assert codes.dtype == np.int32
    np.testing.assert_array_equal(codes, want_codes)
    pd.testing.assert_index_equal(pd.Index(levels), pd.Index(want_levels))


def test_group_codes_still_refuse_missing_and_single_levels():
    d = _data()
    with pytest.raises(ValueError, match="'g' has missing values"):
        group_codes(d.assign(g=d["g"].where(d.index != 3)), BarTerm("1", ("g",)))
    with pytest.raises(ValueError, match="'g' has a single level"):
        group_codes(d.assign(g=1), BarTerm("1", ("g",)))


def test_a_random_intercept_holds_no_column_of_ones():
    d = _data()
    (block,) = build_blocks((BarTerm("1", ("g",)),), d, None)
    assert block.names == ["(Intercept)"]
    assert block.shared_row and block.X.shape == (len(d), 1) and block.X.strides[0] == 0
    np.testing.assert_array_equal(block.X, np.ones((len(d), 1)))
    L = np.array([[0.75]])
    np.testing.assert_array_equal(block.times(L, slice(5, 17)), np.full((12, 1), 0.75))
    (slope,) = build_blocks((BarTerm("x", ("g",)),), d, None)
    assert not slope.shared_row
    L2 = np.array([[0.7, 0.0], [0.2, 0.4]])
    np.testing.assert_array_equal(slope.times(L2, slice(3, 9)), slope.X[3:9] @ L2)


def test_broadcast_designs_and_weights_give_the_same_deviance_to_the_bit():
    model = gc.MixedLogit.from_formula("y ~ x + (1 | g)", _data())
    (block,) = model.blocks
    dense = RandomBlock(block.group, block.names, block.levels, block.codes.astype(np.intp),
                        np.ones((len(block.codes), 1)), block.spec)
    y = np.asarray(model.endog, dtype=float)
    lik, X = model.likelihood, model.exog
    lean = MixedDeviance(lik, X, y, np.asarray(model.prior_weights), np.zeros(len(y)),
                         [block])
    full = MixedDeviance(lik, X, y, np.ones(len(y)), np.zeros(len(y)), [dense])
    for z in (np.array([0.8, -0.3, 0.5]), np.array([1.3, 0.1, 0.9])):
        assert lean(z) == full(z)
        assert lean(z, nagq=5) == full(z, nagq=5)
    res = model.fit()
    again = gc.MixedLogit(y, X, model.data.frame["g"]).fit()
    np.testing.assert_array_equal(res.params.to_numpy(), again.params.to_numpy())
    assert res.llf == again.llf
