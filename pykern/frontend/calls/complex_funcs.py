"""Functions of complex numbers: the ``cmath`` module (CPython's special values where a part is
infinite or NaN), ``complex(...)``, ``np.conj``/``np.real``/``np.imag``, and numpy's math
ufuncs of a complex value (numpy's own special values)."""

from __future__ import annotations

import ast
import builtins
import cmath
import functools

import numpy as np

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import bind, intrinsic, nargs, scalar, strong
from pykern.frontend.calls.complex_values import (complex_of_value, conjugate_value, library_complex, make, parts,
                                                  real_imag)
from pykern.frontend.calls.float_math import float_args2, numpy_function
from pykern.frontend.calls.registry import lowers, lowers_each
from pykern.frontend.values import is_weak

#: cmath functions of one argument -> their device function in pykern/lang/complex_math.py
CMATH_UNARY = {
    "exp": "cexp", "log10": "clog10", "sqrt": "csqrt", "sin": "csin", "cos": "ccos", "tan": "ctan",
    "sinh": "csinh", "cosh": "ccosh", "tanh": "ctanh", "asin": "casin", "acos": "cacos", "atan": "catan",
    "asinh": "casinh", "acosh": "cacosh", "atanh": "catanh",
}  # fmt: skip


@lowers(builtins.complex)
def _complex(lw, node, name):
    """``complex()``, ``complex(x)``, ``complex(re, im)``: complex128, as Python's complex, but
    complex64 when the parts are float32 (numba's rule; a literal part stays weak)."""
    a = bind(lw, node, ["real", "imag"], {"real": None, "imag": None}, "complex")
    vals = [scalar(lw, a[k], "complex()") for k in ("real", "imag") if k in a]
    if all(is_weak(v) for v in vals):
        return lw.const(complex(*[v.value for v in vals]), T.complex128, node, weak=True)
    single = all(v.type == T.float32 or (is_weak(v) and type(v.value) in (int, float)) for v in vals)
    ct = T.complex64 if single else T.complex128
    if len(vals) == 1:
        return lw.cast(vals[0], ct, node)
    re, im = vals
    if not isinstance(re.type, T.Complex) and not isinstance(im.type, T.Complex):
        return make(lw, re, im, ct, node)
    # complex(a, b) with complex parts is a + b*1j (Python's rule)
    return lw.binop("+", lw.cast(re, ct, node), lw.binop("*", lw.cast(im, ct, node), lw.const(1j, ct, node), node), node)


@lowers(np.conj, np.conjugate)
def _np_conj(lw, node, name):
    nargs(lw, node, name, 1)
    z = scalar(lw, node.args[0], name)
    if isinstance(z.type, T.Boolean) and not is_weak(z):
        return lw.cast(z, T.int8, node)  # numba's loop for a boolean (numpy's too): int8
    return conjugate_value(lw, z, node)


@lowers_each({np.real: "real", np.imag: "imag"})
def _np_real_imag(lw, node, name, attr):
    nargs(lw, node, name, 1)
    return real_imag(lw, scalar(lw, node.args[0], name), attr, node)


def _cmath_arg(lw, node, name):
    nargs(lw, node, name, 1)
    v = scalar(lw, node.args[0], name)
    return strong(lw, complex_of_value(lw, v, node), node)


@lowers_each({getattr(cmath, n): (fname, getattr(cmath, n)) for n, fname in CMATH_UNARY.items()})
def _cmath_unary(lw, node, name, how):
    fname, pyfunc = how
    z = _cmath_arg(lw, node, name)
    re, im = parts(lw, z, node)
    return library_complex(lw, fname, [re, im], z.type, node, special=pyfunc)


@lowers(cmath.log)
def _cmath_log(lw, node, name):
    nargs(lw, node, name, 1, 2)
    if len(node.args) == 2:
        # log(z, base) = log(z) / log(base)
        z = _cmath_log(lw, _one_arg(node, 0), name)
        b = _cmath_log(lw, _one_arg(node, 1), name)
        return lw.binop("/", z, b, node)
    z = _cmath_arg(lw, node, name)
    re, im = parts(lw, z, node)
    return library_complex(lw, "clog", [re, im], z.type, node, special=cmath.log)


def _one_arg(node, k):
    c = ast.Call(func=node.func, args=[node.args[k]], keywords=[])
    return ast.copy_location(c, node)


@lowers(cmath.phase)
def _cmath_phase(lw, node, name):
    z = _cmath_arg(lw, node, name)
    re, im = parts(lw, z, node)
    return intrinsic(lw, "atan2", [im, re], re.type, node)


@lowers(cmath.polar)
def _cmath_polar(lw, node, name):
    z = _cmath_arg(lw, node, name)
    re, im = parts(lw, z, node)
    f = re.type
    r = intrinsic(lw, "hypot", [re, im], f, node)
    phi = intrinsic(lw, "atan2", [im, re], f, node)
    return ir.TupleExpr([r, phi], T.Tuple((f, f)), lw.loc(node))


@lowers(cmath.rect)
def _cmath_rect(lw, node, name):
    nargs(lw, node, name, 2)
    r, phi, ft = float_args2(lw, node)
    if ft == T.float16:
        ft = T.float32
    return library_complex(lw, "crect", [lw.cast(r, ft, node), lw.cast(phi, ft, node)], T.complex_of(ft), node,
                           special=_rect_of_complex)


def _rect_of_complex(z):
    """``cmath.rect`` of the parts of ``z``: the shape ``special_table`` tabulates."""
    return cmath.rect(z.real, z.imag)


@lowers_each({cmath.isnan: "isnan", cmath.isinf: "isinf", cmath.isfinite: "isfinite"})
def _cmath_predicate(lw, node, name, which):
    nargs(lw, node, name, 1)
    v = scalar(lw, node.args[0], name)
    if not isinstance(v.type, T.Complex):
        if not isinstance(v.type, T.Float):
            return ir.Const(which == "isfinite", T.boolean, lw.loc(node))
        return intrinsic(lw, which, [v], T.boolean, node)
    re, im = parts(lw, v, node)
    a, b = intrinsic(lw, which, [re], T.boolean, node), intrinsic(lw, which, [im], T.boolean, node)
    return lw.make_boolop("and" if which == "isfinite" else "or", [a, b], node)


def np_complex_unary(lw, which, z, node):
    """``np.sign``/``np.reciprocal``/``np.rint``/``np.square`` of the complex value ``z`` as
    numpy's loops compute them: sign and reciprocal by the library's ``csign``/``crecip``, rint
    of each part, square as ``z * z``."""
    z = lw.once(strong(lw, z, node), node)
    if which == "square":
        return lw.binop("*", z, z, node)
    re, im = parts(lw, z, node)
    if which == "rint":
        f = z.type.component
        return make(lw, intrinsic(lw, "rint", [re], f, node), intrinsic(lw, "rint", [im], f, node), z.type, node)
    return library_complex(lw, {"sign": "csign", "reciprocal": "crecip"}[which], [re, im], z.type, node)


def numpy_complex_value(lw, name, z, node):
    """numpy's ufunc ``name`` ("sqrt", "log"...) of the complex value ``z``: the cmath
    formulas, with numpy's own special values for infinite and NaN parts."""
    z = strong(lw, z, node)
    re, im = parts(lw, z, node)
    fname = {"log": "clog", "log2": "clog2"}.get(name) or CMATH_UNARY[name]
    return library_complex(lw, fname, [re, im], z.type, node, special=_numpy_complex(name))


@functools.lru_cache(maxsize=None)
def _numpy_complex(name):
    """numpy's complex128 ufunc for cmath's ``name``, as a function of a Python complex."""
    uf = numpy_function(name)

    def f(z):
        with np.errstate(all="ignore"):
            return complex(uf(np.complex128(z)))

    f.__name__ = f"np_{uf.__name__}"
    return f
