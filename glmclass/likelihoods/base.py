"""The likelihood contract: what a model's mathematics is, on one block of rows.

A :class:`Likelihood` turns a block of rows (:class:`glmclass.rows.blocks.Block`: X, y,
weights, offset) and the parameters into per-row terms: log-likelihood contributions, score
contributions, working weights, the mean and its Jacobian. Every pass that needs them (a
solver, a sandwich covariance, marginal effects, predictions) is a reduce or a map of these
per-block terms over a row source, so the mathematics of a model kind lives in one place and
the passes never ask which kind of model they serve.

Parameters are a flat vector in *equation-major* order: ``params[j * k:(j + 1) * k]`` are the
k coefficients of equation j (one equation for a GLM, K - 1 for a multinomial logit), as the
covariance matrices of the results are laid out. :meth:`Likelihood.coef_matrix` gives them as
a (k, n_equations) matrix.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., ch. 2 and 4.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..rows.blocks import Block


class Likelihood(ABC):
    """Per-row terms of a model's log-likelihood on a block of rows.

    Attributes
    ----------
    n_equations : int
        Linear predictors per row: 1 for a GLM, K - 1 for a multinomial logit.
    n_extra : int
        Parameters beyond the ``n_equations * k`` coefficients (e.g. cut points); 0 here.
    n_outputs : int
        Columns of :meth:`mean`: 1 for a GLM, K for a multinomial logit.
    """

    n_equations: int = 1
    n_extra: int = 0
    n_outputs: int = 1

    # --- parameters ---------------------------------------------------------------------------
    def coef_matrix(self, params: np.ndarray, k: int) -> np.ndarray:
        """Coefficients as a (k, n_equations) matrix, from a flat equation-major vector of
        length ``n_equations * k`` or a (k, n_equations) matrix.

        Raises
        ------
        ValueError
            When ``params`` has neither shape, naming both.
        """
        B = np.asarray(params, dtype=float)
        m = self.n_equations
        if B.shape == (k, m):
            return B
        if B.shape == (m * k,):
            return B.reshape(m, k).T
        raise ValueError(f"params must have shape ({m * k},) (equation-major) or ({k}, {m}) "
                         f"for {k} design columns and {m} equation(s), got {B.shape}")

    def linear_predictor(self, X: np.ndarray, params: np.ndarray,
                         offset: np.ndarray | None = None) -> np.ndarray:
        """eta = X B + offset, shape (r, n_equations).

        Parameters
        ----------
        X : ndarray of shape (r, k)
        params : ndarray of shape (n_equations * k,) or (k, n_equations)
        offset : ndarray of shape (r,), optional
        """
        eta = X @ self.coef_matrix(params, X.shape[1])
        if offset is not None:
            eta = eta + np.asarray(offset, dtype=float)[:, None]
        return eta

    # --- what each likelihood defines ---------------------------------------------------------
    @abstractmethod
    def encode(self, y) -> np.ndarray:
        """A block's response as this likelihood reads it (floats on the family's scale, or
        integer class codes).

        Raises
        ------
        ValueError
            A response outside the likelihood's support, naming what was found.
        """

    @abstractmethod
    def loglike_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        """Log-likelihood contribution of each row, shape (r,), prior weights included."""

    @abstractmethod
    def score_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        """Per-row score contributions d loglike_obs / d params, shape (r, n_equations * k),
        equation-major, prior weights included."""

    @abstractmethod
    def weights(self, block: Block, params: np.ndarray, observed: bool = False) -> np.ndarray:
        """Working weights of the information ``sum_i x_i' W_i x_i``: shape (r,) for one
        equation, (r, n_equations, n_equations) for several; ``observed``: minus the second
        derivative of the row's log-likelihood in eta, else its expectation (Fisher)."""

    @abstractmethod
    def mean_eta(self, eta: np.ndarray) -> np.ndarray:
        """The mean F(eta), shape (r, n_outputs)."""

    @abstractmethod
    def mean_eta_jacobian(self, eta: np.ndarray) -> np.ndarray:
        """J[i, m, j] = d F_m(eta_i) / d eta_ij, shape (r, n_outputs, n_equations)."""

    @abstractmethod
    def mean_eta_hess_dot(self, eta: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """``sum_l d^2 F_m / d eta_j d eta_l delta_l`` per row, shape (r, n_outputs,
        n_equations): the derivative of ``J delta`` in eta (second-order delta method)."""

    def nested_with(self, other: Likelihood) -> bool | None:
        """Whether a fit of this likelihood and a fit of ``other`` can be nested (one a
        restriction of the other) for a likelihood-ratio test: False when they cannot be,
        None when this likelihood does not know (then nesting is the caller's claim, as in
        R)."""
        return None

    # --- derived ------------------------------------------------------------------------------
    def mean(self, X: np.ndarray, params: np.ndarray,
             offset: np.ndarray | None = None) -> np.ndarray:
        """The mean of the response at each row, shape (r, n_outputs).

        Parameters
        ----------
        X : ndarray of shape (r, k)
        params : ndarray of shape (n_equations * k,) or (k, n_equations)
        offset : ndarray of shape (r,), optional
        """
        return self.mean_eta(self.linear_predictor(X, params, offset))

    def mean_jacobian(self, X: np.ndarray, params: np.ndarray,
                      offset: np.ndarray | None = None) -> np.ndarray:
        """d mean / d params per row, shape (r, n_outputs, n_equations * k), parameters
        equation-major: the gradient of a prediction for the delta method."""
        J = self.mean_eta_jacobian(self.linear_predictor(X, params, offset))
        return np.einsum("rmj,ra->rmja", J, X).reshape(X.shape[0], J.shape[1], -1)

    def mean_dx(self, X: np.ndarray, params: np.ndarray, offset: np.ndarray | None,
                D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The derivative of the mean along a change ``D`` of the design rows, and its
        gradient in the parameters: the marginal effect of a variable whose design
        derivative is D.

        Parameters
        ----------
        X, D : ndarray of shape (r, k)
        params : ndarray
            As :meth:`mean` takes them.
        offset : ndarray of shape (r,), optional

        Returns
        -------
        value : ndarray of shape (r, n_outputs)
            ``J_F(eta) D B``.
        gradient : ndarray of shape (r, n_outputs, n_params)
            Its derivative in the parameters (equation-major), second derivatives of F
            included.
        """
        B = self.coef_matrix(params, X.shape[1])
        eta = self.linear_predictor(X, B, offset)
        delta = D @ B
        J = self.mean_eta_jacobian(eta)
        Hd = self.mean_eta_hess_dot(eta, delta)
        value = np.einsum("nmj,nj->nm", J, delta)
        grad = np.einsum("nmj,na->nmja", Hd, X) + np.einsum("nmj,na->nmja", J, D)
        return value, grad.reshape(X.shape[0], J.shape[1], -1)

