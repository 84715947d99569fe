"""Summary reports: deterministic text / HTML / LaTeX with the API.md header fields."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.summary import Summary, fmt

SPECTOR = sm.datasets.spector.load_pandas().data
HEADER_FIELDS = ["Model", "Link", "Method", "No. Observations", "Df Model", "Df Residuals",
                 "Converged", "No. Iterations", "Information", "Log-Likelihood", "LL-Null",
                 "Deviance", "AIC", "BIC"]


def fit(link=gc.links.Logit(), **kw):
    fam = gc.families.Binomial(link=link)
    return gcf.glm("GRADE ~ GPA + TUCE + PSI", SPECTOR, family=fam).fit(**kw)


def header(text: str) -> dict:
    """Header pairs of a text summary."""
    out = {}
    for line in text.splitlines():
        for key, value in re.findall(r"([A-Za-z][A-Za-z .()\-]*?):\s+(\S+)", line):
            out[key.strip()] = value
    return out


def test_text_has_the_header_fields_and_values():
    res = fit()
    text = str(res.summary())
    h = header(text)
    for field in HEADER_FIELDS:
        assert field in h, field
    assert h["Model"] == "GLM" and h["Link"] == "logit" and h["Method"] == "IRLS"
    assert h["Information"] == "observed"
    assert h["No. Observations"] == "32" and h["Df Model"] == "3" and h["Df Residuals"] == "28"
    assert h["Converged"] == "True" and h["No. Iterations"] == str(res.n_iter)
    for key, attr in (("Log-Likelihood", "llf"), ("LL-Null", "llnull"), ("Deviance", "deviance"),
                      ("AIC", "aic"), ("BIC", "bic")):
        assert float(h[key]) == pytest.approx(getattr(res, attr), abs=1e-4), key
    assert "Standard errors from the observed information matrix." in text


def test_coefficient_table_rows():
    res = fit()
    text = str(res.summary())
    assert re.search(r"coef\s+std err\s+z\s+P>\|z\|\s+\[0.025\s+0.975\]", text)
    ci = res.conf_int()
    for name in res.params.index:
        row = next(ln for ln in text.splitlines() if ln.startswith(name + " "))
        values = [float(v) for v in row.split()[1:]]
        expected = [res.params[name], res.bse[name], res.tvalues[name], res.pvalues[name],
                    ci.loc[name, "lower"], ci.loc[name, "upper"]]
        np.testing.assert_allclose(values, expected, rtol=1e-3, atol=6e-5)


def test_information_and_method_are_reported():
    h = header(str(fit(gc.links.Probit(), information="expected", method="newton").summary()))
    assert h["Information"] == "expected" and h["Method"] == "Newton" and h["Link"] == "probit"
    assert "expected information" in str(fit(information="expected").summary())


def test_alpha_changes_the_interval_columns():
    text = str(fit().summary(alpha=0.1))
    assert "[0.05" in text and "0.95]" in text


def test_deterministic_across_calls_and_fits():
    a, b = fit().summary(), fit().summary()
    assert a.as_text() == b.as_text() == str(a) == repr(a)
    assert a.as_html() == b.as_html()
    assert a._repr_html_() == b._repr_html_()
    assert a.as_latex() == b.as_latex()


def test_jupyter_view_is_the_html_report_with_a_scoped_style():
    """Jupyter shows as_html() after a <style> block whose rules apply inside the report only,
    never to the rest of the notebook."""
    import re

    s = fit().summary()
    html = s._repr_html_()
    style, report = html.split("</style>\n", 1)
    assert style.startswith("<style>") and report == s.as_html()
    selectors = [sel.strip() for rule in re.findall(r"([^{}]+)\{", style.removeprefix("<style>"))
                 for sel in rule.split(",")]
    assert selectors and all(sel.startswith(".glmclass-summary") for sel in selectors)


def test_no_dates_or_times():
    s = fit().summary()
    for out in (s.as_text(), s.as_html(), s.as_latex()):
        assert not re.search(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}:\d{2}|Date|Time", out)


def test_exp_shows_odds_ratios_for_logit():
    res = fit()
    text = str(res.summary(exp=True))
    assert "odds ratio" in text and "std err" not in text
    ci = np.exp(res.conf_int())
    row = next(ln for ln in text.splitlines() if ln.startswith("GPA "))
    vals = [float(v) for v in row.split()[1:]]
    np.testing.assert_allclose(vals, [np.exp(res.params["GPA"]), res.tvalues["GPA"],
                                      res.pvalues["GPA"], ci.loc["GPA", "lower"],
                                      ci.loc["GPA", "upper"]], rtol=1e-3, atol=6e-5)
    assert "exp(coef)" in str(fit(gc.links.CLogLog()).summary(exp=True))


def test_html_structure_and_escaping():
    data = SPECTOR.rename(columns={"GPA": "gpa<b>&"})
    res = gcf.logit("GRADE ~ Q('gpa<b>&') + PSI", data).fit()
    out = res.summary().as_html()
    assert out.startswith('<div class="glmclass-summary">') and out.endswith("</div>")
    assert out.count("<table>") == 2 and out.count("</table>") == 2
    assert "gpa&lt;b&gt;&amp;" in out and "gpa<b>" not in out
    for field in HEADER_FIELDS:
        assert f"<th>{field}:</th>" in out


def test_latex_escapes_special_characters():
    data = SPECTOR.rename(columns={"GPA": "g_p%a"})
    res = gcf.logit("GRADE ~ g_p%a + PSI".replace("g_p%a", "Q('g_p%a')"), data).fit()
    out = res.summary().as_latex()
    assert r"g\_p\%a" in out
    assert out.startswith(r"\begin{center}") and out.rstrip().endswith(r"\end{center}")
    assert out.count(r"\begin{tabular}") == out.count(r"\end{tabular}") == 2
    for field in HEADER_FIELDS:
        assert f"{field}:" in out, field


def test_summary_object_standalone():
    table = pd.DataFrame({"a": [1.0, 2.5], "n": [3.0, 4.0]}, index=["r1", "r2"])
    s = Summary("Title", [("Key", 1.23456), ("Flag", True)], [("Part", table)], ["a note"])
    text = s.as_text()
    assert "Title" in text and "Key:" in text and "1.2346" in text and "a note" in text
    assert "Part" in text
    assert "<b>Part</b>" in s.as_html()


@pytest.mark.parametrize("value, out", [
    (True, "True"), (np.bool_(False), "False"), (3, "3"), (np.int64(7), "7"),
    (1.23456789, "1.2346"), (float("nan"), "NaN"), (float("inf"), "inf"), (-float("inf"), "-inf"),
    (1.5e-7, "1.5000e-07"), (2.5e8, "2.5000e+08"), (0.0, "0.0000"), ("text", "text"),
])
def test_fmt(value, out):
    assert fmt(value) == out


def test_gaussian_summary_uses_t_and_shows_the_scale():
    res = gcf.glm("GPA ~ TUCE + PSI", SPECTOR, family=gc.families.Gaussian()).fit()
    text = str(res.summary())
    assert re.search(r"coef\s+std err\s+t\s+P>\|t\|", text)
    h = header(text)
    assert h["Family"] == "Gaussian" and h["Link"] == "identity"
    assert float(h["Scale"]) == pytest.approx(res.scale, abs=1e-4)


def widest(text: str) -> int:
    return max(map(len, text.splitlines()))


def test_binary_summaries_say_which_level_is_modelled():
    bc = gc.datasets.load("breast_cancer")
    text = str(gcf.logit("diagnosis ~ mean_radius", bc).fit().summary())
    assert text.splitlines()[1].strip() == ("P(diagnosis = malignant) is modelled; the other "
                                            "level is benign")
    flipped = bc.assign(diagnosis=pd.Categorical(bc.diagnosis, ["malignant", "benign"]))
    assert "P(diagnosis = benign) is modelled" in str(
        gcf.probit("diagnosis ~ mean_radius", flipped).fit().summary())
    assert "P(GRADE = 1) is modelled; the other level is 0" in str(fit().summary())
    men = gc.datasets.load("menarche")
    prop = gcf.glm("I(Menarche / Total) ~ Age", men, var_weights=men["Total"]).fit()
    assert "the response I(Menarche / Total) holds proportions" in str(prop.summary())
    assert "P(GRADE = 1) is modelled" in str(gcf.bayes_logit("GRADE ~ GPA", SPECTOR).fit()
                                             .summary())
    gaussian = gcf.glm("GPA ~ TUCE", SPECTOR, family=gc.families.Gaussian()).fit().summary()
    assert "modelled" not in str(gaussian) and gaussian.subtitle == ""
    s = fit().summary()
    assert "<p>P(GRADE = 1) is modelled; the other level is 0</p>" in s.as_html()
    assert r"P(GRADE = 1) is modelled; the other level is 0\\[4pt]" in s.as_latex()


def test_multinomial_summary_names_the_reference_level():
    iris = gc.datasets.load("iris")
    text = str(gcf.mnlogit("Species ~ Sepal_Length", iris, ref="virginica").fit().summary())
    assert re.search(r"Reference level:\s+virginica", text)
    assert "against the reference level 'virginica'" in text


def test_text_fits_100_columns_keeping_every_number():
    bc = gc.datasets.load("breast_cancer")
    feats = [c for c in bc.columns if c.startswith("mean_")]
    lda = gcf.lda("diagnosis ~ " + " + ".join(feats), bc).fit()
    text = str(lda.summary())
    assert widest(text) <= 100
    for f in feats:  # every column of the 10-column means table is printed, in blocks
        assert f in text
    assert f"{lda.means.loc['malignant', 'mean_fractal_dimension']:.4f}" in text
    long = SPECTOR.rename(columns={"GPA": "grade_point_average_" + "x" * 70})
    res = gcf.logit(f"GRADE ~ {long.columns[0]} + PSI", long).fit()
    text = str(res.summary())
    assert widest(text) <= 100
    lines = text.splitlines()
    # issue 26: a long label no longer wraps its row; it is cut in the middle, with a key
    row = next(line for line in lines if line.startswith("grade_point_average_"))
    assert "..." in row and row.split()[1] == f"{res.params.iloc[1]:.4f}"
    assert f"{row.split()[0]} =\n    {long.columns[0]}" in text


def test_wide_header_values_and_notes_stay_within_the_width():
    s = Summary("T", [("Dep. Variable", "I(" + "y" * 60 + ")"), ("Model", "Logit")],
                [(None, pd.DataFrame({"a": [1.0]}, index=["r"]))], ["n" * 30 + " " + "m" * 90])
    text = s.as_text()
    assert widest(text) <= 100 and "y" * 60 in text and "Model:" in text


def test_no_empty_header_table_without_a_header():
    s = Summary("Model comparison", [], [(None, pd.DataFrame({"aic": [1.0]}, index=["m"]))],
                subtitle="likelihood: conditional")
    latex = s.as_latex()
    assert latex.count(r"\begin{tabular}") == 1 and r"\hline" + "\n" + r"\hline" not in latex
    assert "lrlr" not in latex and "likelihood: conditional" in latex
    assert s.as_html().count("<table>") == 1
    assert s.as_text().splitlines()[1].strip() == "likelihood: conditional"
