"""Output an analyst reads (issue 26 §6): ``cbind(s, f)`` named as written, one number format
per table column, ``gc.anova`` rows numbered with a key, long term names that do not wrap a
coefficient row."""

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass import datasets
from glmclass.summary import Summary

sm = pytest.importorskip("statsmodels.api")
smf = pytest.importorskip("statsmodels.formula.api")


def test_cbind_response_is_named_as_written():
    df = pd.DataFrame({"ncases": [1, 3, 5, 7, 9, 4], "ncontrols": [9, 7, 5, 3, 1, 6],
                       "x": [1, 2, 3, 4, 5, 3.5]})
    res = gcf.glm("cbind(ncases, ncontrols) ~ x", df, family=gc.families.Binomial()).fit()
    text = str(res.summary())
    assert "ncases + ncontrols" not in text
    assert res.summary().tables[0].loc["Dep. Variable", "value"] == "cbind(ncases, ncontrols)"
    assert "cbind(ncases, ncontrols) gives the successes and failures" in text
    ref = smf.glm("ncases + ncontrols ~ x", df, family=sm.families.Binomial()).fit(tol=1e-13)
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-8)


def test_one_number_format_per_column():
    table = pd.DataFrame({"coef": [2.1921, -9.78e-04], "p": [5.266e-04, 0.0010],
                          "big": [2.5e8, 3.5], "tiny": [1e-7, 2e-8]}, index=["a", "b"])
    text = Summary("T", [], [(None, table)]).as_text()
    assert "-0.0010" in text and "-9.78" not in text  # fixed under 2.1921, as statsmodels
    assert "0.0005" in text and "e-04" not in text
    assert "2.5000e+08" in text and "3.5000e+00" in text  # one column, one format
    assert "1.0000e-07" in text and "2.0000e-08" in text


def test_anova_rows_numbered_with_a_key():
    bw = datasets.load("birthwt")
    small = gcf.logit("low ~ age + lwt + smoke + ptl + ht + ui", bw).fit()
    big = gcf.logit("low ~ age + lwt + smoke + ptl + ht + ui + C(race) + ftv", bw).fit()
    table = gc.anova(small, big)
    assert list(table.index) == [small.formula, big.formula]  # still indexed by formula
    lines = str(table).splitlines()
    assert lines[0] == f"[1] {small.formula}" and lines[1] == f"[2] {big.formula}"
    row = next(line for line in lines if line.startswith("[2]") and "179" in line)
    ref = smf.glm("low ~ age + lwt + smoke + ptl + ht + ui + C(race) + ftv", bw,
                  family=sm.families.Binomial()).fit()
    assert f"{ref.deviance:.4f}" in row and row.split()[2] == f"{ref.deviance:.4f}"
    assert row.split()[3] == "3"  # df, a whole number
    assert max(map(len, lines)) <= 80


def test_long_term_names_keep_each_row_on_one_line():
    bw = datasets.load("birthwt")
    long = "weight_at_last_menstrual_period_in_pounds_" + "x" * 50
    df = bw.rename(columns={"lwt": long})
    res = gcf.logit(f"low ~ age + {long} + C(race)", df).fit()
    text = str(res.summary())
    assert max(map(len, text.splitlines())) <= 100
    rows = [line for line in text.splitlines() if line.startswith("weight_at_last")]
    assert len(rows) == 1 and f"{res.params[long]:.4f}" in rows[0]
    assert "Shortened names:" in text
