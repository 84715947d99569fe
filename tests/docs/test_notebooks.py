"""Every notebook of notebooks/ runs from top to bottom (nbclient, a fresh kernel each), so that
none can go stale; the executed copies are what the site test builds. The notebooks of this
package are stored without outputs (the site shows the outputs of its own run); a notebook
stored with outputs runs all the same."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_without_errors_and_draws(docs_tree, path):
    error = docs_tree.execute(path.name)
    assert error is None, f"{path.name} failed:\n{error}"
    import nbformat

    nb = nbformat.read(docs_tree.notebooks / path.name, as_version=4)
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                 for o in c.get("outputs", []))
    assert images >= 1, f"{path.name} drew no figure"


def test_a_notebook_per_model_family_and_a_tour():
    names = {p.stem for p in NOTEBOOKS}
    assert {"tour", "glm_links", "multinomial", "generative", "bayes_evidence",
            "discriminant_functions", "perceptron", "gradient_fitting", "robust_link"} <= names
