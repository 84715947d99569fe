"""The data-only results file for designs beyond one patsy formula: mixed models (the
random-effects formula and its blocks, issue 27) and the formulaic engine's model spec, in
both formats, with and without the rows, to the bit; crafted files run nothing."""

from __future__ import annotations

import io
import json
import warnings

import pytest
from test_safe_io import DF, NEW, _members, _zip, check_same, roundtrip, same

import glmclass as gc
import glmclass.formula.api as gcf


# --- mixed models (issue 27): the random-effects formula and designs as data ------------------
def cbpp_fit(engine: str = "patsy"):
    d = gc.datasets.load("cbpp")
    d["period"] = d["period"].astype(str)
    res = gc.MixedGLM.from_formula("cbind(incidence, size - incidence) ~ period + (1 | herd)",
                                   d, family=gc.families.Binomial(), engine=engine).fit()
    return res, d


@pytest.mark.parametrize("engine", ["patsy", "formulaic"])
@pytest.mark.parametrize("remove_data", [False, True])
@pytest.mark.parametrize("format", ["safe", "pickle"])
def test_mixed_round_trip_is_bit_identical(format, remove_data, engine):
    res, d = cbpp_fit(engine)
    back = roundtrip(res, format=format, remove_data=remove_data)
    assert str(back.summary()) == str(res.summary())
    new = d.iloc[[0, 5, 17, 40]].copy()
    for random_effects in (True, False):
        for which in ("mean", "linear"):
            same(back.predict(new, which=which, random_effects=random_effects),
                 res.predict(new, which=which, random_effects=random_effects))
    unseen = new.assign(herd=[99, 1, 2, 99])  # a herd not in the fit
    with pytest.raises(ValueError, match=r"level \S*99\S* of the grouping factor 'herd'"):
        back.predict(unseen)
    same(back.predict(unseen, allow_new_groups=True), res.predict(unseen, allow_new_groups=True))
    for name in ("params", "bse", "pvalues", "theta", "random_effects", "random_effects_se",
                 "random_effects_cov", "llf", "aic", "bic", "deviance", "ngroups"):
        same(getattr(back, name), getattr(res, name))
    same(back.conf_int(), res.conf_int())
    got, want = back.wald_test("period[T.2] = period[T.3]"), res.wald_test(
        "period[T.2] = period[T.3]")
    assert (got.statistic, got.df, got.pvalue) == (want.statistic, want.df, want.pvalue)
    same(gc.compare([back, res]), gc.compare([res, res]))
    assert back.model.random_formula.terms == res.model.random_formula.terms
    if remove_data:
        with pytest.raises(ValueError, match="remove_data=True.*in-sample prediction"):
            back.predict()
    else:
        same(back.predict(), res.predict())


@pytest.mark.parametrize("formula", ["y ~ x + (1 | g) + (1 | cls)", "y ~ x + (x | g)",
                                     "y ~ x + (1 | g/cls)", "y ~ x + (x || g) + (1 | cls)"])
@pytest.mark.parametrize("dense", [True, False], ids=["dense", "sparse"])
def test_mixed_designs_round_trip(formula, dense, monkeypatch):
    """Slopes, crossed and nested factors; with ``dense=False`` the fit keeps a sparse
    factorisation (SuperLU's, chosen here for a small design), written as its arrays."""
    import glmclass.likelihoods.mixed as mixed_likelihood

    if not dense:
        monkeypatch.setattr(mixed_likelihood, "DENSE_Q", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small groups: singular fits warn
        res = gcf.mixed_logit(formula, DF).fit()
    for format in ("safe", "pickle"):
        for remove_data in (False, True):
            back = roundtrip(res, format=format, remove_data=remove_data)
            assert str(back.summary()) == str(res.summary())
            same(back.predict(NEW), res.predict(NEW))
            same(back.random_effects_se, res.random_effects_se)


def test_a_crafted_zip_cannot_give_a_random_formula_an_environment():
    """The random-effects formula is written without its evaluation environment; a file
    naming the environment's class is refused, and its bar terms are read back as text."""
    res, _ = cbpp_fit()
    members = _members(res)
    state = json.loads(members["state.json"])
    text = json.dumps(state)
    assert "FormulaEnvironment" not in text and '"eval_env": null' in text
    members["state.json"] = text.replace('"eval_env": null', '"eval_env": {"t": "obj", "c": '
                                         '"formula.namespace:FormulaEnvironment", "id": 999, '
                                         '"v": {}}').encode()
    with pytest.raises(ValueError, match="not one of the glmclass classes"):
        gc.load(_zip(members))


# --- the formulaic engine's design as data -----------------------------------------------------
FORMULAIC = ["y ~ C(g) + x", "y ~ C(g, Sum) * b1 + scale(x)", "y ~ bs(x, df=4) + C(g) + z",
             "y ~ C(g, Treatment('mid')) + center(x) + np.log(x**2) + I(z**2)",
             "y ~ C(g, Helmert) + C(cls, Diff) + x:g", "y ~ C(g, Poly) + standardize(x)",
             "y ~ x + z + offset(np.log(w))"]


@pytest.mark.parametrize("formula", FORMULAIC)
def test_formulaic_designs_round_trip(formula):
    """formulaic's model spec (terms, column structure, levels and contrasts, transform
    state) is written as data and made again: the loaded fit equals the original to the bit
    in both formats, with and without its rows, and still builds designs with formulaic."""
    res = gcf.logit(formula, DF, engine="formulaic").fit()
    for format in ("safe", "pickle"):
        for remove_data in (False, True):
            back = roundtrip(res, format=format, remove_data=remove_data)
            check_same(res, back, rows=not remove_data)
            assert back.model.data.spec.engine == "formulaic"
            assert back.model.data.spec.column_names == res.model.data.spec.column_names
    if "g" in res.model.data.spec.columns:  # the levels are kept: an unseen one is named
        back = roundtrip(res, remove_data=True)
        with pytest.raises(ValueError, match="level 'top'.*levels"):
            back.predict(NEW.assign(g="top"))


def double(v):
    """A user's function (module level: a pickle names it)."""
    return 2 * v


def test_formulaic_formula_with_callers_names_is_refused():
    res = gcf.logit("y ~ double(x)", DF, eval_env={"double": double}, engine="formulaic").fit()
    with pytest.raises(ValueError, match=r"eval_env.*format='pickle'"):
        res.save(io.BytesIO())
    same(roundtrip(res, format="pickle").predict(NEW), res.predict(NEW))


def test_formulaic_custom_contrasts_are_refused_by_name():
    from formulaic.transforms import contrasts as fc

    from glmclass.formula.formulaic_state import model_spec_state

    spec = gcf.logit("y ~ C(g) + x", DF, engine="formulaic").fit().model.data.spec.model_spec
    custom = fc.ContrastsState(fc.CustomContrasts([[1, 0], [0, 1], [-1, -1]]), ["a", "b", "c"])
    state = {**spec.encoder_state, "C(g)": (spec.encoder_state["C(g)"][0],
                                            {"categories": ["a", "b", "c"], "contrasts": custom})}
    with pytest.raises(ValueError, match=r"'C\(g\)'.*CustomContrasts.*format='pickle'"):
        model_spec_state(spec.update(encoder_state=state))


def test_a_crafted_formulaic_design_is_not_evaluated(tmp_path):
    marker = tmp_path / "marker"
    res = gcf.logit("y ~ C(g) + np.log(x)", DF, engine="formulaic").fit()
    members = _members(res)
    text = members["state.json"].decode()
    evil = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    assert text.count('"np.log(x)"') >= 2  # the factor's expression, as text
    members["state.json"] = text.replace('"np.log(x)"', json.dumps(evil)).encode()
    with pytest.raises(ValueError):
        back = gc.load(_zip(members))
        back.predict(NEW)
    assert not marker.exists()
