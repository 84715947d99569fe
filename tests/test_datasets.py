"""glmclass.datasets: the bundled CSVs equal their sources and load without other libraries."""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.datasets

REF = Path(__file__).resolve().parent / "reference" / "data"


def test_list_names_every_bundled_file():
    assert gc.datasets.list() == ["birthwt", "breast_cancer", "cbpp", "crabs", "endometrial",
                                  "housing", "iris", "menarche", "spector"]
    for name in gc.datasets.list():
        text = gc.datasets.describe(name)
        assert text.startswith(name + ":") and "Source:" in text and "Terms:" in text


@pytest.mark.parametrize("name", ["spector", "birthwt", "iris", "menarche", "crabs", "housing",
                                  "endometrial", "cbpp"])
def test_equal_to_the_r_reference_data(name):
    got = gc.datasets.load(name)
    ref = pd.read_csv(REF / f"{name}.csv", keep_default_na=False, na_values=[""])
    assert list(got.columns) == list(ref.columns) and got.shape == ref.shape
    for c in ref.columns:
        if ref[c].dtype.kind in "biuf":
            np.testing.assert_array_equal(got[c].to_numpy(float), ref[c].to_numpy(float))
        else:
            assert got[c].tolist() == ref[c].tolist()


def test_whole_number_columns_are_integers():
    df = gc.datasets.load("spector")
    assert [str(t) for t in df.dtypes] == ["float64", "int64", "int64", "int64"]


def test_breast_cancer_equals_scikit_learn():
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    bc = sklearn_datasets.load_breast_cancer(as_frame=True)
    got = gc.datasets.load("breast_cancer")
    assert got.shape == (569, 31) and got.columns[0] == "diagnosis"
    assert list(got.columns[1:]) == [c.replace(" ", "_") for c in bc.data.columns]
    np.testing.assert_array_equal(got.iloc[:, 1:].to_numpy(), bc.data.to_numpy())
    labels = np.asarray(bc.target_names)[bc.target.to_numpy()]
    assert got["diagnosis"].tolist() == labels.tolist()
    assert got["diagnosis"].value_counts().to_dict() == {"benign": 357, "malignant": 212}


def test_each_load_is_a_new_frame():
    a = gc.datasets.load("spector")
    a.loc[0, "GPA"] = -1.0
    assert gc.datasets.load("spector").loc[0, "GPA"] == 2.66


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="no dataset named 'spectre'.*spector"):
        gc.datasets.load("spectre")
    with pytest.raises(ValueError, match="no dataset named"):
        gc.datasets.describe(None)


def test_module_examples_run():
    result = doctest.testmod(glmclass.datasets)
    assert result.attempted >= 3 and result.failed == 0


def test_loads_without_statsmodels_or_sklearn(monkeypatch):
    for name in ("statsmodels", "sklearn"):
        monkeypatch.setitem(sys.modules, name, None)  # importing either would fail
    assert sum(len(gc.datasets.load(n)) for n in gc.datasets.list()) == (
        32 + 189 + 150 + 25 + 569 + 200 + 72 + 79 + 56)


def test_models_fit_on_the_bundled_data():
    df = gc.datasets.load("menarche")
    res = gc.GLM.from_formula("I(Menarche / Total) ~ Age", df, var_weights=df["Total"]).fit()
    # R: glm(Menarche/Total ~ Age, binomial, weights = Total), tests/reference/glm.json
    assert res.params["Age"] == pytest.approx(1.6319683482275738, rel=1e-8)
    assert res.params["Intercept"] == pytest.approx(-21.226394905167353, rel=1e-8)
