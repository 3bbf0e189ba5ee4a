"""What generated sim code calls: pykern's scalar semantics where numpy's differ, the
intrinsics (reading the running thread's state), atomics and memory allocation.

Only one simulated thread runs Python at a time (``scheduler``), so ``STATE.thread``
is the running thread and atomics need no lock.

Example::

    >>> import numpy as np
    >>> from pykern.sim import runtime
    >>> runtime.floordiv(np.int32(-7), np.int32(0)), runtime.cast(np.float32("nan"), np.dtype("int32"))
    (np.int32(0), np.int32(0))
"""

from __future__ import annotations

import math

import numpy as np


class _State:
    """The running simulated thread (set by the scheduler before it runs)."""

    thread = None


STATE = _State()


class ThreadExit(Exception):
    """A ``raise`` in a kernel: the thread stops there for good (as on the compiled targets)."""


def thread_raise(cls: str, args: tuple):
    raise ThreadExit(cls, args)


# ---------------------------------------------------------------------- scalar semantics


def cast(x, dt):
    """numpy ``astype`` as pykern's ``Cast``: float -> int truncates and saturates (NaN -> 0)."""
    if dt is None:
        return x
    src = np.asarray(x).dtype
    if dt.kind in "iu" and src.kind in "fc":
        v = x.real if src.kind == "c" else x
        if v != v:
            return dt.type(0)
        info = np.iinfo(dt)
        f = math.trunc(float(v)) if math.isfinite(v) else (info.max if v > 0 else info.min)
        return dt.type(min(max(f, info.min), info.max))
    if dt.kind == "b":
        return np.bool_(x != 0)
    return np.asarray(x).astype(dt)[()]


def floordiv(a, b):
    dt = np.asarray(a).dtype
    if dt.kind in "iu":
        if b == 0:
            return dt.type(0)
        if dt.kind == "i" and b == -1:
            return (-a)  # MIN // -1 wraps to MIN
        return dt.type(int(a) // int(b))
    return np.floor_divide(a, b)


def mod(a, b):
    dt = np.asarray(a).dtype
    if dt.kind in "iu":
        if b == 0:
            return dt.type(0)
        return dt.type(int(a) % int(b))
    return np.remainder(a, b)


def power(a, b):
    dt = np.asarray(a).dtype
    if dt.kind in "iu":
        e, base, bits = int(b), int(a), dt.itemsize * 8
        if e < 0:  # codegen's rule: 1 -> 1, -1 -> +-1 by parity, 0 -> the type's minimum, else 0
            r = 1 if base == 1 else (-1 if e % 2 else 1) if base == -1 else -(1 << (bits - 1)) if base == 0 else 0
        else:
            r = pow(base, e, 1 << bits)
        return _wrap(r, dt)
    return np.power(a, b)


def _wrap(v: int, dt):
    bits = dt.itemsize * 8
    v &= (1 << bits) - 1
    if dt.kind == "i" and v >> (bits - 1):
        v -= 1 << bits
    return dt.type(v)


def shl(a, b):
    """``a << b``: a count >= the width (or negative: a huge unsigned) shifts everything out."""
    dt = np.asarray(a).dtype
    bits = dt.itemsize * 8
    c = int(b) % (1 << bits)
    return dt.type(0) if c >= bits else _wrap(int(a) << c, dt)


def shr(a, b):
    """``a >> b``: arithmetic for signed; a count >= the width leaves 0 or the sign."""
    dt = np.asarray(a).dtype
    bits = dt.itemsize * 8
    c = int(b) % (1 << bits)
    if c >= bits:
        return dt.type(-1 if dt.kind == "i" and a < 0 else 0)
    return dt.type(int(a) >> c)


def typed_range(start, stop, step, dt):
    """``range`` yielding values of the loop variable's type; a zero step runs nothing."""
    if step == 0:
        return
    for v in range(int(start), int(stop), int(step)):
        yield dt.type(v)


# ---------------------------------------------------------------------- memory


def alloc(space: str, name: str, shape: tuple, dt):
    t = STATE.thread
    if space == "shared":
        block = t.block
        if shape == (0,):
            buf = block.dynamic
            return buf[: buf.nbytes // dt.itemsize * dt.itemsize].view(dt)
        arr = block.shared.get(name)
        if arr is None:
            arr = block.shared[name] = np.zeros(shape, dt)
        return arr
    return np.zeros(shape, dt)


def global_array(address: int, shape: tuple, strides: tuple, dt):
    import ctypes

    nbytes = (sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + dt.itemsize) if all(shape) else 0
    buf = (ctypes.c_char * max(nbytes, 1)).from_address(address)
    return np.ndarray(shape, dt, buffer=buf, strides=strides)


def sl(start, stop, step):
    return slice(None if start is None else int(start), None if stop is None else int(stop),
                 None if step is None else int(step))


def view(arr, items: tuple):
    fixed = []
    for it in items:
        if isinstance(it, slice) and it.step == 0:
            return arr[tuple(fixed) + (slice(0, 0),) + (slice(None),) * (len(items) - len(fixed) - 1)]
        fixed.append(it)
    return arr[tuple(fixed) + (Ellipsis,)]  # the Ellipsis keeps a 0-d result a view (a record reference)


def field(rec, name: str):
    return rec[name]


# ---------------------------------------------------------------------- atomics


def _atomic_new(op, old, v, dt):
    if op == "add":
        return old + v
    if op == "sub":
        return old - v
    if op in ("max", "nanmax"):
        if dt.kind == "f":
            if op == "max":
                return v if (v > old or old != old) else old
            return old if v != v else v if (old != old or v > old) else old
        return max(old, v)
    if op in ("min", "nanmin"):
        if dt.kind == "f":
            if op == "min":
                return v if (v < old or old != old) else old
            return old if v != v else v if (old != old or v < old) else old
        return min(old, v)
    if op == "and":
        return old & v
    if op == "or":
        return old | v
    if op == "xor":
        return old ^ v
    if op == "exch":
        return v
    if op == "inc":
        return dt.type(0) if int(old) >= int(v) else dt.type(int(old) + 1)
    if op == "dec":
        return v if (int(old) == 0 or int(old) > int(v)) else dt.type(int(old) - 1)
    raise NotImplementedError(op)


def atomic(op: str, arr, idx: tuple, *values):
    old = arr[idx]
    if op == "cas":
        if old == values[0]:
            arr[idx] = values[1]
        return old
    arr[idx] = _atomic_new(op, old, values[0], arr.dtype)
    return old


# ---------------------------------------------------------------------- intrinsics


def _special(field_name):
    def read(attrs, dt):
        return getattr(STATE.thread, field_name)[attrs.get("axis", 0)]
    return read


def _math(fn):
    return lambda attrs, dt, *args: dt.type(fn(*args))


def _minmax(pick):
    return lambda attrs, dt, a, b: pick(a, b)


def _print(attrs, dt, *args):
    fmt = attrs["format"].replace("%lld", "%d").replace("%llu", "%d")
    vals = tuple(("True" if a else "False") if isinstance(a, np.bool_) else a.item() for a in args)
    print(fmt % vals, end="", flush=True)  # the format holds its own newline


def _round(attrs, dt, x):
    nd = attrs.get("ndigits")
    return dt.type(np.rint(x) if nd is None else round(float(x), nd))


_SPECIAL = {"thread_idx": "tid", "block_idx": "bid", "block_dim": "bdim", "grid_dim": "gdim"}

INTRINSICS = {
    **{name: _special(f) for name, f in _SPECIAL.items()},
    "warpsize": lambda attrs, dt: dt.type(STATE.thread.launch.warpsize),
    "laneid": lambda attrs, dt: dt.type(STATE.thread.linear % STATE.thread.launch.warpsize),
    "threadfence_block": lambda attrs, dt: None,
    "threadfence": lambda attrs, dt: None,
    "threadfence_system": lambda attrs, dt: None,
    "breakpoint": lambda attrs, dt: breakpoint(),
    "print": _print,
    "abs": lambda attrs, dt, x: dt.type(abs(x)) if dt.kind == "f" else (-x if x < 0 else x),
    "min": _minmax(lambda a, b: b if b < a else a),
    "max": _minmax(lambda a, b: b if b > a else a),
    "minimum": _minmax(np.minimum),
    "maximum": _minmax(np.maximum),
    "fmin": _minmax(np.fmin),
    "fmax": _minmax(np.fmax),
    "round": _round,
    "fma": lambda attrs, dt, a, b, c: dt.type(np.longdouble(a) * np.longdouble(b) + np.longdouble(c))
    if dt.itemsize < 8 else dt.type(math.fma(float(a), float(b), float(c))) if hasattr(math, "fma")
    else a * b + c,
    "isnan": lambda attrs, dt, x: np.isnan(x),
    "isinf": lambda attrs, dt, x: np.isinf(x),
    "isfinite": lambda attrs, dt, x: np.isfinite(x),
    "complex": lambda attrs, dt, re, im: dt.type(complex(re, im)),
    "real": lambda attrs, dt, c: c.real,
    "imag": lambda attrs, dt, c: c.imag,
    "fmod": lambda attrs, dt, a, b: (dt.type(0) if b == 0 else dt.type(math.fmod(int(a), int(b))))
    if dt.kind in "iu" else np.fmod(a, b),
    "popc": lambda attrs, dt, x: dt.type(bin(int(np.asarray(x).view(np.dtype(f"u{x.itemsize}")))).count("1")),
}
for _n in ("sin cos tan arcsin:asin arccos:acos arctan:atan sinh cosh tanh arcsinh:asinh arccosh:acosh "
           "arctanh:atanh exp exp2 expm1 log log2 log10 log1p sqrt cbrt floor ceil trunc rint fabs").split():
    _np, _, _ir = _n.partition(":")
    INTRINSICS[_ir or _np] = _math(getattr(np, _np))
for _n in ("arctan2:atan2 power:pow hypot copysign nextafter").split():
    _np, _, _ir = _n.partition(":")
    INTRINSICS[_ir or _np] = _math(getattr(np, _np))
INTRINSICS["erf"] = _math(lambda x: math.erf(float(x)))
INTRINSICS["erfc"] = _math(lambda x: math.erfc(float(x)))
INTRINSICS["gamma"] = _math(lambda x: math.gamma(float(x)) if x == x else x)
INTRINSICS["lgamma"] = _math(lambda x: math.lgamma(float(x)) if x == x else x)


def intrinsic(name: str, attrs: dict, dt, *args):
    impl = INTRINSICS.get(name)
    if impl is None:
        raise NotImplementedError(f"intrinsic @{name} is not implemented on the sim target yet")
    return impl(attrs, dt, *args)
