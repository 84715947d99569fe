"""Bayesian binary regression with a Gaussian prior: MAP by penalised IRLS, Laplace posterior.

:class:`BayesGLM` is a binomial GLM with independent priors ``w_j ~ N(m_j, s_j^2)``;
:class:`BayesLogit` is its logit case (Bishop's Bayesian logistic regression). The posterior
mode comes from the package's IRLS solver with a :class:`~glmclass.solvers.irls.Penalty`
(Newton steps on minus twice the log posterior); the Laplace approximation, the evidence and
its maximisation over the prior precision live in :mod:`glmclass.numerics.laplace`.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.4-4.5.
Gelman, A., Jakulin, A., Pittau, M. G. and Su, Y.-S. (2008). A weakly informative default
prior distribution for logistic and other regression models. *Ann. Appl. Stat.* 2(4),
1360-1383 (R's ``arm::bayesglm``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.linalg import solve_triangular

from .. import families as F
from .. import links as L
from ..data.model_data import ModelData
from ..errors import ConvergenceWarning, GlmclassWarning, warn_user
from ..numerics import laplace
from ..numerics.linalg import NotPositiveDefinite, cholesky, spd_inverse
from ..progress import IterationLog
from ..results.bayes import BayesGLMResults
from ..solvers.control import Control
from ..solvers.fit import Fit
from ..solvers.irls_records import Penalty
from .base import check_option, check_start, fit_control, real_number
from .base import per_column as _per_column
from .glm_base import GLMBase
from .regularized import column_moments

#: Name of the one group of coefficients whose prior precision is optimised by default.
DEFAULT_GROUP = "all"

#: ``optimize_prior`` warns when the columns sharing one optimised prior differ in scale (their
#: standard deviations) by more than this factor. A shared prior sd s on the coefficients is a
#: prior sd ``s * sd_j`` on column j's effect per standard deviation, so columns r times apart
#: in scale get priors r times apart on comparable effects, and the evidence fits s to the
#: many small coefficients of the large-scale columns. On Pima (MASS, 532 rows, flat intercept)
#: with ``ped`` rescaled so that the ratio is r, ped keeps 86 % of its maximum-likelihood
#: estimate at r = 9 (the usual shrinkage: npreg keeps 58 %), 48 % at r = 20, 25 % at r = 30,
#: 9 % at r = 45 and 2 % at the data's own r = 90: from 30 on, a coefficient is lost to the
#: choice of units rather than shrunk by the data. 30 is a factor of 10^1.5 (prior variances
#: 10^3 apart): ordinary designs stay below it (spector 8, indicators beside variables of SD
#: under 15), designs mixing a 0/1 or fraction with raw measurements exceed it.
SCALE_RATIO = 30.0


@dataclass(frozen=True)
class Posterior:
    """The Laplace posterior at one prior (ndarray record built by :meth:`BayesGLM.posterior_at`).

    Attributes
    ----------
    fit : Fit
        Penalised IRLS fit; ``coef`` is the posterior mode.
    precision : ndarray of shape (p,) or (p, p)
        Prior precisions 1 / prior_scale^2 (0 for flat), or with a full prior covariance the
        prior precision matrix ``factor * S_0^-1``.
    hessian : ndarray of shape (k, k)
        Posterior precision A = S_0^-1 + X' R X on the non-aliased columns, R the observed
        information weights (used by the evidence).
    information : ndarray of shape (k, k)
        The matrix whose inverse is reported as ``cov_params`` (``hessian``, or the Fisher
        information version for ``information="expected"``).
    loglik : float
        Log-likelihood at the mode.
    log_evidence : float
        Laplace log evidence (NaN if A is not positive definite).
    factor : float
        With a full prior covariance: the prior covariance is ``S_0 / factor`` (1 unless the
        prior was optimised).
    """

    fit: Fit
    precision: np.ndarray
    hessian: np.ndarray
    information: np.ndarray
    loglik: float
    log_evidence: float
    factor: float = 1.0


class BayesBinary(GLMBase):
    """Binary-response GLM with a Gaussian prior on the coefficients, Laplace posterior: the
    shared machinery of :class:`BayesGLM` and :class:`BayesLogit`.

    Notes
    -----
    The prior is ``w ~ N(m_0, S_0)``, ``S_0 = diag(s_j^2)``; the posterior mode maximises
    ``ln p(y | w) + ln p(w)``, and the Laplace posterior is ``N(w_MAP, S_N)`` with
    ``S_N^-1 = S_0^-1 + X' R X`` (PRML eq. 4.143), R the observed information weights
    (``mu(1 - mu)`` for the logit link). The model is immutable: :meth:`fit` returns a new
    :class:`~glmclass.results.bayes.BayesGLMResults` each call.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.4-4.5.
    """

    def _setup_prior(self, data: ModelData, link, prior_mean, prior_scale,
                     prior_scale_intercept, prior_cov=None) -> None:
        self._set_problem(data, F.Binomial(L.Logit() if link is None else link))
        names = self.exog_names
        self.intercept_index = data.intercept_index
        mean = _per_column(prior_mean, names, 0.0, "prior_mean")
        if not np.all(np.isfinite(mean)):
            raise ValueError("prior_mean must be finite")
        self.prior_mean = mean
        self.prior_cov = None
        self.separate_intercept = False
        if prior_cov is not None:
            for arg, value in (("prior_scale", prior_scale),
                               ("prior_scale_intercept", prior_scale_intercept)):
                if value is not None:
                    raise ValueError(f"{arg} and prior_cov are exclusive: give the prior's "
                                     f"variances on the diagonal of prior_cov and drop {arg}")
            self.prior_cov = prior_covariance(prior_cov, names)
            self.prior_scale = np.sqrt(np.diag(self.prior_cov))
            return
        scale = _per_column(1.0 if prior_scale is None else prior_scale, names, 1.0,
                            "prior_scale")
        if np.any(~(scale > 0)):
            j = int(np.flatnonzero(~(scale > 0))[0])
            raise ValueError(f"prior_scale of {names[j]!r} is {scale[j]}; it must be positive "
                             "(np.inf for a flat prior)")
        self.separate_intercept = prior_scale_intercept is not None
        if self.separate_intercept:
            if self.intercept_index is None:
                raise ValueError("prior_scale_intercept was given but the design has no "
                                 "intercept (constant) column; add one or drop the argument")
            s0 = np.inf if isinstance(prior_scale_intercept, str) else prior_scale_intercept
            if isinstance(prior_scale_intercept, str) and prior_scale_intercept != "flat":
                raise ValueError(f"prior_scale_intercept must be a positive number or 'flat', "
                                 f"got {prior_scale_intercept!r}")
            if not real_number(s0, "prior_scale_intercept") > 0:
                raise ValueError(f"prior_scale_intercept must be positive, got {s0}")
            scale[self.intercept_index] = float(s0)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            tiny = ~np.isfinite(1.0 / scale**2)
        if tiny.any():
            j = int(np.flatnonzero(tiny)[0])
            raise ValueError(f"prior_scale of {names[j]!r} is {scale[j]:g}: so small that its "
                             f"precision 1/scale^2 overflows; a coefficient held at its prior "
                             f"mean is an offset (use offset=), or give a scale above 1e-150")
        self.prior_scale = scale

    @property
    def prior_precision(self) -> np.ndarray:
        """1 / prior_scale^2 by column (0 for a flat prior), shape (p,); with ``prior_cov`` the
        precision matrix S_0^-1 (through a Cholesky factor), shape (p, p)."""
        if self.prior_cov is not None:
            return spd_inverse(self.prior_cov)
        return 1.0 / self.prior_scale**2

    # --- fitting -----------------------------------------------------------------------------
    def fit(self, maxiter: int = 50, tol: float = 1e-10, optimize_prior: bool | str = False,
            groups=None, information: str = "observed",
            start_params=None, disp: bool = False) -> BayesGLMResults:
        """Posterior mode by penalised IRLS and the Laplace posterior around it.

        Parameters
        ----------
        maxiter : int
            Largest number of IRLS (Newton) iterations.
        tol : float
            Convergence when ``|obj - obj_old| / (|obj| + 0.1) < tol``, obj minus twice the
            log posterior (R's rule on the penalised deviance).
        optimize_prior : bool or {"direct", "mackay"}
            Choose the prior precision alpha = 1 / prior_scale^2 (one per group) that maximises
            the Laplace evidence. ``True`` or ``"direct"``: MacKay's fixed point, then a direct
            1-D (Brent) or multi-D (Nelder-Mead) maximisation of the Laplace evidence over
            ln alpha; ``"mackay"``: the fixed point only. One precision shared by columns
            whose standard deviations differ more than :data:`SCALE_RATIO`-fold shrinks the
            small-scale columns' coefficients to nearly 0: a warning then names them (standardise
            the columns, or give them their own ``groups``).
        groups : dict or sequence, optional
            Groups of coefficients sharing one optimised precision: a dict ``{group: [columns]}``
            or one label per column (None for a column whose prior stays fixed). Default: one
            group of every column, except an intercept with its own ``prior_scale_intercept``.
            With ``prior_cov`` only the default: the optimisation scales the whole prior
            covariance, S_0 / alpha.
        information : {"observed", "expected"}
            Which Hessian of the log-likelihood enters ``cov_params``: the observed one (the
            Laplace approximation) or the Fisher information (as ``arm::bayesglm``). The two
            agree for the logit link. The evidence always uses the observed Hessian.
        start_params : array-like of shape (p,), optional
        disp : bool
            Print one line per iteration of the posterior-mode fit at the final prior
            (:class:`~glmclass.progress.IterationLog`).

        Returns
        -------
        BayesGLMResults
        """
        check_option("information", information, ("observed", "expected"))
        check_option("optimize_prior", optimize_prior, (False, True, "direct", "mackay"))
        start_params = check_start(start_params, self.exog_names)
        control = fit_control(maxiter, tol, hessian="observed")
        codes, group_names = self._groups(groups)
        precision, opt = self.prior_precision, None
        if optimize_prior:
            method = "direct" if optimize_prior is True else optimize_prior
            precision, opt = self._optimize(precision, codes, len(group_names), method,
                                            control, start_params)
        if disp:
            control = control.replace(progress=IterationLog("-2 log posterior"))
        post = self.posterior_at(precision, control, start_params, information)
        self._warn_aliased(post.fit.aliased)
        self._warn_convergence(post.fit, "IRLS (posterior mode)")
        null = self.problem.null_fit(control, lazy=True)  # its deviance when first asked
        return BayesGLMResults(self, post, null, codes, group_names, opt,
                                              information)

    def _groups(self, groups) -> tuple[np.ndarray, list]:
        """Group code of each column (-1: prior held fixed) and the group names."""
        names, p = self.exog_names, len(self.exog_names)
        if groups is not None and self.prior_cov is not None:
            raise ValueError("groups cannot split a full prior covariance (prior_cov): its "
                             "optimisation scales the whole of S_0; drop groups, or give "
                             "independent priors with prior_scale")
        if groups is None:
            codes = np.zeros(p, dtype=int)
            if self.separate_intercept:
                codes[self.intercept_index] = -1
            return codes, [DEFAULT_GROUP]
        if isinstance(groups, Mapping):
            labels = [None] * p
            for g, cols in groups.items():
                for c in ([cols] if isinstance(cols, str) else cols):
                    if c not in names:
                        raise ValueError(f"groups: {c!r} is not a design column; columns are "
                                         f"{names}")
                    labels[names.index(c)] = g
        else:
            labels = list(groups)
            if len(labels) != p:
                raise ValueError(f"groups has {len(labels)} labels for {p} design columns; give "
                                 "one per column (None to hold a prior fixed) or a dict")
        group_names = list(dict.fromkeys(lab for lab in labels if lab is not None))
        if not group_names:
            raise ValueError("groups puts no column in a group: there is no prior to optimise")
        codes = np.array([-1 if lab is None else group_names.index(lab) for lab in labels])
        return codes, group_names

    def _optimize(self, precision, codes, n_groups, method, control, start):
        """Prior precisions maximising the Laplace evidence; the fits warm-start each other."""
        if precision.ndim == 2:
            return self._optimize_factor(precision, method, control, start)
        warm = {"coef": start}

        def evidence_at(alpha):
            prec = _with_groups(precision, codes, alpha)
            post = self.posterior_at(prec, control, warm["coef"], "observed")
            if post.fit.converged and not post.fit.aliased.any():
                warm["coef"] = post.fit.coef
            cov_diag = _cov_diag(post)
            return post.log_evidence, post.fit.coef, self.prior_mean, prec, cov_diag

        self._warn_scales(codes, n_groups)
        alpha0 = np.array([_group_start(precision[codes == g]) for g in range(n_groups)])
        opt = laplace.maximize_evidence(evidence_at, codes, alpha0, method)
        if not opt.converged:
            warn_user(f"the prior optimisation ({method}) did not converge; alpha = "
                      f"{np.array2string(opt.alpha, precision=6)}. The evidence may keep "
                      "growing as alpha -> 0 (separated data) or infinity (no signal)",
                      ConvergenceWarning)
        _warn_at_bound(opt.alpha, group_names_of(codes, n_groups, self.exog_names))
        return _with_groups(precision, codes, opt.alpha), opt

    def _warn_scales(self, codes: np.ndarray, n_groups: int) -> None:
        """Warn when the non-constant columns of one group of the optimised prior differ in
        standard deviation by more than :data:`SCALE_RATIO` (one pass over the rows): the
        shared scale then shrinks the coefficients of the small-scale columns to nothing."""
        total, sums, squares, _ = column_moments(self.problem.blocks())
        if not total > 0:
            return
        mean = sums / total
        var = np.maximum(squares / total - mean * mean, 0.0)
        varying = var > 1e-12 * np.maximum(mean * mean, 1e-300)  # not constant (cancellation)
        sd, names = np.sqrt(var), self.exog_names
        for g in range(n_groups):
            cols = np.flatnonzero((codes == g) & varying)
            if cols.size < 2:
                continue
            big = cols[np.argmax(sd[cols])]
            small = [j for j in cols if sd[big] > SCALE_RATIO * sd[j]]
            if not small:
                continue
            listed = ", ".join(f"{names[j]!r} (SD {sd[j]:.3g})" for j in small[:5]) + \
                (f" and {len(small) - 5} more" if len(small) > 5 else "")
            warn_user(
                f"optimize_prior: the columns sharing one prior scale differ in scale by "
                f"{sd[big] / min(sd[j] for j in small):.0f}x (more than {SCALE_RATIO:.0f}x): "
                f"{listed} against {names[big]!r} (SD {sd[big]:.3g}). One prior sd on "
                "coefficients of such different units is fit to the large-scale columns and "
                "can shrink the small-scale columns' coefficients to nearly 0. Standardise the "
                "columns (standardize(x) in the formula, or (x - mean) / sd), or give them "
                "separate priors with groups= (one group per scale) or prior_cov=",
                GlmclassWarning)

    def _optimize_factor(self, precision, method, control, start):
        """The factor alpha of a full prior N(m_0, S_0 / alpha) that maximises the evidence.

        In the whitened coefficients ``v = L^-1 (w - m_0)``, ``S_0 = L L'``, the prior is
        N(0, I / alpha): one group of independent coefficients, so MacKay's fixed point and
        the direct search of :func:`~glmclass.numerics.laplace.maximize_evidence` apply as
        they are (``gamma = M - alpha Tr(S_0^-1 S_N)``, ``alpha = gamma / v'v``).
        """
        warm = {"coef": start}
        root = np.linalg.cholesky(self.prior_cov)
        p = precision.shape[0]

        def evidence_at(alpha):
            post = self.posterior_at(alpha[0] * precision, control, warm["coef"], "observed")
            if post.fit.converged and not post.fit.aliased.any():
                warm["coef"] = post.fit.coef
            v = solve_triangular(root, post.fit.coef - self.prior_mean, lower=True)
            try:
                sn = spd_inverse(post.hessian)
                cov_v = solve_triangular(root, solve_triangular(root, sn, lower=True).T,
                                         lower=True)
                diag = np.diag(cov_v)
            except NotPositiveDefinite:
                diag = np.full(p, np.nan)
            return post.log_evidence, v, np.zeros(p), np.full(p, alpha[0]), diag

        codes = np.zeros(p, dtype=int)
        opt = laplace.maximize_evidence(evidence_at, codes, np.ones(1), method)
        if not opt.converged:
            warn_user(f"the prior optimisation ({method}) did not converge; alpha = "
                      f"{opt.alpha[0]:.6g}", ConvergenceWarning)
        _warn_at_bound(opt.alpha, ["the prior covariance S_0"])
        return opt.alpha[0] * precision, opt

    def posterior_at(self, precision: np.ndarray, control: Control, start,
                     information: str = "observed") -> Posterior:
        """Penalised IRLS at a given prior and the Laplace quantities at the mode."""
        penalty = Penalty(laplace.precision_matrix(precision), self.prior_mean)
        prob = self.problem
        fit = prob.irls(control, start, penalty)
        keep = ~fit.aliased
        prior = laplace.precision_matrix(laplace.kept(precision, keep))
        hessian = prob.information(fit.coef, keep, True, fit.gram, fit.information) + prior
        info = hessian
        if information == "expected" and not self.family.is_canonical:
            # the penalised fit ran on the observed Hessian: the Fisher information is new
            info = prob.information(fit.coef, keep, False) + prior
        ll = prob.loglik(prob.linear_predictor(fit.coef), prob.nobs)
        try:
            ev = laplace.laplace_log_evidence(ll, fit.coef[keep], self.prior_mean[keep],
                                              laplace.kept(precision, keep), hessian)
        except NotPositiveDefinite:
            ev = np.nan
        factor = 1.0
        if precision.ndim == 2:  # the factor alpha of precision = alpha S_0^-1
            factor = float(np.trace(precision @ self.prior_cov)) / precision.shape[0]
        return Posterior(fit, precision, hessian, info, ll, ev, factor)

    def __repr__(self) -> str:
        prior = "N(m, s^2)" if self.prior_cov is None else "N(m_0, S_0)"
        return (f"<{type(self).__name__}: {self.family!r}, nobs={self.exog.shape[0]}, "
                f"prior {prior}>")


class BayesGLM(BayesBinary):
    """Binary-response GLM with a Gaussian prior on the coefficients, Laplace posterior.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        0/1, bool, two labels, or proportions with ``var_weights`` = number of trials.
    exog : array-like of shape (n_obs, p)
        Design matrix (include a constant column for an intercept).
    link : Link or str, default Logit()
        Any binomial link: ``gc.links.Probit()``, ``"cloglog"``, ...
    prior_mean : float, array-like of shape (p,) or dict
        Prior means m_j: one number, one per column, or a dict by column name (columns not
        named get 0).
    prior_scale : float, array-like of shape (p,) or dict, default 1
        Prior standard deviations s_j > 0: one number, one per column, or a dict by column name
        (columns not named get 1). ``np.inf`` gives a flat prior on that coefficient.
    prior_cov : array-like of shape (p, p) or pandas.DataFrame, optional
        A full prior covariance S_0 (PRML eq. 4.140, ``w ~ N(m_0, S_0)``) instead of
        ``prior_scale``: symmetric positive definite, as an array in the order of the design
        columns or a DataFrame whose index and columns are the column names. Exclusive with
        ``prior_scale`` and ``prior_scale_intercept``.
    prior_scale_intercept : float or "flat", optional
        Prior sd of the intercept (the constant column) when it should differ from the others,
        as ``prior.scale.for.intercept`` of R's ``arm::bayesglm``: a number (a broad prior such
        as 10), or ``"flat"`` (``np.inf``) for an improper flat prior. The intercept's prior is
        then held fixed when the prior is optimised. Default: as given by ``prior_scale``.
    offset, freq_weights, var_weights, missing
        As for :class:`~glmclass.GLM`.

    Notes
    -----
    See :class:`BayesBinary` for the model.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.4-4.5.
    """

    def __init__(self, endog, exog, link: L.Link | None = None, prior_mean=0.0,
                 prior_scale=None, prior_scale_intercept=None, offset=None, freq_weights=None,
                 var_weights=None, missing: str = "drop", prior_cov=None) -> None:
        super().__init__(endog, exog, missing, link=link, prior_mean=prior_mean,
                         prior_scale=prior_scale, prior_scale_intercept=prior_scale_intercept,
                         offset=offset, freq_weights=freq_weights, var_weights=var_weights,
                         prior_cov=prior_cov)

    def _setup(self, data: ModelData, link=None, prior_mean=0.0, prior_scale=None,
               prior_scale_intercept=None, prior_cov=None) -> None:
        self._setup_prior(data, link, prior_mean, prior_scale, prior_scale_intercept, prior_cov)


class BayesLogit(BayesBinary):
    """Bayesian logistic regression (PRML §4.5): a binary GLM with the logit link and a
    Gaussian prior on the coefficients, Laplace posterior.

    Parameters are those of :class:`BayesGLM` without ``link``.

    Examples
    --------
    >>> import glmclass as gc
    >>> res = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", spector,
    ...                                  prior_scale=2.5).fit()       # doctest: +SKIP
    >>> res.log_evidence, res.predict(spector, method="probit")      # doctest: +SKIP
    """

    def __init__(self, endog, exog, prior_mean=0.0, prior_scale=None, prior_scale_intercept=None,
                 offset=None, freq_weights=None, var_weights=None, missing: str = "drop",
                 prior_cov=None) -> None:
        super().__init__(endog, exog, missing, prior_mean=prior_mean, prior_scale=prior_scale,
                         prior_scale_intercept=prior_scale_intercept, offset=offset,
                         freq_weights=freq_weights, var_weights=var_weights, prior_cov=prior_cov)

    def _setup(self, data: ModelData, prior_mean=0.0, prior_scale=None,
               prior_scale_intercept=None, prior_cov=None) -> None:
        self._setup_prior(data, L.Logit(), prior_mean, prior_scale, prior_scale_intercept,
                          prior_cov)


def prior_covariance(value, names: list[str]) -> np.ndarray:
    """``prior_cov`` as a (p, p) float array in design-column order, checked symmetric
    positive definite.

    Raises
    ------
    ValueError
        Naming the columns missing from a DataFrame, a wrong shape, non-finite values, an
        asymmetric matrix or one that is not positive definite.
    """
    p = len(names)
    if isinstance(value, pd.DataFrame):
        missing = [n for n in names if n not in value.index or n not in value.columns]
        extra = [c for c in dict.fromkeys([*value.index, *value.columns]) if c not in names]
        if missing or extra:
            raise ValueError(f"prior_cov: its index and columns must be the design columns "
                             f"{names}; missing {missing}, unknown {extra}")
        value = value.loc[names, names]
    try:
        s0 = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("prior_cov must be a numeric (p, p) matrix or a DataFrame by column "
                         "names") from None
    if s0.shape != (p, p):
        raise ValueError(f"prior_cov has shape {s0.shape}; the design has {p} columns "
                         f"({names}): give a ({p}, {p}) matrix")
    if not np.all(np.isfinite(s0)):
        raise ValueError("prior_cov must be finite (a flat prior on a coefficient needs "
                         "prior_scale=np.inf instead)")
    if not np.allclose(s0, s0.T, rtol=1e-10, atol=0.0):
        raise ValueError("prior_cov must be symmetric")
    s0 = (s0 + s0.T) / 2.0
    try:
        cholesky(s0)
    except NotPositiveDefinite:
        raise ValueError("prior_cov is not positive definite: a covariance matrix must be "
                         "(check for a zero variance or perfectly correlated columns)") from None
    return s0


def _with_groups(precision: np.ndarray, codes: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    out = precision.copy()
    grouped = codes >= 0
    out[grouped] = np.asarray(alpha)[codes[grouped]]
    return out


def _group_start(prec: np.ndarray) -> float:
    """Starting precision of a group: the mean of its proper precisions (1 if all flat)."""
    proper = prec[prec > 0]
    return float(np.mean(proper)) if proper.size else 1.0


def _cov_diag(post: Posterior) -> np.ndarray:
    """Posterior variances on all columns (0 for aliased ones) for the fixed-point update."""
    keep = ~post.fit.aliased
    out = np.zeros(keep.shape[0])
    try:
        out[keep] = np.diag(spd_inverse(post.hessian))
    except NotPositiveDefinite:
        out[keep] = np.nan
    return out


def group_names_of(codes: np.ndarray, n_groups: int, names: list) -> list[str]:
    """A short name per prior group: its design columns (``"x1, x2"``)."""
    return [", ".join(str(names[j]) for j in np.flatnonzero(codes == g)[:3])
            + (", ..." if np.count_nonzero(codes == g) > 3 else "") for g in range(n_groups)]


def _warn_at_bound(alpha: np.ndarray, groups: list[str]) -> None:
    """The evidence search stops at :data:`~glmclass.numerics.laplace.ALPHA_BOUNDS`: say which
    bound, for which coefficients, and what it means, rather than report the bound as an
    optimum."""
    lo, hi = laplace.ALPHA_BOUNDS
    for a, name in zip(np.atleast_1d(alpha), groups, strict=True):
        if np.log(hi / a) < 1e-4:  # within 0.01 % of the bound (Brent's last step)
            warn_user(
                f"optimize_prior: the prior scale of {name} is pinned at its lower bound "
                f"{1 / np.sqrt(hi):.0e} (the evidence keeps growing as the scale shrinks: the "
                "data show no signal in these coefficients, which are set to the prior mean); "
                "this is the bound, not an optimum", ConvergenceWarning)
        elif np.log(a / lo) < 1e-4:
            warn_user(
                f"optimize_prior: the prior scale of {name} is clipped at its upper bound "
                f"{1 / np.sqrt(lo):.0e} (the evidence keeps growing as the prior flattens: "
                "separated data, whose maximum-likelihood estimates do not exist, or a "
                "coefficient the prior no longer restrains); this is the bound, not an optimum: "
                "fix prior_scale instead", ConvergenceWarning)
