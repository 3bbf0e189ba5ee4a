"""pykern's typed IR: plain data classes, structured control flow, every node typed and located.

The frontend (``frontend/lower_ast.py`` et al.) produces it from the Python AST;
codegen (``codegen/lower.py``) turns it into LLVM IR. It is the only thing the
two halves share, so it is deliberately small and explicit:

* Expressions carry their result ``type`` (a ``frontend.types.Type``) and ``loc``.
  The frontend inserts every implicit conversion as a ``Cast``: operands of a
  ``BinOp``/``Compare`` already have the same type, a ``Store``'s value already
  has the array's dtype, every index is ``int64``. Codegen never guesses types.
* Statements form structured blocks (lists); there are no gotos.
* Local variables are named slots declared in ``Function.locals`` with one type
  each (a variable never changes type).
* Hardware and library operations are ``Intrinsic`` nodes named from
  ``INTRINSICS`` below; codegen maps each name to the target's implementation.

``print(fn)`` shows a readable listing; ``verify.verify_function`` checks the
rules above and is run before codegen, so that LLVM never sees an ill-typed
module (an LLVM assertion would abort the user's process).

Example::

    >>> from pykern.frontend import ir, types as T
    >>> x = ir.Var("x", T.int64)
    >>> print(ir.BinOp("+", x, ir.Const(1, T.int64), T.int64))
    (x + 1:int64)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from pykern.core.errors import SourceLoc
from pykern.frontend import types as T

# --------------------------------------------------------------------------
# Node classes: what @dataclass(eq=False) gave them, made on first use
# --------------------------------------------------------------------------
# @dataclass spends ~0.25 ms per class (it compiles an __init__ and a __repr__ for
# each): ~10 ms for the ~40 node classes, inside the first compile of every process.
# @node records the fields and gives the class an __init__ that compiles the
# dataclass-equivalent one on the class' first construction (so a compile pays only
# for the node kinds it builds) and a shared __repr__ in dataclass' format.
# Identity equality and hashing, as eq=False; instances are plain, mutable objects
# with a __dict__ (codegen and the analysis walk ``node.__dict__``).

_MISSING = object()


class Factory:
    """A field default made anew for each node (``field(default_factory=...)``)."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


def fields(node) -> tuple:
    """The field names of an IR node or node class, in ``__init__`` order.

    >>> fields(Const)
    ('value', 'type', 'loc')
    """
    return type(node)._fields if not isinstance(node, type) else node._fields


def _field_repr(self) -> str:
    return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self._fields)})"


def node(cls):
    """Class decorator of the IR's node classes: ``cls``'s fields are the names it
    annotates, after its base's; a class attribute of the same name is the default
    (``Factory(f)``: ``f()`` per node)."""
    inherited = getattr(cls, "_fields", ())
    own = [n for n in cls.__dict__.get("__annotations__", {}) if n not in inherited]
    cls._fields = inherited + tuple(own)
    for n in own:
        if isinstance(cls.__dict__.get(n), Factory):
            cls._factories = {**getattr(cls, "_factories", {}), n: cls.__dict__[n]}
            delattr(cls, n)  # as dataclass does: no class attribute for a per-node default

    def __init__(self, *args, **kwargs):
        init = _compile_init(cls)
        cls.__init__ = init
        init(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = __init__
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _field_repr
    return cls


def _compile_init(cls):
    """The ``__init__`` dataclass would write for ``cls`` (same parameters, defaults and errors)."""
    params, body, env = [], [], {"_MISSING": _MISSING}
    factories = getattr(cls, "_factories", {})
    for n in cls._fields:
        if n in factories:
            env[f"_f_{n}"] = factories[n].make
            params.append(f"{n}=_MISSING")
            body.append(f"    self.{n} = _f_{n}() if {n} is _MISSING else {n}")
            continue
        default = getattr(cls, n, _MISSING)
        if default is _MISSING:
            if params and "=" in params[-1]:
                raise TypeError(f"non-default argument {n!r} follows default argument in {cls.__name__}")
            params.append(n)
        else:
            env[f"_d_{n}"] = default
            params.append(f"{n}=_d_{n}")
        body.append(f"    self.{n} = {n}")
    src = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(src, env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


# --------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------


@node
class Expr:
    # type and loc are set by each subclass' fields (declared last there)
    def children(self) -> list["Expr"]:
        return [v for v in self.__dict__.values() if isinstance(v, Expr)] + [
            e for v in self.__dict__.values() if isinstance(v, list) for e in v if isinstance(e, Expr)
        ]


@node
class Const(Expr):
    """A compile-time constant scalar (int, float or bool Python value)."""

    value: Any
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.value!r}:{self.type}"


@node
class Var(Expr):
    """Read of a local variable or parameter (declared in ``Function.locals``)."""

    name: str
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return self.name


#: Arithmetic/bitwise operators of BinOp. Semantics on the (already common)
#: operand type:
#:   + - *        wrap around for integers (two's complement), IEEE for floats
#:   /            only on floats (the frontend casts ints to float64 first)
#:   //  %        Python floor semantics: result of ``%`` has the sign of the
#:                divisor; for floats ``//`` is floor(a/b) and ``%`` is
#:                a - floor(a/b)*b fixed up like Python. Integer division by
#:                zero gives 0 (never a trap); MIN // -1 wraps to MIN.
#:   **           integer power by repeated squaring (negative exponent -> 0,
#:                except base 1/-1); float power is ``pow``.
#:   & | ^        integers and booleans
#:   << >>        integers; the shift count is masked to the bit width
#:                (``>>`` is arithmetic for signed, logical for unsigned)
BINOPS = ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>")


@node
class BinOp(Expr):
    op: str
    lhs: Expr
    rhs: Expr
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"({self.lhs} {self.op} {self.rhs})"


#: Unary operators: "-" (negate), "~" (bitwise not, integers), "not" (boolean).
UNARYOPS = ("-", "~", "not")


@node
class UnaryOp(Expr):
    op: str
    operand: Expr
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"({self.op} {self.operand})"


#: Comparisons; operands have one common type, result is boolean.
#: Floats compare like Python/IEEE (anything with NaN is False except "!=").
CMPOPS = ("<", "<=", "==", "!=", ">", ">=")


@node
class Compare(Expr):
    op: str
    lhs: Expr
    rhs: Expr
    type: T.Type = T.boolean
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"({self.lhs} {self.op} {self.rhs})"


@node
class BoolOp(Expr):
    """Short-circuit ``and``/``or`` over boolean operands (the frontend casts
    each operand to boolean); the result is boolean. Later operands are only
    evaluated when needed."""

    op: str  # "and" | "or"
    values: list
    type: T.Type = T.boolean
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return "(" + f" {self.op} ".join(map(str, self.values)) + ")"


@node
class IfExp(Expr):
    """``a if cond else b``: only the chosen branch is evaluated."""

    cond: Expr
    then: Expr
    orelse: Expr
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"({self.then} if {self.cond} else {self.orelse})"


@node
class Cast(Expr):
    """Convert a scalar to another scalar type, numpy ``astype`` semantics:
    int->int truncates/extends (sign per source), float->int truncates toward
    zero and saturates (NaN -> 0), anything->boolean is ``!= 0``,
    boolean->number is 0/1."""

    value: Expr
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.type}({self.value})"


@node
class Load(Expr):
    """``array[indices]`` of an array-typed expression; one int64 index per
    dimension (the frontend wraps negative constant indices; dynamic negative
    indices wrap too, as in numba: index + extent when index < 0)."""

    array: Expr
    indices: list
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.array}[{', '.join(map(str, self.indices))}]"


@node
class ArrayAttr(Expr):
    """``a.shape[dim]`` / ``a.strides[dim]`` (bytes) / ``a.size`` / ``a.ndim``
    as int64 (``dim`` is None for size and ndim). ``address`` is the data
    pointer as an integer (no Python spelling: slice assignment compares the
    memory of its source and destination with it)."""

    array: Expr
    attr: str  # "shape" | "strides" | "size" | "ndim" | "address"
    dim: Optional[int]
    type: T.Type = T.int64
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.array}.{self.attr}" + (f"[{self.dim}]" if self.dim is not None else "")


@node
class TupleExpr(Expr):
    elems: list
    type: T.Type  # T.Tuple
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return "(" + ", ".join(map(str, self.elems)) + ",)"


@node
class TupleGet(Expr):
    """Element ``index`` (a Python int, already normalised to >= 0) of a tuple."""

    value: Expr
    index: int
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.value}[{self.index}]"


@node
class Call(Expr):
    """Call of a device function ``Module.functions[func]`` with already-cast args."""

    func: str
    args: list
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.func}({', '.join(map(str, self.args))})"


@node
class ExternCall(Expr):
    """Call of an external device function (``declare_device``): ``symbol`` with the calling
    convention ``abi`` ("numba": ``int symbol(T *ret, args...)``; "c": ``T symbol(args...)``).
    ``args`` already have the declared scalar types; an array argument is passed as the
    address of its first element (``params`` holds the declared types, the pointers' too)."""

    symbol: str
    abi: str
    args: list
    params: list
    type: T.Type
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"extern[{self.abi}] {self.symbol}({', '.join(map(str, self.args))}):{self.type}"


@node
class Intrinsic(Expr):
    """A hardware or library operation, by name from ``INTRINSICS``.

    ``attrs`` holds compile-time parameters (e.g. ``{"axis": 0}``)."""

    name: str
    args: list
    type: T.Type
    attrs: dict = Factory(dict)
    loc: Optional[SourceLoc] = None

    def __str__(self):
        a = ", ".join(map(str, self.args))
        if self.attrs:
            a += (", " if a else "") + ", ".join(f"{k}={v!r}" for k, v in sorted(self.attrs.items()))
        return f"@{self.name}({a}):{self.type}"


#: Atomic read-modify-write ops; all return the old value.
#: add/sub on ints and floats; max/min on ints and floats (floats: NaN in the
#: array or the value follows numba: result is the non-NaN one... see codegen);
#: and_/or_/xor on ints; exch on all; inc: old >= val ? 0 : old+1 (unsigned
#: semantics as CUDA atomicInc); dec: (old == 0 or old > val) ? val : old-1;
#: cas: compare ``values[0]`` (expected) and store ``values[1]``.
ATOMIC_OPS = ("add", "sub", "max", "min", "and", "or", "xor", "exch", "inc", "dec", "cas", "nanmax", "nanmin")


@node
class Atomic(Expr):
    op: str
    array: Expr
    indices: list  # int64 per dimension
    values: list  # one value (two for cas), already of the array's dtype
    type: T.Type  # the array's dtype
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"atomic.{self.op}({self.array}[{', '.join(map(str, self.indices))}], {', '.join(map(str, self.values))})"


@node
class AllocArray(Expr):
    """A fresh array: ``space`` "shared" (per block), "local" (per thread).

    ``shape`` is a tuple of Python ints; a shared array with shape ``(0,)`` is
    the dynamic shared buffer sized at launch (all dynamic shared arrays of a
    kernel alias the same buffer, as in CUDA). Layout is "C". ``name`` is
    unique within the module (used for the LDS symbol)."""

    name: str
    space: str
    shape: tuple
    type: T.Type  # T.Array with space set
    loc: Optional[SourceLoc] = None
    align: int = 0  #: bytes the array's address is a multiple of (``alignment=``); 0: the natural one

    def __str__(self):
        return f"{self.space}.array{self.shape!r}:{self.type.dtype}"


@node
class ConstArray(Expr):
    """``const.array_like(host_array)``: the data frozen into the code.
    ``data`` is bytes in C order; ``shape`` a tuple of ints."""

    name: str
    data: bytes
    shape: tuple
    type: T.Type  # T.Array(space="const", layout="C", readonly=True)
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"const.array{self.shape!r}:{self.type.dtype}"


@node
class GlobalArray(Expr):
    """A device array referenced as a global of the kernel: captured by
    reference, as numba does -- its address, shape and byte strides are
    compile-time constants (the kernel sees later writes to the array, and
    must not outlive it)."""

    address: int
    shape: tuple
    strides: tuple  # bytes
    type: T.Type  # T.Array(space="global")
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"global_array(0x{self.address:x}){self.shape!r}:{self.type.dtype}"


@node
class Slice(Expr):
    """One ``start:stop:step`` item of an ``ArrayView``; each part is an int64
    expression or None (Python's default). Only valid inside ``ArrayView.items``."""

    start: Optional[Expr] = None
    stop: Optional[Expr] = None
    step: Optional[Expr] = None
    type: T.Type = T.void
    loc: Optional[SourceLoc] = None

    def __str__(self):
        parts = ["" if p is None else str(p.value) if isinstance(p, Const) else str(p) for p in (self.start, self.stop, self.step)]
        return ":".join(parts[:2]) + (f":{parts[2]}" if self.step is not None else "")


@node
class ArrayView(Expr):
    """A view of an array: ``a[i]``, ``a[i, 1:5]``, ``a[::-1]``... ``items`` has
    at most ``array.type.ndim`` entries, each an int64 index (wrapped like a
    ``Load`` index; removes the dimension) or a ``Slice`` (keeps it); missing
    trailing items are full slices. Slices follow Python semantics, clamped to
    the extent; a step of 0 at run time gives an empty dimension (Python
    raises, a GPU cannot). The result shares the array's memory, space and
    readonly flag; ``type.layout`` is "C"/"F" only when provably contiguous."""

    array: Expr
    items: list
    type: T.Type  # T.Array
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.array}[{', '.join(map(str, self.items))}]"


@node
class Transpose(Expr):
    """``a.T`` (``a.transpose()``, ``np.transpose(a)``) of an n-d array, n >= 2:
    a view with the shape and strides reversed, sharing the array's memory,
    space and readonly flag (see ``transpose_type``). Its own node rather than
    an ``ArrayView``: a view's items keep the axes in order, a transpose
    permutes them. 0-d and 1-d ``.T`` are the array itself (no node)."""

    array: Expr
    type: T.Type  # T.Array
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.array}.T"


@node
class Reinterpret(Expr):
    """The memory of an array seen with another element type, sharing it: ``a.real``
    and ``a.imag`` of a complex array (``offset`` 0 or the part's size in bytes, the
    strides unchanged) and ``a.view(dtype)`` (the last axis' extent scaled by the ratio
    of the item sizes, its stride the new item size; see ``reinterpret_type``)."""

    array: Expr
    offset: int
    part: bool  # .real/.imag: a part of each item, not items of another size
    type: T.Type  # T.Array
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.array}.{'part' if self.part else 'view'}({self.type.dtype}, +{self.offset})"


@node
class Reshape(Expr):
    """``a.reshape(shape)`` of a C-contiguous array: its memory with the int64 extents
    ``shape`` (already resolved: no -1, product equal to the size) in C order."""

    array: Expr
    shape: list
    type: T.Type  # T.Array, layout "C"
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.array}.reshape({', '.join(map(str, self.shape))})"


def reinterpret_type(at: T.Array, dtype: T.Type, part: bool) -> T.Array:
    """The type of ``Reinterpret(array of type at)`` with element type ``dtype``:
    a part of each element (``part``: .real/.imag) is strided ("A"); a whole-element
    view keeps the layout.

    >>> reinterpret_type(T.Array(T.complex64, 1, "C"), T.float32, True)
    float32[:]
    """
    return at.with_(dtype=dtype, layout="A" if part else at.layout)


def transpose_type(at: T.Array) -> T.Array:
    """The type of ``Transpose(array of type at)``: "C" becomes "F", "F"
    becomes "C", "A" stays "A".

    >>> transpose_type(T.Array(T.float32, 2, "C"))
    float32[::1, :]
    """
    layout = {"C": "F", "F": "C"}.get(at.layout, at.layout)
    return at.with_(layout=layout)


@node
class RecordField(Expr):
    """Field ``name`` of a record reference (``value``: a 0-d array of a
    ``T.Record``), as a view of the field's memory: a 0-d array of the field's
    scalar or record type, or for a sub-array field a C-ordered array of its
    shape. ``align`` is the byte alignment the field's address is known to have
    (1 in packed records); loads and stores of the field use it."""

    value: Expr
    name: str
    offset: int
    align: int
    type: T.Type  # T.Array
    loc: Optional[SourceLoc] = None

    def __str__(self):
        return f"{self.value}.{self.name}"


def record_field_type(rt: T.Array, name: str):
    """``(view type, offset, field type)`` of field ``name`` of a record reference
    of type ``rt`` (a 0-d array of a Record), or None when there is no such field."""
    f = rt.dtype.field(name)
    if f is None:
        return None
    ft, off = f
    if isinstance(ft, T.NestedArray):
        vt = T.Array(ft.dtype, len(ft.shape), "C", rt.space, rt.readonly)
    else:
        vt = T.Array(ft, 0, "A", rt.space, rt.readonly)
    return vt, off, ft


def _unit_step(sl: "Slice") -> bool:
    return sl.step is None or (isinstance(sl.step, Const) and sl.step.value == 1)


def _full(sl: "Slice") -> bool:
    return sl.start is None and sl.stop is None and _unit_step(sl)


def view_type(at: T.Array, items: list) -> T.Array:
    """The type of ``ArrayView(array of type at, items)``: one dimension per
    ``Slice`` (and per missing trailing item). Layout is "C" when the view is
    provably contiguous in row-major order (leading indices, then one unit-step
    slice, then full slices, of a "C" array), "F" likewise mirrored, else "A".

    >>> view_type(T.Array(T.float32, 2, "C"), [Const(0, T.int64)])
    float32[::1]
    """
    items = list(items) + [Slice()] * (at.ndim - len(items))
    ndim = sum(isinstance(it, Slice) for it in items)

    def contiguous(seq):
        # seq: items from the outermost (slowest) dimension to the innermost
        k = 0
        while k < len(seq) and not isinstance(seq[k], Slice):
            k += 1
        rest = seq[k:]
        return not rest or (_unit_step(rest[0]) and all(isinstance(r, Slice) and _full(r) for r in rest[1:]))

    layout = "A"
    if at.layout == "C" and contiguous(items):
        layout = "C"
    elif at.layout == "F" and contiguous(items[::-1]):
        layout = "C" if ndim == 1 else "F"
    return at.with_(ndim=ndim, layout=layout)


# --------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------


@node
class Stmt:
    def lines(self, pad: str) -> list:
        """This statement in a listing (``print(fn)``): its lines, indented by ``pad``."""
        return [f"{pad}<{type(self).__name__}>"]


def listing(stmts: list, pad: str) -> list:
    """The lines of a block of statements (``pass`` for an empty one)."""
    if not stmts:
        return [pad + "pass"]
    return [line for s in stmts for line in s.lines(pad)]


@node
class Assign(Stmt):
    """Store ``value`` into local variable ``target`` (same type as declared)."""

    target: str
    value: Expr
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        return [f"{pad}{self.target} = {self.value}"]


@node
class Store(Stmt):
    """``array[indices] = value``; value already has the array's dtype."""

    array: Expr
    indices: list
    value: Expr
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        return [f"{pad}{self.array}[{', '.join(map(str, self.indices))}] = {self.value}"]


@node
class ExprStmt(Stmt):
    """Evaluate for side effects (barriers, atomics, calls)."""

    value: Expr
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        return [f"{pad}{self.value}"]


@node
class If(Stmt):
    cond: Expr  # boolean
    then: list
    orelse: list
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        out = [f"{pad}if {self.cond}:", *listing(self.then, pad + "  ")]
        if self.orelse:
            out += [f"{pad}else:", *listing(self.orelse, pad + "  ")]
        return out


@node
class While(Stmt):
    cond: Expr  # boolean
    body: list
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        return [f"{pad}while {self.cond}:", *listing(self.body, pad + "  ")]


@node
class ForRange(Stmt):
    """``for var in range(start, stop, step)``: start/stop/step share var's
    integer type. ``step`` may be any non-zero value (a zero step at run time
    runs no iterations; Python raises, a GPU cannot); the bounds are evaluated
    once, before the loop. After the loop ``var`` holds the last value taken,
    as in Python."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: list
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        head = f"{pad}for {self.var} in range({self.start}, {self.stop}, {self.step}):"
        return [head, *listing(self.body, pad + "  ")]


@node
class Break(Stmt):
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        return [pad + "break"]


@node
class Continue(Stmt):
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        return [pad + "continue"]


@node
class Return(Stmt):
    """Return from the function; ``value`` is None for void functions and kernels."""

    value: Optional[Expr] = None
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        return [pad + "return" + (f" {self.value}" if self.value is not None else "")]


@node
class Raise(Stmt):
    """``raise`` / a failed ``assert``: the thread stops here for good (like a kernel ``return``,
    also inside a device function, which is therefore always inlined). ``cls`` names the
    exception class as ``module:qualname`` ("builtins:ValueError"), ``args`` are its constant
    arguments; under ``debug=True`` the first raising thread's exception is raised on the host
    after the launch (``pykern.core.errors.kernel_exception``)."""

    cls: str
    args: tuple = ()
    loc: Optional[SourceLoc] = None

    def lines(self, pad: str) -> list:
        name = self.cls.split(":")[1] if self.cls.startswith("builtins:") else self.cls.replace(":", ".")
        return [f"{pad}raise {name}({', '.join(map(repr, self.args))})"]


# --------------------------------------------------------------------------
# Functions and modules
# --------------------------------------------------------------------------


@node
class Param:
    name: str
    type: T.Type


@node
class Function:
    """One kernel or device function after type inference.

    ``locals`` maps every variable name (parameters included) to its type.
    Parameters are variables too: assigning to a scalar parameter is allowed.
    """

    name: str  # unique, mangled with the signature for device functions
    params: list  # list[Param]
    return_type: T.Type
    body: list  # list[Stmt]
    locals: dict  # name -> Type
    is_kernel: bool
    loc: Optional[SourceLoc] = None
    #: Python-level name for messages ("saxpy")
    pyname: str = ""
    #: filled by ``analysis.scan``: does the function (transitively) use a
    #: block barrier / wave operation / the dynamic shared buffer?
    uses_barrier: bool = False
    uses_wave_ops: bool = False
    uses_dynamic_shared: bool = False
    #: ``@jit(device=True, forceinline=True)``: codegen inlines every call of it
    force_inline: bool = False
    #: the device function returns its parameter number ``returns_param`` (``return A`` of an
    #: array it was given, as numba allows): it is void here and its callers take the argument
    returns_param: int = -1
    #: filled by ``analysis.scan``: can the function (transitively) ``raise``? Codegen inlines
    #: such device functions, so that their ``raise`` ends the calling thread
    raises: bool = False

    def __str__(self) -> str:
        """The listing (``print(fn)``, ``inspect_types``): header, locals, flags, then the statements::

            kernel saxpy(a: float32, x: float32[::1], out: float32[::1]) -> void
              locals: i: int64
              i = ((int64(@block_idx(axis=0):int32) * ...
              if (i < out.shape[0]):
                out[i] = ((a * x[i]) + ...)
        """
        kind = "kernel" if self.is_kernel else "device"
        params = ", ".join(f"{p.name}: {p.type}" for p in self.params)
        lines = [f"{kind} {self.name}({params}) -> {self.return_type}"]
        pnames = {p.name for p in self.params}
        others = [(n, t) for n, t in self.locals.items() if n not in pnames]
        if others:
            lines.append("  locals: " + ", ".join(f"{n}: {t}" for n, t in others))
        flags = [f for f in ("uses_barrier", "uses_wave_ops", "uses_dynamic_shared", "raises") if getattr(self, f)]
        if flags:
            lines.append("  flags: " + ", ".join(flags))
        return "\n".join(lines + listing(self.body, "  "))


@node
class Module:
    """A kernel and every device function it reaches (after inference)."""

    kernel: Function
    functions: dict = Factory(dict)  # name -> Function
    #: not to be stored in the disk cache: its key cannot see what the code depends on
    #: (implementations chosen by ``@overload`` functions, ``frontend/extending.py``)
    uncacheable: bool = False
    #: external code the calls of ``ExternCall``s need (``core.external.LinkItem``s, in order)
    links: tuple = ()

    def __str__(self) -> str:
        return "\n\n".join(str(f) for f in [*self.functions.values(), self.kernel])


def always_returns(stmts: list) -> bool:
    """Does this statement list end in a ``Return`` on every path?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, Return):
        return True
    if isinstance(last, If):
        return always_returns(last.then) and always_returns(last.orelse)
    return False


def may_fall_off(stmts: list) -> bool:
    """Can control run past the end of this statement list? Unlike ``always_returns`` a
    ``raise`` and a ``while True`` loop without a ``break`` of its own end no path: a device
    function ending so never returns Python's implicit None (numba's CFG has no such edge)."""
    return all(_completes(s) for s in stmts)


def _completes(s) -> bool:
    if isinstance(s, (Return, Raise)):
        return False
    if isinstance(s, If):
        return may_fall_off(s.then) or may_fall_off(s.orelse)
    if isinstance(s, While) and isinstance(s.cond, Const) and s.cond.value:
        return _breaks(s.body)
    return True


def _breaks(stmts: list) -> bool:
    """Does a ``Break`` of the loop this list is the body of occur (not one of an inner loop)?"""
    return any(isinstance(s, Break) or isinstance(s, If) and (_breaks(s.then) or _breaks(s.orelse))
               for s in stmts)


# --------------------------------------------------------------------------
# Intrinsic catalogue: the one table the verifier, the analysis and codegen read
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One intrinsic: ``category`` (a key of ``CATEGORIES``: how codegen lowers
    it), ``signature`` (the typing rule the verifier checks), ``effects``
    (True when it synchronises threads or orders memory: never duplicated,
    merged or dropped), ``attrs`` (compile-time attributes it needs: "axis" is
    0, 1 or 2) and ``doc``.

    A signature is ``"(arg, ...) -> result"``; each part is a type name
    (``int32``, ``uint64``, ``boolean``, ``void``) or a type variable that
    stands for one type throughout the row: ``x`` any scalar, ``n`` a number
    (integer or float), ``i`` an integer, ``f`` a float, ``c`` a complex (whose
    part is ``f``), ``p`` a printable (int64, uint64, float64, boolean);
    ``Tuple(a, b)`` a tuple; a last argument ``t...`` repeats zero or more times.
    ``attrs`` other than "axis" must be present."""

    category: str
    signature: str
    effects: bool = False
    attrs: tuple = ()
    doc: str = ""
    also: tuple = ()  # further signatures the intrinsic accepts (e.g. fmod of integers)


#: category -> how codegen lowers its intrinsics
CATEGORIES = {
    "special": "Target.special_register: an int32 id or size",
    "barrier": "Target.barrier: block barrier (a sync site on cpu)",
    "fence": "Target.fence: memory fence of the scope in codegen's _FENCES",
    "wave": "Target.wave_op: wave operation (a sync site on cpu)",
    "lane": "computed from laneid by lower_intrinsics.py",
    "bits": "LLVM bit-manipulation intrinsics (lower_intrinsics.py)",
    "math": "Target.math: float math",
    "predicate": "float class tests by comparison (lower_intrinsics.py)",
    "numeric": "abs/min/max/round and numpy's minimum/maximum/fmin/fmax on scalars (lower_intrinsics.py)",
    "misc": "lowered by name in lower_intrinsics.py: output, complex parts, frexp/ldexp, nanosleep",
    "bf16": "bfloat16 roundings and bit casts (codegen/lowering/bf16.py)",
    "matrix": "matrix fragments: Target.matrix_op (cpu: lowering/matrix.py; amdgpu: MFMA/WMMA, amdgpu/matrix.py)",
}

_MATH1 = ("sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 "
          "log1p sqrt cbrt erf erfc gamma lgamma floor ceil trunc rint fabs")

# grid()/gridsize() are expanded by the frontend into the "special" ops (int64 math).
# Wave ops: mask is uint64 (-1 / 0xFFFFFFFF = all lanes; accepted, every lane takes part);
# lane arguments int32; the value any scalar of <= 64 bits.
INTRINSICS = {
    "thread_idx": Op("special", "() -> int32", attrs=("axis",)),
    "block_idx": Op("special", "() -> int32", attrs=("axis",)),
    "block_dim": Op("special", "() -> int32", attrs=("axis",)),
    "grid_dim": Op("special", "() -> int32", attrs=("axis",)),
    "warpsize": Op("special", "() -> int32", doc="64 on gfx9 and by default on cpu, 32 on RDNA"),
    "laneid": Op("special", "() -> int32", doc="the thread's lane in its wave: linear tid % warpsize"),
    "syncthreads": Op("barrier", "() -> void", effects=True),
    "syncthreads_count": Op("barrier", "(boolean) -> int32", effects=True),
    "syncthreads_and": Op("barrier", "(boolean) -> int32", effects=True),
    "syncthreads_or": Op("barrier", "(boolean) -> int32", effects=True),
    "threadfence_block": Op("fence", "() -> void", effects=True),
    "threadfence": Op("fence", "() -> void", effects=True),
    "threadfence_system": Op("fence", "() -> void", effects=True),
    "syncwarp": Op("wave", "(uint64) -> void", effects=True),
    "shfl_sync": Op("wave", "(uint64, x, int32) -> x", effects=True, doc="source lane taken mod warpsize"),
    "shfl_up_sync": Op("wave", "(uint64, x, int32) -> x", effects=True, doc="lane - delta; own value if < 0"),
    "shfl_down_sync": Op("wave", "(uint64, x, int32) -> x", effects=True, doc="lane + delta; own value if >= warpsize"),
    "shfl_xor_sync": Op("wave", "(uint64, x, int32) -> x", effects=True),
    "ballot_sync": Op("wave", "(uint64, boolean) -> uint64", effects=True),
    "all_sync": Op("wave", "(uint64, boolean) -> boolean", effects=True),
    "any_sync": Op("wave", "(uint64, boolean) -> boolean", effects=True),
    "eq_sync": Op("wave", "(uint64, boolean) -> boolean", effects=True),
    "activemask": Op("wave", "() -> uint64", effects=True),
    "lanemask_lt": Op("lane", "() -> uint64"),
    "popc": Op("bits", "(i) -> int32"),
    "clz": Op("bits", "(i) -> int32"),
    "ffs": Op("bits", "(i) -> int32", doc="1-based index of the lowest set bit, 0 if none"),
    "brev": Op("bits", "(i) -> i"),
    "fma": Op("math", "(f, f, f) -> f"),
    **{name: Op("math", "(f) -> f") for name in _MATH1.split()},
    **{name: Op("math", "(f, f) -> f") for name in "atan2 pow hypot copysign".split()},
    "fmod": Op("math", "(f, f) -> f", also=("(i, i) -> i",),
               doc="integers: C remainder, the dividend's sign, 0 for a zero divisor (numpy)"),
    "isnan": Op("predicate", "(f) -> boolean"),
    "isinf": Op("predicate", "(f) -> boolean"),
    "isfinite": Op("predicate", "(f) -> boolean"),
    "abs": Op("numeric", "(n) -> n", doc="integers wrap: abs(MIN) == MIN"),
    "min": Op("numeric", "(x, x) -> x", doc="floats: returns a unless b < a (Python's min(a, b))"),
    "max": Op("numeric", "(x, x) -> x", doc="floats: returns a unless b > a"),
    "round": Op("numeric", "(f) -> f", doc="half to even, like Python/numpy; attrs ndigits (optional): "
                "Python's round(x, ndigits) of the float64 value"),
    "round_digits": Op("numeric", "(float64, int64) -> float64",
                       doc="Python's round(x, ndigits) with ndigits known at run time only"),
    "minimum": Op("numeric", "(f, f) -> f", doc="np.minimum: NaN if either is; of equal values b, float16 a"),
    "maximum": Op("numeric", "(f, f) -> f", doc="np.maximum: as minimum"),
    "fmin": Op("numeric", "(f, f) -> f", doc="np.fmin: a NaN operand is ignored; otherwise as minimum"),
    "fmax": Op("numeric", "(f, f) -> f", doc="np.fmax: as fmin"),
    "remainder": Op("math", "(f, f) -> f", doc="IEEE remainder: x - n*y, n = x/y rounded to even"),
    "nextafter": Op("math", "(f, f) -> f", doc="float32/float64"),
    "grid_sync": Op("barrier", "() -> void", effects=True,
                    doc="cg.this_grid().sync(): every thread of a cooperative launch"),
    "print": Op("misc", "(p...) -> void", effects=True, attrs=("format",),
                doc="one whole line; format: printf text with %lld/%llu/%f/%s (True/False), literal %%"),
    "complex": Op("misc", "(f, f) -> c", doc="real and imaginary parts"),
    "real": Op("misc", "(c) -> f"),
    "imag": Op("misc", "(c) -> f"),
    "frexp": Op("misc", "(f) -> Tuple(f, int32)", doc="mantissa in [0.5, 1), exponent; (x, 0) for 0/inf/NaN"),
    "ldexp": Op("misc", "(f, int32) -> f"),
    "nanosleep": Op("misc", "(uint32) -> void", effects=True, doc="a back-off hint; see Target.nanosleep"),
    "breakpoint": Op("misc", "() -> void", effects=True,
                     doc="breakpoint()/pdb.set_trace(): pdb stops there on the sim target; the compiled "
                         "targets compile nothing for it (and warn)"),
    "value_error": Op("misc", "() -> void", effects=True,
                      doc="debug=True: record a ValueError (attrs message, optional) and leave the thread; "
                          "nothing without debug (slice assignment's checks)"),
    "bf16_fma": Op("bf16", "(bfloat16, bfloat16, bfloat16) -> bfloat16", doc="a*b+c rounded once to bfloat16"),
    "bf16_round": Op("bf16", "(n) -> bfloat16", attrs=("mode",),
                     doc="a real number rounded to bfloat16; mode rn (nearest-even), rz, rd or ru"),
    "bf16_as_int16": Op("bf16", "(bfloat16) -> int16", doc="the bits"),
    "bf16_as_uint16": Op("bf16", "(bfloat16) -> uint16", doc="the bits"),
    "int16_as_bf16": Op("bf16", "(int16) -> bfloat16", doc="bits as a bfloat16"),
    "uint16_as_bf16": Op("bf16", "(uint16) -> bfloat16", doc="bits as a bfloat16"),
    "frag_new": Op("matrix", "() -> m", effects=True, doc="a fragment's storage, zeroed"),
    "frag_fill": Op("matrix", "(m, x) -> void", effects=True, doc="every element (value of the element type)"),
    "frag_load": Op("matrix", "(m, a, int64, int64) -> void", effects=True, attrs=("layout",),
                    doc="fragment, array, element offset, leading dimension; layout row/col of the memory"),
    "frag_store": Op("matrix", "(a, m, int64, int64) -> void", effects=True, attrs=("layout",),
                     doc="array, accumulator, element offset, leading dimension"),
    "frag_mma": Op("matrix", "(md, ma, mb, mc) -> void", effects=True, doc="d = a @ b + c"),
    "index_error": Op("misc", "(int64, int64) -> void", effects=True,
                      doc="debug=True: record an IndexError (attrs message) for index, extent and leave the "
                          "thread; nothing without debug (a tuple indexed at run time)"),
}


def intrinsic_names(category: str, signature: str | None = None) -> tuple:
    """Names of the catalogued intrinsics of ``category`` (and ``signature``), in table order.

    >>> intrinsic_names("barrier")
    ('syncthreads', 'syncthreads_count', 'syncthreads_and', 'syncthreads_or', 'grid_sync')
    """
    return tuple(n for n, op in INTRINSICS.items()
                 if op.category == category and (signature is None or op.signature == signature))


def check_catalogue(table: dict) -> None:
    """Raise ``TypeError`` naming the first malformed row of an intrinsic table."""
    for name, op in table.items():
        if not isinstance(op, Op) or op.category not in CATEGORIES or "->" not in op.signature:
            raise TypeError(f"ir.INTRINSICS[{name!r}] = {op!r}: expected Op(<one of {sorted(CATEGORIES)}>, '(...) -> t')")


check_catalogue(INTRINSICS)  # a row merged in another shape fails at import, not at some kernel's compile
