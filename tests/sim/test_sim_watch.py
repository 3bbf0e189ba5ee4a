"""Watchpoints on the sim target: ``pykern.debug.watch`` reports each matching access."""

import os
import sys

import numpy as np
import pytest

import pykern as cuda
from pykern import runtime as targets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_sim_pdb import run_pdb  # noqa: E402  (the scripted-pdb runner)


@pytest.fixture
def sim():
    saved = list(targets._chosen)
    cuda.set_target("sim")
    yield
    targets._chosen[:] = saved


@cuda.jit
def accumulate(x, y):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * 2
        y[0] += x[i]


def test_writes_to_a_slice_are_reported_with_thread_line_old_and_new(sim, capsys):
    x, y = np.arange(6, dtype=np.int32), np.zeros(1, np.int32)
    w = cuda.debug.watch(x, slice(2, 4), on="write")
    try:
        accumulate[2, 4](x, y)
    finally:
        w.remove()
    line = accumulate.py_func.__code__.co_firstlineno + 4
    assert [(h.thread, h.block, h.line, h.index, int(h.old), int(h.new)) for h in w.hits] == [
        ((2, 0, 0), (0, 0, 0), line, (2,), 2, 4), ((3, 0, 0), (0, 0, 0), line, (3,), 3, 6)]
    assert f"watch: {__file__}:{line}: write [2] 2 -> 4 by thread (2, 0, 0) of block (0, 0, 0)" in \
        capsys.readouterr().out
    assert y[0] == 30


def test_reads_and_a_condition(sim):
    x, y = np.arange(6, dtype=np.int32), np.zeros(1, np.int32)
    reads = cuda.debug.watch(x, 5, on="read", report=False)
    big = cuda.debug.watch(y, 0, on="access", when=lambda h: h.kind == "write" and h.new > 10, report=False)
    try:
        accumulate[1, 8](x, y)
    finally:
        reads.remove()
        big.remove()
    assert [(h.kind, int(h.old)) for h in reads.hits] == [("read", 5), ("read", 10)]
    assert [(h.thread[0], int(h.old), int(h.new)) for h in big.hits] == [(3, 6, 12), (4, 12, 20), (5, 20, 30)]


def test_an_unwatched_launch_passes_plain_arrays(sim):
    x, y = np.arange(6, dtype=np.int32), np.zeros(1, np.int32)
    w = cuda.debug.watch(np.zeros(3), 0)
    w.remove()
    accumulate[1, 8](x, y)
    assert w.hits == [] and x.tolist() == [0, 2, 4, 6, 8, 10]


WATCH_STOP = '''\
import numpy as np
import pykern as cuda

@cuda.jit
def k(x):
    i = cuda.grid(1)
    x[i] = i * 3

x = np.zeros(8, np.int32)
cuda.debug.watch(x, 6, on="write", stop=True)
k[1, 8](x)
print("OUT", x.tolist())
'''


def test_stop_opens_pdb_at_the_kernels_line_of_the_access(tmp_path):
    out, path = run_pdb(tmp_path, WATCH_STOP, ["p int(i)", "p int(x[6])", "continue"])
    assert f"watch: {path}:7: write [6] 0 -> 18 by thread (6, 0, 0) of block (0, 0, 0)" in out
    assert f"> {path}(7)k()" in out
    assert "(Pdb) 6\n" in out and "(Pdb) 18\n" in out
    assert "OUT [0, 3, 6, 9, 12, 15, 18, 21]" in out
