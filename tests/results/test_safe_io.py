"""The data-only results file (``save(path)``, ``format="safe"``) and ``gc.load``.

- every registry model, every family and link: the loaded results equal the original to the
  bit (summary, estimates, predictions on new data, intervals, Wald tests, comparisons);
- nothing from a file runs without ``trusted=True``: crafted pickles and crafted zips whose
  payload would write a marker file raise ``ValueError`` and the marker never appears;
- ``remove_data=True`` writes no training value (issue 25 item 2): the bytes of both formats
  (the zip's members decompressed) are searched for every training value of ``x``;
- anything that is not a results file is "not a glmclass results file" (item 13);
- ``gc.lrtest``/``gc.compare`` against a fit loaded without its rows (item 18).
"""

from __future__ import annotations

import io
import json
import pickle
import struct
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.models.registry import MODELS

RNG = np.random.default_rng(20261127)
N = 120


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    x = rng.uniform(1.0, 5.0, N) + rng.uniform(0, 1e-3, N)  # values with all their digits
    z = rng.normal(size=N)
    g = np.array(["lo", "mid", "hi"])[rng.integers(0, 3, N)]
    eta = -0.5 + 0.4 * (x - 3) - 0.6 * z + (g == "hi") * 0.8
    y = (rng.uniform(size=N) < 1 / (1 + np.exp(-eta))).astype(int)
    cls = np.where(z > 0.4, "c", np.where(x > 3, "b", "a"))
    return pd.DataFrame({"y": y, "x": x, "z": z, "g": g, "cls": cls,
                         "count": rng.poisson(np.exp(0.2 + 0.3 * z)),
                         "b1": (z > 0).astype(int), "b2": (x > 3).astype(int),
                         "w": rng.integers(1, 4, N).astype(float)})


DF = frame()
NEW = DF.sample(9, random_state=3).reset_index(drop=True)

#: One fit per registry model (the name is the registry's).
FITS = {
    "glm": lambda d=DF: gcf.glm("count ~ x + C(g)", d, family=gc.families.Poisson()).fit(),
    "logit": lambda d=DF: gcf.logit("y ~ standardize(x) + z + C(g)", d).fit(cov_type="HC1"),
    "probit": lambda d=DF: gcf.probit("y ~ center(x) + z", d, freq_weights=d["w"]).fit(),
    "firthlogit": lambda d=DF: gcf.firthlogit("y ~ x + z", d).fit(),
    "mnlogit": lambda d=DF: gcf.mnlogit("cls ~ x + z", d).fit(),
    "bayes_logit": lambda d=DF: gcf.bayes_logit("y ~ x + z", d).fit(),
    "bayes_glm": lambda d=DF: gcf.bayes_glm("y ~ x + z", d).fit(),
    "lda": lambda d=DF: gcf.lda("cls ~ x + z", d).fit(),
    "qda": lambda d=DF: gcf.qda("cls ~ x + z", d).fit(),
    "bernoulli_nb": lambda d=DF: gcf.bernoulli_nb("cls ~ b1 + b2", d).fit(),
    "gaussian_nb": lambda d=DF: gcf.gaussian_nb("cls ~ x + z", d).fit(),
    "least_squares": lambda d=DF: gcf.least_squares("cls ~ x + z", d).fit(),
    "fisher": lambda d=DF: gcf.fisher("y ~ x + z", d).fit(),
    "perceptron": lambda d=DF: gcf.perceptron("y ~ x + z", d, seed=1).fit(),
    "ordinal": lambda d=DF: gcf.ordinal("cls ~ x + C(g)", d, link="cloglog").fit(),
    "ordered_logit": lambda d=DF: gcf.ordered_logit("cls ~ standardize(x) + z", d).fit(
        cov_type="HC0"),
    "ordered_probit": lambda d=DF: gcf.ordered_probit("cls ~ x + z", d,
                                                      freq_weights=d["w"]).fit(),
    "mixed_glm": lambda d=DF: gcf.mixed_glm("count ~ x + (1 | g)", d,
                                            family=gc.families.Poisson()).fit(),
    "mixed_logit": lambda d=DF: gcf.mixed_logit("y ~ x + z + (1 | g)", d).fit(),
    "mixed_probit": lambda d=DF: gcf.mixed_probit("y ~ x + (1 | g)", d).fit(),
}
EXTRA = {
    "regularized": lambda: gcf.logit("y ~ x + z + C(g)", DF).fit_regularized(alpha=0.02),
    "arrays": lambda: gc.Logit(DF["y"], DF[["x", "z"]].assign(const=1.0)).fit(),
    "bs_spline": lambda: gcf.logit("y ~ bs(x, df=4) + z", DF).fit(),
}


def fit(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {**FITS, **EXTRA}[name]()


def roundtrip(res, **kwargs):
    buf = io.BytesIO()
    res.save(buf, **kwargs)
    buf.seek(0)
    return gc.load(buf, trusted=kwargs.get("format") == "pickle")


def same(a, b) -> None:
    """Equal to the bit (pandas labels and dtypes included)."""
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, check_exact=True)
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def new_data(res):
    return NEW if res.model.data.spec is not None else NEW[["x", "z"]].assign(const=1.0)


def outcome(res, name: str):
    """An attribute, or the message of the error it raises (a lasso fit has no ``bse``)."""
    try:
        return getattr(res, name)
    except (AttributeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def check_same(res, back, rows: bool) -> None:
    assert type(back) is type(res) and type(back.model) is type(res.model)
    assert str(back.summary()) == str(res.summary())
    new = new_data(res)
    same(back.predict(new), res.predict(new))
    for name in ("params", "bse", "pvalues", "llf", "aic", "bic", "nobs", "means", "priors",
                 "direction", "coef", "scalings", "log_evidence"):
        same(outcome(back, name), outcome(res, name))
    if hasattr(res, "cov_params") and not isinstance(outcome(res, "bse"), str):
        same(back.cov_params(), res.cov_params())
        same(back.conf_int(), res.conf_int())
    if hasattr(res, "get_prediction"):
        same(back.get_prediction(new).summary_frame(), res.get_prediction(new).summary_frame())
    if hasattr(res, "wald_test_terms") and res.model.data.spec is not None:
        same(back.wald_test_terms(), res.wald_test_terms())
    if hasattr(res, "wald_test") and not isinstance(outcome(res, "bse"), str):
        hyp = np.eye(np.size(res.params))[1:3]  # two coefficients = 0 (any params shape)
        got, want = back.wald_test(hyp), res.wald_test(hyp)
        assert (got.statistic, got.df, got.pvalue) == (want.statistic, want.df, want.pvalue)
    if rows:
        same(back.predict(), res.predict())


def test_every_registry_model_is_covered():
    assert {e.name for e in MODELS} == set(FITS)


@pytest.mark.parametrize("remove_data", [False, True])
@pytest.mark.parametrize("name", [*FITS, *EXTRA])
def test_round_trip_is_bit_identical(name, remove_data):
    res = fit(name)
    back = roundtrip(res, remove_data=remove_data)
    assert back.data_removed is remove_data
    check_same(res, back, rows=not remove_data)


LINKS = [gc.links.Logit(), gc.links.Probit(), gc.links.CLogLog(), gc.links.LogLog(),
         gc.links.Cauchit(), gc.links.RobustLogit(0.02)]


@pytest.mark.parametrize("link", LINKS, ids=lambda link: type(link).__name__)
def test_every_binomial_link(link):
    res = gcf.glm("y ~ x + z", DF, family=gc.families.Binomial(link=link)).fit()
    back = roundtrip(res)
    check_same(res, back, rows=True)
    assert back.model.family == res.model.family


@pytest.mark.parametrize("family", [gc.families.Gaussian(), gc.families.Poisson(),
                                    gc.families.Gaussian(link=gc.links.Log())],
                         ids=["gaussian", "poisson", "gaussian_log"])
def test_other_families(family):
    res = gcf.glm("x ~ count + z", DF, family=family).fit()
    check_same(res, roundtrip(res, remove_data=True), rows=False)


def test_compare_and_lrtest_on_loaded_fits():
    small = gcf.logit("y ~ x", DF).fit()
    big = gcf.logit("y ~ x + z + C(g)", DF).fit()
    want = gc.lrtest(small, big)
    for a, b in ((roundtrip(small), roundtrip(big)),
                 (roundtrip(small, remove_data=True), big),  # item 18
                 (small, roundtrip(big, remove_data=True)),
                 (roundtrip(small, remove_data=True), roundtrip(big, remove_data=True))):
        got = gc.lrtest(a, b)
        assert (got.statistic, got.df, got.pvalue) == (want.statistic, want.df, want.pvalue)
        same(gc.compare([a, b]), gc.compare([small, big]))
    other = roundtrip(gcf.logit("b1 ~ x + C(g)", DF).fit(), remove_data=True)
    with pytest.raises(ValueError, match="different response"):
        gc.lrtest(roundtrip(small, remove_data=True), other)


# --- what the data-only format refuses -------------------------------------------------------
class HalfLogit(gc.links.Logit):
    """A user's own link: not one the file can name."""


def test_a_user_defined_link_is_refused_with_advice(tmp_path):
    res = gcf.glm("y ~ x", DF, family=gc.families.Binomial(link=HalfLogit())).fit()
    path = tmp_path / "r.glmc"
    with pytest.raises(ValueError, match=r"HalfLogit.*format='pickle'"):
        res.save(path)
    assert not path.exists()  # nothing half-written
    res.save(path, format="pickle")
    back = gc.load(path, trusted=True)
    same(back.params, res.params)


def test_formula_with_callers_names_is_refused():
    def double(v):
        return 2 * v

    res = gcf.logit("y ~ double(x)", DF, eval_env={"double": double}).fit()
    with pytest.raises(ValueError, match=r"eval_env.*format='pickle'"):
        res.save(io.BytesIO())


def test_bad_arguments():
    res = fit("logit")
    with pytest.raises(ValueError, match="format must be 'safe'.*or 'pickle'"):
        res.save(io.BytesIO(), format="json")
    buf = io.BytesIO()
    res.save(buf)
    buf.seek(0)
    with pytest.raises(ValueError, match="trusted must be True or False"):
        gc.load(buf, trusted="yes")


# --- nothing from a file runs without trusted=True -------------------------------------------
class WritesMarker:
    """Unpickling this calls ``Path(path).write_text("ran")``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.write_text, (self.path, "ran"))


def test_a_pickle_needs_trusted(tmp_path):
    res = fit("logit")
    path = tmp_path / "r.pkl"
    res.save(path, format="pickle")
    with pytest.raises(ValueError, match="loading a pickle runs code.*trusted=True"):
        gc.load(path)
    same(gc.load(path, trusted=True).params, res.params)


@pytest.mark.parametrize("header", [True, False])
def test_a_crafted_pickle_runs_nothing(tmp_path, header):
    marker = tmp_path / "marker"
    payload = WritesMarker(Path(marker))
    obj = {"format": "glmclass-results", "layout": 1, "results": payload} if header else payload
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(obj))
    with pytest.raises(ValueError, match="trusted=True" if header else "not a glmclass results"):
        gc.load(path)
    assert not marker.exists()


def _members(res) -> dict[str, bytes]:
    buf = io.BytesIO()
    res.save(buf)
    with zipfile.ZipFile(buf) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(members: dict[str, bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    buf.seek(0)
    return buf


def _replace_class(node, old: str, new: str):
    if isinstance(node, dict):
        if node.get("t") == "obj" and node.get("c") == old:
            node["c"] = new
        for v in node.values():
            _replace_class(v, old, new)
    elif isinstance(node, list):
        for v in node:
            _replace_class(v, old, new)


@pytest.mark.parametrize("name", ["os:system", "builtins:eval", "pathlib:Path.write_text",
                                  "os.system", "glmclass.results.glm.GLMResults",
                                  "formula.namespace:FormulaEnvironment"])
def test_a_crafted_zip_naming_another_class_is_refused(name):
    members = _members(fit("logit"))
    state = json.loads(members["state.json"])
    _replace_class(state, "results.glm:GLMResults", name)
    members["state.json"] = json.dumps(state).encode()
    with pytest.raises(ValueError, match="not one of the glmclass classes"):
        gc.load(_zip(members))


def test_a_crafted_zip_with_another_model_is_refused():
    members = _members(fit("logit"))
    meta = json.loads(members["meta.json"])
    meta["model"] = "subprocess.Popen"
    members["meta.json"] = json.dumps(meta).encode()
    with pytest.raises(ValueError, match="not one of glmclass's models"):
        gc.load(_zip(members))


def test_a_crafted_zip_with_object_arrays_runs_nothing(tmp_path):
    marker = tmp_path / "marker"
    members = _members(fit("logit"))
    evil = np.empty(1, dtype=object)
    evil[0] = WritesMarker(Path(marker))
    buf = io.BytesIO()
    np.save(buf, evil, allow_pickle=True)
    members["arrays.npy"] = buf.getvalue() + members["arrays.npy"]
    with pytest.raises(ValueError, match="not a glmclass results file"):
        gc.load(_zip(members))
    assert not marker.exists()


def test_a_crafted_formula_is_not_evaluated(tmp_path):
    marker = tmp_path / "marker"
    members = _members(fit("logit"))
    text = members["state.json"].decode()
    evil = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    assert text.count('"v": ["z", "numerical"') == 1  # the factor z of the saved design
    members["state.json"] = text.replace('"v": ["z", "numerical"',
                                         f'"v": [{json.dumps(evil)}, "numerical"').encode()
    with pytest.raises(ValueError):
        back = gc.load(_zip(members))
        back.predict(NEW)
    assert not marker.exists()


# --- not a results file (item 13) -------------------------------------------------------------
def _good_bytes(format: str) -> bytes:
    buf = io.BytesIO()
    fit("logit").save(buf, format=format)
    return buf.getvalue()


@pytest.mark.parametrize("content", [
    b"", b"y,x\n1,2\n0,3\n", bytes(RNG.integers(0, 256, 4000, dtype=np.uint8)),
    pickle.dumps({"a": 1}), b"PK\x03\x04 not really a zip"])
def test_not_a_results_file(tmp_path, content):
    path = tmp_path / "f"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a glmclass results file"):
        gc.load(path)
    with pytest.raises(ValueError, match="not a glmclass results file"):
        gc.load(path, trusted=True)


@pytest.mark.parametrize("format", ["safe", "pickle"])
@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.999])
def test_a_truncated_file(tmp_path, format, keep):
    data = _good_bytes(format)
    path = tmp_path / "f"
    path.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(ValueError, match="not a glmclass results file"):
        gc.load(path, trusted=True)


# --- remove_data writes no training value (item 2) -------------------------------------------
def _file_bytes(res, format: str) -> bytes:
    buf = io.BytesIO()
    res.save(buf, remove_data=True, format=format)
    data = buf.getvalue()
    if format == "safe":
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            data += b"".join(zf.read(n) for n in zf.namelist())
    return data


def _forms(v: float) -> list[bytes]:
    """A float's bytes (both byte orders) and its text forms (repr, hex, %.15g)."""
    return [struct.pack("<d", v), struct.pack(">d", v), repr(v).encode(), v.hex().encode(),
            f"{v:.15g}".encode()]


@pytest.mark.parametrize("format", ["safe", "pickle"])
@pytest.mark.parametrize("engine", ["patsy", "formulaic"])
@pytest.mark.parametrize("terms", ["standardize(x)", "center(x)", "bs(x, df=4)", "x"])
def test_remove_data_writes_no_training_values(format, terms, engine):
    res = gcf.logit(f"y ~ {terms} + C(g) + z", DF, engine=engine).fit()
    data = _file_bytes(res, format)
    knots = set()
    if terms.startswith("bs"):  # the boundary knots are the data's range: parameters
        knots = {DF["x"].min(), DF["x"].max(), *np.quantile(DF["x"], [0.5])}
    found = [(col, v) for col in ("x", "z") for v in DF[col]
             if v not in knots and any(f in data for f in _forms(float(v)))]
    assert not found
    back = roundtrip(res, remove_data=True, format=format)
    same(back.predict(NEW), res.predict(NEW))


@pytest.mark.parametrize("name", [*FITS, "regularized", "arrays"])
def test_remove_data_writes_no_training_values_for_any_model(name):
    res = fit(name)
    for format in ("safe", "pickle"):
        data = _file_bytes(res, format)
        found = [(col, v) for col in ("x", "z") for v in DF[col]
                 if any(f in data for f in _forms(float(v)))]
        assert not found, (format, found[:3])


#: Models that fit Dask data (a mixed model needs every group's rows at once: it refuses them).
DASK = [name for name in FITS if not name.startswith("mixed_")]


@pytest.mark.parametrize("name", DASK)
def test_dask_fits_without_rows(name):
    """A fit on Dask data saves without its rows in both formats (no training value written;
    the partitions are not pickled) and predicts as the in-memory fit (1e-10)."""
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy, mem = FITS[name](dd.from_pandas(DF, npartitions=3)), FITS[name]()
        with pytest.raises(ValueError, match="Dask partitions.*remove_data=True"):
            lazy.save(io.BytesIO())
        for format in ("safe", "pickle"):
            data = _file_bytes(lazy, format)
            assert not [v for col in ("x", "z") for v in DF[col]
                        if any(f in data for f in _forms(float(v)))]
            back = roundtrip(lazy, remove_data=True, format=format)
            assert str(back.summary()) == str(lazy.summary())
            got, want = back.predict(NEW), mem.predict(NEW)
            if np.asarray(want).dtype.kind in "iuf":
                np.testing.assert_allclose(np.asarray(got, dtype=float),
                                           np.asarray(want, dtype=float), rtol=1e-10,
                                           atol=1e-300)
            else:
                same(got, want)


@pytest.mark.parametrize("labels", ["str", "object", "category"])
def test_many_text_labels_round_trip(labels):
    """More labels than the JSON holds inline: text arrays (pandas' str, object, categorical
    columns; a missing value in an unused column kept as missing)."""
    big = pd.concat([DF] * 4, ignore_index=True)
    big["cls"] = big["cls"].astype(labels)
    big["note"] = pd.Series(["n"] * len(big), dtype=labels).where(big.index % 7 > 0)
    res = gcf.mnlogit("cls ~ x + z", big).fit()
    back = roundtrip(res)
    check_same(res, back, rows=True)
    same(back.model.data.frame, res.model.data.frame)
    same(np.asarray(back.model.data.endog), np.asarray(res.model.data.endog))


@pytest.mark.parametrize("name", ["logit", "mnlogit", "lda", "bs_spline"])
def test_loaded_results_save_and_pickle_again(name):
    res = fit(name)
    for remove_data in (False, True):
        back = roundtrip(res, remove_data=remove_data)
        again = roundtrip(back, remove_data=remove_data)
        check_same(res, again, rows=not remove_data)
        check_same(res, pickle.loads(pickle.dumps(back)), rows=not remove_data)

