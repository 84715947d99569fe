"""Shared loading of ``tests/reference/hypothesis.json`` (written by
``tests/reference/r/hypothesis.R``) for the tests of linear hypotheses and of the deviance
tables of one fit: the birthwt data as the R script builds them and the fits of each case."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

import glmclass as gc

REF = Path(__file__).resolve().parents[1] / "reference"
FAMILY = {"binomial": gc.families.Binomial, "poisson": gc.families.Poisson,
          "gaussian": gc.families.Gaussian}


@cache
def reference() -> dict:
    return json.loads((REF / "hypothesis.json").read_text())


@cache
def birthwt() -> pd.DataFrame:
    df = pd.read_csv(REF / "data" / "birthwt.csv")
    df["ptd"] = (df["ptl"] > 0).astype(int)
    return df


@cache
def fit(case: str, cov_type: str = "nonrobust"):
    c = reference()["cases"][case]
    return gc.GLM.from_formula(c["formula"], birthwt(), family=FAMILY[c["family"]]()).fit(
        cov_type=cov_type, tol=1e-13)


def close(actual, expected, rtol: float = 1e-8) -> None:
    np.testing.assert_allclose(np.asarray(actual, dtype=float),
                               np.asarray(expected, dtype=float), rtol=rtol, atol=0)


def r_name(name: str) -> str:
    """glmclass's name of an R coefficient or term (race is C(race) here)."""
    name = name.replace("(Intercept)", "Intercept")
    for lv in ("other", "white"):
        name = name.replace(f"race{lv}", f"C(race)[T.{lv}]")
    return "C(race)" if name == "race" else name.replace("race:", "C(race):")
