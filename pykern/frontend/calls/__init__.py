"""Calls inside kernels, each lowered to IR by the handler ``registry`` holds for the object
called (``cuda.shared.array``, ``math.sin``, ``np.sum``, ``len``, ``operator.add``...), else
for its kind (types, classes) or, for ``value.method()``, for (kind of value, method); device
functions, user overloads and ufuncs on arrays come first. ``lower_call`` is the entry
(``lower_exprs.ExpressionLowering.expr_Call``); the typing rules are ``infer``'s.

The handlers, by domain (each module registers its own when imported below):

- kernel API: ``threads`` (grid, barriers, fences), ``warps`` (shuffles, votes, match),
  ``memory`` (shared/local/const arrays), ``atomics``, ``groups`` (cooperative groups),
  ``cuda_math`` (popc, fma, cbrt, selp...), ``fp16``, ``vectors`` (``float4(...)``); ``cuda.bf16``
  and ``wmma`` are ``frontend/bf16_calls.py``'s and ``frontend/wmma_calls.py``'s
- arrays: ``np_alloc`` (np.zeros..., copies), ``array_methods`` (views, reshape, fill, item), ``pointers`` (carray/farray),
  ``reductions`` (np.sum, a.max()...), ``np_info`` (np.iinfo, np.finfo, np.dtype)
- math: ``float_math`` (what they share), ``math_module``, ``np_math`` and ``np_scalar``
  (numpy ufuncs of numbers), ``ufunc_arrays`` (ufuncs on arrays), ``powers`` (float ** int)
- complex: ``complex_values`` (parts, operators), ``complex_funcs`` (cmath, complex(), np.conj)
- builtins: ``builtin_funcs``, ``rounding``, ``conversions`` (int(), np.float32(), classes), ``debugging`` (breakpoint),
  ``operators`` (the operator module), ``printing``
- device functions: ``device_functions``, ``static_args`` (compile-time arguments), ``overloads``, ``externals``
  (``declare_device``'s external functions)

Example: ``math.sqrt(x)`` with ``x: float32`` becomes ``@sqrt(x):float32``.
"""

from __future__ import annotations

# the domain modules register their handlers as they load
from pykern.frontend.calls import array_methods, atomics, builtin_funcs, complex_funcs, conversions  # noqa: F401
from pykern.frontend.calls import cuda_math, fp16, groups, math_module, memory  # noqa: F401
from pykern.frontend.calls import debugging, externals, np_alloc, np_info, np_math, np_scalar, operators, pointers, printing  # noqa: F401
from pykern.frontend.calls import reductions, rounding, threads, vectors, warps  # noqa: F401
from pykern.frontend import bf16_calls, wmma_calls  # noqa: F401  (cuda.bf16, wmma: their modules register them)
from pykern.frontend.calls import device_functions, overloads, registry, ufunc_arrays
from pykern.frontend.calls.complex_values import complex_div, complex_order, complex_pow, number_method, real_imag
from pykern.frontend.calls.groups import group_attr
from pykern.frontend.calls.powers import float_int_power, is_float_int_power
from pykern.frontend.calls.registry import has_method, method_kind
from pykern.frontend.calls.static_args import NOT_STATIC, static_value

__all__ = ["lower_call", "has_method", "method_kind", "real_imag", "number_method", "group_attr", "complex_div",
           "complex_pow", "complex_order", "is_float_int_power", "float_int_power", "NOT_STATIC", "static_value"]


def lower_call(lw, fobj, node):
    """The IR of call ``node`` of ``fobj`` (a ``PyObj``: the called object and its spelling)."""
    f = fobj.value
    name = fobj.name or getattr(f, "__name__", "function")
    # what comes before the registry's meaning of f, in this order: a device function (whatever
    # it was bound to: `builtins.abs = my_device_abs`), a user's @overload of f, a ufunc applied
    # to arrays (np.sin(x, out))
    for first in (device_functions.lower_callee, overloads.lower_overloaded, ufunc_arrays.array_form):
        r = first(lw, f, node, name)
        if r is not None:
            return r
    return registry.lower(lw, f, node, name)
