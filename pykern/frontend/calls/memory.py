"""numba.cuda's arrays a kernel makes: ``cuda.shared.array`` (per block; shape 0 is the
dynamic buffer), ``cuda.local.array`` (per thread) and ``cuda.const.array_like`` (data frozen
into the code). Their shapes are known at compile time."""

from __future__ import annotations

import numpy as np

from pykern.core.errors import CompileError, CompileValueError
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import bind, nargs
from pykern.frontend.calls.registry import lowers_each, lowers
from pykern.frontend.values import PyObj
from pykern.lang import stubs


def shape_of(lw, node, fname, allow_zero):
    """The constant shape ``node`` gives (an int or a tuple of ints), as a tuple."""
    shape = lw.const_value(node, f"the shape of {fname}()")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, tuple) or not shape or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise lw.error(f"the shape of {fname}() must be a constant int or tuple of ints, got {shape!r}", node)
    if len(shape) > T.MAX_NDIM:
        raise lw.error(f"{fname}() arrays have at most {T.MAX_NDIM} dimensions", node)
    if any(s < 0 for s in shape):
        raise lw.error(f"the shape of {fname}() must not be negative: {shape}", node)
    if 0 in shape:
        if not allow_zero:
            raise lw.error(f"{fname}() needs a positive size, got {shape}", node)
        if shape != (0,):
            raise lw.error(
                f"the dynamic shared array is 1-d: use shared.array(0, dtype), not shape {shape}",
                node,
            )
    return shape


@lowers_each({stubs.shared.array: "shared", stubs.local.array: "local"})
def _alloc(lw, node, which, space):
    a = bind(lw, node, ["shape", "dtype", "alignment"], {"alignment": None}, which)
    shape = shape_of(lw, a["shape"], which, allow_zero=space == "shared")
    dtype = lw.dtype_arg(a["dtype"])
    align = _alignment(lw, a.get("alignment"))
    t = T.Array(dtype, len(shape), "C", space)
    lw.alloc_count += 1
    name = f"{lw.name}__{space}{lw.alloc_count}" if shape != (0,) else f"{lw.name}__dynshared"
    return ir.AllocArray(name, space, shape, t, lw.loc(node), align)


def _alignment(lw, node) -> int:
    """numba-cuda's ``alignment=`` of local/shared arrays: a constant power of two (0: none given)."""
    if node is None:
        return 0
    try:
        v = lw.expr(node)
        n = None if isinstance(v, PyObj) and v.value is None else lw.const_value(node, "alignment")
    except CompileError:  # a string, a run-time value...
        v = n = False
    if n is None:  # alignment=None: numba's default
        return 0
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
        # numba's words (a TypingError there), so programs matching them keep working
        raise lw.error("RequireLiteralValue: alignment must be a constant integer", node)
    n = int(n)
    if n <= 0 or n & (n - 1):
        raise CompileValueError(f"Alignment must be a power of 2 greater than 0, got {n}", lw.loc(node))
    return n


@lowers(stubs.const.array_like)
def _const_array_like(lw, node, which):
    nargs(lw, node, which, 1)
    v = lw.expr(node.args[0])
    if isinstance(v, ir.ConstArray):
        return v
    if not (isinstance(v, PyObj) and isinstance(v.value, np.ndarray)):
        raise lw.error(
            "const.array_like() takes a numpy array from a global or closure variable",
            node.args[0],
            hint="define the array at module level: TABLE = np.array([...]); then const.array_like(TABLE)",
        )
    return lw.const_array(v.value, v.name, node)
