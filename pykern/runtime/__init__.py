"""pykern's runtime: HIP bindings, devices, memory, streams, kernel arguments, launch.

Import-light on purpose: nothing here loads libamdhip64 or numpy until a
function that needs it is called (``import pykern`` must stay fast).

It is also the one place that chooses the target kernels run on, "cpu" (host
memory, immediate execution) or "hip", once per process: ``PYKERN_TARGET`` or
:func:`set_target` pick one; otherwise "hip" when a usable AMD GPU is present,
else "cpu" (said once, as a warning, so nobody believes a cpu timing came from
a GPU). ``pykern.set_target``/``pykern.current_target`` are these functions.
What a target's memory and streams are made of is its driver, one per target:
:func:`driver` (``pykern.runtime.drivers``).

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

from pykern.core import settings
from pykern.core.errors import LaunchError
from pykern.core.targets import RUN_TARGETS

#: the run targets (``core/targets.py``: where kernels run; codegen names what they compile to)
TARGETS = RUN_TARGETS

#: where a target's arrays live: the sim target runs kernels as Python over host (cpu) memory
MEMORY_TARGET = {"cpu": "cpu", "hip": "hip", "sim": "cpu"}


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
    """The target launches use now ("cpu", "hip" or "sim")."""
    if _chosen:
        return _chosen[0]
    env = settings.get("PYKERN_TARGET")  # a value it does not take raises SettingError, a ValueError
    if env == "auto" and settings.flag(os.environ.get("NUMBA_ENABLE_CUDASIM") or "0"):
        env = "sim"  # numba's simulator switch (numba's name, so not a PYKERN_ setting)
    if env != "auto":
        if env == "hip":
            _require_hip()
        _chosen[:] = [env]
        return env
    from pykern.runtime.hip.presence import no_device_nodes

    ok, reason = False, no_device_nodes()
    if reason is None:
        from pykern.runtime.hip import library as hip

        ok, reason = hip.available()
    if ok:
        _chosen[:] = ["hip"]
    else:
        warnings.warn(f"pykern: no usable AMD GPU ({reason}); running kernels on the cpu target", stacklevel=3)
        _chosen[:] = ["cpu"]
    return _chosen[0]


def _require_hip() -> None:
    from pykern.runtime.hip import library as hip

    ok, reason = hip.available()
    if not ok:
        raise LaunchError(f"the 'hip' target is not usable here: {reason}")


def resolve_target(target: str | None = None) -> str:
    """The memory target of ``target`` validated, or of the current target when None
    ("cpu" for the sim target, whose kernels run over host memory).

    >>> resolve_target("cpu")
    'cpu'
    """
    if target is None:
        target = current_target()
    target = getattr(target, "name", target)  # tolerate a Target-like object
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: expected one of {', '.join(TARGETS)}")
    return MEMORY_TARGET[target]


def _cpu_driver():
    from pykern.runtime.cpu.driver import CpuDriver

    return CpuDriver()


def _hip_driver():
    from pykern.runtime.hip.driver import HipDriver

    return HipDriver()


#: how each target's driver is made (its module is imported on first use)
_DRIVER_FACTORIES = {"cpu": _cpu_driver, "hip": _hip_driver}
_drivers: dict = {}


def driver(target: str | None = None):
    """The :class:`~pykern.runtime.drivers.Driver` of ``target`` (default: the current target),
    one per target: what its memory, copies, streams and events are made of.

    >>> driver("cpu").name
    'cpu'
    """
    d = _drivers.get(target)
    if d is None:
        name = resolve_target(target)
        d = _drivers.get(name)
        if d is None:
            d = _drivers.setdefault(name, _DRIVER_FACTORIES[name]())
    return d


def get_version() -> tuple:
    """``cuda.runtime.get_version()`` of numba: ``(major, minor)`` of the runtime kernels launch
    through -- here the HIP runtime's (e.g. ``(6, 2)``), ``(0, 0)`` where libamdhip64 does not load
    (the cpu target needs none)."""
    from pykern.core.errors import HipError
    from pykern.runtime.hip import library as hip

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
