"""Watchpoints on the compiled cpu target: ``pykern.debug.watch`` makes a launch of a watched
array run the kernel's build with the sanitizer's access hooks, which report each matching access
(thread, block, the kernel's line, old and new value) -- the same hits as on the sim target."""

import numpy as np
import pytest

import pykern as cuda
from pykern import runtime as targets


def _on(target):
    saved = list(targets._chosen)
    cuda.set_target(target)
    return saved


@pytest.fixture
def cpu():
    saved = _on("cpu")
    yield
    targets._chosen[:] = saved


@cuda.jit
def scale_and_count(x, out, total):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 2
        cuda.atomic.add(total, 0, 1)


LINE = scale_and_count.py_func.__code__.co_firstlineno + 4


def _hits(w):
    return [(h.kind, h.thread, h.block, h.line, h.index, float(h.old), float(h.new)) for h in w.hits]


def test_writes_reads_and_atomics_are_reported_with_thread_line_old_and_new(cpu, capsys):
    x, out, total = np.arange(8, dtype=np.float32), np.zeros(8, np.float32), np.zeros(1, np.int32)
    scale_and_count[2, 4](x, out, total)  # an unwatched launch first: its fast path must not hide the watch
    scale_and_count[2, 4](x, out, total)
    out[:] = 0
    w = cuda.debug.watch(out, slice(4, 6), on="write", when=lambda h: h.thread[0] == 0 or h.new > 9)
    r = cuda.debug.watch(x, 5, on="read", report=False)
    t = cuda.debug.watch(total, 0, on="access", report=False)
    try:
        scale_and_count[2, 4](x, out, total)
    finally:
        for v in (w, r, t):
            v.remove()
    assert _hits(w) == [("write", (0, 0, 0), (1, 0, 0), LINE, (4,), 0.0, 8.0),
                        ("write", (1, 0, 0), (1, 0, 0), LINE, (5,), 0.0, 10.0)]
    assert _hits(r) == [("read", (1, 0, 0), (1, 0, 0), LINE, (5,), 5.0, 5.0)]
    assert [(h.kind, int(h.old), int(h.new)) for h in t.hits] == [("atomic", 16 + k, 17 + k) for k in range(8)]
    assert f"watch: {__file__}:{LINE}: write [4] 0.0 -> 8.0 by thread (0, 0, 0) of block (1, 0, 0)" in \
        capsys.readouterr().out
    assert out.tolist() == (x * 2).tolist()
    scale_and_count[2, 4](x, out, total)  # removed: no more hits
    assert len(w.hits) == 2


def test_the_same_hits_as_on_the_sim_target():
    got = {}
    for target in ("cpu", "sim"):
        saved = _on(target)
        x, out, total = np.arange(8, dtype=np.float32), np.zeros(8, np.float32), np.zeros(1, np.int32)
        w = cuda.debug.watch(out, slice(None), on="write", report=False)
        try:
            scale_and_count[2, 4](x, out, total)
        finally:
            w.remove()
            targets._chosen[:] = saved
        got[target] = _hits(w)
    assert got["cpu"] == got["sim"] and len(got["cpu"]) == 8


@cuda.jit
def stencil(a, out):
    i, j = cuda.grid(2)
    if 0 < i < a.shape[0] - 1 and j < a.shape[1]:
        out[i, j] = a[i - 1, j] + a[i + 1, j]


def test_a_device_array_and_a_two_dimensional_index(cpu):
    a = cuda.to_device(np.arange(20, dtype=np.float64).reshape(4, 5))
    out = cuda.device_array((4, 5), np.float64)
    w = cuda.debug.watch(out, (2, 3), on="write", report=False)
    try:
        stencil[(1, 1), (4, 8)](a, out)
    finally:
        w.remove()
    assert [(h.thread, h.index, float(h.new)) for h in w.hits] == [((2, 3, 0), (2, 3), 8.0 + 18.0)]
