"""Stand-ins for the HIP host paths of device arrays, for tests without an AMD GPU: a library whose
"device" memory is host memory, and a DeviceArray over such memory."""

import ctypes

import numpy as np

from pykern.runtime.memory import arrays as memory


class HostAsHip:
    """Stands in for libamdhip64: "device" memory is host memory, copies are memmoves."""

    def __init__(self):
        self.calls = []

    def hipMemcpy(self, dst, src, n, kind):
        self.calls.append(("hipMemcpy", n))
        ctypes.memmove(dst, src, n)

    def hipMemcpyAsync(self, dst, src, n, kind, stream):
        self.calls.append(("hipMemcpyAsync", n))
        ctypes.memmove(dst, src, n)

    def hipStreamSynchronize(self, handle):
        self.calls.append(("hipStreamSynchronize", handle))

    def hipFree(self, ptr):
        self.calls.append(("hipFree", ptr))

    def hipHostFree(self, ptr):
        self.calls.append(("hipHostFree", ptr))


def hip_array(host: np.ndarray):
    st = memory.Storage(host.ctypes.data, host.nbytes, "hip", 0, owner=host)
    return memory.DeviceArray(host.shape, host.strides, host.dtype, st)
