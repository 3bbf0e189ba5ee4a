r"""What the generated kernels of ``ufuncs`` and ``reduction`` share: defining a
function from generated source text (kept in ``linecache``, so the frontend and the
cache read it like user code), a lambda rewritten as a ``def``, and telling device
operands from host ones.

Example::

    >>> f = define("twice", "def twice(x):\n    return 2 * x\n", {})
    >>> f(21), f.__code__.co_filename.startswith("<pykern-twice-")
    (42, True)
"""

from __future__ import annotations

import itertools
import linecache
import types

import numpy as np

from pykern.core import sources

_counter = itertools.count()


def define(name: str, source: str, namespace: dict):
    """Define a Python function from generated ``source`` with a real source
    (the frontend and the cache read it through ``linecache``)."""
    # the function's __module__: the user's module where known (tools report by it)
    if not namespace.get("__name__"):
        namespace["__name__"] = __name__
    define_functions(source, namespace, f"<pykern-{name}-{next(_counter)}>")
    return namespace[name]


def define_functions(source: str, namespace: dict, filename: str) -> None:
    """Define the functions of generated ``source`` in ``namespace``, their file the
    pseudo-file ``filename`` (a stable name keeps cache keys that name it stable)."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = compile(source, filename, "exec")
    exec(module, namespace)
    for code in module.co_consts:  # their text is known: no need to compile it again to check it
        if isinstance(code, types.CodeType):
            sources.remember(code, source)


def as_def(fn):
    """``fn`` itself, or for a lambda (numba's own example is
    ``cuda.reduce(lambda a, b: a + b)``) an equivalent ``def`` with real
    source, which the frontend can compile: same globals, closure values
    frozen (as numba freezes them)."""
    if getattr(fn, "__name__", "") != "<lambda>":
        return fn
    import ast
    import inspect
    import textwrap

    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        raise TypeError("the lambda's source is not available; define the function with 'def'") from None
    try:
        tree = ast.parse(src)
    except SyntaxError:  # a lambda inside a longer expression: parse the line alone
        tree = ast.parse(src.strip().rstrip(",").split("=", 1)[-1].strip())
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and tuple(a.arg for a in n.args.args) == tuple(names)]
    if len(found) != 1:
        raise TypeError("cannot tell which lambda on its line this is; define the function with 'def'")
    lam = found[0]
    text = f"def pykern_lambda({', '.join(names)}):\n    return {ast.unparse(lam.body)}\n"
    ns = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        ns[name] = cell.cell_contents
    return define("pykern_lambda", text, ns)


def is_device_operand(a) -> bool:
    """True for device memory (a DeviceArray, a foreign ``__cuda_array_interface__``
    object): results stay there. Host numpy arrays, mapped ones included, are host operands."""
    from pykern.runtime.memory.arrays import DeviceArray

    return isinstance(a, DeviceArray) or (not isinstance(a, np.ndarray) and hasattr(a, "__cuda_array_interface__"))
