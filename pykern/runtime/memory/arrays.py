"""Device arrays: one class for both targets, so user code is the same on each.

A DeviceArray is a strided view (``ptr``, ``shape``, byte ``strides``,
``dtype``) onto a storage of one target's memory: a hipMalloc allocation ("hip")
or host memory ("cpu"). The code here is the same for both: what differs (how
memory is allocated and copied) is the storage's driver
(``pykern.runtime.drivers``). Storage is freed when the last array viewing it
goes away (weakref.finalize: never twice, never at interpreter exit).

Example::

    >>> import numpy as np
    >>> from pykern.runtime.memory.arrays import to_device
    >>> d = to_device(np.arange(6.0).reshape(2, 3), target="cpu")
    >>> d[1, ::2].copy_to_host()
    array([3., 5.])
"""

from __future__ import annotations

import contextlib
import ctypes
import operator
import threading
import warnings
import weakref

import numpy as np

from pykern.core.strides import c_strides, f_strides, is_contiguous, span
from pykern.runtime import driver, resolve_target
from pykern.runtime.memory import dlpack
from pykern.runtime.streams import Stream, as_stream


# --------------------------------------------------------------------------- storage
# defer_cleanup(): while its depth is positive, frees are queued (as (free, ptr)), not run
_defer_depth = [0]
_deferred: list = []
_defer_lock = threading.Lock()


def _release(free, ptr: int) -> None:
    """``free(ptr)`` now, or when the outermost ``defer_cleanup`` block ends."""
    if _defer_depth[0]:
        _deferred.append((free, ptr))  # list.append is atomic: finalizers may run on any thread
        return
    try:
        free(ptr)
    except Exception:  # freeing during interpreter/runtime teardown: the OS reclaims it
        pass


def _freed_with(keeper, free, ptr: int):
    """``keeper``, whose death gives ``ptr`` back with ``free`` (None: nothing to give back)."""
    if free is not None:
        weakref.finalize(keeper, _release, free, ptr).atexit = False
    return keeper


@contextlib.contextmanager
def defer_cleanup():
    """numba's ``cuda.defer_cleanup()``: HIP memory (device and page-locked host) whose arrays die
    inside the block is freed when the outermost block ends, so that no hipFree (which may
    synchronize the device) runs in a section of asynchronous work. Nestable; any thread."""
    with _defer_lock:
        _defer_depth[0] += 1
    try:
        yield
    finally:
        with _defer_lock:
            _defer_depth[0] -= 1
        flush_deferred()


def flush_deferred() -> None:
    """Run the frees ``defer_cleanup`` queued, unless a block is still open."""
    with _defer_lock:
        pending = [] if _defer_depth[0] else _deferred[:]
        if pending:
            del _deferred[:len(pending)]
    for free, ptr in pending:
        _release(free, ptr)


class Storage:
    """A block of one target's memory and what keeps it alive. ``ptr`` is its first byte;
    ``driver`` is its target's (``pykern.runtime.driver``)."""

    __slots__ = ("ptr", "nbytes", "target", "driver", "device", "owner", "readonly", "_finalizer", "_memptr",
                 "san_init", "__weakref__")

    def __init__(self, ptr: int, nbytes: int, target: str, device: int = 0, owner=None, readonly: bool = False):
        self.ptr = ptr
        self.nbytes = nbytes
        self.target = target
        self.driver = driver(target)
        self.device = device
        self.owner = owner
        self.readonly = readonly
        self._finalizer = None
        self._memptr = None  # a weak reference to numba's gpu_data for this block, while one lives
        # the sanitizer's per-byte "written" flags (uint8) of a device_array nothing has written
        # all of yet (PYKERN_SANITIZE with init); None: every byte counts as initialised
        self.san_init = None

    @classmethod
    def allocate(cls, nbytes: int, target: str) -> "Storage":
        """``nbytes`` of new memory of ``target``, freed with the Storage."""
        ptr, device, keeper, free = driver(target).allocate(nbytes)
        st = cls(ptr, nbytes, target, device, owner=keeper)
        if free is not None:
            st._finalizer = weakref.finalize(st, _release, free, ptr)
            st._finalizer.atexit = False
        return st

    def free(self) -> None:
        """Release the memory now (later uses of views onto it are undefined)."""
        if self._finalizer is not None:
            self._finalizer()
        self.owner = None


# --------------------------------------------------------------------------- helpers
def _strides_like(shape, strides, itemsize):
    """Contiguous strides that keep the axis order of ``strides``, as
    ``np.empty_like`` (order "K") and numba's ``device_array_like`` give:
    axes sorted by decreasing absolute stride (stable), densely packed.

    >>> _strides_like((5, 6), (16, 160), 8)
    (8, 40)
    """
    perm = sorted(range(len(shape)), key=lambda k: -abs(strides[k]))
    out, acc = [0] * len(shape), itemsize
    for k in reversed(perm):
        out[k] = acc
        acc *= max(shape[k], 1)
    return tuple(out)


def _check_assignable(src, dst) -> None:
    """``a[key] = value`` takes a value that broadcasts to the target without new leading axes,
    as numba's; its ValueErrors in numba's words."""
    if len(src) > len(dst):
        raise ValueError(f"Can't assign {len(src)}-D array to {len(dst)}-D self")
    for axis in range(len(src)):
        n, d = src[-1 - axis], dst[-1 - axis]
        if n != 1 and n != d:
            raise ValueError(f"Can't copy sequence with size {n} to array axis {len(dst) - 1 - axis} "
                             f"with dimension {d}")


def _is_dense(shape, strides, itemsize) -> bool:
    """The elements fill ``prod(shape) * itemsize`` bytes with no gap and no overlap, in some
    axis order. Length-1 axes may have any stride (numpy's relaxed strides): comparing with
    ``_strides_like`` instead would depend on how it orders axes of equal stride.

    >>> _is_dense((1, 3, 100), (24, 8, 24), 8), _is_dense((3, 4), (64, 8), 8)
    (True, False)
    """
    if 0 in shape:
        return True
    acc = itemsize
    for n, st in sorted(((n, st) for n, st in zip(shape, strides) if n > 1), key=lambda p: p[1]):
        if st != acc:
            return False
        acc *= n
    return True


def _squeeze_equal(a, b) -> bool:
    """Shapes equal once their length-1 axes are dropped (numba's check_array_compatibility)."""
    return tuple(n for n in a if n != 1) == tuple(n for n in b if n != 1)


def _normalize_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def _check_dtype(dtype) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.hasobject:
        raise TypeError(f"device arrays cannot hold Python objects (dtype {dt})")
    return dt


class _HostWindow:
    """Gives numpy a view of raw host memory while holding its storage alive."""

    __slots__ = ("__array_interface__", "storage")

    def __init__(self, ptr, shape, strides, dtype, storage, readonly=False):
        self.storage = storage
        self.__array_interface__ = {
            "data": (ptr, readonly),
            "shape": shape,
            "strides": strides,
            "typestr": dtype.str,
            "descr": dtype.descr if dtype.fields else [("", dtype.str)],
            "version": 3,
        }


def _new_memory(shape, strides, dtype, stream):
    """``(storage, ptr, stream)`` of new memory on the current target for an array of ``shape`` and
    byte ``strides``: the constructors' numba spelling, ``DeviceNDArray(shape, strides, dtype,
    stream=0)`` and ``DeviceRecord(dtype, stream=0)``, whose memory numba allocates."""
    t = resolve_target(None)
    itemsize = _check_dtype(dtype).itemsize
    stream = None if stream in (None, 0) else as_stream(stream, t)
    lo, hi = span(tuple(shape), tuple(strides), itemsize)
    storage = Storage.allocate(hi - lo, t)
    return storage, storage.ptr - lo, stream


# --------------------------------------------------------------------------- DeviceArray
class _Handle(int):
    """A pointer that is both ``int(h)`` (numba's CUdeviceptr spelling) and ``h.value``."""

    @property
    def value(self) -> int:
        return int(self)


class GpuData:
    """What ``DeviceArray.gpu_data`` gives: numba's ``MemoryPointer`` attributes for ``size``
    bytes at ``ptr`` of a block it keeps alive (``cudadrv.MemoryPointer`` is the glue layer's)."""

    __cuda_memory__ = True
    __slots__ = ("_storage", "device_pointer_value", "size", "__weakref__")

    def __init__(self, storage: Storage, ptr: int, size: int):
        self._storage = storage
        self.device_pointer_value = ptr
        self.size = size

    @property
    def device_pointer(self) -> _Handle:
        return _Handle(self.device_pointer_value)

    handle = device_pointer

    @property
    def device_ctypes_pointer(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.device_pointer_value or None)

    def __int__(self) -> int:
        return self.device_pointer_value

    def __repr__(self) -> str:
        return f"<GpuData {self.device_pointer_value:#x}, {self.size} bytes>"


class DeviceArray:
    """An n-d array in device memory ("hip") or host memory ("cpu").

    Attributes read by the launcher on every call are plain slots: ``ptr`` (int,
    address of element 0), ``shape``, ``strides`` (bytes), ``dtype``, ``target``.
    """

    __slots__ = ("ptr", "shape", "strides", "dtype", "target", "storage", "stream", "_pk_type", "_writeback",
                 "__weakref__")
    # what numba's is_cuda_ndarray / driver.is_device_memory look for
    __cuda_memory__ = True
    __cuda_ndarray__ = True

    def __init__(self, shape, strides, dtype, storage: Storage | None = None, ptr: int | None = None,
                 stream: Stream | None = None):
        if not isinstance(storage, Storage):  # numba's DeviceNDArray(shape, strides, dtype, stream=0)
            storage, ptr, stream = _new_memory(shape, strides, dtype, storage)
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.dtype = np.dtype(dtype)
        self.storage = storage
        self.ptr = storage.ptr if ptr is None else ptr
        self.target = storage.target
        self.stream = stream
        self._pk_type = None  # the kernel type, memoised by the launcher (shape/strides never change)
        #: a weak reference to the host array to_device copied from, for the deprecated to_host():
        #: the device array must not keep a (large) host array alive after its user dropped it
        self._writeback = None

    # -- numpy-like attributes
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> int:
        return self.storage.device

    @property
    def device_ctypes_pointer(self) -> ctypes.c_void_p:
        """numba's spelling of the data pointer."""
        _written(self, everything=True)  # whatever writes through it, the sanitizer cannot see
        return ctypes.c_void_p(self.ptr)

    @property
    def gpu_data(self) -> "GpuData":
        """numba's ``DeviceNDArray.gpu_data``: the memory from the array's first byte
        (``.device_pointer``, ``int()``); arrays on one block from its first byte (``view(dtype)``,
        a reshape) share one object, as numba's do. It keeps the memory alive."""
        st = self.storage
        _written(self, everything=True)  # whatever writes through it, the sanitizer cannot see
        base = st._memptr() if st._memptr is not None else None
        if base is None:
            base = GpuData(st, st.ptr, st.nbytes)
            st._memptr = weakref.ref(base)  # weak: the block must not keep itself alive through it
        if self.ptr == st.ptr:
            return base
        return GpuData(st, self.ptr, st.ptr + st.nbytes - self.ptr)

    @property
    def T(self) -> "DeviceArray":
        return self.transpose()

    def is_c_contiguous(self) -> bool:
        return is_contiguous(self.shape, self.strides, self.dtype.itemsize, "C")

    def is_f_contiguous(self) -> bool:
        return is_contiguous(self.shape, self.strides, self.dtype.itemsize, "F")

    @property
    def flags(self) -> dict:
        return {"C_CONTIGUOUS": self.is_c_contiguous(), "F_CONTIGUOUS": self.is_f_contiguous()}

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def __reduce__(self):
        # pickled as its data: copied to the host here, to the receiving process's
        # current target there (device pointers mean nothing in another process)
        return (_unpickle_device_array, (self.copy_to_host(),))

    def __repr__(self) -> str:
        return f"<pykern.DeviceArray {self.target} shape={self.shape} dtype={self.dtype} strides={self.strides}>"

    # -- views
    def _view(self, shape, strides, ptr) -> "DeviceArray":
        return DeviceArray(shape, strides, self.dtype, self.storage, ptr, self.stream)

    def transpose(self, axes=None) -> "DeviceArray":
        """numba's ``DeviceNDArray.transpose``: a new C-contiguous device array holding the transpose
        (not a view: writes to it do not reach this array). 2-d only, as numba's; axes naming the
        identity permutation return the array itself.

        >>> to_device(np.arange(6.0).reshape(2, 3), target="cpu").T.copy_to_host()
        array([[0., 3.],
               [1., 4.],
               [2., 5.]])
        """
        if axes and tuple(axes) == tuple(range(self.ndim)):
            return self
        if self.ndim != 2:
            raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
        if axes is not None and set(axes) != set(range(self.ndim)):
            raise ValueError(f"invalid axes list {axes!r}")
        out = device_array(self.shape[::-1], self.dtype, stream=self.stream or 0, target=self.target)
        out.copy_to_device(self._view(self.shape[::-1], self.strides[::-1], self.ptr))
        return out

    def reshape(self, *newshape, order: str = "C") -> "DeviceArray":
        """A view with a new shape; the array must be contiguous in ``order``."""
        if len(newshape) == 1 and not isinstance(newshape[0], (int, np.integer)):
            newshape = newshape[0]
        newshape = list(newshape)
        if newshape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in newshape:
            known = 1
            for n in newshape:
                if n != -1:
                    known *= n
            newshape[newshape.index(-1)] = self.size // known if known else 0
        newshape = _normalize_shape(newshape)
        if int(np.prod(newshape, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {newshape}")
        if order not in ("C", "F", "A"):
            raise ValueError("order must be 'C', 'F' or 'A'")
        if order == "A":  # numpy's: F when the array is F- and not C-contiguous
            order = "F" if self.is_f_contiguous() and not self.is_c_contiguous() else "C"
        ok = self.is_c_contiguous() if order == "C" else self.is_f_contiguous()
        if not ok:
            raise NotImplementedError(f"reshape of a non-{order}-contiguous device array (copy it first)")
        st = c_strides if order == "C" else f_strides
        return self._view(newshape, st(newshape, self.dtype.itemsize), self.ptr)

    def squeeze(self, axis=None, stream=0) -> "DeviceArray":
        """A view without length-1 axes (only those in ``axis`` when given), as numba's ``squeeze``.

        >>> device_array((1, 3, 1), target="cpu").squeeze().shape
        (3,)
        """
        if axis is None:
            drop = {k for k, n in enumerate(self.shape) if n == 1}
        else:
            axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            drop = set()
            for a in axes:
                a = operator.index(a)
                if not -self.ndim <= a < self.ndim:
                    raise ValueError(f"axis {a} is out of bounds for array of dimension {self.ndim}")
                a %= self.ndim
                if self.shape[a] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
                drop.add(a)
        keep = [k for k in range(self.ndim) if k not in drop]
        return self._view(tuple(self.shape[k] for k in keep), tuple(self.strides[k] for k in keep), self.ptr)

    def _unit_axes_view(self, shape) -> "DeviceArray":
        """This array seen with ``shape``, which differs from its own only in length-1 axes (numba's
        copies compare squeezed shapes): the same memory, no copy; contiguity is unchanged (the
        stride of a length-1 axis is never read)."""
        kept = iter([s for n, s in zip(self.shape, self.strides) if n != 1])
        strides = tuple(next(kept) if n != 1 else self.dtype.itemsize for n in shape)
        return self._view(tuple(shape), strides, self.ptr)

    def ravel(self, order: str = "C", stream=0) -> "DeviceArray":
        """A 1-d view of a contiguous array (numba's ``ravel``; ``NotImplementedError`` when it would copy)."""
        return self.reshape(self.size, order=order).bind(self._default_stream(stream))

    def view(self, dtype) -> "DeviceArray":
        """The same memory seen as ``dtype`` (numba's ``DeviceNDArray.view``):
        the last axis must be contiguous when the item size changes.

        >>> device_array(4, np.float32, target="cpu").view(np.int32).dtype
        dtype('int32')
        """
        dt = _check_dtype(dtype)
        if dt.itemsize == self.dtype.itemsize:
            return DeviceArray(self.shape, self.strides, dt, self.storage, self.ptr, self.stream)
        if not self.shape:
            raise ValueError("changing the dtype of a 0-d array is not supported")
        if self.strides[-1] != self.dtype.itemsize:
            raise ValueError("To change to a dtype of a different size, the last axis must be contiguous")
        nbytes = self.shape[-1] * self.dtype.itemsize
        if nbytes % dt.itemsize:
            raise ValueError("When changing to a larger dtype, its size must be a divisor of the total size in "
                             "bytes of the last axis of the array.")  # numpy's and numba's words
        shape = self.shape[:-1] + (nbytes // dt.itemsize,)
        return DeviceArray(shape, self.strides[:-1] + (dt.itemsize,), dt, self.storage, self.ptr, self.stream)

    def split(self, section, stream=0) -> list:
        """numba's ``split``: a 1-d contiguous array cut into views of ``section``
        elements (the last one shorter when it does not divide).

        >>> [v.shape for v in device_array(10, target="cpu").split(4)]
        [(4,), (4,), (2,)]
        """
        if self.ndim != 1:
            raise ValueError("only 1-d arrays can be split")
        if not self.is_c_contiguous():
            raise ValueError("only contiguous arrays can be split")
        section = operator.index(section)
        if section <= 0:
            raise ValueError(f"section must be positive, got {section}")
        return [self[i:i + section] for i in range(0, self.size, section)]

    def get_ipc_handle(self):  # pragma: no cover - numba API name, not offered
        raise NotImplementedError("IPC handles are not supported by pykern")

    def _index(self, key):
        """(shape, strides, ptr, all_int) of ``self[key]`` for basic indexing."""
        if not isinstance(key, tuple):
            key = (key,)
        for k in key:
            if not (k is None or k is Ellipsis or isinstance(k, slice)):
                try:
                    operator.index(k)
                except TypeError:
                    raise TypeError(
                        f"device arrays take integers, slices, ... and None as indices, not {type(k).__name__}"
                        " (fancy indexing: copy_to_host() first)"
                    ) from None
        n_ell = sum(1 for k in key if k is Ellipsis)
        if n_ell > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
        if n_real > self.ndim:
            raise IndexError(f"too many indices for array: array is {self.ndim}-dimensional, but {n_real} were indexed")
        full = []
        for k in key:
            if k is Ellipsis:
                full.extend([slice(None)] * (self.ndim - n_real))
            else:
                full.append(k)
        if not n_ell:
            full.extend([slice(None)] * (self.ndim - n_real))
        ptr, shape, strides, dim, all_int = self.ptr, [], [], 0, True
        for k in full:
            if k is None:
                shape.append(1)
                strides.append(0)
                all_int = False
                continue
            n, s = self.shape[dim], self.strides[dim]
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                length = len(range(start, stop, step))
                if length:
                    ptr += start * s
                shape.append(length)
                strides.append(s * step)
                all_int = False
            else:
                i = operator.index(k)
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise IndexError(f"index {operator.index(k)} is out of bounds for axis {dim} with size {n}")
                ptr += i * s
            dim += 1
        # every axis taken by an integer (``d[()]`` of a 0-d array too, as numba's dummyarray): an element
        return tuple(shape), tuple(strides), ptr, all_int and not n_ell

    def __getitem__(self, key):
        shape, strides, ptr, scalar = self._index(key)
        if not scalar:
            return self._view(shape, strides, ptr)
        if self.dtype.names is not None:  # numba: an element of a record array is a DeviceRecord
            return DeviceRecord(self.dtype, self.storage, ptr, self.stream)
        return self._view(shape, strides, ptr)._element()

    def _element(self):
        """The host value of this 0-d array, read synchronously (numba returns a host scalar for a
        fully indexed element), also when the array is bound to a stream."""
        return self.storage.driver.read(self, self._default_stream(0))[()]

    def getitem(self, item, stream=0):
        """numba's ``DeviceNDArray.getitem``: ``self[item]`` (the copy of an element is synchronous here)."""
        return self[item]

    def setitem(self, key, value, stream=0):
        """numba's ``DeviceNDArray.setitem``: ``self[key] = value``."""
        self.__setitem__(key, value)

    def bind(self, stream=0) -> "DeviceArray":
        """numba's ``bind``: the same array with ``stream`` as its default stream."""
        return DeviceArray(self.shape, self.strides, self.dtype, self.storage, self.ptr, self._bound(stream))

    def _bound(self, stream):
        """What ``bind(stream)`` stores: None for the default stream, else a Stream."""
        return None if (stream is None or stream == 0) else as_stream(stream, self.target)

    def _stream(self, stream) -> Stream:
        """The Stream of this array's target that ``stream`` (0, a Stream, a handle) names: where
        the driver queues a copy."""
        return as_stream(stream, self.target)

    @property
    def alloc_size(self) -> int:
        """Bytes of memory this view spans (numba's ``alloc_size``)."""
        lo, hi = span(self.shape, self.strides, self.dtype.itemsize)
        return hi - lo

    def __setitem__(self, key, value):
        shape, strides, ptr, _ = self._index(key)
        view = self._view(shape, strides, ptr)
        if isinstance(value, DeviceArray):
            if value.shape != view.shape:
                value = value.copy_to_host()
            else:
                view.copy_to_device(value)
                return
        src = np.asarray(value, dtype=self.dtype)
        _check_assignable(src.shape, view.shape)
        view.copy_to_device(np.broadcast_to(src, view.shape))

    # -- host access (host memory only)
    def _host_view(self) -> np.ndarray:
        """A numpy view of this array's memory; only valid where it is host memory (cpu)."""
        assert self.storage.driver.host_memory, "host view of device memory"
        if self.size == 0:
            return np.empty(self.shape, self.dtype)
        view = np.asarray(_HostWindow(self.ptr, self.shape, self.strides, self.dtype, self.storage, self.storage.readonly))
        # a structured dtype comes back from the interface's descr with its padding as fields, an
        # extension dtype (ml_dtypes' bfloat16) as raw "V2" bytes: view either as itself
        return view.view(self.dtype) if self.dtype.fields or view.dtype != self.dtype else view

    # -- copies
    def _default_stream(self, stream):
        """``stream``, else the stream ``bind`` gave this array (numba's rule for every copy)."""
        return stream if stream else (self.stream or 0)

    def copy_to_host(self, ary: np.ndarray | None = None, stream=0) -> np.ndarray:
        """Copy into ``ary`` (or a new array) and return it.

        A new array has this array's strides, as numba's: a view's copy is a view of a host
        buffer the size of the span it covers (``d[::2].copy_to_host().strides == d.strides``).
        ``ary`` may have any layout. With a non-default ``stream`` (or one given to ``bind``) the
        copy is asynchronous: the result is valid after ``stream.synchronize()``.
        """
        stream = self._default_stream(stream)
        if ary is None:
            return self.storage.driver.copy_out(self, stream)
        if isinstance(ary, np.void) and ary.dtype == self.dtype and not self.shape:
            return self._copy_to_record(ary, stream)
        if not isinstance(ary, np.ndarray):
            raise TypeError(f"copy_to_host(ary=...) needs a numpy array, got {type(ary).__name__}")
        if ary.dtype != self.dtype or not _squeeze_equal(ary.shape, self.shape):
            self._incompatible("copy_to_host", "destination", ary)
        if ary.shape != self.shape:
            # numba compares squeezed shapes: (10,) copies into (1, 10)
            return self._unit_axes_view(ary.shape).copy_to_host(ary=ary, stream=stream)
        if self.size:
            self.storage.driver.copy_to_host(self, ary, stream)
        return ary

    def to_host(self, stream=0) -> None:
        """Copy back into the numpy array ``to_device`` made this array from (older numba's
        deprecated spelling, still in many programs: ``d = cuda.to_device(a); ...; d.to_host()``)."""
        warnings.warn("to_host() is deprecated and will be removed", DeprecationWarning, stacklevel=2)
        if self._writeback is None:
            raise ValueError("no associated writeback array")
        host = self._writeback()
        if host is None:
            raise ValueError("the host array to_device copied from no longer exists (to_host() copies back into "
                             "it and does not keep it alive); use copy_to_host()")
        self.copy_to_host(host, stream=stream)

    def _incompatible(self, op: str, role: str, other):
        """Raise numba's ``check_array_compatibility`` error for ``other`` (the copy's
        ``role``): a ``TypeError`` when the dtypes differ, else a ``ValueError`` (the shapes)."""
        what = (f"{op}: the {role} has dtype {other.dtype} and shape {tuple(other.shape)}, "
                f"the array dtype {self.dtype} and shape {self.shape}")
        raise (TypeError if other.dtype != self.dtype else ValueError)(what)

    def _empty_host_like(self) -> np.ndarray:
        """An uninitialised host array with this array's shape, dtype and strides (numba's
        ``copy_to_host`` result), over a buffer of the byte span they cover."""
        if self.size == 0:
            return np.empty(self.shape, self.dtype)
        lo, hi = span(self.shape, self.strides, self.dtype.itemsize)
        return np.ndarray(self.shape, self.dtype, buffer=np.empty(hi - lo, np.uint8), offset=-lo, strides=self.strides)

    def _copy_to_record(self, rec: np.void, stream) -> np.void:
        """numba copies a record into a numpy record scalar (a view of its array) in place."""
        host = self.copy_to_host(stream=stream)
        if stream:
            as_stream(stream, self.target).synchronize()
        for name in rec.dtype.names:
            rec[name] = host[name]
        return rec

    def copy_to_device(self, ary, stream=0) -> None:
        """Copy host data (array-like, same shape and dtype) or another DeviceArray into this one."""
        stream = self._default_stream(stream)
        shp = getattr(ary, "shape", None)
        if shp is not None and tuple(shp) != self.shape and _squeeze_equal(tuple(shp), self.shape):
            # numba compares squeezed shapes: (10, 1) copies into (10,)
            return self._unit_axes_view(tuple(shp)).copy_to_device(ary, stream=stream)
        drv = self.storage.driver
        if isinstance(ary, DeviceArray) and ary.target == self.target:
            if ary.dtype != self.dtype or ary.shape != self.shape:
                self._incompatible("copy_to_device", "source", ary)
            if self.size:
                drv.copy_within(self, ary, stream)
                _written(self)
            return
        src = ary._read() if isinstance(ary, DeviceArray) else np.asarray(ary)
        if src.dtype != self.dtype or src.shape != self.shape:
            self._incompatible("copy_to_device", "source", src)
        if self.size:
            drv.copy_to_device(self, src, stream)
            _written(self)

    def _read(self) -> np.ndarray:
        """This array's contents on the host, complete on return: its memory itself where that is
        host memory, else a copy (waiting for the stream ``bind`` gave it)."""
        return self.storage.driver.read(self, self._default_stream(0))

    def copy(self) -> "DeviceArray":
        """A new contiguous device array with the same contents."""
        out = device_array(self.shape, self.dtype, order="F" if self.is_f_contiguous() and not self.is_c_contiguous() else "C",
                           target=self.target)
        out.copy_to_device(self)
        return out

    def __array__(self, dtype=None, copy=None):
        # always a copy: the two targets then behave the same
        if copy is False:  # numba's message
            raise ValueError("`copy=False` is not supported. A copy is always created.")
        a = self.copy_to_host()
        return a if dtype is None else a.astype(dtype, copy=False)

    # -- interop
    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3 of the CUDA Array Interface (the ROCm stack reuses it)."""
        c = self.is_c_contiguous()
        stream = self.storage.driver.interface_stream(self.stream)
        return {
            "shape": self.shape,
            "strides": None if c else self.strides,
            "typestr": self.dtype.str,
            "data": (self.ptr if self.size else 0, bool(self.storage.readonly)),
            "version": 3,
            "stream": stream,
        }

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        _written(self, everything=True)  # whatever writes through it, the sanitizer cannot see
        return dlpack.export(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple:
        return dlpack.device_of(self)


DeviceNDArray = DeviceArray  # numba's name


class DeviceRecord(DeviceArray):
    """One record of a structured device array, as numba's ``DeviceRecord``: ``d[i]`` of a record
    array, or ``to_device(np_record)``. A 0-d array of the record dtype in device memory: passed to
    a kernel it is the record, by reference (kernel writes reach it); ``rec['x']`` reads a field
    (a host value, a ``DeviceRecord`` for a nested record, a device array for an array field),
    ``rec['x'] = v`` writes one; ``copy_to_host()`` gives a 0-d structured numpy array.

    >>> d = to_device(np.zeros(2, [("x", np.int32), ("v", np.float32, 3)]), target="cpu")
    >>> r = d[1]; r["x"] = 7; int(r["x"]), r["v"].shape
    (7, (3,))
    """

    __slots__ = ()

    def __init__(self, dtype, storage: Storage | None = None, ptr: int | None = None, stream: Stream | None = None):
        super().__init__((), (), dtype, storage, ptr, stream)  # numba's DeviceRecord(dtype, stream=0) too
        if self.dtype.names is None:
            raise TypeError(f"a DeviceRecord needs a structured dtype, not {self.dtype}")

    def _field(self, name) -> DeviceArray:
        """The field ``name`` as a device array: 0-d for a scalar or record field, else its shape."""
        try:
            typ, offset = self.dtype.fields[name][:2]
        except (KeyError, TypeError, ValueError):
            raise KeyError(f"{name!r} is not a field of record dtype {self.dtype}") from None
        ptr = self.ptr + offset
        if typ.names is not None:
            return DeviceRecord(typ, self.storage, ptr, self.stream)
        base, shape = typ.subdtype if typ.subdtype is not None else (typ, ())
        return DeviceArray(shape, c_strides(shape, base.itemsize), base, self.storage, ptr, self.stream)

    def __getitem__(self, name):
        f = self._field(name)
        return f if (f.shape or isinstance(f, DeviceRecord)) else f._element()

    def getitem(self, item, stream=0):
        return self[item]

    def bind(self, stream=0) -> "DeviceRecord":
        return DeviceRecord(self.dtype, self.storage, self.ptr, self._bound(stream))

    def __setitem__(self, name, value):
        f = self._field(name)
        f.copy_to_device(np.broadcast_to(np.asarray(value, dtype=f.dtype), f.shape))

    def setitem(self, key, value, stream=0):
        self[key] = value

    def __len__(self):
        raise TypeError("len() of a DeviceRecord")

    def __repr__(self) -> str:
        return f"<pykern.DeviceRecord {self.target} dtype={self.dtype}>"


# --------------------------------------------------------------------------- constructors
def _dense_layout(shape, dtype, strides, order):
    """``(shape, dtype, strides)`` for a new dense array, from numba's ``(shape, dtype, strides=None,
    order="C")`` arguments: ``strides`` (bytes) must describe a dense layout. A string in the
    ``strides`` place is taken as the order (pykern's constructors took order third before)."""
    if isinstance(strides, str):
        strides, order = None, strides
    shape = _normalize_shape(shape)
    dt = _check_dtype(dtype)
    if order not in ("C", "F"):
        raise ValueError("order must be 'C' or 'F'")
    if strides is None:
        return shape, dt, (c_strides if order == "C" else f_strides)(shape, dt.itemsize)
    strides = (operator.index(strides),) if isinstance(strides, (int, np.integer)) else tuple(operator.index(x) for x in strides)
    if len(strides) != len(shape):
        raise ValueError(f"strides {strides} do not match shape {shape}")
    if not _is_dense(shape, strides, dt.itemsize):
        raise ValueError(f"strides {strides} are not a dense layout of shape {shape} with itemsize {dt.itemsize}")
    return shape, dt, strides


def _nbytes(shape, dt) -> int:
    return int(np.prod(shape, dtype=np.int64)) * dt.itemsize


def device_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0,
                 target: str | None = None) -> DeviceArray:
    """An uninitialised array on the current target; numba's signature (``strides=`` in bytes,
    for a dense layout in another axis order).

    >>> device_array((2, 3), np.float32, target="cpu").strides
    (12, 4)
    """
    shape, dt, strides = _dense_layout(shape, dtype, strides, order)
    t = resolve_target(target)
    s = None if (stream is None or stream == 0) else as_stream(stream, t)
    storage = Storage.allocate(_nbytes(shape, dt), t)
    if storage.driver.host_memory and _tracks_initialisation():  # (the sanitizer checks host memory)
        storage.san_init = np.zeros(storage.nbytes, np.uint8)
    return DeviceArray(shape, strides, dt, storage, stream=s)


def _tracks_initialisation() -> bool:
    """Does every kernel of this process check reads of unwritten memory (``PYKERN_SANITIZE``
    with init)? Only then can a device array's unwritten bytes be known: each launch that writes
    it is a sanitized one and records what it wrote."""
    from pykern.core.sanitize import checks, process_setting

    return "init" in checks(process_setting())


def _written(arr: "DeviceArray", everything: bool = False) -> None:
    """The sanitizer's record: ``arr``'s elements (its whole memory: ``everything``, as when its
    address leaves pykern) now hold values."""
    st = arr.storage
    if st.san_init is None:
        return
    if everything:
        st.san_init = None
        return
    if arr.size == 0:
        return
    isz = arr.dtype.itemsize
    np.ndarray(arr.shape + (isz,), np.uint8, buffer=st.san_init, offset=arr.ptr - st.ptr,
               strides=arr.strides + (1,))[...] = 1
    if st.san_init.all():
        st.san_init = None


def _strides_of_like(a):
    """numba's ``_contiguous_strides_like_array``: the strides ``np.empty_like(a)`` has."""
    a = a if isinstance(a, (DeviceArray, np.ndarray)) else np.asarray(a)
    return a, _strides_like(a.shape, a.strides, a.dtype.itemsize)


def device_array_like(ary, stream=0, target: str | None = None) -> DeviceArray:
    """An uninitialised array with the shape, dtype and axis order of ``ary``:
    the strides ``np.empty_like(ary)`` would have (a strided view gives a dense
    array in the same axis order), as numba's ``device_array_like``.

    >>> device_array_like(np.empty((10, 12), order="F")[::2, ::2], target="cpu").strides
    (8, 40)
    """
    a, strides = _strides_of_like(ary)
    return device_array(a.shape, a.dtype, strides, stream=stream, target=target)


def mapped_array_like(ary, stream=0, portable=False, wc=False, target: str | None = None):
    """``mapped_array`` with the shape, dtype and axis order of ``ary``."""
    a, strides = _strides_of_like(ary)
    return mapped_array(a.shape, a.dtype, strides, stream=stream, portable=portable, wc=wc, target=target)


def pinned_array_like(ary, target: str | None = None) -> np.ndarray:
    """``pinned_array`` with the shape, dtype and axis order of ``ary``."""
    a, strides = _strides_of_like(ary)
    return pinned_array(a.shape, a.dtype, strides, target=target)


def to_device(obj, stream=0, copy: bool = True, to: DeviceArray | None = None, target: str | None = None) -> DeviceArray:
    """Copy a host array (or array-like) to the current target and return the DeviceArray.

    C- and F-contiguous arrays keep their layout; other strided arrays arrive dense in their own
    axis order. A DeviceArray passed in is returned as is; a numpy record (``np.void``) becomes a
    ``DeviceRecord``. ``to=`` copies into an existing array instead; ``copy=False`` only allocates
    (numba's meaning).
    """
    if to is not None:
        if copy:
            to.copy_to_device(obj, stream=stream)
        return to
    t = resolve_target(target)
    if isinstance(obj, DeviceArray) and obj.target == t:
        return obj
    if isinstance(obj, DeviceArray):
        ary = obj._read()
    else:
        ary = np.asarray(obj)
    _check_dtype(ary.dtype)
    if isinstance(obj, np.void) and ary.dtype.names is not None:
        out = device_array((), ary.dtype, stream=stream, target=t)
        out = DeviceRecord(out.dtype, out.storage, out.ptr, out.stream)
    else:
        # a strided view arrives dense in its own axis order (np.empty_like's layout)
        out = device_array_like(ary, stream, target=t)
        if isinstance(obj, np.ndarray):
            out._writeback = weakref.ref(obj)
    if copy:
        out.copy_to_device(ary, stream=stream)
    return out


def pinned_array(shape, dtype=np.float64, strides=None, order: str = "C", target: str | None = None) -> np.ndarray:
    """A host numpy array in page-locked memory (hipHostMalloc) for fast async copies; numba's
    signature. On the cpu target it is an ordinary numpy array.
    """
    shape, dt, strides = _dense_layout(shape, dtype, strides, order)
    nbytes = _nbytes(shape, dt)
    if nbytes == 0:
        return np.ndarray(shape, dt, buffer=np.empty(0, np.uint8), strides=strides)
    host, _, buf, free = driver(resolve_target(target)).allocate_host(nbytes)
    # the array keeps buf (the allocation) alive
    return np.ndarray(shape, dt, buffer=_freed_with(buf, free, host), strides=strides)


class MappedArray(np.ndarray):
    """A host numpy array in page-locked memory that kernels on the GPU read
    and write directly (zero-copy): ``hipHostMalloc(hipHostMallocMapped)``;
    its ``__cuda_array_interface__`` gives the device pointer
    ``hipHostGetDevicePointer`` returned, so a launch passes it without copies
    (numba's ``MappedNDArray``)."""

    def __array_finalize__(self, obj):
        # views share the allocation: keep its host and device base addresses
        self._pk_host_base = getattr(obj, "_pk_host_base", 0)
        self._pk_dev_base = getattr(obj, "_pk_dev_base", 0)

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self._pk_dev_base + (self.ctypes.data - self._pk_host_base))

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": None if self.flags.c_contiguous else self.strides,
            "typestr": self.dtype.str,
            "data": (self.device_ctypes_pointer.value if self.size else 0, not self.flags.writeable),
            "version": 3,
            "stream": None,  # host memory: nothing to wait for
        }


def mapped_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0, portable=False, wc=False,
                 target: str | None = None) -> "MappedArray":
    """A host array kernels use in place, without copies (numba's ``mapped_array``, its signature).

    On "hip": page-locked memory mapped into the GPU's address space
    (``hipHostMalloc`` with ``hipHostMallocMapped``; ``portable`` adds
    ``hipHostMallocPortable``, ``wc`` ``hipHostMallocWriteCombined``). On the
    cpu target the host *is* the device: host memory. Either way a ``MappedArray``:
    a numpy array with ``__cuda_array_interface__`` (so ``as_cuda_array`` takes it).

    >>> a = mapped_array(4, np.float32, target="cpu"); a[:] = 1; float(a.sum())
    4.0
    """
    shape, dt, strides = _dense_layout(shape, dtype, strides, order)
    host, dev, buf, free = driver(resolve_target(target)).allocate_host(max(1, _nbytes(shape, dt)), mapped=True,
                                                                        portable=portable, wc=wc)
    arr = np.ndarray(shape, dt, buffer=_freed_with(buf, free, host), strides=strides).view(MappedArray)
    arr._pk_host_base, arr._pk_dev_base = host, dev
    return arr


class ManagedArray(MappedArray):
    """A host numpy array in HIP managed memory (``hipMallocManaged``): one address valid on the
    host and the GPU, pages migrating on use (numba's ``ManagedNDArray``)."""


def managed_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0, attach_global=True,
                  target: str | None = None) -> ManagedArray:
    """numba's ``managed_array``: a host array in managed memory that kernels use in place
    (``hipMallocManaged``; ``attach_global=False`` is ``hipMemAttachHost``). On the cpu target:
    host memory. Either way a ``ManagedArray`` with ``__cuda_array_interface__``.

    >>> a = managed_array((2, 2), np.int32, target="cpu"); a[:] = 3; int(a.sum())
    12
    """
    shape, dt, strides = _dense_layout(shape, dtype, strides, order)
    ptr, buf, free = driver(resolve_target(target)).allocate_managed(max(1, _nbytes(shape, dt)), attach_global)
    arr = np.ndarray(shape, dt, buffer=_freed_with(buf, free, ptr), strides=strides).view(ManagedArray)
    arr._pk_host_base = arr._pk_dev_base = ptr
    return arr


def is_device_array(obj) -> bool:
    """True for pykern DeviceArrays and objects exporting ``__cuda_array_interface__``."""
    return isinstance(obj, DeviceArray) or hasattr(obj, "__cuda_array_interface__")


def from_cuda_array_interface(obj, target: str | None = None) -> DeviceArray:
    """A zero-copy DeviceArray over memory described by ``obj.__cuda_array_interface__``."""
    cai = obj.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported (a __cuda_array_interface__ with a mask)")
    t = resolve_target(target)
    shape = _normalize_shape(cai["shape"])
    dt = _check_dtype(cai["typestr"])
    if "descr" in cai and len(cai["descr"]) > 1:
        dt = _check_dtype(np.dtype(cai["descr"]))
    strides = cai.get("strides")
    ptr, readonly = cai["data"]
    stream = cai.get("stream")
    drv = driver(t)
    if stream is not None and cai.get("version", 0) >= 3:
        drv.wait_for_producer(stream)
    return _view_over(int(ptr or 0), shape, None if strides is None else tuple(int(s) for s in strides), dt, t,
                      drv.device_id(), obj, bool(readonly))


def as_device_array(obj, target: str | None = None) -> DeviceArray:
    """View ``obj`` as a DeviceArray without copying: a DeviceArray, an object with
    ``__cuda_array_interface__``, or one with ``__dlpack__`` (numpy arrays included,
    as host "cpu" arrays)."""
    if isinstance(obj, DeviceArray):
        return obj
    if hasattr(obj, "__cuda_array_interface__"):
        return from_cuda_array_interface(obj, target)
    if hasattr(obj, "__dlpack__"):
        return from_dlpack(obj)
    raise TypeError(f"{type(obj).__name__} has neither __cuda_array_interface__ nor __dlpack__")


as_cuda_array = as_device_array  # numba's name


def foreign_array(obj, target: str | None = None) -> DeviceArray | None:
    """``obj`` as a zero-copy DeviceArray when it is another library's array (it has
    ``__cuda_array_interface__`` or ``__dlpack__``: a torch or cupy tensor, say) or a DeviceArray;
    None for anything else, numpy arrays and their subclasses included (a kernel takes those as
    they are). What the launcher passes for such an argument; errors say why it cannot be viewed.

    >>> foreign_array(np.zeros(3)) is None, foreign_array(2.5) is None
    (True, True)
    """
    cls = type(obj)
    if cls is np.ndarray or isinstance(obj, (tuple, int, float, bool)):
        return None
    if any(c.__name__ == "ndarray" and c.__module__ == "numpy" for c in cls.__mro__):
        return None  # a numpy subclass (np.recarray, np.matrix): used as the array it is
    if isinstance(obj, DeviceArray) or hasattr(obj, "__cuda_array_interface__") or hasattr(cls, "__dlpack__"):
        return as_device_array(obj, target)
    return None


def from_dlpack(obj) -> DeviceArray:
    """A zero-copy DeviceArray over ``obj.__dlpack__()`` (see pykern.runtime.memory.dlpack).

    Host (kDLCPU) tensors become "cpu" arrays, ROCm (kDLROCM) tensors "hip" arrays.
    """
    if isinstance(obj, DeviceArray):
        return obj
    v = dlpack.consume(obj)
    return _view_over(v.ptr, v.shape, v.strides, v.dtype, v.target, v.device, v.owner, v.readonly)


def _view_over(ptr, shape, strides, dtype, target, device, owner, readonly) -> DeviceArray:
    """A DeviceArray over memory another library owns (``owner`` keeps it alive while the array
    lives) at ``ptr``; ``strides`` in bytes, None for C order."""
    if strides is None:
        strides = c_strides(shape, dtype.itemsize)
    lo, hi = span(shape, strides, dtype.itemsize)
    storage = Storage(ptr + lo, hi - lo, target, device, owner=owner, readonly=readonly)
    return DeviceArray(shape, strides, dtype, storage, ptr)


def _unpickle_device_array(host: np.ndarray) -> DeviceArray:
    return to_device(host)


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """numba's ``auto_device``: ``(device_array, new)`` -- ``obj`` itself when it is already device
    memory (or a zero-copy view of what exports ``__cuda_array_interface__``), else a new device
    copy of it."""
    if isinstance(obj, DeviceArray):
        return obj, False
    if hasattr(obj, "__cuda_array_interface__"):
        return from_cuda_array_interface(obj), False
    return to_device(obj, stream=stream, copy=copy), True
