"""A copy of the documentation to build and execute, so that a test run writes nothing into the
repository.

The copy mirrors the repository: ``docs/`` and ``notebooks/`` are copied (the notebooks are
executed in place, once per session, by :meth:`DocsTree.execute`), every other top-level entry
is a symbolic link to the original, so that the pages' relative links to ``../README.md`` or
``../benchmarks/`` still find their targets.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _missing_docs_extra(exc: ImportError) -> str:
    return (f"the documentation tests need the docs extra ({exc.name} is missing): "
            f"pip install '.[docs]'")


class DocsTree:
    """The copied tree and the notebooks executed so far."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.docs = root / "docs"
        self.notebooks = root / "notebooks"
        self._errors: dict[str, str | None] = {}

    def execute(self, name: str) -> str | None:
        """Execute one notebook of the copy with nbclient, its outputs written into the copy;
        return the error (None when every cell ran). Each notebook runs once per session."""
        if name not in self._errors:
            self._errors[name] = self._run(self.notebooks / name)
        return self._errors[name]

    def execute_all(self) -> dict[str, str | None]:
        return {p.name: self.execute(p.name) for p in NOTEBOOKS}

    @staticmethod
    def _run(path: Path) -> str | None:
        try:
            import nbclient
            import nbformat
        except ImportError as exc:
            pytest.skip(_missing_docs_extra(exc))
        nb = nbformat.read(path, as_version=4)
        # inline figures whatever the caller's MPLBACKEND, so that the site shows them
        env = dict(os.environ, MPLBACKEND="module://matplotlib_inline.backend_inline",
                   PYDEVD_DISABLE_FILE_VALIDATION="1")
        client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                         resources={"metadata": {"path": str(path.parent)}})
        error = None
        try:
            client.execute(env=env)
        except nbclient.exceptions.CellExecutionError as exc:
            error = str(exc)
        nbformat.write(nb, path)
        return error


@pytest.fixture(scope="session")
def docs_tree(tmp_path_factory) -> DocsTree:
    root = tmp_path_factory.mktemp("site")
    ignore = shutil.ignore_patterns("_build", "generated", ".ipynb_checkpoints", "__pycache__")
    shutil.copytree(REPO / "docs", root / "docs", symlinks=True, ignore=ignore)
    shutil.copytree(REPO / "notebooks", root / "notebooks", ignore=ignore)
    for entry in REPO.iterdir():
        if entry.name not in ("docs", "notebooks") and not entry.name.startswith("."):
            (root / entry.name).symlink_to(entry)
    return DocsTree(root)

