"""Assignment to array slices: ``a[1:3] = v``, ``a[:] = 0``, ``a[i, :] = x``,
``a[:, j] = b[:, k]``, ``a[::2] = 1.5``, ``a[i] = row`` of a 2-d ``a`` -- numba's
``setitem`` of a view (``fancy_setslice``), lowered as a loop nest that stores into
the view (``ir.ArrayView``, built by ``lower_index``) with ordinary ``ir.Store``s.

What is stored, as numpy does it:

* a scalar is converted to the dtype once (the rules of ``a[i] = x``) and stored in
  every element;
* a tuple of scalars fills a 1-d slice of its length, element by element;
* an array broadcasts to the slice (numpy's rules: missing leading axes and axes of
  length 1 repeat; extra leading axes must have length 1); each element is
  converted as ``a[i] = b[j]`` converts it.

A value of a shape that does not broadcast stores nothing: with ``debug=True`` the
launch then raises ``KernelValueError`` (a ``ValueError``, numba's "cannot assign
slice from input of different size"); without it the statement does nothing, which
never writes out of bounds (numba.cuda's exception would end the thread unreported).

Source and destination in the same memory: numpy copies as if through a temporary;
a kernel has none (numba.cuda refuses array values: its copy needs NRT). When the
two views have the same strides (``a[1:] = a[:-1]``, ``a[:, 1:] = a[:, :-1]``: a
shift) the loop runs away from the overlap, as ``memmove`` does, and the result is
numpy's. Other overlapping pairs (``a[:] = a[::-1]``, ``a[:, :] = a.T``, a
broadcast row onto its own array) get the same loop; with ``debug=True`` they raise
``KernelValueError`` instead, as their result can differ from numpy's.

Code: same-shape values whose memory is apart (the usual case) take a plain loop
nest that LLVM vectorises; the others a general nest over views whose axes are
reversed where the loop must run backwards (run-time steps: no per-element selects,
and only one more loop for LLVM to optimise -- a third, vectorised, loop cost 4x the
compile time, as the cpu target's thread loop was unswitched over each variant).
"""

from __future__ import annotations

import ast

from pykern.frontend import ir
from pykern.frontend import types as T

I64 = T.int64
_MISMATCH = "cannot assign slice from input of different size"
_OVERLAP = ("slice assignment from an overlapping array with other strides "
            "(a[:] = a[::-1], a[:, :] = a.T) needs a temporary: copy the source to another array first")


def store(lw, view: ir.Expr, value: ir.Expr, node, op: str | None = None) -> None:
    """Emit ``view[...] = value`` for an ``ir.ArrayView`` (or row) ``view`` of
    at least one dimension; ``value`` is already lowered (not yet converted).
    With ``op`` (``view[...] op= value``) each element becomes ``element op v``
    with ``v`` its part of the value, computed as ``a[i] op= v`` computes it."""
    at = view.type
    if isinstance(at.dtype, T.Record):
        raise lw.error("assigning whole records (a slice or row of a record array) is not supported yet", node,
                       "assign the fields: a[i].x = ...")
    vt = value.type
    _check_static_shapes(lw, view, value, node)
    if isinstance(vt, T.Tuple):
        if not isinstance(value, ir.Var):
            value = lw.temp(value, node)
        dest = lw.temp(view, node)
        _store_tuple(lw, dest, value, node, op)
    elif isinstance(vt, T.Array):
        if isinstance(vt.dtype, T.Record):
            raise lw.error("assigning records from a record array is not supported yet", node)
        src = value if isinstance(value, ir.Var) else lw.temp(value, node)
        dest = lw.temp(view, node)
        _store_array(lw, dest, src, node, op)
    elif vt.is_scalar:
        v = value if op else lw.cast(value, at.dtype, node)
        if not isinstance(v, ir.Const):
            v = lw.temp(v, node)  # evaluated once, before any element is written
        dest = lw.temp(view, node)
        for st in _nest(lw, dest, lambda idx: _store(lw, dest, idx, v, op, node), node):
            lw.emit(st)
    else:
        raise lw.error(f"cannot assign a {vt} to a slice of {at}", node,
                       "assign a number, a tuple of numbers or an array")


# ---- shapes known at compile time: a mismatch there is a CompileError

_RUNTIME = object()  # a slice bound known only at run time


def note_assignment(lw, name: str, value: ir.Expr) -> None:
    """Remember the shape of a shared/local/const array assigned to ``name`` when that is
    the only assignment to ``name`` in the function (``sA = cuda.shared.array((4, 8), ...)``)."""
    if isinstance(value, ir.Var) and value.name in lw.__dict__.get("fixed_shapes", {}):
        shape = lw.fixed_shapes[value.name]  # a temporary holding an allocation (np.zeros((4, 4)))
    elif not isinstance(value, (ir.AllocArray, ir.ConstArray)) or tuple(value.shape) == (0,):
        return
    else:
        shape = tuple(int(s) for s in value.shape)
    counts = lw.__dict__.get("_store_counts")
    if counts is None:
        counts = {}
        for n in ast.walk(lw.node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                counts[n.id] = counts.get(n.id, 0) + 1
        lw._store_counts = counts
    if counts.get(name) == 1:
        lw.__dict__.setdefault("fixed_shapes", {})[name] = shape


def static_shape(lw, e):
    """The shape of array expression ``e`` as far as it is known at compile time: a tuple
    with None for the extents only known at run time; None when nothing is known."""
    if isinstance(e, (ir.AllocArray, ir.ConstArray)):
        return None if tuple(e.shape) == (0,) else tuple(int(s) for s in e.shape)
    if isinstance(e, ir.Var):
        return lw.__dict__.get("fixed_shapes", {}).get(e.name)
    if isinstance(e, ir.Transpose):
        inner = static_shape(lw, e.array)
        return None if inner is None else inner[::-1]
    if not isinstance(e, ir.ArrayView):
        return None
    base = static_shape(lw, e.array)
    if base is None:
        return None
    out = list(base[len(e.items):])
    for n, it in reversed(list(zip(base, e.items))):
        if not isinstance(it, ir.Slice):
            continue
        parts = [p if p is None else p.value if isinstance(p, ir.Const) else _RUNTIME
                 for p in (it.start, it.stop, it.step)]
        if any(p is _RUNTIME for p in parts):
            out.insert(0, None)
        else:
            out.insert(0, 0 if parts[2] == 0 else len(range(n)[slice(*parts)]))
    return tuple(out)


def _show(shape) -> str:
    """A shape as numpy prints it, ``?`` for an extent known only at run time."""
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _check_static_shapes(lw, view, value, node):
    dest = static_shape(lw, view)
    if dest is None:
        return
    if isinstance(value.type, T.Tuple):
        src = (len(value.type.elems),)
        fits = dest[0] is None or dest[0] == src[0]
    elif isinstance(value.type, T.Array):
        src = static_shape(lw, value)
        if src is None:
            return
        lead = len(src) - len(dest)
        fits = all(s in (1, None) for s in src[:max(0, lead)]) and all(
            s is None or d is None or s in (1, d) for s, d in zip(src[max(0, lead):], dest[max(0, -lead):]))
    else:
        return
    if not fits:
        raise lw.error(f"cannot assign slice from input of different size: the slice has shape {_show(dest)}, "
                       f"the value {_show(src)}", node)


# ---- small IR builders (int64 arithmetic, booleans)

def _c(v, loc):
    return ir.Const(v, I64, loc)


def _op(op, a, b, loc):
    return ir.BinOp(op, a, b, I64, loc)


def _cmp(op, a, b, loc):
    return ir.Compare(op, a, b, T.boolean, loc)


def _all(conds, loc):
    return conds[0] if len(conds) == 1 else ir.BoolOp("and", conds, T.boolean, loc)


def _any(conds, loc):
    return conds[0] if len(conds) == 1 else ir.BoolOp("or", conds, T.boolean, loc)


def _attr(x, attr, d, loc):
    return ir.ArrayAttr(x, attr, d, I64, loc)


def _abs(v, loc):
    return ir.IfExp(_cmp("<", v, _c(0, loc), loc), _op("-", _c(0, loc), v, loc), v, I64, loc)


def _local(lw, value, loc):
    """A temporary assigned where its statement is placed (``lw.temp`` emits at once)."""
    name = lw.declare_temp(value.type)
    return ir.Var(name, value.type, loc), ir.Assign(name, value, loc)


def _nest(lw, dest, body, node) -> list:
    """``for i0 in range(dest.shape[0]): for i1 ...: body(indices)`` (C order: the
    last axis innermost)."""
    loc = lw.loc(node)
    names = [lw.declare_temp(I64) for _ in range(dest.type.ndim)]
    stmts = body([ir.Var(n, I64, loc) for n in names])
    for d in reversed(range(dest.type.ndim)):
        stmts = [ir.ForRange(names[d], _c(0, loc), _attr(dest, "shape", d, loc), _c(1, loc), stmts, loc)]
    return stmts


def _fail(lw, message, node) -> list:
    """The statements of a failed check: a debug ``ValueError``, else nothing."""
    if not lw.mb.debug:
        return []
    call = ir.Intrinsic("value_error", [], T.void, {"message": message}, lw.loc(node))
    return [ir.ExprStmt(call, lw.loc(node))]


def _store(lw, dest, idx, v, op, node) -> list:
    """The statements of ``dest[idx] = v`` (``dest[idx] op= v`` with ``op``);
    whatever the operator's lowering emits stays inside the loop body."""
    loc = lw.loc(node)
    saved, lw.out = lw.out, []
    try:
        if op:
            v = lw.binop(op, ir.Load(dest, idx, dest.type.dtype, loc), v, node)
        return lw.out + [ir.Store(dest, idx, lw.cast(v, dest.type.dtype, node), loc)]
    finally:
        lw.out = saved


def _store_tuple(lw, dest, tup, node, op=None):
    loc = lw.loc(node)
    elems = tup.type.elems
    if dest.type.ndim != 1 or not all(e.is_scalar for e in elems):
        raise lw.error(f"a tuple can only be assigned to a 1-d slice, element by element (not {tup.type} to "
                       f"a {dest.type.ndim}-d slice)", node)
    stores = [st for k in range(len(elems)) for st in _store(lw, dest, [_c(k, loc)], lw.tuple_get(tup, k, node), op, node)]
    ok = _cmp("==", _attr(dest, "shape", 0, loc), _c(len(elems), loc), loc)
    lw.emit(ir.If(ok, stores, _fail(lw, _MISMATCH, node), loc))


def _store_array(lw, dest, src, node, op=None):
    loc = lw.loc(node)
    nd, ns = dest.type.ndim, src.type.ndim
    lead = max(0, ns - nd)  # extra leading source axes: must have length 1 (numpy)
    axis = {d: d - (nd - ns) for d in range(nd) if d - (nd - ns) >= 0}  # dest axis -> source axis
    bad = [_cmp("!=", _attr(src, "shape", k, loc), _c(1, loc), loc) for k in range(lead)]
    exact = []
    step = {}  # source axis -> 1, or 0 where it broadcasts (length 1)
    for d, e in axis.items():
        n_src, n_dst = _attr(src, "shape", e, loc), _attr(dest, "shape", d, loc)
        one = _cmp("==", n_src, _c(1, loc), loc)
        exact.append(_cmp("==", n_src, n_dst, loc))
        bad.append(ir.BoolOp("and", [_cmp("!=", n_src, n_dst, loc), ir.UnaryOp("not", one, T.boolean, loc)],
                             T.boolean, loc))
        step[e] = lw.temp(ir.IfExp(one, _c(0, loc), _c(1, loc), I64, loc), node)

    def stores(dest, src, broadcast):
        def body(idx):
            sidx = [_c(0, loc)] * lead + [_op("*", idx[d], step[e], loc) if broadcast else idx[d]
                                          for d, e in axis.items()]
            return _store(lw, dest, idx, ir.Load(src, sidx, src.type.dtype, loc), op, node)
        return body

    # the usual case: the same shape, apart in memory -- a plain loop nest that LLVM
    # vectorises; broadcasting and overlap take a second, general one
    fast, pre, gdest, gsrc = exact, [], dest, src
    if dest.type.space == src.type.space:
        fast = fast + [_apart(dest, src, loc)]
        pre, gdest, gsrc = _away_from_overlap(lw, dest, src, axis, step, node)
    copy = _nest(lw, dest, stores(dest, src, False), node)
    general = pre + _nest(lw, gdest, stores(gdest, gsrc, True), node)
    copy = [ir.If(_all(fast, loc), copy, general, loc)] if fast else general
    fits = copy if not bad else [ir.If(_any(bad, loc), _fail(lw, _MISMATCH, node), copy, loc)]
    for st in fits:
        lw.emit(st)


def _extent(x, loc):
    """(lowest, one past the highest) byte address of array ``x``'s elements
    (meaningless for an empty array, which no loop touches)."""
    lo = hi = _attr(x, "address", None, loc)
    for d in range(x.type.ndim):
        reach = _op("*", _attr(x, "strides", d, loc), _op("-", _attr(x, "shape", d, loc), _c(1, loc), loc), loc)
        neg = _cmp("<", reach, _c(0, loc), loc)
        lo = _op("+", lo, ir.IfExp(neg, reach, _c(0, loc), I64, loc), loc)
        hi = _op("+", hi, ir.IfExp(neg, _c(0, loc), reach, I64, loc), loc)
    return lo, _op("+", hi, _c(x.type.dtype.nbytes, loc), loc)


def _apart(dest, src, loc):
    d_lo, d_hi = _extent(dest, loc)
    s_lo, s_hi = _extent(src, loc)
    return ir.BoolOp("or", [_cmp(">=", d_lo, s_hi, loc), _cmp(">=", s_lo, d_hi, loc)], T.boolean, loc)


def _away_from_overlap(lw, dest, src, axis, step, node):
    """``(statements, dest', src')``: views of both arrays, each axis reversed in both where
    the loop must run backwards so that no element is overwritten before it is read (for
    equal strides: towards lower addresses when the destination lies above the source)."""
    loc = lw.loc(node)
    apart, set_apart = _local(lw, _apart(dest, src, loc), loc)
    delta = _op("-", _attr(dest, "address", None, loc), _attr(src, "address", None, loc), loc)
    up = _cmp("<=", delta, _c(0, loc), loc)
    pre = [set_apart]
    if lw.mb.debug:
        ok = ir.BoolOp("or", [apart, _same_strides(dest, src, axis, step, loc)], T.boolean, loc)
        pre.append(ir.If(ok, [], _fail(lw, _OVERLAP, node), loc))
    dsteps, ssteps = [], {}
    for d in range(dest.type.ndim):
        ascending = _cmp(">=", _attr(dest, "strides", d, loc), _c(0, loc), loc)
        back = ir.BoolOp("and", [ir.UnaryOp("not", apart, T.boolean, loc),
                                 ir.BinOp("^", ascending, up, T.boolean, loc)], T.boolean, loc)
        var, st = _local(lw, ir.IfExp(back, _c(-1, loc), _c(1, loc), I64, loc), loc)
        pre.append(st)
        dsteps.append(ir.Slice(None, None, var, loc=loc))
        if d in axis:
            ssteps[axis[d]] = ir.Slice(None, None, var, loc=loc)
    sitems = [ssteps.get(e, ir.Slice(loc=loc)) for e in range(src.type.ndim)]
    dv, set_dv = _local(lw, ir.ArrayView(dest, dsteps, ir.view_type(dest.type, dsteps), loc), loc)
    sv, set_sv = _local(lw, ir.ArrayView(src, sitems, ir.view_type(src.type, sitems), loc), loc)
    return pre + [set_dv, set_sv], dv, sv


def _same_strides(dest, src, axis, step, loc):
    """The condition under which the direction-chosen loop is numpy's copy: on every
    axis of more than one element the source steps as the destination does, and the
    axes nest like C order (each axis' stride spans all inner ones), so the loop's
    order is the memory's."""
    nd = dest.type.ndim
    conds = [_cmp("==", _attr(dest, "size", None, loc), _c(0, loc), loc)]
    per_axis = []
    for d in range(nd):
        n = _attr(dest, "shape", d, loc)
        sd = _attr(dest, "strides", d, loc)
        e = axis.get(d)
        ss = _c(0, loc) if e is None else _op("*", _attr(src, "strides", e, loc), step[e], loc)
        span = _c(0, loc)
        for k in range(d + 1, nd):
            inner = _op("*", _abs(_attr(dest, "strides", k, loc), loc),
                        _op("-", _attr(dest, "shape", k, loc), _c(1, loc), loc), loc)
            span = _op("+", span, inner, loc)
        fits = ir.BoolOp("and", [_cmp("==", ss, sd, loc), _cmp(">", _abs(sd, loc), span, loc)], T.boolean, loc)
        per_axis.append(ir.BoolOp("or", [_cmp("<=", n, _c(1, loc), loc), fits], T.boolean, loc))
    conds.append(_all(per_axis, loc))
    return ir.BoolOp("or", conds, T.boolean, loc)
