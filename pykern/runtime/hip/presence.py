"""Whether this machine could have an AMD GPU for the HIP runtime, asked without loading it.

The target choice (``pykern.runtime.current_target``) asks here before loading libamdhip64
(~13 ms of ``dlopen`` plus its bindings): without a device node the runtime cannot see a GPU.

Example::

    >>> from pykern.runtime.hip.presence import no_device_nodes
    >>> reason = no_device_nodes()  # None where the HIP runtime must be asked
"""

from __future__ import annotations

import os
import sys

from pykern.core import settings

#: the device nodes through which the HIP runtime reaches an AMD GPU: the ROCm kernel driver's
#: (Linux) and the DirectX one (ROCm under WSL)
DEVICE_NODES = ("/dev/kfd", "/dev/dxg")


def no_device_nodes():
    """Why this machine cannot have a device for HIP without loading libamdhip64 (~13 ms of
    dlopen plus its bindings, inside a cpu-only process's first launch), or None to ask HIP.
    Only for the default choice: an explicit "hip" asks the runtime for its own reason, and a
    copy of the library already loaded or ``PYKERN_HIP_LIBRARY`` is always asked."""
    if not sys.platform.startswith("linux") or settings.get("PYKERN_HIP_LIBRARY"):
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
            maps = f.read()
        if "libamdhip64" not in maps:  # the usual answer, without splitting ~500 lines (~0.7 ms)
            return found
        for line in maps.splitlines():
            parts = line.split(None, 5)
            path = parts[5].strip() if len(parts) == 6 else ""
            base = os.path.basename(path)
            if base.startswith("libamdhip64.so") and path not in found:
                found.append(path)
    except OSError:
        pass
    return found
