"""Call plans of ufuncs: a second call like an earlier one skips the deciding.

A ``vectorize``/``guvectorize`` call decides, from its operands' kinds, dtypes and shapes, the
loop's types and kernel, how each operand reaches the kernel (as it is, a read-only view, a
broadcast view, a scalar spread over the loop), where the result goes and what is returned.
Those decisions are numpy's ufunc rules and take tens of microseconds in Python; a launch on a
small array takes two. A :class:`Plan` remembers them for one *call key* (``call_key``: each
operand's type, dtype and shape, and ``out``'s) after a call with that key succeeded, and
replays them for the next call with the same key: the same kernel, launched on operands made the
same way, so the same results. The owning ufunc makes the plans (``CUDAUFunc._plan``,
``CUDAGUFunc._plan``), only for the cpu target and the default stream; a key the ufunc makes no
plan for is remembered as such (None), and every call with it takes the full path.

A plan is a function ``plan(args, out)`` returning what the call returns, or ``MISS`` where the
full path's result could depend on more than the key: an output whose memory may overlap an
input's (the full path decides what to copy); the caller then takes the full path.

Example::

    plans = PlanCache()
    key = call_key((x, 2.0), None)
    r = plans.replay(key, (x, 2.0), None)   # MISS the first time: take the full path, then
    plans.learn(key, make_plan)             # the next call with this key replays the plan
"""

from __future__ import annotations

import numpy as np

#: a plan's answer when the call must take the full path after all
MISS = object()
#: plans per ufunc (a key holds shapes: a loop over many sizes would otherwise grow it forever)
MAX_PLANS = 64

_DeviceArray = None


def _device_array_type():
    global _DeviceArray
    if _DeviceArray is None:
        from pykern.runtime.memory.arrays import DeviceArray

        _DeviceArray = DeviceArray
    return _DeviceArray


def call_key(args, out):
    """What a call's decisions depend on, as a hashable tuple, or None for operands the plans
    leave to the full path (lists, foreign device arrays, numpy subclasses...)."""
    dev = _DeviceArray or _device_array_type()
    key = []
    for a in args:
        t = type(a)
        if t is np.ndarray or t is dev:
            key.append((t, a.dtype, a.shape))
        elif t is float or t is bool:
            key.append(t)
        elif t is int:  # its sign and bit length: which integer types it fits (a lazily typed ufunc
            # types it by them, a declared integer loop refuses a value out of its range)
            key.append((t, a < 0, min((a if a >= 0 else -a - 1).bit_length(), 65)))
        elif isinstance(a, np.generic):
            key.append((t, a.dtype))
        else:
            return None
    if out is None:
        return tuple(key)
    t = type(out)
    if t is not np.ndarray and t is not dev:
        return None
    key.append((t, out.dtype, out.shape, "out"))
    return tuple(key)


class PlanCache:
    """Call key -> plan (or None: no plan for that key), at most ``MAX_PLANS``."""

    __slots__ = ("_map",)

    def __init__(self):
        self._map = {}

    def put(self, key, plan) -> None:
        if len(self._map) >= MAX_PLANS:
            self._map.clear()
        self._map[key] = plan

    def replay(self, key, args, out):
        """What the plan for ``key`` returns for this call, or ``MISS`` (no plan, or it gives way)."""
        plan = self._map.get(key) if key is not None else None
        return plan(args, out) if plan is not None else MISS

    def learn(self, key, make_plan) -> None:
        """After a full call with ``key`` succeeded: remember ``make_plan()`` (None: no plan) once."""
        if key is not None and key not in self._map:
            self.put(key, make_plan())


def may_overlap(a, out, same_ok: bool = True) -> bool:
    """Whether input ``a`` may share memory with ``out`` (their byte ranges meet, as numpy's
    default test); being ``out`` itself counts only without ``same_ok`` (an elementwise
    loop reads each element before it writes it)."""
    if a is out:
        return not same_ok
    if not hasattr(a, "dtype"):
        return False
    if type(a) is np.ndarray and type(out) is np.ndarray:
        return np.may_share_memory(a, out)
    sa, so = getattr(a, "storage", None), getattr(out, "storage", None)
    if sa is not None and so is not None and (sa.ptr + sa.nbytes <= so.ptr or so.ptr + so.nbytes <= sa.ptr):
        return False  # device arrays on separate blocks of memory: no view of one reaches the other
    (alo, ahi), (olo, ohi) = _bounds(a), _bounds(out)
    return alo < ohi and olo < ahi


def _bounds(x) -> tuple:
    """(first byte, one past the last byte) that array ``x`` reaches; empty for no elements."""
    if type(x) is np.ndarray:
        return _byte_bounds(x)
    from pykern.core.strides import span

    lo, hi = span(x.shape, x.strides, x.dtype.itemsize)
    return (x.ptr + lo, x.ptr + hi) if hi > lo else (0, 0)


def _byte_bounds(x):
    try:
        from numpy.lib.array_utils import byte_bounds  # numpy 2
    except ImportError:  # pragma: no cover - numpy 1.26
        byte_bounds = np.byte_bounds
    lo, hi = byte_bounds(x)
    return (lo, hi) if x.size else (0, 0)


def readonly_view(a):
    """A read-only view of host array ``a``: what ``np.broadcast_to(a, a.shape)`` gives (the
    same type to the kernel), without its ~5 us of argument handling."""
    v = a.view()
    v.flags.writeable = False
    return v


def leading_ones(k: int):
    """``a -> np.broadcast_to(a, (1,) * k + a.shape)``: new axes (stride 0) in front, read-only."""
    index = (None,) * k

    def conv(a):
        v = a[index]
        v.flags.writeable = False
        return v

    return conv


def spread(shape, dtype=None):
    """``v -> np.broadcast_to(np.asarray(v, dtype), shape)`` for a scalar ``v``, made directly."""
    zeros = (0,) * len(shape)

    def conv(v):
        base = np.asarray(v, dtype)
        r = np.ndarray(shape, base.dtype, buffer=base, strides=zeros)
        r.flags.writeable = False
        return r

    return conv


def identity(a):
    return a


def new_device_array(shape, dtype):
    """``() -> device_array(shape, dtype)`` on the cpu target, the layout worked out once (the
    general call spends ~6 of its ~8 us on it)."""
    from pykern.runtime.memory.arrays import DeviceArray, Storage

    dtype = np.dtype(dtype)
    strides, step = [], dtype.itemsize
    for n in reversed(shape):
        strides.insert(0, step)
        step *= n
    strides, nbytes = tuple(strides), step

    def new():
        st = Storage.allocate(nbytes, "cpu")
        return DeviceArray(shape, strides, dtype, st, st.ptr, None)

    return new
