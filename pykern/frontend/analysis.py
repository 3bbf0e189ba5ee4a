"""Whole-module facts codegen and the runtime need: does a function (through
the device functions it calls, transitively) use a block barrier, a wave
operation, the dynamic shared buffer, or ``raise``?

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
"""

from __future__ import annotations

from pykern.frontend import infer
from pykern.frontend import ir


def _walk_exprs(stmts):
    """Every expression in a statement list (depth first)."""
    for s in stmts:
        if isinstance(s, ir.Assign):
            yield from _expr_tree(s.value)
        elif isinstance(s, ir.Store):
            yield from _expr_tree(s.array)
            for i in s.indices:
                yield from _expr_tree(i)
            yield from _expr_tree(s.value)
        elif isinstance(s, ir.ExprStmt):
            yield from _expr_tree(s.value)
        elif isinstance(s, ir.If):
            yield from _expr_tree(s.cond)
            yield from _walk_exprs(s.then)
            yield from _walk_exprs(s.orelse)
        elif isinstance(s, ir.While):
            yield from _expr_tree(s.cond)
            yield from _walk_exprs(s.body)
        elif isinstance(s, ir.ForRange):
            for e in (s.start, s.stop, s.step):
                yield from _expr_tree(e)
            yield from _walk_exprs(s.body)
        elif isinstance(s, ir.Return) and s.value is not None:
            yield from _expr_tree(s.value)


def _raises(stmts) -> bool:
    """Does a statement list contain a ``raise`` (at any depth)?"""
    for s in stmts:
        if isinstance(s, ir.Raise):
            return True
        # every nested block (if/else, loop bodies) is a list of statements
        if any(isinstance(v, list) and _raises(x for x in v if isinstance(x, ir.Stmt)) for v in s.__dict__.values()):
            return True
    return False


def _expr_tree(e):
    yield e
    for c in e.children():
        yield from _expr_tree(c)


def direct_facts(fn: ir.Function):
    """(barrier, wave, dynamic_shared, callees) of one function alone."""
    barrier = wave = dyn = False
    callees = set()
    for e in _walk_exprs(fn.body):
        if isinstance(e, ir.Intrinsic):
            barrier |= e.name in infer.BARRIER_INTRINSICS
            wave |= e.name in infer.WAVE_INTRINSICS
        elif isinstance(e, ir.AllocArray):
            dyn |= e.space == "shared" and tuple(e.shape) == (0,)
        elif isinstance(e, ir.Call):
            callees.add(e.func)
    return barrier, wave, dyn, callees


def scan(module: ir.Module) -> None:
    """Set ``uses_barrier``/``uses_wave_ops``/``uses_dynamic_shared``/``raises`` on
    every function of ``module``, including what its callees use."""
    funcs = dict(module.functions)
    funcs.setdefault(module.kernel.name, module.kernel)
    facts = {name: direct_facts(fn) for name, fn in funcs.items()}
    raises = {name: _raises(fn.body) for name, fn in funcs.items()}
    for name, fn in funcs.items():
        b = w = d = r = False
        seen, todo = set(), [name]
        while todo:
            cur = todo.pop()
            if cur in seen or cur not in facts:
                continue
            seen.add(cur)
            fb, fw, fd, callees = facts[cur]
            b, w, d, r = b or fb, w or fw, d or fd, r or raises[cur]
            todo.extend(callees)
        fn.uses_barrier, fn.uses_wave_ops, fn.uses_dynamic_shared, fn.raises = b, w, d, r


def reachable(module: ir.Module) -> list:
    """Names of the device functions the kernel reaches, callees first."""
    facts = {name: direct_facts(fn)[3] for name, fn in module.functions.items()}
    order, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        for c in sorted(facts.get(name, ())):
            visit(c)
        if name in module.functions:
            order.append(name)

    for c in sorted(direct_facts(module.kernel)[3]):
        visit(c)
    return order
