"""compare(): columns, sorting, BIC differences and weights, row checks, default names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import glmclass as gc
import glmclass.formula.api as gcf

SPECTOR = sm.datasets.spector.load_pandas().data
API_COLUMNS = ["nobs", "df_model", "llf", "aic", "bic", "delta_bic", "bic_weight",
               "log_evidence"]
FORMULAS = ["GRADE ~ GPA", "GRADE ~ GPA + PSI", "GRADE ~ GPA + TUCE + PSI"]


def fits(data=SPECTOR):
    return [gcf.logit(f, data).fit() for f in FORMULAS]


def test_columns_and_default_names():
    table = gc.compare(fits())
    assert list(table.columns[: len(API_COLUMNS)]) == API_COLUMNS
    assert set(table.index) == set(FORMULAS)
    assert table.index.name == "model"


def test_values_sorted_by_bic():
    res = fits()
    table = gc.compare(res, names=["a", "b", "c"])
    assert table["bic"].is_monotonic_increasing
    for name, r in zip("abc", res, strict=True):
        row = table.loc[name]
        assert row["llf"] == pytest.approx(r.llf, rel=1e-14)
        assert row["aic"] == pytest.approx(r.aic, rel=1e-14)
        assert row["bic"] == pytest.approx(r.bic, rel=1e-14)
        assert row["nobs"] == r.nobs and row["df_model"] == r.df_model
        assert np.isnan(row["log_evidence"])
    assert table["delta_bic"].iloc[0] == 0
    np.testing.assert_allclose(table["delta_bic"], table["bic"] - table["bic"].min())
    w = np.exp(-table["delta_bic"] / 2)
    np.testing.assert_allclose(table["bic_weight"], w / w.sum(), rtol=1e-14)
    assert table["bic_weight"].sum() == pytest.approx(1.0, rel=1e-14)
    assert table["bic_weight"].is_monotonic_decreasing


def test_bic_weights_do_not_underflow_for_large_gaps():
    data = pd.DataFrame({"x": np.linspace(-3, 3, 400)})
    data["y"] = (np.sin(7 * data.x) + data.x > 0).astype(int)
    a = gcf.logit("y ~ x", data).fit()
    b = gcf.logit("y ~ 1", data).fit()
    table = gc.compare([a, b])
    assert table["bic_weight"].iloc[0] == pytest.approx(1.0)
    assert table["bic_weight"].sum() == pytest.approx(1.0)
    assert np.all(np.isfinite(table["bic_weight"]))


def test_different_rows_are_an_error():
    a = gcf.logit("GRADE ~ GPA", SPECTOR).fit()
    b = gcf.logit("GRADE ~ GPA", SPECTOR.iloc[:-1]).fit()
    with pytest.raises(ValueError, match="different rows"):
        gc.compare([a, b])
    data = SPECTOR.copy()
    data.loc[3, "TUCE"] = np.nan  # the second model drops a row the first keeps
    a = gcf.logit("GRADE ~ GPA", data).fit()
    b = gcf.logit("GRADE ~ GPA + TUCE", data).fit()
    with pytest.raises(ValueError, match="different rows"):
        gc.compare([a, b])
    w = np.ones(32)
    w[0] = 2
    c = gcf.logit("GRADE ~ GPA", SPECTOR, freq_weights=w).fit()
    with pytest.raises(ValueError, match="different rows"):
        gc.compare([gcf.logit("GRADE ~ GPA", SPECTOR).fit(), c])


def test_names_argument():
    with pytest.raises(ValueError, match="2 names for 3 models"):
        gc.compare(fits(), names=["a", "b"])
    table = gc.compare(fits(), names=["m", "m", "n"])
    assert len(set(table.index)) == 3
    with pytest.raises(ValueError, match="at least one"):
        gc.compare([])


def test_array_models_get_numbered_names():
    X = sm.add_constant(SPECTOR[["GPA", "PSI"]])
    a = gc.Logit(SPECTOR.GRADE, X).fit()
    b = gc.Probit(SPECTOR.GRADE, X).fit()
    table = gc.compare([a, b])
    assert set(table.index) == {"model 1", "model 2"}


def test_logit_probit_cloglog_on_the_same_rows():
    res = [gcf.glm("GRADE ~ GPA + TUCE + PSI", SPECTOR,
                   family=gc.families.Binomial(link=lk)).fit()
           for lk in (gc.links.Logit(), gc.links.Probit(), gc.links.CLogLog())]
    table = gc.compare(res, names=["logit", "probit", "cloglog"])
    # equal parameter counts: the BIC order is the likelihood order
    assert list(table.index) == list(table.sort_values("llf", ascending=False).index)
    assert table.loc["logit", "bic"] == pytest.approx(39.64221205546174, rel=1e-9)  # R


def test_default_names_tell_apart_models_sharing_a_formula():
    """LDA and QDA on one formula are named by class; identical fits are numbered."""
    iris = pd.read_csv(Path(__file__).resolve().parent / "reference" / "data" / "iris.csv")
    f = "Species ~ Sepal_Length + Sepal_Width"
    lda, qda = gc.LDA.from_formula(f, iris).fit(), gc.QDA.from_formula(f, iris).fit()
    assert set(gc.compare([lda, qda]).index) == {f"LDA: {f}", f"QDA: {f}"}
    assert set(gc.compare([lda, lda]).index) == {f"LDA: {f} [1]", f"LDA: {f} [2]"}


def test_items_that_are_not_results_are_refused():
    res = fits()[0]
    with pytest.raises(TypeError, match="item 2 is int 3"):
        gc.compare([res, 3])
    with pytest.raises(TypeError, match="item 1 is a Logit model.*fit"):
        gc.compare([gcf.logit("GRADE ~ GPA", SPECTOR), res])
    with pytest.raises(TypeError, match="item 1 is str"):
        gc.compare(["GRADE ~ GPA"])


def test_different_responses_are_refused():
    a = gcf.logit("GRADE ~ GPA", SPECTOR).fit()
    b = gcf.logit("PSI ~ GPA", SPECTOR).fit()
    with pytest.raises(ValueError, match="different responses.*'GRADE' and 'PSI'"):
        gc.compare([a, b])
    c = gcf.glm("GPA ~ TUCE", SPECTOR, family=gc.families.Gaussian()).fit()
    d = gcf.glm("np.log(GPA) ~ TUCE", SPECTOR, family=gc.families.Gaussian()).fit()
    with pytest.raises(ValueError, match="different responses"):
        gc.compare([c, d])


def test_one_response_coded_differently_is_the_same_response():
    data = SPECTOR.assign(passed=np.where(SPECTOR.GRADE == 1, "yes", "no"),
                          failed=(SPECTOR.GRADE == 0))
    res = [gcf.logit(f, data).fit() for f in ("GRADE ~ GPA", "passed ~ GPA + PSI",
                                               "failed ~ GPA + TUCE")]
    table = gc.compare(res)
    assert table.shape[0] == 3
    # the labels swap the success level: the likelihood is the same
    assert table.loc["failed ~ GPA + TUCE", "llf"] == pytest.approx(
        gcf.logit("GRADE ~ GPA + TUCE", data).fit().llf, rel=1e-12)


def test_counts_are_integers_and_the_print_fits_80_columns():
    table = gc.compare(fits())
    assert table["nobs"].dtype == np.int64 and table["df_model"].dtype == np.int64
    text = repr(table)
    assert max(map(len, text.splitlines())) <= 80
    assert "log_evidence" not in text and "bayes_factor" not in text  # nobody has evidence
    assert "[1] GRADE ~ GPA + TUCE + PSI" in text or "[1] GRADE ~ GPA + PSI" in text
    assert "rows x" not in text and "..." not in text
    assert str(table) == text
    # short names fit without the numbered legend
    short = gc.compare(fits(), names=["a", "b", "c"])
    assert repr(short).splitlines()[0].split() == ["model", "nobs", "df_model", "llf", "aic",
                                                   "bic", "delta_bic", "bic_weight"]
    # every column is still there for code
    assert list(table.columns) == API_COLUMNS + ["bayes_factor"]
    assert isinstance(table, pd.DataFrame)
    assert type(table[["aic", "bic"]]) is pd.DataFrame


def test_evidence_columns_are_shown_when_a_model_has_evidence():
    with np.errstate(all="ignore"):
        bayes = gcf.bayes_logit("GRADE ~ GPA + TUCE + PSI", SPECTOR).fit()
    table = gc.compare([bayes, gcf.logit("GRADE ~ GPA + TUCE + PSI", SPECTOR).fit()],
                       names=["bayes", "mle"])
    text = repr(table)
    assert "log_evidence" in text and "bayes_factor" in text
    assert max(map(len, text.splitlines())) <= 80
    assert "log_evidence" in table._repr_html_()
    assert "log_evidence" not in gc.compare(fits())._repr_html_()
