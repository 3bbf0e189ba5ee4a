"""Compiling from several threads at once (issue 10).

Before: 1-8 of 10 trials failed with ``SystemError: AST constructor recursion
depth mismatch`` (Python 3.11's ``ast.parse`` is not safe in two threads, and
``compiler._deep_recursion`` restored a process-wide recursion limit another
thread still relied on: a kernel with a deep expression then failed to compile
"nesting too deeply")."""

import linecache
import sys
import threading

import numpy as np

import pykern

NTHREADS = 8
ROUNDS = 3
DEEP_TERMS = 300  # a 300-term sum nests 300 BinOps: needs the raised recursion limit


def _cell(tag: str, value: int, deep: bool):
    """A new function object per call, as a notebook cell re-run makes."""
    body = " + ".join(["x"] * DEEP_TERMS) if deep else "x * 2.0"
    src = ("def k(a):\n"
           "    j = pykern.grid(1)\n"
           "    if j < a.size:\n"
           "        x = a[j]\n"
           f"        a[j] = {body} + {value}.0\n")
    name = f"<thread-cell-{tag}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"pykern": pykern}
    exec(compile(src, name, "exec"), ns)
    return pykern.jit(ns["k"])


def _expected(a, value, deep):
    return (a * (DEEP_TERMS if deep else 2) + value).astype(np.float32)


def _hammer(make_kernel, rounds=ROUNDS):
    """Run ``make_kernel(round, thread)`` -> (kernel, value, deep) in NTHREADS
    threads released together, launch, and check each result."""
    errors = []
    old_switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: races show up in a few rounds
    try:
        for r in range(rounds):
            start = threading.Barrier(NTHREADS)

            def work(t):
                try:
                    start.wait()
                    k, value, deep = make_kernel(r, t)
                    a = np.arange(256, dtype=np.float32) / 7
                    want = _expected(a, value, deep)
                    k[2, 128](a)
                    np.testing.assert_allclose(a, want, rtol=1e-5)
                except BaseException as e:  # noqa: BLE001 - reported below with the thread
                    errors.append(f"round {r} thread {t}: {type(e).__name__}: {e}")

            threads = [threading.Thread(target=work, args=(t,)) for t in range(NTHREADS)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(timeout=600)
            assert not any(th.is_alive() for th in threads), "a compiling thread hangs"
    finally:
        sys.setswitchinterval(old_switch)
    assert not errors, "\n".join(errors)


def test_eight_threads_compile_distinct_kernels(cpu_uncached):
    rec = sys.getrecursionlimit()
    _hammer(lambda r, t: (_cell(f"distinct-{r}-{t}", 10 * r + t, deep=t % 2 == 0), 10 * r + t, t % 2 == 0))
    assert sys.getrecursionlimit() == rec  # raised while compiling, restored after


def test_eight_threads_compile_the_same_kernel(cpu_uncached):
    # the same source in every thread: one artifact in the reuse map, one loaded library
    _hammer(lambda r, t: (_cell(f"same-{r}", 100 + r, deep=True), 100 + r, True))


def test_eight_threads_launch_one_dispatcher(cpu_uncached):
    # one Dispatcher per round, compiled and launched from every thread at once
    ks = [_cell(f"one-{r}", 200 + r, deep=False) for r in range(ROUNDS)]
    _hammer(lambda r, t: (ks[r], 200 + r, False))


def test_eight_threads_with_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PYKERN_CACHE", "on")
    monkeypatch.setenv("PYKERN_CACHE_DIR", str(tmp_path / "cache"))
    pykern.set_target("cpu")
    # rounds 0 and 1 compile the same sources: round 1 hits the disk cache (the
    # reuse map is cleared in between) while other threads store
    from pykern.dispatch import compiler

    def make(r, t):
        if t == 0 and r == 1:
            compiler._in_memory.clear()
        return _cell(f"disk-{t % 4}", t % 4, deep=t % 4 == 0), t % 4, t % 4 == 0

    _hammer(make, rounds=2)


def test_recursion_limit_is_restored_after_concurrent_compiles(cpu_uncached):
    from pykern.dispatch import compiler

    before = sys.getrecursionlimit()
    inside = []

    def work(t):
        d = _cell(f"rec-{t}", t, deep=True)
        with compiler._deep_recursion(d):
            inside.append(sys.getrecursionlimit())

    threads = [threading.Thread(target=work, args=(t,)) for t in range(NTHREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert min(inside) >= 12000
    assert sys.getrecursionlimit() == before
