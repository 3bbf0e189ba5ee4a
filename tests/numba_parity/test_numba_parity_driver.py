"""numba.cuda's driver-level host API on the cpu target: the context's raw allocations
(``memalloc``, ``memhostalloc``, ``mempin``, ``memallocmanaged``) as numba's MemoryPointer
family, ``driver.host_memory_extents``/``host_memory_size``, the pending-frees queue
(``ctx.deallocations``), ``Dispatcher.recompile()``/``.stats``, and the small runtime queries
(``is_supported_version``, ``cuda_error``, ``detect``, ``gpus.lst``, ``require_context``).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykern as cuda
from pykern.numba_compat.cudadrv import driver

pytestmark = pytest.mark.usefixtures("cpu_target")


def _bytes_at(ptr: int, n: int) -> bytes:
    return ctypes.string_at(ptr, n)


@pytest.mark.parametrize("alloc", [
    lambda ctx: ctx.memalloc(64),
    lambda ctx: ctx.memhostalloc(64),
    lambda ctx: ctx.memhostalloc(64, mapped=True),
    lambda ctx: ctx.memallocmanaged(64),
])
def test_raw_allocations_copy_and_memset_like_numba(alloc):
    ctx = cuda.current_context()
    mem = alloc(ctx)
    assert driver.is_device_memory(mem) and mem.size == 64
    driver.require_device_memory(mem)
    src = np.arange(16, dtype=np.uint32)
    driver.host_to_device(mem, src, src.nbytes)
    back = np.zeros_like(src)
    driver.device_to_host(back, mem, back.nbytes)
    np.testing.assert_array_equal(back, src)
    mem.memset(0xAB, 8)
    driver.device_to_host(back, mem, back.nbytes)
    assert back[:2].tolist() == [0xABABABAB] * 2 and back[2:].tolist() == src[2:].tolist()
    assert int(mem.handle) == mem.handle.value == mem.device_ctypes_pointer.value


def test_views_count_references_and_point_at_their_offset():
    ctx = cuda.current_context()
    m = ctx.memalloc(1024)
    base = int(m.handle)
    v1 = m.view(16)
    assert int(v1.owner.handle) == base and int(v1.handle) == base + 16 and m.refct == 2
    v2 = v1.view(16, 48)
    assert int(v2.handle) == base + 32 and v2.size == 32 and int(v2.owner.handle) == base and m.refct == 3
    del v2
    assert m.refct == 2
    del v1
    assert m.refct == 1
    with pytest.raises(RuntimeError):
        m.view(0, 2048)


def test_a_view_keeps_its_allocation_alive_and_data_round_trips_through_it():
    m = cuda.current_context().memalloc(64)
    data = np.arange(8, dtype=np.int64)
    driver.host_to_device(m, data, data.nbytes)
    v = m.view(8 * 4)
    del m
    gc.collect()
    out = np.zeros(4, np.int64)
    driver.device_to_host(out, v, out.nbytes)
    assert out.tolist() == [4, 5, 6, 7]


def test_memory_pointer_finalizer_runs_once_when_the_last_reference_goes():
    calls = []
    ctx = cuda.current_context()
    p = driver.MemoryPointer(ctx, ctypes.c_void_p(0xDEADBEEF), 40, finalizer=lambda: calls.append(1))
    owned = p.own()
    assert p.refct == 2
    del owned
    assert calls == [] and p.refct == 1
    del p
    assert calls == [1]
    q = driver.MemoryPointer(ctx, 0x1000, 8, finalizer=lambda: calls.append(2))
    q.free()
    q.free()
    assert calls == [1, 2]


def test_mempin_shares_the_host_arrays_memory():
    ary = np.arange(10, dtype=np.int64)
    mem = cuda.current_context().mempin(ary, ary.ctypes.data, ary.nbytes, mapped=True)
    assert mem.host_pointer.value == ary.ctypes.data and int(mem.device_pointer) == ary.ctypes.data
    mem.memset(0, 8)
    assert ary[0] == 0 and ary[1] == 1


@pytest.mark.parametrize("obj, span", [
    (np.arange(100, dtype=np.int64), 800),
    (np.asfortranarray(np.arange(100, dtype=np.int64).reshape(2, 50)), 800),
    (np.asarray(np.uint32(1234)), 4),
    (np.arange(20.0)[::2], 9 * 16 + 8),  # first to last element of a strided view
])
def test_host_memory_extents_and_size(obj, span):
    s, e = driver.host_memory_extents(obj)
    assert (s, e) == (obj.ctypes.data, obj.ctypes.data + span)
    assert driver.host_memory_size(obj) == span


def test_host_memory_size_of_ctypes_objects():
    class S(ctypes.Structure):
        _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int)]

    assert driver.host_memory_size(S(1, 2)) == ctypes.sizeof(S)
    assert driver.host_memory_size(ctypes.c_double(1.5)) == 8
    assert driver.host_memory_size((ctypes.c_int * 100)()) == 400


def test_deallocations_clear_and_length():
    ctx = cuda.current_context()
    deallocs = ctx.deallocations
    deallocs.clear()
    assert len(deallocs) == 0 and len(ctx.memory_manager.deallocations) == 0
    with cuda.defer_cleanup():
        ctx.deallocations.clear()  # inside a block: nothing to run (numba's rule), no error


def test_runtime_queries():
    assert cuda.is_supported_version() is True
    assert cuda.cuda_error() is None
    assert cuda.gpus.lst == list(cuda.gpus)
    assert cuda.require_context(len) is len


def test_detect_says_how_many_devices_it_found(capsys):
    assert cuda.detect() is True
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"Found {len(cuda.gpus)} CUDA devices")


def test_recompile_reads_globals_again_and_stats_count_hits(tmp_path, monkeypatch, cache_env):
    monkeypatch.setenv("PYKERN_CACHE_DIR", str(tmp_path))
    ns = {"cuda": cuda, "Z": 1}
    exec(compile("def add(r, x):\n    r[0] = x[0] + Z\n", str(tmp_path / "mod_recompile.py"), "exec"), ns)
    (tmp_path / "mod_recompile.py").write_text("def add(r, x):\n    r[0] = x[0] + Z\n")
    k = cuda.jit(ns["add"])
    r = np.zeros(1)
    k[1, 1](r, np.array([2.0]))
    assert r[0] == 3.0
    ns["Z"] = 10
    k[1, 1](r, np.array([2.0]))
    assert r[0] == 3.0  # frozen when compiled, as numba
    k.recompile()
    k[1, 1](r, np.array([2.0]))
    assert r[0] == 12.0
    st = k.stats
    assert st.cache_path == str(tmp_path)
    assert sum(st.cache_hits.values()) + sum(st.cache_misses.values()) == 1
    k2 = cuda.jit(ns["add"])  # a new dispatcher of the same function: a cache hit
    k2[1, 1](r, np.array([3.0]))
    assert r[0] == 13.0 and sum(k2.stats.cache_hits.values()) == 1


def test_host_allocations_are_freed_by_free_and_with_their_last_reference():
    import weakref

    ctx = cuda.current_context()
    for mem in (ctx.memhostalloc(32), ctx.memhostalloc(32, mapped=True), ctx.memallocmanaged(32)):
        assert mem.is_managed
        keeper = weakref.ref(mem._keeper)
        mem.free()
        assert keeper() is None
    mem = ctx.memallocmanaged(32)
    keeper = weakref.ref(mem._keeper)
    view = mem.view(8)
    del mem
    assert keeper() is not None  # the view keeps it
    del view
    gc.collect()
    assert keeper() is None


def test_host_memory_extents_of_other_buffers_share_their_memory():
    buf = bytearray(b"abcdefgh")
    s, e = driver.host_memory_extents(buf)
    assert e - s == 8 and ctypes.string_at(s, 8) == b"abcdefgh"


_HAVE_HIP = any(os.path.exists(os.path.join(d, "libamdhip64.so.5")) for d in ("/usr/lib/x86_64-linux-gnu", "/opt/rocm/lib"))


@pytest.mark.skipif(not _HAVE_HIP, reason="libamdhip64-5 not installed")
def test_hip_branches_call_the_real_runtime_and_raise_hiperror_without_a_device():
    # the allocations' "hip" paths, run against the real libamdhip64 (no GPU here): each reaches
    # its own HIP call and fails as a HipError naming it, never a crash or a ctypes error
    code = textwrap.dedent("""
        import json
        import numpy as np
        from pykern.numba_compat.cudadrv import driver, memory
        from pykern.core.errors import HipError
        memory._on_hip = lambda: True  # the target choice only; every HIP call is the real one
        a = np.zeros(16)
        out = {}
        for name, f in [("memhostalloc", lambda: driver.memhostalloc(None, 64, mapped=True)),
                        ("mempin", lambda: driver.mempin(None, a, a.ctypes.data, a.nbytes, mapped=True)),
                        ("memallocmanaged", lambda: driver.memallocmanaged(None, 64))]:
            try:
                f()
                out[name] = "no error"
            except HipError as e:
                out[name] = e.call
        print(json.dumps(out))
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {
        "memhostalloc": "hipHostMalloc", "mempin": "hipHostRegister", "memallocmanaged": "hipMallocManaged"}
