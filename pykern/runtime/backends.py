"""Launching on a target: one backend per run target, the same steps for each.

A dispatcher's launch has typed its arguments and chosen its overload
(``pykern.dispatch``); what is left happens here, per target:

* ``load``: make an artifact launchable (machine code loaded, a HIP module);
* ``launch``: check the configuration, flatten and pack the arguments at the
  kernel's parameter offsets (``kernargs``), run the kernel -- composed once per
  overload by ``plan`` from the target's launcher module (``cpu/executor.py``,
  ``hip/launch.py``) and kept on the overload;
* ``fast_path``: the same steps generated for one configuration and arguments
  like those of a launch that succeeded (``kernargs.compile_guarded``).

Each backend also says what its target is made of for the launch path: the
codegen target its kernels are compiled to (``codegen``, see
``core/targets.py``), the compile options of the current device, and whether
numpy arrays reach kernels as they are (``host_arrays``).

Example::

    ov = dispatcher._get_overload(pykern.dispatch.argument_types.argument_types(args, "k")[0])
    backend("cpu").launch(ov, args, (4, 1, 1), (256, 1, 1), 0, 0)
"""

from __future__ import annotations

from pykern.core.errors import LaunchError

#: generated fast paths per overload, at most this many (configurations x argument kinds)
MAX_FAST_PATHS = 64


class Backend:
    """The launch steps of one run target (see the module docstring)."""

    #: the run target
    name: str = ""
    #: the codegen target its kernels are compiled to
    codegen: str = ""
    #: numpy arrays are passed to kernels as they are (else the launcher copies them in and out)
    host_arrays: bool = False

    def compile_options(self) -> dict:
        """Target options of a compile for the current device (``codegen.get_target``'s)."""
        return {}

    def load(self, artifact):
        """The launchable kernel of ``artifact`` on this target."""
        raise NotImplementedError

    def plan(self, ov):
        """``launch(args, grid, block, stream, shared)`` of overload ``ov``: everything decidable
        once decided here."""
        raise NotImplementedError

    def fixed(self, ov, grid, block, stream, shared):
        """``(packer, body, namespace)`` of a launch of ``ov`` with this configuration, which
        ``plan``'s launch accepted (see ``kernargs.compile_guarded``), or None."""
        raise NotImplementedError

    def planned(self, ov):
        """``ov.launch_plan``, planned now if it is not yet."""
        run = ov.launch_plan
        if run is None:
            run = ov.launch_plan = self.plan(ov)
        return run

    def launch(self, ov, args, grid, block, stream, shared) -> None:
        """Run overload ``ov`` with ``args``; configuration already normalised.
        (numba allows dynamic shared memory a kernel does not use, and so do we.)"""
        (ov.launch_plan or self.planned(ov))(args, grid, block, stream, shared)

    def fast_path(self, ov, guards, grid, block, stream, shared, prologue: str, ns: dict):
        """``fast(args) -> bool`` for launches of ``ov`` with this configuration
        (which a full launch just accepted) and arguments matching ``guards``
        (``pykern.dispatch.argument_types.launch_types``): the checks, flattening, packing and
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

            got = self.fixed(ov, grid, block, stream, shared)
            if got:
                packer, body, bns = got
                fn = compile_guarded(packer, guards, prologue, body, {**ns, **bns})
            cache[key] = fn
        return fn


class CpuBackend(Backend):
    """Kernels run by the cpu executor on host memory (numpy arrays and cpu DeviceArrays)."""

    name = "cpu"
    codegen = "cpu"
    host_arrays = True

    def load(self, artifact):
        from pykern.runtime.cpu import executor

        return executor.load(artifact)

    def plan(self, ov):
        from pykern.runtime.cpu import executor

        return executor.launcher(ov.kernel, len(ov.argtypes), ov.dispatcher.__name__)

    def fixed(self, ov, grid, block, stream, shared):
        pack = ov.launch_plan.packer
        got = ov.kernel.fixed_launch(grid, block, shared, pack.size)
        return got and (pack,) + got


class HipBackend(Backend):
    """Kernels run on an AMD GPU through the HIP module API."""

    name = "hip"
    codegen = "amdgpu"
    host_arrays = False

    def compile_options(self) -> dict:
        from pykern.runtime import device_registry as devices

        return {"arch": devices.get_device().arch_target_id,
                "code_object_version": devices.preferred_code_object_version()}

    def load(self, artifact):
        from pykern.runtime.hip import launch as hip_launch

        return hip_launch.load(artifact)

    def plan(self, ov):
        from pykern.runtime.hip import launch as hip_launch

        return hip_launch.launcher(ov.kernel, len(ov.argtypes), ov.dispatcher.__name__)

    def fixed(self, ov, grid, block, stream, shared):
        got = ov.kernel.fixed_launch(grid, block, shared, stream)
        return got and (ov.kernel.packer,) + got


#: run target -> its backend
BACKENDS = {"cpu": CpuBackend(), "hip": HipBackend()}


def backend(target: str) -> Backend:
    """The backend of run target ``target``."""
    try:
        return BACKENDS[target]
    except KeyError:
        raise LaunchError(f"unknown target {target!r}") from None


def load(target: str, artifact):
    """Make ``artifact`` launchable on ``target`` (loads machine code / a HIP module)."""
    return backend(target).load(artifact)


def launch(ov, args, grid, block, stream, shared) -> None:
    """Run overload ``ov`` with ``args`` on its target (``Backend.launch``)."""
    backend(ov.target).launch(ov, args, grid, block, stream, shared)
