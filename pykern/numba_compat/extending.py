"""numba.extending for kernels: ``register_jitable`` and ``overload``.

``@register_jitable`` makes a plain Python function callable from kernels and device
functions (compiled as a device function where a kernel calls it) while it stays callable
from Python::

    @register_jitable
    def clamp(x, lo, hi):
        return min(max(x, lo), hi)

``@overload(func)`` gives ``func`` -- any Python function, often one that cannot run in a
kernel as written -- an implementation in kernels, chosen while the kernel is typed: the
overload function receives the pykern types of the call's arguments (``pykern.numba_compat.numba_types``:
``isinstance(x, types.Integer)``, ``x.dtype``, ``x.ndim``...) and returns the function to
compile for them, or None to decline::

    def scale(x):
        ...

    @overload(scale)
    def ol_scale(x):
        if isinstance(x, types.Float):
            return lambda x: x * 2.0
        if isinstance(x, types.Integer):
            def impl(x):
                return x * 3
            return impl

Overloads for ``target="cuda"`` are tried before ``target="generic"`` ones (the default, as
numba's); ``target="cpu"`` ones never apply to kernels. A kernel that can reach an overloaded
function (a global, module attribute or builtin it reads) is neither stored in nor loaded from
the disk cache (its key, computed without compiling, cannot see which implementation an overload
function picks, nor whether one was registered); it is compiled once per process.
"""

from __future__ import annotations

import functools

from pykern.frontend import user_overloads as _registry

__all__ = ["overload", "register_jitable"]

_TARGETS = ("generic", "cuda", "gpu", "cpu", "npyufunc")


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False, target="generic", **kwargs):
    """numba's ``overload``: register the decorated function as a typing-time overload of
    ``func`` (see the module docstring). ``jit_options`` are the device-function options of the
    implementation (``inline="always"`` too, as ``forceinline``); ``strict`` and
    ``prefer_literal`` are accepted for numba's signature (the implementation's parameters are
    not checked against the overload function's, and literal types are not offered)."""
    if target not in _TARGETS:
        raise ValueError(f"overload target {target!r} is not one of {', '.join(_TARGETS)}")
    options = dict(jit_options or {})
    if inline == "always":
        options["forceinline"] = True

    def decorate(overload_func):
        if target != "cpu" and target != "npyufunc":
            _registry.register(func, _registry.Template(overload_func, "cuda" if target == "gpu" else target,
                                                        options))
        return overload_func

    return decorate


class Jitable:
    """What ``register_jitable`` returns: the function, still callable from Python, that
    kernels and device functions call as a device function."""

    __pykern_device__ = True
    _signatures = None

    def __init__(self, fn, options: dict):
        self.py_func = fn
        self.options = options
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)

    def __repr__(self):
        return f"<register_jitable {self.__name__}>"


def register_jitable(*args, **kwargs):
    """numba's ``register_jitable``: ``@register_jitable`` or ``@register_jitable(**options)``
    (device-function options such as ``inline="always"``)."""
    if args and kwargs or len(args) > 1:
        raise TypeError("register_jitable takes a function, or keyword options only")
    options = dict(kwargs)
    if options.get("inline") == "always":
        options["forceinline"] = True

    def wrap(fn):
        if not callable(fn) or not hasattr(getattr(fn, "py_func", fn), "__code__"):
            raise TypeError(f"register_jitable needs a Python function, not {type(fn).__name__}")
        return Jitable(getattr(fn, "py_func", fn), options)

    return wrap(args[0]) if args else wrap
