"""pykern kernels over the blocks of dask arrays, and one worker per GPU.

Needs the optional extra ``pip install pykern[dask]``; ``import pykern`` never imports this
module or dask.

A kernel used here takes the input blocks, then the output block, then any extra
arguments: ``kernel(in_1, ..., in_n, out, *args)``. The output block has the shape of
the first input block; the grid covers it (``threads`` per block: 256 in 1-D, 16x16 in
2-D, 8x8x4 in 3-D), so the kernel guards with ``if i < out.shape[0]``, as usual.

Example::

    import dask.array as da, numpy as np, pykern as cuda, pykern.host.dask as pkd

    @cuda.jit
    def smooth(u, out):
        i = cuda.grid(1)
        if 0 < i < out.shape[0] - 1:
            out[i] = (u[i - 1] + u[i] + u[i + 1]) / 3
        elif i < out.shape[0]:
            out[i] = u[i]

    x = da.from_array(np.random.rand(4_000_000), chunks=1_000_000)
    y = pkd.map_overlap(smooth, x, depth=1, boundary="none")   # halos exchanged by dask
    y.compute()

Kernels travel to worker processes by value (``pickle``, see ``pykern/dispatch/serialize.py``)
and compile there on first use; workers that share a cache directory
(``PYKERN_CACHE_DIR``, the default per user on one machine) reuse one another's
compiles. On the ``hip`` target each block is copied to the worker's GPU and back;
:class:`GPUPerWorker` gives each worker its own GPU.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

try:
    import dask.array as _da
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("pykern.host.dask needs dask: pip install 'pykern[dask]'") from e

__all__ = ["map_blocks", "map_overlap", "block_kernel", "GPUPerWorker", "compile_stats"]

_DEFAULT_THREADS = {1: (256,), 2: (16, 16), 3: (8, 8, 4)}


class block_kernel:
    """``f(*blocks) -> out``: one launch of ``kernel`` over a block (what each dask task runs).

    Picklable (the kernel travels by value). Usable alone with ``dask.array.map_blocks``
    or ``map_overlap`` when more control is needed::

        y = x.map_overlap(pkd.block_kernel(smooth), depth=1, boundary="none", dtype=x.dtype)
    """

    def __init__(self, kernel, args=(), dtype=None, threads=None, steps=1):
        if getattr(kernel, "__pykern_device__", True):
            raise TypeError(f"pykern.dask needs a kernel (@pykern.jit, not device=True), got {kernel!r}")
        self.kernel = kernel
        self.args = tuple(args)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.threads = None if threads is None else tuple(np.atleast_1d(threads).tolist())
        self.steps = int(steps)
        if self.steps < 1:
            raise ValueError(f"steps={steps}: at least one launch per block")

    def _config(self, shape):
        nd = len(shape)
        threads = self.threads or _DEFAULT_THREADS.get(nd)
        if threads is None or len(threads) != nd:
            raise ValueError(f"pykern.host.dask: give threads=(...) with {nd} entries for {nd}-d blocks")
        grid = tuple(max(1, -(-s // t)) for s, t in zip(shape, threads))
        return grid, threads

    def __call__(self, *blocks):
        from pykern import runtime as targets

        # one layout per dtype and rank, so every block reuses one compiled overload
        blocks = [np.ascontiguousarray(b) for b in blocks]
        first = blocks[0]
        dtype = self.dtype or first.dtype
        if first.size == 0:
            return np.empty(first.shape, dtype)
        grid, threads = self._config(first.shape)
        launch = self.kernel[grid, threads]
        if targets.current_target() == "hip":
            from pykern.runtime.memory import arrays as memory

            ins = [memory.to_device(b) for b in blocks]
            out = memory.device_array(first.shape, dtype)
        else:
            ins, out = blocks, np.empty(first.shape, dtype)
            if self.steps > 1:  # the ping-pong writes into it: never into dask's own block
                ins[0] = ins[0].copy()
        if self.steps > 1 and ins[0].dtype != out.dtype:
            raise TypeError(f"steps={self.steps}: the output ({out.dtype}) must have the input's dtype ({ins[0].dtype})")
        for _ in range(self.steps):
            launch(*ins, out, *self.args)
            if self.steps > 1:  # time steps: the output is the next input (ping-pong)
                ins[0], out = out, ins[0]
        res = ins[0] if self.steps > 1 else out
        return res.copy_to_host() if hasattr(res, "copy_to_host") else res

    def __repr__(self):
        return f"pykern.host.dask.block_kernel({self.kernel.__name__})"


def _meta(arrays, dtype):
    ref = next(a for a in arrays if isinstance(a, _da.Array))
    return np.empty((0,) * ref.ndim, dtype or ref.dtype)


def map_blocks(kernel, *arrays, args=(), dtype=None, threads=None, steps=1, **kwargs):
    """Apply ``kernel(*blocks, out, *args)`` to every block of the dask ``arrays``.

    Returns a lazy dask array with the chunks of the first array. Extra ``kwargs`` go
    to ``dask.array.map_blocks``.

    Example::

        y = pkd.map_blocks(scale, x, args=(np.float32(2),))
    """
    f = block_kernel(kernel, args, dtype, threads, steps)
    dtype = f.dtype or arrays[0].dtype
    return _da.map_blocks(f, *arrays, dtype=dtype, meta=_meta(arrays, dtype),
                          name=kwargs.pop("name", f"pykern-{kernel.__name__}"), **kwargs)


def map_overlap(kernel, *arrays, depth, boundary="none", args=(), dtype=None, threads=None, steps=1, **kwargs):
    """Like :func:`map_blocks`, each block first extended by ``depth`` cells of its
    neighbours (halo; ``boundary`` fills the array's outer edge: ``"none"``,
    ``"reflect"``, ``"periodic"``, ``"nearest"`` or a value), the halo trimmed off after.

    ``steps=k`` launches the kernel ``k`` times per block, each output the next input
    (time steps of a stencil between two halo exchanges; give ``depth >= k * radius``).

    Example (a 3-point stencil needs one cell of halo per step)::

        y = pkd.map_overlap(smooth, x, depth=1, boundary="none")
        y10 = pkd.map_overlap(smooth, x, depth=10, boundary="none", steps=10)
    """
    f = block_kernel(kernel, args, dtype, threads, steps)
    dtype = f.dtype or arrays[0].dtype
    return _da.map_overlap(f, *arrays, depth=depth, boundary=boundary, trim=True, dtype=dtype,
                           meta=_meta(arrays, dtype), **kwargs)


def compile_stats(cache_dir=None):
    """Cache events (``writes`` = compiles stored, ``hits``, ``misses``) summed over every
    process that used the cache directory -- across a cluster on one machine or a shared
    filesystem, how many compilations happened."""
    from pykern.runtime.cache import KernelCache, default_cache

    cache = default_cache() if cache_dir is None else KernelCache(cache_dir)
    return cache.persistent_stats()


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover - dask.array without distributed
    _WorkerPlugin = object


class GPUPerWorker(_WorkerPlugin):
    """Pin each Dask worker to one GPU (hip target), as ``HIP_VISIBLE_DEVICES`` would.

    ``devices`` lists the GPU ids to spread workers over (default: every GPU the worker
    sees); worker ``n`` (LocalCluster names workers 0, 1, ...) gets ``devices[n % len]``,
    other names are hashed. Before HIP is loaded in the worker the choice is made with
    ``HIP_VISIBLE_DEVICES`` (the worker then sees only its GPU, as device 0); after,
    with ``pykern.select_device``. Without a GPU (cpu target) it does nothing.

    Example::

        cluster = LocalCluster(n_workers=4, threads_per_worker=1)
        client = Client(cluster)
        client.register_plugin(pkd.GPUPerWorker())
    """

    name = "pykern-gpu-per-worker"

    def __init__(self, devices=None):
        self.devices = None if devices is None else [int(d) for d in devices]

    def choose(self, worker_name) -> int | None:
        """The GPU id for a worker called ``worker_name``."""
        devices = self.devices
        if devices is None:
            from pykern.runtime import device_registry as rt_devices

            try:
                devices = list(range(rt_devices.get_device_count()))
            except Exception:  # no HIP library at all: nothing to pin
                devices = []
        if not devices:
            return None
        try:
            n = int(worker_name)
        except (TypeError, ValueError):
            n = zlib.crc32(str(worker_name).encode())
        return devices[n % len(devices)]

    def setup(self, worker):
        from pykern.runtime.hip import library as hip

        if self.devices is None and hip._library is None:
            # counting GPUs would load HIP with all of them visible: choose from the environment instead
            visible = os.environ.get("HIP_VISIBLE_DEVICES")
            if visible is not None:
                self.devices = [int(d) for d in visible.split(",") if d.strip()]
        dev = self.choose(worker.name)
        if dev is None:
            return
        if hip._library is None:
            os.environ["HIP_VISIBLE_DEVICES"] = str(dev)
        else:
            from pykern.runtime import device_registry as rt_devices

            rt_devices.select_device(dev)
        worker.pykern_device = dev
