"""numpy's facts about types, known at compile time: ``np.iinfo(t)``, ``np.finfo(t)`` and
``np.dtype(x)``."""

from __future__ import annotations

import ast
import collections

import numpy as np

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import nargs
from pykern.frontend.calls.registry import lowers, lowers_each
from pykern.frontend.values import PyObj

#: the attributes numba's ``np.iinfo``/``np.finfo`` give (numba/np/arraymath.py), as its namedtuples
_IINFO = collections.namedtuple("iinfo", ("min", "max", "bits"))
_FINFO = collections.namedtuple("finfo", ("eps", "epsneg", "iexp", "machep", "max", "maxexp", "min", "minexp", "negep",
                                          "nexp", "nmant", "precision", "resolution", "tiny", "bits"))


@lowers_each({np.iinfo: (np.iinfo, _IINFO, "an integer"), np.finfo: (np.finfo, _FINFO, "a float")})
def _xinfo(lw, node, name, how):
    """``np.iinfo(t)``/``np.finfo(t)`` of a type, a dtype, an array or a value (numba takes the
    ``.dtype`` of what has one, else its type): a constant namedtuple of numpy's numbers for it,
    as numba builds one at compile time (``.max`` of int16 is an int, ``.eps`` of float32 a
    float32)."""
    info_of, cls, kind = how
    nargs(lw, node, name, 1)
    v = lw.expr(node.args[0])
    if isinstance(v, ir.Expr):
        t = v.type.dtype if isinstance(v.type, T.Array) else v.type
    else:
        t = lw.dtype_of(v, node.args[0])
    try:
        info = info_of(t.np_dtype)
    except (ValueError, AttributeError, TypeError):
        raise lw.error(f"{name}() of {t}: numpy has no such information (it takes {kind} type)", node) from None
    return PyObj(cls(*(getattr(info, a) for a in cls._fields)), f"{name}(...)")


@lowers(np.dtype)
def _dtype(lw, node, name):
    nargs(lw, node, name, 1)
    arg = node.args[0]
    val = arg.value if isinstance(arg, ast.Constant) else lw.expr(arg)
    val = val.value if isinstance(val, PyObj) else val
    try:
        return PyObj(np.dtype(val), "np.dtype(...)")
    except TypeError:
        raise lw.error(f"np.dtype() of {val!r}", node) from None
