"""Resources a long session keeps are bounded (a notebook redefining kernels all day).

The ``policy`` tests check the HIP module cache's bookkeeping -- LRU order, the
limit, reloading after an eviction, unloads deferred while launches may be in
flight -- with the HIP calls replaced by a recorder: they test our policy, not
HIP. ``test_real_library_*`` asks the real libamdhip64 what it can answer without
a device. ``test_redefining_kernels_*`` runs a notebook-like loop in a fresh
process and counts the entries of every per-process structure that could grow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from pykern.core.bounded import LRU, entries_limit
from pykern.runtime.hip import launch as hip_launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class RecordingDriver:
    """Stands in for ``hip_launch._ModuleCalls``: hands out handles, records every call;
    events complete when the test says so."""

    def __init__(self):
        self.calls: list = []
        self.next = 0x1000
        self.completed: set = set()

    def load(self, code_object, device):
        self.next += 0x1000
        self.calls.append(("load", code_object, self.next))
        return self.next

    def function(self, module, name):
        self.calls.append(("function", module, name))
        return module + 1

    def unload(self, module, device):
        self.calls.append(("unload", module))

    def fence(self, streams, device):
        events = [("event", s, len(self.calls)) for s in streams]
        self.calls.append(("fence", tuple(streams)))
        return events

    def done(self, events):
        return all(e in self.completed for e in events)

    def wait(self, events):
        self.calls.append(("wait", len(events)))
        self.completed.update(events)

    def synchronize(self, device):
        self.calls.append(("synchronize", device))

    def of(self, kind):
        return [c for c in self.calls if c[0] == kind]


class FakeStream:
    """What the cache needs of a pykern Stream: a handle, weakly referable."""

    def __init__(self, handle):
        self.handle = handle


def test_policy_lru_order_and_limit():
    d = RecordingDriver()
    cache = hip_launch.HipModuleCache(d, limit=lambda: 2)
    a, b = cache.acquire(b"a", 0), cache.acquire(b"b", 0)
    assert cache.acquire(b"a", 0) is a  # a hit: no load, and now the most recently used
    cache.acquire(b"c", 0)  # evicts b, not a
    assert len(cache) == 2 and b.handle is None and a.handle is not None
    assert [c[1] for c in d.of("load")] == [b"a", b"b", b"c"]
    assert d.of("unload") == [("unload", 0x3000)]  # b, never launched: unloaded at once
    assert cache.key(b"b", 0) not in cache and cache.key(b"a", 0) in cache


def test_policy_limit_is_the_shared_knob(monkeypatch):
    monkeypatch.setenv("PYKERN_MEMORY_CACHE_ENTRIES", "3")
    d = RecordingDriver()
    cache = hip_launch.HipModuleCache(d)
    for i in range(10):
        cache.acquire(bytes([i]), 0)
    assert len(cache) == 3 == entries_limit()
    monkeypatch.setenv("PYKERN_MEMORY_CACHE_ENTRIES", "0")  # 0 keeps no artifacts; a module in use stays
    cache.acquire(b"x", 0)
    assert len(cache) == 1 and len(d.of("unload")) == 11 - 1


def test_policy_unload_waits_for_launches_in_flight():
    d = RecordingDriver()
    cache = hip_launch.HipModuleCache(d, limit=lambda: 1)
    a = cache.acquire(b"a", 0)
    s = FakeStream(7)
    a.used_on(0, 0)
    a.used_on(s, 7)
    handle = a.handle
    cache.acquire(b"b", 0)  # evicts a: its launches on streams 0 and 7 may still be queued
    assert d.of("fence") == [("fence", (0, 7))]
    assert d.of("unload") == [] and cache.pending == 1
    cache.acquire(b"c", 0)  # a later load checks the events: not complete, still loaded
    assert ("unload", handle) not in d.calls and cache.pending == 1  # (b, never launched, went at once)
    d.completed.update(("event", st, i) for st in (0, 7) for i in range(len(d.calls)))
    cache.reap()
    assert ("unload", handle) in d.calls and cache.pending == 0
    assert d.of("synchronize") == []


def test_policy_a_stream_that_cannot_take_an_event_synchronizes_first():
    d = RecordingDriver()
    cache = hip_launch.HipModuleCache(d, limit=lambda: 1)
    a = cache.acquire(b"a", 0)
    a.used_on(0x5555, 0x5555)  # a raw handle: its owner may have destroyed it
    cache.acquire(b"b", 0)
    kinds = [c[0] for c in d.calls]
    assert kinds.index("synchronize") < kinds.index("unload") and d.of("fence") == []
    # a pykern Stream since collected (destroyed) likewise
    b = cache._loaded.peek(cache.key(b"b", 0))
    s = FakeStream(9)
    b.used_on(s, 9)
    del s
    cache.acquire(b"c", 0)
    assert len(d.of("synchronize")) == 2 and len(d.of("unload")) == 2


def test_policy_a_failing_fence_does_not_fail_the_load():
    class Failing(RecordingDriver):
        def fence(self, streams, device):
            raise RuntimeError("device in error")

    d = Failing()
    cache = hip_launch.HipModuleCache(d, limit=lambda: 1)
    cache.acquire(b"a", 0).used_on(0, 0)
    assert cache.acquire(b"b", 0).handle is not None
    assert len(d.of("unload")) == 1 and cache.pending == 0


def test_policy_waiting_unloads_are_bounded():
    d = RecordingDriver()
    cache = hip_launch.HipModuleCache(d, limit=lambda: 2)
    streams = [FakeStream(100 + i) for i in range(8)]
    for i in range(8):
        cache.acquire(bytes([i]), 0).used_on(streams[i], 100 + i)
    assert cache.pending <= 2  # never-completing events: the oldest are waited for
    assert len(d.of("wait")) == 8 - 2 - 2 and len(d.of("unload")) == 4
    cache.clear()
    assert len(cache) == 0 and cache.pending == 0 and len(d.of("unload")) == 8


class _Artifact:
    def __init__(self, binary, name="k"):
        self.binary, self.name, self.error_symbol = binary, name, None


def _bound_kernel(artifact):
    k = object.__new__(hip_launch.HipKernel)
    k.artifact, k.name, k.device_id = artifact, artifact.name, 0
    k._checked, k._tls, k.cooperative, k.params = {}, threading.local(), False, []
    k.limits = hip_launch.LaunchLimits(max_block_size=1024)
    k.kernarg_size = 8
    k._bind()
    return k


class _Launches:
    def __init__(self):
        self.functions = []

    def hipModuleLaunchKernel(self, fn, *rest):
        self.functions.append(fn.value if hasattr(fn, "value") else fn)


def test_policy_an_evicted_kernel_reloads_at_its_next_launch(monkeypatch):
    d = RecordingDriver()
    monkeypatch.setattr(hip_launch, "module_cache", hip_launch.HipModuleCache(d, limit=lambda: 1))
    lib = _Launches()
    monkeypatch.setattr(hip_launch, "_hip", lambda: lib)
    k = _bound_kernel(_Artifact(b"k"))
    first = k.function
    k.launch((1, 1, 1), (1, 1, 1), 0, bytes(8), 0)
    other = _bound_kernel(_Artifact(b"other"))  # evicts k's module
    assert k.function is None and d.of("unload") == []  # k's launch on stream 0 may be queued
    k.launch((1, 1, 1), (1, 1, 1), 0, bytes(8), 0)  # reloads (evicting other's)
    assert k.function is not None and k.function != first and lib.functions == [first, k.function]
    assert [c[1] for c in d.of("load")] == [b"k", b"other", b"k"]
    assert other.function is None
    assert k._module.handle is not None and k in k._module.kernels


def fast_path_kernel(monkeypatch, limit):
    """A jitted kernel with a "hip" overload whose HipKernel comes from a real gfx942 code
    object, loaded through a HipModuleCache of ``limit`` modules over a RecordingDriver (no
    device): ``(kernel, device arrays to launch it with, HipKernel, cache, driver, launches)``.
    Select the "hip" target (``targets._chosen``) around its launches."""
    import pykern as cuda
    from pykern.dispatch import compiler
    from pykern.dispatch.argument_types import argument_types
    from pykern.runtime.kernargs import get_packer, kernarg_size
    from pykern.runtime.memory.arrays import DeviceArray, Storage

    d = RecordingDriver()
    cache = hip_launch.HipModuleCache(d, limit=lambda: limit)
    monkeypatch.setattr(hip_launch, "module_cache", cache)
    lib = _Launches()
    monkeypatch.setattr(hip_launch, "_hip", lambda: lib)

    def scale(out, x, a):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * a

    k = cuda.jit(scale)
    args = [DeviceArray((16,), (4,), np.float32, Storage(p, 64, "hip")) for p in (0x10000, 0x20000)] + [2.0]
    argtypes = argument_types(args, "scale")[0]
    art, _ = compiler.compile_artifact(k, "amdgpu", argtypes, arch="gfx942")
    hk = object.__new__(hip_launch.HipKernel)
    hk.artifact, hk.name, hk.device_id = art, art.name, 0
    hk.params = hip_launch.explicit_params(art)
    hk.kernarg_size = max(art.kernarg_size, kernarg_size(hk.params))
    hk.packer = get_packer(hk.params, hk.kernarg_size)
    hk.limits = hip_launch.LaunchLimits(max_block_size=1024)
    hk._checked, hk._tls, hk.cooperative, hk.occupancy_estimate = {}, threading.local(), False, None
    hk._bind()
    k._overloads[("hip", argtypes)] = compiler.Overload(k, "hip", argtypes, art, hk)
    return k, args, hk, cache, d, lib


def test_policy_fast_paths_step_aside_after_an_eviction(monkeypatch):
    """The generated launch bakes the function handle in: after an eviction it must
    refuse (the full launch reloads) and a new one be made with the new handle."""
    from pykern import runtime as targets

    k, args, hk, cache, d, lib = fast_path_kernel(monkeypatch, 1)
    saved = list(targets._chosen)
    targets._chosen[:] = ["hip"]
    try:
        for _ in range(3):
            k[1, 16](*args)
        launcher = k[1, 16]
        assert launcher._fast is not None
        old = hk.function
        cache.acquire(b"another code object", 0)  # evicts the kernel's module
        assert hk.function is None
        misses = launcher._misses
        for _ in range(3):
            k[1, 16](*args)
        assert launcher._fast is not None and hk.function not in (None, old)
        assert launcher._misses == misses + 1  # one full launch reloads; a new fast path takes the rest
        assert lib.functions == [old] * 3 + [hk.function] * 3
    finally:
        targets._chosen[:] = saved


def test_lru_helper_evicts_least_recent_and_reports():
    gone = []
    m = LRU(limit=2, on_evict=lambda k, v: gone.append((k, v)))
    m.put("a", 1)
    m.put("b", 2)
    assert m.get("a") == 1
    m.put("c", 3)
    assert list(m) == ["a", "c"] and gone == [("b", 2)]
    assert m.peek("a") == 1 and list(m) == ["a", "c"]  # peek leaves the order
    assert m.pop("a") == 1 and gone == [("b", 2)]


# ------------------------------------------------------------------- the real library
def test_real_library_unload_of_an_invalid_module_is_a_hip_error():
    """hipModuleUnload of a null module returns a status (here, without a device, the runtime's
    own); it must come back as HipError with the status name, never abort the process."""
    from pykern.runtime.hip import library as hip

    ok, _why = hip.available()
    code = textwrap.dedent(
        """
        import json
        from pykern.core.errors import HipError
        from pykern.runtime.hip import library as hip
        from pykern.runtime.hip import launch as hip_launch
        try:
            lib = hip.lib()
        except HipError as e:
            print(json.dumps(["nolib", e.name])); raise SystemExit
        out = {}
        try:
            lib.hipModuleUnload(None)
            out["unload"] = None
        except HipError as e:
            out["unload"] = [e.code, e.name]
        hip_launch._ModuleCalls().unload(None, 0)  # swallowed: an eviction never fails the user's launch
        cache = hip_launch.HipModuleCache(limit=lambda: 1)
        try:
            cache.acquire(b"not a code object", 0)
            out["load"] = None
        except HipError as e:
            out["load"] = e.name
        out["left"] = [len(cache), cache.pending]
        print(json.dumps(out))
        """
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if isinstance(out, list):
        pytest.skip(f"no libamdhip64 here ({out[1]})")
    assert out["unload"] is not None and out["unload"][0] > 0 and out["unload"][1].startswith("hipError")
    if not ok:  # no device: nothing loads, and a failed load leaves no entry behind
        assert out["load"].startswith("hipError")
    assert out["left"][1] == 0 and out["left"][0] == (0 if out["load"] else 1)


# ------------------------------------------------------------------- a notebook's day
_LOOP = r"""
import gc, json, os, sys, threading
import numpy as np
import pykern as cuda
from pykern.core import bounded
from pykern.dispatch import compiler
from pykern.core import sources
from pykern.frontend import local_defs, fingerprint, resolve
from pykern.frontend.typeof import _VIEW_TYPES
from pykern.runtime import kernargs
from pykern.runtime.cpu import executor as cpu_executor
from pykern.dispatch import argument_types
from pykern.dispatch import launch_config
from pykern.codegen.cpu import tiers as cpu_tiers

N = int(sys.argv[1])
a = np.zeros(4)
d = cuda.to_device(np.zeros(4))

@cuda.jit
def long_lived(a, x):
    a[1] = x

def fds():
    return len(os.listdir("/proc/self/fd"))

peak = {}
def sizes():
    cpu_tiers.wait_all(120)  # O3 builds on their threads write cache entries: counted when done
    gc.collect()
    return {
        "in_memory": len(compiler._in_memory),
        "cpu_loaded": len(cpu_executor._loaded),
        "exec_texts": len(sources._texts),
        "lambdas": len(local_defs._lambdas),
        "flatteners": len(kernargs._flatteners),
        "flatteners_by_value": len(kernargs._flatteners_by_value),
        "packers": len(kernargs._packers),
        "launch_configs": len(launch_config._checked),
        "type_memo": len(argument_types._type_memo),
        "device_type_memo": len(_VIEW_TYPES),
        "code_facts": len(fingerprint._facts),
        "nested_defs": len(resolve._nested_defs),
        "launchers": len(long_lived._launchers),
        "overloads": len(long_lived._overloads),
        "threads": threading.active_count(),
        "fds": fds(),
    }

first = None
for i in range(N):
    ns = {"cuda": cuda}
    p = f"p{i}"  # parameter names change, as a notebook's do
    src = (f"@cuda.jit\ndef k({p}, x):\n    f = lambda v: v + {i}\n    {p}[0] = f(x)\n")
    exec(src, ns)
    ns["k"][1 + i % 300, 1](a, i % 7)
    assert a[0] == i % 7 + i, (i, a[0])
    long_lived[(i % 500 + 1, 1)](d if i % 3 == 0 else a, np.float32(i) if i % 2 else i)
    if i % 100 == 0:
        ns["k"].inspect_asm()
    if i == 200:
        first = sizes()
    if i % 250 == 0 or i == N - 1:
        for name, v in sizes().items():
            peak[name] = max(peak.get(name, 0), v)
print(json.dumps({"first": first, "peak": peak, "limit": bounded.entries_limit(),
                  "max_cached": kernargs._MAX_CACHED, "ncpu": os.cpu_count()}))
"""


@pytest.mark.parametrize("cache", ["off", "on"])
def test_redefining_kernels_keeps_every_structure_bounded(cache, tmp_path):
    """600 redefinitions (each bound is 32 or 64 entries: a structure that grows with them
    shows), each exec'd (the audit hook on), launched with a new grid and a lambda inside; a
    long-lived kernel launched with new grids and argument kinds. Every per-process structure
    stays under its bound (entries counted, not bytes)."""
    _redefine_and_check_bounds(600, cache, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("cache", ["off", "on"])
def test_a_long_notebook_day_keeps_every_structure_bounded(cache, tmp_path):
    """The same with 3000 redefinitions (minutes)."""
    _redefine_and_check_bounds(3000, cache, tmp_path)


def _redefine_and_check_bounds(n, cache, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, PYKERN_TARGET="cpu", PYKERN_CACHE=cache,
               PYKERN_CACHE_DIR=str(tmp_path / "cache"), PYKERN_EXEC_SOURCES="1",
               PYKERN_MEMORY_CACHE_ENTRIES="32")
    r = subprocess.run([sys.executable, "-c", _LOOP, str(n)], capture_output=True, text=True, env=env,
                       timeout=1500)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    peak, first, limit = out["peak"], out["first"], out["limit"]
    assert limit == 32
    assert peak["in_memory"] <= limit
    # loaded code, lambdas, per-function facts: only what is alive (weak references), never one per
    # redefinition
    for name in ("lambdas", "nested_defs"):
        assert peak[name] <= limit, (name, peak)
    # the in-memory cache's entries (its bound) keep their kernels' code and functions alive; the
    # live dispatchers keep theirs: the long-lived kernel's overloads and the newest cell's kernel,
    # each with up to two cpu tiers (the first build, and the O3 build that replaces it)
    assert peak["cpu_loaded"] <= limit + 2 * (peak["overloads"] + 1), peak
    # the same functions, and at most a couple more that a loaded machine's threads still hold at
    # the moment of counting (seen: one); 600 redefinitions would show as hundreds
    assert peak["code_facts"] <= limit + 4, peak
    # texts of every live exec'd function: pykern's own generated code (node classes, flatteners)
    assert peak["exec_texts"] <= first["exec_texts"] + limit, (first, peak)
    assert peak["flatteners_by_value"] <= limit and peak["flatteners"] <= limit
    for name in ("packers", "launch_configs", "type_memo", "device_type_memo"):
        assert peak[name] <= out["max_cached"], (name, peak)
    assert peak["launchers"] <= 64 and peak["overloads"] <= 4
    assert peak["threads"] <= first["threads"] + out["ncpu"]  # the cpu launch pool at most
    assert peak["fds"] <= first["fds"] + 4
