"""Shared loading of ``tests/reference/inference.json`` (written by
``tests/reference/r/inference.R``) for the inference tests: the datasets with the derived
cluster columns, and the GLM / MNLogit models of each case."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

import glmclass as gc

REF = Path(__file__).resolve().parents[1] / "reference"
FAMILY = {"binomial": gc.families.Binomial, "gaussian": gc.families.Gaussian,
          "poisson": gc.families.Poisson}
LINK = {"logit": gc.links.Logit, "probit": gc.links.Probit, "cloglog": gc.links.CLogLog,
        "log": gc.links.Log, "identity": gc.links.Identity}


@cache
def reference() -> dict:
    return json.loads((REF / "inference.json").read_text())


def load(dataset: str, complete: tuple[str, ...] | list[str] | None = None) -> pd.DataFrame:
    """A reference CSV with the derived columns of the JSON's meta (grp, grp2); ``complete``
    drops the rows with a missing value in those columns (as the R script does)."""
    df = pd.read_csv(REF / "data" / f"{dataset}.csv", keep_default_na=False, na_values=[""])
    rows = np.arange(len(df))
    df["grp"] = rows % 15
    df["grp2"] = rows // 19
    if complete:
        df = df.dropna(subset=list(complete))
    return df


def rel(actual, expected) -> float:
    """Largest absolute difference relative to the largest reference entry."""
    a, b = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def rel_each(actual, expected) -> float:
    """Largest elementwise relative difference (absolute where the reference is 0, e.g. a
    p-value below 1e-308)."""
    a, b = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b) / np.where(b == 0, 1.0, np.abs(b))))


def glm_case(name: str) -> dict:
    return next(c for c in reference()["robust"] if c["name"] == name)


def glm_model(case: dict) -> gc.GLM:
    """The GLM of a ``robust`` case, built from its patsy formula."""
    df = load(case["dataset"])
    kw = {"family": FAMILY[case["family"]](link=LINK[case["link"]]())}
    if case.get("offset"):
        kw["offset"] = np.log(df["Holders"].to_numpy(float))
    for key in ("freq_weights", "var_weights"):
        if case.get(key):
            kw[key] = df[case[key]].to_numpy(float)
    return gc.GLM.from_formula(case["patsy_formula"], df, **kw)


def cluster_kwds(case: dict, key: str) -> tuple[str, dict | None]:
    """``cov_type`` and ``cov_kwds`` for a key of a case's covariance set."""
    if not key.startswith("cluster"):
        return key, None
    kwds = {"groups": case["cluster2"] if key.startswith("cluster2") else case["cluster"]}
    if key.endswith("_fix"):
        kwds["fix"] = True
    if key.endswith("_nocorrection"):
        kwds["use_correction"] = False
    return "cluster", kwds


def mnlogit_names(case: dict) -> pd.MultiIndex:
    """(level, term) labels of the R case's level-major parameter vector."""
    return pd.MultiIndex.from_product([case["levels"][1:], case["coef_names"]])
