"""``fit(keep_iterates=True)``: each IRLS iterate against PRML's update written in numpy,
w_new = (X'RX)^-1 X'R z, z = X w_old - R^-1 (y - t) (eq. 4.99-4.100), from R's starting
means mu_0 = (t + 1/2) / 2."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

import glmclass as gc

REF = Path(__file__).resolve().parents[1] / "reference"
SPECTOR = pd.read_csv(REF / "data" / "spector.csv")
FORMULA = "GRADE ~ GPA + TUCE + PSI"


def numpy_irls(eta, n):
    X = np.column_stack([np.ones(len(SPECTOR)), SPECTOR[["GPA", "TUCE", "PSI"]].to_numpy()])
    t = SPECTOR["GRADE"].to_numpy(float)
    out = []
    for _ in range(n):
        y = special.expit(eta)
        R = y * (1 - y)
        z = eta - (y - t) / R                                     # eq. 4.100
        w = np.linalg.solve(X.T @ (X * R[:, None]), X.T @ (R * z))  # eq. 4.99
        out.append((w, z, R))
        eta = X @ w
    return out


def test_iterates_are_prml_irls_steps():
    res = gc.Logit.from_formula(FORMULA, SPECTOR).fit(keep_iterates=True)
    it = res.iterates
    n = res.n_iter
    assert it.coefficients.shape == (n, 4)
    t = SPECTOR["GRADE"].to_numpy(float)
    ref = numpy_irls(special.logit((t + 0.5) / 2), n)  # R's mustart for 0/1 data
    for k, (w, z, R) in enumerate(ref, start=1):
        assert np.max(np.abs(it.coefficients.loc[k].to_numpy() - w)) < 1e-9
        assert np.max(np.abs(it.z[k].to_numpy() - z) / np.abs(z)) < 1e-12
        assert np.max(np.abs(it.R[k].to_numpy() - R) / R) < 1e-10
    assert np.max(np.abs(it.coefficients.iloc[-1] - res.params)) == 0.0
    np.testing.assert_allclose(it.deviance.to_numpy(), res.history.to_numpy(), rtol=1e-14)
    assert list(it.coefficients.columns) == list(res.params.index)


def test_iterates_from_given_start_and_not_kept_by_default():
    start = np.array([-5.0, 1.0, 0.05, 2.0])
    res = gc.Logit.from_formula(FORMULA, SPECTOR).fit(start_params=start, keep_iterates=True)
    X = np.column_stack([np.ones(len(SPECTOR)), SPECTOR[["GPA", "TUCE", "PSI"]].to_numpy()])
    ref = numpy_irls(X @ start, res.n_iter)
    for k, (w, _, _) in enumerate(ref, start=1):
        assert np.max(np.abs(res.iterates.coefficients.loc[k].to_numpy() - w)) < 1e-9
    assert gc.Logit.from_formula(FORMULA, SPECTOR).fit().iterates is None


def test_iterates_refused_for_gradient_fits():
    with pytest.raises(ValueError, match="keep_iterates=True keeps IRLS"):
        gc.Logit.from_formula(FORMULA, SPECTOR).fit(method="gd", max_epochs=2,
                                                    keep_iterates=True)
