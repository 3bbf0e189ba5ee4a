"""Compile-time arguments of device functions: types (``uint32``, ``np.float64``, numba types),
functions (``cuda.atomic.add``, device functions, ``operator.add``, ``math.sin``), None, bools
and int literals are passed at compile time, and the callee is specialised per value (numba
does the same). ``lower_loops`` reads them too (``literal_unroll`` of such values)."""

from __future__ import annotations

import numpy as np

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.conversions import foreign_scalar_type
from pykern.frontend.values import PyObj, is_weak
from pykern.lang import stubs

#: what ``static_value`` gives for a value known only at run time
NOT_STATIC = object()


def is_literal(sv) -> bool:
    """An int, bool or int-tuple literal argument (a candidate compile-time value)."""
    return isinstance(sv, int) or (isinstance(sv, tuple) and bool(sv))


def static_value(v):
    """The compile-time value of a device-function argument, or ``NOT_STATIC``:
    types (``uint32``, ``np.float64``, numba types), functions (``cuda.atomic.add``,
    device functions, ``operator.add``, ``math.sin``) and int literals are passed
    at compile time; the callee is specialised per value (numba does the same)."""
    if isinstance(v, ir.Const):
        if isinstance(v.type, T.Boolean):
            return bool(v.value)
        if (is_weak(v) or getattr(v, "_literal", False)) and isinstance(v.value, int) and not isinstance(v.value, bool):
            return v.value
        return NOT_STATIC
    if isinstance(v, ir.TupleExpr):
        return int_tuple([e.value if isinstance(e, ir.Const) else None for e in v.elems])
    if not isinstance(v, PyObj):
        return NOT_STATIC
    x = v.value
    if x is None:
        return None  # an optional argument left out or given None: `if z is None:` is pruned
    if isinstance(x, tuple):
        return int_tuple(x)
    if isinstance(x, bool) or isinstance(x, (float, np.generic, np.ndarray)):
        return NOT_STATIC
    if isinstance(x, int):
        return x
    if isinstance(x, stubs.Stub):
        return NOT_STATIC if x._pk_name in ("warpsize", "laneid") else x
    if isinstance(x, (T.Type, np.dtype, type)) or callable(x) or foreign_scalar_type(x) is not None:
        return x
    return NOT_STATIC


def int_tuple(values):
    """A tuple of Python ints (a shape such as ``(4, 8)``), else ``NOT_STATIC``."""
    if values and all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in values):
        return tuple(int(x) for x in values)
    return NOT_STATIC
