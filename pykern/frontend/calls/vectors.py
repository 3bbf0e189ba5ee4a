"""numba.cuda's vector-type constructors: ``float4(a, f2, b)``. Scalars convert to the base
type; vectors of the same base type contribute their elements in order. A vector is a tuple
with fields ``x y z w``."""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.registry import lowers_each
from pykern.lang import stubs


@lowers_each({vt: vt for vt in stubs.VECTOR_TYPES.values()})  # float4 is float32x4: one entry
def _vector(lw, node, name, vt):
    if node.keywords:
        raise lw.error(f"{vt.__name__}() takes positional arguments only", node)
    base = T.SCALARS[vt.base]
    elems = []
    for a in node.args:
        v = lw.value(a)
        t = v.type
        if isinstance(t, T.Tuple) and t.label in stubs.VECTOR_TYPES:
            other = stubs.VECTOR_TYPES[t.label]
            if other.base != vt.base:
                raise lw.error(f"{vt.__name__}() takes {vt.base} scalars and vectors, not a {t.label}", a)
            v = lw.once(v, a)
            elems += [lw.tuple_get(v, k, a) for k in range(len(t.elems))]
        elif t.is_scalar and not isinstance(t, T.Complex):
            elems.append(lw.cast(v, base, a))
        else:
            raise lw.error(f"{vt.__name__}() takes {vt.base} scalars and vectors, not a {t}", a)
    if len(elems) != vt.n:
        raise lw.error(f"{vt.__name__}() needs {vt.n} elements, got {len(elems)}", node,
                       "pass scalars and smaller vectors adding up to its size")
    names = tuple("xyzw"[: vt.n])
    return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems), names, vt.__name__), lw.loc(node))
