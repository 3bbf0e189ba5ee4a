"""Per-target resource limits (``Target.max_shared_bytes``/``max_local_bytes``),
the cpu launcher's static + dynamic shared check, and the loop polling that
lets Ctrl-C stop a long block (strip-mined ``for`` loops must still compute
the same thing and still vectorise)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import pykern as cuda
from pykern.codegen.cpu import target as cpu_codegen
from pykern.codegen import get_target
from pykern.codegen.amdgpu.target import max_scratch_per_lane
from pykern.codegen.amdgpu.archs import ARCHS
from pykern.codegen.target_interface import CompileOptions
from pykern.core.errors import CompileError, LaunchError
from pykern.runtime.cpu import executor as cpu_executor


pytestmark = pytest.mark.usefixtures("cpu_uncached")


# ----------------------------------------------------------------- the limits
def test_cpu_limits_match_the_executor_and_the_common_gpus():
    t = get_target("cpu")
    assert t.max_shared_bytes(CompileOptions()) == 65536 == cpu_executor.MAX_SHARED_BYTES == cpu_codegen.LDS_BYTES
    assert t.max_local_bytes(CompileOptions()) == 65536


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_amdgpu_limits_come_from_the_arch(arch):
    t = get_target("amdgpu", arch=arch)
    a = ARCHS[arch]
    assert t.max_shared_bytes(CompileOptions()) == a.lds_per_workgroup
    local = t.max_local_bytes(CompileOptions())
    assert local == 65536  # the portable limit fits every arch's scratch, with room for spills
    assert local <= max_scratch_per_lane(a.major, 64) and local <= max_scratch_per_lane(a.major, a.wave_size)


def test_max_scratch_per_lane_matches_the_hardware_fields():
    assert max_scratch_per_lane(9, 64) == 8191 * 1024 // 64
    assert max_scratch_per_lane(11, 32) == 32767 * 256 // 32
    assert max_scratch_per_lane(12, 32) == 262143 * 256 // 32


def test_gfx950_takes_160_kib_of_shared_but_not_more(tmp_path):
    src = "import numpy as np\nimport pykern as cuda\n" + (
        "def k(a):\n    s = cuda.shared.array({n}, np.float64)\n    s[cuda.threadIdx.x] = 1.0\n"
        "    cuda.syncthreads()\n    a[0] = s[0]\n")
    for n, ok in ((20480, True), (20481, False)):
        mod = tmp_path / f"k{n}.py"
        mod.write_text(src.format(n=n))
        sys.path.insert(0, str(tmp_path))
        try:
            m = __import__(f"k{n}")
        finally:
            sys.path.remove(str(tmp_path))
        if ok:
            cuda.compile(m.k, "void(float64[:])", arch="gfx950")
        else:
            with pytest.raises(CompileError, match="163840") as ei:
                cuda.compile(m.k, "void(float64[:])", arch="gfx950")
            assert ei.value.line == 4


def test_local_arrays_add_up_and_the_error_names_the_one_that_overflows():
    @cuda.jit(cache=False)
    def k(a):
        p = cuda.local.array(4096, np.int64)  # 32 KiB
        q = cuda.local.array(4097, np.int64)  # 32 KiB + 8: 8 bytes too many together
        p[0] = 1
        q[0] = 2
        a[0] = p[0] + q[0]

    with pytest.raises(CompileError, match="65544 bytes") as ei:
        k[1, 1](np.zeros(1, np.int64))
    assert "4097" in ei.value.source_line


def test_local_array_at_the_limit_runs():
    @cuda.jit(cache=False)
    def k(a):
        q = cuda.local.array(8192, np.int64)  # exactly 64 KiB
        for j in range(8192):
            q[j] = j
        a[cuda.grid(1)] = q[8191] + q[cuda.threadIdx.x]

    a = np.zeros(128, np.int64)
    k[2, 64](a)
    assert (a == 8191 + np.tile(np.arange(64), 2)).all()


# ----------------------------------------------------------------- shared memory at launch
@cuda.jit(cache=False)
def _half_static(a, out):
    s = cuda.shared.array(4096, np.float64)  # 32 KiB static
    d = cuda.shared.array(0, np.float64)
    t = cuda.threadIdx.x
    s[t] = a[t]
    d[t] = 2 * a[t]
    cuda.syncthreads()
    out[t] = s[t] + d[t] + d.size


def test_static_plus_dynamic_shared_is_checked_together():
    a = np.arange(32.0)
    out = np.zeros(32)
    _half_static[1, 32, 0, 32768](a, out)  # 32 KiB + 32 KiB: exactly the LDS
    assert (out == 3 * a + 4096).all()
    with pytest.raises(LaunchError, match="shared memory"):
        _half_static[1, 32, 0, 32768 + 8](a, np.zeros(32))


def test_short_dynamic_shared_is_backed_by_the_whole_lds():
    # a GPU drops writes past the launch's dynamic bytes into its LDS; here the
    # block's shared area is always 64 KiB, so such writes stay in it
    a = np.arange(32.0)
    out = np.zeros(32)
    _half_static[1, 32, 0, 8](a, out)
    assert (out == 3 * a + 1).all()


# ----------------------------------------------------------------- strip-mined loops
@cuda.jit(cache=False)
def _loops(out, n, step):
    t = cuda.grid(1)
    acc = 0
    for j in range(t, n, step):
        if j % 7 == 3:
            continue
        if j > 2900 + t:
            break
        acc += j
        for k in range(3):  # inner loop: polled at its end
            acc += k
    m = n
    while m > 0:
        m -= 3
        acc += 1
    out[t] = acc


def _loops_ref(t, n, step):
    acc = 0
    for j in range(t, n, step):
        if j % 7 == 3:
            continue
        if j > 2900 + t:
            break
        acc += j + 3
    m = n
    while m > 0:
        m -= 3
        acc += 1
    return acc


@pytest.mark.parametrize("n,step", [(5000, 1), (4096, 1), (1025, 1), (1024, 1), (3000, 2), (0, 1), (-5000, -1),
                                    (-4000, -3)])
def test_polled_loops_compute_the_same(n, step):
    out = np.zeros(64, np.int64)
    _loops[2, 32](out, n, step)
    assert list(out) == [_loops_ref(t, n, step) for t in range(64)]


def test_polled_inner_loop_still_vectorises():
    @cuda.jit(cache=False)
    def rowsum(a, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            acc = 0
            for j in range(a.shape[1]):
                acc += a[i, j]
            out[i] = acc

    m = np.arange(64 * 3000, dtype=np.int64).reshape(64, 3000)
    out = np.zeros(64, np.int64)
    rowsum[1, 64](m, out)
    assert (out == m.sum(1)).all()
    ir = rowsum.inspect_llvm()
    ir = ir if isinstance(ir, str) else "\n".join(ir.values())
    assert "load <" in ir and "x i64>" in ir and "masked.gather" not in ir


# ----------------------------------------------------------------- Ctrl-C in one block with barriers
CHILD = r"""
import signal, sys, time
# a runner that ignores SIGINT (a background job of a non-interactive shell does) hands that to its
# children, and Python keeps an inherited SIG_IGN: without this the launch never ends
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import pykern as cuda
cuda.set_target("cpu")

@cuda.jit(cache=False)
def spin(out, n):
    s = cuda.shared.array(64, np.float64)
    s[cuda.threadIdx.x] = 0.0
    cuda.syncthreads()  # a coroutine kernel, but no barrier inside the loop
    acc = 0.0
    j = 0
    while j < n:
        acc = acc * 0.999 + j
        j += 1
    s[cuda.threadIdx.x] = acc
    cuda.syncthreads()
    out[cuda.threadIdx.x] = s[cuda.threadIdx.x]

out = np.zeros(64)
spin[1, 64](out, 1)
print("LAUNCHING", flush=True)
try:
    spin[1, 64](out, 10_000_000_000)
    print("FINISHED", flush=True)
    sys.exit(3)
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
spin[1, 64](out, 10)
ref = 0.0
for j in range(10):
    ref = ref * 0.999 + j
assert (out == ref).all(), (out, ref)
print("ALIVE", flush=True)
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_ctrl_c_stops_one_block_of_a_barrier_kernel(tmp_path):
    script = tmp_path / "barrier_spin.py"
    script.write_text(CHILD)
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    p = subprocess.Popen([sys.executable, "-u", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    try:
        assert p.stdout.readline().startswith("LAUNCHING")
        time.sleep(0.7)
        assert p.poll() is None
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        line = p.stdout.readline()
        lag = time.monotonic() - sent
        rest = p.stdout.read()
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()  # our own child only
            p.wait()
    err = p.stderr.read()
    assert line.startswith("INTERRUPTED"), (line, err)
    assert lag < 2.0, lag
    assert "ALIVE" in rest and p.returncode == 0, (rest, err)
