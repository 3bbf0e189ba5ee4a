"""pykern's runtime: HIP bindings, devices, memory, streams, kernel arguments, launch.

Import-light on purpose: nothing here loads libamdhip64 or numpy until a
function that needs it is called (``import pykern`` must stay fast).

It is also the one place that chooses the target kernels run on, "cpu" (host
memory, immediate execution) or "hip", once per process: ``PYKERN_TARGET`` or
:func:`set_target` pick one; otherwise "hip" when a usable AMD GPU is present,
else "cpu" (said once, as a warning, so nobody believes a cpu timing came from
a GPU). ``pykern.set_target``/``pykern.current_target`` are these functions.

Example::

    >>> from pykern import runtime
    >>> runtime.set_target("cpu"); runtime.current_target()
    'cpu'
    >>> runtime.resolve_target(None)
    'cpu'
"""

from __future__ import annotations

import os
import warnings

from pykern.errors import LaunchError

TARGETS = ("cpu", "hip")
ENV_TARGET = "PYKERN_TARGET"


class PerformanceWarning(UserWarning):
    """Something ran correctly but slowly (e.g. host arrays copied in and out
    around a HIP launch), as numba's NumbaPerformanceWarning."""


_chosen: list = []  # [name] once decided


def set_target(name: str) -> None:
    """Run every later launch, allocation and compile on target ``name``.

    ``"hip"`` is checked now: without a usable AMD GPU it raises ``HipError``
    (or ``LaunchError``) naming the reason, and the target stays unchanged."""
    name = str(name).strip().lower()
    if name not in TARGETS:
        raise ValueError(f"unknown target {name!r}: expected one of {', '.join(TARGETS)}")
    if name == "hip":
        _require_hip()
    _chosen[:] = [name]


def current_target() -> str:
    """The target launches use now ("cpu" or "hip")."""
    if _chosen:
        return _chosen[0]
    env = os.environ.get(ENV_TARGET, "").strip().lower()
    if env:
        if env not in TARGETS:
            raise ValueError(f"{ENV_TARGET}={env!r}: expected one of {', '.join(TARGETS)}")
        if env == "hip":
            _require_hip()
        _chosen[:] = [env]
        return env
    ok, reason = False, _no_device_nodes()
    if reason is None:
        from pykern.runtime import hip

        ok, reason = hip.available()
    if ok:
        _chosen[:] = ["hip"]
    else:
        warnings.warn(f"pykern: no usable AMD GPU ({reason}); running kernels on the cpu target", stacklevel=3)
        _chosen[:] = ["cpu"]
    return _chosen[0]


#: the device nodes through which the HIP runtime reaches an AMD GPU: the ROCm kernel driver's
#: (Linux) and the DirectX one (ROCm under WSL)
DEVICE_NODES = ("/dev/kfd", "/dev/dxg")


def _no_device_nodes():
    """Why this machine cannot have a device for HIP without loading libamdhip64 (~13 ms of
    dlopen plus its bindings, inside a cpu-only process's first launch), or None to ask HIP.
    Only for the default choice: an explicit "hip" asks the runtime for its own reason, and a
    copy of the library already loaded or ``PYKERN_HIP_LIBRARY`` is always asked."""
    import sys

    if not sys.platform.startswith("linux") or os.environ.get("PYKERN_HIP_LIBRARY"):
        return None
    if any(os.path.exists(n) for n in DEVICE_NODES):
        return None
    if hip_loaded_in_process():
        return None
    return f"no AMD GPU device node ({' or '.join(DEVICE_NODES)}) on this machine"


def hip_loaded_in_process() -> list[str]:
    """Paths of libamdhip64 copies mapped into this process already."""
    found: list[str] = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) == 6 else ""
                base = os.path.basename(path)
                if base.startswith("libamdhip64.so") and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def _require_hip() -> None:
    from pykern.runtime import hip

    ok, reason = hip.available()
    if not ok:
        raise LaunchError(f"the 'hip' target is not usable here: {reason}")


def resolve_target(target: str | None = None) -> str:
    """``target`` validated, or the current target when None.

    >>> resolve_target("cpu")
    'cpu'
    """
    if target is None:
        target = current_target()
    target = getattr(target, "name", target)  # tolerate a Target-like object
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: expected one of {', '.join(TARGETS)}")
    return target


def get_version() -> tuple:
    """``cuda.runtime.get_version()`` of numba: ``(major, minor)`` of the runtime kernels launch
    through -- here the HIP runtime's (e.g. ``(6, 2)``), ``(0, 0)`` where libamdhip64 does not load
    (the cpu target needs none)."""
    from pykern.errors import HipError
    from pykern.runtime import hip

    try:
        v = hip.lib().runtime_version()
    except (HipError, OSError):
        return (0, 0)
    return (v // 10_000_000, v // 100_000 % 100)


def is_supported_version() -> bool:
    """numba's ``cuda.runtime.is_supported_version()``: True (the cpu target needs no runtime;
    pykern emits code objects for the HIP runtime it finds)."""
    return True


def __getattr__(name):
    # Lazy re-exports: `from pykern.runtime import to_device` works without
    # paying for numpy/ctypes at package import.
    lazy = {
        "DeviceArray": "memory",
        "to_device": "memory",
        "device_array": "memory",
        "device_array_like": "memory",
        "pinned_array": "memory",
        "as_device_array": "memory",
        "is_device_array": "memory",
        "from_dlpack": "memory",
        "Stream": "streams",
        "Event": "streams",
        "stream": "streams",
        "default_stream": "streams",
        "event": "streams",
        "synchronize": "streams",
    }
    mod = lazy.get(name)
    if mod is None:
        raise AttributeError(f"module 'pykern.runtime' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"pykern.runtime.{mod}"), name)
