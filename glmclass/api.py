"""``gc.load``: results files back into results, the data-only format read against the model
registry.

The reader of a data-only file (:mod:`glmclass.results.safe_io`) makes only the classes of a
fixed table: the package's own classes, found by walking its modules (never a name taken from
the file and imported). The file's model must be one of the registry's models
(:data:`glmclass.models.registry.MODELS`).
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
from functools import cache
from typing import IO, Any

from .models.registry import MODELS
from .results import io as results_io
from .results.safe_io import class_key

#: Packages whose classes a data-only file may hold; modules that import optional libraries
#: (Dask, formulaic, matplotlib) or evaluate code are not walked.
_PACKAGES = ("data", "likelihoods", "models", "numerics", "results", "rows", "solvers")
_MODULES = ("glmclass.families", "glmclass.links", "glmclass.binomial_terms",
            "glmclass.formula.bars", "glmclass.summary")
_SKIP = frozenset({"dask", "formulaic_engine", "namespace", "plot", "safe_io"})


@cache
def safe_classes() -> dict[str, type]:
    """The classes a data-only results file may name, by :func:`class_key`.

    Returns
    -------
    dict of str -> type
    """
    names = list(_MODULES)
    for pkg in _PACKAGES:
        module = importlib.import_module(f"glmclass.{pkg}")
        names += [m.name for m in pkgutil.walk_packages(module.__path__, f"glmclass.{pkg}.")
                  if m.name.rsplit(".", 1)[-1] not in _SKIP]
    out: dict[str, type] = {}
    for name in names:
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == name and \
                    not issubclass(obj, BaseException):
                key = class_key(obj)
                if key is not None:
                    out[key] = obj
    return out


def load(path: str | os.PathLike | IO[bytes], trusted: bool = False) -> Any:
    """Read results written by ``results.save(path)``.

    Parameters
    ----------
    path : str, os.PathLike or binary file object
    trusted : bool
        Needed for a file saved with ``format="pickle"``: loading a pickle runs code from the
        file, so pass True only for files you wrote yourself or trust as you would a script.
        A data-only file (``format="safe"``, the default) needs nothing: it is read as JSON
        and NumPy arrays, and nothing from it is run.

    Returns
    -------
    results
        The saved results (with their model): ``summary()``, ``predict(new)``,
        ``get_prediction(new)``, Wald tests, ``conf_int`` and ``gc.compare`` work as on the
        original; with ``remove_data=True`` what needs the rows says so.

    Raises
    ------
    ValueError
        "not a glmclass results file" for a file ``save`` did not write (empty, truncated,
        CSV, random bytes, another pickle); for a pickle without ``trusted=True`` (saying
        why); for a data-only file that names a class outside glmclass's or holds arrays of
        Python objects.

    Warns
    -----
    GlmclassWarning
        When the file was written by another glmclass version.
    """
    models = {entry.cls.__name__: entry.cls for entry in MODELS}
    return results_io.load(path, trusted=trusted, classes=safe_classes(), models=models)
