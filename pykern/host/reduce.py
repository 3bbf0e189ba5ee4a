"""numba.cuda's ``Reduce`` / ``@cuda.reduce``: a tree reduction on the device
with any binary device function.

On a GPU each launch runs blocks of ``BLOCK`` threads: each block takes one contiguous chunk,
every thread folds a block-strided part of it (reads coalesce), then the block combines its
threads' values in shared memory (a tree of ``syncthreads`` steps) and thread 0 writes the
block's partial result. With more than one block a second launch (one block) reduces the
partials in place.

On the cpu target a block's threads run one after another on one core, so there the kernel has
one thread per block and no barriers (``_CPU_SOURCE``): each thread folds one contiguous chunk
into ``lanes(dtype)`` independent accumulators (a local array whose updates LLVM turns into
vector operations, where one accumulator would wait on each operation's latency), combines them
pairwise, and writes its partial; a second one-thread launch folds the partials. Arrays of up to
``CPU_CHUNK`` elements take one launch. Either way ``init`` is combined once, last, as numba does
(``result = fn(reduce(arr), init)``). The function must be associative and commutative (elements
are combined in another order than the array's), as in numba.

Example::

    import numpy as np, pykern as cuda

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    a = np.arange(1000, dtype=np.float64)
    assert sum_reduce(a) == a.sum()
    assert sum_reduce(a, init=5) == a.sum() + 5
"""

from __future__ import annotations

import numpy as np

from pykern.dispatch.generated import as_def, define, is_device_operand

#: threads per block of the reduction kernels
BLOCK = 256
#: at most this many blocks in the first pass on a GPU (each thread folds a run)
MAX_BLOCKS = 256


#: cpu target: elements per thread of the first pass (at least; more when that gives more than
#: ``CPU_CHUNKS_PER_CORE`` chunks per core), and the size below which one launch folds everything
CPU_CHUNK = 1 << 14
#: cpu target: chunks per core, so that the executor's workers share the first pass evenly
CPU_CHUNKS_PER_CORE = 16


#: independent accumulators per cpu thread. 64 whatever the type: with fewer LLVM (22) unrolls the
#: lane loop and vectorises it 128 bits wide; with 64 it vectorises the loop itself, 512 bits wide
#: where the host has AVX-512 (float64 sums: ~9 vs ~3 GB/s per core)
LANES = 64


def lanes(dtype) -> int:
    """Independent accumulators per cpu thread for ``dtype``."""
    return LANES


def cpu_chunk(n: int) -> int:
    """Elements per thread of the cpu target's first pass for ``n`` elements."""
    return max(CPU_CHUNK, -(-n // (CPU_CHUNKS_PER_CORE * _cores())))


def _cores() -> int:
    global _CORES
    if _CORES is None:  # once: os.cpu_count() reads /sys, ~50 us, a tenth of a small reduction
        import os

        _CORES = os.cpu_count() or 1
    return _CORES


_CORES = None

#: the one-thread launch of a small reduction: the same tuple object each time, which the
#: dispatcher's ``k[...]`` recognises without looking into it
_ONE = (1, 1)


def _runtime():
    """The runtime names a call uses, imported once (an import statement in the call costs
    ~0.5 us each, a tenth of a small reduction)."""
    global _RT
    if _RT is None:
        import types

        from pykern.runtime import current_target
        from pykern.runtime.memory.arrays import DeviceArray, as_device_array, device_array, to_device

        _RT = types.SimpleNamespace(current_target=current_target, DeviceArray=DeviceArray,
                                    as_device_array=as_device_array, device_array=device_array, to_device=to_device)
    return _RT


_RT = None


def blocks_for(n: int, target: str) -> int:
    """Blocks of the first pass for ``n`` elements on ``target`` (``BLOCK`` threads each on a
    GPU; on the cpu target one thread each, a chunk of ``cpu_chunk(n)`` elements)."""
    if target == "cpu":
        return -(-n // cpu_chunk(n))
    return max(1, min(MAX_BLOCKS, -(-n // BLOCK)))


def _cpu_source(w: int) -> str:
    """The cpu kernel: thread ``t`` folds ``src[t*per : (t+1)*per]`` (clipped to ``n``) into
    ``dst[t]``, through ``w`` lanes; ``init`` last when ``use_init``."""
    halves, h = [], w // 2
    while h:
        halves.append(f"""            for k in range({h}):
                lanes[k] = DT(fn(lanes[k], lanes[k + {h}]))
""")
        h //= 2
    # indices as uint64 (U): never negative, so no wrap-around code per access, which would keep
    # LLVM from seeing consecutive loads
    return f"""
def reduce_cpu(src, n, dst, init, use_init, per):
    t = cuda.grid(1)
    lo = t * per
    if lo < n:
        hi = min(lo + per, n)
        acc = src[U(lo)]
        i = lo + 1
        if hi - i >= {2 * w}:
            lanes = cuda.local.array({w}, DT)
            for k in range({w}):
                lanes[k] = src[U(i + k)]
            i += {w}
            m = (hi - i) // {w} * {w}
            for j in range(i, i + m, {w}):
                for k in range({w}):
                    lanes[k] = DT(fn(lanes[k], src[U(j + k)]))
            i += m
{"".join(halves)}            acc = DT(fn(acc, lanes[0]))
        for j in range(i, hi):
            acc = DT(fn(acc, src[U(j)]))
        if use_init != 0:
            acc = DT(fn(acc, init))
        dst[U(t)] = acc
"""


_SOURCE = f"""
def reduce_kernel(src, n, dst, init, use_init):
    vals = cuda.shared.array({BLOCK}, DT)
    have = cuda.shared.array({BLOCK}, np.int32)
    tid = cuda.threadIdx.x
    # each block folds one contiguous chunk, neighbouring threads reading neighbouring
    # elements (coalesced)
    chunk = (n + cuda.gridDim.x - 1) // cuda.gridDim.x
    lo = cuda.blockIdx.x * chunk
    hi = min(lo + chunk, n)
    i = lo + tid
    acc = DT(0)
    got = 0
    if i < hi:
        acc = src[i]
        got = 1
        for j in range(i + {BLOCK}, hi, {BLOCK}):
            acc = DT(fn(acc, src[j]))
    vals[tid] = acc
    have[tid] = got
    cuda.syncthreads()
    s = {BLOCK // 2}
    while s > 0:
        if tid < s and have[tid + s] != 0:
            if have[tid] != 0:
                vals[tid] = DT(fn(vals[tid], vals[tid + s]))
            else:
                vals[tid] = vals[tid + s]
                have[tid] = 1
        cuda.syncthreads()
        s = s // 2
    if tid == 0:
        r = vals[0]
        if use_init != 0:
            r = DT(fn(r, init))
        dst[cuda.blockIdx.x] = r
"""


def _check_size_and_res(n: int, size, res) -> None:
    """numba slices ``arr[:size]`` and writes ``res[:1]``, so ``size=-1`` reduced all but the
    last element and a zero-size ``res`` received nothing: both are refused here."""
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"size must be an integer, not {type(size).__name__}")
        if not 0 <= size <= n:
            raise ValueError(f"size={size}: the array has {n} elements (size counts the first ones to reduce)")
    if res is not None and (getattr(res, "size", None) or 0) < 1:
        raise ValueError(f"res must be an array of at least one element (the result goes to res[0]), "
                         f"got shape {getattr(res, 'shape', None)}")


class Reduce:
    """``Reduce(fn)(arr, size=None, res=None, init=0, stream=0)``: reduce a 1-d
    host or device array with binary function ``fn`` (a Python function or a
    ``@jit(device=True)`` function) on the current target. Returns the
    result as a host scalar, or writes it to ``res[0]`` (a device array) and
    returns None; an empty array gives ``init``."""

    def __init__(self, functor):
        from pykern.dispatch.dispatcher import Dispatcher

        py = getattr(functor, "py_func", functor)
        if not callable(py) or not hasattr(py, "__code__"):
            raise TypeError(f"Reduce needs a Python function, got {functor!r}")
        py = as_def(py)  # numba's example: cuda.reduce(lambda a, b: a + b)
        self._functor = functor
        self._device = functor if getattr(functor, "__pykern_device__", False) and isinstance(functor, Dispatcher) \
            else Dispatcher(py, None, device=True)
        self.__name__ = getattr(py, "__name__", "reduce")
        self.__doc__ = py.__doc__
        self._kernels = {}

    def _kernel(self, dtype, target="cpu"):
        key = (dtype, target == "cpu")
        k = self._kernels.get(key)
        if k is None:
            from pykern.lang import stubs
            from pykern.dispatch.dispatcher import Dispatcher

            ns = {"cuda": stubs, "np": np, "DT": dtype.type, "fn": self._device,
                  "__name__": getattr(self._device.py_func, "__module__", None) or __name__}
            if target == "cpu":
                k = Dispatcher(define("reduce_cpu", _cpu_source(lanes(dtype)), {**ns, "U": np.uint64}))
            else:
                k = Dispatcher(define("reduce_kernel", _SOURCE, ns))
            self._kernels[key] = k
        return k

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        rt = _runtime()
        as_device_array = rt.as_device_array
        if type(arr) is not np.ndarray and type(arr) is not rt.DeviceArray:
            arr = as_device_array(arr) if is_device_operand(arr) else np.asarray(arr)
        if res is not None and is_device_operand(res):
            res = as_device_array(res)  # a foreign array (cupy...): written through a zero-copy view
        if arr.ndim != 1:
            raise TypeError("only support 1D array")  # numba's message
        _check_size_and_res(arr.shape[0], size, res)
        if size is not None:
            arr = arr[:size]
        dtype = np.dtype(arr.dtype)
        init = dtype.type(init)
        n = arr.shape[0]
        if n < 1:
            if res is not None:
                res[0] = init
                return None
            return init
        target = rt.current_target()
        k = self._kernel(dtype, target)
        if target == "cpu":  # device arrays are host memory: partials in a numpy array either way
            if n <= CPU_CHUNK:  # one launch folds it all (the launcher object reused: its fast path)
                out = np.empty(1, dtype)
                (k[_ONE] if stream in (0, None) else k[1, 1, stream])(arr, n, out, init, True, CPU_CHUNK)
                partials = out
            else:
                per = cpu_chunk(n)
                nblocks = -(-n // per)
                partials = np.empty(nblocks, dtype)
                k[nblocks, 1, stream](arr, n, partials, init, False, per)
                # second pass: one thread over the partials, in place
                k[1, 1, stream](partials, nblocks, partials, init, True, nblocks)
            if stream not in (0, None):
                stream.synchronize()
            if res is None:
                return partials[0]
            res[:1] = partials[:1]
            return None
        if not isinstance(arr, rt.DeviceArray):
            arr = rt.to_device(arr, stream=stream)
        nblocks = blocks_for(n, target)
        partials = rt.device_array(nblocks, dtype, stream=stream)
        k[nblocks, BLOCK, stream](arr, n, partials, init, nblocks == 1)
        if nblocks > 1:  # second pass: one block over the partials, in place
            k[1, BLOCK, stream](partials, nblocks, partials, init, True)
        if res is not None:
            res[:1].copy_to_device(partials[:1], stream=stream)
            return None
        if stream not in (0, None):
            stream.synchronize()
        return partials[0]

    def __repr__(self):
        return f"<pykern Reduce {self.__name__}>"


#: numba's decorator spelling: ``@cuda.reduce``
reduce = Reduce
