"""Complex numbers in kernels: their parts, ``z.real``/``z.imag``/``z.conjugate()``, and the
operators the IR has no node for (``/``, ``**``, numpy's ordering), which call the device
functions of ``pykern/lang/complex_math.py`` (``stubs.DEVICE_LIBRARIES["cmath"]``) -- a
result where a part of the argument is infinite or NaN replaced by a row of a const table of
CPython's (or numpy's) special values."""

from __future__ import annotations

import numpy as np

from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic
from pykern.frontend.values import PyObj, is_weak, weakval
from pykern.lang import stubs


def complex_of_value(lw, v, node):
    """``v`` as a complex value: complex stays, reals become complex of their precision."""
    if isinstance(v.type, T.Complex):
        return v
    if is_weak(v):
        return lw.const(complex(v.value), T.complex128, node, weak=True)
    return lw.cast(v, T.complex_of(v.type if isinstance(v.type, T.Float) else T.float64), node)


def parts(lw, z, node):
    """(real, imag) expressions of a complex value (evaluated once)."""
    z = lw.once(z, node)
    f = z.type.component
    if isinstance(z, ir.Const):
        c = complex(z.value)
        return lw.const(c.real, f, node), lw.const(c.imag, f, node)
    return intrinsic(lw, "real", [z], f, node), intrinsic(lw, "imag", [z], f, node)


def make(lw, re, im, ct, node):
    """The complex number of type ``ct`` with parts ``re``, ``im``."""
    f = ct.component
    return intrinsic(lw, "complex", [lw.cast(re, f, node), lw.cast(im, f, node)], ct, node)


def real_imag(lw, v, attr, node):
    """``x.real`` / ``x.imag`` of any number (as numpy scalars have them)."""
    t = v.type
    if is_weak(v):
        return lw.pyconst(getattr(v.value, attr), node)
    if isinstance(t, T.Complex):
        if isinstance(v, ir.Const):
            return lw.const(getattr(complex(v.value), attr), t.component, node)
        return intrinsic(lw, attr, [v], t.component, node)
    if isinstance(t, T.Boolean):
        t = T.int64
        v = lw.cast(v, t, node)
    return v if attr == "real" else lw.const(0, t, node)


def number_method(lw, node):
    """``z.conjugate()`` / ``z.conj()``; None when ``node.func``'s base is not a kernel value."""
    base = lw.expr(node.func.value)
    if isinstance(base, PyObj) and isinstance(base.value, (int, float, complex, np.number)):
        base = lw.to_ir(base, node.func.value)  # a frozen number
    if not isinstance(base, ir.Expr):
        return None
    if node.args or node.keywords:
        raise lw.error(f"{node.func.attr}() takes no arguments", node)
    return conjugate_value(lw, base, node)


def conjugate_value(lw, z, node):
    if not z.type.is_scalar:
        raise lw.error(f"a {z.type} value has no method '{getattr(node.func, 'attr', 'conjugate')}'", node)
    if not isinstance(z.type, T.Complex):
        return z  # conjugate of a real number is itself
    if is_weak(z):
        return lw.pyconst(z.value.conjugate(), node)
    re, im = parts(lw, z, node)
    return make(lw, re, ir.UnaryOp("-", im, im.type, lw.loc(node)), z.type, node)


def complex_abs(lw, z, node):
    # numba's abs, np.abs and np.absolute of a complex are all math.hypot (numbers.complex_abs_impl),
    # correctly rounded where numpy's npy_cabsf can be an ulp off
    re, im = parts(lw, z, node)
    return intrinsic(lw, "hypot", [re, im], z.type.component, node)


def library_call(lw, fname, args, node):
    """Call device function ``<cmath library>.<fname>`` on float args; returns its IR call."""
    dev = getattr(stubs.DEVICE_LIBRARIES["cmath"], fname)
    fn = lw.mb.device_function(dev.py_func, [a.type for a in args], lw.loc(node))
    return ir.Call(fn.name, args, fn.return_type, lw.loc(node))


def library_complex(lw, fname, args, ct, node, special=None):
    """A complex result of ``<cmath library>.<fname>(*args)`` (which returns a (re, im) tuple);
    with ``special`` (a Python ``cmath`` function) an argument with an infinite or NaN
    part gets Python's special value, as numba.cuda gives it."""
    r = lw.temp(library_call(lw, fname, args, node), node)
    f = ct.component
    loc = lw.loc(node)
    # a part need not be of the component type: a branch assigning a float64 literal
    # (``re = math.inf``) widens the variable to float64, as numba unifies it
    re, im = (lw.cast(ir.TupleGet(r, k, r.type.elems[k], loc), f, node) for k in (0, 1))
    if special is not None:
        re, im = _special_values(lw, special, args, f, re, im, node)
    return intrinsic(lw, "complex", [re, im], ct, node)


_SPECIAL_TABLES = {}


def _special_values(lw, pyfunc, args, f, re, im, node):
    """``(re, im)``, replaced by a row of ``special_table(pyfunc)`` where it has one."""
    cmath_library = stubs.DEVICE_LIBRARIES["cmath"]
    key = (pyfunc, f)
    tab = _SPECIAL_TABLES.get(key)
    if tab is None:
        tab = _SPECIAL_TABLES[key] = cmath_library.special_table(pyfunc).astype(f.np_dtype)
    loc = lw.loc(node)
    k = lw.temp(library_call(lw, "cspecial_index", args[:2], node), node)
    row = lw.temp(ir.IfExp(ir.Compare("<", k, ir.Const(0, k.type, loc), T.boolean, loc),
                           ir.Const(0, k.type, loc), k, k.type, loc), node)
    arr = lw.const_array(tab, f"cmath_{pyfunc.__name__}_special", node)
    cell = [ir.Load(arr, [row, ir.Const(c, T.int64, loc)], f, loc) for c in range(3)]
    use = lw.temp(ir.BoolOp("and", [ir.Compare(">=", k, ir.Const(0, k.type, loc), T.boolean, loc),
                                    ir.Compare("!=", cell[2], ir.Const(0.0, f, loc), T.boolean, loc)], T.boolean, loc),
                  node)
    return ir.IfExp(use, cell[0], re, f, loc), ir.IfExp(use, cell[1], im, f, loc)


def complex_order(lw, op, a, b, node):
    """``a < b`` ... of complex numbers as numpy's ufuncs order them (``np.less`` and friends):
    by the real parts, then the imaginary parts; a pair with a NaN part is unordered."""
    t = infer.common_type(a.type, weakval(a), b.type, weakval(b))
    args = [p for v in (a, b) for p in parts(lw, lw.cast(v, t, node), node)]
    return library_call(lw, {"<": "clt", "<=": "cle", ">": "cgt", ">=": "cge"}[op], args, node)


def complex_div(lw, a, b, node):
    """The ``/`` operator on complex operands (already of one complex type): CPython's
    algorithm, as numba's operator (``np.divide`` keeps numpy's Smith division, as numba's
    ufunc loop)."""
    ar, ai = parts(lw, a, node)
    br, bi = parts(lw, b, node)
    return library_complex(lw, "cdiv", [ar, ai, br, bi], a.type, node)


def complex_pow(lw, a, b, node):
    """``a ** b`` on complex operands (already of one complex type)."""
    ar, ai = parts(lw, a, node)
    br, bi = parts(lw, b, node)
    return library_complex(lw, "cpow", [ar, ai, br, bi], a.type, node)
