"""numba.cuda.cudadrv.driver's memory functions and objects on pykern: raw copies and memset
(``host_to_device``, ``device_memset``...), the context's raw allocations as numba's
``MemoryPointer`` family, and host-memory extents. ``driver`` re-exports all of it; it lives
apart so that ``compat.Context.memalloc`` can reach it without an import cycle through
``driver`` (which imports ``compat``)."""

import ctypes
import weakref


def is_device_memory(obj) -> bool:
    """numba's test for its own device memory objects (``__cuda_memory__``): pykern device arrays."""
    return bool(getattr(obj, "__cuda_memory__", False))


def device_pointer(obj) -> int:
    """The device address of a device array (or anything with ``__cuda_array_interface__``)."""
    ptr = getattr(obj, "device_ctypes_pointer", None)
    if isinstance(ptr, ctypes.c_void_p):
        return ptr.value or 0
    return obj.__cuda_array_interface__["data"][0] or 0


def _address(obj) -> int:
    """Where ``obj``'s bytes are: a device pointer for device memory (and mapped arrays), the
    buffer address of a plain host array."""
    if hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "device_ctypes_pointer"):
        return device_pointer(obj)
    import numpy as np

    return np.asarray(obj).ctypes.data


def device_memory_size(obj) -> int:
    """Bytes of memory a device array spans (numba's ``device_memory_size``)."""
    size = getattr(obj, "alloc_size", None)
    return int(size if size is not None else obj.nbytes)


def device_memset(dst, val: int, size: int, stream=0) -> None:
    """numba's ``driver.device_memset``: ``size`` bytes at ``dst`` set to the byte ``val``."""
    from pykern.runtime import driver

    driver().memset(_address(dst), val, size, stream)


def _memcpy(dst, src, size: int, stream=0) -> None:
    """``size`` bytes from ``src`` to ``dst``, host or device memory either way (HIP's unified
    addressing tells which: ``hipMemcpyDefault``)."""
    from pykern.runtime import driver

    driver().copy_bytes(_address(dst), _address(src), size, stream)


def host_to_device(dst, src, size: int, stream=0) -> None:
    """numba's ``driver.host_to_device(dst, src, size, stream=0)``: raw bytes, no shape checks."""
    _memcpy(dst, src, size, stream)


def device_to_host(dst, src, size: int, stream=0) -> None:
    """numba's ``driver.device_to_host(dst, src, size, stream=0)``: raw bytes, no shape checks."""
    _memcpy(dst, src, size, stream)


def device_to_device(dst, src, size: int, stream=0) -> None:
    """numba's ``driver.device_to_device(dst, src, size, stream=0)``: raw bytes, no shape checks."""
    _memcpy(dst, src, size, stream)


# ---------------------------------------------------------------- numba's memory objects
# ``ctx.memalloc(n)`` and friends hand out raw allocations as numba's MemoryPointer family: a
# pointer, a size, views at byte offsets that keep the allocation alive, and a finalizer that
# frees it when the last reference goes (numba counts the views in ``refct``).


class _Handle(int):
    """A pointer that is both ``int(h)`` (numba's CUdeviceptr spelling) and ``h.value`` (its
    ctypes spelling)."""

    @property
    def value(self) -> int:
        return int(self)


class MemoryPointer:
    """numba's ``driver.MemoryPointer(context, pointer, size, owner=None, finalizer=None)``:
    ``size`` bytes at device address ``pointer``; ``finalizer()`` runs once, when this object
    is collected or :meth:`free` is called (never for a view)."""

    __cuda_memory__ = True

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        self.device_pointer_value = _pointer_int(pointer)
        self.handle = _Handle(self.device_pointer_value)
        self.size = self._cuda_memsize_ = int(size)
        self.refct = 1
        self._owner = owner
        self.is_managed = finalizer is not None
        self._finalizer = weakref.finalize(self, finalizer) if finalizer is not None else None

    @property
    def owner(self):
        return self if self._owner is None else self._owner

    @property
    def device_pointer(self) -> _Handle:
        return self.handle

    @property
    def device_ctypes_pointer(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.device_pointer_value or None)

    def own(self) -> "OwnedPointer":
        """A reference that counts in ``refct`` while it lives (numba's)."""
        return OwnedPointer(self)

    def free(self) -> None:
        """Release the memory now (views onto it must not be used after)."""
        if self._finalizer is not None:
            self._finalizer()
        self.__dict__.pop("_keeper", None)

    def memset(self, byte: int, count: int | None = None, stream=0) -> None:
        device_memset(self, byte, self.size if count is None else count, stream)

    def view(self, start: int, stop: int | None = None):
        """The bytes ``[start, stop)`` as a pointer that keeps this allocation alive."""
        stop = self.size if stop is None else stop
        if not 0 <= start <= stop <= self.size:
            raise RuntimeError(f"view [{start}, {stop}) is outside the {self.size}-byte allocation")
        base = self.owner
        view = MemoryPointer(self.context, self.device_pointer_value + start if stop > start else 0,
                             stop - start, owner=base)
        return OwnedPointer(base, view)

    def __int__(self) -> int:
        return self.device_pointer_value

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.device_pointer_value:#x}, {self.size} bytes>"


class OwnedPointer:
    """A counted reference to a :class:`MemoryPointer` (or a view of it): attributes are the
    view's; while it lives the allocation's ``refct`` counts it and the memory stays alive."""

    def __init__(self, memptr: MemoryPointer, view: MemoryPointer | None = None):
        self._mem = memptr
        self._view = memptr if view is None else view
        memptr.refct += 1
        weakref.finalize(self, _decref, memptr)

    def __getattr__(self, name):
        return getattr(self._view, name)

    def __int__(self) -> int:
        return self._view.device_pointer_value


def _decref(memptr: MemoryPointer) -> None:
    memptr.refct -= 1


class MappedMemory(MemoryPointer):
    """numba's host memory the device addresses directly (``memhostalloc(mapped=True)``,
    ``mempin(mapped=True)``): ``host_pointer`` and ``device_pointer`` (equal on the cpu target)."""

    def __init__(self, context, host_pointer, size, device_pointer=None, owner=None, finalizer=None):
        super().__init__(context, host_pointer if device_pointer is None else device_pointer, size, owner, finalizer)
        self.host_pointer = ctypes.c_void_p(_pointer_int(host_pointer) or None)


class PinnedMemory(MappedMemory):
    """numba's page-locked host memory not mapped into the device (``memhostalloc()``,
    ``mempin()``): kernels must not use ``device_pointer``; copies from it are faster."""


class ManagedMemory(MappedMemory):
    """numba's managed (unified) memory: one address valid on the host and the device."""


def _pointer_int(pointer) -> int:
    if pointer is None:
        return 0
    value = getattr(pointer, "value", pointer)
    return int(value or 0)


def _on_hip() -> bool:
    from pykern.runtime import current_target

    return current_target() == "hip"


def _host_keeper(size: int):
    """``(address, keeper)`` of ``size`` bytes of plain host memory (the cpu target's device)."""
    import numpy as np

    keeper = np.empty(max(1, size), np.uint8)
    return keeper.ctypes.data, keeper


def _keeping(mem: MemoryPointer, keeper) -> MemoryPointer:
    """``mem``, holding the object whose death frees its memory (a numpy buffer, or the
    ctypes array a HIP allocation's finalizer hangs on)."""
    mem._keeper = keeper
    mem.is_managed = True
    return mem


def memalloc(context, size: int) -> MemoryPointer:
    from pykern.runtime.memory.arrays import Storage

    st = Storage.allocate(size, "hip" if _on_hip() else "cpu")
    return MemoryPointer(context, st.ptr, size, finalizer=st.free)


def memhostalloc(context, size: int, mapped=False, portable=False, wc=False) -> MappedMemory:
    cls = MappedMemory if mapped else PinnedMemory
    if not _on_hip():
        ptr, keeper = _host_keeper(size)
        return _keeping(cls(context, ptr, size), keeper)
    from pykern.runtime import driver
    from pykern.runtime.memory.arrays import _freed_with

    host, dev, buf, free = driver("hip").allocate_host(max(1, size), mapped=mapped, portable=portable, wc=wc)
    return _keeping(cls(context, host, size, device_pointer=dev), _freed_with(buf, free, host))


def mempin(context, owner, pointer, size: int, mapped=False) -> MappedMemory:
    """``size`` bytes of existing host memory at ``pointer`` (owned by ``owner``, kept alive)
    page-locked (``hipHostRegister``) until the returned object dies; on the cpu target the
    host memory is the device's already."""
    cls = MappedMemory if mapped else PinnedMemory
    host = _pointer_int(pointer)
    if not _on_hip():
        return cls(context, host, size, owner=owner)
    from pykern.runtime import driver
    from pykern.runtime.hip import api as hip_api
    from pykern.runtime.hip.library import lib as hip

    hip().hipHostRegister(host, size, hip_api.hipHostRegisterMapped if mapped else 0)
    dev = driver("hip").mapped_address(host) if mapped else host
    mem = cls(context, host, size, device_pointer=dev, owner=owner, finalizer=lambda: _unregister(host))
    return mem


def memallocmanaged(context, size: int, attach_global=True) -> ManagedMemory:
    if not _on_hip():
        ptr, keeper = _host_keeper(size)
        return _keeping(ManagedMemory(context, ptr, size), keeper)
    from pykern.runtime import driver
    from pykern.runtime.memory.arrays import _freed_with

    ptr, buf, free = driver("hip").allocate_managed(max(1, size), attach_global)
    return _keeping(ManagedMemory(context, ptr, size), _freed_with(buf, free, ptr))


def _unregister(host: int) -> None:
    from pykern.runtime.memory.arrays import _release

    _release(_hip_unregister, host)


def _hip_unregister(host: int) -> None:
    from pykern.runtime.hip.library import lib as hip

    hip().hipHostUnregister(host)


def require_device_memory(obj) -> None:
    """numba's check that ``obj`` is device memory (a pykern device array or memory pointer)."""
    if not is_device_memory(obj):
        raise Exception("Not a CUDA memory object.")


def host_memory_extents(obj):
    """``(start, end)`` addresses of the bytes a host array or buffer spans (numba's)."""
    import numpy as np

    if isinstance(obj, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        start = ctypes.addressof(obj)
        return start, start + ctypes.sizeof(obj)
    a = obj if isinstance(obj, np.ndarray) else np.asarray(memoryview(obj))  # shares, never copies
    lo, hi = np.byte_bounds(a) if hasattr(np, "byte_bounds") else np.lib.array_utils.byte_bounds(a)
    return lo, hi


def host_memory_size(obj) -> int:
    """Bytes a host array or buffer spans (numba's ``host_memory_size``)."""
    s, e = host_memory_extents(obj)
    if e < s:
        raise ValueError("memory extent of negative size")
    return e - s
