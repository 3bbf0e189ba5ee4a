"""Sample notebooks rendered as pages, executed at every build.

A page whose source has a line ``% pykern-notebook: samples/notebooks/tour.ipynb`` (a MyST
comment; the path is from the repository root) gets that line replaced by the notebook: its
markdown cells as they are, its code cells as highlighted Python, each followed by the outputs
it printed or returned when the notebook ran top to bottom in a real IPython kernel on the cpu
target (nbclient, as ``tests/notebooks`` runs it). A cell that raises, or a notebook that
cannot be run, is a build warning, so ``sphinx-build -W`` fails: the page never shows code whose
output it did not see. The stored notebook keeps no outputs; nothing is written back to it.
"""

from __future__ import annotations

import os
import re
import tempfile

from sphinx.util import logging

logger = logging.getLogger(__name__)

MARKER = re.compile(r"^% pykern-notebook: (\S+)\s*$", re.M)
#: outputs longer than this many lines are cut (the assembly listing), saying how much was left out
MAX_OUTPUT_LINES = 40
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def execute(path: str, root: str):
    """The notebook at ``path``, run in a fresh kernel on the cpu target, with its outputs."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="pykern-docs-nb-") as tmp:
        env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE_DIR=os.path.join(tmp, "cache"),
                   PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        NotebookClient(nb, timeout=600, startup_timeout=300, kernel_name="python3").execute(cwd=tmp, env=env)
    return nb


def _cut(text: str) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= MAX_OUTPUT_LINES:
        return "\n".join(lines)
    return "\n".join(lines[:MAX_OUTPUT_LINES] + [f"... ({len(lines) - MAX_OUTPUT_LINES} more lines)"])


def _fence(lang: str, body: str) -> str:
    ticks = "````" if "```" in body else "```"
    return f"{ticks}{lang}\n{body}\n{ticks}"


def _output(out) -> str:
    kind = out["output_type"]
    if kind == "stream":
        return _fence("text", _cut(_ANSI.sub("", out["text"])))
    if kind == "error":
        return _fence("text", _cut(_ANSI.sub("", "\n".join(out["traceback"]))))
    data = out.get("data", {})
    md = data.get("text/markdown")
    if md:
        fenced = re.fullmatch(r"```(\w*)\n(.*?)\n?```\s*", md, re.S)
        if fenced:  # a listing: cut it as text, keep its highlighting
            return _fence(fenced.group(1), _cut(fenced.group(2)))
        return md
    return _fence("text", _cut(data.get("text/plain", "")))


def _demote(markdown: str) -> str:
    """Headings one level down (outside code fences): the page has its own title, and the
    notebook's title becomes its first section, not a second page in the navigation."""
    out, fence = [], None
    for line in markdown.splitlines():
        m = re.match(r"\s*(`{3,}|~{3,})", line)
        if m and (fence is None or m.group(1).startswith(fence)):
            fence = None if fence else m.group(1)
        elif fence is None and re.match(r"#{1,5} ", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out)


def to_markdown(nb) -> str:
    """MyST text of an executed notebook: markdown cells (headings one level down), code cells
    and their outputs."""
    parts = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            parts.append(_demote(cell.source))
        elif cell.cell_type == "code":
            parts.append(_fence("ipython3", cell.source))
            parts += [_output(o) for o in cell.get("outputs", [])]
    return "\n\n".join(parts) + "\n"


def _source_read(app, docname, source):
    root = os.path.dirname(app.srcdir)

    def render(m):
        path = os.path.join(root, m.group(1))
        try:
            nb = execute(path, root)
        except Exception as e:  # the build fails under -W, naming the cell that raised
            logger.warning("notebook %s did not run: %s", m.group(1), str(e).strip()[-2000:],
                           location=docname)
            return f"(the notebook `{m.group(1)}` did not run when these docs were built)"
        return to_markdown(nb)

    source[0] = MARKER.sub(render, source[0])


def setup(app):
    app.connect("source-read", _source_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
