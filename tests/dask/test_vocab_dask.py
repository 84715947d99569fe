"""The wave-3 vocabulary on Dask data equals the in-memory fit of the same rows (1e-10):
``get_margeff``'s new options, ``loglike``/``score``/``hessian``, ``resid_generalized``."""

import dask.dataframe as dd
import numpy as np
import pytest

import glmclass.formula.api as gcf

FORMULA = "y ~ x + z + C(g) + count + b1"


@pytest.fixture(scope="module")
def both(frame):
    df = frame.assign(y=frame.y.astype(float), count=frame["count"].astype(float))
    mem = gcf.logit(FORMULA, df).fit()
    lazy = gcf.logit(FORMULA, dd.from_pandas(df, npartitions=3)).fit()
    return mem, lazy


@pytest.mark.parametrize("options", [
    dict(at="median"), dict(at="zero", method="eydx"), dict(at="mean", count=True, dummy=True),
    dict(at="overall", count=True, atexog={"z": 1.5}), dict(at="mean", atexog={3: 0.5})])
def test_margeff_options_equal_in_memory(both, options):
    mem, lazy = both
    a, b = mem.get_margeff(**options), lazy.get_margeff(**options)
    np.testing.assert_allclose(b.margeff, a.margeff, rtol=1e-10)
    np.testing.assert_allclose(b.margeff_se, a.margeff_se, rtol=1e-10)


def test_margeff_all_and_likelihood_equal_in_memory(both):
    mem, lazy = both
    a, b = mem.get_margeff(at="all"), lazy.get_margeff(at="all")
    np.testing.assert_allclose(b.margeff.to_numpy(), a.margeff.to_numpy(), rtol=1e-10)
    p = mem.params.to_numpy() * 0.9
    assert lazy.model.loglike(p) == pytest.approx(mem.model.loglike(p), rel=1e-12)
    np.testing.assert_allclose(lazy.model.score(p), mem.model.score(p), rtol=1e-10)
    np.testing.assert_allclose(lazy.model.hessian(p), mem.model.hessian(p), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(lazy.resid_generalized.compute()),
                               mem.resid_generalized.to_numpy(), rtol=1e-10)


def test_subset_and_mnlogit_profile_equal_in_memory(frame):
    df = frame.assign(y=frame.y.astype(float))
    ddf = dd.from_pandas(df, npartitions=3)
    mem = gcf.logit("y ~ x + z", df, subset=df.z > 0.5).fit()
    lazy = gcf.logit("y ~ x + z", ddf, subset=ddf.z > 0.5).fit()
    np.testing.assert_allclose(lazy.params, mem.params, rtol=1e-10)
    assert lazy.nobs == mem.nobs
    small = df.iloc[:300]
    a = gcf.mnlogit("k ~ x", small).fit().conf_int(method="profile")
    b = gcf.mnlogit("k ~ x", dd.from_pandas(small, npartitions=2)).fit().conf_int(
        method="profile")
    np.testing.assert_allclose(b.to_numpy(), a.to_numpy(), rtol=1e-10)
