"""Gradient-descent fits (method="gd" | "sgd" | "minibatch") of Logit and MNLogit reach R's
maximum-likelihood fits (chapter.json: glm and multinom on standardised birthwt columns) to
1e-6 relative in the log-likelihood with their defaults; standard errors come from the Hessian
at the point reached; bad settings are errors naming the argument."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf

REF = Path(__file__).resolve().parents[1] / "reference"
MLE = json.loads((REF / "chapter.json").read_text())["mle"]
METHODS = ["gd", "sgd", "minibatch"]


def birthwt_z() -> pd.DataFrame:
    bw = pd.read_csv(REF / "data" / "birthwt.csv", keep_default_na=False, na_values=[""])
    for c in ("age", "lwt", "ptl", "smoke", "ht", "ui", "ftv"):
        bw[f"{c}_z"] = (bw[c] - bw[c].mean()) / bw[c].std(ddof=1)
    return bw


@pytest.mark.parametrize("method", METHODS)
def test_logit_gradient_methods_reach_r_glm(method):
    ref = MLE["logit"]
    model = gcf.logit(ref["patsy_formula"], birthwt_z())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = model.fit(method=method, seed=0)
    assert res.converged and res.method == method
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-6)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-9)  # what the defaults achieve
    np.testing.assert_allclose(res.params.to_numpy(), ref["coef"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(res.bse.to_numpy(), ref["se"], rtol=1e-4)
    h = res.history
    assert len(h) == res.n_iter and h.iloc[-1] == pytest.approx(res.deviance, rel=1e-12)
    assert res.gradient_norms.iloc[-1] < 1e-6
    text = str(res.summary())
    assert "standard errors from the Hessian" in text and "converged to" in text


@pytest.mark.parametrize("method", METHODS)
def test_mnlogit_gradient_methods_reach_r_multinom(method):
    ref = MLE["mnlogit"]
    model = gcf.mnlogit(ref["patsy_formula"], birthwt_z())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = model.fit(method=method, seed=0)
    assert res.converged
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-6)
    np.testing.assert_allclose(res.params.T.to_numpy(), ref["coef"], rtol=1e-4, atol=1e-5)
    newton = model.fit()
    np.testing.assert_allclose(res.bse.to_numpy(), newton.bse.to_numpy(), rtol=1e-4)
    assert "standard errors from the Hessian" in str(res.summary())
    assert len(res.history) == res.n_iter


def test_gradient_descent_needs_more_iterations_than_irls():
    model = gcf.logit(MLE["logit"]["patsy_formula"], birthwt_z())
    irls = model.fit()
    gd = model.fit(method="gd")
    assert irls.n_iter < gd.n_iter
    assert np.all(np.diff(gd.history.to_numpy()) <= 1e-9)  # line search: never up


def test_plain_sgd_without_variance_reduction_is_noisier_and_says_so():
    model = gcf.logit(MLE["logit"]["patsy_formula"], birthwt_z())
    with pytest.warns(gc.ConvergenceWarning, match="stochastic gradient descent did not"):
        res = model.fit(method="sgd", variance_reduction=False, schedule="inverse_sqrt",
                        max_epochs=20, seed=1)
    assert not res.converged
    assert res.llf < MLE["logit"]["loglik"]
    assert "did not converge" in str(res.summary())


def test_fixed_learning_rate_and_schedules():
    model = gcf.logit(MLE["logit"]["patsy_formula"], birthwt_z())
    res = model.fit(method="gd", learning_rate=1.0, max_epochs=20000)
    assert res.converged and res.llf == pytest.approx(MLE["logit"]["loglik"], rel=1e-8)
    mb = model.fit(method="minibatch", batch_size=189, seed=0)  # one batch: SVRG = GD
    assert mb.converged and mb.llf == pytest.approx(MLE["logit"]["loglik"], rel=1e-8)
    slow = model.fit(method="minibatch", batch_size=16, schedule="inverse_sqrt", seed=0,
                     max_epochs=400)  # a decaying step converges, more slowly
    assert slow.converged and slow.llf == pytest.approx(MLE["logit"]["loglik"], rel=1e-8)
    with pytest.warns(gc.ConvergenceWarning):  # eta / (1 + k) decays too fast to get there
        fast = model.fit(method="minibatch", batch_size=16, schedule="inverse", seed=0,
                         max_epochs=50)
    assert fast.n_iter == 50 and fast.llf < slow.llf


def test_seed_makes_stochastic_fits_reproducible():
    model = gcf.logit(MLE["logit"]["patsy_formula"], birthwt_z())
    with pytest.warns(gc.ConvergenceWarning, match="raise max_epochs"):
        a = model.fit(method="minibatch", seed=5, max_epochs=3, gtol=1e-12)
    with pytest.warns(gc.ConvergenceWarning):
        b = model.fit(method="minibatch", seed=5, max_epochs=3, gtol=1e-12)
    pd.testing.assert_series_equal(a.params, b.params)


def test_bad_gradient_settings_name_the_argument():
    model = gcf.logit(MLE["logit"]["patsy_formula"], birthwt_z())
    with pytest.raises(ValueError, match="learning_rate"):
        model.fit(method="gd", learning_rate=0.0)
    with pytest.raises(ValueError, match="learning_rate"):
        model.fit(method="sgd", learning_rate=-1)
    with pytest.raises(ValueError, match="batch_size.*189"):
        model.fit(method="minibatch", batch_size=190)
    with pytest.raises(ValueError, match="batch_size"):
        model.fit(method="minibatch", batch_size=0)
    with pytest.raises(ValueError, match="batch_size is for method='minibatch'"):
        model.fit(method="sgd", batch_size=10)
    with pytest.raises(ValueError, match="schedule"):
        model.fit(method="gd", schedule="cosine")
    with pytest.raises(ValueError, match="max_epochs"):
        model.fit(method="gd", max_epochs=0)
    with pytest.raises(ValueError, match="gtol"):
        model.fit(method="gd", gtol=0)
    with pytest.raises(ValueError, match="seed"):
        model.fit(method="sgd", seed="x")
    with pytest.raises(ValueError, match="learning_rate applies to the gradient methods"):
        model.fit(learning_rate=0.1)
    mn = gcf.mnlogit(MLE["mnlogit"]["patsy_formula"], birthwt_z())
    with pytest.raises(ValueError, match="batch_size"):
        mn.fit(method="minibatch", batch_size=1000)
    with pytest.raises(ValueError, match="learning_rate"):
        mn.fit(method="gd", learning_rate=0)


def test_gradient_fit_with_weights_offset_and_an_aliased_column():
    bw = birthwt_z().assign(dup=lambda d: 2 * d.age_z)
    w = np.where(np.arange(len(bw)) % 3 == 0, 2.0, 1.0)
    off = 0.1 * bw.lwt_z.to_numpy()
    model = gcf.logit("low ~ age_z + smoke_z + dup", bw, freq_weights=w, offset=off)
    with pytest.warns(gc.RankDeficientWarning):
        irls = model.fit()
    with pytest.warns(gc.RankDeficientWarning):
        gd = model.fit(method="gd")
    assert np.isnan(gd.params["dup"])
    assert gd.llf == pytest.approx(irls.llf, rel=1e-9)
    np.testing.assert_allclose(gd.params.dropna(), irls.params.dropna(), rtol=1e-5)
