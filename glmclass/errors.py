"""Exception and warning classes of glmclass (layer 0: imports nothing of the package)."""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def one_of(choices) -> str:
    """``'a', 'b' or 'c'``: the choices of an argument, for error messages."""
    quoted = [repr(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def warn_user(message: str, category: type[Warning]) -> None:
    """Warn, pointing at the first frame outside glmclass (the user's call), whatever the
    depth of the package's own frames."""
    level, frame = 2, sys._getframe(1)  # stacklevel 2 is the caller of warn_user
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)


class GlmclassError(Exception):
    """Root of every error raised by glmclass."""


class DataError(GlmclassError, ValueError):
    """Bad input data: the message names the column, level or argument at fault."""


class UnsafeFormulaError(DataError):
    """A formula uses something that formula evaluation refuses: a name that is neither a column
    nor an allowed function, a dunder name, attribute access outside numpy, or Python syntax
    that has no place in a formula (lambdas, comprehensions, assignments). Pass ``eval_env=`` to
    evaluate a trusted formula in a namespace of your own."""


class PerfectSeparationError(GlmclassError):
    """The maximum-likelihood estimate does not exist because the classes are separated.

    Raised by ``fit(on_separation="raise")``. Use ``BayesLogit`` (a Gaussian prior keeps the
    estimates finite) or drop the separating columns.
    """


class GlmclassWarning(UserWarning):
    """Root of every warning issued by glmclass."""


class DataWarning(GlmclassWarning):
    """The data are accepted, but probably do not mean what was intended (for example a
    binomial response of proportions without the numbers of trials)."""


class SeparationWarning(GlmclassWarning):
    """Complete or quasi-complete separation: some estimates are infinite."""


class ConvergenceWarning(GlmclassWarning):
    """The optimiser stopped before meeting its convergence criterion."""


class RankDeficientWarning(GlmclassWarning):
    """The design matrix is rank deficient; aliased columns get NaN coefficients."""
