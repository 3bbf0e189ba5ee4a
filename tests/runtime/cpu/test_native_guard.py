"""runtime.native_guard: the native check-and-copy of numpy launch arguments.

Each refusal the Python guards make must be the native function's too, and what
it writes must be what ``struct`` packing of ``a.ctypes.data``, ``a.shape`` and
``a.strides`` writes (the launch tests in test_host_launch_fast.py run both ways)."""

import ctypes
import os
import struct
import sys

import numpy as np
import pytest

from pykern.core.llvm_host import llvm
from pykern.runtime import native_guard

_C, _F, _W = 0x1, 0x2, 0x400
_MASK = _C | _F | _W


@pytest.fixture(scope="module", autouse=True)
def _built():
    llvm()  # made only where LLVM is loaded
    if sys.implementation.name != "cpython" or sys.byteorder != "little" or struct.calcsize("P") != 8:
        pytest.skip("native guards are for 64-bit little-endian CPython")
    assert native_guard.available()  # the probes pass for this numpy: a layout change must be noticed


def _flags(a):
    return a.flags.num & _MASK


def _entry(a, at):
    """An entry for arrays like ``a``, its values at ``at``, ``at + 8``, ... in the buffer."""
    nd = a.ndim
    return (a.dtype, nd, _MASK, _flags(a), at, [at + 8 * (1 + k) for k in range(nd)],
            [at + 8 * (1 + nd + k) for k in range(nd)])


def _expected(*arrays):
    out = b""
    for a in arrays:
        out += struct.pack(f"<Q{2 * a.ndim}q", a.ctypes.data, *a.shape, *a.strides)
    return out


def _guard_for(*arrays):
    entries, at = [], 0
    for a in arrays:
        entries.append(_entry(a, at))
        at += 8 * (1 + 2 * a.ndim)
    return native_guard.make(entries), max(at, 8)


_LAYOUTS = {
    "vector": lambda: np.arange(7, dtype=np.float32),
    "strided": lambda: np.arange(20, dtype=np.int16)[1::3],
    "reversed": lambda: np.arange(5.0)[::-1],
    "C matrix": lambda: np.zeros((3, 4), np.complex64),
    "F matrix": lambda: np.asfortranarray(np.zeros((3, 4), np.int8)),
    "3-d slice": lambda: np.zeros((4, 5, 6), np.uint64)[::2, 1:, ::-3],
    "0-d": lambda: np.array(2.5),
    "empty": lambda: np.zeros((0, 3), np.bool_),
    "read-only": lambda: np.frombuffer(b"\0" * 32, np.float64),
}


@pytest.mark.parametrize("layout", list(_LAYOUTS))
def test_writes_what_struct_packing_of_the_arrays_fields_writes(layout):
    a, b = _LAYOUTS[layout](), np.ones(3, np.float64)
    g, size = _guard_for(a, b)
    buf = ctypes.create_string_buffer(size)
    assert g(buf, a, b) is True
    assert buf.raw == _expected(a, b)
    c, d = _LAYOUTS[layout](), np.ones(9, np.float64)  # other objects of the same kinds
    assert g(buf, c, d) is True
    assert buf.raw == _expected(c, d)


class _Sub(np.ndarray):
    pass


def _unlike(case, a):
    """``a`` (a writeable C-contiguous float32 vector) or another object, differing in ``case``."""
    if case == "subclass":
        return a.view(_Sub)  # every field alike, only the type differs
    if case == "dtype":
        return a.view(np.int32)
    if case == "byte order":
        return a.view(a.dtype.newbyteorder())
    if case == "dtype with metadata":
        return a.view(np.dtype(np.float32, metadata={"unit": "m"}))
    if case == "ndim":
        return a.reshape(1, -1)
    if case == "0-d":
        return np.float32(1.0) * np.ones((), np.float32)
    if case == "read-only":
        b = a.view()
        b.flags.writeable = False
        return b
    if case == "not contiguous":
        return a[::2]
    if case == "not an array":
        return {"int": 3, "list": [1.0] * 8, "None": None, "str": "x" * 100}
    raise AssertionError(case)


_CASES = ["subclass", "dtype", "byte order", "dtype with metadata", "ndim", "0-d", "read-only", "not contiguous"]


@pytest.mark.parametrize("case", _CASES)
@pytest.mark.parametrize("position", [0, 2])
def test_refuses_an_argument_unlike_its_entry(case, position):
    arrays = [np.zeros(8, np.float32) for _ in range(3)]
    g, size = _guard_for(*arrays)
    buf = ctypes.create_string_buffer(size)
    assert g(buf, *arrays) is True
    arrays[position] = _unlike(case, arrays[position])
    assert g(buf, *arrays) is False


def test_refuses_what_is_not_a_numpy_array_and_a_wrong_count():
    a = np.zeros(8, np.float32)
    g, size = _guard_for(a, a)
    buf = ctypes.create_string_buffer(size)
    for other in _unlike("not an array", a).values():
        assert g(buf, a, other) is False
        assert g(buf, other, a) is False
    assert g(buf, a) is False
    assert g(buf, a, a, a) is False
    assert g(buf) is False
    assert g(buf, a, a) is True


def test_the_guard_keeps_its_dtypes_alive():
    """The table holds dtype ids: a dtype made for the entry must not be collected
    (its id then another object's)."""
    import gc

    dt = np.dtype([("x", np.float32), ("y", np.int32)])
    a = np.zeros(4, dt)
    g, size = _guard_for(a)
    del dt
    gc.collect()
    assert g(ctypes.create_string_buffer(size), a) is True


_CACHED_LAUNCHES = '''
import sys
import numpy as np
import pykern as cuda
from pykern.runtime import native_guard

@cuda.jit
def k(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * x[i]

native_guard.countdown[0] = 40
out, x = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
seen = []
for n in range(100):
    x[0] = n
    k[1, 8](out, x)
    assert (out == 2 * x).all(), n
    seen.append("llvmlite.binding" in sys.modules)
    if n == 3:
        print(k[1, 8]._fast.__globals__.get("_ncall") is not None)
g = k[1, 8]._fast.__globals__
print(seen[3], seen[-1], g.get("_native") is not None, g.get("_ncall") is not None)
'''


def test_a_process_of_cached_kernels_loads_llvm_only_after_many_launches(tmp_path):
    """Cached kernels load without LLVM; the numpy guards stay Python and the call
    ctypes' until the countdown (``UPGRADE_AFTER``, 40 here) runs out, then the
    launcher's fast path is made again with native code, with the same results throughout."""
    import subprocess

    script = tmp_path / "cached_launches.py"
    script.write_text(_CACHED_LAUNCHES)
    import pykern

    repo = os.path.dirname(os.path.dirname(os.path.abspath(pykern.__file__)))
    env = dict(os.environ, PYKERN_CACHE_DIR=str(tmp_path / "cache"), PYKERN_TARGET="cpu", PYKERN_PRELOAD="off",
               PYTHONPATH=os.pathsep.join(filter(None, (repo, os.environ.get("PYTHONPATH")))))
    env.pop("PYKERN_CACHE", None)
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout.split() == ["True"] * 5  # compiled here: LLVM loaded from the start
    assert runs[1].stdout.split() == ["False", "False", "True", "True", "True"]  # from the cache: until the countdown ran out


_SPIN = """
define void @spin(ptr %buf, ptr %ctx, i64 %first, i64 %last) {
entry:
  store i64 %first, ptr %buf
  %b1 = getelementptr i64, ptr %buf, i64 1
  store i64 %last, ptr %b1
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %body]
  %flag = load volatile i64, ptr %ctx
  %seen = icmp ne i64 %flag, 0
  %tired = icmp eq i64 %i, 4000000000
  %stop = or i1 %seen, %tired
  br i1 %stop, label %done, label %body
body:
  %i1 = add i64 %i, 1
  br label %loop
done:
  %b2 = getelementptr i64, ptr %buf, i64 2
  %s = zext i1 %seen to i64
  store i64 %s, ptr %b2
  ret void
}
"""


def test_the_native_call_passes_its_arguments_and_releases_the_gil():
    """``make_call``: the entry gets the buffers' addresses and the block range; while
    it runs, another Python thread runs (here: sets the flag the entry waits for)."""
    import threading
    import time

    from pykern.runtime.cpu.executor import _RUNFN

    ll = llvm()
    from pykern.core.llvm_host import new_host_target_machine

    eng = ll.create_mcjit_compiler(ll.parse_assembly(""), new_host_target_machine())
    eng.add_module(ll.parse_assembly(_SPIN))
    eng.finalize_object()
    fn = _RUNFN(eng.get_function_address("spin"))
    call = native_guard.make_call(fn, 3, 11)
    buf, ctx = ctypes.create_string_buffer(24), ctypes.create_string_buffer(8)
    flag = ctypes.c_int64.from_buffer(ctx)
    t = threading.Thread(target=lambda: (time.sleep(0.02), setattr(flag, "value", 1)))
    t.start()
    assert call(buf, ctx) is None
    t.join()
    assert struct.unpack("<3q", buf.raw) == (3, 11, 1)
    with pytest.raises(TypeError):
        call(buf)
    del eng  # (after the last call)
