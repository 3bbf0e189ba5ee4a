"""Kernel argument flattening (see /work/team/ABI.md), shared by every target.

Each kernel argument flattens, in order, into scalar parameters: a scalar is
one parameter, a boolean one byte, an array ``data`` (8-byte pointer) then
``shape[i]`` (int64) then ``strides[i]`` (int64, bytes), a tuple its elements.
Each parameter sits at the next offset aligned to its own size.

Example::

    >>> from pykern.frontend import types as T
    >>> [(p.name, p.offset, p.role) for p in flatten_params([T.Array(T.float32, 1), T.float32])]
    [('arg0.data', 0, 'data'), ('arg0.shape0', 8, 'shape'), ('arg0.stride0', 16, 'stride'), ('arg1', 24, 'scalar')]
"""

from __future__ import annotations

from dataclasses import dataclass

from ..frontend import types as T


@dataclass(frozen=True)
class FlatParam:
    """One flat kernel parameter: ``role`` is "scalar", "data", "shape" or
    "stride"; ``type`` the pykern type (``int64`` for shape/stride, the Array
    type for "data"); ``arg_index`` the kernel argument it comes from."""

    name: str
    type: T.Type
    offset: int
    size: int
    role: str
    arg_index: int = 0


def _size_of(t: T.Type) -> int:
    if isinstance(t, T.Boolean):
        return 1
    if isinstance(t, (T.Integer, T.Float)):
        return t.nbytes
    raise TypeError(f"not a scalar type: {t}")


def _flatten_one(t: T.Type, name: str, arg_index: int, out: list) -> None:
    if isinstance(t, T.Array):
        out.append((f"{name}.data", t, 8, "data", arg_index))
        for i in range(t.ndim):
            out.append((f"{name}.shape{i}", T.int64, 8, "shape", arg_index))
        for i in range(t.ndim):
            out.append((f"{name}.stride{i}", T.int64, 8, "stride", arg_index))
    elif isinstance(t, T.Tuple):
        for i, e in enumerate(t.elems):
            _flatten_one(e, f"{name}.{i}", arg_index, out)
    elif isinstance(t, T.Complex):
        # complex (lang2): two floats, real then imaginary -- the layout of C's
        # ``float _Complex``/numpy's complex64 (and numba's struct {re, im})
        c = t.component
        out.append((f"{name}.real", c, c.nbytes, "scalar", arg_index))
        out.append((f"{name}.imag", c, c.nbytes, "scalar", arg_index))
    elif t.is_scalar:
        out.append((name, t, _size_of(t), "scalar", arg_index))
    else:
        raise TypeError(f"kernel argument of type {t} cannot be passed")


def flatten_params(argtypes: list, names: list | None = None) -> list:
    """Flatten kernel argument types to ``FlatParam``s with ABI offsets.

    ``names`` (optional) gives the Python parameter names used in
    ``FlatParam.name`` (default ``arg0``, ``arg1``...)."""
    flat: list = []
    for i, t in enumerate(argtypes):
        _flatten_one(t, names[i] if names else f"arg{i}", i, flat)
    params = []
    off = 0
    for name, t, size, role, ai in flat:
        off = (off + size - 1) // size * size
        params.append(FlatParam(name, t, off, size, role, ai))
        off += size
    return params


def kernarg_size(params: list) -> int:
    """Bytes of the packed kernel argument buffer: end of the last parameter
    rounded up to 8 (0 for no parameters)."""
    if not params:
        return 0
    end = max(p.offset + p.size for p in params)
    return (end + 7) // 8 * 8
