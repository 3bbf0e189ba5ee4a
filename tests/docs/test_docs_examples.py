"""Every ```python example of the docs and the README runs, on the target the suite runs on.

The blocks of one page run in order in one namespace (a page's examples build on each other). A
```text block right after a python block is the output that block prints, and must match. Each
block runs from a real file, so kernels have source for pykern to read, as in a user's script.
"""

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def examples(text: str):
    """``(code, expected_output_or_None)`` for each python block of a markdown text."""
    blocks = [(m.group(1), m.group(2), m.start(), m.end()) for m in _BLOCK.finditer(text)]
    out = []
    for i, (lang, body, _start, end) in enumerate(blocks):
        if lang != "python":
            continue
        expected = None
        if i + 1 < len(blocks):
            nlang, nbody, nstart, _ = blocks[i + 1]
            if nlang == "text" and not text[end:nstart].strip():
                expected = nbody
        out.append((body, expected))
    return out


def _pages_with_examples():
    for page in PAGES:
        if examples(page.read_text()):
            yield pytest.param(page, id=str(page.relative_to(ROOT)))


def test_examples_are_found():
    assert len(list(_pages_with_examples())) >= 10
    md = "```python\nprint(1)\n```\n\n```text\n1\n```\n```python\nx = 2\n```\n"
    assert examples(md) == [("print(1)\n", "1\n"), ("x = 2\n", None)]


@pytest.mark.parametrize("page", list(_pages_with_examples()))
def test_page_examples_run(page, tmp_path):
    ns = {"__name__": "__docs_example__"}
    for i, (code, expected) in enumerate(examples(page.read_text())):
        path = tmp_path / f"{page.stem.replace('-', '_')}_{i}.py"
        path.write_text(code)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, str(path), "exec"), ns)
        if expected is not None:
            assert buf.getvalue().split() == expected.split(), f"{page.name} example {i} printed:\n{buf.getvalue()}"
