"""Which array parameters of a sanitized kernel need no shadow checks, as far as the typed IR
alone can tell (the launch decides the rest: ``runtime/cpu/sanitizer.py``, ``elision``).

Two kinds, each proven conservatively from the kernel's own body (anything unclear: checked):

* ``"readonly"``: every use of the parameter is an element read (``a[...]``) or an attribute
  (``a.shape``, ``a.size``...). No store, atomic, call, view, slice, alias or reassignment of it
  exists, so the kernel cannot write its memory through it; a read of it can only race with a
  write through another argument that overlaps it, which the launch rules out.
* ``"own"``: every use is an element read or write (no atomic) whose indices are exactly the
  thread's grid coordinates, one distinct axis per index, the same tuple at every access
  (``i = cuda.grid(1); a[i]``; ``x, y = cuda.grid(2); c[y, x]``). Two threads of a launch
  have different grid coordinates, so (when the axes not indexed have extent 1, the array's
  elements do not overlap each other and no other argument overlaps it: the launch checks) no
  element is touched by two threads.

A grid coordinate is ``blockIdx.k * blockDim.k + threadIdx.k`` in int64 (what ``cuda.grid``
lowers to), or a variable assigned exactly that once, at the kernel body's top level, and read
nowhere before. Only accesses in the kernel's own body count as elidable; a parameter passed to
a device function is not elided at all.

Example::

    >>> from pykern.frontend import ir, types as T
    >>> f32 = T.Array(T.float32, 1, "C")
    >>> gx = lambda n: ir.Cast(ir.Intrinsic(n, [], T.int32, {"axis": 0}), T.int64)
    >>> i = ir.BinOp("+", ir.BinOp("*", gx("block_idx"), gx("block_dim"), T.int64), gx("thread_idx"), T.int64)
    >>> body = [ir.Assign("i", i), ir.Store(ir.Var("out", f32), [ir.Var("i", T.int64)],
    ...                                     ir.Load(ir.Var("x", f32), [ir.Var("i", T.int64)], T.float32))]
    >>> fn = ir.Function("k", [ir.Param("x", f32), ir.Param("out", f32)], T.void, body,
    ...                  {"x": f32, "out": f32, "i": T.int64}, True)
    >>> elidable(fn)
    {'x': ('readonly', ()), 'out': ('own', (0,))}
"""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.analysis import walk

#: parameters past this many are never elided (the launch's mask is an i32; bit 31 stays clear)
MAX_ELIDED = 31


def elidable(kernel: ir.Function) -> dict:
    """``{parameter name: (kind, axes)}`` of the kernel's array parameters whose accesses the
    launch may leave unchecked: kind "readonly" (axes ``()``) or "own" (axes: the grid axis of
    each index, in index order). At most ``MAX_ELIDED`` entries, in parameter order."""
    arrays = [p.name for p in kernel.params if isinstance(p.type, T.Array) and p.type.ndim > 0]
    if not arrays:
        return {}
    grid = _grid_vars(kernel)
    uses = {name: [] for name in arrays}  # name -> [(kind, indices)], kind None: an escape
    _scan(kernel.body, uses)
    out = {}
    for name in arrays:
        u = uses[name]
        if any(k is None or k == "atomic" for k, _ in u):
            continue
        if all(k == "read" for k, _ in u):
            out[name] = ("readonly", ())
            continue
        axes = {_axes(idx, grid) for _, idx in u}
        if len(axes) == 1 and None not in axes:
            out[name] = ("own", axes.pop())
    return dict(list(out.items())[:MAX_ELIDED])


def _scan(node, uses) -> None:
    """Record every use of the watched parameters in ``node`` (a node or a list of them)."""
    if isinstance(node, (list, tuple)):
        for n in node:
            _scan(n, uses)
        return
    if isinstance(node, ir.Var):
        if node.name in uses:
            uses[node.name].append((None, None))  # any other use: it escapes
        return
    if isinstance(node, ir.Assign) and node.target in uses:
        uses[node.target].append((None, None))
    if isinstance(node, ir.ForRange) and node.var in uses:
        uses[node.var].append((None, None))
    kind = {ir.Load: "read", ir.Store: "write", ir.Atomic: "atomic", ir.ArrayAttr: "attr"}.get(type(node))
    arr = getattr(node, "array", None) if kind else None
    if isinstance(arr, ir.Var) and arr.name in uses:
        if kind != "attr":
            uses[arr.name].append((kind, tuple(node.indices)))
        for f in ir.fields(node):
            if f != "array":
                _scan(getattr(node, f), uses)
        return
    if isinstance(node, (ir.Expr, ir.Stmt)):
        for f in ir.fields(node):
            v = getattr(node, f)
            if isinstance(v, (ir.Expr, ir.Stmt, list, tuple)):
                _scan(v, uses)


def _axes(indices, grid):
    """The grid axis of each index (a tuple of distinct axes), or None when one is not a grid
    coordinate."""
    axes = tuple(_grid_axis(i, grid) for i in indices)
    if not axes or None in axes or len(set(axes)) != len(axes):
        return None
    return axes


def _grid_vars(kernel: ir.Function) -> dict:
    """``{variable: axis}`` of the variables that hold a grid coordinate wherever they are read:
    assigned once, at the body's top level, to a grid coordinate, read nowhere before that."""
    counts = {}
    _count_assigns(kernel.body, counts)
    params = {p.name for p in kernel.params}
    grid = {}
    for pos, s in enumerate(kernel.body):
        if not isinstance(s, ir.Assign) or counts.get(s.target) != 1 or s.target in params:
            continue
        axis = _grid_axis(s.value, grid)
        if axis is None or _reads(kernel.body[:pos + 1], s.target):
            continue
        grid[s.target] = axis
    return grid


def _count_assigns(stmts, counts) -> None:
    for s in walk(stmts):
        if isinstance(s, ir.Assign):
            counts[s.target] = counts.get(s.target, 0) + 1
        elif isinstance(s, ir.ForRange):
            counts[s.var] = counts.get(s.var, 0) + 2  # a loop variable is never one value


def _reads(stmts, name) -> bool:
    return any(isinstance(n, ir.Var) and n.name == name for n in walk(stmts))


def _grid_axis(e, grid):
    """The axis ``e`` is the thread's grid coordinate along (int64), else None."""
    if isinstance(e, ir.Var):
        return grid.get(e.name) if e.type == T.int64 else None
    if not (isinstance(e, ir.BinOp) and e.op == "+" and e.type == T.int64):
        return None
    for prod, tid in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
        a = _widened(tid, "thread_idx")
        if a is None or not (isinstance(prod, ir.BinOp) and prod.op == "*" and prod.type == T.int64):
            continue
        pair = {_widened(prod.lhs, "block_idx"), _widened(prod.rhs, "block_dim")}
        pair2 = {_widened(prod.rhs, "block_idx"), _widened(prod.lhs, "block_dim")}
        if pair == {a} or pair2 == {a}:
            return a
    return None


def _widened(e, name):
    """The axis of ``int64(@name(axis=k):int32)``, else None."""
    if isinstance(e, ir.Cast) and e.type == T.int64 and isinstance(e.value, ir.Intrinsic):
        i = e.value
        if i.name == name and not i.args and i.type == T.int32:
            return i.attrs.get("axis")
    return None
