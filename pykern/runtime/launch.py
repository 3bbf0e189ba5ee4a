"""The per-launch host path, target by target: argument types, packing, the call.

``argument_types`` turns launch arguments into pykern types (memoised by a
cheap key, since it runs on every launch); ``load`` makes an artifact
launchable on its target; ``launch`` packs the arguments at the artifact's
parameter offsets and runs it. Each target is one backend class with the same
three methods, chosen by name once per overload.

Example::

    ov = dispatcher._get_overload(argument_types(args, "k"))
    launch(ov, args, (4, 1, 1), (256, 1, 1), 0, 0)
"""

from __future__ import annotations

from ..errors import LaunchError

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


def argument_types(args, kernel_name: str = "kernel") -> tuple:
    """The pykern types of ``args``; ``LaunchError`` naming the bad argument."""
    from ..frontend import typeof

    out = []
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
            try:
                t = typeof(a)
            except TypeError as e:
                raise LaunchError(f"{kernel_name}: argument {i + 1}: {e}") from None
            if key is not None:
                _type_memo[key] = t
        out.append(t)
    return tuple(out)


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


class CpuBackend:
    """Kernels run by ``cpu_executor`` on host memory (numpy arrays and cpu DeviceArrays)."""

    name = "cpu"

    def load(self, artifact):
        from . import cpu_executor

        return cpu_executor.load(artifact)

    def launch(self, ov, args, grid, block, stream, shared):
        from .kernargs import Packer, get_flattener

        plan = ov.launch_plan
        if plan is None:
            plan = ov.launch_plan = (get_flattener(ov.argtypes), Packer(ov.artifact.params, ov.artifact.kernarg_size))
        for a in args:  # device memory of another target would be garbage here
            if type(a).__name__ == "DeviceArray" and a.target != "cpu":
                raise LaunchError(f"{ov.dispatcher.__name__}: a HIP device array cannot be used by a cpu-target launch")
        flatten, pack = plan
        buf = pack(flatten(args))
        ov.kernel.launch(grid, block, shared, buf)


class HipBackend:
    """Kernels run on an AMD GPU through the HIP module API."""

    name = "hip"

    def load(self, artifact):
        from . import hip_launch

        return hip_launch.load(artifact)

    def launch(self, ov, args, grid, block, stream, shared):
        from . import hip_launch

        hip_launch.launch(ov.kernel, ov.artifact, ov.argtypes, args, grid, block, shared, stream,
                          kernel_name=ov.dispatcher.__name__)


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
    """Run overload ``ov`` with ``args``; configuration already normalised."""
    art = ov.artifact
    nthreads = block[0] * block[1] * block[2]
    if nthreads > art.max_block_size:
        raise LaunchError(
            f"{ov.dispatcher.__name__}: block {block} has {nthreads} threads; this kernel allows at most {art.max_block_size}"
        )
    if shared and not art.dynamic_shared:
        pass  # numba allows dynamic shared memory the kernel does not use
    backend(ov.target).launch(ov, args, grid, block, stream, shared)
