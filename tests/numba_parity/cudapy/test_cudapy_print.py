"""numba-cuda's ``tests/cudapy/test_print.py`` (see conftest.py): print() in kernels."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


_PRINT_USECASES = {
    "cuhello": """\\
import pykern as cuda

@cuda.jit
def cuhello():
    i = cuda.grid(1)
    print(i, 999)
    print(-42)

cuhello[2, 3]()
cuda.synchronize()
""",
    "printfloat": """\\
import pykern as cuda

@cuda.jit
def printfloat():
    i = cuda.grid(1)
    print(i, 23, 34.75, 321)

printfloat[1, 1]()
cuda.synchronize()
""",
    "printbool": """\\
import pykern as cuda

@cuda.jit
def printbool(x):
    print(True)
    print(False)
    print(x == 0)

printbool[1, 1](0)
printbool[1, 1](1)
cuda.synchronize()
""",
    "printstring": """\\
import pykern as cuda

@cuda.jit
def printstring():
    i = cuda.grid(1)
    print(i, "hop!", 999)

printstring[1, 3]()
cuda.synchronize()
""",
    "printdim3": """\\
import pykern as cuda

@cuda.jit
def printdim3():
    print(cuda.threadIdx)

printdim3[1, (2, 2, 2)]()
cuda.synchronize()
""",
    "printempty": """\\
import pykern as cuda

@cuda.jit
def printempty():
    print()

printempty[1, 1]()
cuda.synchronize()
""",
}


def _run_print_code(code, tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["PYKERN_TARGET"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(cuda.__file__)),
                                                    env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYKERN_CACHE_DIR", str(tmp_path / "cache"))
    cp = subprocess.run([sys.executable, "-W", "ignore", "-c", code], timeout=120, capture_output=True,
                        check=True, env=env)
    return cp.stdout.decode(), cp.stderr.decode()


def test_print_usecases(tmp_path):
    # test_print.py TestPrint.test_cuhello / test_printfloat / test_bool / test_printempty /
    # test_string / test_dim3 (each program run in a subprocess, as numba's test does)
    out, _ = _run_print_code(_PRINT_USECASES["cuhello"], tmp_path)
    assert sorted(line.strip() for line in out.splitlines()) == ["-42"] * 6 + ["%d 999" % i for i in range(6)]
    out, _ = _run_print_code(_PRINT_USECASES["printfloat"], tmp_path)
    assert out.strip() in ["0 23 34.750000 321", "0 23 34.75 321"]
    out, _ = _run_print_code(_PRINT_USECASES["printbool"], tmp_path)
    import re

    assert re.fullmatch("True\\r?\\nFalse\\r?\\nTrue\\r?\\nTrue\\r?\\nFalse\\r?\\nFalse", out.strip())
    out, _ = _run_print_code(_PRINT_USECASES["printempty"], tmp_path)
    assert out.strip() == ""
    out, _ = _run_print_code(_PRINT_USECASES["printstring"], tmp_path)
    assert sorted(line.strip() for line in out.splitlines()) == ["%d hop! 999" % i for i in range(3)]
    out, _ = _run_print_code(_PRINT_USECASES["printdim3"], tmp_path)
    assert sorted(line.strip() for line in out.splitlines()) == [str(i) for i in np.ndindex(2, 2, 2)]
