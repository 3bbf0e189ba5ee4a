"""Streams and events on both targets.

On "hip" a Stream wraps a hipStream_t (handle 0 is the null stream) and an
Event a hipEvent_t. On "cpu" every operation runs immediately, so streams only
keep the API shape and events record host timestamps. The classes are the same
for both: each operation is the target's driver's (``pykern.runtime.drivers``).

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
import weakref

from pykern.runtime import driver, resolve_target
from pykern.runtime.drivers import stream_handle


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

    __slots__ = ("handle", "target", "driver", "device", "_keepalive", "_finalizer", "__weakref__")

    def __init__(self, handle: int = 0, target: str = "cpu", device: int = 0, owned: bool = False):
        self.handle = StreamHandle(int(handle or 0))
        self.target = target
        self.driver = driver(target)
        self.device = device
        # host buffers an async copy still reads/writes: released at synchronize
        self._keepalive: list = []
        self._finalizer = None
        if owned and self.handle:
            self._finalizer = weakref.finalize(self, self.driver.stream_destroy, self.handle)
            self._finalizer.atexit = False

    @property
    def is_default(self) -> bool:
        return self.handle == 0

    def synchronize(self) -> None:
        """Wait until every operation queued on this stream has finished."""
        self.driver.stream_synchronize(self.handle)
        self._keepalive.clear()

    def query(self) -> bool:
        """True when all queued work has finished (never blocks)."""
        if not self.driver.stream_query(self.handle):
            return False
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
        self.driver.stream_add_callback(self, callback, arg)

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
        if self.driver.asynchronous:
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


_defaults: dict[tuple, Stream] = {}


def default_stream(target: str | None = None) -> Stream:
    """The null stream of the current device (work on it is ordered with all blocking streams)."""
    t = resolve_target(target)
    dev = driver(t).device_id()
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
    handle, dev = driver(t).stream_create()
    return Stream(handle, t, dev, owned=True)


def external_stream(ptr, target: str | None = None) -> Stream:
    """numba's ``cuda.external_stream(ptr)``: a Stream over a ``hipStream_t`` created elsewhere
    (torch, cupy, a C library); pykern never destroys it."""
    t = resolve_target(target)
    return Stream(int(ptr), t, driver(t).device_id(), owned=False)


def as_stream(s, target: str) -> Stream:
    """Normalise what users pass as ``stream=``: 0/None, a Stream, or a raw handle int."""
    if s is None or s == 0:
        return default_stream(target)
    if isinstance(s, Stream):
        return s
    return Stream(stream_handle(s), target)  # an int, or e.g. a torch.cuda.Stream-like object's .cuda_stream


class Event:
    """A marker in a stream: ``record``, ``synchronize``, ``query``, ``elapsed_time``."""

    __slots__ = ("target", "driver", "timing", "handle", "_t", "_finalizer", "__weakref__")

    def __init__(self, timing: bool = True, target: str | None = None):
        self.target = resolve_target(target)
        self.driver = driver(self.target)
        self.timing = bool(timing)
        self._t: float | None = None  # cpu: perf_counter at record
        self._finalizer = None
        self.handle = self.driver.event_create(self.timing)
        if self.handle:
            self._finalizer = weakref.finalize(self, self.driver.event_destroy, self.handle)
            self._finalizer.atexit = False

    def record(self, stream=0) -> None:
        """Mark the point in ``stream`` (default: the null stream) reached so far."""
        self.driver.event_record(self, stream)

    def synchronize(self) -> None:
        """Wait until the recorded point has been reached."""
        self.driver.event_synchronize(self)

    def query(self) -> bool:
        """True when the recorded work has finished."""
        return self.driver.event_query(self)

    def wait(self, stream=0) -> None:
        """Make work queued later on ``stream`` wait for this event (the host does not block)."""
        self.driver.event_wait(self, stream)

    def elapsed_time(self, other: "Event") -> float:
        """Milliseconds from this event to ``other`` (both recorded, with timing)."""
        if not (self.timing and other.timing):
            raise RuntimeError("elapsed_time needs two events created with timing=True")
        if self.target != other.target:
            raise ValueError("events of different targets")
        return self.driver.event_elapsed(self, other)

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
    driver(t).synchronize()
    for (of, _), s in list(_defaults.items()):
        if of == t:
            s._keepalive.clear()
