"""The per-launch host path, target by target: argument types, packing, the call.

``argument_types`` turns launch arguments into pykern types (memoised by a
cheap key, since it runs on every launch); ``load`` makes an artifact
launchable on its target; ``launch`` packs the arguments at the artifact's
parameter offsets and runs it. Each target is one backend class with the same
three methods, chosen by name once per overload.

Example::

    ov = dispatcher._get_overload(argument_types(args, "k")[0])
    launch(ov, args, (4, 1, 1), (256, 1, 1), 0, 0)
"""

from __future__ import annotations

from ..errors import LaunchError
from ..frontend.typeof import typeof

# ----------------------------------------------------------------- argument types

_type_memo: dict = {}


def _memo_key(a):
    """A cheap key that determines the kernel type of ``a``, or None."""
    cls = type(a)
    if cls is int or cls is float or cls is bool:
        if cls is int and not (-(1 << 63) <= a < (1 << 63)):
            return None  # uint64-range or too large: let typeof decide
        return cls
    if cls.__name__ == "ndarray":
        flags = a.flags
        return (cls, a.dtype, a.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable)
    dtype = getattr(a, "dtype", None)
    if dtype is not None and getattr(a, "shape", None) == () and hasattr(a, "item") and not hasattr(a, "flags"):
        return (cls, dtype)  # numpy scalar
    return None


def argument_types(args, kernel_name: str = "kernel", target: str = "cpu"):
    """``(types, args)``: the pykern types of ``args``, and the arguments to pass
    -- ``args`` itself, or a copy in which foreign arrays (objects with
    ``__dlpack__`` or ``__cuda_array_interface__``, e.g. torch tensors) are
    wrapped as DeviceArrays, zero-copy. ``LaunchError`` names a bad argument."""
    out = []
    converted = None
    for i, a in enumerate(args):
        if type(a).__name__ == "DeviceArray":
            t = a._pk_type
            if t is None:
                t = a._pk_type = typeof(a)
            out.append(t)
            continue
        key = _memo_key(a)
        t = _type_memo.get(key) if key is not None else None
        if t is None:
            if key is None and _is_foreign_array(a):
                a = _wrap_foreign(a, i, kernel_name, target)
                converted = converted or list(args)
                converted[i] = a
                try:
                    t = a._pk_type = typeof(a)
                except TypeError as e:
                    raise LaunchError(f"{kernel_name}: argument {i + 1}: {e}") from None
                out.append(t)
                continue
            try:
                t = typeof(a)
            except (TypeError, AttributeError) as e:
                raise LaunchError(f"{kernel_name}: argument {i + 1}: {e}") from None
            if key is not None:
                _type_memo[key] = t
        out.append(t)
    return tuple(out), (args if converted is None else tuple(converted))


def _is_foreign_array(a) -> bool:
    cls = type(a)
    if cls.__name__ == "ndarray" or isinstance(a, (tuple, int, float, bool)):
        return False
    return hasattr(cls, "__dlpack__") or hasattr(a, "__cuda_array_interface__")


def _wrap_foreign(a, i, kernel_name, target):
    from .memory import as_device_array

    try:
        return as_device_array(a, target=target)
    except Exception as e:  # unsupported dtype, device, layout...
        raise LaunchError(f"{kernel_name}: argument {i + 1} ({type(a).__name__}): {e}") from None


def convertible(actual, declared) -> bool:
    """May a value of type ``actual`` be passed where ``declared`` is expected
    (eager signatures)? Scalars convert like numba's; arrays need the same dtype
    and ndim and a layout at least as strict as declared."""
    from ..frontend import types as T

    if actual == declared:
        return True
    if declared.is_scalar and actual.is_scalar:
        return True
    if isinstance(declared, T.Array) and isinstance(actual, T.Array):
        return (actual.dtype == declared.dtype and actual.ndim == declared.ndim
                and (declared.layout == "A" or declared.layout == actual.layout or actual.ndim <= 1 and actual.layout in "CF"))
    if isinstance(declared, T.Tuple) and isinstance(actual, T.Tuple):
        return len(declared.elems) == len(actual.elems) and all(map(convertible, actual.elems, declared.elems))
    return False


# ------------------------------------------------------------------------ backends


def _block_check(ov):
    limit = ov.artifact.max_block_size
    name = ov.dispatcher.__name__

    def check(block):
        n = block[0] * block[1] * block[2]
        if n > limit:
            raise LaunchError(f"{name}: block {block} has {n} threads; this kernel allows at most {limit}")

    return check


class CpuBackend:
    """Kernels run by ``cpu_executor`` on host memory (numpy arrays and cpu DeviceArrays)."""

    name = "cpu"

    def load(self, artifact):
        from . import cpu_executor

        return cpu_executor.load(artifact)

    def plan(self, ov):
        """The launch function of ``ov``: everything decidable once is decided here."""
        from .cpu_executor import MAX_SHARED_BYTES
        from .kernargs import Packer, array_arguments, get_flattener

        params = ov.artifact.params
        flatten = get_flattener(params, len(ov.argtypes))
        # the executor wants at least 8 bytes even for a kernel without arguments
        pack = Packer(params, max(8, ov.artifact.kernarg_size))
        run = ov.kernel.run
        check_block = _block_check(ov)
        arrays = array_arguments(params)
        name = ov.dispatcher.__name__
        static = ov.artifact.static_shared_bytes
        max_dynamic = MAX_SHARED_BYTES - static

        def launch(args, grid, block, stream, shared):
            check_block(block)
            if shared > max_dynamic:
                raise LaunchError(f"{name}: {shared} bytes of dynamic shared memory plus {static} bytes of static "
                                  f"shared memory exceed the {MAX_SHARED_BYTES} bytes of shared memory (LDS) "
                                  "a block may use")
            for i in arrays:  # device memory of another target would be garbage here
                if getattr(args[i], "target", "cpu") != "cpu":
                    raise LaunchError(f"{name}: argument {i + 1} is a HIP device array; the cpu target cannot read it")
            run(grid, block, shared, pack(flatten(args)))

        return launch


class HipBackend:
    """Kernels run on an AMD GPU through the HIP module API."""

    name = "hip"

    def load(self, artifact):
        from . import hip_launch

        return hip_launch.load(artifact)

    def plan(self, ov):
        from . import hip_launch
        from .kernargs import array_arguments, get_flattener
        from .memory import DeviceArray

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


_BACKENDS = {"cpu": CpuBackend(), "hip": HipBackend()}


def backend(target: str):
    try:
        return _BACKENDS[target]
    except KeyError:
        raise LaunchError(f"unknown target {target!r}") from None


def load(target: str, artifact):
    """Make ``artifact`` launchable on ``target`` (loads machine code / a HIP module)."""
    return backend(target).load(artifact)


def launch(ov, args, grid, block, stream, shared):
    """Run overload ``ov`` with ``args``; configuration already normalised.
    (numba allows dynamic shared memory a kernel does not use, and so do we.)"""
    run = ov.launch_plan
    if run is None:
        run = ov.launch_plan = backend(ov.target).plan(ov)
    run(args, grid, block, stream, shared)
