"""cpu executor: artifacts load from bytes (cache path) without LLVM
optimisation, launch validation, Ctrl-C cancels a long launch promptly."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import pykern as cuda
from cpu_helpers import compile_py, launch, pack_args, spin
from pykern.codegen import get_target
from pykern.codegen import abi_map as abi
from pykern.codegen import llvm_util
from pykern.codegen.target_interface import CompileOptions
from pykern.core.errors import CompileError, LaunchError
from pykern.frontend import compile_ir
from pykern.frontend import typeof
from pykern.frontend import types as T
from pykern.runtime.cpu import executor as cpu_executor

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/


def scale(x, out, f):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * f


def test_flatten_params_offsets_follow_abi():
    A2 = T.Array(T.float32, 2, "C")
    ps = abi.flatten_params([T.boolean, A2, T.int16, T.Tuple((T.float64, T.int8)), T.float16])
    got = [(p.name, p.offset, p.size, p.role, p.arg_index) for p in ps]
    assert got == [
        ("arg0", 0, 1, "scalar", 0),
        ("arg1.data", 8, 8, "data", 1),
        ("arg1.shape0", 16, 8, "shape", 1), ("arg1.shape1", 24, 8, "shape", 1),
        ("arg1.stride0", 32, 8, "stride", 1), ("arg1.stride1", 40, 8, "stride", 1),
        ("arg2", 48, 2, "scalar", 2),
        ("arg3.0", 56, 8, "scalar", 3), ("arg3.1", 64, 1, "scalar", 3),
        ("arg4", 66, 2, "scalar", 4),
    ]
    assert abi.kernarg_size(ps) == 72 and abi.kernarg_size([]) == 0


def test_artifact_pickles_and_loads_in_fresh_process_without_llvm_optimisation(tmp_path):
    x = np.arange(10, dtype=np.float64)
    mod = compile_ir(scale, [typeof(x), typeof(x), typeof(2.5)])
    art = get_target("cpu").compile(mod, CompileOptions())
    assert art.binary[:4] == b"\x7fELF" and art.kernarg_size == abi.kernarg_size(art.params)
    path = tmp_path / "art.pkl"
    path.write_bytes(pickle.dumps(art))
    script = textwrap.dedent(f"""
        import pickle, struct, numpy as np
        from pykern.codegen import llvm_util
        def boom(*a, **k):
            raise AssertionError("LLVM optimisation re-run on a cached artifact")
        llvm_util.optimize = boom
        llvm_util.parse_and_verify = boom
        from pykern.runtime.cpu import executor as cpu_executor
        art = pickle.loads(open({str(path)!r}, "rb").read())
        k = cpu_executor.load(art)
        x = np.arange(10, dtype=np.float64); out = np.zeros(10)
        buf = bytearray(art.kernarg_size)
        vals = [x.ctypes.data, 10, 8, out.ctypes.data, 10, 8, 2.5]
        for p, v in zip(art.params, vals):
            struct.pack_into("<d" if p.role == "scalar" else ("<Q" if p.role == "data" else "<q"), buf, p.offset, v)
        k.launch((1, 1, 1), (32, 1, 1), 0, buf)
        assert (out == x * 2.5).all(), out
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_same_artifact_loads_once():
    x = np.arange(4, dtype=np.float64)
    k1 = compile_py(scale, x, x, 1.0)
    assert cpu_executor.load(k1.artifact) is k1


def test_launch_validation():
    x = np.arange(4, dtype=np.float64)
    k = compile_py(scale, x, x, 1.0)
    buf = pack_args(k, [x, x, 1.0])
    with pytest.raises(LaunchError, match="exceeds"):
        k.launch((1,), (2048,), 0, buf)
    with pytest.raises(LaunchError, match=">= 1"):
        k.launch((0,), (32,), 0, buf)
    with pytest.raises(LaunchError, match="argument buffer"):
        k.launch((1,), (32,), 0, buf[:8])
    with pytest.raises(LaunchError, match="dimensions"):
        k.launch((1, 1, 1, 1), (32,), 0, buf)


def test_broken_llvm_ir_is_internal_compile_error_not_abort():
    with pytest.raises(CompileError, match="internal error"):
        llvm_util.parse_and_verify("define i32 @f() {\n  ret i64 0\n}\n")


def test_opt_level_zero_and_fastmath_compile_and_run():
    def red(x, out):
        sh = cuda.shared.array(32, np.float64)
        t = cuda.threadIdx.x
        sh[t] = x[t]
        cuda.syncthreads()
        if t == 0:
            s = 0.0
            for k in range(32):
                s += sh[k]
            out[0] = s

    x = np.arange(32, dtype=np.float64)
    for opts in ({"opt": 0}, {"fastmath": True}):
        out = np.zeros(1)
        k = compile_py(red, x, out, **opts)
        launch(k, (1,), (32,), x, out)
        assert out[0] == x.sum()


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
def test_ctrl_c_cancels_a_long_launch_promptly():
    x = np.zeros(64)
    k = compile_py(spin, x, 20000)
    buf = pack_args(k, [x, 20000])
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    # a runner started as a background job inherits SIGINT ignored: Ctrl-C is what is tested here
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        t0 = time.perf_counter()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            k.launch((200000,), (64,), 0, buf)  # ~minutes of work if not cancelled
        assert time.perf_counter() - t0 < 5.0
    finally:
        signal.signal(signal.SIGINT, previous)


def test_assembly_on_demand_and_vectorised_fast_path():
    from pykern.codegen.cpu.target import assembly_of

    x = np.zeros(3, np.float32)
    k = compile_py(scale, x, x, np.float32(1.0))
    assert k.artifact.asm is None and k.artifact.execution == "fast"
    asm = assembly_of(k.artifact)
    assert k.artifact.name in asm
    # the per-thread loop of a plain elementwise kernel is vectorised
    assert "<16 x float>" in k.artifact.llvm_ir or "<8 x float>" in k.artifact.llvm_ir


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_launch_in_forked_child_after_parent_used_the_pool():
    x = np.zeros(1 << 16)
    k = compile_py(spin, x, 1)
    buf = pack_args(k, [x, 1])
    k.launch((1024,), (64,), 0, buf)  # parent: goes through the thread pool
    pid = os.fork()
    if pid == 0:  # child: must not hang on the parent's dead worker threads
        try:
            k.launch((1024,), (64,), 0, buf)
            os._exit(0 if x[0] == 0.0 else 3)
        except BaseException:
            os._exit(2)
    deadline = time.time() + 60
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.WEXITSTATUS(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    pytest.fail("launch in a forked child hung")


def test_workers_run_every_chunk_and_hand_back_the_first_error():
    from pykern.runtime.cpu import executor as ce

    pool = ce._get_pool()
    seen = []
    batch = pool.submit_all(seen.append, [(i,) for i in range(50)])
    batch.wait()
    assert sorted(seen) == list(range(50)) and batch.error is None

    def boom(i):
        if i == 3:
            raise ValueError("chunk 3")

    batch = pool.submit_all(boom, [(i,) for i in range(8)])
    batch.wait()
    assert isinstance(batch.error, ValueError) and batch.left == 0


def test_workers_skip_chunks_of_a_cancelled_batch():
    import threading as th

    from pykern.runtime.cpu import executor as ce

    gate, ran = th.Event(), []

    def chunk(i):
        gate.wait(10)
        ran.append(i)

    batch = ce._get_pool().submit_all(chunk, [(i,) for i in range(40)])
    batch.cancelled = True  # as a Ctrl-C does: chunks not yet started never run
    gate.set()
    batch.wait()
    assert len(ran) <= ce._NCPU  # only those already waiting in chunk() when it was cancelled
