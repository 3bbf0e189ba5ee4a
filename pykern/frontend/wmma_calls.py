"""``pykern.wmma``: matrix fragments in the style of rocWMMA (which mirrors CUDA's ``wmma``).

A wave (64 lanes on CDNA, 32 on RDNA) multiplies ``m x k`` by ``k x n`` tiles on the matrix cores::

    from pykern import wmma
    a = wmma.fragment(wmma.matrix_a, 16, 16, 16, pykern.float16, wmma.row_major)
    b = wmma.fragment(wmma.matrix_b, 16, 16, 16, pykern.float16, wmma.col_major)
    c = wmma.fragment(wmma.accumulator, 16, 16, 16, pykern.float32)
    wmma.fill_fragment(c, 0.0)
    wmma.load_matrix_sync(a, A, offset, lda)      # A's element (i, k) at A.flat[offset + i*lda + k]
    wmma.load_matrix_sync(b, B, offset, ldb)      # col_major: (k, j) at B.flat[offset + j*ldb + k]
    wmma.mma_sync(c, a, b, c)                     # c = a @ b + c
    wmma.store_matrix_sync(C, offset, c, ldc, wmma.mem_row_major)

CUDA's pointer is an array and an element offset (``array.flat[offset]`` is the tile's first
element; the array must be C-contiguous, in global, shared or local memory, of the fragment's
element type). Accumulators are loaded and stored with a memory layout argument
(``mem_row_major``/``mem_col_major``). Every lane of the wave must make the same call with the
same arguments, as on CUDA; the tile must lie inside the array (not checked, as CUDA's pointers).

Configurations ``(m, n, k, input, accumulator)``: ``pykern.core.matrix_shapes.CONFIGS``. The
frontend refuses one that no GPU has; the amdgpu target one its arch lacks, naming what the arch
offers. The cpu target computes every configuration with the order of ``lowering/matrix_reference.py``.
"""

from __future__ import annotations

from pykern.core import matrix_shapes
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.registry import lowers
from pykern.frontend.values import PyObj
from pykern.lang import stubs

_USES = ("matrix_a", "matrix_b", "accumulator")
_LAYOUTS = {"row_major": "row", "col_major": "col"}
_MEM_LAYOUTS = {"mem_row_major": "row", "mem_col_major": "col"}
_INPUTS = {c[3] for c in matrix_shapes.ALL}
_ACCS = {c[4] for c in matrix_shapes.ALL}


def _marker(lw, node, what, allowed):
    """The name of a ``wmma.<marker>`` argument (``wmma.matrix_a``...), one of ``allowed``."""
    v = lw.expr(node)
    name = getattr(v.value, "_pk_name", "") if isinstance(v, PyObj) else ""
    short = name[5:] if name.startswith("wmma.") else ""
    if short not in allowed:
        raise lw.error(f"{what} must be one of {', '.join('wmma.' + a for a in allowed)}", node)
    return short


def _frag(lw, node, what, use=None):
    v = lw.value(node)
    if not isinstance(v.type, T.Fragment):
        raise lw.error(f"{what} must be a wmma.fragment, not {v.type}", node)
    if use is not None and v.type.use not in use:
        raise lw.error(f"{what} must be a {' or '.join(use)} fragment, not {v.type}", node)
    return v


def _nargs(lw, node, which, *counts):
    if node.keywords:
        raise lw.error(f"{which}() takes positional arguments only", node)
    if len(node.args) not in counts:
        raise lw.error(f"{which}() takes {' or '.join(map(str, counts))} arguments, got {len(node.args)}", node)


@lowers(stubs.wmma.fragment)
def _fragment(lw, node, which):
    _nargs(lw, node, which, 5, 6)
    use = _marker(lw, node.args[0], "the fragment's use", _USES)
    m, n, k = (lw.const_value(a, f"{which}() shape") for a in node.args[1:4])
    dt = lw.dtype_of(lw.expr(node.args[4]), node.args[4])
    if use == "accumulator":
        if len(node.args) == 6:
            raise lw.error("an accumulator fragment has no layout (give it to load/store_matrix_sync)", node.args[5])
        layout, allowed = "", _ACCS
    else:
        if len(node.args) != 6:
            raise lw.error(f"a {use} fragment needs a layout: wmma.row_major or wmma.col_major", node)
        layout, allowed = _LAYOUTS[_marker(lw, node.args[5], "the layout", tuple(_LAYOUTS))], _INPUTS
    if str(dt) not in allowed:
        raise lw.error(f"a {use} fragment of {dt} is not supported", node.args[4],
                       f"{use} element types: {', '.join(sorted(allowed))}")
    shapes = {c[:3] for c in matrix_shapes.ALL}
    if (m, n, k) not in shapes:
        raise lw.error(f"no matrix core multiplies {m}x{n}x{k} tiles", node,
                       f"shapes: {', '.join(f'{a}x{b}x{c}' for a, b, c in sorted(shapes))}")
    return ir.Intrinsic("frag_new", [], T.Fragment(use, m, n, k, dt, layout), {}, lw.loc(node))


@lowers(stubs.wmma.fill_fragment)
def _fill(lw, node, which):
    _nargs(lw, node, which, 2)
    f = _frag(lw, node.args[0], "the fragment")
    v = lw.value(node.args[1])
    if not v.type.is_scalar or isinstance(v.type, T.Complex):
        raise lw.error(f"{which}() fills with a real number, not {v.type}", node.args[1])
    return ir.Intrinsic("frag_fill", [f, lw.cast(v, f.type.dtype, node.args[1])], T.void, {}, lw.loc(node))


def _array(lw, node, frag):
    a = lw.value(node)
    at = a.type
    if not isinstance(at, T.Array) or (at.layout != "C" and at.ndim > 0):
        raise lw.error(f"a fragment is loaded from and stored to a C-contiguous array, not {at}", node)
    if at.dtype != frag.dtype:
        raise lw.error(f"the array holds {at.dtype}, the fragment {frag.dtype}", node,
                       f"use an array of {frag.dtype} (convert with .astype on the host)")
    return a


def _int(lw, node, what):
    v = lw.value(node)
    if not isinstance(v.type, (T.Integer, T.Boolean)):
        raise lw.error(f"{what} must be an integer, not {v.type}", node)
    return lw.cast(v, T.int64, node)


@lowers(stubs.wmma.load_matrix_sync)
def _load(lw, node, which):
    _nargs(lw, node, which, 4, 5)
    f = _frag(lw, node.args[0], "the fragment")
    ft = f.type
    if ft.use == "accumulator":
        if len(node.args) != 5:
            raise lw.error("loading an accumulator needs its memory layout: wmma.mem_row_major or wmma.mem_col_major",
                           node)
        layout = _MEM_LAYOUTS[_marker(lw, node.args[4], "the memory layout", tuple(_MEM_LAYOUTS))]
    else:
        if len(node.args) != 4:
            raise lw.error(f"a {ft.use} fragment loads with its own layout ({ft.layout}_major)", node.args[4])
        layout = ft.layout
    a = _array(lw, node.args[1], ft)
    args = [f, a, _int(lw, node.args[2], "the offset"), _int(lw, node.args[3], "the leading dimension")]
    return ir.Intrinsic("frag_load", args, T.void, {"layout": layout}, lw.loc(node))


@lowers(stubs.wmma.store_matrix_sync)
def _store(lw, node, which):
    _nargs(lw, node, which, 5)
    f = _frag(lw, node.args[2], "the fragment", ("accumulator",))
    a = _array(lw, node.args[0], f.type)
    if a.type.readonly or a.type.space == "const":
        raise lw.error(f"{which}() into a read-only array", node.args[0])
    layout = _MEM_LAYOUTS[_marker(lw, node.args[4], "the memory layout", tuple(_MEM_LAYOUTS))]
    args = [a, f, _int(lw, node.args[1], "the offset"), _int(lw, node.args[3], "the leading dimension")]
    return ir.Intrinsic("frag_store", args, T.void, {"layout": layout}, lw.loc(node))


@lowers(stubs.wmma.mma_sync)
def _mma(lw, node, which):
    _nargs(lw, node, which, 4)
    d = _frag(lw, node.args[0], "d", ("accumulator",))
    a = _frag(lw, node.args[1], "a", ("matrix_a",))
    b = _frag(lw, node.args[2], "b", ("matrix_b",))
    c = _frag(lw, node.args[3], "c", ("accumulator",))
    shape = (a.type.m, a.type.n, a.type.k)
    if any((f.type.m, f.type.n, f.type.k) != shape for f in (b, c, d)):
        raise lw.error(f"{which}() of fragments of different shapes", node)
    if a.type.dtype != b.type.dtype or c.type.dtype != d.type.dtype:
        raise lw.error(f"{which}(): a and b must hold one type, c and d another ({a.type}, {b.type}, {c.type}, {d.type})",
                       node)
    cfg = shape + (str(a.type.dtype), str(c.type.dtype))
    if cfg not in matrix_shapes.ALL:
        raise lw.error(f"no matrix core computes {matrix_shapes.describe([cfg])}", node,
                       f"configurations: {matrix_shapes.describe(matrix_shapes.ALL)}")
    return ir.Intrinsic("frag_mma", [d, a, b, c], T.void, {}, lw.loc(node))


@lowers(*(getattr(stubs.wmma, n) for n in _USES + tuple(_LAYOUTS) + tuple(_MEM_LAYOUTS)))
def _marker_value(lw, node, which):
    raise lw.error(f"{which} is an argument of wmma.fragment/load/store_matrix_sync, not a function", node)



def inline_fragment_functions(module) -> None:
    """Mark every device function that makes, takes or returns a fragment ``force_inline``: a
    fragment is the address of its maker's private storage, which must outlive the call (and on a
    GPU stays in registers only inside one function)."""
    for fn in module.functions.values():
        if fn.is_kernel:
            continue
        types = [p.type for p in fn.params] + [fn.return_type]
        if any(isinstance(t, T.Fragment) for t in types) or _makes_fragment(fn.body):
            fn.force_inline = True


def _makes_fragment(stmts) -> bool:
    stack = list(stmts)
    seen = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, ir.Intrinsic) and n.name == "frag_new":
            return True
        for name in ir.fields(n):
            v = getattr(n, name)
            for x in (v if isinstance(v, list) else [v]):
                if isinstance(x, (ir.Expr, ir.Stmt)):
                    stack.append(x)
    return False
