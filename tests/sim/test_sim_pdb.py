"""pdb through a kernel on the sim target, driven by scripted commands on stdin.

Each test writes a program, runs it in a fresh interpreter with pdb commands on its
stdin, and reads what pdb printed: the user's file and line, the kernel's variables
by name, the current thread, stepping into a device function and back up.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykern as cuda
from pykern import runtime as targets
from pykern.core.errors import LaunchError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNEL = '''\
import numpy as np
import pykern as cuda

@cuda.jit(device=True)
def scale(v, s):
    r = v * s
    return r

@cuda.jit
def kern(x, out):
    i = cuda.grid(1)
    if i == 5:
        breakpoint()
    t = scale(x[i], np.float32(2))
    out[i] = t + np.float32(1)

x = np.arange(8, dtype=np.float32)
out = np.zeros(8, np.float32)
kern[2, 4](x, out)
print("OUT", out.tolist())
'''


def run_pdb(tmp_path, program: str, commands: list, env=None, name="prog.py"):
    path = tmp_path / name
    path.write_text(program)
    e = dict(os.environ, PYTHONPATH=ROOT, PYKERN_TARGET="sim")
    e.pop("PYTHONBREAKPOINT", None)
    e.update(env or {})
    p = subprocess.run([sys.executable, str(path)], input="\n".join(commands) + "\n", capture_output=True,
                       text=True, env=e, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout, str(path)


def test_breakpoint_stops_at_the_users_line_with_the_kernels_variables(tmp_path):
    out, path = run_pdb(tmp_path, KERNEL, ["p int(i)", "p cuda.threadIdx", "p cuda.blockIdx.x", "p x[i]",
                                           "continue"])
    assert f"> {path}(14)kern()\n-> t = scale(x[i], np.float32(2))" in out
    lines = out.split("(Pdb) ")
    assert lines[1].strip() == "5"
    assert lines[2].strip() == "Dim3(x=1, y=0, z=0)"
    assert lines[3].strip() == "1"
    assert "5.0" in lines[4]
    assert "OUT [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]" in out


def test_step_into_a_device_function_next_up_and_down(tmp_path):
    out, path = run_pdb(tmp_path, KERNEL, ["step", "step", "next", "p float(r)", "where", "up", "p int(i)",
                                           "down", "p float(v)", "continue"])
    assert f"> {path}(6)scale()\n-> r = v * s" in out
    assert f"> {path}(7)scale()\n-> return r" in out
    assert "(Pdb) 10.0\n" in out
    assert "(Pdb) 5\n" in out  # i, one frame up: the kernel
    assert "(Pdb) 5.0\n" in out  # v, back down in scale
    where = out.split("(Pdb) ")[5]
    assert f"{path}(14)kern()" in where and f"{path}(7)scale()" in where
    assert "pykern/sim" not in where.split(f"{path}(14)kern()")[1]
    assert "OUT [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]" in out


def test_next_walks_the_kernels_lines_and_a_variable_can_be_changed(tmp_path):
    out, path = run_pdb(tmp_path, KERNEL, ["next", "p float(t)", "t = np.float32(100)", "next", "continue"])
    assert f"> {path}(15)kern()\n-> out[i] = t + np.float32(1)" in out
    assert "(Pdb) 10.0\n" in out
    assert "OUT [1.0, 3.0, 5.0, 7.0, 9.0, 101.0, 13.0, 15.0]" in out


BARRIER = '''\
import pdb
import numpy as np
import pykern as cuda

@cuda.jit
def rev(x):
    buf = cuda.shared.array(8, np.int32)
    t = cuda.threadIdx.x
    buf[t] = x[t] * 10
    cuda.syncthreads()
    if t == 2:
        pdb.set_trace()
    x[t] = buf[7 - t]

x = np.arange(8, dtype=np.int32)
rev[1, 8](x)
print("OUT", x.tolist())
'''


def test_set_trace_after_a_barrier_sees_every_threads_shared_writes(tmp_path):
    out, path = run_pdb(tmp_path, BARRIER, ["p buf.tolist()", "p cuda.threadIdx.x", "p int(buf[7 - t])",
                                            "continue"])
    assert f"> {path}(13)rev()\n-> x[t] = buf[7 - t]" in out
    assert "(Pdb) [0, 10, 20, 30, 40, 50, 60, 70]\n" in out
    assert "(Pdb) 2\n" in out
    assert "(Pdb) 50\n" in out
    assert "OUT [70, 60, 50, 40, 30, 20, 10, 0]" in out


def test_a_notebook_cell_kernel_stops_in_its_cell(tmp_path):
    cell = KERNEL.split("x = np.arange")[0]
    prog = ("import linecache\n"
            f"src = {cell!r}\n"
            "linecache.cache['<cell-3>'] = (len(src), None, src.splitlines(True), '<cell-3>')\n"
            "ns = {}\n"
            "exec(compile(src, '<cell-3>', 'exec'), ns)\n"
            "import numpy as np\n"
            "x = np.arange(8, dtype=np.float32); out = np.zeros(8, np.float32)\n"
            "ns['kern'][2, 4](x, out)\n"
            "print('OUT', out.tolist())\n")
    out, _ = run_pdb(tmp_path, prog, ["p int(i)", "continue"])
    assert "> <cell-3>(14)kern()\n-> t = scale(x[i], np.float32(2))" in out
    assert "(Pdb) 5\n" in out
    assert "OUT [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]" in out


def test_numba_enable_cudasim_picks_the_sim_target(tmp_path):
    out, _ = run_pdb(tmp_path, "import pykern\nprint('TARGET', pykern.current_target())\n", [],
                     env={"PYKERN_TARGET": "auto", "NUMBA_ENABLE_CUDASIM": "1"})
    assert "TARGET sim" in out


@pytest.fixture
def sim():
    saved = list(targets._chosen)
    cuda.set_target("sim")
    yield
    targets._chosen[:] = saved


@cuda.jit
def oob(x):
    i = cuda.grid(1)
    x[i + 2] = i


def test_an_out_of_bounds_index_raises_at_the_kernels_line_naming_the_thread(sim):
    x = np.zeros(6, np.int32)
    with pytest.raises(IndexError) as err:
        oob[2, 4](x)
    line = oob.py_func.__code__.co_firstlineno + 3
    assert f"{__file__}:{line}: thread (0, 0, 0) of block (1, 0, 0)" in str(err.value)
    assert x.tolist() == [0, 0, 0, 1, 2, 3]  # the threads before it ran


@cuda.jit
def diverge(x):
    t = cuda.threadIdx.x
    if t < 2:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    x[t] = t


def test_threads_at_different_barriers_are_reported(sim):
    with pytest.raises(LaunchError, match="barrier divergence") as err:
        diverge[1, 4](np.zeros(4, np.int32))
    first = diverge.py_func.__code__.co_firstlineno
    assert f"{__file__}:{first + 4} (first: thread (0, 0, 0)" in str(err.value)
    assert f"{__file__}:{first + 6} (first: thread (2, 0, 0)" in str(err.value)


@cuda.jit
def with_breakpoint(x):
    i = cuda.grid(1)
    if i == 100:
        breakpoint()
    x[i] = i


def test_the_cpu_target_warns_and_runs_past_a_breakpoint():
    saved = list(targets._chosen)
    cuda.set_target("cpu")
    try:
        x = np.zeros(4, np.int32)
        with pytest.warns(UserWarning, match="breakpoint\\(\\) is ignored on the cpu target"):
            with_breakpoint[1, 4](x)
        assert x.tolist() == [0, 1, 2, 3]
    finally:
        targets._chosen[:] = saved
