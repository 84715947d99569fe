"""The documentation site builds with Sphinx, warnings as errors, from the Markdown pages, the
executed notebooks and the docstrings; the API reference has a page for every public name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import glmclass as gc
import glmclass.formula.api as gcf

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_site_builds_with_warnings_as_errors(docs_tree, tmp_path):
    for module in ("sphinx", "myst_nb", "numpydoc", "furo"):   # the docs extra
        pytest.importorskip(module, reason=f"the site needs the docs extra ({module}): "
                                           "pip install '.[docs]'")
    docs_tree.execute_all()         # failures are reported by test_notebooks.py
    out = tmp_path / "html"
    env = dict(os.environ, GLMCLASS_DOCS_EXECUTE="off")   # the notebooks ran just above
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                           "-b", "html", str(docs_tree.docs), str(out)],
                          cwd=docs_tree.root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stderr[-20000:]}"

    generated = out / "generated"
    pages = ([f"glmclass.{n}" for n in gc.__all__]
             + [f"glmclass.plot.{n}" for n in gc.plot.__all__]
             + [f"glmclass.formula.api.{n}" for n in gcf.__all__])
    missing = [p for p in pages if not (generated / f"{p}.html").exists()]
    assert not missing, f"no API reference page for {missing}"

    for nb in NOTEBOOKS:
        html = (out / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert "cell_output" in html, f"the site shows no outputs of {nb.name}"
    tour = (out / "notebooks" / "tour.html").read_text(encoding="utf-8")
    assert tour.count("<img") >= 3 and "glmclass-summary" in tour
    index = (out / "index.html").read_text(encoding="utf-8")
    for page in ("getting_started", "user_guide/coming_from", "reference"):
        assert f'href="{page}.html"' in index, f"{page} is not in the navigation"
