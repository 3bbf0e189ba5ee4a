"""Whole-module facts the frontend, codegen and the runtime need: does a function (through
the device functions it calls, transitively) use a block barrier, a wave operation, the
dynamic shared buffer, or ``raise``? Also the one walk over IR nodes they share.

It reads nothing but ``frontend/ir.py``, so codegen may import it (ARCHITECTURE.md, Layers):
the frontend records the facts on each ``ir.Function`` (``scan``), codegen asks for them per
function name (``function_facts``) -- one implementation, one set of predicates.

Example::

    >>> import pykern as cuda
    >>> from pykern.frontend import compile_ir, parse_signature
    >>> def block_copy(x, y):
    ...     s = cuda.shared.array(64, cuda.float32)
    ...     s[cuda.threadIdx.x] = x[cuda.threadIdx.x]
    ...     cuda.syncthreads()
    ...     y[cuda.threadIdx.x] = s[63 - cuda.threadIdx.x]
    >>> module = compile_ir(block_copy, parse_signature("void(float32[::1], float32[::1])")[1])
    >>> scan(module)   # compile_ir has run it already; it only sets flags
    >>> module.kernel.uses_barrier, module.kernel.uses_wave_ops
    (True, False)
    >>> function_facts(module)[module.kernel.name]
    Facts(barrier=True, wave=False, dynamic_shared=False, raises=False)
"""

from __future__ import annotations

from typing import NamedTuple

from pykern.frontend import ir

BARRIERS = frozenset(ir.intrinsic_names("barrier"))
WAVE_OPS = frozenset(ir.intrinsic_names("wave"))


class Facts(NamedTuple):
    """What a function uses, itself or through the functions it calls."""

    barrier: bool
    wave: bool
    dynamic_shared: bool
    raises: bool


def parts(n) -> list:
    """The fields of IR node ``n`` that hold IR: nodes and lists of them."""
    return [v for v in n.__dict__.values() if isinstance(v, (ir.Expr, ir.Stmt, list))]


def walk(node):
    """Every Expr/Stmt reachable from ``node`` (a node or a list of them): a list's items in
    order, each node before its parts (whose order is their stack's: last field first)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(reversed(n))
            continue
        if isinstance(n, (ir.Expr, ir.Stmt)):
            yield n
            stack.extend(parts(n))


def is_dynamic_shape(shape) -> bool:
    """``shared.array(0, dtype)``'s shape: the dynamic shared buffer."""
    if isinstance(shape, int):
        return shape == 0
    return tuple(shape) == (0,)


def direct_facts(fn: ir.Function):
    """``(Facts of fn alone, names of the functions it calls)``."""
    barrier = wave = dyn = raises = False
    callees = set()
    for n in walk(fn.body):
        if isinstance(n, ir.Intrinsic):
            barrier |= n.name in BARRIERS
            wave |= n.name in WAVE_OPS
        elif isinstance(n, ir.AllocArray):
            dyn |= n.space == "shared" and is_dynamic_shape(n.shape)
        elif isinstance(n, ir.Call):
            callees.add(n.func)
        elif isinstance(n, ir.Raise):
            raises = True
    return Facts(barrier, wave, dyn, raises), callees


def function_facts(module: ir.Module) -> dict:
    """``{function name: Facts}`` of every function of ``module`` (the kernel included),
    each including what its callees use. A function is listed under its key in
    ``module.functions`` and under its ``name`` (callers name it by the one, targets by the other)."""
    funcs = dict(module.functions)
    for fn in list(funcs.values()):
        funcs.setdefault(fn.name, fn)
    funcs[module.kernel.name] = module.kernel
    direct = {name: direct_facts(fn) for name, fn in funcs.items()}
    out = {}
    for name in funcs:
        acc = [False] * 4
        seen, todo = set(), [name]
        while todo:
            cur = todo.pop()
            if cur in seen or cur not in direct:
                continue
            seen.add(cur)
            facts, callees = direct[cur]
            acc = [a or f for a, f in zip(acc, facts)]
            todo.extend(callees)
        out[name] = Facts(*acc)
    return out


def scan(module: ir.Module) -> None:
    """Set ``uses_barrier``/``uses_wave_ops``/``uses_dynamic_shared``/``raises`` on
    every function of ``module``, including what its callees use."""
    facts = function_facts(module)
    for key, fn in [*module.functions.items(), (module.kernel.name, module.kernel)]:
        fn.uses_barrier, fn.uses_wave_ops, fn.uses_dynamic_shared, fn.raises = facts[key]


def reachable(module: ir.Module) -> list:
    """Names of the device functions the kernel reaches, callees first."""
    calls = {name: direct_facts(fn)[1] for name, fn in module.functions.items()}
    order, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        for c in sorted(calls.get(name, ())):
            visit(c)
        if name in module.functions:
            order.append(name)

    for c in sorted(direct_facts(module.kernel)[1]):
        visit(c)
    return order
