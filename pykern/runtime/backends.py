"""The per-launch host path, target by target: packing and the call.

``load`` makes an artifact launchable on its target; ``launch`` packs the
arguments at the artifact's parameter offsets and runs it. Each target is one
backend class with the same methods, chosen by name once per overload. (What
the arguments' types are, and so which overload runs, is the dispatcher's
business: ``pykern.dispatch.arguments``.)

Example::

    ov = dispatcher._get_overload(pykern.dispatch.arguments.argument_types(args, "k")[0])
    launch(ov, args, (4, 1, 1), (256, 1, 1), 0, 0)
"""

from __future__ import annotations

import functools

from pykern.core.errors import LaunchError, LaunchValueError

# ------------------------------------------------------------------------ backends


def _block_check(ov):
    limit = ov.artifact.max_block_size
    name = ov.dispatcher.__name__

    def check(block):
        n = block[0] * block[1] * block[2]
        if n > limit:
            raise LaunchValueError(f"{name}: block {block} has {n} threads; this kernel allows at most {limit}")

    return check


class CpuBackend:
    """Kernels run by ``cpu_executor`` on host memory (numpy arrays and cpu DeviceArrays)."""

    name = "cpu"

    def load(self, artifact):
        from pykern.runtime.cpu import executor as cpu_executor

        return cpu_executor.load(artifact)

    def plan(self, ov):
        """The launch function of ``ov``: everything decidable once is decided here."""
        from pykern.runtime.cpu.executor import launch_check
        from pykern.runtime.kernargs import Packer, array_arguments, get_flattener

        params = ov.artifact.params
        flatten = get_flattener(params, len(ov.argtypes))
        # the executor wants at least 8 bytes even for a kernel without arguments
        pack = Packer(params, max(8, ov.artifact.kernarg_size))
        run = ov.kernel.run
        name = ov.dispatcher.__name__
        check = launch_check(ov.artifact, name)
        arrays = array_arguments(params)
        # sanitize=: the checker names the launch's arrays and tracks device arrays' writes
        sanitized = functools.partial(ov.kernel.run_sanitized, kernel_name=name) if ov.artifact.sanitize else None

        def launch(args, grid, block, stream, shared):
            check(grid, block, shared)
            for i in arrays:  # device memory of another target would be garbage here
                if getattr(args[i], "target", "cpu") != "cpu":
                    raise LaunchError(f"{name}: argument {i + 1} is a HIP device array; the cpu target cannot read it")
            if sanitized is not None:
                sanitized(grid, block, shared, pack(flatten(args)), args)
                return
            run(grid, block, shared, pack(flatten(args)))

        launch.packer = pack
        return launch

    def fixed(self, ov, grid, block, stream, shared):
        """``(packer, body, namespace)`` of a launch with this configuration,
        which ``plan``'s launch accepted (see ``kernargs.compile_guarded``)."""
        pack = ov.launch_plan.packer
        got = ov.kernel.fixed_launch(grid, block, shared, pack.size)
        return got and (pack,) + got


class HipBackend:
    """Kernels run on an AMD GPU through the HIP module API."""

    name = "hip"

    def load(self, artifact):
        from pykern.runtime.hip import launch as hip_launch

        return hip_launch.load(artifact)

    def plan(self, ov):
        from pykern.runtime.hip import launch as hip_launch
        from pykern.runtime.kernargs import array_arguments, get_flattener
        from pykern.runtime.memory.arrays import DeviceArray

        kernel, art, name = ov.kernel, ov.artifact, ov.dispatcher.__name__
        check_block = _block_check(ov)
        flatten, pack, run = get_flattener(kernel.params, len(ov.argtypes)), kernel.packer.fast, kernel.launch
        arrays = array_arguments(kernel.params)
        nested = any(len(p.path) > 1 for p in kernel.params)  # tuples may hold host arrays

        def launch(args, grid, block, stream, shared):
            check_block(block)
            # the common case, every array already in GPU memory: nothing to convert or copy back
            if not nested and all(type(args[i]) is DeviceArray and args[i].target == "hip" for i in arrays):
                run(grid, block, shared, pack(flatten(args)), stream)
            else:
                hip_launch.launch(kernel, art, args, grid, block, shared, stream, kernel_name=name)

        return launch

    def fixed(self, ov, grid, block, stream, shared):
        got = ov.kernel.fixed_launch(grid, block, shared, stream)
        return got and (ov.kernel.packer,) + got


_BACKENDS = {"cpu": CpuBackend(), "hip": HipBackend()}


def backend(target: str):
    try:
        return _BACKENDS[target]
    except KeyError:
        raise LaunchError(f"unknown target {target!r}") from None


def load(target: str, artifact):
    """Make ``artifact`` launchable on ``target`` (loads machine code / a HIP module)."""
    return backend(target).load(artifact)


#: generated fast paths per overload, at most this many (configurations x argument kinds)
MAX_FAST_PATHS = 64


def fast_path(ov, guards, grid, block, stream, shared, prologue: str, ns: dict):
    """``fast(args) -> bool`` for launches of ``ov`` with this configuration
    (which a full launch just accepted) and arguments matching ``guards``
    (``pykern.dispatch.arguments.launch_guards``): the checks, flattening, packing and
    the call in one generated function, False with nothing done when the
    arguments or ``prologue``'s checks do not match. None when the target has
    no fast path for this launch. Cached on the overload."""
    from pykern.runtime import native_guard

    cache = ov.__dict__.setdefault("_fast_paths", {})
    binding = getattr(ov.kernel, "binding", 0)  # a HipKernel reloaded after an eviction: new handles
    if ov.__dict__.get("_fast_binding", 0) != binding:
        cache.clear()
        ov._fast_binding = binding
    # (fast paths made before native guards were built make way for ones that use them)
    key = (tuple(guards), grid, block, stream, shared, prologue, native_guard.generation())
    try:
        hit = cache.get(key)
    except TypeError:  # an unhashable stream
        return None
    if hit is not None or key in cache:
        return hit
    fn = None
    if len(cache) < MAX_FAST_PATHS and ov.launch_plan is not None:
        from pykern.runtime.kernargs import compile_guarded

        got = backend(ov.target).fixed(ov, grid, block, stream, shared)
        if got:
            packer, body, bns = got
            fn = compile_guarded(packer, guards, prologue, body, {**ns, **bns})
        cache[key] = fn
    return fn


def launch(ov, args, grid, block, stream, shared):
    """Run overload ``ov`` with ``args``; configuration already normalised.
    (numba allows dynamic shared memory a kernel does not use, and so do we.)"""
    run = ov.launch_plan
    if run is None:
        run = ov.launch_plan = backend(ov.target).plan(ov)
    run(args, grid, block, stream, shared)
