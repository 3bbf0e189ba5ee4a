"""DLPack both ways, with ctypes structs (no compiled helper).

Export: ``DeviceArray.__dlpack__`` returns a PyCapsule named "dltensor"
(or "dltensor_versioned" when the consumer asks for ``max_version >= (1, 0)``)
holding a DLManagedTensor whose deleter releases the array. Import:
``consume(obj)`` takes the capsule from ``obj.__dlpack__()``, renames it
"used_dltensor" as the protocol requires, and describes the memory as a
``DLView``, which ``memory.from_dlpack`` wraps without copying; the producer's
deleter runs when the last view of it is gone. This module reads DeviceArrays
only through their attributes and builds none, so ``memory`` imports it and
not the other way round.

Device types: kDLCPU = 1 (cpu target), kDLROCM = 10 (hip target); host-pinned
kinds (kDLCUDAHost = 3, kDLROCMHost = 11) import as cpu memory.

Example::

    >>> import numpy as np
    >>> from pykern.runtime.memory.arrays import from_dlpack
    >>> d = from_dlpack(np.arange(3.0))        # zero-copy cpu DeviceArray
    >>> np.from_dlpack(d)
    array([0., 1., 2.])
"""

from __future__ import annotations

import ctypes
import threading
from typing import NamedTuple

import numpy as np

kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLROCM = 10
kDLROCMHost = 11

kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 4, 5, 6

DLPACK_VERSION = (1, 0)
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _Deleter),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


# Capsule names must outlive the capsules: module-level bytes are never freed.
_NAME = b"dltensor"
_NAME_V = b"dltensor_versioned"
_USED = b"used_dltensor"
_USED_V = b"used_dltensor_versioned"

_api = ctypes.pythonapi
_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _Destructor]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
# the destructor receives a dying capsule: use raw pointers, never py_object
_IsValidRaw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_GetPointerRaw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))

# address of a live exported DLManagedTensor(Versioned) -> what keeps it valid
_exports: dict[int, tuple] = {}
_lock = threading.Lock()


def _release(addr: int) -> None:
    try:
        with _lock:
            _exports.pop(addr, None)
    except Exception:  # called from C during interpreter teardown: nothing left to free
        pass


@_Deleter
def _deleter(addr):
    # called by the consumer when it is done with the tensor
    if addr:
        _release(addr)


@_Destructor
def _capsule_destructor(capsule):
    # An unconsumed capsule still owns its tensor: free it. Consumed ones were
    # renamed "used_*" and the consumer calls the deleter itself.
    for name in (_NAME, _NAME_V):
        if _IsValidRaw(capsule, name):
            addr = _GetPointerRaw(capsule, name)
            if addr:
                _release(addr)
            return


_DL_CODES = {"i": kDLInt, "u": kDLUInt, "f": kDLFloat, "c": kDLComplex, "b": kDLBool}
_NP_KINDS = {kDLInt: "i", kDLUInt: "u", kDLFloat: "f", kDLComplex: "c"}


def device_of(ary) -> tuple:
    """``(device_type, device_id)`` of a DeviceArray, as ``__dlpack_device__`` reports it."""
    return ary.storage.driver.dlpack_device, ary.storage.device


def export(ary, stream=None, max_version=None, dl_device=None, copy=None):
    """The PyCapsule for ``ary.__dlpack__(...)``."""
    dev = device_of(ary)
    if dl_device is not None and tuple(dl_device) != dev:
        raise BufferError(f"cannot export a {ary.target} array to DLPack device {tuple(dl_device)} (it lives on {dev})")
    if copy:
        ary = ary.copy()
    ary.storage.driver.finish_for_consumer(ary, stream)
    dt = ary.dtype
    code = _DL_CODES.get(dt.kind)
    if code is None or dt.fields is not None:
        raise BufferError(f"dtype {dt} has no DLPack equivalent")
    itemsize = dt.itemsize
    if any(s % itemsize for s in ary.strides):
        raise BufferError("strides that are not a multiple of the item size cannot be exported to DLPack")
    ndim = ary.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*ary.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // itemsize for s in ary.strides))
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = m.dl_tensor
    t.data = ary.ptr if ary.size else (ary.storage.ptr or None)
    t.device = DLDevice(*dev)
    t.ndim = ndim
    t.dtype = DLDataType(code, itemsize * 8, 1)
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    m.deleter = _deleter
    if versioned:
        m.version = DLPackVersion(*DLPACK_VERSION)
        m.flags = (FLAG_READ_ONLY if ary.storage.readonly else 0) | (FLAG_IS_COPIED if copy else 0)
    addr = ctypes.addressof(m)
    with _lock:
        _exports[addr] = (m, shape, strides, ary)
    return _api.PyCapsule_New(addr, _NAME_V if versioned else _NAME, _capsule_destructor)


class _Imported:
    """Owns an imported DLManagedTensor: calls its deleter when collected."""

    __slots__ = ("addr", "deleter", "producer")

    def __init__(self, addr, deleter, producer):
        self.addr = addr
        self.deleter = deleter
        self.producer = producer  # the object whose memory it is (kept alive too)

    def __del__(self):
        if self.deleter:
            try:
                self.deleter(self.addr)
            except Exception:
                pass


def _np_dtype(dt: DLDataType) -> np.dtype:
    if dt.lanes != 1:
        raise BufferError(f"DLPack vector dtypes (lanes={dt.lanes}) are not supported")
    if dt.code == kDLBool:
        if dt.bits != 8:
            raise BufferError(f"DLPack bool of {dt.bits} bits is not supported")
        return np.dtype(np.bool_)
    kind = _NP_KINDS.get(dt.code)
    if kind is None or dt.bits % 8:
        raise BufferError(f"DLPack dtype code {dt.code} ({dt.bits} bits) is not supported")
    return np.dtype(f"{kind}{dt.bits // 8}")


class DLView(NamedTuple):
    """An imported tensor: ``ptr`` (data + byte_offset) of ``shape``/``dtype`` on ``target``/``device``.

    ``strides`` are in bytes, or None for a C-contiguous tensor; ``owner`` must
    stay alive as long as the memory is used (it calls the producer's deleter).
    """

    ptr: int
    shape: tuple
    strides: tuple | None
    dtype: np.dtype
    target: str
    device: int
    owner: _Imported
    readonly: bool


def consume(obj) -> DLView:
    """Take the DLPack capsule of ``obj.__dlpack__()`` and describe its memory.

    Host (kDLCPU and the pinned kinds) tensors are "cpu" memory, ROCm (kDLROCM) ones "hip".
    """
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"{type(obj).__name__} does not implement __dlpack__")
    dev_type, dev_id = (None, 0)
    if hasattr(obj, "__dlpack_device__"):
        dev_type, dev_id = obj.__dlpack_device__()
    kwargs = {}
    if dev_type == kDLROCM:
        kwargs["stream"] = 0  # we use the memory on the null stream
    try:
        capsule = obj.__dlpack__(max_version=DLPACK_VERSION, **kwargs)
    except TypeError:  # a pre-1.0 producer
        capsule = obj.__dlpack__(**kwargs)
    if _api.PyCapsule_IsValid(capsule, _NAME_V):
        addr = _api.PyCapsule_GetPointer(capsule, _NAME_V)
        m = DLManagedTensorVersioned.from_address(addr)
        if m.version.major > DLPACK_VERSION[0]:
            raise BufferError(f"DLPack version {m.version.major}.{m.version.minor} is newer than this importer's")
        readonly = bool(m.flags & FLAG_READ_ONLY)
        _api.PyCapsule_SetName(capsule, _USED_V)
    elif _api.PyCapsule_IsValid(capsule, _NAME):
        addr = _api.PyCapsule_GetPointer(capsule, _NAME)
        m = DLManagedTensor.from_address(addr)
        readonly = False
        _api.PyCapsule_SetName(capsule, _USED)
    else:
        raise BufferError("__dlpack__ returned something that is not an unused DLPack capsule")
    deleter = ctypes.cast(m.deleter, ctypes.c_void_p).value
    owner = _Imported(addr, _Deleter(deleter) if deleter else None, obj)
    t = m.dl_tensor
    dt = _np_dtype(t.dtype)
    ndim = t.ndim
    shape = tuple(t.shape[i] for i in range(ndim))
    strides = tuple(t.strides[i] * dt.itemsize for i in range(ndim)) if t.strides else None
    dtype_dev = t.device.device_type
    if dtype_dev in (kDLCPU, kDLCUDAHost, kDLROCMHost):
        target, dev = "cpu", 0
    elif dtype_dev == kDLROCM:
        target, dev = "hip", t.device.device_id
    else:
        raise BufferError(f"DLPack device type {dtype_dev} is neither host memory nor ROCm (kDLROCM = 10)")
    return DLView((t.data or 0) + t.byte_offset, shape, strides, dt, target, dev, owner, readonly)
