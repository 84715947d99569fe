"""Linear hypotheses: ``results.wald_test`` and ``results.t_test`` against R's
``car::linearHypothesis`` (tests/reference/hypothesis.json, written by
tests/reference/r/hypothesis.R) and statsmodels at test time; the parser refuses what is
not a linear constraint and never evaluates anything."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis_reference import birthwt, close, fit, r_name, reference

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.results.hypothesis import parse_constraints

WALD = reference()["wald"]


def test_the_fits_are_r_s():
    for name, c in reference()["cases"].items():
        res = fit(name)
        close(res.params[[r_name(n) for n in c["coef_names"]]], c["coef"], 1e-9)
        close(res.deviance, c["deviance"], 1e-10)


@pytest.mark.parametrize("case", WALD, ids=lambda c: f"{c['case']}-{c['cov_type']}-"
                                                     f"{c['hypothesis']}")
def test_wald_test_equals_car_linear_hypothesis(case):
    res = fit(case["case"], case["cov_type"])
    w = res.wald_test(case["hypothesis"])
    close(w.statistic, case["chisq"])
    close(w.pvalue, case["pvalue"])
    assert w.df == case["df"] and w.df_denom is None and w.distribution == "chi2"
    f = res.wald_test(case["hypothesis"], use_f=True)
    close(f.statistic, case["F"])
    close(f.pvalue, case["F_pvalue"])
    assert f.df_num == case["df"] and f.df_denom == case["df_denom"]
    t = res.t_test(case["hypothesis"])
    close(t.effect, case["effect"])
    close(t.sd, case["sd"])
    if not res.use_t:  # car's z and normal p-value; a Gaussian GLM's t_test uses t
        close(t.statistic, case["z"])
        close(t.pvalue, case["z_pvalue"])


def test_matrix_and_tuple_forms_equal_the_string():
    res = fit("logit_main")
    names = list(res.params.index)
    R = np.zeros((2, len(names)))
    R[0, names.index("ptd")], R[0, names.index("ht")] = 1, -1
    R[1, names.index("age")] = 1
    by_text = res.wald_test("ptd = ht, age = 0")
    for form in (R, (R, [0, 0]), (pd.DataFrame(R), np.zeros(2)), R.tolist()):
        w = res.wald_test(form)
        close(w.statistic, by_text.statistic, 1e-14)
        close(w.pvalue, by_text.pvalue, 1e-14)
    close(res.wald_test({"ptd": 0.5, "age": 0}).statistic,
          res.wald_test("ptd = 0.5, age = 0").statistic, 1e-14)
    close(res.wald_test(["ptd = ht", "age = 0"]).statistic, by_text.statistic, 1e-14)
    w = res.wald_test("ptd = ht", scalar=False)
    assert np.shape(w.statistic) == (1, 1)


def test_single_coefficients_equal_the_wald_table():
    res = fit("logit_main", "HC3")
    names = [n for n in res.params.index if n != "Intercept"]
    t = res.t_test(", ".join(names))
    close(t.effect, res.params[names], 1e-14)
    close(t.sd, res.bse[names], 1e-12)
    close(t.pvalue, res.pvalues[names], 1e-10)
    close(t.conf_int(), res.conf_int().loc[names], 1e-12)
    w = res.wald_test_terms()
    race = res.wald_test("C(race)[T.other] = 0, C(race)[T.white] = 0")
    close(race.statistic, w.loc["C(race)", "statistic"], 1e-10)


sm = pytest.importorskip("statsmodels.api")
smf = pytest.importorskip("statsmodels.formula.api")


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0"])  # statsmodels' GLM HC1 is not R's
@pytest.mark.parametrize("hypothesis", ["ptd = ht", "C(race)[T.other] = C(race)[T.white], "
                                        "age = 0", "2*lwt - age/3 = 0.01",
                                        "ptd = ht = ui", "-(smoke - 2 * ht) = 1"])
def test_wald_and_t_test_equal_statsmodels(hypothesis, cov_type):
    formula = reference()["cases"]["logit_main"]["formula"]
    res = gcf.logit(formula, birthwt()).fit(cov_type=cov_type, tol=1e-13)
    s = smf.glm(formula, birthwt(), family=sm.families.Binomial()).fit(
        start_params=res.params.to_numpy(), cov_type=cov_type, tol=1e-14)
    a, b = res.wald_test(hypothesis), s.wald_test(hypothesis, scalar=True)
    close(a.statistic, b.statistic)
    close(a.pvalue, b.pvalue)
    ta, tb = res.t_test(hypothesis).summary_frame(), s.t_test(hypothesis).summary_frame()
    assert list(ta.columns) == list(tb.columns)
    close(ta.to_numpy(), tb.to_numpy())
    fa, fb = res.wald_test(hypothesis, use_f=True), s.wald_test(hypothesis, use_f=True,
                                                                 scalar=True)
    close(fa.statistic, fb.statistic)
    close(fa.pvalue, fb.pvalue)
    assert fa.df_denom == fb.df_denom


def test_mnlogit_level_by_term_names_equal_statsmodels():
    anes = sm.datasets.anes96.load_pandas().data
    formula = "PID ~ logpopul + selfLR + age"
    res = gcf.mnlogit(formula, anes).fit(tol=1e-12)
    s = smf.mnlogit(formula, anes).fit(start_params=res.params.to_numpy().T.ravel(),
                                        method="newton", disp=0, tol=1e-12)
    for ours, theirs in [("[1]logpopul = [2]logpopul", "y1_logpopul = y2_logpopul"),
                         ("[3]selfLR = 0, [6]age - [5]age = 0.01",
                          "y3_selfLR = 0, y6_age - y5_age = 0.01"),
                         ("y1_logpopul = y2_logpopul", "y1_logpopul = y2_logpopul")]:
        a, b = res.wald_test(ours), s.wald_test(theirs, scalar=True)
        close(a.statistic, b.statistic)
        close(a.pvalue, b.pvalue)
        ta, tb = res.t_test(ours).summary_frame(), s.t_test(theirs).summary_frame()
        close(ta.to_numpy(), tb.to_numpy())
    with pytest.raises(ValueError, match=r"one coefficient of each term per non-reference "
                                         r"level: name it '\[1\]"):
        res.wald_test("logpopul = 0")


def test_every_likelihood_model_has_them():
    df = birthwt()
    for res in (gcf.firthlogit("low ~ age + lwt + smoke", df).fit(),
                gcf.bayes_logit("low ~ age + lwt + smoke", df).fit(),
                gcf.probit("low ~ age + lwt + smoke", df).fit()):
        t = res.t_test("smoke = 0")
        close(t.statistic, res.tvalues[["smoke"]], 1e-12)
        close(res.wald_test("smoke = 0").statistic, res.tvalues["smoke"] ** 2, 1e-12)


@pytest.mark.parametrize("text, message", [
    ('__import__("os")', "is neither a coefficient name nor a number"),
    ("age * lwt = 0", "a product of two coefficients"),
    ("age / lwt = 0", "division by a coefficient"),
    ("age / 0 = 0", "division by zero"),
    ("age = lwt +", "ends where a coefficient name or number is expected"),
    ("(age = 0", r"'\(' at character 0 is not closed"),
    ("foo = 0", "'foo' .* is neither a coefficient name"),
    ("ages = 0", "'ages' .* is neither a coefficient name"),
    ("age lwt", "'lwt' follows 'age' without an operator"),
    ("np.log(age) = 0", r"'np.log\(age\)' .* is neither a coefficient name"),
    ("3 = 1", "a constraint without any coefficient"),
    ("", "empty"),
    ("ptd = ht, ht = ptd", r"linearly dependent \(R is rank-deficient\): ht = ptd"),
])
def test_refusals_name_the_problem(text, message):
    res = fit("logit_main")
    with pytest.raises(ValueError, match=message):
        res.wald_test(text)


def test_nothing_is_evaluated(monkeypatch):
    import builtins

    def refuse(*args, **kwargs):
        raise AssertionError("a hypothesis was evaluated")

    monkeypatch.setattr(builtins, "eval", refuse)
    monkeypatch.setattr(builtins, "exec", refuse)
    res = fit("logit_main")
    for text in ('__import__("os").system("echo hi")', "().__class__", "lambda: 0"):
        with pytest.raises(ValueError):
            res.wald_test(text)
    assert np.isfinite(res.wald_test("ptd = ht").statistic)


def test_names_with_brackets_and_calls_are_whole_names():
    names = {"np.log(age)": 0, "I(age ** 2)": 1, "C(race)[T.2]": 2, "x1": 3, "x10": 4}
    c = parse_constraints("np.log(age) - 2*I(age ** 2) = C(race)[T.2] / 4 + 1, x10 = x1",
                          names, 5)
    np.testing.assert_array_equal(c.R, [[1, -2, -0.25, 0, 0], [0, 0, 0, -1, 1]])
    np.testing.assert_array_equal(c.q, [1, 0])
    assert c.labels == ["np.log(age) - 2*I(age ** 2) = C(race)[T.2] / 4 + 1", "x10 = x1"]
    c = parse_constraints("x1 = x10 = 2e-1", names, 5)
    np.testing.assert_array_equal(c.R, [[0, 0, 0, 1, -1], [0, 0, 0, 0, 1]])
    np.testing.assert_array_equal(c.q, [0, 0.2])


def test_aliased_and_shape_refusals():
    df = birthwt().assign(ptd2=lambda d: 2 * d["ptd"])
    with pytest.warns(gc.RankDeficientWarning):
        res = gcf.logit("low ~ age + ptd + ptd2", df).fit()
    with pytest.raises(ValueError, match=r"aliased coefficients \(ptd2\)"):
        res.wald_test("ptd2 = 0")
    assert np.isfinite(res.wald_test("ptd = 0").statistic)
    with pytest.raises(ValueError, match="R has shape .* it needs 4 columns"):
        res.wald_test(np.eye(3))
    with pytest.raises(ValueError, match="q has 3 values for 1 rows of R"):
        res.wald_test((np.eye(4)[:1], [0, 0, 0]))
    with pytest.raises(TypeError, match="hypothesis must be a string"):
        res.wald_test(3.5)


def test_summary_texts():
    res = fit("logit_main")
    text = res.wald_test("ptd = ht").summary()
    assert "Linear hypothesis: ptd = ht" in text and "chi2 =" in text
    assert "F =" in str(res.wald_test("ptd = ht", use_f=True))
    frame = res.t_test("ptd = ht, age = 0").summary_frame(alpha=0.1)
    assert list(frame.index) == ["ptd = ht", "age = 0"]
    assert "Test for constraints" in res.t_test("ptd = ht").summary()


def test_gaussian_t_test_uses_t_as_statsmodels_with_use_t():
    formula = reference()["cases"]["gaussian"]["formula"]
    res = fit("gaussian")
    s = smf.glm(formula, birthwt(), family=sm.families.Gaussian()).fit(use_t=True)
    for h in ("smoke = ht", "C(race)[T.other] = 0, lwt = 0.01"):
        ta, tb = res.t_test(h).summary_frame(), s.t_test(h).summary_frame()
        assert list(ta.columns) == list(tb.columns) and "P>|t|" in ta.columns
        close(ta.to_numpy(), tb.to_numpy())
        fa, fb = res.wald_test(h, use_f=True), s.wald_test(h, use_f=True, scalar=True)
        close(fa.statistic, fb.statistic)
        close(fa.pvalue, fb.pvalue)
