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
    if dt.kind == "f":  # the C library's pow, as the compiled code calls it
        return INTRINSICS["pow"](None, dt, a, b)
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


def _odd_double(s: float, err: float) -> float:
    """``s`` (a double) rounded to odd by the sign of the error ``err`` of the exact value it
    stands for: rounding that to 24 bits or fewer is rounding the exact value once."""
    if err == 0 or err != err:
        return s
    bits = int(np.float64(s).view(np.int64))
    if (err < 0) != (bits < 0):  # the exact value is nearer zero than s
        bits -= 1
    return float(np.int64(bits | 1).view(np.float64))


def _fma_odd(a, b, c) -> float:
    """``a*b + c`` of floats of 24 bits or fewer, as a double rounded to odd (the product is
    exact in a double; TwoSum finds the sum's error)."""
    p, cw = float(a) * float(b), float(c)
    s = p + cw
    if not math.isfinite(s):
        return s
    bb = s - p
    return _odd_double(s, (p - (s - bb)) + (cw - bb))


def fma(a, b, c, dt):
    """``a*b + c`` rounded once to ``dt`` (float16/32: through a double rounded to odd;
    float64: exactly, with fractions)."""
    if dt.itemsize < 8:
        return dt.type(_fma_odd(a, b, c))
    x, y, z = float(a), float(b), float(c)
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return dt.type(x * y + z)
    from fractions import Fraction

    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        return dt.type(x * y + z if x == 0 or y == 0 else 0.0)  # signed zeros as IEEE's fma
    try:
        return dt.type(float(exact))  # int / int: correctly rounded
    except OverflowError:
        return dt.type(math.copysign(math.inf, exact))


_NAN_BF16 = 0x7FC0


def to_bf16(x, mode: str = "rn"):
    """A real number (or boolean) as bfloat16, rounded by ``mode`` (rn, rz, rd, ru) as the
    compiled targets round it (codegen/lowering/bf16.py): through a float32 that is exact or
    rounded to odd."""
    from pykern.frontend.types import bfloat16_dtype

    a = np.asarray(x)
    k = a.dtype.kind
    if a.dtype == bfloat16_dtype():
        return a[()]
    if k == "b" or (k in "iu" and a.dtype.itemsize <= 2) or (k == "f" and a.dtype.itemsize <= 4):
        f = np.float32(a)
    else:
        if k in "iu":
            v = int(a)
            m = abs(v)
            if m >= 1 << 53:  # the top bits and a sticky bit, exact in a double
                m = (m & ~0xFFF) | (0x800 if m & 0xFFF else 0)
            d = float(-m if v < 0 else m)
        else:
            d = float(a)
        f = np.float32(d)
        if math.isfinite(d) and float(f) != d:  # round to odd
            bits = int(f.view(np.int32))
            if not bits & 1:
                toward_zero = abs(float(f)) > abs(d)
                bits = bits - 1 if toward_zero else bits + 1
                # f was rounded away from d: its odd neighbour nearer zero lies on d's side
            f = np.int32(bits).view(np.float32)
    bits = int(f.view(np.uint32))
    top = bits >> 16
    if f != f:
        r = (top & 0x8000) | _NAN_BF16
    elif mode == "rn":
        r = ((bits + 0x7FFF + (top & 1)) & 0xFFFFFFFF) >> 16
    else:
        inexact = bits & 0xFFFF != 0
        neg = bits >> 31
        away = {"rz": False, "ru": not neg, "rd": bool(neg)}[mode]
        r = top + 1 if inexact and away else top
    return np.uint16(r & 0xFFFF).view(bfloat16_dtype())


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
            if op == "max":  # numba's: nothing changes when either is NaN
                return v if old < v else old
            return old if v != v else v if (old != old or v > old) else old
        return max(old, v)
    if op in ("min", "nanmin"):
        if dt.kind == "f":
            if op == "min":
                return v if old > v else old
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


# ---------------------------------------------------------------------- external device code


def _ctype(t):
    """The ctypes type C code takes a value of pykern type ``t`` as (arrays: their address)."""
    import ctypes

    from pykern.frontend import types as T

    if isinstance(t, T.Array):
        return ctypes.c_void_p
    if isinstance(t, T.Boolean):
        return ctypes.c_bool
    if type(t) is T.Integer:
        return getattr(ctypes, f"c_{'' if t.signed else 'u'}int{t.bits}")
    if type(t) is T.Float and t.bits in (32, 64):
        return ctypes.c_float if t.bits == 32 else ctypes.c_double
    raise TypeError(f"an external function's {t} value")


def _address(v) -> int:
    return int(v.ctypes.data) if isinstance(v, np.ndarray) else int(v)


def external(host, symbol: str, abi: str, params, rtype):
    """A callable running external device function ``symbol`` of ``host`` (loaded native code:
    ``host.address[symbol]``, kept alive by the callable) with calling convention ``abi``, as the
    cpu target calls it: numba's ``int f(T *ret, args...)`` (the status ignored) or C's ``T
    f(args...)``; the result comes back as ``rtype``'s numpy scalar. A ``TypeError`` for a type
    ctypes cannot pass (float16, complex, records by value)."""
    import ctypes

    from pykern.frontend import types as T

    void = isinstance(rtype, T.Void)
    argtypes = [_ctype(p) for p in params]
    conv = [_address if isinstance(p, T.Array) else (lambda v: v.item()) for p in params]
    out = None if void else _ctype(rtype)
    cast = (lambda v: np.bool_(v)) if isinstance(rtype, T.Boolean) else (None if void else rtype.np_dtype.type)
    if abi == "numba":
        slot_type = ctypes.c_uint8 if void else out
        fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, *argtypes)(host.address[symbol])

        def call(*args):
            slot = slot_type()
            fn(ctypes.addressof(slot), *[c(a) for c, a in zip(conv, args)])
            return None if void else cast(slot.value)
    else:
        fn = ctypes.CFUNCTYPE(out, *argtypes)(host.address[symbol])

        def call(*args):
            r = fn(*[c(a) for c, a in zip(conv, args)])
            return None if void else cast(r)
    call.host = host  # the native code lives while a generated kernel holds this
    return call


# ---------------------------------------------------------------------- matrix fragments
# the cpu target's reference (codegen/lowering/matrix.py): each thread holds the whole tile


def frag_fill(frag, v):
    frag[...] = v


def _tile_index(frag, flat, offset, ldm, layout, what):
    """The flat indices of the tile's elements, each checked as the cpu target checks them under
    ``debug=True`` (numpy would wrap a negative one into the array's end)."""
    i, j = np.indices(frag.shape)
    major, minor = (i, j) if layout == "row" else (j, i)
    idx = int(offset) + major * int(ldm) + minor
    bad = idx[(idx < 0) | (idx >= flat.size)]
    if bad.size:
        raise IndexError(f"index {int(bad.flat[0])} is out of bounds for axis 0 with size {flat.size} "
                         f"(wmma.{what}: a fragment element's flat index, offset + row * ldm + col)")
    return idx


def frag_load(frag, arr, offset, ldm, layout):
    flat = np.asarray(arr).reshape(-1)
    frag[...] = flat[_tile_index(frag, flat, offset, ldm, layout, "load_matrix_sync")]


def frag_store(arr, frag, offset, ldm, layout):
    flat = np.asarray(arr).reshape(-1)
    if not np.shares_memory(flat, arr):
        raise ValueError("store_matrix_sync: the array must be C-contiguous")
    flat[_tile_index(frag, flat, offset, ldm, layout, "store_matrix_sync")] = frag


def frag_mma(d, a, b, c):
    """``d = a @ b + c`` in the reference order: k ascending from ``c``; integers wrap in int32,
    float32/float64 chain fused multiply-adds, 16-bit inputs add exact float32 products in float32
    (a float16 accumulator rounds once at the end)."""
    kind = a.dtype.kind
    if kind in "iu":
        acc = c.astype(np.int32)
        for k in range(a.shape[1]):
            acc += a[:, k, None].astype(np.int32) * b[None, k, :].astype(np.int32)
    elif a.dtype in (np.float32, np.float64):
        acc = c.copy()
        for k in range(a.shape[1]):
            acc = _fma_tile(a[:, k, None], b[None, k, :], acc)
    else:
        acc = c.astype(np.float32)
        for k in range(a.shape[1]):
            acc = acc + a[:, k, None].astype(np.float32) * b[None, k, :].astype(np.float32)
    d[...] = acc.astype(d.dtype)


def _fma_tile(a, b, acc):
    """Elementwise ``fma(a, b, acc)`` of float32 (vectorised round to odd) or float64 tiles."""
    if acc.dtype == np.float64:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape, acc.shape), np.float64)
        for ij in np.ndindex(out.shape):
            out[ij] = fma(a[ij[0], 0], b[0, ij[1]], acc[ij], acc.dtype)
        return out
    p = a.astype(np.float64) * b.astype(np.float64)  # exact
    cw = acc.astype(np.float64)
    s = p + cw
    bb = s - p
    err = (p - (s - bb)) + (cw - bb)
    bits = s.view(np.int64).copy()
    inexact = (err != 0) & np.isfinite(s)
    nearer_zero = inexact & ((err < 0) != (bits < 0))
    bits[nearer_zero] -= 1
    bits[inexact] |= 1
    return bits.view(np.float64).astype(np.float32)


# ---------------------------------------------------------------------- wave operations

SHUFFLES = frozenset(("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"))
WAVE_OPS = SHUFFLES | {"ballot_sync", "all_sync", "any_sync", "eq_sync", "activemask", "syncwarp"}


def value_bits(v) -> int:
    """The bits of a scalar as an unsigned int (a shuffle moves bits, whatever the type)."""
    a = np.asarray(v)
    return int(a.view(np.dtype(f"u{a.dtype.itemsize}")))


def _from_bits(bits: int, dt):
    if dt.kind == "b":
        return np.bool_(bits & 0xFF)
    u = np.dtype(f"u{dt.itemsize}")
    return np.array(bits & ((1 << (8 * dt.itemsize)) - 1), dtype=u).view(dt)[()]


def _wrap32(v: int) -> int:
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def wave_result(t, wave: list, active: int, ballot: int):
    """What the wave op thread ``t`` waits at returns, the lanes waiting at its site being
    ``active`` (bits by lane) and ``ballot`` their predicates: the cpu target's rules. A shuffle
    reads the bits the source lane shuffled last (its value when it waits at the same site); a
    source lane outside the wave, or beyond the block's last thread, is the lane itself."""
    kind, ws = t.kind, t.launch.warpsize
    if kind in SHUFFLES:
        dt, _mask, _val, arg = t.args
        lane, arg = t.linear % ws, int(arg)
        src = {"shfl_sync": lambda: arg & (ws - 1), "shfl_up_sync": lambda: _wrap32(lane - arg),
               "shfl_down_sync": lambda: _wrap32(lane + arg), "shfl_xor_sync": lambda: lane ^ arg}[kind]()
        if src < 0 or src >= ws or src >= len(wave):
            src = lane
        return _from_bits(wave[src].wval, dt)
    if kind == "ballot_sync":
        return np.uint64(ballot)
    if kind == "activemask":
        return np.uint64(active)
    if kind == "any_sync":
        return np.bool_(ballot != 0)
    if kind == "all_sync":
        return np.bool_(ballot == active)
    if kind == "eq_sync":
        return np.bool_(ballot == active or ballot == 0)
    return None  # syncwarp


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
    "lanemask_lt": lambda attrs, dt: np.uint64((1 << (STATE.thread.linear % STATE.thread.launch.warpsize)) - 1),
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
    "fma": lambda attrs, dt, a, b, c: fma(a, b, c, dt),
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
# float math: the C library the compiled cpu target calls (glibc's sinf/sin... through ctypes),
# so the last bit is the same; float16 through float32, as the cpu target computes it
_LIBM = None


def _libm_fn(name: str, itemsize: int, nargs: int):
    global _LIBM
    import ctypes
    import ctypes.util

    if _LIBM is None:
        _LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    ct = ctypes.c_double if itemsize == 8 else ctypes.c_float
    fn = getattr(_LIBM, name if itemsize == 8 else name + "f")
    fn.restype, fn.argtypes = ct, [ct] * nargs
    return fn


def _libm(name: str, nargs: int = 1):
    cache: dict = {}

    def op(attrs, dt, *args):
        wide = np.dtype(np.float32) if dt.itemsize < 4 else dt
        fn = cache.get(wide.itemsize)
        if fn is None:
            fn = cache[wide.itemsize] = _libm_fn(name, wide.itemsize, nargs)
        return dt.type(wide.type(fn(*(float(a) for a in args))))
    return op


def _exact(op):
    """Operations numpy computes exactly (or correctly rounded): numpy's own, in the type."""
    return lambda attrs, dt, *args: dt.type(op(*args))


for _n in "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 log1p " \
          "erf erfc lgamma".split():
    INTRINSICS[_n] = _libm(_n)
for _n in "atan2 pow hypot nextafter".split():
    INTRINSICS[_n] = _libm(_n, 2)
for _n in "sqrt floor ceil trunc rint fabs copysign".split():
    INTRINSICS[_n] = _exact(getattr(np, _n))


def _gamma(attrs, dt, x):
    """tgamma, except at the integers 1, 2, ... up to the last finite factorial: the correctly
    rounded (x-1)! (the cpu target's table)."""
    wide = np.dtype(np.float32) if dt.itemsize < 4 else dt
    if x == x and float(x) == math.floor(float(x)) and 1 <= float(x) <= (35 if wide.itemsize == 4 else 171):
        from fractions import Fraction

        exact = math.factorial(int(x) - 1)
        v = wide.type(float(exact))
        v = min((v, np.nextafter(v, wide.type(0)), np.nextafter(v, wide.type(np.inf))),
                key=lambda w: abs(Fraction(float(w)) - exact))
        return dt.type(v)
    return _libm("tgamma")(attrs, dt, x)


def _cbrt(attrs, dt, x):
    """glibc's cbrt and one Newton step with an exact residual (codegen/cpu/target.py's _cbrt),
    in double; float32 (float16) rounded from it."""
    d = np.float64(x)
    ax = abs(d)
    s_in, s_out = (2.0 ** 600, 2.0 ** -200) if ax < 2.0 ** -960 else (2.0 ** -600, 2.0 ** 200) \
        if ax > 2.0 ** 960 else (1.0, 1.0)
    xs = d * np.float64(s_in)
    y = np.float64(_libm_fn("cbrt", 8, 1)(float(xs)))
    f64 = np.dtype(np.float64)
    y2 = y * y
    e2 = fma(y, y, -y2, f64)
    y3 = y2 * y
    e3 = fma(y2, y, -y3, f64)
    resid = (y3 - xs) + (e3 + e2 * y)
    step = y - resid / (np.float64(3.0) * y2)
    r = (step if abs(step) < math.inf and y != 0 else y) * np.float64(s_out)
    return dt.type(r)


INTRINSICS["gamma"] = _gamma
INTRINSICS["cbrt"] = _cbrt


def _bit_count(kind):
    def op(attrs, dt, x):
        w = x.itemsize * 8
        u = value_bits(x)
        if kind == "clz":
            return np.int32(w - u.bit_length())
        return np.int32(0 if u == 0 else (u & -u).bit_length())  # ffs: 1-based lowest set bit
    return op


def _brev(attrs, dt, x):
    w = x.itemsize * 8
    return _from_bits(int(format(value_bits(x), f"0{w}b")[::-1], 2), dt)


def _frexp(attrs, dt, x):
    if not np.isfinite(x) or x == 0:
        return (x, np.int32(0))
    m, e = math.frexp(float(x))
    return (x.dtype.type(m), np.int32(e))


def _remainder(attrs, dt, a, b):
    """The C library's remainder; a zero result has ``a``'s sign (as the cpu target fixes it)."""
    r = _libm("remainder", 2)(attrs, dt, a, b)
    return np.copysign(r, a) if r == 0 else r


def _fail(kind):
    def op(attrs, dt, *args):
        msg = (attrs or {}).get("message", "bad value" if kind == "value" else "index out of range")
        if kind == "value":
            raise ValueError(msg)
        raise IndexError(f"{msg}: index {int(args[0])} is out of bounds with size {int(args[1])}")
    return op


INTRINSICS.update({
    "clz": _bit_count("clz"),
    "ffs": _bit_count("ffs"),
    "brev": _brev,
    "frexp": _frexp,
    "ldexp": lambda attrs, dt, x, n: dt.type(np.ldexp(x, np.int32(n))),
    "remainder": _remainder,
    "round_digits": lambda attrs, dt, x, nd: dt.type(round(float(x), int(nd))),
    "nanosleep": lambda attrs, dt, ns: None,
    # the compiled targets check these only with debug=True; the sim, a debugging target, always
    "value_error": _fail("value"),
    "index_error": _fail("index"),
    "bf16_round": lambda attrs, dt, x: to_bf16(x, attrs["mode"]),
    "bf16_fma": lambda attrs, dt, a, b, c: to_bf16(_fma_odd(np.float32(a), np.float32(b), np.float32(c)), "rn"),
    "bf16_as_int16": lambda attrs, dt, x: np.asarray(x).view(np.int16)[()],
    "bf16_as_uint16": lambda attrs, dt, x: np.asarray(x).view(np.uint16)[()],
    "int16_as_bf16": lambda attrs, dt, x: np.asarray(x).view(dt)[()],
    "uint16_as_bf16": lambda attrs, dt, x: np.asarray(x).view(dt)[()],
})


def intrinsic(name: str, attrs: dict, dt, *args):
    impl = INTRINSICS.get(name)
    if impl is None:
        raise NotImplementedError(f"intrinsic @{name} is not implemented on the sim target yet")
    return impl(attrs, dt, *args)
