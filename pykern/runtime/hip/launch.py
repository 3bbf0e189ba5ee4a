"""Loading code objects and launching kernels through the HIP module API.

Modules are loaded once per (code object hash, device) with hipModuleLoadData,
the most recently used kept (``HipModuleCache``: bounded, unloaded only once
their queued launches completed, reloaded by a kernel launched again); launches pass the packed explicit
arguments through ``extra`` (HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END) and
the runtime fills the hidden arguments. Launch configurations are checked
against the kernel's ``.max_flat_workgroup_size``, the device limits and its
LDS size before HIP sees them, so a bad launch is a LaunchError, not a crash.

Example::

    kernel = load(artifact)                          # KernelArtifact for "amdgpu"
    launch(kernel, artifact, (d_out, d_x, 2.0), grid=(40, 1, 1), block=(256, 1, 1))
"""

from __future__ import annotations

import ctypes
import hashlib
import operator
import sys
import threading
import warnings
import weakref
from dataclasses import dataclass

from pykern.core.errors import LaunchError, LaunchValueError
from pykern.runtime import PerformanceWarning
from pykern.runtime.hip import api as hip_api
from pykern.core import abi
from pykern.core.bounded import LRU, entries_limit
from pykern.core.targets import CODEGEN_SPELLINGS
from pykern.runtime.kernargs import array_arguments, get_flattener, get_packer


_lib = None  # pykern.runtime.hip.library.lib, imported at the first call (an import statement costs ~0.2 us a launch)


def _hip():
    global _lib
    if _lib is None:
        from pykern.runtime.hip.library import lib as _lib
    return _lib()


def _md(md: dict, key: str, default=None):
    """A metadata field, with or without the leading dot of the amdhsa spelling."""
    if key in md:
        return md[key]
    return md.get(key.lstrip("."), default)


class _ModuleCalls:
    """The HIP calls behind ``HipModuleCache``, apart so that a policy test can record them."""

    def load(self, code_object: bytes, device: int) -> int:
        from pykern.runtime.device_registry import ensure_current

        ensure_current(device)
        h = ctypes.c_void_p()
        image = ctypes.create_string_buffer(bytes(code_object), len(code_object))
        _hip().hipModuleLoadData(ctypes.byref(h), image)
        return h.value

    def function(self, module: int, name: str) -> int:
        h = ctypes.c_void_p()
        _hip().hipModuleGetFunction(ctypes.byref(h), module, name.encode())
        return h.value

    def unload(self, module: int, device: int) -> None:
        from pykern.core.errors import HipError

        try:
            _hip().hipModuleUnload(module)
        except HipError:  # (a context torn down under it): nothing of ours is left to free
            pass

    def fence(self, streams, device: int):
        """An event recorded now on each of ``streams``: past every launch queued there."""
        from pykern.runtime.device_registry import ensure_current

        ensure_current(device)
        lib, events = _hip(), []
        for s in streams:
            ev = ctypes.c_void_p()
            lib.hipEventCreateWithFlags(ctypes.byref(ev), hip_api.hipEventDisableTiming)
            events.append(ev.value)
            lib.hipEventRecord(ev.value, s)
        return events

    def done(self, events) -> bool:
        """Have all ``events`` completed? (then they are destroyed)"""
        lib = _hip()
        for ev in events:
            if lib.raw.hipEventQuery(ev) == hip_api.hipErrorNotReady:
                return False
        for ev in events:  # completed, or failed (a failed kernel): nothing will run after either
            lib.raw.hipEventDestroy(ev)
        return True

    def wait(self, events) -> None:
        for ev in events:
            _hip().raw.hipEventSynchronize(ev)

    def synchronize(self, device: int) -> None:
        from pykern.runtime.device_registry import ensure_current

        ensure_current(device)
        _hip().hipDeviceSynchronize()


class _Module:
    """One loaded code object: its hipModule_t (None once evicted), functions, and
    the streams launches of its kernels were queued on (what must drain before unloading)."""

    __slots__ = ("key", "device", "handle", "functions", "streams", "unvouched", "kernels")

    def __init__(self, key: tuple, device: int, handle: int):
        self.key, self.device, self.handle = key, device, handle
        self.functions: dict[str, int] = {}
        #: stream handle -> True (the null stream: lives forever) or a weak reference to the
        #: pykern Stream (alive: an event can still be recorded on it)
        self.streams: dict = {}
        #: a launch went to a stream we cannot vouch for (a raw handle, a Stream since destroyed):
        #: eviction then waits for the whole device instead of recording events
        self.unvouched = False
        self.kernels: weakref.WeakSet = weakref.WeakSet()  # HipKernels holding our functions

    def used_on(self, stream, handle: int) -> None:
        """A launch was queued on ``stream`` (handle ``handle``)."""
        if handle in self.streams or self.unvouched:
            return
        if handle == 0:
            self.streams[0] = True
        elif not isinstance(stream, int) and hasattr(stream, "__weakref__") and len(self.streams) < 16:
            self.streams[handle] = weakref.ref(stream)
        else:
            self.unvouched = True

    def vouched_streams(self):
        """The handles to fence, or None when some stream cannot take an event any more."""
        if self.unvouched:
            return None
        for v in self.streams.values():
            if v is not True and v() is None:
                return None
        return list(self.streams)


class HipModuleCache:
    """Code objects loaded on devices: one hipModule_t per (sha256, device), the
    ``bounded.entries_limit()`` most recently used kept loaded.

    A module evicted is unloaded (``hipModuleUnload``) only once no launch queued
    before the eviction can still run its code: launches are asynchronous, so an
    event is recorded on every stream its kernels were launched on and the unload
    waits until they all completed (checked at each later load; at most ``limit``
    unloads wait, then the oldest is waited for); where a stream cannot take an
    event (a raw handle, a destroyed Stream) the device is synchronized first.
    Kernels loaded from an evicted module lose their function handle and reload
    it at their next launch (``HipKernel._bind``). ``driver`` does the HIP calls
    (a test passes a recorder)."""

    def __init__(self, driver=None, limit=None):
        self.driver = driver or _ModuleCalls()
        self._lock = threading.RLock()
        self._limit = limit if limit is not None else (lambda: max(1, entries_limit()))
        self._loaded = LRU(self._limit, on_evict=self._evict)
        self._pending: list = []  # (module handle, device, events or None), oldest first

    @staticmethod
    def key(code_object: bytes, device: int) -> tuple:
        return (hashlib.sha256(code_object).hexdigest(), device)

    def acquire(self, code_object: bytes, device: int) -> _Module:
        """The loaded module of ``code_object`` on ``device``, now the most recently used."""
        k = self.key(code_object, device)
        rec = self._loaded.get(k)
        if rec is not None:
            return rec
        with self._lock:
            rec = self._loaded.get(k)
            if rec is None:
                self.reap()
                rec = _Module(k, device, self.driver.load(code_object, device))
                self._loaded.put(k, rec)  # may evict the least recently used
        return rec

    def touch(self, rec: _Module) -> None:
        """Mark ``rec`` the most recently used (every launch does, the fast paths too)."""
        self._loaded.get(rec.key)

    def module(self, code_object: bytes, device: int) -> int:
        """The hipModule_t for ``code_object`` on ``device`` (loaded on first use)."""
        return self.acquire(code_object, device).handle

    def function_of(self, rec: _Module, name: str) -> int:
        f = rec.functions.get(name)
        if f is None:
            with self._lock:
                f = rec.functions.get(name)
                if f is None:
                    f = rec.functions[name] = self.driver.function(rec.handle, name)
        return f

    def function(self, code_object: bytes, name: str, device: int) -> int:
        """The hipFunction_t of kernel ``name`` (its symbol, not ``name.kd``)."""
        return self.function_of(self.acquire(code_object, device), name)

    def _evict(self, _key, rec: _Module) -> None:
        with self._lock:
            handle, rec.handle = rec.handle, None
            rec.functions = {}
            for k in list(rec.kernels):
                k.function = None  # its next launch reloads (fast paths compare it and step aside)
            streams = rec.vouched_streams()
            token = ()
            try:
                if streams is None:
                    self.driver.synchronize(rec.device)
                elif streams:
                    token = self.driver.fence(streams, rec.device)
            except Exception:  # (a device left in error): nothing queued runs any more; the load goes on
                token = ()
            self._pending.append((handle, rec.device, token))
            self.reap()

    def reap(self) -> None:
        """Unload the evicted modules whose last launches have completed; past
        ``limit`` waiting, wait for the oldest."""
        with self._lock:
            keep = []
            for handle, device, token in self._pending:
                if not token or self.driver.done(token):
                    self.driver.unload(handle, device)
                else:
                    keep.append((handle, device, token))
            while len(keep) > self._limit():
                handle, device, token = keep.pop(0)
                self.driver.wait(token)
                self.driver.done(token)
                self.driver.unload(handle, device)
            self._pending = keep

    @property
    def pending(self) -> int:
        """Evicted modules waiting for their launches before they are unloaded."""
        return len(self._pending)

    def __len__(self) -> int:
        return len(self._loaded)

    def __contains__(self, key) -> bool:
        return key in self._loaded

    def clear(self) -> None:
        """Unload every module, once launches of it queued so far have completed
        (kernels loaded from them reload at their next launch)."""
        with self._lock:
            for k, rec in self._loaded.clear():
                self._evict(k, rec)
            for handle, device, token in self._pending:
                if token:
                    self.driver.wait(token)
                    self.driver.done(token)
                self.driver.unload(handle, device)
            self._pending = []


module_cache = HipModuleCache()


@dataclass(frozen=True)
class LaunchLimits:
    """What a launch must respect: from kernel metadata and the device."""

    max_block_size: int  # min(.max_flat_workgroup_size, device max threads per block)
    max_block_dim: tuple = (1024, 1024, 1024)
    max_grid_dim: tuple = (2**31 - 1, 2**31 - 1, 2**31 - 1)
    max_shared: int = 65536  # device LDS per block
    static_shared: int = 0  # the kernel's .group_segment_fixed_size


def _dim3(v, what: str) -> tuple:
    if isinstance(v, int):
        v = (v,)
    try:
        t = tuple(operator.index(x) for x in v)
    except (TypeError, ValueError):
        raise LaunchError(f"{what} must be an int or a tuple of 1-3 ints, got {v!r}") from None
    if not 1 <= len(t) <= 3:
        raise LaunchValueError(f"{what} must have 1-3 dimensions, got {v!r}")
    return t + (1,) * (3 - len(t))


def check_launch(grid, block, dynamic_shared: int, limits: LaunchLimits) -> tuple:
    """Validate a launch configuration; return ``(grid3, block3)`` or raise LaunchError.

    >>> check_launch(4, 64, 0, LaunchLimits(max_block_size=256))
    ((4, 1, 1), (64, 1, 1))
    """
    g, b = _dim3(grid, "griddim"), _dim3(block, "blockdim")
    if any(x < 1 for x in g):
        raise LaunchValueError(f"griddim {g}: every dimension must be >= 1")
    if any(x < 1 for x in b):
        raise LaunchValueError(f"blockdim {b}: every dimension must be >= 1")
    threads = b[0] * b[1] * b[2]
    if threads > limits.max_block_size:
        raise LaunchValueError(
            f"blockdim {b} has {threads} threads; this kernel on this device allows at most {limits.max_block_size}"
            " (its .max_flat_workgroup_size and the device limit)"
        )
    for i, c in enumerate("xyz"):
        if b[i] > limits.max_block_dim[i]:
            raise LaunchValueError(f"blockdim.{c} = {b[i]} exceeds the device limit {limits.max_block_dim[i]}")
        if g[i] > limits.max_grid_dim[i]:
            raise LaunchValueError(f"griddim.{c} = {g[i]} exceeds the device limit {limits.max_grid_dim[i]}")
        if g[i] * b[i] > 0xFFFFFFFF:  # the HSA dispatch packet counts work-items in 32 bits
            raise LaunchValueError(f"griddim.{c} * blockdim.{c} = {g[i] * b[i]} work-items exceeds 2**32 - 1")
    if dynamic_shared < 0:
        raise LaunchValueError(f"dynamic shared memory size must be >= 0, got {dynamic_shared}")
    if dynamic_shared + limits.static_shared > limits.max_shared:
        raise LaunchValueError(
            f"{dynamic_shared} bytes of dynamic shared memory + {limits.static_shared} static exceed the"
            f" device's {limits.max_shared} bytes of LDS per block"
        )
    return g, b


def explicit_params(artifact) -> list:
    """The artifact's flat parameters at the offsets its code object metadata gives.

    Raises LaunchError when the metadata and the artifact disagree (count or sizes).
    """
    args = _md(artifact.metadata or {}, ".args")
    if args is None:
        return list(artifact.params)
    try:
        return abi.at_metadata_offsets(artifact.params, args)
    except ValueError as e:
        raise LaunchError(f"kernel {artifact.name}: {e}") from None


def _no_module(_rec) -> None:
    """``touch`` of a kernel made without a loaded module (a benchmark's stand-in)."""


class HipKernel:
    """An amdgpu KernelArtifact loaded on a device, launchable like CpuKernel."""

    def __init__(self, artifact, device: int | None = None):
        from pykern.runtime.device_registry import current_device_id, get_device

        if CODEGEN_SPELLINGS.get(artifact.target) != "amdgpu":
            raise LaunchError(f"kernel {artifact.name} was compiled for {artifact.target}, not amdgpu")
        self.artifact = artifact
        self.name = artifact.name
        #: (block threads, dynamic shared bytes) -> blocks resident per CU: codegen's occupancy
        #: model from the code object, handed over by the glue (compiler.build_overload) so that
        #: the runtime needs no codegen; the HIP runtime's own query refines it when it has one
        self.occupancy_estimate = None
        self.device_id = current_device_id() if device is None else device
        dev = get_device(self.device_id)
        if artifact.arch and artifact.arch.split(":")[0] != dev.arch:
            raise LaunchError(
                f"kernel {artifact.name} was compiled for {artifact.arch}, but device {dev.id} is {dev.gcn_arch_name}"
            )
        md = artifact.metadata or {}
        self.params = explicit_params(artifact)
        self.kernarg_size = max(artifact.kernarg_size, abi.kernarg_size(self.params))
        self.packer = get_packer(self.params, self.kernarg_size)
        max_flat = int(_md(md, ".max_flat_workgroup_size", 0) or 0) or artifact.max_block_size
        self.limits = LaunchLimits(
            max_block_size=min(max_flat, dev.max_threads_per_block),
            max_block_dim=dev.max_block_dim,
            max_grid_dim=dev.max_grid_dim,
            max_shared=dev.max_shared_per_block,
            static_shared=int(_md(md, ".group_segment_fixed_size", 0) or artifact.static_shared_bytes),
        )
        # cg.this_grid().sync(): launched with hipModuleLaunchCooperativeKernel, grid bounded by occupancy
        self.cooperative = bool(getattr(artifact, "cooperative", False))
        self._compute_units = int(getattr(dev, "compute_units", 0) or 0)
        self._coop_limits: dict = {}
        self._checked: dict = {}
        self._tls = threading.local()
        self._bind()

    #: the loaded module our function comes from; None for a stand-in made without one
    #: (benchmarks), which launches its fixed ``function``
    _module = None

    def _bind(self) -> None:
        """Load (again, after an eviction) our module and take our function from it, and
        for debug builds the failure record (a device global) read after each launch."""
        rec = module_cache.acquire(self.artifact.binary, self.device_id)
        self.function = module_cache.function_of(rec, self.name)
        self._error_record = None
        if self.artifact.error_symbol:
            ptr, size = ctypes.c_void_p(), ctypes.c_size_t()
            _hip().hipModuleGetGlobal(ctypes.byref(ptr), ctypes.byref(size), rec.handle,
                                      self.artifact.error_symbol.encode())
            self._error_record = (ptr.value, size.value)
        rec.kernels.add(self)
        self._module = rec
        self.binding += 1  # fast paths made with the old function are dropped (``launch.fast_path``)

    binding = 0

    def _queued_on(self, stream, handle: int) -> None:
        """Before a launch on ``stream``: reload if evicted, mark the module recently used
        and the stream as one an eviction must let drain."""
        rec = self._module
        if rec is None:
            return
        if self.function is None or rec.handle is None:
            self._bind()
            rec = self._module
        else:
            module_cache.touch(rec)
        rec.used_on(stream, handle)

    def checked(self, grid, block, dynamic_shared: int) -> tuple:
        """``(grid3, block3)`` of a configuration this kernel can run on its device, else
        ``LaunchError`` (``check_launch``: the one check of a hip launch)."""
        # configurations repeat from launch to launch: validate each one once
        try:
            gb = self._checked.get((grid, block, dynamic_shared))
        except TypeError:  # unhashable (lists): validate every time
            gb = None
        if gb is None:
            gb = check_launch(grid, block, dynamic_shared, self.limits)
            try:
                if len(self._checked) < 4096:
                    self._checked[(grid, block, dynamic_shared)] = gb
            except TypeError:
                pass
        return gb

    def launch(self, grid, block, dynamic_shared: int, argbuf, stream=0) -> None:
        """Queue the kernel on ``stream`` with ``argbuf`` (the packed explicit arguments)."""
        g, b = self.checked(grid, block, dynamic_shared)
        self.run(g, b, dynamic_shared, argbuf, stream)

    def run(self, g, b, dynamic_shared: int, argbuf, stream=0) -> None:
        """``launch`` of a configuration ``checked`` returned (3-tuples ``g``, ``b``)."""
        n = len(argbuf)
        if n < self.kernarg_size:
            raise LaunchError(f"kernel {self.name}: argument buffer is {n} bytes, the kernel needs {self.kernarg_size}")
        if n == self.kernarg_size:
            # HIP copies the arguments during the call, so one buffer per thread
            # can be reused: saves ~3 us of ctypes object building per launch
            st = getattr(self._tls, "bufs", None)
            if st is None:
                st = self._tls.bufs = _LaunchBuffers(n)
            st.view[:n] = argbuf
        else:
            st = _LaunchBuffers(n, argbuf)  # a local: alive until the call returns
        extra = st.extra
        s = stream if isinstance(stream, int) else int(getattr(stream, "handle", 0) or 0)
        self._queued_on(stream, s)
        if self.cooperative:
            self._launch_cooperative(g, b, dynamic_shared, st, s)
            return
        _hip().hipModuleLaunchKernel(self.function, g[0], g[1], g[2], b[0], b[1], b[2], dynamic_shared, s, None, extra)
        if self._error_record is not None:
            self._check_error_record(s)

    def fixed_launch(self, grid, block, dynamic_shared: int, stream):
        """``(body, namespace)`` for ``kernargs.compile_guarded``: ``launch``
        with this configuration, already validated by a ``launch`` that
        succeeded, ``{vals}`` packed straight into this thread's buffer. The
        driver's arguments are ctypes objects made once (converting ten Python
        ints per call costs more than the rest of the launch). None for what
        ``launch`` must do itself (cooperative, debug error record, stream
        objects)."""
        gb = self._checked.get((grid, block, dynamic_shared))
        if gb is None or self.cooperative or self._error_record is not None or type(stream) is not int:
            return None
        self._queued_on(stream, stream)
        (g0, g1, g2), (b0, b1, b2) = gb
        _, at = hip_api.ctypes_signature("hipModuleLaunchKernel")
        head = tuple(t(v) for t, v in zip(at, (self.function, g0, g1, g2, b0, b1, b2, dynamic_shared, stream)))
        n, tls = self.kernarg_size, self._tls
        this = sys.modules[__name__]  # ``_hip`` looked up per call: a benchmark swaps the library

        def buffers():
            st = getattr(tls, "bufs", None)
            if st is None:
                st = tls.bufs = _LaunchBuffers(n)
            return st

        from pykern.runtime.hip import library as hipmod

        # the launch function resolved once (``_hip()`` is two Python calls), while both lookups
        # behind it still give what they gave now (a test or benchmark may swap either)
        h, lib_now = this._hip, hipmod._library
        lib = h()
        native, count_down = self._native_launch(lib, gb, dynamic_shared, stream)
        call = ("        _rc = _NL(st.extra)\n"
                "        if _rc is not None:\n"
                "            raise _lib.error(_rc, 'hipModuleLaunchKernel')\n") if native else \
            "        _L(*_head, None, st.extra)\n"
        body = ("    if _K.function is not _FN:  # our module was evicted: the full launch reloads it\n"
                "        return False\n"
                "    _touch(_REC)  # the most recently used module stays loaded, as after a full launch\n"
                "    try:\n"
                "        st = _tls.bufs\n"
                "    except AttributeError:  # this thread's first launch\n"
                "        st = _buffers()\n"
                "    try:\n"
                "        _pack_into(st.buf, 0, {vals})\n"
                "    except _PACK_ERRORS:\n"
                "        return False\n"
                "    if _this._hip is _H and _hipmod._library is _LIB:  # the library the launch was made with\n"
                + call +
                "    else:\n"
                "        _this._hip().hipModuleLaunchKernel(*_head, None, st.extra)\n"
                "    return True\n")
        return body, {"_buffers": buffers, "_head": head, "_this": this, "_tls": tls, "_H": h, "_hipmod": hipmod,
                      "_LIB": lib_now, "_L": lib.hipModuleLaunchKernel, "_NL": native, "_lib": lib,
                      "_count_down": count_down, "_K": self, "_FN": self.function,
                      "_touch": module_cache.touch if self._module is not None else _no_module, "_REC": self._module}

    def _native_launch(self, lib, gb, dynamic_shared: int, stream: int):
        """``(launch, count_down)``: ``native_guard.make_hip_launch`` for a real
        HipLibrary's ``hipModuleLaunchKernel`` (its checked binding raises
        ``lib.error`` as the body does), or None (anything else: a test's
        stand-in), and whether one could be made once native code is built."""
        from pykern.runtime.hip import library as hipmod
        from pykern.runtime import native_guard

        raw = getattr(getattr(lib, "raw", None), "hipModuleLaunchKernel", None)
        if not isinstance(lib, hipmod.HipLibrary) or raw is None or not (0 <= stream < 1 << 63):
            return None, False
        fn = native_guard.make_hip_launch(raw, self.function, gb[0], gb[1], dynamic_shared, stream)
        return fn, fn is None and native_guard.pending()

    def max_cooperative_blocks(self, block, dynamic_shared: int = 0) -> int:
        """Blocks a cooperative launch of this kernel may have on its device:
        blocks resident per CU (from the code object's registers and LDS, and
        the runtime's occupancy query when it has one) x the device's CUs."""
        b = _dim3(block, "blockdim")
        if self.function is None and self._module is not None:  # evicted: the query needs the function
            self._bind()
        key = (b, dynamic_shared)
        hit = self._coop_limits.get(key)
        if hit is None:
            threads = b[0] * b[1] * b[2]
            est = self.occupancy_estimate
            hit = est(threads, dynamic_shared) * self._compute_units if est is not None else None
            lib = _hip()
            occ = getattr(lib, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", None)
            if occ is not None:
                n = ctypes.c_int()
                try:
                    occ(ctypes.byref(n), self.function, threads, dynamic_shared)
                    q = n.value * self._compute_units
                    hit = q if hit is None else min(hit, q)
                except Exception:  # an older runtime refusing the query: the code object's numbers stand
                    pass
            hit = hit or 0
            if len(self._coop_limits) < 4096:
                self._coop_limits[key] = hit
        return hit

    def _launch_cooperative(self, g, b, dynamic_shared, st, stream):
        limit = self.max_cooperative_blocks(b, dynamic_shared)
        n = g[0] * g[1] * g[2]
        if n > limit:
            raise LaunchValueError(
                f"kernel {self.name}: grid {g} has {n} blocks, but a kernel that calls cg.this_grid().sync() "
                f"needs a cooperative launch, and at most {limit} blocks of {b[0] * b[1] * b[2]} threads fit on "
                f"the device at once ({self._compute_units} CUs; see max_cooperative_grid_blocks)")
        lib = _hip()
        fn = getattr(lib, "hipModuleLaunchCooperativeKernel", None)
        if fn is None:
            raise LaunchError(f"kernel {self.name} syncs its grid (cg.this_grid().sync()), which needs "
                              "hipModuleLaunchCooperativeKernel (ROCm 6.x); this HIP runtime does not have it")
        params = kernel_params(ctypes.addressof(st.buf), self.params)
        fn(self.function, g[0], g[1], g[2], b[0], b[1], b[2], dynamic_shared, stream, params)
        if self._error_record is not None:
            self._check_error_record(stream)

    def _check_error_record(self, stream: int) -> None:
        """debug=True: wait for the kernel, read its failure record, raise the
        first failing thread's error -- a bounds or division error, or the kernel's own
        raise/assert -- and clear the record."""
        ptr, size = self._error_record
        hip = _hip()
        hip.hipStreamSynchronize(stream)
        raw = ctypes.create_string_buffer(size)
        hip.hipMemcpy(raw, ptr, size, 2)  # hipMemcpyDeviceToHost
        exc = abi.error_record_exception(raw.raw, self.artifact.error_messages, self.artifact.exceptions)
        if exc is not None:
            hip.hipMemset(ptr, 0, size)
            raise exc


def kernel_params(base: int, params) -> ctypes.Array:
    """``kernelParams`` for a launch API without ``extra`` (the cooperative
    one): one pointer per explicit kernel argument, into the packed buffer at
    ``base`` at the argument's code-object offset.

    >>> list(kernel_params(0x1000, [abi.FlatParam("a", None, 0, 8, "data", 0), abi.FlatParam("n", None, 8, 4, "scalar", 1)]))
    [4096, 4104]
    """
    return (ctypes.c_void_p * max(1, len(params)))(*[base + p.offset for p in params])


class _LaunchBuffers:
    """The ``extra`` array for hipModuleLaunchKernel and the memory it points at."""

    __slots__ = ("buf", "size", "extra", "view")

    def __init__(self, n: int, data=None):
        self.buf = ctypes.create_string_buffer(max(n, 1))
        self.size = ctypes.c_size_t(n)
        self.view = memoryview(self.buf).cast("B")
        if data is not None:
            self.view[:n] = data
        self.extra = (ctypes.c_void_p * 5)(
            hip_api.HIP_LAUNCH_PARAM_BUFFER_POINTER,
            ctypes.addressof(self.buf),
            hip_api.HIP_LAUNCH_PARAM_BUFFER_SIZE,
            ctypes.addressof(self.size),
            hip_api.HIP_LAUNCH_PARAM_END,
        )


#: loaded kernels while something (an Overload, a launch in flight) references them, as on cpu
_kernels: "weakref.WeakValueDictionary[tuple, HipKernel]" = weakref.WeakValueDictionary()


def load(artifact, device: int | None = None) -> HipKernel:
    """The HipKernel for ``artifact`` on ``device`` (default: current), loaded once."""
    from pykern.runtime.device_registry import current_device_id

    dev = current_device_id() if device is None else device
    key = (id(artifact), dev)
    k = _kernels.get(key)
    if k is None or k.artifact is not artifact:
        k = _kernels[key] = HipKernel(artifact, dev)
    return k


# --------------------------------------------------------------------------- the launch
def launcher(kernel: HipKernel, nargs: int, kernel_name: str | None = None):
    """``launch(values, grid, block, stream, shared)``: a launch of ``kernel`` with ``nargs``
    values, in its steps -- the configuration checked (``HipKernel.checked``, the one check),
    arguments that are not GPU memory yet copied in (``prepare_args``), the values flattened and
    packed at the code object's offsets (``kernargs``), the kernel queued (``HipKernel.run``),
    copies back. Its LaunchErrors start with ``kernel_name``. What an overload launches with on
    "hip" (``backends.HipBackend.plan``)."""
    from pykern.runtime.memory.arrays import DeviceArray

    params = kernel.params
    check, flatten, pack, run = kernel.checked, get_flattener(params, nargs), kernel.packer.fast, kernel.run
    arrays = array_arguments(params)
    nested = any(len(p.path) > 1 for p in params)  # tuples may hold host arrays

    def launch(values, grid, block, stream, shared):
        writebacks = None
        try:
            g, b = check(grid, block, shared)
            # the common case, every array already in GPU memory: nothing to convert or copy back
            if nested or not all(type(values[i]) is DeviceArray and values[i].target == "hip" for i in arrays):
                values, writebacks = prepare_args(params, values, stream)
            run(g, b, shared, pack(flatten(values)), stream)
        except LaunchError as e:
            if kernel_name and not str(e).startswith(kernel_name):
                raise type(e)(f"{kernel_name}: {e}") from None
            raise
        if writebacks:
            finish(writebacks, stream)

    return launch


def launch(kernel: HipKernel, artifact, values, grid, block, dynamic_shared: int = 0, stream=0,
           kernel_name: str | None = None) -> None:
    """Convert, flatten, pack and launch (``launcher``'s launch, once).

    ``artifact`` must be the one ``kernel`` was loaded from (kept in the
    signature for symmetry with the cpu backend); ``kernel_name`` prefixes errors.
    """
    if artifact is not None and artifact is not kernel.artifact:
        raise LaunchError(f"{kernel_name or kernel.name}: kernel and artifact do not belong together")
    launcher(kernel, len(values), kernel_name)(values, grid, block, stream, dynamic_shared)


def prepare_args(params, values, stream=0):
    """Make every array argument (``params``' data parameters) a "hip" DeviceArray.

    Host numpy arrays (and cpu-target DeviceArrays) are copied in, with a
    PerformanceWarning; returns ``(values, writebacks)`` where writebacks are
    ``(device_array, host_array)`` pairs to copy back after the launch.
    """
    from pykern.runtime.memory import arrays as memory

    writebacks: list = []
    warned = [False]

    def conv(v, readonly):
        if isinstance(v, memory.DeviceArray):
            if v.target == "hip":
                return v
            host = v._host_view()
        elif hasattr(v, "__cuda_array_interface__"):
            return memory.from_cuda_array_interface(v, target="hip")
        else:
            import numpy as np

            if not isinstance(v, np.ndarray) and hasattr(v, "__dlpack__"):
                d = memory.as_device_array(v)
                if d.target == "hip":
                    return d
                host = d._host_view()
            else:
                host = v if isinstance(v, np.ndarray) else np.asarray(v)
        if not warned[0]:
            warnings.warn(
                "host array passed to a HIP kernel: it is copied to the GPU and back on every launch;"
                " use pykern.to_device() to keep data on the device",
                PerformanceWarning,
                stacklevel=4,
            )
            warned[0] = True
        d = memory.to_device(host, stream=stream, target="hip")
        writable = getattr(getattr(host, "flags", None), "writeable", True)
        if writable and not readonly:
            writebacks.append((d, host))
        return d

    def put(v, path, new):  # ``v`` with the element at ``path`` replaced (tuples rebuilt)
        if not path:
            return new
        return v[:path[0]] + (put(v[path[0]], path[1:], new),) + v[path[0] + 1:]

    out = tuple(values)
    for p in params:
        if p.role == "data":
            v = out
            for j in p.path:
                v = v[j]
            out = put(out, p.path, conv(v, p.readonly))
    return out, writebacks


def finish(writebacks, stream=0) -> None:
    """Copy arrays that were copied in back to their host arrays."""
    for d, host in writebacks:
        d.copy_to_host(host, stream=stream)
