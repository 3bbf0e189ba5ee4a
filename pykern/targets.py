"""Which target kernels run on: "cpu" or "hip", chosen once per process.

``PYKERN_TARGET`` or :func:`set_target` pick one; otherwise "hip" when a usable
AMD GPU is present, else "cpu" (said once, as a warning, so nobody believes a
cpu timing came from a GPU).

Example::

    >>> import pykern
    >>> pykern.set_target("cpu"); pykern.current_target()
    'cpu'
"""

from __future__ import annotations

import os
import warnings

from .errors import LaunchError

TARGETS = ("cpu", "hip")

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
    env = os.environ.get("PYKERN_TARGET", "").strip().lower()
    if env:
        if env not in TARGETS:
            raise ValueError(f"PYKERN_TARGET={env!r}: expected one of {', '.join(TARGETS)}")
        if env == "hip":
            _require_hip()
        _chosen[:] = [env]
        return env
    from .runtime import hip

    ok, reason = hip.available()
    if ok:
        _chosen[:] = ["hip"]
    else:
        warnings.warn(f"pykern: no usable AMD GPU ({reason}); running kernels on the cpu target", stacklevel=3)
        _chosen[:] = ["cpu"]
    return _chosen[0]


def _require_hip() -> None:
    from .runtime import hip

    ok, reason = hip.available()
    if not ok:
        raise LaunchError(f"the 'hip' target is not usable here: {reason}")
