"""``os.fork()`` while another thread compiles (issue 10).

Before: the child inherited llvmlite's and pykern's locks held by a thread it
does not have, and hung at its first compile. Now fork handlers wait for the
compile in flight to leave LLVM and re-initialise the rest, so the child can
compile and launch (also on the executor's thread pool, whose threads did not
survive the fork). Each scenario runs in its own interpreter with a deadline."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

SCRIPT = textwrap.dedent('''
    import json, linecache, os, sys, threading, time
    import numpy as np
    import pykern
    pykern.set_target("cpu")

    def cell(tag, value):
        src = ("def k(a):\\n"
               "    j = pykern.grid(1)\\n"
               "    if j < a.size:\\n"
               f"        a[j] = a[j] * 3.0 + {value}.0\\n")
        name = f"<fork-cell-{tag}>"
        linecache.cache[name] = (len(src), None, src.splitlines(True), name)
        ns = {"pykern": pykern}
        exec(compile(src, name, "exec"), ns)
        return pykern.jit(ns["k"])

    def check(k, value, n):
        a = np.arange(n, dtype=np.float32)
        k[(n + 255) // 256, 256](a)
        return bool((a == np.arange(n, dtype=np.float32) * 3 + value).all())

    stop = threading.Event()
    compiled = [0]

    def compile_forever():
        i = 0
        while not stop.is_set():
            check(cell(f"bg-{i}", i), i, 64)  # distinct: each one a real compile
            compiled[0] += 1
            i += 1

    check(cell("warm", 1), 1, 64)
    kept = cell("parent", 5)
    check(kept, 5, 64)
    bg = threading.Thread(target=compile_forever, daemon=True)
    bg.start()
    results = []
    for f in range(NFORKS):
        time.sleep(0.05 + 0.037 * f)  # land at different points of a compile
        pid = os.fork()
        if pid == 0:
            ok = (check(cell(f"child-{f}", 7 + f), 7 + f, 64)  # compile in the child
                  and check(kept, 5, 1 << 20)                 # a parent's kernel, on the pool
                  and check(cell(f"child-big-{f}", 9), 9, 1 << 20))
            os._exit(0 if ok else 3)
        deadline = time.monotonic() + CHILD_SECONDS
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                results.append(os.waitstatus_to_exitcode(status))
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                results.append("hung")
                break
            time.sleep(0.02)
    stop.set()
    bg.join()
    print(json.dumps({"children": results, "background_compiles": compiled[0],
                      "parent_still_compiles": check(cell("after", 11), 11, 64)}))
''')


def test_fork_while_another_thread_compiles(tmp_path):
    env = {**os.environ, "PYKERN_CACHE": "off", "PYKERN_CACHE_DIR": str(tmp_path / "cache")}
    script = SCRIPT.replace("NFORKS", "4").replace("CHILD_SECONDS", "60")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["children"] == [0, 0, 0, 0], got
    assert got["parent_still_compiles"], got
    assert got["background_compiles"] > 0, got


def test_fork_handlers_release_every_lock_in_parent_and_child():
    """The handlers take pykern's and llvmlite's locks before the fork and give
    them back on both sides (a lock left held would hang the next compile)."""
    import pykern  # noqa: F401  (registers the handlers)
    from pykern.dispatch import compiler
    from pykern.codegen.cpu import target as cpu  # noqa: F401  (their locks join the list)
    from pykern.codegen import llvm_util

    llvm_util.llvm()
    locks = compiler._fork_locks()
    assert len(locks) >= 6
    pid = os.fork()
    if pid == 0:
        code = 0
        for lock in locks + [compiler.fork_safe_rlock()]:
            if not lock.acquire(timeout=5):
                code = 4
                break
            lock.release()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    for lock in locks:
        assert lock.acquire(blocking=False)
        lock.release()


def test_dispatcher_lock_held_by_a_thread_is_free_in_the_child(cpu_uncached):
    import threading

    import numpy as np

    import cpu_helpers
    import pykern

    inc = pykern.jit(cpu_helpers.add_one)
    held, release = threading.Event(), threading.Event()

    def hold():
        with inc._lock:  # as a thread mid-compile of this kernel would
            held.set()
            release.wait()

    th = threading.Thread(target=hold)
    th.start()
    held.wait()
    try:
        pid = os.fork()
        if pid == 0:
            a = np.zeros(16, np.float32)
            try:
                inc[1, 16](a)
                os._exit(0 if (a == 1).all() else 3)
            except BaseException:
                os._exit(5)
        import time

        deadline = time.monotonic() + 120
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail("the child hangs on the Dispatcher's lock")
            time.sleep(0.02)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        release.set()
        th.join()
