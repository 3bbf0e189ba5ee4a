"""The sample notebooks run top to bottom in a real IPython kernel on the cpu target
(issue 14 item 1); their cells assert their own results."""

import os
import re

import pytest

from notebook_kernel import ROOT, kernel_env, need_jupyter

need_jupyter()

NB_DIR = os.path.join(ROOT, "samples", "notebooks")


def execute(name, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    for k, v in kernel_env(tmp_path / "cache").items():  # the kernel inherits this environment
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("PYKERN_FULL_TRACEBACK", raising=False)
    nb = nbformat.read(os.path.join(NB_DIR, name), as_version=4)
    # raises CellExecutionError for any failing cell not tagged raises-exception
    NotebookClient(nb, timeout=600, startup_timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def outputs(cell, kind):
    return [o for o in cell.get("outputs", []) if o["output_type"] == kind]


def test_tour_runs_and_renders(tmp_path, monkeypatch):
    nb = execute("tour.ipynb", tmp_path, monkeypatch)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "target: cpu" in outputs(code[0], "stream")[0]["text"]
    assert all(not outputs(c, "error") for c in code)
    rich = [o["data"] for c in code for o in c.outputs if o["output_type"] in ("execute_result", "display_data")]
    assert any(d.get("text/markdown", "").startswith("```asm") for d in rich)  # the assembly, highlighted
    assert any("| vgprs |" in d.get("text/markdown", "") for d in rich)
    assert any(re.match(r"<pykern kernel saxpy at ", d.get("text/plain", "")) for d in rich)
    timeit = next(c for c in code if c.source.startswith("%timeit"))
    assert "per loop" in outputs(timeit, "stream")[0]["text"]


def test_debugging_notebook_shows_short_errors(tmp_path, monkeypatch):
    nb = execute("debugging.ipynb", tmp_path, monkeypatch)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in outputs(c, "error")]
    # the bounds error (KernelIndexError), the divergent barrier, the CompileError
    assert [e["ename"] for e in errors] == ["KernelIndexError", "KernelRuntimeError", "CompileError"]
    for e in errors:
        text = "\n".join(re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in e["traceback"])
        assert "Cell In[" in text and "pykern" + os.sep not in text, text
        assert len(text.splitlines()) <= 8, text
    compile_error = "\n".join(errors[2]["traceback"])
    assert "try:" in compile_error and "^" in compile_error and "hint:" in compile_error
    # locations in messages name the cell as IPython does, not the kernel's temporary file
    assert re.search(r"CompileError: Cell In\[\d+\]:4:5: error: try/except", compile_error), compile_error
    assert re.search(r"syncthreads\(\) at Cell In\[\d+\]:5 ", "\n".join(errors[1]["traceback"]))
