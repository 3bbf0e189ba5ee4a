"""pykern types -> the kernel ABI's argument descriptions (the rules are ``pykern.core.abi``).

Example::

    >>> from pykern.frontend import types as T
    >>> [(p.name, p.offset, p.role) for p in flatten_params([T.Array(T.float32, 1), T.float32])]
    [('arg0.data', 0, 'data'), ('arg0.shape0', 8, 'shape'), ('arg0.stride0', 16, 'stride'), ('arg1', 24, 'scalar')]
"""

from __future__ import annotations

from pykern.core import abi as _abi
from pykern.core.abi import FlatParam, kernarg_size  # noqa: F401  (codegen's names for the shared ABI)
from pykern.frontend import types as T


def arg_abi(t: T.Type):
    """The ABI description (``pykern.core.abi.ScalarArg``/``ArrayArg``/``TupleArg``) of argument type ``t``."""
    if isinstance(t, T.Array):
        return _abi.ArrayArg(t.ndim, bool(t.readonly), t)
    if isinstance(t, T.Tuple):
        return _abi.TupleArg(tuple(arg_abi(e) for e in t.elems))
    if isinstance(t, T.Boolean):
        return _abi.ScalarArg(_abi.SCALAR_CODES["bool", 8], t)
    if isinstance(t, T.Integer):
        return _abi.ScalarArg(_abi.SCALAR_CODES["int" if t.signed else "uint", t.bits], t)
    if isinstance(t, T.BFloat):
        # the host packs a double (struct has no bfloat16); the kernel rounds it once, so a
        # Python float argument is converted as numba converts it, not rounded twice
        return _abi.ScalarArg(_abi.SCALAR_CODES["float", 64], t)
    if isinstance(t, T.Float):
        return _abi.ScalarArg(_abi.SCALAR_CODES["float", t.bits], t)
    if isinstance(t, T.Complex):  # two floats, real then imaginary (C's and numpy's layout)
        c = t.component
        return _abi.ComplexArg(_abi.SCALAR_CODES["float", c.bits], c)
    raise TypeError(f"kernel argument of type {t} cannot be passed")


def flatten_params(argtypes: list, names: list | None = None) -> list:
    """Flatten kernel argument types to ``FlatParam``s with ABI offsets.

    ``names`` (optional) gives the Python parameter names used in
    ``FlatParam.name`` (default ``arg0``, ``arg1``...)."""
    return _abi.layout([arg_abi(t) for t in argtypes], names)
