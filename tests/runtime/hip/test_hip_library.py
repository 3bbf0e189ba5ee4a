"""Loading the real HIP runtime (Debian libamdhip64-5), in child processes.

Each test runs in a fresh interpreter so that environment variables decide the
search and the runtime's process-wide state never leaks between tests.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pykern.runtime.hip import library as hip
from pykern.runtime.hip import api as hip_api

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HAVE_LIB = any(os.path.exists(os.path.join(d, "libamdhip64.so.5")) for d in ("/usr/lib/x86_64-linux-gnu", "/opt/rocm/lib"))


def run_py(code, env_extra=None, drop=()):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_error_names():
    assert hip.error_name(0) == "hipSuccess"
    assert hip.error_name(100) == "hipErrorNoDevice"
    assert hip.error_name(2) == "hipErrorOutOfMemory"  # not the deprecated alias
    assert hip.error_name(400) == "hipErrorInvalidHandle"
    assert hip.error_name(4242).startswith("hipErrorUnrecognized")


@pytest.mark.skipif(not HAVE_LIB, reason="libamdhip64-5 not installed")
def test_library_loads_and_reports_no_device():
    out = run_py(
        """
        import json, ctypes
        from pykern.core.errors import HipError
        from pykern.runtime.hip import library as hip
        from pykern.runtime import device_registry as devices
        L = hip.load_library()
        res = {"path": L.path, "source": L.source, "version": L.runtime_version()}
        try:
            hip.device_count()
            res["raised"] = None
        except HipError as e:
            res["raised"] = [e.code, e.name, e.message, e.call, str(e)]
        res["devices"] = devices.get_device_count()
        res["available"] = hip.available()
        # every binding got its exact prototype
        res["bad"] = [n for n, (r, a) in __import__("pykern.runtime.hip.api", fromlist=["x"]).PROTOTYPES.items()
                      if n not in L.missing and len(getattr(L.raw, n).argtypes) != len(a)]
        res["missing"] = L.missing
        res["names"] = {str(c): L.raw.hipGetErrorName(c).decode() for c in (1, 2, 100, 400, 700, 1054)}
        print(json.dumps(res))
        """,
        drop=("PYKERN_HIP_LIBRARY",),
    )
    assert out["version"] // 10_000_000 >= 5
    code, name, message, call, text = out["raised"]
    assert (code, name, call) == (100, "hipErrorNoDevice", "hipGetDeviceCount")
    assert "no AMD GPU" in message and "hipErrorNoDevice (100)" in text
    assert out["devices"] == 0
    ok, reason = out["available"]
    assert ok is False and "hipErrorNoDevice" in reason and "libamdhip64" in reason
    assert out["bad"] == []
    # ROCm 5.2 predates both (the cooperative launch arrived with ROCm 6)
    assert sorted(out["missing"]) == ["hipGetDevicePropertiesR0600", "hipModuleLaunchCooperativeKernel"]
    # the runtime's own names agree with our table
    assert out["names"] == {k: hip_api.ERROR_NAMES[int(k)] for k in out["names"]}


@pytest.mark.skipif(not HAVE_LIB, reason="libamdhip64-5 not installed")
def test_failing_calls_raise_hiperror_not_crash():
    out = run_py(
        """
        import json, ctypes
        from pykern.core.errors import HipError
        from pykern.runtime.hip import library as hip
        L = hip.lib()
        got = []
        p = ctypes.c_void_p()
        for call in (lambda: L.hipMalloc(ctypes.byref(p), 16),
                     lambda: L.hipModuleLoadData(ctypes.byref(p), b"not a code object"),
                     lambda: L.hipSetDevice(3)):
            try:
                call(); got.append(None)
            except HipError as e:
                got.append([e.code, e.name, e.call])
        print(json.dumps(got))
        """
    )
    for g in out:
        assert g is not None and g[0] != 0 and g[1].startswith("hipError") and g[2].startswith("hip")


def test_bad_explicit_path_lists_places_tried(tmp_path):
    bad = str(tmp_path / "nope" / "libamdhip64.so")
    out = run_py(
        """
        import json
        from pykern.core.errors import HipError
        from pykern.runtime.hip import library as hip
        try:
            hip.load_library(); print(json.dumps(None))
        except HipError as e:
            print(json.dumps([e.code, e.name, str(e), e.tried, hip.available()]))
        """,
        env_extra={"PYKERN_HIP_LIBRARY": bad},
    )
    code, name, text, tried, (ok, reason) = out
    assert name == "hipLibraryNotFound" and code == -1
    assert bad in text and "no such file" in text and "PYKERN_HIP_LIBRARY" in text
    assert len(tried) == 1  # an explicit setting is honoured strictly
    assert ok is False and bad in reason


def test_not_found_lists_every_default_place(tmp_path):
    # The system copy cannot be hidden from the dynamic loader, so check the search order itself.
    out = run_py(
        """
        import json
        from pykern.runtime.hip import library as hip
        print(json.dumps(hip.candidates()))
        """,
        env_extra={"ROCM_PATH": str(tmp_path)},
        drop=("PYKERN_HIP_LIBRARY",),
    )
    places = [p for p, _ in out]
    assert places[0].startswith("$ROCM_PATH/lib")
    assert any(p == "/opt/rocm/lib/libamdhip64.so" for p in places)
    assert [p for p in places if p.startswith("dynamic loader:")] == [
        f"dynamic loader: {n}" for n in ("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5")
    ]


def test_non_hip_library_is_refused_with_reason(tmp_path):
    # a real shared object that is not the HIP runtime: rejected, and said why
    import ctypes.util

    libm = ctypes.util.find_library("m")
    if libm is None:
        pytest.skip("no libm to stand in")
    out = run_py(
        """
        import json
        from pykern.core.errors import HipError
        from pykern.runtime.hip import library as hip
        try:
            hip.load_library(); print(json.dumps(None))
        except HipError as e:
            print(json.dumps(e.tried))
        """,
        env_extra={"PYKERN_HIP_LIBRARY": libm},
    )
    assert out and "lacks a HIP entry point" in out[0][1]


@pytest.mark.skipif(not HAVE_LIB, reason="libamdhip64-5 not installed")
def test_copy_already_loaded_in_process_is_preferred():
    out = run_py(
        """
        import ctypes, json
        pre = ctypes.CDLL("libamdhip64.so.5")   # as torch would have done
        from pykern.runtime.hip import library as hip
        L = hip.load_library()
        print(json.dumps([L.source, L.path]))
        """,
        drop=("PYKERN_HIP_LIBRARY",),
    )
    assert out[0].startswith("already loaded in this process") and "libamdhip64.so" in out[1]


@pytest.mark.amdgpu
def test_real_device_properties():
    from pykern.runtime import device_registry as devices

    d = devices.select_device(0)
    assert d.arch.startswith("gfx") and d.gcn_arch_name.startswith(d.arch)
    assert d.wave_size in (32, 64)
    assert d.compute_units > 0 and d.max_threads_per_block >= 256
    assert d.max_shared_per_block >= 32768 and d.total_memory > 2**28
    assert d.code_object_version in (4, 5)
    assert hip.available()[0] is True


def test_importing_the_runtime_package_loads_nothing_heavy():
    out = run_py(
        """
        import json, sys
        import pykern.runtime
        maps = open("/proc/self/maps").read()
        hip_side = {"pykern.runtime.hip.library", "pykern.runtime.hip.launch", "pykern.runtime.device_registry", "llvmlite"}
        print(json.dumps([sorted(m for m in sys.modules if m in hip_side), "libamdhip64" in maps]))
        """
    )
    # `import pykern` loads the warm-start launch path (cache, cpu executor, argument packing)
    # on purpose; the HIP bindings, the HIP library and LLVM load only when used
    assert out == [[], False]
