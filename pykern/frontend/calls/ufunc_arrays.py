"""numpy ufuncs called on arrays inside kernels: ``np.sin(x, out)``,
``np.add(a, b, out=out)``, as numba.cuda accepts them (its kernel tests call
every ufunc this way): the calling thread loops over ``out`` (numpy
broadcasting of the inputs, scalars included) and the call's value is
``out``. The loop is written as Python AST and lowered like user code, so
every element goes through the same typing rules as ``out[i] = np.sin(x[i])``.

Also: the arithmetic ufuncs (``np.add``, ``np.multiply``, ...) on scalars
are the operators.

Example::

    @cuda.jit
    def k(x, out):
        np.sin(x, out)            # every thread writes all of out
"""

from __future__ import annotations

import ast

import numpy as np

from pykern.frontend import types as T

#: ufuncs that are Python operators
_BINARY_OPS = {
    np.add: ast.Add, np.subtract: ast.Sub, np.multiply: ast.Mult, np.true_divide: ast.Div,
    np.floor_divide: ast.FloorDiv, np.remainder: ast.Mod, np.power: ast.Pow,
    np.bitwise_and: ast.BitAnd, np.bitwise_or: ast.BitOr, np.bitwise_xor: ast.BitXor,
    np.left_shift: ast.LShift, np.right_shift: ast.RShift,
}  # fmt: skip
_UNARY_OPS = {np.negative: ast.USub, np.positive: ast.UAdd, np.invert: ast.Invert}
#: comparison ufuncs (numba.cuda's ufunc database has them): the Python comparison
_COMPARE_OPS = {
    np.greater: ast.Gt, np.greater_equal: ast.GtE, np.less: ast.Lt, np.less_equal: ast.LtE,
    np.equal: ast.Eq, np.not_equal: ast.NotEq,
}  # fmt: skip
#: logical ufuncs: both operands evaluated (no short circuit), each as its truth value (x != 0)
_LOGICAL_OPS = {np.logical_and: ast.BitAnd, np.logical_or: ast.BitOr, np.logical_xor: ast.BitXor}
_SIMPLE = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant)


def _element(f, operands, kind: str):
    """The Python expression for ufunc ``f`` of ``operands``; ``kind`` ("scalar" or "array",
    see ``infer.binop_types``) makes its operator typed by numpy's loops, not numba's
    integer rule."""
    if f in _BINARY_OPS or f in _UNARY_OPS:
        if f in _BINARY_OPS:
            op = ast.BinOp(operands[0], _BINARY_OPS[f](), operands[1])
        else:
            op = ast.UnaryOp(_UNARY_OPS[f](), operands[0])
        op.pk_ufunc = kind
        return op
    if f in _COMPARE_OPS:
        cmp = ast.Compare(operands[0], [_COMPARE_OPS[f]()], [operands[1]])
        cmp.pk_numpy_order = True  # complex operands compare as numpy orders them, not as Python refuses
        return cmp
    if f in _LOGICAL_OPS:
        truth = [ast.Compare(x, [ast.NotEq()], [ast.Constant(0)]) for x in operands]
        return ast.BinOp(truth[0], _LOGICAL_OPS[f](), truth[1])
    if f is np.logical_not:
        return ast.Compare(operands[0], [ast.Eq()], [ast.Constant(0)])
    return None


def array_form(lw, f, node, name):
    """The lowered value of ufunc call ``node``, or None when ``f`` is no ufunc or the call
    is not an array form (scalar calls go on to the registry's handler of ``f``)."""
    if not isinstance(f, np.ufunc):
        return None
    args = list(node.args)
    out_node = None
    for kw in node.keywords:
        if kw.arg == "out":
            out_node = kw.value
        else:
            return None  # where=, dtype=, casting=...: not supported, let the caller say so
    if out_node is None and len(args) == f.nin + 1:
        out_node = args.pop()
    if len(args) != f.nin:
        return None
    if isinstance(out_node, ast.Tuple) and len(out_node.elts) == 1:
        out_node = out_node.elts[0]
    vals = [lw.expr(a) for a in args]
    is_arr = [isinstance(getattr(v, "type", None), T.Array) for v in vals]
    if out_node is None:
        if any(is_arr):
            raise lw.error(f"np.{f.__name__} on arrays inside a kernel needs an output array: "
                           f"np.{f.__name__}(..., out)", node,
                           hint="kernels cannot allocate arrays; pass the result array as the last argument")
        elem = _element(f, args, "scalar")
        if elem is None:
            return None
        return lw.expr(ast.copy_location(elem, node))
    out = lw.expr(out_node)
    if not isinstance(getattr(out, "type", None), T.Array):
        if not any(is_arr):
            return None
        raise lw.error(f"the output of np.{f.__name__} must be an array", out_node)
    for a in args + [out_node]:
        if not isinstance(a, _SIMPLE):
            raise lw.error(f"arguments of np.{f.__name__}(..., out) inside a kernel must be names, attributes, "
                           "subscripts or constants", a, hint="assign the argument to a variable first")
    _loop_over_out(lw, f, node, args, vals, out_node, out.type.ndim)
    return out


def _loop_over_out(lw, f, node, args, vals, out_node, nd):
    """Lower ``for i0 in range(out.shape[0]): ... out[i0, ...] = f(x[i0, ...], ...)``, the
    inputs broadcast as numpy does (a length-1 axis repeats)."""
    # named by the call's position: the same names on every typing pass
    uid = f"{node.lineno}_{node.col_offset}"
    idx = [f"_pk_uf{uid}_{d}" for d in range(nd)]
    for n in idx:
        lw.local_names.add(n)
    operands = [_element_of(lw, f, a, v, idx) for a, v in zip(args, vals)]
    elem = _element(f, operands, "array")
    if elem is None:
        elem = ast.Call(node.func, operands, [])
    target_idx = [ast.Name(n, ast.Load()) for n in idx]
    target = ast.Subscript(out_node, target_idx[0] if nd == 1 else ast.Tuple(target_idx, ast.Load()), ast.Store())
    body = ast.Assign([target], elem)
    for d in reversed(range(nd)):
        rng = ast.Call(ast.Name("range", ast.Load()),
                       [ast.Subscript(ast.Attribute(out_node, "shape", ast.Load()), ast.Constant(d), ast.Load())], [])
        body = ast.For(ast.Name(idx[d], ast.Store()), rng, [body], [])
    for n in ast.walk(body):
        ast.copy_location(n, node)
    ast.fix_missing_locations(body)
    if _shadowed_range(lw):
        raise lw.error("np ufunc array forms need the builtin range()", node)
    lw.stmt(body)


def _element_of(lw, f, a, v, idx):
    """The element of input ``a`` (value ``v``) at the loop indices ``idx``: a scalar is itself."""
    if not isinstance(getattr(v, "type", None), T.Array):
        return a
    nd, k = len(idx), v.type.ndim
    if k > nd:
        raise lw.error(f"np.{f.__name__}: an input has {k} dimensions, the output {nd}", a)
    items = []
    for d in range(k):
        od = nd - k + d
        # numpy broadcasting: a length-1 axis repeats
        one = ast.Compare(ast.Subscript(ast.Attribute(a, "shape", ast.Load()), ast.Constant(d), ast.Load()),
                          [ast.Eq()], [ast.Constant(1)])
        items.append(ast.IfExp(one, ast.Constant(0), ast.Name(idx[od], ast.Load())))
    if not items:
        return ast.Subscript(a, ast.Tuple([], ast.Load()), ast.Load())
    return ast.Subscript(a, items[0] if k == 1 else ast.Tuple(items, ast.Load()), ast.Load())


def _shadowed_range(lw) -> bool:
    import builtins

    try:
        kind, value = lw.env.lookup("range")
    except Exception:
        return False
    return value is not builtins.range
