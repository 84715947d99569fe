"""Exception and warning classes of glmclass (layer 0: imports nothing of the package)."""

from __future__ import annotations


def one_of(choices) -> str:
    """``'a', 'b' or 'c'``: the choices of an argument, for error messages."""
    quoted = [repr(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


class GlmclassError(Exception):
    """Root of every error raised by glmclass."""


class DataError(GlmclassError, ValueError):
    """Bad input data: the message names the column, level or argument at fault."""


class PerfectSeparationError(GlmclassError):
    """The maximum-likelihood estimate does not exist because the classes are separated.

    Raised by ``fit(on_separation="raise")``. Use ``BayesLogit`` (a Gaussian prior keeps the
    estimates finite) or drop the separating columns.
    """


class GlmclassWarning(UserWarning):
    """Root of every warning issued by glmclass."""


class SeparationWarning(GlmclassWarning):
    """Complete or quasi-complete separation: some estimates are infinite."""


class ConvergenceWarning(GlmclassWarning):
    """The optimiser stopped before meeting its convergence criterion."""


class RankDeficientWarning(GlmclassWarning):
    """The design matrix is rank deficient; aliased columns get NaN coefficients."""
