"""The tour notebook is a page of the site, with the outputs of a run made while building it."""

import html
import re

import pytest

from .conftest import load_ext


def _ext():
    return load_ext("pykern_notebook")


def test_tour_page_shows_the_notebook_and_its_outputs(built_docs):
    # the page's text: highlighting splits code into spans
    page = html.unescape(re.sub(r"<[^>]+>", "", (built_docs / "tour.html").read_text()))
    assert "pykern-notebook:" not in page  # the marker was replaced
    assert "A tour of pykern" in page and "block_sum" in page
    assert "target: cpu" in page  # a printed line
    assert "<pykern kernel saxpy at" in page  # a returned value's repr
    assert "s_endpgm" in page and re.search(r"\.\.\. \(\d+ more lines\)", page)  # the gfx942 listing, cut
    assert "vgprs" in page  # the resources table
    assert "per loop" in page  # %timeit's output
    index = (built_docs / "getting-started.html").read_text()
    assert 'href="tour.html' in index


def test_notebook_outputs_become_fenced_blocks():
    nbformat = pytest.importorskip("nbformat")
    ext = _ext()
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Title"),
        nbformat.v4.new_code_cell("print('hi')\n%timeit f()", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="\x1b[31mhi\x1b[0m\n"),
            nbformat.v4.new_output("execute_result", data={"text/markdown": "```asm\n" + "s_nop 0\n" * 50 + "```"},
                                   execution_count=1),
            nbformat.v4.new_output("execute_result", data={"text/plain": "x = ```"}, execution_count=2),
        ]),
        nbformat.v4.new_markdown_cell("```python\n# a comment, not a heading\n```"),
    ])
    md = ext.to_markdown(nb)
    assert md.startswith("### Title\n\n```ipython3\nprint('hi')\n%timeit f()\n```\n\n```text\nhi\n```")
    listing = md.split("```asm\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert listing[:ext.MAX_OUTPUT_LINES] == ["s_nop 0"] * ext.MAX_OUTPUT_LINES
    assert listing[ext.MAX_OUTPUT_LINES:] == [f"... ({50 - ext.MAX_OUTPUT_LINES} more lines)"]
    assert "````text\nx = ```\n````" in md  # an output holding a fence gets a longer one
    assert "```python\n# a comment, not a heading\n```" in md
