"""Every ```python block of the docs runs.

The blocks of one page run in order in one namespace, as a reader pastes them into one session
(later blocks use the names of earlier ones). A block that is deliberately not runnable (a
sketch with placeholders, a call that needs a file or a cluster the reader has and CI has not)
is marked on the line just above its fence with the HTML comment

    <!-- docs-test: skip -->

which Markdown renderers and Sphinx/MyST do not show. A block that demonstrates an error is
marked ``<!-- docs-test: raises ValueError -->`` (any exception class name): it must raise
that exception. See ``docs/index.md`` ("Examples in these pages").
"""

from __future__ import annotations

import re
import sys
import types
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
FENCE = re.compile(r"(?:<!--\s*docs-test:\s*(?P<mark>[^>]*?)\s*-->\s*\n)?"
                   r"^```python[ \t]*\n(?P<code>.*?)^```[ \t]*$", re.M | re.S)


def blocks(page: Path) -> list[tuple[int, str, str]]:
    """(line, marker, code) of each ```python block of a page."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start("code")) + 1, (m.group("mark") or "").strip(),
             m.group("code")) for m in FENCE.finditer(text)]


def test_pages_have_blocks_and_markers_are_known():
    assert sum(len(blocks(p)) for p in PAGES) >= 40
    for page in PAGES:
        for line, mark, _ in blocks(page):
            assert mark == "" or mark == "skip" or re.fullmatch(r"raises \w+", mark), \
                f"{page.name}:{line}: unknown docs-test marker {mark!r}"


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run(page, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # a block that writes a file writes it here
    module = types.ModuleType(f"docs_{page.stem}")  # a real module: dataclasses look it up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    for line, mark, code in blocks(page):
        if mark == "skip":
            continue
        where = f"{page.relative_to(ROOT)}:{line}"
        compiled = compile(code, where, "exec")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the pages show warnings on purpose
            if mark.startswith("raises "):
                name = mark.split()[1]
                with pytest.raises(Exception) as info:  # noqa: PT011 - checked by name below
                    exec(compiled, namespace)
                assert any(c.__name__ == name for c in type(info.value).__mro__), \
                    f"{where}: raised {type(info.value).__name__}, not {name}"
            else:
                try:
                    exec(compiled, namespace)
                except Exception as exc:
                    pytest.fail(f"{where}: {type(exc).__name__}: {exc}", pytrace=False)
