"""numpy's whole-array reductions inside kernels, as numba.cuda compiles them:
``np.sum(a)``, ``a.max()``, ``np.nanmean(a)``, ``np.median(a)``, ``a.argmin()``...

Each reduction is a pykern device function generated per (reduction, ndim, result
type, element kind): a loop nest over the array's elements in C order, as numba's
``np.nditer``/``.flat`` loops are, with numba's algorithms (a sequential sum, not
numpy's pairwise one; ``min``/``max``/``argmin``/``argmax`` stop at the first NaN;
``var`` is the mean of squared deviations from the mean). The frontend
(``calls.reductions``) picks the result type numba's typing gives and calls
``device_function(...)``. ``median`` needs no workspace (numba.cuda's copies the
array): it counts, for each element, the elements below it -- O(n^2) -- and is NaN
when any element is, as numpy's.

Example (what the frontend does for ``s = a.sum()`` of a 2-d float32 array)::

    s = device_function("sum", 2, "float32", "f")(a)
"""

from __future__ import annotations

import cmath
import functools
import math

import numpy as np

from pykern.dispatch.dispatcher import jit
from pykern.dispatch.generated import define

# numpy's messages for reductions of an empty array
_EMPTY = {
    "min": "zero-size array to reduction operation minimum which has no identity",
    "max": "zero-size array to reduction operation maximum which has no identity",
    "nanmin": "zero-size array to reduction operation fmin which has no identity",
    "nanmax": "zero-size array to reduction operation fmax which has no identity",
    "argmin": "attempt to get argmin of an empty sequence",
    "argmax": "attempt to get argmax of an empty sequence",
    "pymin": "min() arg is an empty sequence",
    "pymax": "max() arg is an empty sequence",
}


def _isnan(kind: str, x: str) -> str:
    """Python text testing ``x`` for NaN, for elements of numpy kind ``kind``."""
    return {"f": f"math.isnan({x})", "c": f"cmath.isnan({x})"}.get(kind, "False")


def _nest(ndim: int, body: list, var: str = "v", i: str = "i", indent: int = 0) -> list:
    """Lines looping over every element of ``a`` in C order: ``var = a[i0, i1, ...]``, then ``body``."""
    lines = ["    " * (indent + d) + f"for {i}{d} in range(a.shape[{d}]):" for d in range(ndim)]
    index = ", ".join(f"{i}{d}" for d in range(ndim)) or "()"
    inner = "    " * (indent + ndim)
    return lines + [inner + f"{var} = a[{index}]"] + [inner + line for line in body]


def _first(ndim: int) -> str:
    return "a[" + (", ".join(["0"] * ndim) or "()") + "]"


def _accumulate(ndim, op, init, kind, skip_nan=False):
    test = [f"if not {_isnan(kind, 'v')}:", f"    c {op}= rt(v)"] if skip_nan and kind in "fc" else [f"c {op}= rt(v)"]
    return ["c = rt(%d)" % init, *_nest(ndim, test), "return c"]


def _mean_lines(ndim, kind, skip_nan, acc="rt"):
    """Lines leaving the mean in ``m`` (``n``: the count of elements taken)."""
    if not (skip_nan and kind in "fc"):
        return [f"c = {acc}(0)", *_nest(ndim, [f"c += {acc}(v)"]), "n = a.size", "m = rt(c / n)"]
    keep = [f"if not {_isnan(kind, 'v')}:", f"    c += {acc}(v)", "    n += 1"]
    return [f"c = {acc}(0)", "n = 0", *_nest(ndim, keep), "m = rt(c / n)"]


def _var_lines(ndim, kind, skip_nan):
    """Lines leaving the variance in ``var``: numba's mean of squared deviations."""
    sq = "d.real * d.real + d.imag * d.imag" if kind == "c" else "d * d"
    dev = ["d = v - m", f"ssd += {sq}"]
    if skip_nan and kind in "fc":
        dev = [f"if not {_isnan(kind, 'v')}:"] + ["    " + line for line in dev]
    return [*_mean_lines(ndim, kind, skip_nan), "ssd = np.float64(0)", *_nest(ndim, dev), "var = ft(ssd / n)"]


def _extreme(ndim, kind, less, name):
    """min/max (stop at the first NaN, as numba) and argmin/argmax (the first index of the extreme)."""
    cmp = "v < m" if less else "v > m"
    arg = name.startswith("arg")
    lines = ["if a.size == 0:", f"    raise ValueError({_EMPTY[name]!r})", f"m = {_first(ndim)}"]
    body = [f"if {cmp}:", "    m = v"]
    if arg:
        lines += ["mi = 0", "k = 0"]
        body += ["    mi = k", "k += 1"]
    if kind in "fc":
        lines += [f"if {_isnan(kind, 'm')}:", "    return " + ("0" if arg else "m")]
        body = [f"if {_isnan(kind, 'v')}:", "    return " + ("k" if arg else "v")] + body
    return lines + _nest(ndim, body) + ["return " + ("mi" if arg else "m")]


def _nan_extreme(ndim, kind, less, name):
    # numba's nanmin/nanmax: a NaN first element is replaced by the first number after it
    cmp = "m < v" if less else "m > v"
    keep = f"not {cmp} and not {_isnan(kind, 'v')}" if kind in "fc" else f"not {cmp}"
    lines = ["if a.size == 0:", f"    raise ValueError({_EMPTY[name]!r})", f"m = {_first(ndim)}"]
    return lines + _nest(ndim, [f"if {keep}:", "    m = v"]) + ["return m"]


def _median(ndim, kind):
    # the k-th smallest x has fewer than k+1 elements below it and at least k+1 at or below it
    count = ["if w < x:", "    lt += 1", "elif w == x:", "    eq += 1"]
    pick = ["lt = 0", "eq = 0", *_nest(ndim, count, "w", "j", indent=0),
            "if lt <= k - 1 and k - 1 < lt + eq:", "    lo = x", "if lt <= k and k < lt + eq:", "    hi = x"]
    lines = ["n = a.size", "if n == 0:", "    return rt(math.nan)"]
    if kind == "f":
        lines += _nest(ndim, ["if math.isnan(v):", "    return rt(v)"])
    lines += ["k = n // 2", f"lo = {_first(ndim)}", "hi = lo", *_nest(ndim, pick, "x")]
    return lines + ["if n % 2 == 1:", "    return rt(hi)", "return rt((rt(lo) + rt(hi)) / 2)"]


def _body(name, ndim, kind):
    if name in ("sum", "nansum"):
        return _accumulate(ndim, "+", 0, kind, name == "nansum")
    if name in ("prod", "nanprod"):
        return _accumulate(ndim, "*", 1, kind, name == "nanprod")
    if name in ("mean", "nanmean"):
        acc = "np.float64" if name == "nanmean" and kind != "c" else "rt"  # numba's nanmean adds in float64
        return [*_mean_lines(ndim, kind, name == "nanmean", acc), "return m"]
    if name in ("var", "nanvar"):
        return [*_var_lines(ndim, kind, name == "nanvar"), "return var"]
    if name in ("std", "nanstd"):
        return [*_var_lines(ndim, kind, name == "nanstd"), "return ft(math.sqrt(np.float64(var)))"]
    if name in ("min", "max", "argmin", "argmax"):
        return _extreme(ndim, kind, name.endswith("min"), name)
    if name in ("nanmin", "nanmax"):
        return _nan_extreme(ndim, kind, name == "nanmin", name)
    if name in ("pymin", "pymax"):
        # builtin min(a)/max(a) iterate as Python's do: a later element replaces the pick only when it
        # compares less/greater, so a NaN is skipped unless it comes first (numba's: max([nan, 3]) is nan)
        cmp = "v < m" if name == "pymin" else "v > m"
        return ["if a.size == 0:", f"    raise ValueError({_EMPTY[name]!r})", f"m = {_first(ndim)}",
                *_nest(ndim, [f"if {cmp}:", "    m = v"]), "return m"]
    if name == "all":
        return [*_nest(ndim, ["if v == 0:", "    return False"]), "return True"]  # NaN is true, as in numpy
    if name == "any":
        return [*_nest(ndim, ["if v != 0:", "    return True"]), "return False"]
    if name == "median":
        return _median(ndim, kind)
    raise KeyError(name)


@functools.lru_cache(maxsize=None)
def device_function(name: str, ndim: int, result: str, kind: str):
    """The device function computing reduction ``name`` of an ``ndim``-d array whose
    elements are of numpy kind ``kind`` ("b", "i", "u", "f", "c"), with result (and
    accumulator) type ``result`` (a numpy scalar type name)."""
    rt = np.dtype(result).type
    ft = np.dtype(result).type(0).real.dtype.type  # var/std of complex values are real
    fname = f"pk_{name}_{ndim}d"
    text = "\n".join([f"def {fname}(a):", *["    " + line for line in _body(name, ndim, kind)]]) + "\n"
    ns = {"math": math, "cmath": cmath, "np": np, "rt": rt, "ft": ft}
    return jit(device=True)(define(fname, text, ns))


import sys as _sys  # noqa: E402

from pykern.lang.stubs import register_device_library  # noqa: E402

register_device_library("reductions", _sys.modules[__name__])
