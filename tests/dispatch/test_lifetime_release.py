"""Kernel lifetime (issue 10): a notebook redefines kernels all day.

A kernel no longer referenced must give back its library (dlclose), its file
descriptor and its mappings; the in-process reuse map is bounded; running out
of file descriptors gives a true error, not "install a linker". Every check
runs in a fresh interpreter (RSS, fd and mapping counts of the test process
would mix with everything else the suite does)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

# Shared by the scripts: N distinct kernels made the way a notebook makes them
# (source in linecache under a cell name, a new function object per run).
PRELUDE = textwrap.dedent('''
    import gc, json, linecache, os, sys
    import numpy as np
    import pykern
    pykern.set_target("cpu")

    def rss_kb():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))

    def nfds():
        return len(os.listdir("/proc/self/fd"))

    def nmaps():  # what a kernel maps: code, read-only data, files (its library); not the
        # anonymous rw/--- regions of thread stacks and big mallocs, which come and go with
        # the threads and the allocator (a thread stack kept for reuse is 2 mappings)
        with open("/proc/self/maps") as f:
            rows = [line.split() for line in f]
        return sum(1 for r in rows if len(r) > 5 or r[1] not in ("rw-p", "---p"))

    def cell(i, tag="c"):
        src = ("def k(a):\\n"
               "    j = pykern.grid(1)\\n"
               "    if j < a.size:\\n"
               f"        a[j] = {i}.0 + j\\n")
        name = f"<cell-{tag}-{i}>"
        linecache.cache[name] = (len(src), None, src.splitlines(True), name)
        ns = {"pykern": pykern}
        exec(compile(src, name, "exec"), ns)
        return pykern.jit(ns["k"])

    def run(k, i):
        a = np.zeros(64, np.float32)
        k[1, 64](a)
        assert (a == i + np.arange(64, dtype=np.float32)).all(), (i, a[:4])
''')


# glibc gives threads that malloc at the same time arenas of their own (up to 8 per core),
# each keeping ~2 MB it touched: how many exist follows how the O3 build threads happened to
# overlap under load, not how many kernels lived. One arena leaves RSS to what kernels keep.
MEASURE_ENV = {"MALLOC_ARENA_MAX": "1"}


def _run(script: str, tmp_path, timeout: float, **env):
    full_env = {**os.environ, "PYKERN_CACHE_DIR": str(tmp_path / "cache"), **env}
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(script)], env=full_env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


REDEFINE = '''
    warm, n = {warm}, {n}
    from pykern.codegen.cpu import tiers as cpu_tiers  # an O3 build in flight holds its kernel until adopted
    for i in range(warm):  # imports, the LLVM pages a compile touches, the reuse map full
        k = cell(i, "warm"); run(k, i)
    del k; cpu_tiers.wait_all(); gc.collect()
    r0, f0, m0 = rss_kb(), nfds(), nmaps()
    for i in range(n):
        k = cell(i)
        run(k, i)
    del k; cpu_tiers.wait_all(); gc.collect()
    print(json.dumps({{"rss_kb": rss_kb() - r0, "fds": nfds() - f0, "maps": nmaps() - m0}}))
'''


@pytest.mark.parametrize("cache, loader", [("off", "dlopen"), ("on", "dlopen"), ("off", "mcjit")])
def test_redefined_kernels_give_back_fds_mappings_and_memory(tmp_path, cache, loader):
    # before: +1 fd, +4 mappings and ~140 KB for every kernel ever compiled
    # (mcjit: the fallback without a host linker; its engines were never freed)
    env = {"PYKERN_HOST_LD": "none"} if loader == "mcjit" else {}
    # the warm-up reaches the heap's steady size: on a loaded machine RSS climbs ~9 MB over the
    # first ~150 compiles of a process (16 kernels kept in memory, the allocator's free lists) and
    # then stays (measured: +1.7 MB after 32 kernels, +9.2 after 192, +9.7 after 400); what is
    # asked is that the kernels after it add nothing
    got = _run(REDEFINE.format(warm=160, n=64), tmp_path, timeout=600, PYKERN_CACHE=cache,
               PYKERN_MEMORY_CACHE_ENTRIES="16", **MEASURE_ENV, **env)
    assert got["fds"] <= 0, got
    assert got["maps"] <= 2, got
    # issue 10's budget is 50 MB for 5,000 kernels (10 KB each); allow 3 MB here (~47 KB
    # a kernel: allocator noise on a small count); the leak was ~95-140 KB a kernel
    assert got["rss_kb"] < 3 * 1024, got


@pytest.mark.slow
def test_five_thousand_redefinitions_stay_under_50_mb(tmp_path):
    got = _run(REDEFINE.format(warm=300, n=5000), tmp_path, timeout=3600, PYKERN_CACHE="off", **MEASURE_ENV)
    assert got["fds"] <= 0, got
    assert got["maps"] <= 2, got
    assert got["rss_kb"] < 50 * 1024, got


LIVE_UNDER_LIMIT = '''
    import resource
    n, headroom = {n}, {headroom}
    k = cell(-1, "warm"); run(k, -1); del k; gc.collect()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = {limit} or nfds() + headroom
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    kernels = []
    for i in range(n):  # all kept alive: a loaded kernel must not hold a descriptor
        kernels.append(cell(i))
        run(kernels[-1], i)
    for i, k in enumerate(kernels):  # fd numbers were reused while libraries stayed loaded
        run(k, i)
    print(json.dumps({{"limit": limit, "fds": nfds()}}))
'''


def test_many_live_kernels_under_a_small_open_files_limit(tmp_path):
    # before: each loaded kernel kept its memfd open, so kernel ~#25 failed with EMFILE
    got = _run(LIVE_UNDER_LIMIT.format(n=64, headroom=24, limit=0), tmp_path, timeout=600, PYKERN_CACHE="off")
    assert got["fds"] < got["limit"]


@pytest.mark.slow
def test_a_thousand_kernels_under_ulimit_256(tmp_path):
    got = _run(LIVE_UNDER_LIMIT.format(n=1100, headroom=0, limit=256), tmp_path, timeout=3600,
               PYKERN_CACHE="off")
    assert got["limit"] == 256


def test_out_of_file_descriptors_is_reported_as_such(tmp_path):
    # before: `CompileError: running ld failed: [Errno 24] Too many open files`,
    # hint "install a linker" (or a bare OSError). With the disk cache on (linked libraries,
    # cache files, memfd): a cache-off compile runs through MCJIT and needs no descriptor.
    got = _run('''
        import resource
        k = cell(-1, "warm"); run(k, -1); del k; gc.collect()
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        out = []
        for extra in range(0, 5):
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
            gc.collect()
            resource.setrlimit(resource.RLIMIT_NOFILE, (nfds() + extra, hard))
            try:
                k = cell(extra)
                run(k, extra)
                out.append(None)
            except (pykern.CompileError, pykern.LaunchError) as e:
                out.append(str(e))
        print(json.dumps(out))
    ''', tmp_path, timeout=300, PYKERN_CACHE="on", PYKERN_TIERS="off")
    # (tiers off: a first-tier kernel needs no descriptor, and its O3 build failing in the
    # background only leaves it on first-tier code; this is about the error a compile gives)
    errors = [e for e in got if e is not None]
    assert errors, got  # with no descriptor to spare, something must fail
    for e in errors:
        assert "open files" in e, e
        assert "install a linker" not in e, e


def test_reuse_map_is_bounded_lru(monkeypatch):
    from pykern.core import bounded
    from pykern.dispatch import compiler

    monkeypatch.setenv("PYKERN_MEMORY_CACHE_ENTRIES", "3")
    saved = compiler._in_memory.copy()
    compiler._in_memory.clear()
    try:
        for d in "abcd":
            compiler._remember(d, object())
        assert list(compiler._in_memory) == ["b", "c", "d"]
        assert compiler._recall("b") is not None  # a hit makes it the most recent
        compiler._remember("e", object())
        assert list(compiler._in_memory) == ["d", "b", "e"]
        assert compiler._recall("c") is None
        monkeypatch.setenv("PYKERN_MEMORY_CACHE_ENTRIES", "0")
        compiler._remember("f", object())
        assert not compiler._in_memory
        monkeypatch.delenv("PYKERN_MEMORY_CACHE_ENTRIES")
        assert bounded.entries_limit() == bounded.ENTRIES
    finally:
        compiler._in_memory.clear()
        compiler._in_memory.update(saved)


def test_a_kernel_shared_by_two_dispatchers_stays_loaded_until_both_are_gone(cpu_uncached):
    """Overloads of the same artifact share one library: collecting one
    dispatcher must not unload the code the other still launches."""
    import gc
    import linecache

    import numpy as np

    import pykern
    from pykern.codegen.cpu import tiers as cpu_tiers
    from pykern.runtime.cpu import executor as cpu_executor

    src = "def shared_k(a):\n    a[pykern.grid(1)] = 7.0\n"
    linecache.cache["<shared-cell>"] = (len(src), None, src.splitlines(True), "<shared-cell>")

    def make():
        ns = {"pykern": pykern}
        exec(compile(src, "<shared-cell>", "exec"), ns)
        return pykern.jit(ns["shared_k"])

    a = np.zeros(32, np.float32)
    k1, k2 = make(), make()
    k1[1, 32](a)
    k2[1, 32](a)
    name = next(iter(k1.overloads.values())).artifact.name
    assert next(iter(k2.overloads.values())).kernel is next(iter(k1.overloads.values())).kernel
    del k1
    gc.collect()
    assert name in cpu_executor._loaded
    a[:] = 0
    k2[1, 32](a)
    assert (a == 7).all()
    cpu_tiers.wait_all()  # an O3 build in flight holds its kernel until it is adopted
    del k2
    gc.collect()
    assert name not in cpu_executor._loaded
