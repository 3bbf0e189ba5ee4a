"""The debugging notebook's watchpoint and breakpoint section, run in a real IPython kernel: the
watch names the two threads that write one element (on the compiled cpu target), and pdb stops at
the kernel's line in the cell, on the sim target, printing the thread's variables."""

import re

from notebook_kernel import need_jupyter
from test_notebook_samples import execute, outputs

need_jupyter()


def _text(cell):
    return "".join(o["text"] for o in outputs(cell, "stream"))


def test_a_watchpoint_and_a_breakpoint_find_the_wrong_index(tmp_path, monkeypatch):
    nb = execute("debugging.ipynb", tmp_path, monkeypatch)
    code = [c for c in nb.cells if c.cell_type == "code"]
    watch = next(c for c in code if "debug.watch(" in c.source)
    lines = [ln for ln in _text(watch).splitlines() if ln.startswith("watch: ")]
    assert len(lines) == 2, _text(watch)
    assert re.fullmatch(r"watch: .+:6: write \[2\] 2\.0 -> 8\.0 by thread \(2, 0, 0\) of block \(0, 0, 0\)",
                        lines[0]), lines
    assert re.fullmatch(r"watch: .+:6: write \[2\] 8\.0 -> 2\.0 by thread \(0, 1, 0\) of block \(0, 0, 0\)",
                        lines[1]), lines
    stop = next(c for c in code if "breakpoint()" in c.source)
    text = re.sub(r"\x1b\[[0-9;]*m", "", _text(stop))  # IPython's debugger colours its output
    m = re.search(r"\((\d+)\)transpose_scale\(\)", text)
    assert m, text
    assert stop.source.splitlines()[int(m.group(1)) - 1].strip() == "out[k] = 2 * a[r, c]"  # the cell's line
    answers = re.split(r"(?:ipdb>|\(Pdb\)) ", text)[1:]
    assert answers[0].strip() == "Dim3(x=0, y=1, z=0)"
    assert answers[1].strip() == "(np.int64(0), np.int64(1), np.int64(2))"
    assert answers[2].strip() == "(3, 2)"
    assert all(not outputs(c, "error") for c in code[-5:])
