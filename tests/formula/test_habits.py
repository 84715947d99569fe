"""R's and formulaic's spellings that Python would read otherwise are refused with a message
that says what to write (issue 25, items 4 and 21)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.errors import UnsafeFormulaError


@pytest.fixture(scope="module")
def birthwt() -> pd.DataFrame:
    return gc.datasets.load("birthwt")


@pytest.mark.parametrize("engine", ["patsy", "formulaic"])
@pytest.mark.parametrize("formula", ["low ~ I(age^2)", "low ~ np.log(age)^2",
                                     "low ~ I(lwt / age^2)", "low ~ lwt + I(age ^ 2)"])
def test_caret_inside_an_expression_is_refused_not_xor(birthwt, formula, engine):
    # on an int column Python's ^ is XOR: 19 ^ 2 == 17, a silently different column
    assert (birthwt["age"].to_numpy() ^ 2)[0] != birthwt["age"].to_numpy()[0] ** 2
    with pytest.raises(UnsafeFormulaError, match=r"XOR.*I\(age\*\*2\).*np\.bitwise_xor"):
        gcf.logit(formula, birthwt, engine=engine)


def test_power_and_explicit_xor_still_work(birthwt):
    res = gcf.logit("low ~ I(age**2)", birthwt).fit()
    ref = gcf.logit("low ~ a2", birthwt.assign(a2=birthwt.age.astype(float) ** 2)).fit()
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-10)
    res = gcf.logit("low ~ I(np.bitwise_xor(age, 2))", birthwt).fit()
    ref = gcf.logit("low ~ x", birthwt.assign(x=np.bitwise_xor(birthwt.age, 2))).fit()
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-10)


def test_formulaic_braces_with_patsy_name_both_ways(birthwt):
    with pytest.raises(UnsafeFormulaError, match=r"formulaic's syntax.*I\(z\*\*2\).*"
                                                 r"engine='formulaic'"):
        gcf.logit("low ~ {age**2}", birthwt)
    res = gcf.logit("low ~ {age**2}", birthwt, engine="formulaic").fit()
    ref = gcf.logit("low ~ I(age**2)", birthwt).fit()
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-10)


def test_a_set_inside_a_formulaic_expression_is_refused(birthwt):
    with pytest.raises(UnsafeFormulaError, match="set"):
        gcf.logit("low ~ I(len({1, 2}) * age)", birthwt, engine="formulaic")
