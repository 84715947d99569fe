"""The solver front door (issue 24, point 3): every method through
:func:`glmclass.solvers.solve.solve` gives the estimates the models report (bit for bit for
IRLS), the one :class:`Control` and the one :class:`Fit` are frozen, and ``Control`` refuses
what no solver runs, naming the setting."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import glmclass as gc
from glmclass import families as F
from glmclass.likelihoods.multinomial import MultinomialLikelihood
from glmclass.models import regularized as REG
from glmclass.rows.blocks import ArrayBlocks
from glmclass.solvers import gradient as GD
from glmclass.solvers.control import METHODS, Control
from glmclass.solvers.firth import firth_logit
from glmclass.solvers.fit import Fit
from glmclass.solvers.irls import irls
from glmclass.solvers.newton import multinomial_deviance, newton
from glmclass.solvers.solve import solve

RNG = np.random.default_rng(24)
N, P = 400, 4
X = np.column_stack([np.ones(N), RNG.standard_normal((N, P - 1))])
BETA = np.array([-0.3, 0.8, -0.5, 0.25])
Y = (RNG.random(N) < 1.0 / (1.0 + np.exp(-X @ BETA))).astype(float)
ETA3 = X @ np.column_stack([np.zeros(P), BETA, -BETA[::-1]])
PR3 = np.exp(ETA3) / np.exp(ETA3).sum(axis=1, keepdims=True)
Y3 = (RNG.random((N, 1)) > np.cumsum(PR3, axis=1)).sum(axis=1)


# --- every method gives the model's estimates ------------------------------------------------
@pytest.mark.parametrize("family", [F.Binomial(), F.Binomial(link=gc.links.Probit()),
                                    F.Poisson()], ids=["logit", "probit", "poisson"])
def test_irls_through_solve_is_bit_identical_to_the_model_and_to_irls(family):
    y = RNG.poisson(np.exp(0.2 * X[:, 1])).astype(float) if family.name == "Poisson" else Y
    model = gc.GLM(y, X, family=family)
    res = model.fit(information="expected")
    rows = model.problem.fit_rows()
    control = Control(information="expected")
    fit = solve(family, rows, control, intercept=0)
    assert isinstance(fit, Fit)
    np.testing.assert_array_equal(fit.coef, res.params.to_numpy())
    by_name = irls(rows, family, None, control, None, 0)
    np.testing.assert_array_equal(fit.coef, by_name.coef)
    np.testing.assert_array_equal(fit.gram, by_name.gram)
    assert fit.deviance == by_name.deviance == res.deviance
    assert fit.n_iter == by_name.n_iter == res.n_iter


def test_irls_accepts_a_glm_likelihood():
    from glmclass.likelihoods.glm import GLMLikelihood

    rows = ArrayBlocks(X, Y)
    a = solve(GLMLikelihood(F.Binomial()), rows, Control(), intercept=0)
    b = solve(F.Binomial(), rows, Control(), intercept=0)
    np.testing.assert_array_equal(a.coef, b.coef)


def test_newton_through_solve_gives_the_mnlogit_estimates():
    res = gc.MNLogit(Y3, X).fit()
    rows = ArrayBlocks(X, Y3)
    control = Control(method="newton")
    fit = solve(MultinomialLikelihood(3), rows, control, start=np.zeros(2 * P))
    np.testing.assert_allclose(fit.coef.reshape(2, P).T, res.params.to_numpy(),
                               rtol=1e-8, atol=1e-10)
    objective = multinomial_deviance(rows, 3)
    again = solve(objective, None, control, start=np.zeros(2 * P))
    by_name = newton(objective, np.zeros(2 * P), control)
    np.testing.assert_array_equal(again.coef, by_name.coef)
    assert again.objective == by_name.objective == pytest.approx(res.deviance, rel=1e-12)


def test_firth_through_solve_gives_the_model_estimates_in_memory_and_over_rows():
    res = gc.FirthLogit(Y, X).fit()
    w, off = np.ones(N), np.zeros(N)
    control = Control.for_method("firth")
    mem = solve(None, (X, Y, w, off), control, intercept=0)
    # the model fits a copy of the kept columns: the same iterates to the last bits
    np.testing.assert_allclose(mem.coef, res.params.to_numpy(), rtol=1e-13, atol=0)
    np.testing.assert_array_equal(mem.coef, firth_logit(X, Y, w, off, None, control,
                                                        intercept=0).coef)
    assert mem.hat is not None and mem.hat.sum() == pytest.approx(P, rel=1e-10)
    over_rows = solve(None, ArrayBlocks(X, Y), control, intercept=0)
    np.testing.assert_allclose(over_rows.coef, mem.coef, rtol=1e-9)
    assert over_rows.hat is None


@pytest.mark.parametrize("method", ["gd", "sgd", "minibatch"])
def test_gradient_methods_through_solve_are_the_optimiser_called_by_name(method):
    rows = ArrayBlocks(X, Y)
    control = GD.gradient_control(method, N, seed=3, max_epochs=30)
    assert control.method == method
    fam = F.Binomial()
    smooth = (0.25 * np.linalg.eigvalsh(X.T @ X / N)[-1], 0.25 * np.max(np.sum(X * X, 1)))
    fit = solve(fam, rows, control, start=np.zeros(P), smoothness=smooth)
    by_name = GD.minimise(GD.glm_loss(fam), rows, np.zeros(P), control, smooth)
    np.testing.assert_array_equal(fit.coef, by_name.coef)
    assert fit.n_iter == by_name.n_iter and fit.grad_norms == by_name.grad_norms


def test_a_gradient_method_through_the_model_reaches_the_irls_estimates():
    irls_fit = gc.Logit(Y, X).fit()
    gd_fit = gc.Logit(Y, X).fit(method="minibatch", seed=0, gtol=1e-10, max_epochs=3000)
    assert gd_fit.converged
    np.testing.assert_allclose(gd_fit.params, irls_fit.params, rtol=1e-8)
    assert len(gd_fit.gradient_norms) == gd_fit.n_iter


def test_coordinate_descent_through_solve_gives_fit_regularized():
    model = gc.Logit(Y, X)
    res = model.fit_regularized(alpha=0.01, L1_wt=0.5)
    rows = REG.glm_rows(model, None, False)
    pf = REG.penalty_factors(None, model.exog_names, 0)
    l1u, l2u = rows.unit_weights(pf, 0.5)
    control = Control.for_method("cd")
    fit = solve(rows.oracle, None, control, start=rows.start, l1=0.01 * l1u, l2=0.01 * l2u,
                active=np.arange(rows.start.size))
    np.testing.assert_array_equal(rows.to_original(fit.coef), res.params.to_numpy())
    # the active-set solve (solvers/active_set.py) can finish an outer step without a sweep
    assert fit.n_iter >= 1 and fit.n_sweeps >= 0 and fit.loss is not None


@pytest.mark.parametrize("pocket", [False, True])
def test_perceptron_through_solve_gives_the_model_weights(pocket):
    model = gc.Perceptron(Y, X, shuffle=True, seed=5, max_epochs=40, pocket=pocket)
    res = _quiet(model.fit)  # 40 epochs do not separate these data
    control = Control.for_method("perceptron", learning_rate=1.0, max_epochs=40,
                                 seed=np.random.default_rng(5), pocket=pocket)
    fit = solve(1, model.row_source(), control)
    np.testing.assert_array_equal(fit.coef, res.params.to_numpy())
    assert fit.n_iter == len(fit.history) == len(fit.updates)


def _quiet(f):
    with pytest.warns(gc.ConvergenceWarning):
        return f()


def test_least_squares_through_solve_gives_the_classifier_coefficients():
    model = gc.LeastSquaresClassifier(Y3, X)
    res = model.fit()
    fit = solve(3, model.row_source(), Control(method="least_squares"))
    np.testing.assert_array_equal(fit.coef, res.params.to_numpy())
    assert fit.rank == P and not fit.aliased.any()
    # and those are the least-squares coefficients of the 1-of-K targets
    T = np.eye(3)[Y3]
    np.testing.assert_allclose(fit.coef, np.linalg.lstsq(X, T, rcond=None)[0], rtol=1e-10)


def test_solve_names_what_a_method_is_missing_or_cannot_solve():
    with pytest.raises(ValueError, match="start="):
        solve(MultinomialLikelihood(3), ArrayBlocks(X, Y3), Control(method="newton"))
    with pytest.raises(ValueError, match="smoothness="):
        solve(F.Binomial(), ArrayBlocks(X, Y), Control(method="gd"), start=np.zeros(P))
    with pytest.raises(TypeError, match="family"):
        solve("binomial", ArrayBlocks(X, Y), Control())


# --- the records -----------------------------------------------------------------------------
def test_fit_and_control_are_frozen():
    fit = solve(F.Binomial(), ArrayBlocks(X, Y), Control(), intercept=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.coef = np.zeros(P)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.converged = False
    control = Control()
    with pytest.raises(dataclasses.FrozenInstanceError):
        control.maxiter = 3
    assert control.replace(maxiter=3).maxiter == 3 and control.maxiter == 50


def test_control_refuses_an_unknown_method_and_bad_settings_naming_them():
    with pytest.raises(ValueError, match="method must be .*'bfgs'"):
        Control(method="bfgs")
    with pytest.raises(ValueError, match="method must be .*'bfgs'"):
        Control.for_method("bfgs")
    with pytest.raises(ValueError, match=r"maxiter must be a positive integer.*-1"):
        Control(maxiter=-1)
    with pytest.raises(ValueError, match=r"maxiter must be a positive integer.*2\.5"):
        Control(method="newton", maxiter=2.5)
    with pytest.raises(ValueError, match=r"tol must be a positive, finite number.*nan"):
        Control(tol=float("nan"))
    with pytest.raises(ValueError, match="maxhalf must be a non-negative integer"):
        Control(maxhalf=-2)
    with pytest.raises(ValueError, match="direction must be .*'fast'"):
        Control(direction="fast")
    with pytest.raises(ValueError, match="maxiter"):
        Control().replace(maxiter=0)
    with pytest.raises(TypeError, match="'learningrate' is not a solver setting"):
        Control.for_method("sgd", learningrate=0.1)
    with pytest.raises(TypeError):
        Control(50)  # every setting by keyword


def test_each_method_keeps_its_own_defaults():
    assert set(METHODS) == {"irls", "newton", "firth", "gd", "sgd", "minibatch", "cd",
                            "perceptron", "least_squares"}
    irls_c, newton_c = Control(), Control.for_method("newton")
    assert (irls_c.maxiter, irls_c.tol, irls_c.maxhalf) == (50, 1e-10, 25)
    assert (newton_c.maxiter, newton_c.tol, newton_c.direction) == (50, 1e-10, "auto")
    assert irls_c.hessian == irls_c.information == "expected"
    assert Control.for_method("firth").maxiter == 100
    assert Control.for_method("firth", maxiter=7).maxiter == 7
    cd = Control.for_method("cd")
    assert (cd.maxiter, cd.tol, cd.max_sweeps) == (100, 1e-10, 100_000)
    assert Control.for_method("gd").max_epochs == 5000
    assert Control.for_method("sgd").max_epochs == Control.for_method("minibatch").max_epochs \
        == 500
    assert GD.gradient_control("minibatch", 100).batch_size == 32
    m = Control(maxiter=np.int64(7))
    assert m.maxiter == 7 and type(m.maxiter) is int
