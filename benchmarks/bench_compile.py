"""Row 4: cold compile, Python source -> linked gfx942 code object, vs clang-22.

pykern: ``pykern.compile(saxpy, sig, arch="gfx942")`` with ``PYKERN_CACHE=off``
in a fresh interpreter each time, so nothing is warm (llvmlite, the AMDGPU
target, ld.lld and device-lib lookups all happen inside the timed call). The
child reports the time of the ``pykern.compile`` call, and of ``import pykern``
+ compile; the whole subprocess (interpreter start included) is timed outside.

clang: ``clang-22 -x hip --cuda-device-only --offload-arch=gfx942 -O3
-nogpulib --no-gpu-bundle-output`` of the same saxpy in HIP C++
(benchmarks/hip_kernels.py), timed as a whole process; this default mode
pre-includes clang's HIP wrapper headers like any HIP compile. The
``-nogpuinc`` variant (no headers at all, the cheapest clang can be) is
reported as a second, stricter baseline. Target: pykern <= 0.5x clang.
A third pykern number compiles saxpy in a warm process (another kernel
compiled first there), the measure of issue 15 item 4.

Median of several runs of each, interleaved so both see the same machine load.

Run alone: ``python benchmarks/bench_compile.py [--quick]``.
"""

from __future__ import annotations

import os
import statistics

from _common import Row, bytecode_env, clang, main_for, parse_child_values, run_child, scratch_dir

TARGET = 0.5

CHILD = r"""
import time
t0 = time.perf_counter()
import pykern
from kernels import AOT_KERNELS
fn, sig = AOT_KERNELS["saxpy"]
t1 = time.perf_counter()
ck = pykern.compile(fn, sig, arch="gfx942")
t2 = time.perf_counter()
assert ck.code_object[:4] == b"\x7fELF", ck.code_object[:16]
print(f"BENCH_compile={t2 - t1}")
print(f"BENCH_import_and_compile={t2 - t0}")
print(f"BENCH_bytes={len(ck.code_object)}")
"""

# Issue 15 item 4 measures the compile "inside a warm process": LLVM, the
# AMDGPU target and ld.lld's lookup already used by another kernel's compile.
WARM_CHILD = r"""
import time
import pykern
from kernels import AOT_KERNELS
pykern.compile(*AOT_KERNELS["block_sum"], arch="gfx942")
fn, sig = AOT_KERNELS["saxpy"]
t1 = time.perf_counter()
ck = pykern.compile(fn, sig, arch="gfx942")
t2 = time.perf_counter()
assert ck.code_object[:4] == b"\x7fELF"
print(f"BENCH_warm_compile={t2 - t1}")
"""


def run(quick: bool = False) -> list:
    reps = 7 if not quick else 2
    # children import with cached bytecode, as from an installed package (with
    # PYTHONDONTWRITEBYTECODE=1 and no __pycache__, each would compile pykern's sources first)
    env = {"PYKERN_CACHE": "off", **bytecode_env()}
    run_child(CHILD, env)  # writes the bytecode; not timed
    py_in, py_imp, py_wall, cl, cl_bare, py_warm = [], [], [], [], [], []
    clang_err = None if clang() else "clang-22 not installed"
    tmp = scratch_dir("pykern-bench-cc-")
    from hip_kernels import SAXPY, compile_hip

    for i in range(reps):
        wall, out = run_child(CHILD, env)
        v = parse_child_values(out)
        py_in.append(v["compile"])
        py_imp.append(v["import_and_compile"])
        py_wall.append(wall)
        _, out = run_child(WARM_CHILD, env)
        py_warm.append(parse_child_values(out)["warm_compile"])
        if clang_err is None:
            try:
                _, t = compile_hip(SAXPY, "gfx942", os.path.join(tmp, f"saxpy{i}.hsaco"))
                cl.append(t)
                _, t = compile_hip(SAXPY, "gfx942", os.path.join(tmp, f"saxpy_bare{i}.hsaco"), no_gpu_includes=True)
                cl_bare.append(t)
            except RuntimeError as e:
                clang_err = str(e).splitlines()[-1][:200]
    med = statistics.median
    p_in, p_imp, p_wall = med(py_in) * 1e3, med(py_imp) * 1e3, med(py_wall) * 1e3
    p_warm = med(py_warm) * 1e3
    rows = []
    if clang_err is None:
        c, cb = med(cl) * 1e3, med(cl_bare) * 1e3
        name = "clang-22 -x hip -O3 process"
        rows += [
            Row("4 cold compile saxpy gfx942", "pykern.compile call in fresh process (cache off)", p_in, c, "ms",
                name, f"<= {TARGET}x", TARGET, f"median of {reps}; import pykern + compile: {p_imp:.0f} ms"),
            Row("4 cold compile saxpy gfx942", "whole pykern subprocess (interpreter start incl.)", p_wall, c,
                "ms", name, f"<= {TARGET}x", TARGET, f"median of {reps}"),
            Row("4 cold compile saxpy gfx942", "pykern.compile call vs clang -nogpuinc (no headers)", p_in, cb,
                "ms", "clang-22 -nogpuinc process", f"<= {TARGET}x", TARGET, "stricter baseline"),
            Row("4 cold compile saxpy gfx942", "pykern.compile in a warm process vs clang -nogpuinc", p_warm, cb,
                "ms", "clang-22 -nogpuinc process", f"<= {TARGET}x", TARGET,
                f"median of {reps}; block_sum compiled first in the same process (issue 15 item 4)"),
        ]
    else:
        for case, v in (("pykern.compile call in fresh process (cache off)", p_in),
                        ("whole pykern subprocess (interpreter start incl.)", p_wall)):
            rows.append(Row("4 cold compile saxpy gfx942", case, v, None, "ms", f"clang unavailable: {clang_err}",
                            f"<= {TARGET}x", None, f"median of {reps}"))
        rows.append(Row("4 cold compile saxpy gfx942", "pykern.compile in a warm process", p_warm, None, "ms",
                        f"clang unavailable: {clang_err}", f"<= {TARGET}x", None, f"median of {reps}"))
    return rows


if __name__ == "__main__":
    main_for(run)
