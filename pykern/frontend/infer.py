"""Typing rules of the kernel language.

Numbers
  * Integer x integer ``+ - * // % **`` and ``& | ^`` follow numba's integer rule (its
    integer typing proposal, NBEP 1; ``nbep1_result``): the result is int64, or uint64 when
    both operands are unsigned -- small integers widen, ``uint8 + uint8`` is uint64,
    ``int32 * int32`` int64, ``uint64 % int64`` int64 (the uint64 operand converted to int64,
    as numba does). A boolean with an integer counts as signed (numba's first candidate
    wins its tie). Shifts ``<< >>`` compute in 64 bits with the left operand's signedness.
    Unary ``-``, ``+`` and ``~`` of an integer widen it to 64 bits keeping the signedness.
    An int literal (or frozen Python int) next to an integer is int64 (uint64 above int64's
    range), as numba types it: ``uint64 + 1`` is int64. Two booleans: arithmetic gives
    int64 (True + True == 2), ``& | ^`` stay boolean, ``~`` is ``not`` (numpy).
    numpy's operator ufuncs (``np.add(x, y)``, ``np.negative(x)``, ``np.maximum``) take numpy's
    loops instead, as numba picks them (``ufunc_loop``): ``np.add(int8, int8)`` is int8,
    ``np.add(True, True)`` True (a logical or), ``np.negative(True)`` int8 -1,
    ``np.true_divide(int8, int8)`` float32, ``np.add(int64, float32)`` float32.
  * Everything else promotes with numpy's ``promote_types`` (NEP 50, numpy 2):
    int64+float32 -> float64, int16+float32 -> float32, int64 with uint64 compared -> float64
    (numba resolves these the same way).
  * Python float literals and frozen Python floats are "weak" (NEP 50): a float literal takes
    the other operand's float type, or float64 if the other is an integer or boolean; an int
    literal next to a float takes the float's type (float32 * 2 stays float32 -- numba gives
    float64 there, a documented difference). Two weak constants are folded at compile time
    with Python semantics.
  * ``/`` on two integers/booleans gives float64 (both cast first). ``divmod`` of integers has
    numba's own signatures (``divmod_type``): ``divmod(uint64, int64)`` is float64.
  * Shifts and bitwise ops need integers (or booleans for & | ^); floats are a type error.
  * ``int ** int`` stays an integer (IR semantics: negative exponent -> 0 except
    base +-1); a *constant* negative exponent with an integer base is a
    CompileError (numpy raises too) -- write ``x ** -1.0``.
  * Comparisons promote both sides the same way and give boolean.
  * Conditions (if/while/not/and/or operands, ternary tests) are cast to boolean
    (``!= 0``). ``and``/``or`` of booleans are short-circuit booleans; of other
    scalars they return an operand, as in Python (operands must be side-effect
    free then).
  * Array indices are cast to int64. Storing into an array element casts to the
    array's dtype (numpy assignment: float->int truncates toward zero).
  * A variable has one type: assignments of different numeric types unify by numpy's
    promotion, as numba's ``Number.unify`` does (``s = 0`` then ``s += x[i]`` with float32 x
    makes ``s`` float64); other clashes (arrays, tuples of other lengths) are errors
    naming both types and both lines.
  * ``range`` loops: the loop variable has numba's type (``range_loop_type``): int32,
    int64 or uint64, whichever numba's Range template resolves to -- ``range(n)`` of an
    int32 is int32, of an unsigned integer uint64; an int literal bound is int64, so
    ``range(0, n)`` is int64 (signed) for any integer ``n``.

Tuples and loops
  * A tuple indexed by a constant (``t[0]``, ``t[-1]``, ``t[1:]``) keeps each
    element's type; a tuple of one scalar type may also be indexed by a run-time
    integer (a select chain; negative indices count from the end).
  * ``for x in seq`` works for 1-d arrays and tuples of one scalar type (a hidden
    int64 index loop), also inside ``enumerate`` (int64 counter) and ``zip`` (stops
    at the shortest); ``literal_unroll(t)`` copies the body per element, each copy
    with its own loop variable, so elements may differ in type; any other iterable
    except ``range`` is an error.
  * A device function's return type is the unification of its ``return``
    values; falling off the end of a function that returns values elsewhere
    returns zero(s).

Math
  * ``math.f(float32) -> float32``, ``math.f(float64) -> float64``,
    ``math.f(int or bool) -> float64``; float16 arguments are computed in float32
    and cast back. numpy's ``np.f`` take numba's loop (``float_ufunc_type``): booleans
    and integers of 16 bits or less in float32. Two-argument ``math`` functions take numba.cuda's
    signatures (``math2_signature``: ``math.copysign(int8, int8)`` is float32).
  * ``math.floor/ceil/trunc`` return int64 (Python and numba.cuda); the numpy
    versions ``np.floor`` etc. return the float type. Of an integer they are that
    integer, exactly: ``math.*`` gives int64 (uint64 stays uint64), ``np.*`` keeps the
    type (numpy >= 2.3). ``np.fmod`` of integers is integer (C remainder, 0 for a
    zero divisor), ``math.fmod`` is always float. ``math.isnan/isinf/isfinite``
    of an integer are constant.
  * ``np.minimum/np.maximum`` propagate NaN, ``np.fmin/np.fmax`` ignore it (numpy);
    builtin ``min``/``max`` follow Python's comparisons instead.
  * ``abs`` keeps the type (bool -> int64); ``min``/``max`` arguments and the branches of
    ``x if c else y`` unify as numba's do (``join_type``: numpy's promotion, an int literal
    among integers int64, so ``max(int8, 1)`` is int64; booleans compare as 0/1 and stay
    boolean), ``min(t)`` of a tuple
    reduces its elements; ``round(x)`` gives int64 for floats (round half to even), the
    same integer for ints; ``round(x, n)`` (constant n) keeps the float type.
  * ``int(x)`` -> int64, ``float(x)`` -> float64 (of a float: its type, numba's), ``bool(x)`` -> boolean,
    ``np.float32(x)`` / ``pykern.float32(x)`` -> that type (numpy cast rules).
  * ``popc/clz/ffs`` of an integer -> int32, ``brev`` keeps the type; ``fma``
    promotes like math.
"""

from __future__ import annotations

import numpy as np

from pykern.frontend import ir
from pykern.frontend import types as T


class InferError(Exception):
    """A typing rule failed; the lowerer adds the source location."""

    def __init__(self, msg: str, hint: str | None = None):
        super().__init__(msg)
        self.msg = msg
        self.hint = hint


ARITH_OPS = ("+", "-", "*", "/", "//", "%", "**")
BITWISE_OPS = ("&", "|", "^")
SHIFT_OPS = ("<<", ">>")


def literal_type(value) -> T.Type:
    """The default ("materialised") type of a Python constant."""
    t = T.python_scalar_type(value, lambda v: InferError(f"integer constant {v} does not fit in 64 bits"))
    if t is None:
        raise InferError(f"a {type(value).__name__} constant cannot be a kernel value")
    return t


def fits(value, t: T.Type) -> bool:
    if isinstance(t, T.Integer):
        return isinstance(value, int) and t.min <= value <= t.max
    return True


def weak_adopt(value, other: T.Type) -> T.Type:
    """The type a weak Python constant takes next to a strong operand of type ``other``."""
    if isinstance(value, bool):
        return T.boolean
    if isinstance(value, complex) or (isinstance(other, T.Complex) and isinstance(value, (int, float))):
        # NEP 50: a Python complex keeps the other side's precision (float32 + 1j -> complex64)
        return T.complex_of(other) if isinstance(other, (T.Float, T.Complex)) else T.complex128
    if isinstance(value, int):
        if isinstance(other, T.Float):
            return other
        if isinstance(other, T.Integer) and fits(value, other):
            return other
        return literal_type(value)
    if isinstance(value, float):
        return other if isinstance(other, T.Float) else T.float64
    return literal_type(value)


def common_type(lt: T.Type, lweak, rt: T.Type, rweak) -> T.Type:
    """Promotion of two scalar operands. ``lweak``/``rweak`` are the Python value of a
    weak constant operand, or ``None`` for a strong operand."""
    if not (lt.is_scalar and rt.is_scalar):
        raise InferError(f"cannot combine {lt} and {rt}")
    if lweak is not None and rweak is None:
        lt = weak_adopt(lweak, rt)
    elif rweak is not None and lweak is None:
        rt = weak_adopt(rweak, lt)
    return T.promote(lt, rt)


def join_type(vals) -> T.Type:
    """The type of values that meet: the arguments of ``min``/``max``, the branches of ``x if c
    else y`` (``(type, weak value)`` pairs, scalars). numba unifies them (``unify_types``): numpy's
    promotion, pairwise in order of bit width (stable; its boolean has none, so comes first --
    numpy's promotion is not associative: int8, uint8, float16 gives float32). An int literal
    among integers and booleans only is numba's int64 literal (uint64 above int64's range), so
    ``max(int8, 1)`` and ``x if c else 1`` are int64, ``max(uint64, 1)`` float64; next to a float
    or complex it stays weak, as float literals do (``max(float32, 1)`` stays float32, where numba
    gives float64 -- the float-literal difference of the operators)."""
    floaty = any(w is None and isinstance(t, (T.Float, T.Complex)) for t, w in vals)
    vals = [(literal_type(w), None) if isinstance(w, int) and not isinstance(w, bool) and not floaty else (t, w)
            for t, w in vals]
    vals = sorted(vals, key=lambda v: (v[1] is not None, 0 if isinstance(v[0], T.Boolean) else v[0].bits))
    t, w = vals[0]
    for vt, vw in vals[1:]:
        t, w = common_type(t, w, vt, vw), None
    return t


#: operators whose integer x integer result follows numba's integer rule (NBEP 1)
NBEP1_OPS = ("+", "-", "*", "//", "%", "**") + BITWISE_OPS + SHIFT_OPS


def machine_int(signed: bool) -> T.Integer:
    """numba's ``choose_result_int``: the result is as wide as the widest operand but at
    least 64 bits (``intp``) -- pykern has no integer wider than 64 bits, so always 64."""
    return T.int64 if signed else T.uint64


def nbep1_result(op: str, lt: T.Type, rt: T.Type):
    """numba's type for ``lt op rt`` on two integers/booleans, or None where numba's
    integer rule does not apply (``/``, floats, ``& | ^`` of two booleans).

    numba (numba/core/typing/builtins.py) types these operators only on the machine
    integers int64/uint64 and widens narrower operands first, so ``uint8 + uint8`` is
    uint64 and ``int32 * int32`` int64: small integers never wrap. The result is signed
    if either operand is (``uint64 % int64`` -> int64); a boolean converts to int8 or
    uint8 equally well and numba's first candidate (int64) wins, so it counts as signed.
    A shift takes its left operand's signedness (the count is only a count)."""
    ints = (T.Integer, T.Boolean)
    if op not in NBEP1_OPS or not (isinstance(lt, ints) and isinstance(rt, ints)):
        return None
    if op in BITWISE_OPS and isinstance(lt, T.Boolean) and isinstance(rt, T.Boolean):
        return None  # & | ^ of booleans stay boolean; True + True is int64 2 (Python, numba)
    operands = (lt,) if op in SHIFT_OPS else (lt, rt)
    return machine_int(any(not isinstance(t, T.Integer) or t.signed for t in operands))


def _int_conversion(src: T.Type, dst: T.Integer) -> int:
    """numba's conversion kind from integer/boolean ``src`` to integer ``dst``
    (numba/core/typeconv/rules.py, transitively): 0 exact, 1 promote (wider, same
    signedness), 2 safe (unsigned to a wider signed type; a boolean to any integer),
    3 unsafe (narrowing or to unsigned)."""
    if src == dst:
        return 0
    if isinstance(src, T.Boolean):
        return 2
    if src.bits < dst.bits and src.signed == dst.signed:
        return 1
    if src.bits < dst.bits and dst.signed:
        return 2
    return 3


def _conversion(src: T.Type, dst: T.Type) -> int:
    """numba's conversion kind from integer/boolean ``src`` to integer or float ``dst``
    (``_int_conversion``'s scale): integers of 16 bits or less (uint8 and booleans too)
    convert to float32 safely, wider ones unsafely; any converts to float64 safely."""
    if isinstance(dst, T.Integer):
        return _int_conversion(src, dst)
    if dst == T.float64 or isinstance(src, T.Boolean) or src.bits < 16 or (src.bits == 16 and src.signed):
        return 2
    return 3


def divmod_type(lt: T.Type, lweak, rt: T.Type, rweak):
    """numba's type of ``divmod(a, b)`` of two integers/booleans (its DivMod template: one
    signature per (t, t) for t in int64, uint64, float32, float64, chosen like ``range``'s,
    an int literal int64), or None for other operands. Unlike ``//`` and ``%`` (numba has a
    mixed ``(uint64, int64) -> int64`` signature for those), ``divmod(uint64, int64)`` and
    ``divmod(uint64, 7)`` are float64: both integer signatures need an unsafe conversion,
    float64 only safe ones."""
    args = [(literal_type(w) if w is not None else t, w) for t, w in ((lt, lweak), (rt, rweak))]
    if not all(isinstance(t, (T.Integer, T.Boolean)) for t, _ in args):
        return None

    def cost(c):
        kinds = [max(_conversion(t, c), 1) if w is not None else _conversion(t, c) for t, w in args]
        return (kinds.count(3), kinds.count(2), kinds.count(1))
    return min((T.int64, T.uint64, T.float32, T.float64), key=cost)


def range_loop_type(args) -> T.Integer:
    """numba's loop variable type for ``range(*args)`` (``(type, weak value)`` pairs, as
    written: ``range(n)`` has one): its Range template offers int32, int64 and uint64
    versions and overload resolution picks the one needing the fewest unsafe, then safe,
    then promoting conversions, the first of equals. An int literal is int64 and converts
    no better than by promotion (numba's IntegerLiteral), so ``range(0, n)`` of an int32
    ``n`` is int64 and of a uint32 ``n`` int64 too (signed), while ``range(n)`` keeps int32
    and gives uint64 for unsigned ``n``."""
    def cost(c):
        kinds = [max(_int_conversion(literal_type(w), c), 1) if w is not None else _int_conversion(t, c)
                 for t, w in args]
        return (kinds.count(3), kinds.count(2), kinds.count(1))
    return min((T.int32, T.int64, T.uint64), key=cost)


def nbep1_unary(t: T.Type) -> T.Type:
    """numba's type for unary ``-x``, ``+x`` or ``~x`` (numba's UnaryOp and BitwiseInvert
    templates): an integer widens to 64 bits keeping its signedness, after the operation
    in its own type (``-uint8(1)`` is uint64 255, ``~int8(0)`` is int64 -1), a boolean gives int64 for ``+``/``-`` (``~`` of a
    boolean is ``not``, handled by the caller), floats keep their type. ``abs`` keeps the
    type instead (numba's Abs template)."""
    if isinstance(t, T.Integer):
        return machine_int(t.signed)
    return T.int64 if isinstance(t, T.Boolean) else t


#: the numpy ufunc of each operator (``np.add(x, y)`` is ``x + y`` typed by numpy's loops)
OP_UFUNCS = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "//": np.floor_divide,
    "%": np.remainder, "**": np.power, "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
    "<<": np.left_shift, ">>": np.right_shift,
}  # fmt: skip
#: a boolean loop of these ufuncs is a logical operation (numpy: ``np.add(True, True)`` is True)
BOOL_LOOP_OPS = {"+": "|", "*": "&"}


def ufunc_loop(ufunc, argtypes):
    """numba's loop for numpy ``ufunc`` of scalars of ``argtypes`` (``ufunc_find_matching_loop``
    in numba/np/numpy_support.py): ``(input types, output types)`` of the first of
    ``ufunc.types`` every input converts to safely (numpy's ``can_cast``; with integer and float
    inputs together any integer converts to any float, so ``np.add(int64, float32)`` is float32),
    or None. numba skips the float16 loops, so small integers and booleans take float32 ones
    (``np.true_divide(int8, int8)`` is float32); pykern keeps them when an input is float16
    (its own float16 rule). Object, long-double and datetime loops are never chosen."""
    dts = [t.np_dtype if not isinstance(t, T.Boolean) else np.dtype(bool) for t in argtypes]
    mixed = any(d.kind in "iu" for d in dts) and any(d.kind in "fc" for d in dts)
    half = T.float16 in argtypes
    for loop in ufunc.types:
        ins, outs = loop.split("->")
        if any(c in "OgGmM" for c in loop) or ("e" in ins and not half):
            continue
        if all((mixed and d.kind in "iu" and np.dtype(c).kind in "fc") or np.can_cast(d, c, "safe")
               for d, c in zip(dts, ins)):
            return [T.from_dtype(c) for c in ins], [T.from_dtype(c) for c in outs]
    return None


def ufunc_arg_type(t: T.Type, weak, others) -> T.Type:
    """The type numba gives an argument of a ufunc of scalars: an int literal is int64 (uint64
    above its range), a boolean one boolean; a float or complex literal stays weak (the
    documented float-literal difference: ``np.add(float32, 2.5)`` is float32, numba's float64),
    taking the type of a float or complex argument."""
    if weak is None or isinstance(weak, (bool, int)):
        return literal_type(weak) if weak is not None else t
    strong = [o for o in others if isinstance(o, (T.Float, T.Complex))]
    return weak_adopt(weak, strong[0] if strong else T.int64)


def float_ufunc_type(args) -> T.Type:
    """The float type numba computes a float-only numpy ufunc in (``np.sin``, ``np.arctan2``,
    ``np.logaddexp``...: loops float16, float32, float64) for ``(type, weak value)`` ``args``:
    its loop choice skips float16, so booleans and integers of 16 bits or less are float32
    (``np.sqrt(int8)``: numpy float16, numba float32), wider integers float64, and integers next
    to a float32 float32 (``np.arctan2(int64, float32)``). A float16 argument keeps pykern's
    float16 rule (computed in float32, rounded to float16)."""
    if any(t == T.float16 for t, w in args if w is None):
        return math_arg_type(args[0][0]) if len(args) == 1 else math2_arg_type(*args[0], *args[1])
    (ins, _) = ufunc_types(np.arctan2 if len(args) == 2 else np.sqrt, args, "this function")
    return ins[0]


def ufunc_types(ufunc, args, what: str):
    """``(input types, output types)`` of numpy ``ufunc`` of scalar ``(type, weak value)``
    ``args`` as numba types the call; an InferError where numba has no loop."""
    ts = [ufunc_arg_type(t, w, [o for o, ow in args if ow is None]) for t, w in args]
    loop = ufunc_loop(ufunc, ts)
    if loop is None:
        raise InferError(f"np.{ufunc.__name__} has no loop for {', '.join(map(str, ts))}",
                         hint=f"numpy (and numba) refuse {what} of these types")
    return loop


def _numba_uint16(ct: T.Type, lt: T.Type, rt: T.Type) -> T.Type:
    """numba's one departure from numpy's promotion in the arithmetic operators: uint16 with
    float32 (complex64) is float64 (complex128), where numpy says float32. numba's casting
    graph (numba/core/typeconv/rules.py) reaches float32 from uint16 only through int32, an
    unsafe step, and float64 safely, so overload resolution picks the float64 signature;
    int16 and uint8 reach float32 safely and stay there, as in numpy."""
    if {lt, rt} in ({T.uint16, T.float32}, {T.uint16, T.complex64}):  # float16: pykern's own rule
        return T.float64 if ct == T.float32 else T.complex128
    return ct


def binop_types(op: str, lt: T.Type, lweak, rt: T.Type, rweak, ufunc: str | None = None):
    """``(operand_type, result_type)`` for ``lhs op rhs``; both operands are cast to
    ``operand_type`` and the ``BinOp`` has ``result_type``.

    ``ufunc`` marks the operator of a numpy ufunc (``np.add(x, y)``, or an element of
    ``np.add(a, 1, out)``): numba types those by numpy's loops (``ufunc_loop``), not by its
    integer rule, so ``np.add(int8, int8)`` is int8 (and wraps), ``np.add(True, True)`` True
    (the boolean loop is a logical or: ``BOOL_LOOP_OPS``), ``np.true_divide(int8, int8)``
    float32, and an int literal is int64 (``np.add(int8, 1)`` is int64)."""
    for t in (lt, rt):
        if not t.is_scalar:
            raise InferError(
                f"unsupported operand types for {op}: {lt} and {rt}",
                hint="arithmetic works on scalars; index arrays and tuples first, e.g. a[i] or t[0]",
            )
    if ufunc is not None and T.float16 not in (lt, rt):
        (ct, _), (res,) = ufunc_types(OP_UFUNCS[op], [(lt, lweak), (rt, rweak)], f"'{op}'")
        return ct, res
    # numba types an int literal as int64 (uint64 above int64's range) next to an integer
    strong_lt = literal_type(lweak) if lweak is not None else lt
    strong_rt = literal_type(rweak) if rweak is not None else rt
    ct = nbep1_result(op, strong_lt, strong_rt)
    if ct is not None and ufunc is None:
        return ct, ct
    if ct is not None:
        lt, lweak, rt, rweak = strong_lt, None, strong_rt, None
    if op in ARITH_OPS and (isinstance(lt, T.Complex) or isinstance(rt, T.Complex)):
        ct = _numba_uint16(common_type(lt, lweak, rt, rweak), lt, rt)
        if op in ("//", "%"):
            raise InferError(f"unsupported operand types for {op}: {lt} and {rt}",
                             hint="complex numbers have no floor division or modulo (Python and numpy refuse too)")
        return ct, ct
    if op in ARITH_OPS:
        ct = _numba_uint16(common_type(lt, lweak, rt, rweak), lt, rt)
        if op == "/" and not isinstance(ct, T.Float):
            ct = T.float64
        return ct, ct
    if op in BITWISE_OPS or op in SHIFT_OPS:
        ct = common_type(lt, lweak, rt, rweak)
        if isinstance(ct, (T.Float, T.Complex)) or (op in SHIFT_OPS and not isinstance(ct, T.Integer)):
            hint = "bitwise operators need integers" if op in BITWISE_OPS else "shifts need integers"
            raise InferError(f"unsupported operand types for {op}: {lt} and {rt}", hint=hint)
        return ct, ct
    raise InferError(f"unknown operator {op}")


def compare_type(lt: T.Type, lweak, rt: T.Type, rweak) -> T.Type:
    for t in (lt, rt):
        if not t.is_scalar:
            raise InferError(f"cannot compare {lt} with {rt}", hint="compare scalars (index arrays/tuples first)")
    return common_type(lt, lweak, rt, rweak)


def unify(a: T.Type, b: T.Type):
    """The one type for a variable assigned values of types ``a`` and ``b``; None if none."""
    if a == b:
        return a
    if a.is_scalar and b.is_scalar:
        return T.promote(a, b)
    if isinstance(a, T.Optional) or isinstance(b, T.Optional):
        # numba's unify of Optional(x) and y: Optional of their common number type (a plain
        # number assigned to an optional variable is present); anything else: not supported
        x, y = (t.type if isinstance(t, T.Optional) else t for t in (a, b))
        return T.optional(T.promote(x, y)) if x.is_scalar and y.is_scalar else None
    if isinstance(a, T.Tuple) and isinstance(b, T.Tuple) and len(a.elems) == len(b.elems):
        elems = [unify(x, y) for x, y in zip(a.elems, b.elems)]
        if any(e is None for e in elems):
            return None
        return T.Tuple(tuple(elems))
    # arrays must match exactly: the IR has no array conversions
    return None


# --------------------------------------------------------------------------
# math
# --------------------------------------------------------------------------

UNARY_MATH = list(ir.intrinsic_names("math", "(f) -> f"))
BINARY_MATH = list(ir.intrinsic_names("math", "(f, f) -> f"))
PREDICATES = ir.intrinsic_names("predicate")
#: np.minimum/np.maximum/np.fmin/np.fmax on floats (numpy's NaN and equal-value rules)
NP_MINMAX = ("minimum", "maximum", "fmin", "fmax")
#: math.* functions that return an int64 (Python's int) instead of a float.
TO_INT = ("floor", "ceil", "trunc")


def math_arg_type(t: T.Type) -> T.Type:
    """The float type a math function computes in for an argument of type ``t``."""
    if isinstance(t, T.Float):
        return t
    if isinstance(t, (T.Integer, T.Boolean)):
        return T.float64
    if isinstance(t, T.Complex):
        raise InferError(f"math functions take real numbers, not {t}", hint="use the cmath module for complex numbers")
    raise InferError(f"math functions take numbers, not {t}")


def math2_arg_type(lt, lweak, rt, rweak) -> T.Type:
    ct = common_type(lt, lweak, rt, rweak)
    if isinstance(ct, T.Complex):
        raise InferError(f"math functions take real numbers, not {ct}", hint="use the cmath module for complex numbers")
    return ct if isinstance(ct, T.Float) else T.float64


_F32_F32, _F64_F64 = ((T.float32, T.float32), T.float32), ((T.float64, T.float64), T.float64)
_INT_PAIRS = [((T.int64, T.int64), T.float64), ((T.uint64, T.uint64), T.float64)]
#: numba.cuda's signatures of the two-argument ``math`` functions, in its order (its
#: numba/cuda/cudamath.py; ``nextafter``, which numba.cuda lacks, from numba's own
#: numba/core/typing/mathdecl.py): ``((argument types), result)``
MATH2_CASES = {
    "atan2": _INT_PAIRS + [_F32_F32, _F64_F64],
    "hypot": _INT_PAIRS + [_F32_F32, _F64_F64],
    "copysign": [_F32_F32, _F64_F64],
    "fmod": [_F32_F32, _F64_F64],
    "remainder": [_F32_F32, _F64_F64],
    "pow": [_F32_F32, _F64_F64, ((T.float32, T.int32), T.float32), ((T.float64, T.int32), T.float64)],
    "ldexp": [((T.float32, T.int32), T.float32), ((T.float64, T.int32), T.float64)],
    "nextafter": [_F64_F64, _F32_F32],
}


def _numba_conversion(src: T.Type, dst: T.Type):
    """numba's conversion kind from ``src`` to ``dst`` on ``_int_conversion``'s scale, or None
    where pykern allows none: a float to an integer (numba's unsafe conversion truncates a
    float exponent of ``math.ldexp``, which Python refuses; so does pykern)."""
    if isinstance(src, T.Float):
        if not isinstance(dst, T.Float):
            return None
        return 0 if src == dst else (1 if src.bits < dst.bits else 3)
    return _conversion(src, dst)


def math2_signature(name: str, lt, lweak, rt, rweak):
    """``((argument types), result type)`` of ``math.<name>(a, b)``: numba.cuda's overload
    resolution over ``MATH2_CASES`` (fewest unsafe, then safe, then promoting conversions,
    the first of equals), so integers of 16 bits or less with a float32-only signature are
    float32 (``math.copysign(int8, int8)``), uint16 with float32 float64 (numba reaches
    float32 from uint16 only unsafely), ``math.pow(float32, int32)`` float32. An int literal
    among integers is int64 (numba's literal); next to a float it stays weak (pykern's
    float-literal rule: ``math.hypot(float32, 2)`` is float32, numba's float64). float16
    arguments keep pykern's float16 rule (numba.cuda has no float16 signatures here)."""
    ct = common_type(lt, lweak, rt, rweak)  # (raises for non-scalars)
    if isinstance(ct, T.Complex):
        raise InferError(f"math functions take real numbers, not {ct}", hint="use the cmath module for complex numbers")
    floats = [t for t, w in ((lt, lweak), (rt, rweak)) if w is None and isinstance(t, T.Float)]
    if T.float16 in floats or (lweak is not None and rweak is not None):
        ft = math2_arg_type(lt, lweak, rt, rweak)
        return (ft, T.int32 if name == "ldexp" else ft), ft
    args = []
    for k, (t, w) in enumerate(((lt, lweak), (rt, rweak))):
        if w is not None and floats and not isinstance(w, bool) and not (name == "ldexp" and k == 1):
            t, w = weak_adopt(w, floats[0]), None  # the weak literal takes the float's type
        args.append((literal_type(w) if w is not None else t, w))

    def cost(case):
        kinds = [_numba_conversion(t, c) for (t, _), c in zip(args, case[0])]
        if None in kinds:
            return None
        kinds = [max(k, 1) if w is not None else k for k, (_, w) in zip(kinds, args)]
        return (kinds.count(3), kinds.count(2), kinds.count(1))

    rated = [(cost(case), k, case) for k, case in enumerate(MATH2_CASES[name])]
    rated = [r for r in rated if r[0] is not None]
    if not rated:
        raise InferError(f"math.{name}() has no signature for {lt} and {rt}",
                         hint="numba.cuda's math functions take numbers (an integer exponent for ldexp)")
    return min(rated)[2]


# --------------------------------------------------------------------------
# intrinsic signatures (the verifier's reading of ``ir.INTRINSICS``)
# --------------------------------------------------------------------------

#: signature type variables: what each may stand for
_TYPE_VARS = {
    "x": lambda t: t.is_scalar,
    "n": lambda t: isinstance(t, (T.Integer, T.Float)),
    "i": lambda t: isinstance(t, T.Integer),
    "f": lambda t: isinstance(t, T.Float),
    "c": lambda t: isinstance(t, T.Complex),
    "p": lambda t: t in (T.int64, T.uint64, T.float64, T.boolean),
    # matrix fragments: one variable per operand of a multiply-accumulate (they differ in use)
    **{v: (lambda t: isinstance(t, T.Fragment)) for v in ("m", "md", "ma", "mb", "mc")},
    "a": lambda t: isinstance(t, T.Array),
}
_parsed: dict = {}


def parse_signature_rule(rule: str) -> tuple:
    """``"(uint64, x, int32) -> x"`` -> ``(["uint64", "x", "int32"], "x")``."""
    hit = _parsed.get(rule)
    if hit is None:
        args, result = rule.split("->")
        args = args.strip().strip("()").strip()
        hit = _parsed[rule] = ([a.strip() for a in args.split(",")] if args else [], result.strip())
    return hit


def _matches(part: str, t: T.Type, bound: dict) -> bool:
    if part in _TYPE_VARS:
        if part in bound:
            return bound[part] == t
        if not _TYPE_VARS[part](t):
            return False
        bound[part] = t
        if part == "c":  # a complex binds its part type
            return _matches("f", t.component, bound)
        return True
    if part.startswith("Tuple(") and part.endswith(")"):
        parts = [x.strip() for x in part[6:-1].split(",")]
        return (isinstance(t, T.Tuple) and len(t.elems) == len(parts)
                and all(_matches(x, e, bound) for x, e in zip(parts, t.elems)))
    return str(t) == part


def _split_rule(rule: str) -> tuple:
    """Like ``parse_signature_rule``, but a ``Tuple(...)`` counts as one part."""
    args, result = rule.split("->")
    args = args.strip()[1:-1]
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts, result.strip()


def _check_rule(rule: str, argtypes: list, result: T.Type) -> bool:
    want, res = _split_rule(rule)
    if want and want[-1].endswith("..."):  # the last argument repeats zero or more times
        rep = want[-1][:-3]
        want = want[:-1] + [rep] * max(0, len(argtypes) - len(want) + 1)
        bound: dict = {}
        return (len(argtypes) == len(want) and all(_matches(w, t, {}) for w, t in zip(want, argtypes))
                and _matches(res, result, bound))
    bound = {}
    return (len(argtypes) == len(want) and all(_matches(w, t, bound) for w, t in zip(want, argtypes))
            and _matches(res, result, bound))


def check_intrinsic(name: str, argtypes: list, result: T.Type, attrs: dict):
    """None if an ``Intrinsic`` node is well-typed per ``ir.INTRINSICS``, else the reason."""
    op = ir.INTRINSICS.get(name)
    if op is None:
        return f"unknown intrinsic {name!r}"
    want, res = _split_rule(op.signature)
    varargs = bool(want) and want[-1].endswith("...")
    if not varargs and not op.also and len(argtypes) != len(want):
        return f"{name} takes {len(want)} argument(s), got {len(argtypes)}"
    if "axis" in op.attrs and attrs.get("axis") not in (0, 1, 2):
        return f"{name} needs attrs axis 0, 1 or 2, got {attrs.get('axis')!r}"
    for a in op.attrs:
        if a != "axis" and a not in attrs:
            return f"{name} needs attrs {a}"
    if not any(_check_rule(rule, argtypes, result) for rule in (op.signature,) + op.also):
        got = ", ".join(map(str, argtypes))
        return f"{name} is {' or '.join((op.signature,) + op.also)}, got ({got}) -> {result}"
    return None
