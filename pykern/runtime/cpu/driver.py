"""The cpu target's memory and streams (``pykern.runtime.drivers.Driver``): the host is the device.

Device memory is host memory (numpy buffers, aligned as ``hipMalloc``'s), a copy is
a numpy assignment between views, and every operation is done when its call
returns: streams only keep the API's shape, events record host timestamps.

Example::

    >>> import numpy as np
    >>> addr, device, keeper, free = CpuDriver().allocate(64)
    >>> addr % 256, device, free is None
    (0, 0, True)
"""

from __future__ import annotations

import ctypes
import time

import numpy as np

from pykern.runtime.drivers import Driver, run_callback
from pykern.runtime.memory.dlpack import kDLCPU

#: alignment of new memory: hipMalloc's guarantee, so that code tuned on one target behaves on the other
ALIGN = 256


def _address(raw: np.ndarray) -> int:
    """The first byte of new memory ``raw`` (a uint8 array): ``raw.ctypes.data`` builds a
    ctypes helper object, five times the cost of this (small device arrays are made once per
    call of a ufunc); a ctypes view of nothing cannot be made."""
    return ctypes.addressof(ctypes.c_char.from_buffer(raw)) if raw.size else raw.ctypes.data


class CpuDriver(Driver):
    name = "cpu"
    host_memory = True
    asynchronous = False
    dlpack_device = kDLCPU

    def device_id(self) -> int:
        return 0

    def synchronize(self) -> None:
        pass  # launches and copies are complete when they return

    # ------------------------------------------------------------------ memory
    def allocate(self, nbytes: int) -> tuple:
        raw = np.empty(nbytes + ALIGN, dtype=np.uint8)
        base = _address(raw)
        return base + (-base) % ALIGN, 0, raw, None

    def allocate_host(self, nbytes: int, mapped: bool = False, portable: bool = False, wc: bool = False) -> tuple:
        keeper = np.empty(nbytes, np.uint8)
        return _address(keeper), _address(keeper), keeper, None

    def allocate_managed(self, nbytes: int, attach_global: bool = True) -> tuple:
        keeper = np.empty(nbytes, np.uint8)
        return _address(keeper), keeper, None

    # ------------------------------------------------------------------ copies
    def read(self, array, stream=0):
        return array._host_view()

    def copy_out(self, array, stream=0):
        ary = array._empty_host_like()
        if array.size:
            ary[...] = array._host_view()
        return ary

    def copy_to_host(self, array, ary, stream=0) -> None:
        ary[...] = array._host_view()

    def copy_to_device(self, array, src, stream=0) -> None:
        array._host_view()[...] = src

    def copy_within(self, dst, src, stream=0) -> None:
        dst._host_view()[...] = src._host_view()

    def copy_bytes(self, dst: int, src: int, nbytes: int, stream=None) -> None:
        ctypes.memmove(dst, src, nbytes)

    def memset(self, address: int, value: int, nbytes: int, stream=None) -> None:
        ctypes.memset(address, value, nbytes)

    # ------------------------------------------------------------------ memory shared with others
    def interface_stream(self, stream):
        return None  # host memory: nothing to wait for

    def wait_for_producer(self, stream) -> None:
        pass

    def finish_for_consumer(self, array, stream) -> None:
        pass

    # ------------------------------------------------------------------ streams and events
    def stream_create(self) -> tuple:
        return 0, 0

    def stream_destroy(self, handle: int) -> None:
        pass

    def stream_synchronize(self, handle: int) -> None:
        pass

    def stream_query(self, handle: int) -> bool:
        return True

    def stream_add_callback(self, stream, callback, arg) -> None:
        run_callback(stream, callback, 0, arg)  # the work queued so far has finished already

    def event_create(self, timing: bool) -> int:
        return 0

    def event_destroy(self, handle: int) -> None:
        pass

    def event_record(self, event, stream) -> None:
        event._t = time.perf_counter()

    def event_synchronize(self, event) -> None:
        pass  # work is done when launches return; a never-recorded event returns at once (as in CUDA/HIP)

    def event_query(self, event) -> bool:
        return True  # complete when recorded; CUDA/HIP say True for a never-recorded event too

    def event_wait(self, event, stream) -> None:
        pass  # nothing to wait for (a never-recorded event is a no-op, as in CUDA/HIP)

    def event_elapsed(self, start, end) -> float:
        if start._t is None or end._t is None:
            raise RuntimeError("elapsed_time on an event that was never recorded")
        return (end._t - start._t) * 1e3
