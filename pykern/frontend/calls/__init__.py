"""Calls inside kernels, each lowered to IR by the handler ``registry`` holds for the object
called (``cuda.shared.array``, ``math.sin``, ``np.sum``, ``len``, ``operator.add``...), else
for its kind (types, classes) or, for ``value.method()``, for (kind of value, method); device
functions, user overloads and ufuncs on arrays come first. ``lower_call`` is the entry
(``lower_exprs.ExpressionLowering.expr_Call``); the typing rules are ``infer``'s.

The handlers, by domain (each module registers its own when imported: the ones below, or
``ON_DEMAND`` the first time a kernel calls one of its objects):

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

# the domain modules register their handlers as they load: these now, as the tables of kinds of
# callables and of methods of values must be whole before any call is lowered...
from pykern.frontend.calls import array_methods, builtin_funcs, conversions, debugging, externals  # noqa: F401
from pykern.frontend.calls import np_alloc, reductions, threads  # noqa: F401

from pykern.frontend.calls import device_functions, overloads, registry, ufunc_arrays
from pykern.frontend.calls.complex_values import complex_div, complex_order, complex_pow, number_method, real_imag
from pykern.frontend.calls.groups import group_attr
from pykern.frontend.calls.powers import float_int_power, is_float_int_power
from pykern.frontend.calls.registry import has_method, method_kind
from pykern.frontend.calls.static_args import NOT_STATIC, static_value

#: ...and these the first time a kernel calls an object one of them lowers (``registry.lower``
#: finds the module by the object's name in ``calls/index.py``): a first compile imports what
#: its kernel calls, not every domain (16 modules and ~10 % of the instructions of a first launch)
ON_DEMAND = tuple(f"pykern.frontend.{m}" for m in (
    "calls.atomics", "calls.complex_funcs", "calls.cuda_math", "calls.fp16", "calls.math_module", "calls.np_info",
    "calls.np_math", "calls.np_scalar", "calls.operators", "calls.pointers", "calls.printing", "calls.rounding",
    "calls.vectors", "calls.warps", "bf16_calls", "wmma_calls"))

__all__ = ["lower_call", "has_method", "method_kind", "real_imag", "number_method", "group_attr", "complex_div",
           "complex_pow", "complex_order", "is_float_int_power", "float_int_power", "NOT_STATIC", "static_value",
           "load_all", "domain_index", "write_index", "ON_DEMAND"]


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


def load_all() -> None:
    """Import every domain now (``registry.CALLS`` whole: what the tests and ``calls/index.py``'s
    writer look at)."""
    import importlib

    for m in ON_DEMAND:
        importlib.import_module(m)


def domain_index() -> dict:
    """``calls/index.py``'s table as the registry has it with every domain loaded:
    ``{registry.object_path(obj): module}`` of the objects the ``ON_DEMAND`` modules lower."""
    load_all()
    out: dict = {}
    for obj, module in registry.ORIGIN.items():
        if module not in ON_DEMAND:
            continue
        key = registry.object_path(obj)
        if key is None:
            raise ValueError(f"calls of {obj!r} ({module}) have no module and attribute that reach the object: "
                             "register them in a domain that loads with pykern.frontend.calls")
        out[key] = module
    return dict(sorted(out.items()))


def write_index() -> None:
    """Rewrite ``calls/index.py``'s table from ``domain_index()`` (after adding or moving a call
    of an ``ON_DEMAND`` domain): ``python -c "from pykern.frontend import calls; calls.write_index()"``."""
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "index.py")
    table = "#: (module, attribute path) of a called object -> the module that lowers its calls\n"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = [f"    {key!r}: {module!r}," for key, module in domain_index().items()]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:text.index(table)] + table + "DOMAIN_OF = {\n" + "\n".join(lines) + "\n}\n")
