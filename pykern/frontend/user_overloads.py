"""numba.extending's typing-time overloads of Python functions (``pykern.numba_compat.extending.overload``).

An overload function is called, while a kernel is typed, with the pykern types of a call's
arguments (keyword arguments by name) and returns the implementation to compile for them --
a Python function, compiled as a device function -- or None to decline. Overloads for the
"cuda" target are tried before "generic" ones (numba-cuda prefers the target-specific
template); other targets ("cpu") never apply to kernels. Each (overload, argument types) is
asked once per process: the typing passes and every call site with those types reuse the
implementation it returned (numba caches the same way), so it specialises once.

The registry lives here, in the frontend, so ``calls`` reaches it without importing the glue
module that defines the decorators.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: the targets whose overloads apply to kernels, tried in this order
KERNEL_TARGETS = ("cuda", "generic")


@dataclass(eq=False)
class Template:
    """One ``@overload(func, target=...)``."""

    overload_func: object
    target: str
    jit_options: dict = field(default_factory=dict)
    impls: dict = field(default_factory=dict)  # argument-types key -> implementation (None: declined)


_templates: dict = {}  # func -> [Template, ...] in registration order


def register(func, template: Template) -> None:
    _templates.setdefault(func, []).append(template)


def is_overloaded(func) -> bool:
    try:
        return func in _templates
    except TypeError:  # unhashable
        return False


class Implementation:
    """What a kernel calls for an overloaded function: the implementation an overload chose,
    seen by ``calls`` as a device function (``py_func``, ``options``)."""

    __pykern_device__ = True
    _signatures = None

    def __init__(self, py_func, options: dict):
        self.py_func = py_func
        self.options = options
        self.__name__ = getattr(py_func, "__name__", "impl")


def implementation(func, argtypes: tuple, kwtypes: tuple):
    """The ``Implementation`` of ``func`` for these argument types (``kwtypes``: (name, type)
    pairs), or None when every overload declines. An overload function's own exception
    propagates (numba reports it as the call's TypingError)."""
    key = (argtypes, kwtypes)
    for target in KERNEL_TARGETS:
        for t in _templates.get(func, ()):
            if t.target != target:
                continue
            if key not in t.impls:
                t.impls[key] = _as_implementation(t.overload_func(*argtypes, **dict(kwtypes)), t)
            if t.impls[key] is not None:
                return t.impls[key]
    return None


def _as_implementation(impl, template: Template):
    if impl is None:
        return None
    py = getattr(impl, "py_func", impl)  # an implementation may be a device function already
    if not hasattr(py, "__code__"):
        raise TypeError(f"overload {getattr(template.overload_func, '__name__', '?')} returned "
                        f"{type(impl).__name__}, not a function")
    options = dict(getattr(impl, "options", None) or {}, **template.jit_options)
    return Implementation(py, options)
