"""pykern's runtime: HIP bindings, devices, memory, streams, kernel arguments, launch.

Import-light on purpose: nothing here loads libamdhip64 or numpy until a
function that needs it is called (``import pykern`` must stay fast).

Target names: ``"cpu"`` (host memory, immediate execution) and ``"hip"``.
``default_target()`` is the environment's choice (``PYKERN_TARGET``, else "hip"
when ``hip.available()``, else "cpu"); ``resolve_target(None)`` asks
``pykern.current_target()`` when the package defines it, so a
``pykern.set_target(...)`` is honoured by every allocation.
"""

from __future__ import annotations

import os

TARGETS = ("cpu", "hip")
ENV_TARGET = "PYKERN_TARGET"


class PerformanceWarning(UserWarning):
    """Something ran correctly but slowly (e.g. host arrays copied in and out
    around a HIP launch), as numba's NumbaPerformanceWarning."""


_default: list = []


def default_target() -> str:
    """``PYKERN_TARGET`` if set, else "hip" when a usable AMD GPU is present, else "cpu".

    Never calls ``pykern.current_target`` (so that function may call this one).
    """
    env = os.environ.get(ENV_TARGET, "").strip().lower()
    if env:
        if env not in TARGETS:
            raise ValueError(f"{ENV_TARGET}={env!r}: expected one of {', '.join(TARGETS)}")
        return env
    if not _default:
        from pykern.runtime import hip

        ok, _reason = hip.available()
        _default.append("hip" if ok else "cpu")
    return _default[0]


def resolve_target(target: str | None = None) -> str:
    """``target`` validated, or the current target when None.

    >>> resolve_target("cpu")
    'cpu'
    """
    if target is None:
        import sys

        pk = sys.modules.get("pykern")
        fn = getattr(pk, "current_target", None) if pk is not None else None
        target = fn() if callable(fn) else default_target()
        target = getattr(target, "name", target)  # tolerate a Target-like object
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: expected one of {', '.join(TARGETS)}")
    return target


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
        "from_dlpack": "dlpack",
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
