"""numba.cuda's ``Reduce`` / ``@cuda.reduce``: a tree reduction on the device
with any binary device function.

Each launch runs blocks of ``BLOCK`` threads: each block takes one contiguous
chunk, every thread folds a part of it (block-strided on a GPU, so reads
coalesce; a contiguous run on the cpu target, where a block's threads run
one after another on one core), then the block combines its threads' values
in shared memory (a tree of ``syncthreads`` steps) and thread 0 writes the
block's partial result. With more than one block a second launch (one block)
reduces the partials in place; ``init`` is combined once, last, as numba does
(``result = fn(reduce(arr), init)``). The function must be associative and
commutative (blocks take strided elements), as in numba.

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
#: on the cpu target: a few blocks per core (each block's barriers cost a
#: scheduler sweep over its threads, so fewer, longer blocks are faster)
CPU_BLOCKS_PER_CORE = 4


def blocks_for(n: int, target: str) -> int:
    """Blocks of the first pass for ``n`` elements on ``target``."""
    import os

    cap = MAX_BLOCKS if target != "cpu" else min(MAX_BLOCKS, CPU_BLOCKS_PER_CORE * (os.cpu_count() or 1))
    return max(1, min(cap, -(-n // BLOCK)))

_SOURCE = f"""
def reduce_kernel(src, n, dst, init, use_init):
    vals = cuda.shared.array({BLOCK}, DT)
    have = cuda.shared.array({BLOCK}, np.int32)
    tid = cuda.threadIdx.x
    # each block folds one contiguous chunk, its threads reading neighbouring
    # elements (coalesced on a GPU, cache-friendly on the cpu target)
    chunk = (n + cuda.gridDim.x - 1) // cuda.gridDim.x
    lo = cuda.blockIdx.x * chunk
    hi = min(lo + chunk, n)
    if CONTIGUOUS:
        # cpu target: a block's threads run one after another on one core, so
        # each thread takes its own contiguous run (cache lines read once)
        per = (hi - lo + {BLOCK} - 1) // {BLOCK}
        i = lo + tid * per
        end = min(i + per, hi)
        step = 1
    else:
        # GPU: neighbouring threads read neighbouring elements (coalesced)
        i = lo + tid
        end = hi
        step = {BLOCK}
    acc = DT(0)
    got = 0
    if i < end:
        acc = src[i]
        got = 1
        i += step
        if CONTIGUOUS and end - i >= 8:
            # four independent chains: the loop is not bound by fn's latency
            m = (end - i) // 4 * 4
            a1 = src[i]
            a2 = src[i + 1]
            a3 = src[i + 2]
            a4 = src[i + 3]
            for j in range(i + 4, i + m, 4):
                a1 = DT(fn(a1, src[j]))
                a2 = DT(fn(a2, src[j + 1]))
                a3 = DT(fn(a3, src[j + 2]))
                a4 = DT(fn(a4, src[j + 3]))
            acc = DT(fn(acc, DT(fn(DT(fn(a1, a2)), DT(fn(a3, a4))))))
            i += m
        for j in range(i, end, step):
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

            ns = {"cuda": stubs, "np": np, "DT": dtype.type, "fn": self._device, "CONTIGUOUS": target == "cpu",
                  "__name__": getattr(self._device.py_func, "__module__", None) or __name__}
            k = self._kernels[key] = Dispatcher(define("reduce_kernel", _SOURCE, ns))
        return k

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        from pykern.runtime.memory.arrays import DeviceArray, as_device_array, device_array, to_device
        from pykern.runtime import current_target

        if is_device_operand(arr):
            arr = as_device_array(arr)
        else:
            arr = np.asarray(arr)
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
        target = current_target()
        if target == "hip" and not isinstance(arr, DeviceArray):
            arr = to_device(arr, stream=stream)
        k = self._kernel(dtype, target)
        nblocks = blocks_for(n, target)
        partials = device_array(nblocks, dtype, stream=stream) if (target == "hip" or isinstance(arr, DeviceArray)) \
            else np.empty(nblocks, dtype)
        k[nblocks, BLOCK, stream](arr, n, partials, init, nblocks == 1)
        if nblocks > 1:  # second pass: one block over the partials, in place
            k[1, BLOCK, stream](partials, nblocks, partials, init, True)
        if res is not None:
            if isinstance(partials, DeviceArray):
                res[:1].copy_to_device(partials[:1], stream=stream)
            else:
                res[:1] = partials[:1]
            return None
        if isinstance(partials, DeviceArray):
            if stream not in (0, None):
                stream.synchronize()
            return partials[0]
        return partials[0]

    def __repr__(self):
        return f"<pykern Reduce {self.__name__}>"


#: numba's decorator spelling: ``@cuda.reduce``
reduce = Reduce
