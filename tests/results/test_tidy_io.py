"""``results.tidy()`` for every model with standard errors, and ``save``/``gc.load`` (with and
without the rows)."""

from __future__ import annotations

import io
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from inference_reference import load

import glmclass as gc
import glmclass.formula.api as gcf

COLUMNS = ["term", "estimate", "std_error", "statistic", "p_value", "conf_low", "conf_high"]


def fits():
    bw = load("birthwt")
    survey = load("survey", complete=("Exer", "Sex", "Age", "Pulse"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "logit": gcf.logit("low ~ age + lwt + C(race) + smoke", bw).fit(),
            "probit_hc1": gcf.probit("low ~ age + lwt + smoke", bw).fit(cov_type="HC1"),
            "gaussian": gcf.glm("bwt ~ age + lwt", bw, family=gc.families.Gaussian()).fit(),
            "mnlogit": gcf.mnlogit("Exer ~ Sex + Age + Pulse", survey).fit(),
            "bayes": gcf.bayes_logit("low ~ age + lwt + smoke", bw).fit(),
            "array": gc.Logit(bw["low"], bw[["age", "lwt"]].assign(const=1.0)).fit(),
        }


@pytest.mark.parametrize("name", list(fits()))
def test_tidy_is_the_coefficient_table(name):
    res = fits()[name]
    t = res.tidy(alpha=0.1)
    multi = isinstance(res.params, pd.DataFrame)
    assert list(t.columns) == (["level"] if multi else []) + COLUMNS
    flat = (lambda f: f.to_numpy().T.ravel()) if multi else (lambda s: s.to_numpy())
    np.testing.assert_array_equal(t["estimate"], flat(res.params))
    np.testing.assert_array_equal(t["std_error"], flat(res.bse))
    np.testing.assert_array_equal(t["statistic"], flat(res.tvalues))
    np.testing.assert_array_equal(t["p_value"], flat(res.pvalues))
    ci = res.conf_int(0.1)
    np.testing.assert_array_equal(t["conf_low"], ci["lower"].to_numpy())
    np.testing.assert_array_equal(t["conf_high"], ci["upper"].to_numpy())
    e = res.tidy(exponentiate=True)
    with np.errstate(over="ignore"):  # the Gaussian intercept is ~3000
        np.testing.assert_allclose(e["estimate"], np.exp(flat(res.params)), rtol=1e-15)
    np.testing.assert_array_equal(e["std_error"], flat(res.bse))
    if multi:
        assert list(t["level"].iloc[:4]) == [res.params.columns[0]] * 4
        assert list(t["term"].iloc[:4]) == list(res.params.index)


def test_tidy_bad_argument():
    with pytest.raises(ValueError, match="exponentiate must be True or False"):
        fits()["logit"].tidy(exponentiate="yes")


def roundtrip(res, remove_data=False):
    buf = io.BytesIO()
    res.save(buf, remove_data=remove_data)
    size = buf.tell()
    buf.seek(0)
    return gc.load(buf), size


@pytest.mark.parametrize("name", list(fits()))
def test_save_and_load_round_trip(name, tmp_path):
    res = fits()[name]
    path = tmp_path / "res.pkl"
    res.save(path)
    back = gc.load(str(path))
    pd.testing.assert_frame_equal(back.tidy(), res.tidy())
    assert str(back.summary()) == str(res.summary())
    pd.testing.assert_frame_equal(pd.DataFrame(back.predict()), pd.DataFrame(res.predict()))
    assert back.data_removed is False


@pytest.mark.parametrize("name", list(fits()))
def test_remove_data_keeps_the_summary_and_new_data_predictions(name):
    res = fits()[name]
    full, full_size = roundtrip(res)
    small, small_size = roundtrip(res, remove_data=True)
    assert small.data_removed and not getattr(res, "data_removed", False)
    assert small_size < full_size / 3
    assert small.model.exog.shape[0] == 0 and small.model.data.frame is None
    pd.testing.assert_frame_equal(small.tidy(), res.tidy())
    assert str(small.summary()) == str(res.summary())
    assert getattr(small, "cov_type", None) == getattr(res, "cov_type", None)
    assert small.rows_fingerprint == res.rows_fingerprint  # compare() knows the rows
    new = res.model.data.exog[:5] if res.model.data.spec is None else \
        load("birthwt" if name != "mnlogit" else "survey").dropna().head(5)
    pd.testing.assert_frame_equal(pd.DataFrame(small.predict(new)),
                                  pd.DataFrame(res.predict(new)))
    with pytest.raises(ValueError, match="the data were removed when these results were saved"):
        small.predict()
    # the results in memory keep their rows
    assert res.model.exog.shape[0] > 0
    pd.testing.assert_frame_equal(pd.DataFrame(res.predict()), pd.DataFrame(full.predict()))


def test_remove_data_refuses_what_needs_the_rows():
    res = fits()["logit"]
    small, _ = roundtrip(res, remove_data=True)
    for call in (lambda: small.fittedvalues, lambda: small.resid_pearson,
                 lambda: small.get_margeff(), lambda: small.conf_int(method="profile"),
                 lambda: small.hat_matrix_diag, lambda: small.get_prediction()):
        with pytest.raises(ValueError, match="remove_data=True"):
            call()
    frame = small.get_prediction(load("birthwt").head(3)).summary_frame()
    pd.testing.assert_frame_equal(frame, res.get_prediction(load("birthwt").head(3))
                                  .summary_frame())
    small.wald_test_terms()  # the covariance was kept
    mn, _ = roundtrip(fits()["mnlogit"], remove_data=True)
    with pytest.raises(ValueError, match="remove_data=True"):
        mn.get_margeff()


def test_remove_data_keeps_no_formula_rows_even_with_stateful_transforms():
    """The design travels as levels and transform numbers (test_safe_io.py searches the bytes);
    predictions through it are those of the original, stateful transforms included."""
    df = load("birthwt")
    for fmt in ("safe", "pickle"):
        centered = gcf.logit("low ~ center(age) + C(race)", df).fit()
        buf = io.BytesIO()
        centered.save(buf, remove_data=True, format=fmt)
        buf.seek(0)
        small_c = gc.load(buf, trusted=fmt == "pickle")
        assert small_c.model.data.frame is None
        np.testing.assert_array_equal(small_c.predict(df.head()), centered.predict(df.head()))


def test_load_refuses_other_pickles(tmp_path):
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ValueError, match="is not a glmclass results file"):
        gc.load(path)
    with pytest.raises(ValueError, match="remove_data must be True or False"):
        fits()["logit"].save(tmp_path / "x.pkl", remove_data=1)


def test_load_warns_on_another_version(tmp_path, monkeypatch):
    path = tmp_path / "res.pkl"
    fits()["logit"].save(path)
    monkeypatch.setattr(gc.version, "__version__", "9.9")  # the one place it is defined
    with pytest.warns(gc.GlmclassWarning, match="saved by glmclass 0.1.0 and are loaded by 9.9"):
        gc.load(path)
