"""BayesLogit's warning on a shared optimised prior over columns of very different scales
(issue 26) reads the column scales through the row source: on Dask partitions it is the
in-memory warning."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import dask.dataframe as dd

import glmclass as gc

REF = Path(__file__).resolve().parents[1] / "reference"
PIMA = json.loads((REF / "pima_scales.json").read_text())


def _fit_warnings(data) -> tuple[list[str], gc.results.bayes.BayesGLMResults]:
    model = gc.BayesLogit.from_formula(PIMA["formula"], data, prior_scale_intercept="flat")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = model.fit(optimize_prior=True)
    return [str(w.message) for w in rec if "differ in scale" in str(w.message)], res


def test_scale_warning_and_fit_on_dask_equal_in_memory():
    import pandas as pd

    frame = pd.read_csv(REF / "data" / "pima.csv")
    mem_msg, mem = _fit_warnings(frame)
    lazy_msg, lazy = _fit_warnings(dd.from_pandas(frame, npartitions=3))
    assert len(mem_msg) == 1 and lazy_msg == mem_msg
    assert lazy.params["ped"] < 0.05 * PIMA["coef"]["ped"]  # the shrinkage it warns of
