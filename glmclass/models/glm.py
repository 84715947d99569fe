"""GLM, Logit and Probit: maximum likelihood by IRLS on a :class:`GLMProblem`.

The three models share one fit (:class:`MLEGLM`); they differ only in whether the family is an
argument (GLM) or fixed (Logit, Probit). None of them is a subclass of another.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.2-4.3.6.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*, §4.4.
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed.
"""

from __future__ import annotations

import numpy as np

from .. import families as F
from .. import links as L
from ..data.model_data import ModelData
from ..errors import PerfectSeparationError, SeparationWarning, warn_user
from ..numerics import separation as S
from ..progress import IterationLog
from ..results.glm import GLMResults
from ..results.iterates import IRLSIterates
from ..results.regularized import RegularizationPath, RegularizedResults
from ..results.robust import cov_spec
from ..solvers import gradient as GD
from ..solvers.control import Control
from . import gradient_fit as GF
from . import regularization_path as PATH
from . import regularized as REG
from .base import check_option, check_start, fit_control
from .glm_base import GLMBase
from .iterates import irls_iterates


class MLEGLM(GLMBase):
    """Maximum-likelihood fit of a GLM (the shared ``fit`` of GLM, Logit and Probit)."""

    def fit(self, method: str = "irls", information: str = "observed", maxiter: int = 50,
            tol: float = 1e-10, start_params=None, on_separation: str = "warn",
            cov_type: str = "nonrobust", cov_kwds: dict | None = None, disp: bool = False,
            *, learning_rate: float | None = None, schedule: str = "constant",
            batch_size: int | None = None, max_epochs: int | None = None, gtol: float = 1e-6,
            seed=None, variance_reduction: bool = True, shuffle: bool = True,
            history: str = "epoch", keep_iterates: bool = False) -> GLMResults:
        """Maximum-likelihood fit: IRLS by default, or the chapter's gradient loops.

        With ``method="gd" | "sgd" | "minibatch"`` the fit starts from the intercept-only fit
        (zero slopes, the intercept at the link of the mean response) unless ``start_params``
        is given, and ``results.history`` is the deviance after each epoch (or each step with
        ``history="step"``): the deviance is 2N times the notes' mean cross-entropy
        ``-(1/N) sum [t ln y + (1 - t) ln(1 - y)]`` (with weights, 2 sum_n w_n times the
        weighted mean). ``variance_reduction=False`` gives the notes' plain SGD, said so in
        the summary.

        Parameters
        ----------
        method : {"irls", "newton", "gd", "sgd", "minibatch"}
            Fisher scoring (IRLS) or Newton's method with the exact Hessian (identical for a
            canonical link); or batch, stochastic or mini-batch gradient descent
            (:mod:`glmclass.solvers.gradient`), whose ``history`` is the deviance per epoch.
        information : {"observed", "expected"}
            Covariance from the negative Hessian of the log-likelihood, or from the Fisher
            information (R's ``glm`` convention).
        maxiter : int
        tol : float
            Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol``.
        start_params : array-like of shape (p,) or dict, optional
            Starting coefficients, in column order or by column name.
        on_separation : {"warn", "raise", "ignore"}
            Binomial family only: what to do when the classes are (quasi-)completely separated,
            so that some estimates are infinite. ``"warn"`` issues one
            :class:`~glmclass.SeparationWarning` naming those columns, ``"raise"`` raises
            :class:`~glmclass.PerfectSeparationError`, ``"ignore"`` skips the check
            (``results.separation`` is then None).
        learning_rate, schedule, batch_size, max_epochs, gtol, seed, variance_reduction
            Gradient methods only (keyword-only): the step on the mean loss (default: line
            search for "gd", 1/(4L) for the stochastic methods; a callable ``k -> eta_k`` of
            the update count k = 0, 1, ... is a schedule of its own), its decay per epoch
            ("constant", "inverse_sqrt", "inverse"), rows per step for "minibatch" (default
            32), the epoch limit, the tolerance on the largest entry of the mean gradient, the
            seed of the row order, and the SVRG correction of the stochastic steps (False:
            plain SGD). ``maxiter`` and ``tol`` apply to IRLS and Newton only. Standard errors
            come from the Hessian at the point reached.
        shuffle : bool, default True
            Stochastic methods: a fresh random row order each epoch, or (False) the rows in
            their order, as the notes' loops and the perceptron.
        history : {"epoch", "step"}
            Stochastic methods: record the deviance after each epoch, or after each step (one
            full pass over the rows per step: for small teaching data).
        keep_iterates : bool
            IRLS and Newton on rows in memory: keep each iteration's coefficients, working
            response z and weights R as ``results.iterates`` (PRML eq. 4.99-4.100), replayed
            from the same start (n(n + 1)/2 iterations for n).
        cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}
            Covariance of the estimates behind ``bse``, ``pvalues``, ``conf_int``, Wald tests,
            predictions and marginal effects: the inverse ``information`` (times the
            dispersion), or a sandwich with that bread and R ``sandwich``'s meat (HC2/HC3 with
            the leverages of the weighted IRLS design; ``"cluster"`` as ``vcovCL(type="HC1")``).
            R's ``sandwich`` uses the expected information: for non-canonical links pass
            ``information="expected"`` to reproduce it.
        cov_kwds : dict, optional
            ``"cluster"`` only: ``groups`` (one label per row, or the name of a column of the
            formula's DataFrame; two columns or names for two-way clustering; rows dropped for
            missing values are dropped from the groups too), ``use_correction=True``,
            ``fix=False`` (see :func:`glmclass.numerics.covariance.covariance`).
        disp : bool
            Print one line per iteration: deviance, its relative change, the largest
            coefficient change, step halvings and the elapsed time
            (:class:`~glmclass.progress.IterationLog`).

        Returns
        -------
        GLMResults
            With a ``separation`` attribute: the :class:`~glmclass.numerics.separation.Separation`
            record of Konis' linear-programming test (None for other families or ``"ignore"``).

        Notes
        -----
        The exact test is one linear program. It is run on every binomial fit of a small design
        (``n_obs * p <= 1e4``, a few milliseconds) and, on larger ones, when the fit shows the
        signs separation leaves: no convergence, or a column whose estimate (more than 100) or
        standard error (more than 30) is huge on the column's own scale ``max |x_j|`` — along a
        separating direction the information vanishes. A fit that converged to an interior
        maximum with moderate standard errors has a finite MLE. Designs over 5e6 cells, where
        the LP needs many times the memory of X, get the symptom check only: the record's kind
        is then ``"apparent"``.
        """
        check_option("method", method, ("irls", "newton") + GD.METHODS)
        grad = GF.options(method, learning_rate=learning_rate, schedule=schedule,
                          batch_size=batch_size, max_epochs=max_epochs, gtol=gtol, seed=seed,
                          variance_reduction=variance_reduction, shuffle=shuffle,
                          history=history)
        check_option("information", information, ("observed", "expected"))
        check_option("on_separation", on_separation, ("warn", "raise", "ignore"))
        start = check_start(start_params, self.exog_names)
        control = fit_control(maxiter, tol, hessian="observed" if method == "newton" else
                              "expected", information=information,
                              progress=IterationLog("deviance",
                                                    preamble=self.data.build_report())
                              if disp else None)
        cov = cov_spec(self.data, cov_type, cov_kwds)
        if method in GD.METHODS:
            fit = GF.glm_fit(self.problem, method, start, grad)
            null = self.problem.null_fit(control, lazy=True)  # its deviance when first asked
        else:  # on rows not in memory the null model's numbers come from the fit's passes
            fit, null = self.problem.fit_with_null(control, start)
        results = GLMResults(self, fit, null, method, information, cov)
        sep = self._separation(results) if on_separation != "ignore" else None
        if sep is not None and sep.separated and on_separation == "raise":
            raise PerfectSeparationError(sep.message())
        results = results.replaced(separation=sep)
        if keep_iterates:
            results = results.replaced(iterates=self._iterates(method, control, start, fit))
        self._warn_aliased(fit.aliased)
        if sep is not None and sep.separated:
            # one warning: separation explains the divergence, so no ConvergenceWarning as well
            extra = "" if fit.converged else f" IRLS stopped without converging ({fit.message})."
            warn_user(sep.message() + extra, SeparationWarning)
        else:
            if method in GD.METHODS:
                self._warn_convergence(fit, GF.LABELS[method], GF.HINT)
            else:
                self._warn_convergence(fit)
        if cov.robust:
            results.bse  # noqa: B018 - a sandwich the data cannot give fails here, not later
        return results

    def _iterates(self, method: str, control: Control, start, fit) -> IRLSIterates:
        """``keep_iterates=True``: the IRLS iterates (:mod:`glmclass.models.iterates`)."""
        if method in GD.METHODS:
            raise ValueError("keep_iterates=True keeps IRLS (or Newton) iterates; a gradient "
                             "fit records its deviance in results.history instead")
        if not self.data.in_memory:
            raise ValueError("keep_iterates=True needs the rows in memory (the iterates hold "
                             "z and R for every row); compute the Dask data first")
        return irls_iterates(self.problem, control, start, fit.n_iter)

    def _separation(self, results: GLMResults) -> S.Separation | None:
        """The exact LP test on the non-aliased columns, when cheap or when the fit looks
        separated (:data:`glmclass.numerics.separation.BINARY`)."""
        fam = self.family
        # the LP characterises infinite estimates only for links whose means stay in (0, 1);
        # log-binomial estimates can stay finite under separation (Silvapulle 1981)
        if not isinstance(fam, F.Binomial) or not fam.link_stays_inside:
            return None
        fit = results.solver_fit
        keep = ~fit.aliased
        names = tuple(self.exog_names)
        scale = self.problem.column_scale(keep)
        explode = S.exploding(fit.coef if results.rank == keep.size else fit.coef[keep],
                              results.raw_bse(), scale)
        directions = np.zeros(keep.size, dtype=int)
        cells = self.data.nrows * results.rank
        symptoms = bool(explode.any())
        if (not symptoms and self.data.in_memory and results.converged
                and cells <= S.BINARY.probability_cells):
            pos = self.problem.positive_rows
            mu = fam.link.inverse(results.eta if pos is None else results.eta[pos])
            symptoms = S.BINARY.extreme(cells, mu)
        decision = S.BINARY.decide(cells, results.converged, symptoms)
        why = ""
        if decision == "lp" and not self.data.supports_exact_lp:
            decision, why = "apparent", S.DASK_WHY  # the LP needs X in memory
        if decision == "none":
            return S.Separation(False, "none", (), directions, names)
        if decision == "apparent":
            coef = results.solver_fit.coef[keep]
            directions[keep] = np.where(explode, np.sign(np.nan_to_num(coef)), 0)
            columns = tuple(int(j) for j in np.flatnonzero(directions))
            return S.Separation(bool(columns), "apparent" if columns else "none", columns,
                                directions, names, why=why)
        X = self.exog if keep.all() else self.exog[:, keep]  # no copy of X when nothing aliased
        found = S.detect_separation(X, self.endog, self.prior_weights)
        directions[keep] = found.directions
        columns = tuple(int(j) for j in np.flatnonzero(directions))
        return S.Separation(found.separated, found.kind, columns, directions, names)

    # --- penalised fits (glmclass.models.regularized) -----------------------------------------
    def fit_regularized(self, alpha, L1_wt: float = 1.0, *, penalty_factor=None,
                        standardize: bool = False, maxiter: int = 100, tol: float = 1e-10,
                        start_params=None) -> RegularizedResults:
        """Lasso, ridge or elastic-net fit (glmnet's objective).

        Minimises ``deviance / (2 n) + alpha * ((1 - L1_wt) / 2 * ||v b||^2 + L1_wt *
        ||v b||_1)`` over the coefficients b on the design as given, with n the sum of the
        prior weights (for a binomial model ``deviance / (2 n) = -llf / n`` + constant), the
        intercept not penalised and v the penalty factors: R ``glmnet(x, y, family=
        "binomial", alpha=L1_wt, lambda=alpha, standardize=FALSE)``.

        Coming from statsmodels: its ``fit_regularized(method="l1", alpha=a)`` minimises
        ``-llf + a ||b||_1`` (the summed log-likelihood) and penalises the intercept, so the
        same number gives other estimates here; ``alpha_glmclass = alpha_statsmodels / n``
        (with the intercept unpenalised). ``method=``, ``refit=`` and ``trim_mode=`` are
        answered with the glmclass equivalent (exact zeros need no trimming).

        Parameters
        ----------
        alpha : float
            Penalty weight, >= 0 (glmnet's ``lambda``).
        L1_wt : float
            Lasso share of the penalty in [0, 1]: 1 the lasso (exact zeros), 0 ridge, between
            them the elastic net (glmnet's ``alpha``).
        penalty_factor : scalar, sequence or dict by column name, optional
            Relative penalty per column (0: unpenalised), rescaled to sum to the number of
            columns besides the intercept, as glmnet's ``penalty.factor``; the intercept is
            never penalised.
        standardize : bool
            Penalise ``s_j b_j``, s_j the column's weighted standard deviation (glmnet's
            ``standardize=TRUE``); coefficients are reported on the original scale either way.
        maxiter : int
            Most proximal Newton steps.
        tol : float
            Convergence when every coefficient's optimality (KKT) condition holds to ``tol``
            on the scale of the data: the residual of ``gradient + penalty subgradient = 0``
            divided by the square root of the coefficient's curvature.
        start_params : array-like or dict, optional
            Starting coefficients (a warm start).

        Returns
        -------
        RegularizedResults
            No ``bse``, ``pvalues`` or ``conf_int``: they raise ValueError (classical
            inference does not apply to penalised estimates).

        References
        ----------
        Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical
        Learning*, §4.4.4.
        """
        return REG.fit_regularized(self, alpha, L1_wt, penalty_factor, standardize, maxiter,
                                   tol, start_params, RegularizedResults)

    def regularization_path(self, n_alphas: int = 100, L1_wt: float = 1.0,
                            alpha_min_ratio: float | None = None, cv=None, seed=None,
                            standardize: bool = False, *, alphas=None, penalty_factor=None,
                            stratify: bool = True, maxiter: int = 100,
                            tol: float = 1e-10, disp: bool = False) -> RegularizationPath:
        """Penalised fits on a log-spaced sequence of alphas, optionally cross-validated.

        Parameters
        ----------
        n_alphas : int
            Number of alphas, from ``alpha_max`` (all penalised coefficients 0) down to
            ``alpha_min_ratio * alpha_max``.
        L1_wt : float
            As :meth:`fit_regularized`.
        alpha_min_ratio : float, optional
            Default 1e-4 when there are more observations than columns, else 1e-2 (glmnet).
        cv : int or array-like, optional
            Number of folds of a cross-validation of the deviance, or one fold label per row.
        seed : int or numpy Generator, optional
            Seed of the random fold assignment.
        standardize : bool
            As :meth:`fit_regularized`.
        alphas : array-like, optional
            The alphas to use instead of the generated sequence (sorted decreasing).
        penalty_factor
            As :meth:`fit_regularized`.
        stratify : bool
            Folds stratified by the response class (each class spread evenly over the folds).
        maxiter, tol
            Per alpha, as :meth:`fit_regularized`.
        disp : bool
            Print a line per alpha (its deviance ratio, steps and time), for the full-data path
            and for each fold.

        Returns
        -------
        RegularizationPath
            ``coefs`` by alpha; with ``cv``: ``cv_mean``, ``cv_se``, ``alpha_min``,
            ``alpha_1se``; ``refit(alpha)`` and ``plot(kind="path"|"cv")``.

        Notes
        -----
        A generated sequence (no ``alphas``) stops early as glmnet's does: from the fifth alpha
        on, once the deviance ratio ``1 - deviance / null deviance`` reaches 0.999 or gains
        less than 1e-5 from one alpha to the next, so the path may hold fewer than
        ``n_alphas`` alphas. Given ``alphas`` are all fitted.
        """
        return PATH.regularization_path(self, n_alphas, L1_wt, alpha_min_ratio, alphas, cv,
                                        seed, standardize, penalty_factor, stratify, maxiter,
                                        tol, RegularizationPath, disp)


class GLM(MLEGLM):
    """Generalized linear model fit by iteratively reweighted least squares.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Response: 0/1, bool, two labels or proportions for the Binomial family; numbers else.
    exog : array-like of shape (n_obs, p)
        Design matrix (include a constant column for an intercept).
    family : Family, default Binomial()
        Distribution and link, e.g. ``gc.families.Binomial(link=gc.links.CLogLog())`` or
        ``Binomial(link="cloglog")``.
    offset : array-like of shape (n_obs,), optional
        Known term added to the linear predictor.
    freq_weights : array-like of shape (n_obs,), optional
        Replication counts: a row with weight 3 counts as three identical rows.
    var_weights : array-like of shape (n_obs,), optional
        Precision weights; for the Binomial family with proportions, the number of trials.
    missing : {"drop", "raise"}
        Drop rows with missing values, or raise naming the column.
    exposure : array-like of shape (n_obs,), optional
        Positive exposures for a log link (statsmodels' name): ``log(exposure)`` is added to the
        offset.

    Notes
    -----
    The model is immutable: :meth:`fit` returns a new :class:`GLMResults` each call.
    ``endog`` may also be two columns, (successes, failures), for the Binomial family.

    References
    ----------
    McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed.
    """

    row_args = MLEGLM.row_args + ("exposure",)

    def __init__(self, endog, exog, family: F.Family | None = None, offset=None,
                 freq_weights=None, var_weights=None, missing: str = "drop",
                 exposure=None) -> None:
        super().__init__(endog, exog, missing, family=family, offset=offset,
                         freq_weights=freq_weights, var_weights=var_weights, exposure=exposure)

    def _setup(self, data: ModelData, family: F.Family | None = None) -> None:
        family = F.Binomial() if family is None else family
        if data.exposure and isinstance(family, F.Family) and family.link.name != "log":
            raise ValueError(f"exposure= is for a log link (log(exposure) is added to the linear "
                             f"predictor), not {family.link.name!r}; pass offset=np.log(exposure) "
                             "if that is what you mean")
        self._set_problem(data, family)


class Logit(MLEGLM):
    """Logistic regression: a GLM with ``Binomial(link=Logit())``.

    Parameters are those of :class:`GLM` without ``family``.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.2.
    """

    def __init__(self, endog, exog, offset=None, freq_weights=None, var_weights=None,
                 missing: str = "drop") -> None:
        super().__init__(endog, exog, missing, offset=offset, freq_weights=freq_weights,
                         var_weights=var_weights)

    def _setup(self, data: ModelData) -> None:
        self._set_problem(data, F.Binomial(L.Logit()))


class Probit(MLEGLM):
    """Probit regression: a GLM with ``Binomial(link=Probit())``.

    Parameters are those of :class:`GLM` without ``family``.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.5.
    """

    def __init__(self, endog, exog, offset=None, freq_weights=None, var_weights=None,
                 missing: str = "drop") -> None:
        super().__init__(endog, exog, missing, offset=offset, freq_weights=freq_weights,
                         var_weights=var_weights)

    def _setup(self, data: ModelData) -> None:
        self._set_problem(data, F.Binomial(L.Probit()))
