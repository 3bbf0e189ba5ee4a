"""The disk cache end to end through ``@pykern.jit`` on the cpu target.

Each step is a fresh interpreter that launches a kernel and compares its
result with numpy, so a stale or foreign kernel coming out of the cache would
show up as a wrong number, not just as a wrong flag.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

LIB = """
import pykern as cuda

@cuda.jit(device=True)
def bump(x):
    return x * 2.0
"""

KERN = """
import pykern as cuda
import lib

OFFSET = 3.0

def unrelated():
    return 1

@cuda.jit
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = lib.bump(a[i]) + OFFSET
"""

RUN = """
import json, sys, time, warnings
warnings.simplefilter("always")
import numpy as np
import pykern
sys.path.insert(0, sys.argv[1])
import kern
from pykern.runtime.cache import default_cache
a = np.arange(16, dtype=np.float32)
before = set(sys.modules)
t = time.perf_counter()
kern.k[1, 16](a)
ms = (time.perf_counter() - t) * 1e3
ov = next(iter(kern.k.overloads.values()))
new = sorted(m for m in set(sys.modules) - before if m.startswith("pykern."))
if "pykern.codegen.cpu.tiers" in sys.modules:  # a first call's O3 build stores the entry after the call returned
    sys.modules["pykern.codegen.cpu.tiers"].wait_all(300)
print(json.dumps({"out": a.tolist(), "from_cache": ov.from_cache, "stats": default_cache().stats,
                  "launch_ms": ms, "new_modules": new}))
"""


def _run(src: Path, cache: Path, **env_extra):
    env = dict(os.environ)
    env.update(PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1", PYKERN_TARGET="cpu",
               PYKERN_CACHE_DIR=str(cache), PYKERN_BUILD_ID="test-build", PYKERN_CACHE_EXPLAIN="1")
    env.pop("PYKERN_CACHE", None)
    env.update(env_extra)
    p = subprocess.run([sys.executable, "-c", RUN, str(src)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def _expected(scale: float, offset: float):
    return [float(x) * scale + offset for x in range(16)]


def test_jit_kernels_come_back_from_disk_and_edits_recompile(tmp_path):
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    (src / "lib.py").write_text(textwrap.dedent(LIB))
    (src / "kern.py").write_text(textwrap.dedent(KERN))

    cold, _ = _run(src, cache)
    assert cold["out"] == _expected(2.0, 3.0) and not cold["from_cache"]
    assert cold["stats"]["misses"] == 1 and cold["stats"]["writes"] == 1

    warm, err = _run(src, cache)
    assert warm["out"] == _expected(2.0, 3.0)
    assert warm["from_cache"] and warm["stats"]["hits"] == 1, err
    # the hit ran no frontend or lowering code
    assert not [m for m in warm["new_modules"] if m.startswith(("pykern.frontend.", "pykern.codegen.lowering.module"))
                and m != "pykern.frontend.fingerprint"], warm["new_modules"]

    # an unrelated function in the kernel's file: still the cached kernel
    (src / "kern.py").write_text((src / "kern.py").read_text().replace("return 1", "x = 1\n    return x"))
    again, err = _run(src, cache)
    assert again["from_cache"], err

    # the device function in another file: recompiled, and the new code runs
    (src / "lib.py").write_text((src / "lib.py").read_text().replace("x * 2.0", "x * 5.0"))
    edited, err = _run(src, cache)
    assert not edited["from_cache"] and "callees.lib.bump.source" in err, err
    assert edited["out"] == _expected(5.0, 3.0)

    # a module constant the kernel reads: recompiled with the new value
    (src / "kern.py").write_text((src / "kern.py").read_text().replace("OFFSET = 3.0", "OFFSET = 7.0"))
    const, err = _run(src, cache)
    assert not const["from_cache"] and "globals.OFFSET" in err, err
    assert const["out"] == _expected(5.0, 7.0)
    assert _run(src, cache)[0]["from_cache"]


def test_jit_with_damaged_entries_recompiles_with_a_warning(tmp_path):
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    (src / "lib.py").write_text(textwrap.dedent(LIB))
    (src / "kern.py").write_text(textwrap.dedent(KERN))
    _run(src, cache)
    entries = list(cache.rglob("*.pkc"))
    assert len(entries) == 1
    data = entries[0].read_bytes()
    entries[0].write_bytes(data[: len(data) // 2])
    out, err = _run(src, cache)
    assert out["out"] == _expected(2.0, 3.0) and not out["from_cache"]
    assert "discarding bad entry" in err and "truncated" in err
    assert _run(src, cache)[0]["from_cache"]


def test_jit_cache_false_and_env_off_leave_no_entries(tmp_path):
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    (src / "lib.py").write_text(textwrap.dedent(LIB))
    (src / "kern.py").write_text(textwrap.dedent(KERN).replace("@cuda.jit\n", "@cuda.jit(cache=False)\n"))
    out, _ = _run(src, cache)
    assert out["out"] == _expected(2.0, 3.0) and not out["from_cache"]
    (src / "kern.py").write_text(textwrap.dedent(KERN))
    out, _ = _run(src, cache, PYKERN_CACHE="off")
    assert out["out"] == _expected(2.0, 3.0) and not out["from_cache"]
    assert not list(cache.rglob("*.pkc"))


INTRINSICS = """
import math
import numpy as np
import pykern as cuda

TILE = 8

@cuda.jit(device=True)
def f(x):
    return math.sin(x) + np.float32(1)

@cuda.jit
def k(a, out):
    s = cuda.shared.array(TILE, cuda.float32)
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    s[cuda.threadIdx.x] = f(a[i])
    cuda.syncthreads()
    cuda.atomic.add(out, 0, s[0])
"""


def test_fingerprint_of_a_kernel_using_pykern_objects_is_the_same_in_every_process(tmp_path):
    (tmp_path / "kk.py").write_text(textwrap.dedent(INTRINSICS))
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import kk; "
            "from pykern.frontend.fingerprint import fingerprint; print(json.dumps(fingerprint(kk.k)))")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    outs = [subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True,
                           text=True, check=True).stdout for _ in range(2)]
    assert outs[0] == outs[1]
    fp = json.loads(outs[0])
    assert "0x" not in outs[0]
    assert fp["globals"]["TILE"] == "int:8" and "kk.f" in fp["callees"]


def test_enum_and_device_function_tuple_edited_in_another_module_recompile(tmp_path):
    # values the kernel freezes through another module: an IntEnum member read through its
    # class, and a device function called out of a global tuple; editing either must miss
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    (src / "lib.py").write_text(textwrap.dedent(LIB) + "from enum import IntEnum\nclass Mode(IntEnum):\n"
                                "    SHIFT = 3\n")
    (src / "kern.py").write_text(textwrap.dedent("""
        import pykern as cuda
        import lib
        OPS = (lib.bump,)

        @cuda.jit
        def k(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = OPS[0](a[i]) + lib.Mode.SHIFT
    """))
    assert _run(src, cache)[0]["out"] == _expected(2.0, 3.0)
    (src / "lib.py").write_text((src / "lib.py").read_text().replace("SHIFT = 3", "SHIFT = 9"))
    out, err = _run(src, cache)
    assert not out["from_cache"] and out["out"] == _expected(2.0, 9.0), err
    (src / "lib.py").write_text((src / "lib.py").read_text().replace("x * 2.0", "x * 5.0"))
    out, err = _run(src, cache)
    assert not out["from_cache"] and out["out"] == _expected(5.0, 9.0), err
    assert _run(src, cache)[0]["from_cache"]
