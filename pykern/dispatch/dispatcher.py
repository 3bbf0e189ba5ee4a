"""``@pykern.jit``: the object a decorated kernel or device function becomes.

A :class:`Dispatcher` holds the Python function, its compile options and one
compiled overload per (target, argument types). Launching ``k[grid, block](*args)``
types the arguments, finds or compiles the overload (memory, then the on-disk
cache, then the compiler) and hands it to the target's launcher.

Example::

    import numpy as np, pykern as cuda

    @cuda.jit
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    a = np.zeros(100, np.float32)
    add_one[1, 128](a)
"""

from __future__ import annotations

import collections
import functools
import os
import threading

from pykern.dispatch.argument_types import argument_types, launch_types
from pykern.core.errors import CompileError, LaunchError, LaunchRuntimeError, LaunchValueError
from pykern.dispatch.launch_config import _plain as _plain_config, normalize_config
from pykern.runtime import _chosen, current_target
from pykern.runtime.backends import BACKENDS
from pykern.runtime.cpu import sanitizer as _cpu_sanitizer
from pykern.core.display import Listing, Resources, show
from pykern.core.tracebacks import cut_frames, trimmed

_NO_CONFIG = object()  # what no launch configuration is (see ``Dispatcher._last_launcher``)

# Bumped whenever a device function is (re)defined, e.g. its notebook cell re-run: kernels
# compiled before check at their next launch whether what they call changed.
_device_generation = [0]
_CompileStats = collections.namedtuple("_CompileStats", ("cache_path", "cache_hits", "cache_misses"))


class Dispatcher:
    """A ``@jit`` function. Kernels launch with ``k[griddim, blockdim](...)``;
    device functions (``device=True``) are only callable from kernels."""

    @trimmed
    def __init__(self, py_func, signatures=None, device=False, **options):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise TypeError(f"@pykern.jit needs a Python function, got {py_func!r}")
        self.py_func = py_func
        self.__pykern_device__ = bool(device)
        #: numba's argument-preparation hooks: objects with
        #: ``prepare_args(ty, val, stream=, retr=) -> (ty, val)``, applied last-first
        self.extensions = list(options.pop("extensions", None) or [])
        self._specialized = False
        self._specializations = {}  # (target, argtypes) -> specialised Dispatcher
        self.options = _check_options(options)
        self._overloads = {}  # (target, argtypes) -> Overload
        self._aliases = {}  # (target, launch argument types) -> the eager overload they converted to
        self._launchers = {}  # (griddim, blockdim) ints -> _Launch
        #: (config, launcher) of the last plain ``k[...]``: the same tuple object again (``k[1, 1]``
        #: in a loop: a constant of the caller's code) needs no type checks and no hashing
        self._last_launcher = (_NO_CONFIG, None)
        self._epoch = object()  # replaced whenever overloads are dropped: fast paths made before refuse
        from pykern.dispatch.compiler import fork_safe_rlock

        self._lock = fork_safe_rlock()  # a forked child finds it free
        self._signatures = []  # eager (return, argtypes)
        if device:
            _device_generation[0] += 1
        self._generation = _device_generation[0]
        self._fingerprint = None  # of py_func and its callees when last compiled
        code = py_func.__code__
        nmax = code.co_argcount
        self._arity = (nmax - len(py_func.__defaults__ or ()), nmax)
        functools.update_wrapper(self, py_func)
        if signatures is not None:
            from pykern.frontend import parse_signature
            from pykern.frontend import types as T
            from pykern.frontend.signature import declares_return

            sigs = signatures if isinstance(signatures, (list, tuple)) and not _is_type_tuple(signatures) else [signatures]
            for sig in sigs:
                rt, argtypes = parse_signature(sig)
                if device and not declares_return(sig):
                    rt = None  # numba infers a device function's return type when the signature omits it
                self._signatures.append((rt, argtypes))
                if not device and rt != T.void:
                    raise TypeError(f"CUDA kernel must have void return type (kernel {py_func.__name__}, "
                                    f"signature {sig}); only device functions return values")
            if not device:
                for _, argtypes in self._signatures:
                    self._get_overload(tuple(argtypes))

    # ------------------------------------------------------------------ launching
    def __getitem__(self, config):
        last = self._last_launcher
        if last[0] is config:  # that very tuple, checked below when it was first seen (kept alive by last)
            return last[1]
        # ``k[g, b]`` of ints (the usual spelling first) is the same launcher every time, with its fast
        # path; only exact ints: 4.0 == 4 as a dict key, but 4.0 must be refused
        plain = type(config) is tuple and (len(config) == 2 and type(config[0]) is int and type(config[1]) is int
                                           or _plain_config(config))
        if plain:
            hit = self._launchers.get(config)
            if hit is not None:
                self._last_launcher = (config, hit)
                return hit
        if self.__pykern_device__:
            raise LaunchRuntimeError(f"Cannot compile a device function as a kernel: {self.__name__} is a device "
                                     "function (device=True); launch a kernel instead")
        griddim, blockdim, stream, shared = normalize_config(config)
        launcher = _Launch(self, griddim, blockdim, stream, shared)
        if plain:
            if len(self._launchers) >= 64:
                self._launchers.clear()
            self._launchers[config] = launcher
            self._last_launcher = (config, launcher)
        return launcher

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        """numba's ``k.configure(griddim, blockdim, stream=0, sharedmem=0)``: ``k[griddim, blockdim,
        stream, sharedmem]``."""
        return self[griddim, blockdim, stream, sharedmem]

    def __call__(self, *args, **kwargs):
        if self.__pykern_device__:
            raise LaunchError(
                f"device function {self.__name__}() can only be called from a kernel or another device function"
            )
        raise LaunchValueError(  # numba's ValueError, with its words
            f"kernel {self.__name__}: launch configuration was not specified; "
            f"launch it as {self.__name__}[griddim, blockdim](...)"
        )

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """A launcher covering ``ntasks`` threads in 1-D: ``k.forall(n)(*args)``.

        ``tpb`` threads per block (default: the target's preferred block size)."""
        ntasks = int(ntasks)
        if ntasks < 0:
            raise LaunchValueError(f"Can't create ForAll with negative task count: {ntasks}")
        tpb = int(tpb) or 256
        blocks = max(1, (ntasks + tpb - 1) // tpb)
        if ntasks == 0:
            return _NoLaunch()
        return self[blocks, tpb, stream, sharedmem]

    def launch(self, args, griddim, blockdim, stream=0, sharedmem=0, _prepared=False, _launcher=None):
        """Launch with explicit configuration (what ``k[g, b, s, m](*args)`` calls), in its steps:

        0. where it runs: the run target, its backend (``runtime.backends``; none on the sim
           target) and the build whose overloads run there (``_build_for``: on the cpu target, the
           build with access hooks when ``pykern.debug.watch`` watches an argument);
        1. the arguments, as the kernel takes them (defaults, pointers, numba's preparation
           hooks), typed in one pass by ``argument_types.launch_types`` -- foreign arrays wrapped,
           and the guards a fast path checks when ``_launcher`` asks for one; ``cuda.In``/``Out``
           hints are looked for only when typing fails;
        2. the overload of those types, or a new one (``compiler.build_overload``: compiled or
           from the cache, then loaded by the target's backend) -- on the sim target instead, the
           kernel's IR run as Python (``pykern.sim.launcher``);
        3. packed and run by the target's backend (the configuration checked, the arguments
           flattened and packed at the kernel's offsets, the kernel run);
        4. ``_launcher``'s fast path: steps 1-3 generated for arguments like these."""
        given = args
        if len(args) != self._arity[1] or self._signatures and not _prepared:
            args = self._bound_arguments(args, _prepared)
        if self.extensions and not _prepared:
            return self._launch_with_extensions(args, griddim, blockdim, stream, sharedmem)
        # 0. where it runs
        target = _chosen[0] if _chosen else current_target()
        backend = BACKENDS.get(target)  # None: the sim target, which compiles nothing
        build = self if target != "cpu" or _cpu_sanitizer.watcher is None else self._build_for(args)
        if self._generation != _device_generation[0]:
            self._revalidate()
        # the next launch like this one skips all that follows
        fast = _launcher is not None and args is given and type(stream) is int and backend is not None \
            and build is self
        # 1. type the arguments
        try:
            argtypes, args, guards = launch_types(args, self.__name__, target, backend if fast else None)
        except LaunchError as e:
            return self._launch_with_hints(e, args, griddim, blockdim, stream, sharedmem)
        if backend is None:  # 2-3 on the sim target: no overload, no fast path
            from pykern.sim.launcher import launch as run_as_python

            return run_as_python(self, args, self._match_eager(argtypes) if self._signatures else argtypes,
                                 griddim, blockdim, sharedmem)
        # 2. choose or build the overload
        ov = build._overloads.get((target, argtypes)) or build._aliases.get((target, argtypes)) \
            or build._new_overload(target, argtypes)
        # 3. pack and run: the overload's launch, planned by the target's backend at the first
        (ov.launch_plan or backend.planned(ov))(args, griddim, blockdim, stream, sharedmem)
        # 4. the fast path (None: these arguments cannot be checked cheaply)
        if fast and args is given:
            _launcher._fast = None if guards is None else self._fast_path(backend, ov, guards, target, griddim,
                                                                          blockdim, stream, sharedmem)

    #: what a fast path checks of the dispatcher before anything else: what ``launch`` decides per
    #: call -- no extensions, the same target, no device function redefined ({gen}: the generation
    #: this dispatcher was checked at when the fast path was made), no overload dropped -- and that
    #: no one replaced ``launch`` on this dispatcher (a spy sees every launch). ``_dd`` is its
    #: ``__dict__`` (a subscript there measured ~10 ns quicker than the attribute)
    _FAST_PROLOGUE = ("    if _dd['extensions'] or _dd['_epoch'] is not _E or _gen[0] != {gen} or _chosen != _TG "
                      "or 'launch' in _dd: return False")

    def _fast_path(self, backend, ov, guards, target, griddim, blockdim, stream, sharedmem):
        """``backend``'s generated launch of ``ov`` for arguments matching ``guards``, behind the
        checks of ``_FAST_PROLOGUE``; or None."""
        ns = {"_d": self, "_dd": self.__dict__, "_E": self._epoch, "_gen": _device_generation, "_chosen": _chosen,
              "_TG": [target]}
        prologue = self._FAST_PROLOGUE.format(gen=int(self._generation))
        return backend.fast_path(ov, guards, griddim, blockdim, stream, sharedmem, prologue, ns)

    def _bound_arguments(self, args, prepared: bool):
        """``args`` as the kernel takes them: omitted defaults appended (values, passed as numba
        does) and, for eager ``CPointer`` parameters, addresses made views; ``args`` itself when
        nothing changes. A wrong count is a LaunchError."""
        lo, hi = self._arity
        if len(args) != hi:
            if not lo <= len(args) <= hi:
                if self.py_func.__code__.co_flags & _CO_VARARGS:
                    raise _star_args_error(self.py_func)
                want = str(hi) if lo == hi else f"{lo} to {hi}"
                raise LaunchError(f"kernel {self.__name__} takes {want} argument(s) but {len(args)} were given")
            args = tuple(args) + self.py_func.__defaults__[len(args) - lo:]
        if self._signatures and not prepared:
            ptrs = self.__dict__.get("_pointer_params")
            if ptrs is None:
                ptrs = self._pointer_params = _pointer_params(self._signatures)
            if ptrs:
                args = _pointer_args(args, ptrs)
        return args

    def _new_overload(self, target, argtypes):
        """Step 2 for types not seen on ``target`` yet: the overload (compiled, or converted to an
        eager signature, whose match is remembered)."""
        ov = self._get_overload(argtypes, target)
        if self._signatures:
            self._aliases[(target, argtypes)] = ov
        return ov

    def _build_for(self, args):
        """The build whose overloads run ``args`` on the cpu target while ``pykern.debug.watch``
        watches something: the one with the sanitizer's access hooks (``sanitize`` plus "watch")
        when a watch covers an argument's memory, else this one."""
        d = self.__dict__.get("_watch_build")
        if d is self or not _cpu_sanitizer.watcher.covers_any(args):
            return self
        if d is None:
            from pykern.core.sanitize import parse_modes

            opts = dict(self.options, sanitize=parse_modes(self.options.get("sanitize")) + ",watch")
            d = Dispatcher(self.py_func, None, self.__pykern_device__, extensions=self.extensions, **opts)
            d._signatures, d._arity = self._signatures, self._arity
            self._watch_build = d._watch_build = d
        if d._generation != _device_generation[0]:
            d._revalidate()
        return d

    def _launch_with_hints(self, error, args, griddim, blockdim, stream, sharedmem):
        """Arguments that did not type (``error``): ``cuda.In(x)``/``Out``/``InOut`` hints are not
        types, so they are looked for only now (no cost otherwise); launched converted, then
        written back."""
        from pykern.dispatch.arg_hints import convert

        hinted = convert(args, stream)
        if hinted is None:
            raise error
        self.launch(hinted[0], griddim, blockdim, stream, sharedmem, _prepared=True)
        for wb in hinted[1]:
            wb()

    def _launch_with_extensions(self, args, griddim, blockdim, stream, sharedmem):
        """numba's protocol: every argument goes through each extension's
        ``prepare_args(ty, val, stream=, retr=)`` (the last registered first);
        the callables an extension appends to ``retr`` run after the launch
        (write-backs). ``ty`` is pykern's type of the value, or None when
        pykern cannot type it (the extension must then convert it)."""
        from pykern.frontend.typeof import typeof

        retr, prepared = [], []
        for a in args:
            try:
                ty = typeof(a)
            except (TypeError, ValueError, AttributeError):
                ty = None
            for ext in reversed(self.extensions):
                ty, a = ext.prepare_args(ty, a, stream=stream, retr=retr)
            prepared.append(a)
        self.launch(tuple(prepared), griddim, blockdim, stream, sharedmem, _prepared=True)
        for wb in retr:
            wb()

    # ------------------------------------------------------------------ numba's Dispatcher API
    @property
    def specialized(self) -> bool:
        """True when this dispatcher compiles for one signature only (one eager
        signature, or made by :meth:`specialize`), as numba defines it."""
        return self._specialized or len(self._signatures) == 1

    def specialize(self, *args):
        """A dispatcher compiled for the types of ``args`` (numba's
        ``kernel.specialize(a, b)``); other argument types are refused. An argument may
        also be a type (``k.specialize(float32[::1])``), as in numba-cuda.

        Example: ``k1 = k.specialize(x, y); k1[4, 64](x, y)``"""
        from pykern.frontend import types as T

        if self.specialized:
            raise RuntimeError("Dispatcher already specialized")
        target = current_target()
        values = [a for a in args if not isinstance(a, T.Type)]
        typed = iter(argument_types(values, self.__name__, target)[0])
        argtypes = tuple(a if isinstance(a, T.Type) else next(typed) for a in args)
        key = (target, argtypes)
        d = self._specializations.get(key)
        if d is None:
            d = Dispatcher(self.py_func, [argtypes], self.__pykern_device__,
                           extensions=self.extensions, **self.options)
            d._specialized = True
            self._specializations[key] = d
        return d

    @property
    def specializations(self) -> dict:
        """The dispatchers :meth:`specialize` made, by (target, argument types)."""
        return self._specializations

    @property
    def definitions(self):
        """numba's older name for :attr:`overloads`."""
        return self.overloads

    def _per_overload(self, signature, fn):
        if signature is not None:
            from pykern.frontend import parse_signature

            argtypes = tuple(parse_signature(signature)[1]) if not _is_type_tuple(signature) else tuple(signature)
            return fn(self._get_overload(argtypes))
        if self.specialized:
            if not self.overloads and self._signatures:
                self._get_overload(tuple(self._signatures[0][1]))
            return fn(next(iter(self.overloads.values())))
        return {sig: fn(ov) for sig, ov in self.overloads.items()}

    def _amdgpu_facts(self, ov):
        """The amdhsa metadata of ``ov``: its own code object on "hip"; on the
        cpu target, that of the same kernel compiled for the active arch
        (``$PYKERN_ARCH``, default gfx942), so ported tuning code sees GPU numbers."""
        if ov.target == "hip":
            return ov.artifact.metadata or {}
        return self._amdgpu(ov.argtypes, None).metadata or {}

    def get_regs_per_thread(self, signature=None):
        """VGPRs per thread (AMD's registers); a dict over overloads without a
        signature unless specialised, as numba's."""
        return self._per_overload(signature, lambda ov: int(self._amdgpu_facts(ov).get(".vgpr_count", 0)))

    def get_shared_mem_per_block(self, signature=None):
        """Static shared memory (LDS) bytes per block."""
        return self._per_overload(signature, lambda ov: int(ov.artifact.static_shared_bytes))

    def get_local_mem_per_thread(self, signature=None):
        """Private (scratch) bytes per thread of the amdgpu code object."""
        return self._per_overload(
            signature, lambda ov: int(self._amdgpu_facts(ov).get(".private_segment_fixed_size", 0)))

    def get_max_threads_per_block(self, signature=None):
        """The largest block this kernel launches with (its launch bound, the
        target's 1024 otherwise)."""
        return self._per_overload(signature, lambda ov: int(ov.artifact.max_block_size))

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0, signature=None):
        """The most blocks a cooperative launch of this kernel may have (see
        ``Overload.max_cooperative_grid_blocks``); per overload as the get_*() queries."""
        return self._per_overload(signature, lambda ov: ov.max_cooperative_grid_blocks(blockdim, dynsmemsize))

    def get_const_mem_size(self, signature=None):
        """Bytes of constant data the kernel holds -- ``const.array_like`` arrays, global numpy
        arrays it reads, ``print`` formats -- as numba.cuda counts its constant memory (on the
        cpu target the same data, in the shared library's read-only section)."""
        from pykern.codegen.llvm_util import constant_bytes

        return self._per_overload(signature, lambda ov: constant_bytes(ov.artifact.llvm_ir))

    # ------------------------------------------------------------------ compiling
    def _match_eager(self, argtypes):
        """With eager signatures, the one the argument types convert to: an exact
        match, else the safest conversion (numba's rules, ``frontend.overloads``)."""
        from pykern.frontend import signature_choice as overloads

        try:
            return tuple(overloads.choose(self._signatures, argtypes, self.__name__)[1])
        except TypeError as e:
            raise LaunchError(str(e)) from None

    def _revalidate(self):
        """A device function was redefined: drop overloads whose callees changed."""
        self._generation = _device_generation[0]
        fp = _fingerprint_or_none(self)
        with self._lock:
            if fp is not None and self._fingerprint is not None and fp != self._fingerprint:
                self._overloads.clear()
                self._aliases.clear()
                self._epoch = object()
            self._fingerprint = fp

    def _get_overload(self, argtypes, target=None):
        from pykern import runtime as targets

        target = target or targets.current_target()
        if target == "sim":  # compiles nothing: what is asked of a compiled kernel is the cpu build's answer
            target = "cpu"
        if self._signatures:
            argtypes = self._match_eager(argtypes)
        key = (target, argtypes)
        with self._lock:
            ov = self._overloads.get(key)
            if ov is None:
                from pykern.dispatch.compiler import build_overload

                ov = build_overload(self, target, argtypes)
                self._overloads[key] = ov
                if self._fingerprint is None:
                    self._fingerprint = _fingerprint_or_none(self)
        return ov

    @trimmed
    def compile(self, sig):
        """Compile for signature ``sig`` on the current target; returns the overload."""
        from pykern.frontend import parse_signature

        _, argtypes = parse_signature(sig)
        return self._get_overload(tuple(argtypes))

    def recompile(self):
        """numba's ``recompile()``: compile every overload again, with the current values of the
        globals it reads (frozen at compile time, as numba does). A changed global is a new cache
        key, so this never reloads the entry of the old value."""
        with self._lock:
            keys = list(self._overloads)
            self._overloads.clear()
            self._aliases.clear()
            self._epoch = object()
            self._fingerprint = None
        for target, argtypes in keys:
            self._get_overload(argtypes, target)

    @property
    def stats(self):
        """numba's ``stats``: ``cache_path`` and per-signature ``cache_hits``/``cache_misses``
        (Counters) of this dispatcher's overloads on the current target."""
        import collections

        from pykern.runtime.cache import default_cache

        hits, misses = collections.Counter(), collections.Counter()
        for argtypes, ov in self.overloads.items():
            (hits if ov.from_cache else misses)[argtypes] += 1
        cache = default_cache()
        return _CompileStats(cache.directory if cache.enabled and self.options.get("cache", True) else None,
                             hits, misses)

    @property
    def overloads(self):
        """Compiled overloads of the current target, by argument-type tuple."""
        from pykern import runtime as targets

        t = targets.current_target()
        return {k[1]: v for k, v in self._overloads.items() if k[0] == t}

    @property
    def signatures(self):
        return [argtypes for (_, argtypes) in self._overloads]

    # ----------------------------------------------------------------- inspection
    def _no_device_listing(self, what):
        if self.__pykern_device__:
            raise CompileError(f"{what} of device function {self.__name__}: pykern compiles device functions "
                               "into the kernels that call them", hint="inspect a kernel that calls it")

    def _overloads_for(self, sig):
        self._no_device_listing("inspect_llvm")
        if sig is None:
            return self.overloads
        from pykern.frontend import parse_signature

        _, argtypes = parse_signature(sig) if not isinstance(sig, tuple) else (None, sig)
        return {tuple(argtypes): self._get_overload(tuple(argtypes))}

    @trimmed
    def inspect_llvm(self, sig=None):
        """Optimised LLVM IR: a str for ``sig``, else a dict of every compiled overload."""
        found = self._overloads_for(sig)
        texts = {k: Listing(v.artifact.llvm_ir, "llvm", f"{self.__name__} {_sig_text(k)}") for k, v in found.items()}
        return next(iter(texts.values())) if sig is not None else texts

    @trimmed
    def inspect_types(self, file=None):
        """Print the typed IR of every compiled overload (like numba's annotated listing)."""
        parts = [f"{self.__name__} {_sig_text(argtypes)}\n{'-' * 70}\n{ov.typed_ir()}\n{'=' * 70}\n"
                 for argtypes, ov in self.overloads.items()]
        show(Listing("".join(parts).rstrip("\n"), "python"), file)  # rich in a notebook, printed elsewhere

    def _amdgpu(self, sig, arch):
        from pykern.dispatch.compiler import compile_amdgpu

        self._no_device_listing("inspect_asm/resources")
        argtypes = self._sig_argtypes(sig)
        return compile_amdgpu(self, argtypes, arch or _active_arch())

    def _sig_argtypes(self, sig):
        if sig is None:
            if self._signatures:
                return tuple(self._signatures[0][1])
            if self._overloads:
                return next(iter(self._overloads))[1]
            raise CompileError(f"{self.__name__}: no signature given and nothing compiled yet")
        from pykern.frontend import parse_signature

        return tuple(parse_signature(sig)[1])

    @trimmed
    def inspect_asm(self, sig=None, arch=None):
        """AMDGPU assembly for ``sig`` on ``arch`` (default: the active GPU's, else
        ``$PYKERN_ARCH`` or gfx942). With ``sig=None``: a dict over compiled overloads."""
        if sig is None and (self._signatures or self._overloads):  # numba: a dict by argument types
            keys = [tuple(s[1]) for s in self._signatures] or list(dict.fromkeys(k[1] for k in self._overloads))
            return {k: Listing(self._amdgpu(k, arch).asm, "asm") for k in keys}
        return Listing(self._amdgpu(sig, arch).asm, "asm")

    @trimmed
    def resources(self, sig=None, arch=None, block_size=None):
        """VGPRs, SGPRs, AGPRs, LDS bytes, scratch bytes, spills, waves per SIMD."""
        ck = self._amdgpu(sig, arch)
        if block_size is None:
            return Resources(ck.resources)
        from pykern.codegen.amdgpu import archs

        return Resources(archs.resources(ck.metadata, ck.arch, block_size))

    def __reduce__(self):
        """Pickled by value (source, frozen globals, options, eager signatures), never
        its compiled code: see ``pykern/dispatch/serialize.py``."""
        from pykern.dispatch import serialize

        return (_unpickle, serialize.dispatcher_state(self))

    def __repr__(self):
        kind = "device function" if self.__pykern_device__ else "kernel"
        code = self.py_func.__code__
        where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
        compiled = [f"{t}{_sig_text(a)}" for t, a in list(self._overloads)]
        more = f", {len(compiled) - 2} more" if len(compiled) > 2 else ""
        done = f" compiled {', '.join(compiled[:2])}{more}" if compiled else " (not compiled yet)"
        return f"<pykern {kind} {self.__name__} at {where};{done}>"


def _fingerprint_or_none(dispatcher):
    from pykern.frontend.fingerprint import fingerprint

    try:
        return fingerprint(dispatcher.py_func)
    except Exception:  # no source: nothing to compare, keep what was compiled
        return None


def _sig_text(argtypes):
    return "(" + ", ".join(map(str, argtypes)) + ")"


def _active_arch():
    from pykern import runtime as targets
    from pykern.core import settings

    if targets.current_target() == "hip":
        from pykern.runtime import device_registry as devices

        return devices.get_device().arch_target_id
    return settings.get("PYKERN_ARCH")


class _Launch:
    """``k[grid, block]``: call it with the kernel's arguments."""

    __slots__ = ("dispatcher", "griddim", "blockdim", "stream", "sharedmem", "_fast", "_misses")

    def __init__(self, dispatcher, griddim, blockdim, stream, sharedmem):
        self.dispatcher = dispatcher
        self.griddim = griddim
        self.blockdim = blockdim
        self.stream = stream
        self.sharedmem = sharedmem
        #: ``fast(args) -> bool``, made by the last full launch: the same launch
        #: for arguments of the same kinds, or False having done nothing
        self._fast = None
        self._misses = 0  # launches the fast path did not take: from the second on, make one

    def __call__(self, *args):
        try:
            fast = self._fast
            if fast is None or not fast(args):
                self._misses += 1
                self.dispatcher.launch(args, self.griddim, self.blockdim, self.stream, self.sharedmem,
                                       _launcher=self if self._misses > 1 else None)
        except Exception as e:
            if not cut_frames(e):
                raise
            raise e.with_traceback(None)  # pykern's internal frames hidden (PYKERN_FULL_TRACEBACK=1 shows them)


def _pointer_params(signatures) -> tuple:
    """``(position, element type)`` of the ``CPointer`` parameters of any eager signature."""
    from pykern.frontend import types as T

    return tuple(dict.fromkeys((i, t.dtype) for _, argtypes in signatures
                               for i, t in enumerate(argtypes) if isinstance(t, T.CPointer)))


#: bytes a raw pointer argument is taken to reach: the kernel's view of it must have an extent,
#: and nothing knows the real one (numba's CPointer has none)
_POINTER_EXTENT = 1 << 40


def _pointer_args(args, ptrs) -> tuple:
    """An address (an int) given for a ``CPointer`` parameter becomes a 1-d view of the memory there,
    which the kernel indexes as numba's pointer (numba-cuda's ``ex_cpointer``: ``x_ptr =
    d.__cuda_array_interface__["data"][0]``)."""
    import numpy as np

    from types import SimpleNamespace

    from pykern.runtime.memory.arrays import from_cuda_array_interface

    out = list(args)
    for i, dt in ptrs:
        a = out[i] if i < len(out) else None
        if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            npdt = np.dtype(dt.np_dtype)
            cai = {"shape": (_POINTER_EXTENT // npdt.itemsize,), "typestr": npdt.str, "data": (int(a), False),
                   "strides": None, "version": 3}
            out[i] = from_cuda_array_interface(SimpleNamespace(__cuda_array_interface__=cai))
    return tuple(out)


class _NoLaunch:
    def __call__(self, *args):
        return None


_KNOWN_OPTIONS = {
    "debug", "fastmath", "opt", "cache", "max_registers", "launch_bounds", "lineinfo", "inline",
    "link", "max_block_size", "code_object_version",
    "forceinline",  # device functions: inlined at every call (numba-cuda's option)
    "fma",  # numba-cuda: fma=False keeps a*b+c as two roundings (the amdgpu target fuses them by default)
    "boundscheck",  # numba-cuda: None/False accepted, True refused (debug=True checks indices here)
    "lto",  # numba-cuda's link-time optimisation of NVVM IR: nothing to switch here (one LLVM module)
    "shared_memory_carveout",  # numba-cuda's L1/shared split: checked as numba does, AMD has no such knob
    "nopython", "nogil",  # numba's CPU decorator options, which numba.cuda's target options accept too: no effect
    "sanitize",  # the cpu target's race / uninitialised-read / bounds checker (core/sanitize.py)
}
_CARVEOUTS = ("default", "maxl1", "maxshared")


def _check_options(options):
    unknown = set(options) - _KNOWN_OPTIONS
    if unknown:
        raise TypeError(f"@jit got unknown option(s) {sorted(unknown)}; known: {sorted(_KNOWN_OPTIONS)}")
    if options.get("link"):
        from pykern.core.external import link_items

        link_items(options["link"])  # a missing file or an NVIDIA format fails at decoration
    if options.get("boundscheck"):
        # numba-cuda's own answer; debug=True is the way to checked indexing in both
        raise NotImplementedError("bounds checking is not supported by @jit(boundscheck=True); "
                                  "use @jit(debug=True), which checks every index")
    _check_launch_bounds(options.get("launch_bounds"))
    if "sanitize" in options:
        from pykern.core.sanitize import parse_modes

        parse_modes(options["sanitize"])  # a bad value fails at decoration, not at the first launch
    _check_carveout(options.get("shared_memory_carveout"))
    return {k: v for k, v in options.items()
            if k not in ("boundscheck", "lto", "shared_memory_carveout", "nopython", "nogil")}


def _check_launch_bounds(bounds):
    """numba-cuda's rule: an int, or a tuple of at most three (max threads per block, min blocks
    per multiprocessor, max cluster rank); pykern uses the first."""
    if isinstance(bounds, (tuple, list)) and len(bounds) > 3:
        raise ValueError(f"Got {len(bounds)} launch bounds: {tuple(bounds)}; at most 3 are supported "
                         "(max_threads_per_block, min_blocks_per_sm, max_cluster_rank)")


def _check_carveout(value):
    """numba-cuda's check of ``shared_memory_carveout`` (a percentage -1..100 or a name); the
    value itself changes nothing on AMD GPUs or the cpu target."""
    if value is None:
        return
    if isinstance(value, str):
        if value.lower() not in _CARVEOUTS:
            raise ValueError(f"Invalid carveout value: {value}. Must be -1 to 100 or one of {list(_CARVEOUTS)}")
    elif isinstance(value, int) and not isinstance(value, bool):
        if not -1 <= value <= 100:
            raise ValueError("Carveout must be between -1 and 100")
    else:
        raise TypeError(f"shared_memory_carveout must be str or int, got {type(value).__name__}")


def _is_type_tuple(obj):
    from pykern.frontend import types as T

    return isinstance(obj, tuple) and all(isinstance(x, T.Type) for x in obj)


_CO_VARARGS = 0x04  # inspect.CO_VARARGS, without importing inspect here


def _star_args_error(py_func) -> CompileError:
    from pykern.frontend.resolve import ParsedFunction

    pf = ParsedFunction(py_func)
    return CompileError("a kernel cannot have *args parameters (a device function can)", pf.loc(pf.node.args.vararg),
                        hint="list the parameters explicitly, or pass a tuple")


def jit(func_or_sig=None, device=False, **options):
    """Decorate a kernel (or, with ``device=True``, a device function).

    Forms: ``@jit``, ``@jit(debug=True)``, ``@jit("void(float32[:], int64)")``,
    ``@jit(["void(float32[:])", "void(float64[:])"])``, ``@jit(device=True)``.

    Example::

        @pykern.jit
        def saxpy(a, x, y, out):
            i = pykern.grid(1)
            if i < out.size:
                out[i] = a * x[i] + y[i]
    """
    if callable(func_or_sig) and hasattr(func_or_sig, "__code__"):
        return Dispatcher(func_or_sig, None, device, **options)
    if isinstance(func_or_sig, Dispatcher):
        return Dispatcher(func_or_sig.py_func, None, device, **{**func_or_sig.options, **options})
    sigs = func_or_sig

    def decorate(fn):
        if isinstance(fn, Dispatcher):
            fn = fn.py_func
        return Dispatcher(fn, sigs, device, **options)

    return trimmed(decorate)  # eager signatures compile here: a CompileError points at the user's line


def _unpickle(state: dict, digest: str) -> Dispatcher:
    """``Dispatcher.__reduce__``'s other half (the one rebuilt in this process already, if any)."""
    from pykern.dispatch import serialize

    return serialize.rebuild_dispatcher(state, digest, _from_pickle)


def _from_pickle(fn, device: bool, options: dict, signatures: list) -> Dispatcher:
    d = Dispatcher(fn, None, device, **options)
    d._signatures = signatures  # eager signatures compile on first launch here
    return d
