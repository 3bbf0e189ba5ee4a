"""The kernel-language namespace: objects that only mean something inside a kernel.

``pykern`` re-exports these (``pykern.threadIdx``, ``pykern.shared.array``,
``pykern.atomic.add``, ...). The frontend recognises them by identity when it
resolves a name or attribute; called on the host they raise a clear error.

Example::

    @pykern.jit
    def k(out):
        i = pykern.grid(1)
        buf = pykern.shared.array(128, pykern.float32)
        ...
"""

from __future__ import annotations


class Stub:
    """A kernel-only name. ``_pk_name`` is what the frontend dispatches on."""

    _pk_name = ""

    def __init__(self, name: str, doc: str = ""):
        self._pk_name = name
        self.__doc__ = doc or f"``{name}`` (only meaningful inside a pykern kernel)."

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"pykern.{self._pk_name}() can only be used inside a @pykern.jit kernel or device function"
        )

    def __repr__(self) -> str:
        return f"<pykern kernel-only {self._pk_name}>"


class Dim3Stub(Stub):
    """``threadIdx``/``blockIdx``/``blockDim``/``gridDim``: ``.x .y .z`` are int32."""

    def __init__(self, name: str, intrinsic: str, doc: str):
        super().__init__(name, doc)
        self.intrinsic = intrinsic

    @property
    def x(self):
        return self._host()

    @property
    def y(self):
        return self._host()

    @property
    def z(self):
        return self._host()

    def _host(self):
        raise RuntimeError(f"pykern.{self._pk_name} can only be read inside a @pykern.jit kernel")


class Namespace(Stub):
    """A group of kernel-only functions (``shared``, ``local``, ``const``, ``atomic``)."""

    def __init__(self, name: str, members: dict, doc: str = ""):
        super().__init__(name, doc)
        for attr, member in members.items():
            setattr(self, attr, member)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"pykern.{self._pk_name} is a namespace; use e.g. pykern.{self._pk_name}.array(...)")


threadIdx = Dim3Stub("threadIdx", "thread_idx", "The thread index within its block (.x .y .z, int32).")
blockIdx = Dim3Stub("blockIdx", "block_idx", "The block index within the grid (.x .y .z, int32).")
blockDim = Dim3Stub("blockDim", "block_dim", "The block shape (.x .y .z, int32).")
gridDim = Dim3Stub("gridDim", "grid_dim", "The grid shape in blocks (.x .y .z, int32).")
warpsize = Stub("warpsize", "Lanes per wave (int32): 64 on gfx9 and on cpu, 32 on RDNA.")
laneid = Stub("laneid", "This thread's lane within its wave (int32).")

grid = Stub("grid", "grid(n): the absolute thread position (int64; a tuple for n > 1).")
gridsize = Stub("gridsize", "gridsize(n): the number of threads in the grid per axis (int64).")

shared = Namespace(
    "shared",
    {"array": Stub("shared.array", "shared.array(shape, dtype): per-block memory; shape 0 is the dynamic buffer.")},
)
local = Namespace("local", {"array": Stub("local.array", "local.array(shape, dtype): per-thread memory.")})
const = Namespace(
    "const", {"array_like": Stub("const.array_like", "const.array_like(host_array): data frozen into the code.")}
)

syncthreads = Stub("syncthreads", "Block barrier.")
syncthreads_count = Stub("syncthreads_count", "Block barrier; returns how many threads passed a true predicate.")
syncthreads_and = Stub("syncthreads_and", "Block barrier; nonzero if the predicate is true for every thread.")
syncthreads_or = Stub("syncthreads_or", "Block barrier; nonzero if the predicate is true for any thread.")
threadfence = Stub("threadfence", "Device-scope memory fence.")
threadfence_block = Stub("threadfence_block", "Block-scope memory fence.")
threadfence_system = Stub("threadfence_system", "System-scope memory fence.")
syncwarp = Stub("syncwarp", "syncwarp(mask=all lanes): wave barrier.")

_ATOMIC_NAMES = ("add", "sub", "max", "min", "and_", "or_", "xor", "exch", "inc", "dec", "cas", "compare_and_swap",
                 "nanmax", "nanmin")
atomic = Namespace(
    "atomic",
    {n: Stub(f"atomic.{n}", f"atomic.{n}(ary, idx, val): returns the old value.") for n in _ATOMIC_NAMES},
)

#: numba.cuda's cuda.fp16 functions (float16 in, float16 out; comparisons give booleans)
_FP16_NAMES = (
    "hadd hsub hmul hdiv hfma hneg habs hmax hmin heq hne hlt hle hgt hge "
    "hsin hcos hlog hlog10 hlog2 hexp hexp10 hexp2 hfloor hceil hsqrt hrsqrt hrcp hrint htrunc"
).split()
fp16 = Namespace(
    "fp16",
    {n: Stub(f"fp16.{n}", f"fp16.{n}(...): numba.cuda's float16 {n[1:]} (float16 arguments and result).")
     for n in _FP16_NAMES},
    "numba.cuda's cuda.fp16: float16 arithmetic, comparisons and math, native half instructions on AMD GPUs.",
)

#: numba.cuda's cuda.bf16 functions (numba-cuda's ``numba.cuda.bf16`` names; lowered by frontend/bf16_calls.py)
_BF16_INTS = ("int16", "uint16", "int32", "uint32", "int64", "uint64")
BF16_NAMES = tuple(
    "bfloat16 habs hadd hsub hmul hadd_rn hsub_rn hmul_rn hdiv hadd_sat hsub_sat hmul_sat hfma hfma_sat hneg "
    "hfma_relu heq hne hge hgt hle hlt hmax hmin hmax_nan hmin_nan hisinf hisnan hequ hneu hgeu hgtu hleu hltu "
    "float32_to_bfloat16 float64_to_bfloat16 bfloat16_to_float32 bfloat16_to_int8_rz bfloat16_to_uint8_rz "
    "bfloat16_as_int16 bfloat16_as_uint16 int16_as_bfloat16 uint16_as_bfloat16 htrunc hceil hfloor hrint hsqrt "
    "hrsqrt hrcp hlog hlog2 hlog10 hcos hsin hexp hexp2 hexp10 htanh htanh_approx".split()
    + [f"float32_to_bfloat16_{m}" for m in ("rn", "rz", "rd", "ru")]
    + [f"{t}_to_bfloat16_{m}" for t in _BF16_INTS for m in ("rn", "rz", "rd", "ru")]
    + [f"bfloat16_to_{t}_{m}" for t in _BF16_INTS for m in ("rn", "rz", "rd", "ru")]
)
bf16 = Namespace(
    "bf16",
    {n: Stub(f"bf16.{n}", f"bf16.{n}(...): numba.cuda's cuda.bf16.{n} (computed in float32, rounded to bfloat16).")
     for n in BF16_NAMES},
    "numba.cuda's cuda.bf16: bfloat16 conversions (every rounding mode), arithmetic, comparisons and math.",
)

#: rocWMMA's / CUDA wmma's matrix-fragment API (lowered by frontend/wmma_calls.py)
WMMA_NAMES = ("fragment", "fill_fragment", "load_matrix_sync", "store_matrix_sync", "mma_sync",
              "matrix_a", "matrix_b", "accumulator", "row_major", "col_major", "mem_row_major", "mem_col_major")
wmma = Namespace(
    "wmma",
    {n: Stub(f"wmma.{n}", f"wmma.{n}: see pykern.frontend.wmma_calls (rocWMMA's / CUDA wmma's {n}).") for n in WMMA_NAMES},
    "Matrix fragments on the matrix cores (MFMA on CDNA, WMMA on RDNA3/4; the cpu computes the same function).",
)

_WAVE_NAMES = (
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "ballot_sync",
    "all_sync",
    "any_sync",
    "eq_sync",
    "activemask",
    "lanemask_lt",
)
_BIT_NAMES = ("popc", "clz", "ffs", "brev", "fma")
#: numba.cuda's other kernel functions (lang2)
_MORE_NAMES = ("cbrt", "selp", "nanosleep", "match_any_sync", "match_all_sync")
_g = globals()
for _n in _WAVE_NAMES + _BIT_NAMES + _MORE_NAMES:
    _g[_n] = Stub(_n)
del _g, _n


def literal_unroll(container):
    """``for x in literal_unroll(t)``: loop over a tuple whose elements have different
    types (numba's ``literal_unroll``); the loop body is compiled once per element.
    On the host it returns ``container`` unchanged."""
    return container


def carray(ptr, shape, dtype=None):
    """numba's ``carray``: an array of ``shape`` in C order over the memory ``ptr`` points to.
    In a kernel ``ptr`` is a ``CPointer`` parameter (its element type is the array's; a
    ``dtype`` given must be the same); on the host a ctypes pointer (``c_void_p`` needs ``dtype``).

    Example::

        @cuda.jit("void(CPointer(float32))")
        def k(p):
            a = cuda.carray(p, (2, 3))  # float32[:, ::1] over p[0:6]
            a[1, 2] += 1.0
    """
    return _pointer_array(ptr, shape, dtype)


def farray(ptr, shape, dtype=None):
    """numba's ``farray``: as :func:`carray`, in Fortran order (``farray(p, (2, 3))[1, 0]`` is ``p[1]``)."""
    if not isinstance(shape, int):
        shape = tuple(shape)[::-1]
    return _pointer_array(ptr, shape, dtype).T


def _pointer_array(ptr, shape, dtype):
    import ctypes

    import numpy as np

    ptr = getattr(ptr, "_as_parameter_", ptr)
    if dtype is not None:
        dtype = np.dtype(dtype)
    if isinstance(ptr, ctypes.c_void_p):
        if dtype is None:
            raise TypeError("explicit dtype required for void* argument")
        addr = ptr.value or 0
    elif isinstance(ptr, ctypes._Pointer):
        own = np.dtype(ptr._type_)
        if dtype is not None and dtype != own:
            raise TypeError(f"mismatching dtype '{dtype}' for pointer {ptr}")
        dtype = own
        addr = ctypes.cast(ptr, ctypes.c_void_p).value or 0
    else:
        raise TypeError(f"expected a ctypes pointer, got {ptr!r}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = dtype.itemsize * int(np.prod(shape, dtype=np.intp))
    return np.frombuffer((ctypes.c_byte * nbytes).from_address(addr), dtype).reshape(shape)


class GroupStub(Stub):
    """A cooperative group inside a kernel (``cuda.cg.this_grid()``): its
    ``.sync()``, ``.size`` and ``.thread_rank`` are resolved at compile time."""


_GRID_GROUP = GroupStub("cg.grid_group", "The grid group: .sync(), .size, .thread_rank.")
_BLOCK_GROUP = GroupStub("cg.thread_block", "The thread block group: .sync(), .size, .thread_rank.")

cg = Namespace(
    "cg",
    {
        "this_grid": Stub("cg.this_grid", "cg.this_grid(): the grid group; g.sync() waits for every thread of a "
                          "cooperative launch (numba launches cooperatively when a kernel grid-syncs)."),
        "this_thread_block": Stub("cg.this_thread_block", "cg.this_thread_block(): the block group; "
                                  ".sync() is syncthreads()."),
    },
    "Cooperative groups (numba.cuda.cg).",
)

class VectorTypeStub(Stub):
    """numba.cuda's vector types (``float32x4``, alias ``float4``): ``v = float4(a, b, c, d)``
    in a kernel, built from scalars and smaller vectors of the same base type; ``v.x .y .z .w``
    read it. A value is a tuple with those field names (so it can be passed to and returned
    from device functions); ``base`` names the element type."""

    def __init__(self, name: str, base: str, n: int, aliases: tuple):
        super().__init__(name, f"{name}: a vector of {n} {base} (.{', .'.join('xyzw'[:n])}); kernels only.")
        self.__name__ = name
        self.base = base
        self.n = n
        self.aliases = aliases


#: numba.cuda's C names of the base types (float4 is float32x4, long2 is int64x2: numba takes the
#: host C type sizes, which are these on the 64-bit Linux hosts ROCm runs on)
_VECTOR_ALIASES = {"char": "int8", "short": "int16", "int": "int32", "long": "int64", "longlong": "int64",
                   "uchar": "uint8", "ushort": "uint16", "uint": "uint32", "ulong": "uint64", "ulonglong": "uint64",
                   "float": "float32", "double": "float64"}
VECTOR_TYPES: dict = {}  # name and alias -> VectorTypeStub
_g = globals()
for _base in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"):
    for _n in (1, 2, 3, 4):
        _aliases = tuple(f"{a}{_n}" for a, b in _VECTOR_ALIASES.items() if b == _base)
        _v = VectorTypeStub(f"{_base}x{_n}", _base, _n, _aliases)
        for _name in (_v.__name__, *_aliases):
            VECTOR_TYPES[_name] = _g[_name] = _v
del _g, _base, _n, _aliases, _v, _name

#: Every name pykern/__init__.py should re-export for kernels.
#: kernel-language libraries written in Python as device functions ("cmath": complex math,
#: "warp": match_any/all_sync, "integers", "reductions"), keyed by role; the modules of
#: ``pykern.lang`` that define them register themselves with ``register_device_library`` when
#: ``import pykern`` loads them, and the frontend calls their functions through this table --
#: the frontend sits below the jit those modules need, so it cannot import them.
DEVICE_LIBRARIES: dict = {}


def register_device_library(role: str, module) -> None:
    """Make ``module``'s device functions the library the frontend calls for ``role``."""
    DEVICE_LIBRARIES[role] = module

__all__ = [
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpsize",
    "laneid",
    "grid",
    "gridsize",
    "shared",
    "local",
    "const",
    "syncthreads",
    "syncthreads_count",
    "syncthreads_and",
    "syncthreads_or",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "syncwarp",
    "atomic",
    "literal_unroll",
    "carray",
    "farray",
    "fp16",
    "bf16",
    "wmma",
    "cg",
    *_WAVE_NAMES,
    *_BIT_NAMES,
    *_MORE_NAMES,
    *VECTOR_TYPES,
]
