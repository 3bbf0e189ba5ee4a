"""The hip target's memory and streams (``pykern.runtime.drivers.Driver``) through libamdhip64.

Device memory is ``hipMalloc``'s, host memory for fast copies ``hipHostMalloc``'s;
copies on the null stream are synchronous (``hipMemcpy``), on another stream
queued (``hipMemcpyAsync``, the host buffer kept alive by the stream until it
synchronizes). A strided view is copied as the byte span it covers, through a
host staging buffer (one copy, as numba's).

Example (on a machine with a GPU)::

    drv = HipDriver()
    ptr, device, keeper, free = drv.allocate(1 << 20)
    free(ptr)
"""

from __future__ import annotations

import ctypes
import itertools

import numpy as np

from pykern.core.strides import span
from pykern.runtime.drivers import Driver, run_callback, stream_handle
from pykern.runtime.hip import api as hip_api
from pykern.runtime.memory.dlpack import kDLROCM


def _hip():
    from pykern.runtime.hip.library import lib

    return lib()


def _copy(dst: int, src: int, nbytes: int, kind: int, s, keep=None) -> None:
    """``nbytes`` from ``src`` to ``dst`` on Stream ``s`` (synchronous on the default stream;
    else queued, ``keep`` held by the stream until it synchronizes)."""
    if s.is_default:
        _hip().hipMemcpy(dst, src, nbytes, kind)
    else:
        _hip().hipMemcpyAsync(dst, src, nbytes, kind, s.handle)
        if keep is not None:
            s.keep_alive(keep)


def _staged(array, s, wait: bool = True) -> np.ndarray:
    """A host copy of the byte span ``array`` (a strided view) covers, viewed with its strides;
    complete on return unless ``wait`` is false (then after Stream ``s`` synchronizes)."""
    lo, hi = span(array.shape, array.strides, array.dtype.itemsize)
    staging = np.empty(hi - lo, np.uint8)
    _copy(staging.ctypes.data, array.ptr + lo, hi - lo, hip_api.hipMemcpyDeviceToHost, s, keep=staging)
    if wait and not s.is_default:
        s.synchronize()
    return np.ndarray(array.shape, array.dtype, buffer=staging, offset=-lo, strides=array.strides)


def _same_layout(a, b) -> bool:
    """Both C- or both F-contiguous (numpy arrays answer with flags, device arrays with methods)."""
    ca = a.flags.c_contiguous if isinstance(a, np.ndarray) else a.is_c_contiguous()
    fa = a.flags.f_contiguous if isinstance(a, np.ndarray) else a.is_f_contiguous()
    cb = b.flags.c_contiguous if isinstance(b, np.ndarray) else b.is_c_contiguous()
    fb = b.flags.f_contiguous if isinstance(b, np.ndarray) else b.is_f_contiguous()
    return (ca and cb) or (fa and fb)


class HipDriver(Driver):
    name = "hip"
    host_memory = False
    asynchronous = True
    dlpack_device = kDLROCM

    def device_id(self) -> int:
        from pykern.runtime.device_registry import current_device_id

        return current_device_id()

    def synchronize(self) -> None:
        _hip().hipDeviceSynchronize()

    # ------------------------------------------------------------------ memory
    def allocate(self, nbytes: int) -> tuple:
        from pykern.runtime.device_registry import current_device_id, ensure_current

        dev = current_device_id()
        if nbytes == 0:
            return 0, dev, None, None
        ensure_current(dev)
        p = ctypes.c_void_p()
        _hip().hipMalloc(ctypes.byref(p), nbytes)
        return p.value, dev, None, self.free

    def free(self, address: int) -> None:
        """Give back memory ``allocate`` or ``allocate_managed`` returned."""
        _hip().hipFree(address)

    def free_host(self, address: int) -> None:
        """Give back memory ``allocate_host`` returned."""
        _hip().hipHostFree(address)

    def allocate_host(self, nbytes: int, mapped: bool = False, portable: bool = False, wc: bool = False) -> tuple:
        flags = ((hip_api.hipHostMallocMapped if mapped else 0) | (hip_api.hipHostMallocPortable if portable else 0)
                 | (hip_api.hipHostMallocWriteCombined if wc else 0))
        p = ctypes.c_void_p()
        _hip().hipHostMalloc(ctypes.byref(p), nbytes, flags)
        buf = (ctypes.c_uint8 * nbytes).from_address(p.value)
        return p.value, self.mapped_address(p.value) if mapped else p.value, buf, self.free_host

    def mapped_address(self, host: int) -> int:
        """The device address of mapped page-locked host memory at ``host``."""
        d = ctypes.c_void_p()
        _hip().hipHostGetDevicePointer(ctypes.byref(d), ctypes.c_void_p(host), 0)
        return d.value or 0

    def allocate_managed(self, nbytes: int, attach_global: bool = True) -> tuple:
        p = ctypes.c_void_p()
        _hip().hipMallocManaged(ctypes.byref(p), nbytes,
                                hip_api.hipMemAttachGlobal if attach_global else hip_api.hipMemAttachHost)
        return p.value, (ctypes.c_uint8 * nbytes).from_address(p.value), self.free

    # ------------------------------------------------------------------ copies
    def read(self, array, stream=0):
        if not array.size:
            return array._empty_host_like()
        return _staged(array, array._stream(stream))

    def copy_out(self, array, stream=0):
        if not array.size:
            return array._empty_host_like()
        return _staged(array, array._stream(stream), wait=False)

    def copy_to_host(self, array, ary, stream=0) -> None:
        s = array._stream(stream)
        if _same_layout(ary, array) and ary.flags.writeable:
            _copy(ary.ctypes.data, array.ptr, array.nbytes, hip_api.hipMemcpyDeviceToHost, s, keep=ary)
            return
        ary[...] = _staged(array, s)

    def copy_to_device(self, array, src, stream=0) -> None:
        s = array._stream(stream)
        c, f = array.is_c_contiguous(), array.is_f_contiguous()
        if (c and src.flags.c_contiguous) or (f and src.flags.f_contiguous):
            _copy(array.ptr, src.ctypes.data, array.nbytes, hip_api.hipMemcpyHostToDevice, s, keep=src)
            return
        if c or f:
            host = np.require(src, requirements="C" if c else "F")
            _copy(array.ptr, host.ctypes.data, array.nbytes, hip_api.hipMemcpyHostToDevice, s, keep=host)
            return
        # strided destination: read the span, overwrite our elements in it, write it back
        lo, hi = span(array.shape, array.strides, array.dtype.itemsize)
        staging = np.empty(hi - lo, np.uint8)
        _copy(staging.ctypes.data, array.ptr + lo, hi - lo, hip_api.hipMemcpyDeviceToHost, s)
        if not s.is_default:
            s.synchronize()
        np.ndarray(array.shape, array.dtype, buffer=staging, offset=-lo, strides=array.strides)[...] = src
        _copy(array.ptr + lo, staging.ctypes.data, hi - lo, hip_api.hipMemcpyHostToDevice, s, keep=staging)

    def copy_within(self, dst, src, stream=0) -> None:
        s = dst._stream(stream)
        if _same_layout(dst, src):
            _copy(dst.ptr, src.ptr, dst.nbytes, hip_api.hipMemcpyDeviceToDevice, s)
            return
        self.copy_to_device(dst, _staged(src, s), stream)

    def copy_bytes(self, dst: int, src: int, nbytes: int, stream=None) -> None:
        if not stream:
            _hip().hipMemcpy(dst, src, nbytes, hip_api.hipMemcpyDefault)
        else:
            _hip().hipMemcpyAsync(dst, src, nbytes, hip_api.hipMemcpyDefault, stream_handle(stream))

    def memset(self, address: int, value: int, nbytes: int, stream=None) -> None:
        if not stream:
            _hip().hipMemset(address, value, nbytes)
        else:
            _hip().hipMemsetAsync(address, value, nbytes, stream_handle(stream))

    # ------------------------------------------------------------------ memory shared with others
    def interface_stream(self, stream):
        # 1 = the legacy default stream in the protocol
        return stream.handle if (stream is not None and stream.handle) else 1

    def wait_for_producer(self, stream) -> None:
        if stream == 0:
            raise ValueError("__cuda_array_interface__ stream 0 is disallowed by the protocol")
        # 1 and 2 are the legacy / per-thread default streams; HIP spells them 0 and 2
        _hip().hipStreamSynchronize(0 if stream == 1 else int(stream))

    def finish_for_consumer(self, array, stream) -> None:
        # the consumer will use the memory on its stream: make our work visible to every
        # stream by finishing it (stream -1 means "do not synchronize")
        if stream != -1:
            if array.stream is not None and array.stream.handle:
                array.stream.synchronize()
            else:
                _hip().hipStreamSynchronize(0)

    # ------------------------------------------------------------------ streams and events
    def stream_create(self) -> tuple:
        from pykern.runtime.device_registry import current_device_id, ensure_current

        dev = current_device_id()
        ensure_current(dev)
        h = ctypes.c_void_p()
        _hip().hipStreamCreateWithFlags(ctypes.byref(h), hip_api.hipStreamDefault)
        return h.value or 0, dev

    def stream_destroy(self, handle: int) -> None:
        try:
            _hip().hipStreamDestroy(handle)
        except Exception:  # the runtime may already be gone at exit
            pass

    def stream_synchronize(self, handle: int) -> None:
        _hip().hipStreamSynchronize(handle)

    def stream_query(self, handle: int) -> bool:
        rc = _hip().raw.hipStreamQuery(handle)
        if rc == hip_api.hipErrorNotReady:
            return False
        if rc:
            raise _hip().error(rc, "hipStreamQuery")
        return True

    def stream_add_callback(self, stream, callback, arg) -> None:
        # HIP calls it from its own thread (hipStreamAddCallback), through one C trampoline
        key = next(_callback_ids)
        pending_callbacks[key] = (stream, callback, arg)
        try:
            _hip().hipStreamAddCallback(stream.handle, _callback_pointer(), key, 0)
        except BaseException:
            del pending_callbacks[key]
            raise

    def event_create(self, timing: bool) -> int:
        h = ctypes.c_void_p()
        _hip().hipEventCreateWithFlags(ctypes.byref(h), hip_api.hipEventDefault if timing else hip_api.hipEventDisableTiming)
        return h.value or 0

    def event_destroy(self, handle: int) -> None:
        try:
            _hip().hipEventDestroy(handle)
        except Exception:
            pass

    def event_record(self, event, stream) -> None:
        _hip().hipEventRecord(event.handle, stream_handle(stream))

    def event_synchronize(self, event) -> None:
        _hip().hipEventSynchronize(event.handle)

    def event_query(self, event) -> bool:
        rc = _hip().raw.hipEventQuery(event.handle)
        if rc == hip_api.hipErrorNotReady:
            return False
        if rc:
            raise _hip().error(rc, "hipEventQuery")
        return True

    def event_wait(self, event, stream) -> None:
        _hip().hipStreamWaitEvent(stream_handle(stream), event.handle, 0)

    def event_elapsed(self, start, end) -> float:
        ms = ctypes.c_float()
        _hip().hipEventElapsedTime(ctypes.byref(ms), start.handle, end.handle)
        return float(ms.value)


_callback_ids = itertools.count(1)
#: key passed as userData -> (stream, callback, arg) of callbacks HIP has not called yet
pending_callbacks: dict[int, tuple] = {}
_trampoline: list = []  # the one C function pointer HIP calls (made on first use; never freed)


def _callback_pointer():
    if not _trampoline:
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)

        def trampoline(handle, status, key):
            stream, callback, arg = pending_callbacks.pop(key)
            run_callback(stream, callback, status, arg)

        fn = proto(trampoline)
        _trampoline[:] = [fn, ctypes.cast(fn, ctypes.c_void_p).value]
    return _trampoline[1]
