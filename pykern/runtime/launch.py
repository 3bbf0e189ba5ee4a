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

from numpy import ndarray as _ndarray

from ..errors import LaunchError, LaunchValueError
from ..frontend.typeof import typeof
from .memory import DeviceArray as _DeviceArray

# ----------------------------------------------------------------- argument types

_type_memo: dict = {}


def _memo_key(a):
    """A cheap key that determines the kernel type of ``a``, or None."""
    cls = type(a)
    if cls is int or cls is float or cls is bool:
        if cls is int and not (-(1 << 63) <= a < (1 << 63)):
            return None  # uint64-range or too large: let typeof decide
        return cls
    if cls is _ndarray:  # by identity: any class may be named "ndarray"
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
        if type(a) is _DeviceArray:
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
            if cls_name(a) in ("void", "record"):  # a record (lang2): its memory as a 0-d array (writes reach it)
                import numpy as np

                converted = converted or list(args)
                converted[i] = np.asarray(a)
                out.append(t)
                continue
            if key is not None:
                _type_memo[key] = t
        out.append(t)
    return tuple(out), (args if converted is None else tuple(converted))


def cls_name(a) -> str:
    return type(a).__name__


def _is_foreign_array(a) -> bool:
    cls = type(a)
    if cls is _ndarray or isinstance(a, (tuple, int, float, bool)):
        return False
    if any(c.__name__ == "ndarray" and c.__module__ == "numpy" for c in cls.__mro__):
        return False  # a numpy subclass (np.recarray, np.matrix): used as the array it is
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
        return not isinstance(actual, T.Complex) or isinstance(declared, T.Complex)  # complex never narrows to real
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
            raise LaunchValueError(f"{name}: block {block} has {n} threads; this kernel allows at most {limit}")

    return check


def cooperative_limit_cpu(block) -> int:
    from .cpu_executor import max_cooperative_blocks

    return max_cooperative_blocks(block[0] * block[1] * block[2])


def _check_cooperative(name, grid, block, limit):
    """A kernel that syncs its grid needs every block resident at once."""
    n = grid[0] * grid[1] * grid[2]
    if n > limit:
        raise LaunchValueError(
            f"{name}: grid {grid} has {n} blocks, but a kernel that calls cg.this_grid().sync() runs as a "
            f"cooperative launch, and at most {limit} blocks of {block[0] * block[1] * block[2]} threads can be "
            "resident at once (see max_cooperative_grid_blocks)")


class CpuBackend:
    """Kernels run by ``cpu_executor`` on host memory (numpy arrays and cpu DeviceArrays)."""

    name = "cpu"

    def load(self, artifact):
        from . import cpu_executor

        return cpu_executor.load(artifact)

    def plan(self, ov):
        """The launch function of ``ov``: everything decidable once is decided here."""
        from ..frontend import types as T
        from .kernargs import Packer, get_flattener

        from .cpu_executor import MAX_SHARED_BYTES

        flatten = get_flattener(ov.argtypes)
        # the executor wants at least 8 bytes even for a kernel without arguments
        pack = Packer(ov.artifact.params, max(8, ov.artifact.kernarg_size))
        run = ov.kernel.run
        check_block = _block_check(ov)
        arrays = [i for i, t in enumerate(ov.argtypes) if isinstance(t, T.Array)]
        name = ov.dispatcher.__name__
        static = ov.artifact.static_shared_bytes
        max_dynamic = MAX_SHARED_BYTES - static

        coop = getattr(ov.artifact, "cooperative", False)

        def launch(args, grid, block, stream, shared):
            check_block(block)
            if coop:
                _check_cooperative(name, grid, block, cooperative_limit_cpu(block))
            if shared > max_dynamic:
                raise LaunchValueError(f"{name}: {shared} bytes of dynamic shared memory plus {static} bytes of static "
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
        from ..frontend import types as T
        from . import hip_launch
        from .kernargs import get_flattener
        from .memory import DeviceArray

        kernel, art, argtypes, name = ov.kernel, ov.artifact, ov.argtypes, ov.dispatcher.__name__
        check_block = _block_check(ov)
        flatten, pack, run = get_flattener(argtypes), kernel.packer.fast, kernel.launch
        arrays = [i for i, t in enumerate(argtypes) if isinstance(t, T.Array)]
        nested = any(isinstance(t, T.Tuple) for t in argtypes)

        def launch(args, grid, block, stream, shared):
            check_block(block)
            # the common case, every array already in GPU memory: nothing to convert or copy back
            if not nested and all(type(args[i]) is DeviceArray and args[i].target == "hip" for i in arrays):
                run(grid, block, shared, pack(flatten(args)), stream)
            else:
                hip_launch.launch(kernel, art, argtypes, args, grid, block, shared, stream, kernel_name=name)

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
