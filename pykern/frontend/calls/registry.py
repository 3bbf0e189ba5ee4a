"""What each callable means in a kernel: one table keyed by the object a kernel calls.

A domain module registers a handler for the objects it lowers (as numba-cuda's
``@lower(cuda.shared.array, ...)``)::

    @lowers(math.frexp)
    def _frexp(lw, node, name): ...                 # lw: the FunctionLowerer, node: the ast.Call

    @lowers_each({np.minimum: "minimum", np.fmin: "fmin"})
    def _np_minmax(lw, node, name, which): ...      # the table's value comes last

``name`` is how the call is spelt (``np.sin``), or a kernel-language function's own name
(``shared.array``) whatever the kernel imported it as. Objects that are not registered one
by one are lowered by their kind (``lowers_kind``: classes, types, unregistered stubs), and
methods of kernel values by (kind of value, method name) (``lowers_method``). Registering an
object, kind test or method twice is an error: each call has one home. An object of a module
pykern does not import itself is registered by module and name (``lowers_attribute("pdb",
"set_trace")``) and keyed by the object once that module is loaded. A domain module of
``calls.ON_DEMAND`` loads the first time a kernel calls one of its objects: ``calls/index.py``
says which module lowers an object, by where it is found (``object_path``).
"""

from __future__ import annotations

import importlib
import sys
import threading

from pykern.frontend import types as T
from pykern.frontend.values import BoundMethod
from pykern.lang import stubs

#: the object a kernel calls -> handler(lw, node, name)
CALLS: dict = {}
#: (module name, attribute) -> handler, for an object of a module pykern need not import itself
#: (``pdb.set_trace``: pdb and what it imports cost a first compile ~5 ms): the entry moves into
#: ``CALLS`` once that module is loaded -- a kernel can only call the object after that
LAZY: dict = {}
#: (test(f), handler(lw, f, node, name)): callables recognised by what they are, not which
KINDS: list = []
#: (kind of value, method name) -> handler(lw, node, name, value), for ``value.name(...)``
METHODS: dict = {}
#: the object a kernel calls -> the module that registered its handler (what ``calls/index.py``
#: is written from)
ORIGIN: dict = {}


def hashable(f) -> bool:
    try:
        hash(f)
        return True
    except TypeError:
        return False


def _add(obj, handler) -> None:
    if not hashable(obj):
        raise TypeError(f"cannot register calls of the unhashable {obj!r}")
    if obj in CALLS:
        raise ValueError(f"calls of {obj!r} already have a handler: {CALLS[obj]!r}")
    CALLS[obj] = handler
    ORIGIN[obj] = getattr(handler, "__wrapped__", handler).__module__


def object_path(obj):
    """``(module, attribute path)`` that reaches ``obj`` (``("math", "sin")``,
    ``("pykern.lang.stubs", "atomic.add")``): how ``calls/index.py`` names the objects of the
    domains that load on demand; None when its name does not lead back to it."""
    if isinstance(obj, stubs.Stub):
        candidates = [("pykern.lang.stubs", obj._pk_name)]
    else:
        candidates = [(getattr(obj, "__module__", None), getattr(obj, "__qualname__", None))]
        candidates += [(m, getattr(obj, "__name__", None)) for m in ("numpy", "math", "cmath", "operator", "builtins")]
    for module, path in candidates:
        if isinstance(module, str) and isinstance(path, str) and _resolve(module, path) is obj:
            return (module, path)
    return None


def _resolve(module: str, path: str):
    m = sys.modules.get(module)
    for attr in path.split("."):
        m = getattr(m, attr, None)
    return m


#: the object a kernel calls -> the module of ``calls.ON_DEMAND`` that lowers it, for the
#: entries of ``calls/index.py`` whose module is loaded (a kernel can only call the object then)
_DOMAIN_OF_OBJECT: dict = {}
#: module -> [(attribute path, domain module)] of the entries not looked up yet
_PENDING: dict = {}
_pending_lock = threading.Lock()


def _load_domain(f) -> bool:
    """Import the module that lowers calls of ``f`` when ``calls/index.py`` names one (it
    registers its handlers as it loads); whether it did."""
    with _pending_lock:
        if not _PENDING and not _DOMAIN_OF_OBJECT:
            from pykern.frontend.calls.index import DOMAIN_OF

            for (module, path), domain in DOMAIN_OF.items():
                _PENDING.setdefault(module, []).append((path, domain))
        for module in [m for m in _PENDING if m in sys.modules]:
            for path, domain in _PENDING.pop(module):
                obj = _resolve(module, path)
                if obj is not None and hashable(obj):
                    _DOMAIN_OF_OBJECT[obj] = domain
        domain = _DOMAIN_OF_OBJECT.get(f)
    if domain is None:
        return False
    importlib.import_module(domain)  # (waits for a module another thread is importing)
    return True


def _given(handler, value):
    """``handler`` with ``value`` as its last argument."""

    def lower(lw, node, name):
        return handler(lw, node, name, value)

    lower.__wrapped__ = handler
    lower.__qualname__ = f"{handler.__qualname__}[{value!r}]"
    return lower


def lowers(*objects):
    """Decorator: ``handler(lw, node, name)`` lowers calls of each of ``objects``."""

    def register(handler):
        for obj in dict.fromkeys(objects):  # np.abs is np.absolute: one entry
            _add(obj, handler)
        return handler

    return register


def lowers_attribute(module: str, attr: str):
    """Decorator: ``handler(lw, node, name)`` lowers calls of ``module.attr``, without
    importing ``module`` (an entry of ``CALLS`` from when a kernel can reach it)."""

    def register(handler):
        if (module, attr) in LAZY:
            raise ValueError(f"calls of {module}.{attr} already have a handler: {LAZY[module, attr]!r}")
        LAZY[module, attr] = handler
        return handler

    return register


def _load_lazy() -> None:
    """Move the ``LAZY`` entries of the modules loaded by now into ``CALLS``."""
    for (module, attr), handler in list(LAZY.items()):
        m = sys.modules.get(module)
        if m is not None:
            del LAZY[module, attr]
            _add(getattr(m, attr), handler)


def lowers_each(table: dict):
    """Decorator: ``handler(lw, node, name, value)`` lowers calls of each key of ``table``,
    given its value (the intrinsic, the numpy name...)."""

    def register(handler):
        for obj, value in table.items():
            _add(obj, _given(handler, value))
        return handler

    return register


def lowers_kind(test):
    """Decorator: ``handler(lw, f, node, name)`` lowers calls of unregistered objects ``f``
    for which ``test(f)`` is true (the tests of all kinds exclude each other)."""

    def register(handler):
        if any(h is handler for _, h in KINDS):
            raise ValueError(f"{handler!r} already lowers a kind of callable")
        KINDS.append((test, handler))
        return handler

    return register


def method_kind(t: T.Type) -> str | None:
    """The kind of value whose methods ``METHODS`` lists: "array", "integer" (booleans too)."""
    if isinstance(t, T.Array):
        return "array"
    if isinstance(t, (T.Integer, T.Boolean)):
        return "integer"
    return None


def lowers_method(kind: str, *names):
    """Decorator: ``handler(lw, node, name, value)`` lowers ``value.name(...)`` of a value of
    ``kind`` (``method_kind``) for each of ``names``."""

    def register(handler):
        for n in names:
            if (kind, n) in METHODS:
                raise ValueError(f"the {kind} method '{n}' already has a handler")
            METHODS[(kind, n)] = handler
        return handler

    return register


def has_method(kind: str | None, name: str) -> bool:
    """Kernels may call ``value.name()`` of a value of ``kind``."""
    return (kind, name) in METHODS


def lower(lw, f, node, name):
    """The IR of call ``node`` of ``f``: its registered handler, else the one of its kind."""
    handler = CALLS.get(f) if hashable(f) else None
    if handler is None and LAZY and hashable(f):
        _load_lazy()
        handler = CALLS.get(f)
    if handler is None and hashable(f) and _load_domain(f):
        handler = CALLS.get(f)
    if handler is not None:
        return handler(lw, node, f._pk_name if isinstance(f, stubs.Stub) else name)
    for test, handler in KINDS:
        if test(f):
            return handler(lw, f, node, name)
    raise lw.error(
        f"cannot call Python function '{name}' from a kernel",
        node,
        hint="kernels can call device functions (@pykern.jit(device=True)), math/numpy math functions, "
        "builtins abs/min/max/sum/any/all/round/divmod/int/float/bool/len/ord and the pykern kernel functions",
    )


@lowers_kind(lambda f: isinstance(f, BoundMethod))
def _method(lw, bm, node, name):
    # values only have the methods lower_exprs made a BoundMethod of (has_method)
    return METHODS[(method_kind(bm.value.type), bm.attr)](lw, node, bm.attr, bm.value)
