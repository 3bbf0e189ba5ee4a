"""The operations in which the targets' memory and streams differ, as one interface.

Device arrays (``memory/arrays.py``) and streams and events (``streams.py``) are
written once for both targets; each operation whose doing differs between them
is a method of the target's :class:`Driver` -- ``CpuDriver``
(``runtime/cpu/driver.py``: the host is the device, every queued operation is
done when it returns) and ``HipDriver`` (``runtime/hip/driver.py``:
libamdhip64). ``pykern.runtime.driver(name)`` gives the one driver of a target;
arrays and streams keep theirs (``storage.driver``, ``stream.driver``).

Drivers allocate and free but own nothing: what keeps memory alive, and when a
free runs (``defer_cleanup``), is the memory code's. Array-level copies receive
the ``DeviceArray`` and ask it for what they need (its host view, its span,
``array._stream(s)`` for the ``Stream`` a copy is queued on), so that no driver
imports the memory or stream modules that import it.

Example::

    >>> from pykern.runtime import driver
    >>> drv = driver("cpu")
    >>> drv.name, drv.asynchronous, drv.device_id()
    ('cpu', False, 0)
"""

from __future__ import annotations

import warnings


class Driver:
    """One target's memory, copies, streams and events. Each method says what it must do;
    the two targets' classes say how."""

    #: the target this driver serves ("cpu", "hip")
    name: str = ""
    #: whether an operation queued on a stream may still run after its call returns (so the
    #: host buffers it reads or writes must be kept until the stream synchronizes)
    asynchronous: bool = False
    #: whether this target's memory is host memory (which the host may read and write directly)
    host_memory: bool = False
    #: the DLPack device type of this target's memory (``kDLCPU``, ``kDLROCM``)
    dlpack_device: int = 0

    # ------------------------------------------------------------------ devices
    def device_id(self) -> int:
        """The current device of this target (what new memory and streams belong to)."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait until all work queued on the current device has finished."""
        raise NotImplementedError

    # ------------------------------------------------------------------ memory
    def allocate(self, nbytes: int) -> tuple:
        """``(address, device, keeper, free)``: ``nbytes`` of new device memory, aligned to
        256 bytes; ``keeper`` holds host memory alive, ``free(address)`` (or None) gives it back."""
        raise NotImplementedError

    def allocate_host(self, nbytes: int, mapped: bool = False, portable: bool = False, wc: bool = False) -> tuple:
        """``(address, device address, buffer, free)``: ``nbytes`` of host memory the device copies
        to and from fastest (page-locked), ``mapped`` into the device's address space;
        ``buffer`` (a numpy array can be made over it) keeps it alive until ``free(address)``."""
        raise NotImplementedError

    def allocate_managed(self, nbytes: int, attach_global: bool = True) -> tuple:
        """``(address, buffer, free)``: ``nbytes`` of memory valid on the host and the device."""
        raise NotImplementedError

    # ------------------------------------------------------------------ copies of device arrays
    def read(self, array, stream=0):
        """A host numpy array with the contents of device array ``array``, complete on return
        (the memory itself where the host can read it)."""
        raise NotImplementedError

    def copy_out(self, array, stream=0):
        """A new host numpy array with ``array``'s shape, dtype and strides holding its contents
        (complete once ``stream`` synchronizes)."""
        raise NotImplementedError

    def copy_to_host(self, array, ary, stream=0) -> None:
        """``array``'s contents into host numpy array ``ary`` (same shape and dtype, not empty)."""
        raise NotImplementedError

    def copy_to_device(self, array, src, stream=0) -> None:
        """Host numpy array ``src`` (same shape and dtype, not empty) into ``array``."""
        raise NotImplementedError

    def copy_within(self, dst, src, stream=0) -> None:
        """Device array ``src`` into device array ``dst``, both of this target (same shape and
        dtype, not empty)."""
        raise NotImplementedError

    def copy_bytes(self, dst: int, src: int, nbytes: int, stream=None) -> None:
        """``nbytes`` raw bytes from address ``src`` to ``dst`` (host or device memory: unified
        addressing tells which); on ``stream``'s queue when it is not the default stream."""
        raise NotImplementedError

    def memset(self, address: int, value: int, nbytes: int, stream=None) -> None:
        """``nbytes`` bytes at ``address`` set to the byte ``value``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ memory shared with others
    def interface_stream(self, stream):
        """The ``stream`` entry of a ``__cuda_array_interface__`` for an array bound to ``stream``
        (a Stream or None): None where there is nothing to wait for."""
        raise NotImplementedError

    def wait_for_producer(self, stream) -> None:
        """Before using memory another library exported with ``__cuda_array_interface__`` whose
        ``stream`` entry is ``stream`` (not None): make its pending work on it visible."""
        raise NotImplementedError

    def finish_for_consumer(self, array, stream) -> None:
        """Before another library reads ``array`` through DLPack (``__dlpack__(stream=stream)``):
        make the work queued on it visible (``stream == -1``: the consumer asked for nothing)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ streams and events
    def stream_create(self) -> tuple:
        """``(handle, device)`` of a new stream on the current device (handle 0: none made)."""
        raise NotImplementedError

    def stream_destroy(self, handle: int) -> None:
        raise NotImplementedError

    def stream_synchronize(self, handle: int) -> None:
        """Wait until the work queued on stream ``handle`` has finished."""
        raise NotImplementedError

    def stream_query(self, handle: int) -> bool:
        """Whether the work queued on stream ``handle`` has finished (never blocks)."""
        raise NotImplementedError

    def stream_add_callback(self, stream, callback, arg) -> None:
        """Call ``callback(stream, status, arg)`` (through :func:`run_callback`) once the work
        queued on ``stream`` so far has finished."""
        raise NotImplementedError

    def event_create(self, timing: bool) -> int:
        """The handle of a new event (0: the event is its Python object alone)."""
        raise NotImplementedError

    def event_destroy(self, handle: int) -> None:
        raise NotImplementedError

    def event_record(self, event, stream) -> None:
        """Mark in ``stream`` (a stream value users pass: 0, a Stream, a handle) the point
        reached so far."""
        raise NotImplementedError

    def event_synchronize(self, event) -> None:
        raise NotImplementedError

    def event_query(self, event) -> bool:
        raise NotImplementedError

    def event_wait(self, event, stream) -> None:
        """Make work queued later on ``stream`` wait for ``event`` (the host does not block)."""
        raise NotImplementedError

    def event_elapsed(self, start, end) -> float:
        """Milliseconds between two recorded timing events of this target."""
        raise NotImplementedError


def stream_handle(s) -> int:
    """The handle of what users pass as a stream: 0/None (the default stream: 0), a pykern
    Stream, an int, or an object with an int ``cuda_stream`` or ``handle`` (torch, cupy).

    >>> stream_handle(None), stream_handle(0x10), stream_handle(type("S", (), {"cuda_stream": 7})())
    (0, 16, 7)
    """
    if s is None or s == 0:
        return 0
    if isinstance(s, int):
        return int(s)
    h = getattr(s, "handle", None)
    h = getattr(s, "cuda_stream", h)
    if isinstance(h, int):
        return int(h)
    raise TypeError(f"expected a pykern Stream, 0 or a stream handle, got {type(s).__name__}")


def run_callback(stream, callback, status, arg) -> None:
    """Call a stream callback; numba's rule: a failing callback warns, it never breaks the stream."""
    try:
        callback(stream, status, arg)
    except Exception as e:
        warnings.warn(f"Exception in stream callback: {e}")
