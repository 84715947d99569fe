"""OrderedModel against R (ordinal::clm, MASS::polr; tests/reference/r/ordinal.R writes
tests/reference/ordinal.json) and statsmodels' OrderedModel."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.likelihoods.ordinal import OrdinalLikelihood
from glmclass.rows.blocks import Block

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "ordinal.json").read_text())
LINKS = ("logit", "probit", "cloglog", "loglog", "cauchit")
FORMULA = {"housing": "Sat ~ C(Infl, levels=INFL) + C(Type, levels=TYPE) + Cont",
           "wine": "rating ~ temp + contact", "sim": "y ~ x1 + x2 + g"}
ENV = {"INFL": ["Low", "Medium", "High"], "TYPE": ["Tower", "Apartment", "Atrium", "Terrace"]}


def frame(name: str) -> pd.DataFrame:
    if name == "housing":
        df = pd.read_csv(REF / "data" / "housing.csv")
        df["Sat"] = pd.Categorical(df["Sat"], ["Low", "Medium", "High"], ordered=True)
        df["Cont"] = pd.Categorical(df["Cont"], ["Low", "High"])
        return df
    if name == "wine":
        return pd.read_csv(REF / "data" / "wine.csv")
    return pd.read_csv(REF / "data" / "ordinal_sim.csv")


def fit_case(case: dict):
    name = case["name"].split("_")[0]
    df = frame(name)
    kw = {}
    if case.get("weights"):
        kw["freq_weights"] = df[case["weights"]]
    if case.get("offset"):
        kw["offset"] = df[case["offset"]]
    model = gc.OrderedModel.from_formula(FORMULA[name], df, link=case["link"],
                                         eval_env=ENV, **kw)
    return model.fit(), df


def r_name(name: str) -> str:
    """R's name of a patsy column: ``C(Infl, levels=L)[T.Medium]`` -> ``InflMedium``."""
    name = re.sub(r"C\((\w+)[^)]*\)", r"\1", name)
    return name.replace("[T.", "").replace("]", "")


def in_r_order(res, ref: dict) -> np.ndarray:
    """Positions of R's coefficients (then thresholds) among ``res.params``."""
    names = [r_name(n) for n in res.params.index]
    return np.array([names.index(n) for n in ref["coef_names"]])


@pytest.fixture(scope="module")
def fits():
    return {c["name"]: (c, *fit_case(c)) for c in CASES["cases"]}


EXACT = [c["name"] for c in CASES["cases"] if c["link"] != "cauchit"]
CAUCHIT = [c["name"] for c in CASES["cases"] if c["link"] == "cauchit"]


@pytest.mark.parametrize("case", CAUCHIT)
def test_cauchit_is_the_maximum_of_r_s_pcauchy_likelihood(fits, case):
    """clm's cauchit maximises a likelihood other than R's pcauchy one (its logLik at its own
    estimates is not the pcauchy sum): our likelihood equals R's pcauchy sum at clm's
    estimates, and our fit is at least as high there, with a zero gradient."""
    ref, res, _ = fits[case]
    o = in_r_order(res, ref)
    at_r = np.empty(len(o))
    at_r[o] = ref["params"]
    model = res.model
    assert model.loglike(at_r) == pytest.approx(ref["loglik_pcauchy_at_params"], rel=1e-10)
    assert res.llf >= model.loglike(at_r)
    assert np.abs(model.score(res.params.to_numpy())).max() < 1e-6
    np.testing.assert_allclose(res.params.to_numpy()[o], ref["params"], rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("case", EXACT)
def test_estimates_against_clm(fits, case):
    ref, res, _ = fits[case]
    assert res.converged
    o = in_r_order(res, ref)
    np.testing.assert_allclose(res.params.to_numpy()[o], ref["params"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy()[o], ref["bse"], rtol=1e-5)
    np.testing.assert_allclose(res.cov_params().to_numpy()[np.ix_(o, o)], ref["cov"],
                               rtol=1e-5, atol=1e-10)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-8)
    assert res.aic == pytest.approx(ref["aic"], rel=1e-8)
    assert res.bic == pytest.approx(ref["bic"], rel=1e-8)
    assert res.nobs == ref["nobs"]
    prob = res.predict()
    np.testing.assert_allclose(prob.to_numpy(), ref["prob_all"], rtol=1e-7, atol=1e-12)
    lv = list(prob.columns)
    assert [str(v) for v in lv] == [str(v) for v in ref["levels"]]
    # polr's threshold labels, with the level names
    assert list(res.thresholds.index) == [f"{a}|{b}" for a, b in zip(lv[:-1], lv[1:], strict=True)]


@pytest.mark.parametrize("case", [c["name"] for c in CASES["cases"]
                                  if "polr" in c and c["link"] != "cauchit"])
def test_polr_agrees_to_its_optimiser(fits, case):
    """polr stops BFGS early and differentiates numerically: 1e-4 is what it gives."""
    ref, res, _ = fits[case]
    o = in_r_order(res, ref)
    np.testing.assert_allclose(res.params.to_numpy()[o], ref["polr"]["params"], rtol=1e-3,
                               atol=1e-4)
    assert res.llf == pytest.approx(ref["polr"]["loglik"], rel=1e-8)
    assert res.deviance == pytest.approx(ref["polr"]["deviance"], rel=1e-8)


@pytest.mark.parametrize("case", [c["name"] for c in CASES["cases"]
                                  if "hc0" in c and c["link"] != "cauchit"])
def test_sandwich_against_r(case):
    ref = next(c for c in CASES["cases"] if c["name"] == case)
    name = case.split("_")[0]
    df = frame(name)
    kw = {"offset": df[ref["offset"]]} if ref.get("offset") else {}
    model = gc.OrderedModel.from_formula(FORMULA[name], df, link=ref["link"], **kw)
    for cov_type, key in (("HC0", "hc0"), ("HC1", "hc1")):
        res = model.fit(cov_type=cov_type)
        o = in_r_order(res, ref)
        np.testing.assert_allclose(res.cov_params().to_numpy()[np.ix_(o, o)], ref[key],
                                   rtol=1e-6, atol=1e-12)
    if "vcov_cluster" in ref:
        res = model.fit(cov_type="cluster", cov_kwds={"groups": ref["cluster"]})
        np.testing.assert_allclose(res.cov_params().to_numpy()[np.ix_(o, o)],
                                   ref["vcov_cluster"], rtol=1e-6, atol=1e-12)


def test_hc2_hc3_are_refused_with_the_reason():
    df = frame("wine")
    for cov_type in ("HC2", "HC3"):
        with pytest.raises(ValueError, match=f"cov_type='{cov_type}' .* an ordinal model"):
            gcf.ordinal(FORMULA["wine"], df).fit(cov_type=cov_type)


def test_against_statsmodels_ordered_model():
    from statsmodels.miscmodels.ordinal_model import OrderedModel as SMOrdered

    df = frame("sim")
    for link, distr in (("logit", "logit"), ("probit", "probit")):
        res = gcf.ordinal("y ~ x1 + x2", df, link=link).fit()
        sm = SMOrdered(df["y"].astype(pd.CategoricalDtype(ordered=True)), df[["x1", "x2"]],
                       distr=distr).fit(method="bfgs", disp=False, maxiter=2000, gtol=1e-10)
        # statsmodels parametrises the thresholds by log increments
        th = np.cumsum(np.r_[sm.params.iloc[2], np.exp(sm.params.iloc[3:])])
        np.testing.assert_allclose(res.params.iloc[:2], sm.params.iloc[:2], rtol=1e-5)
        np.testing.assert_allclose(res.thresholds, th, rtol=1e-5)
        assert res.llf == pytest.approx(sm.llf, rel=1e-9)
        np.testing.assert_allclose(res.predict(df.head(20)).to_numpy(),
                                   sm.predict(df[["x1", "x2"]].head(20)), rtol=1e-5)


def test_entry_points_and_links():
    df = frame("wine")
    a = gcf.ordered_logit(FORMULA["wine"], df).fit()
    b = gcf.ordered_probit(FORMULA["wine"], df).fit()
    assert a.link == "logit" and b.link == "probit"
    assert gcf.ordinal(FORMULA["wine"], df, link="cloglog").fit().link == "cloglog"
    with pytest.raises(TypeError, match="fixes link='probit'"):
        gcf.ordered_probit(FORMULA["wine"], df, link="logit")
    with pytest.raises(ValueError, match="link must be one of 'logit'"):
        gcf.ordinal(FORMULA["wine"], df, link="identity")
    assert "OrderedModel" in gc.__all__ and gc.OrderedModel is type(a.model)


def test_levels_order_and_empty_level():
    df = frame("wine")
    y = pd.Categorical(df["rating"].astype(str), ["1", "2", "3", "4", "5"], ordered=True)
    rev = pd.Categorical(df["rating"].astype(str), ["5", "4", "3", "2", "1"], ordered=True)
    a = gcf.ordinal("y ~ temp + contact", df.assign(y=y)).fit()
    b = gcf.ordinal("y ~ temp + contact", df.assign(y=rev)).fit()
    # reversing the order flips the signs of the coefficients and the thresholds
    np.testing.assert_allclose(a.params.iloc[:2], -b.params.iloc[:2], rtol=1e-8)
    np.testing.assert_allclose(a.thresholds.to_numpy(), -b.thresholds.to_numpy()[::-1],
                               rtol=1e-8)
    assert list(b.thresholds.index)[0] == "5|4"
    assert "Levels in order: 5 < 4 < 3 < 2 < 1" in str(b.summary())
    empty = pd.Categorical(df["rating"].astype(str), ["0", "1", "2", "3", "4", "5"],
                           ordered=True)
    with pytest.raises(ValueError, match="level '0' .* has no rows"):
        gcf.ordinal("y ~ temp + contact", df.assign(y=empty))
    with pytest.raises(ValueError, match="no intercept"):
        gc.OrderedModel(df["rating"], np.column_stack([np.ones(len(df)), df["response"]]))


def test_predict_kinds():
    df = frame("wine")
    res = gcf.ordinal(FORMULA["wine"], df).fit()
    p = res.predict(df.head(5))
    cum = res.predict(df.head(5), which="cumulative")
    np.testing.assert_allclose(cum.to_numpy(), np.cumsum(p.to_numpy(), axis=1)[:, :-1],
                               rtol=1e-12)
    lin = res.predict(df.head(5), which="linear")
    np.testing.assert_allclose(lin, res.model.exog[:5] @ res.params.iloc[:2].to_numpy())
    cls = res.predict(df.head(5), which="class")
    assert list(cls) == list(p.columns[np.argmax(p.to_numpy(), axis=1)])


def test_get_prediction_delta_method_against_numerical_gradient():
    df = frame("sim")
    res = gcf.ordinal("y ~ x1 + x2 + g", df).fit()
    pr = res.get_prediction(df.head(6))
    lik, X = res.model.likelihood, res.model.exog[:6]
    theta = res.params.to_numpy()
    G = np.empty((6, 4, theta.size))
    for j in range(theta.size):
        h = 1e-6 * max(1.0, abs(theta[j]))
        e = np.zeros(theta.size)
        e[j] = h
        G[:, :, j] = (lik.mean(X, theta + e) - lik.mean(X, theta - e)) / (2 * h)
    V = res.cov_params().to_numpy()
    se = np.sqrt(np.einsum("nka,ab,nkb->nk", G, V, G))
    np.testing.assert_allclose(pr.se.to_numpy(), se, rtol=1e-6)
    np.testing.assert_allclose(pr.predicted.to_numpy(), res.predict(df.head(6)).to_numpy())
    frame_ = pr.summary_frame()
    assert (frame_["mean_ci_lower"] < frame_["mean"]).all()
    assert (frame_["mean"] < frame_["mean_ci_upper"]).all()


def test_score_and_information_are_the_derivatives_of_the_loglikelihood():
    df = frame("sim")
    for link in LINKS:
        model = gcf.ordinal("y ~ x1 + x2 + g", df, link=link, offset=df["off"])
        theta = model.fit().params.to_numpy() + 0.05
        g = model.score(theta)
        H = model.hessian(theta)
        for j in range(theta.size):
            e = np.zeros(theta.size)
            e[j] = 1e-5
            num = (model.loglike(theta + e) - model.loglike(theta - e)) / 2e-5
            assert num == pytest.approx(g[j], rel=1e-6, abs=1e-6)
            dg = (model.score(theta + e) - model.score(theta - e)) / 2e-5
            np.testing.assert_allclose(dg, H[:, j], rtol=1e-5, atol=1e-5)


def test_tail_probabilities_do_not_cancel():
    """Far in the upper tail the middle levels' probabilities are differences of two CDF
    values near 1: computed from the survival side they keep full relative precision."""
    for link, exact in (("logit", True), ("probit", None)):
        lik = OrdinalLikelihood(3, link)
        eta = np.array([[30.0, 31.0]])  # zeta - x'b: both CDFs within 1e-13 of 1
        p = lik.mean_eta(eta)
        assert p[0, 1] > 0 and np.isfinite(np.log(p[0, 1]))
        if exact is not None:  # S(30) - S(31), S(z) = 1 / (1 + e^z)
            assert p[0, 1] == pytest.approx(1 / (1 + np.exp(30)) - 1 / (1 + np.exp(31)),
                                            rel=1e-12)
        else:
            from scipy.stats import norm
            assert p[0, 1] == pytest.approx(norm.sf(30) - norm.sf(31), rel=1e-12)
        X = np.zeros((1, 0))
        b = Block(X, np.array([1]), np.ones(1), np.zeros(1), 0)
        ll = lik.loglike_obs(b, np.array([40.0, 41.0]))  # u = 41, l = 40, upper tail
        assert np.isfinite(ll).all()


def test_weights_frequency_and_variance():
    df = frame("housing")
    f = gcf.ordinal(FORMULA["housing"], df, freq_weights=df["Freq"], eval_env=ENV).fit()
    v = gcf.ordinal(FORMULA["housing"], df, var_weights=df["Freq"], eval_env=ENV).fit()
    np.testing.assert_allclose(f.params, v.params, rtol=1e-10)
    np.testing.assert_allclose(f.bse, v.bse, rtol=1e-10)
    assert f.nobs == df["Freq"].sum() and v.nobs == len(df)
    long = df.loc[df.index.repeat(df["Freq"])].reset_index(drop=True)
    e = gcf.ordinal(FORMULA["housing"], long, eval_env=ENV).fit()
    np.testing.assert_allclose(e.params, f.params, rtol=1e-9)
    assert e.llf == pytest.approx(f.llf, rel=1e-12)


def test_results_are_frozen_and_model_immutable():
    res = gcf.ordinal(FORMULA["wine"], frame("wine")).fit()
    with pytest.raises(AttributeError):
        res.llf = 0.0
    with pytest.raises(AttributeError):
        res.model.codes = None


@pytest.mark.parametrize("prof", CASES["profiles"], ids=lambda p: p["name"])
def test_profile_intervals(prof):
    name = prof["name"]
    df = frame(name)
    kw = {"freq_weights": df[prof["weights"]]} if prof.get("weights") else {}
    res = gcf.ordinal(FORMULA[name], df, eval_env=ENV, **kw).fit()
    ci = res.conf_int(method="profile")
    k = len(prof["coef_names"])
    np.testing.assert_allclose(ci.to_numpy()[:k], prof["exact"], rtol=1e-5)
    np.testing.assert_allclose(ci.to_numpy()[:k], prof["mass_confint"], rtol=1e-3)
    # each bound is a root: the held fit's deviance is the cutoff above the fit's
    q2 = 3.841458820694124
    for j in range(k):
        for b in ci.iloc[j]:
            dev = res.model.held_fit(j, b, 100, 1e-13, np.delete(res.params.to_numpy(), j))[0]
            assert dev - res.deviance == pytest.approx(q2, rel=1e-5)
    np.testing.assert_allclose(ci.to_numpy()[k:], res.conf_int().to_numpy()[k:])


def test_lrtest_and_compare_against_mnlogit():
    df = frame("wine")
    small = gcf.ordinal("rating ~ temp", df).fit()
    full = gcf.ordinal(FORMULA["wine"], df).fit()
    lr = gc.lrtest(small, full)
    assert lr.statistic == pytest.approx(2 * (full.llf - small.llf), rel=1e-12)
    assert lr.df == 1
    mn = gcf.mnlogit(FORMULA["wine"], df).fit()
    with pytest.raises(ValueError, match="OrderedModel and MNLogit fits are not nested"):
        gc.lrtest(full, mn)
    with pytest.raises(ValueError, match="not nested"):
        gc.lrtest(gcf.ordinal(FORMULA["wine"], df, link="probit").fit(),
                  gcf.ordinal("rating ~ temp * contact", df).fit())
    table = gc.compare([full, mn], names=["ordinal", "mnlogit"])
    assert table.loc["ordinal", "aic"] == pytest.approx(full.aic)
    assert table.loc["mnlogit", "llf"] == pytest.approx(mn.llf)


def test_margeff_per_level_against_numerical_derivatives():
    df = frame("sim")
    res = gcf.ordinal("y ~ x1 + x2 + g", df).fit()
    model, lik = res.model, res.model.likelihood
    spec = model.data.spec
    theta0 = res.params.to_numpy()
    cols = model.data.feature_mask

    def design(d):
        return spec.exog(d)[:, cols]

    def effects(theta):
        h = 1e-4
        up = lik.mean(design(df.assign(x1=df.x1 + h)), theta)
        down = lik.mean(design(df.assign(x1=df.x1 - h)), theta)
        b = lik.mean(design(df.assign(g="b")), theta)
        a = lik.mean(design(df.assign(g="a")), theta)
        return np.concatenate([((up - down) / (2 * h)).mean(axis=0), (b - a).mean(axis=0)])

    me = res.get_margeff()
    got = np.concatenate([me.margeff.xs("x1", level="term").to_numpy(),
                          me.margeff.xs("g[T.b]", level="term").to_numpy()])
    np.testing.assert_allclose(got, effects(theta0), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(me.margeff.groupby(level="term").sum(), 0.0, atol=1e-12)
    G = np.empty((8, theta0.size))
    for j in range(theta0.size):
        e = np.zeros(theta0.size)
        e[j] = 1e-6
        G[:, j] = (effects(theta0 + e) - effects(theta0 - e)) / 2e-6
    se = np.sqrt(np.diag(G @ res.cov_params().to_numpy() @ G.T))
    got_se = np.concatenate([me.margeff_se.xs("x1", level="term").to_numpy(),
                             me.margeff_se.xs("g[T.b]", level="term").to_numpy()])
    np.testing.assert_allclose(got_se, se, rtol=1e-5)
    at_mean = res.get_margeff(at="mean", method="eydx")
    assert np.isfinite(at_mean.margeff_se).all()


@pytest.mark.parametrize("ref", CASES["nominal"], ids=lambda r: r["name"])
def test_nominal_test_against_ordinal_nominal_test(ref):
    name = ref["name"]
    res = gcf.ordinal(FORMULA[name], frame(name)).fit()
    table = res.nominal_test()
    order = [table.index.get_loc(r_name(t)) if r_name(t) in table.index
             else list(map(r_name, table.index)).index(t) for t in ref["terms"]]
    got = table.iloc[order]
    np.testing.assert_array_equal(got["df"], ref["df"])
    np.testing.assert_allclose(got["lrt"], ref["lrt"], rtol=1e-6)
    np.testing.assert_allclose(got["llf"], ref["loglik"], rtol=1e-9)
    np.testing.assert_allclose(got["aic"], ref["aic"], rtol=1e-9)
    np.testing.assert_allclose(got["pvalue"], ref["pvalue"], rtol=1e-6)
    assert res.llf == pytest.approx(ref["loglik_full"], rel=1e-9)
