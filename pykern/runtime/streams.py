"""Streams and events on both targets.

On "hip" a Stream wraps a hipStream_t (handle 0 is the null stream) and an
Event a hipEvent_t. On "cpu" every operation runs immediately, so streams only
keep the API shape and events record host timestamps.

Example::

    >>> from pykern.runtime import streams
    >>> s = streams.stream(target="cpu")
    >>> start, end = streams.event(target="cpu"), streams.event(target="cpu")
    >>> start.record(s); end.record(s); end.synchronize()
    >>> start.elapsed_time(end) >= 0.0
    True
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import time
import weakref

from pykern.runtime import resolve_target
from pykern.runtime.hip import api as hip_api


def _hip():
    from pykern.runtime.hip.library import lib

    return lib()


def _destroy_stream(handle: int) -> None:
    try:
        _hip().hipStreamDestroy(handle)
    except Exception:  # the runtime may already be gone at exit
        pass


def _destroy_event(handle: int) -> None:
    try:
        _hip().hipEventDestroy(handle)
    except Exception:
        pass


class StreamHandle(int):
    """``stream.handle``: the hipStream_t as an int that also has ctypes' ``.value`` (None for
    the null stream), as numba's ``c_void_p`` handle -- for code that writes
    ``stream.handle.value`` (e.g. to hand the stream to cupy or torch)."""

    __slots__ = ()

    @property
    def value(self):
        return int(self) or None


class Stream:
    """A queue of device work. ``int(s)`` is the hipStream_t value (0: null stream)."""

    __slots__ = ("handle", "target", "device", "_keepalive", "_finalizer", "__weakref__")

    def __init__(self, handle: int = 0, target: str = "cpu", device: int = 0, owned: bool = False):
        self.handle = StreamHandle(int(handle or 0))
        self.target = target
        self.device = device
        # host buffers an async copy still reads/writes: released at synchronize
        self._keepalive: list = []
        self._finalizer = None
        if owned and self.handle:
            self._finalizer = weakref.finalize(self, _destroy_stream, self.handle)
            self._finalizer.atexit = False

    @property
    def is_default(self) -> bool:
        return self.handle == 0

    def synchronize(self) -> None:
        """Wait until every operation queued on this stream has finished."""
        if self.target == "hip":
            _hip().hipStreamSynchronize(self.handle)
        self._keepalive.clear()

    def query(self) -> bool:
        """True when all queued work has finished (never blocks)."""
        if self.target != "hip":
            return True
        rc = _hip().raw.hipStreamQuery(self.handle)
        if rc == hip_api.hipErrorNotReady:
            return False
        if rc:
            raise _hip().error(rc, "hipStreamQuery")
        self._keepalive.clear()
        return True

    @contextlib.contextmanager
    def auto_synchronize(self):
        """``with s.auto_synchronize(): ...`` synchronizes the stream on exit."""
        try:
            yield self
        finally:
            self.synchronize()

    def add_callback(self, callback, arg=None) -> None:
        """numba's ``Stream.add_callback``: call ``callback(stream, status, arg)`` once the work queued
        so far has finished (``status`` 0 on success). On "hip" HIP calls it from its own thread
        (hipStreamAddCallback), so it must not call HIP itself and should be short; on "cpu" queued
        work has already finished, so it runs now. An exception in it becomes a warning, as in numba."""
        if self.target != "hip":
            _run_callback(self, callback, 0, arg)
            return
        key = next(_callback_ids)
        _pending_callbacks[key] = (self, callback, arg)
        try:
            _hip().hipStreamAddCallback(self.handle, _callback_pointer(), key, 0)
        except BaseException:
            del _pending_callbacks[key]
            raise

    def async_done(self):
        """numba's ``Stream.async_done``: an ``asyncio`` future of the running loop that resolves to
        this stream once the work queued so far has finished (``await s.async_done()``)."""
        import asyncio

        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def resolve(status):
            if future.done():
                return
            if status == 0:
                future.set_result(self)
            else:
                future.set_exception(Exception(f"Stream error {status}"))

        self.add_callback(lambda stream, status, _: loop.call_soon_threadsafe(resolve, status))
        return future

    def keep_alive(self, obj) -> None:
        """Hold ``obj`` until the next synchronize (async copies from/to host memory)."""
        if self.target == "hip":
            self._keepalive.append(obj)

    def __int__(self) -> int:
        return int(self.handle)  # a plain int: returning the int subclass is deprecated

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.handle, self.target) == (other.handle, other.target)

    def __hash__(self):
        return hash((self.handle, self.target))

    def __repr__(self) -> str:
        what = "default stream" if self.is_default else f"stream 0x{self.handle:x}"
        return f"<pykern {self.target} {what}>"


def _run_callback(stream, callback, status, arg) -> None:
    try:
        callback(stream, status, arg)
    except Exception as e:  # numba's rule: a failing callback warns, it never breaks the stream
        import warnings

        warnings.warn(f"Exception in stream callback: {e}")


_callback_ids = itertools.count(1)
_pending_callbacks: dict[int, tuple] = {}  # key passed as userData -> (stream, callback, arg)
_trampoline: list = []  # the one C function pointer HIP calls (made on first use; never freed)


def _callback_pointer():
    if not _trampoline:
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)

        def trampoline(handle, status, key):
            stream, callback, arg = _pending_callbacks.pop(key)
            _run_callback(stream, callback, status, arg)

        fn = proto(trampoline)
        _trampoline[:] = [fn, ctypes.cast(fn, ctypes.c_void_p).value]
    return _trampoline[1]


_defaults: dict[tuple, Stream] = {}


def default_stream(target: str | None = None) -> Stream:
    """The null stream of the current device (work on it is ordered with all blocking streams)."""
    t = resolve_target(target)
    dev = 0
    if t == "hip":
        from pykern.runtime.device_registry import current_device_id

        dev = current_device_id()
    s = _defaults.get((t, dev))
    if s is None:
        s = _defaults[(t, dev)] = Stream(0, t, dev)
    return s


def legacy_default_stream(target: str | None = None) -> Stream:
    """numba's name for the legacy default (null) stream: ``default_stream()``."""
    return default_stream(target)


def per_thread_default_stream(target: str | None = None) -> Stream:
    """numba's per-thread default stream, given as the null stream (``default_stream()``): work on it
    is ordered with every blocking stream, a superset of the per-thread stream's ordering."""
    return default_stream(target)


def stream(target: str | None = None) -> Stream:
    """A new stream (hipStreamCreate on "hip"), destroyed when no longer referenced."""
    t = resolve_target(target)
    if t != "hip":
        return Stream(0, t, 0)
    from pykern.runtime.device_registry import current_device_id, ensure_current

    dev = current_device_id()
    ensure_current(dev)
    h = ctypes.c_void_p()
    _hip().hipStreamCreateWithFlags(ctypes.byref(h), hip_api.hipStreamDefault)
    return Stream(h.value or 0, t, dev, owned=True)


def external_stream(ptr, target: str | None = None) -> Stream:
    """numba's ``cuda.external_stream(ptr)``: a Stream over a ``hipStream_t`` created elsewhere
    (torch, cupy, a C library); pykern never destroys it."""
    t = resolve_target(target)
    dev = 0
    if t == "hip":
        from pykern.runtime.device_registry import current_device_id

        dev = current_device_id()
    return Stream(int(ptr), t, dev, owned=False)


def as_stream(s, target: str) -> Stream:
    """Normalise what users pass as ``stream=``: 0/None, a Stream, or a raw handle int."""
    if s is None or s == 0:
        return default_stream(target)
    if isinstance(s, Stream):
        return s
    if isinstance(s, int):
        return Stream(s, target)
    h = getattr(s, "handle", None)  # e.g. a torch.cuda.Stream-like object with .cuda_stream
    h = getattr(s, "cuda_stream", h)
    if isinstance(h, int):
        return Stream(h, target)
    raise TypeError(f"expected a pykern Stream, 0 or a stream handle, got {type(s).__name__}")


class Event:
    """A marker in a stream: ``record``, ``synchronize``, ``query``, ``elapsed_time``."""

    __slots__ = ("target", "timing", "handle", "_t", "_finalizer", "__weakref__")

    def __init__(self, timing: bool = True, target: str | None = None):
        self.target = resolve_target(target)
        self.timing = bool(timing)
        self.handle = 0
        self._t: float | None = None  # cpu: perf_counter at record
        self._finalizer = None
        if self.target == "hip":
            h = ctypes.c_void_p()
            flags = hip_api.hipEventDefault if timing else hip_api.hipEventDisableTiming
            _hip().hipEventCreateWithFlags(ctypes.byref(h), flags)
            self.handle = h.value or 0
            self._finalizer = weakref.finalize(self, _destroy_event, self.handle)
            self._finalizer.atexit = False

    def record(self, stream=0) -> None:
        """Mark the point in ``stream`` (default: the null stream) reached so far."""
        if self.target == "hip":
            s = as_stream(stream, "hip")
            _hip().hipEventRecord(self.handle, s.handle)
        else:
            self._t = time.perf_counter()

    def synchronize(self) -> None:
        """Wait until the recorded point has been reached."""
        if self.target == "hip":
            _hip().hipEventSynchronize(self.handle)
        # cpu: work is done when launches return; a never-recorded event returns at once (as in CUDA/HIP)

    def query(self) -> bool:
        """True when the recorded work has finished."""
        if self.target != "hip":
            return True  # cpu work is complete when recorded; CUDA/HIP say True for a never-recorded event too
        rc = _hip().raw.hipEventQuery(self.handle)
        if rc == hip_api.hipErrorNotReady:
            return False
        if rc:
            raise _hip().error(rc, "hipEventQuery")
        return True

    def wait(self, stream=0) -> None:
        """Make work queued later on ``stream`` wait for this event (the host does not block)."""
        if self.target == "hip":
            _hip().hipStreamWaitEvent(as_stream(stream, "hip").handle, self.handle, 0)
        # cpu: nothing to wait for (a never-recorded event is a no-op, as in CUDA/HIP)

    def elapsed_time(self, other: "Event") -> float:
        """Milliseconds from this event to ``other`` (both recorded, with timing)."""
        if not (self.timing and other.timing):
            raise RuntimeError("elapsed_time needs two events created with timing=True")
        if self.target != other.target:
            raise ValueError("events of different targets")
        if self.target == "hip":
            ms = ctypes.c_float()
            _hip().hipEventElapsedTime(ctypes.byref(ms), self.handle, other.handle)
            return float(ms.value)
        if self._t is None or other._t is None:
            raise RuntimeError("elapsed_time on an event that was never recorded")
        return (other._t - self._t) * 1e3

    def __repr__(self) -> str:
        return f"<pykern {self.target} event{' (timing)' if self.timing else ''}>"


def event(timing: bool = True, target: str | None = None) -> Event:
    """A new Event; ``timing=False`` makes a lighter event without timestamps."""
    return Event(timing, target)


def event_elapsed_time(start: Event, end: Event) -> float:
    """numba's spelling of ``start.elapsed_time(end)`` (ms)."""
    return start.elapsed_time(end)


def synchronize(target: str | None = None) -> None:
    """Wait for all work on the current device (hipDeviceSynchronize on "hip")."""
    t = resolve_target(target)
    if t == "hip":
        _hip().hipDeviceSynchronize()
        for s in list(_defaults.values()):
            s._keepalive.clear()
