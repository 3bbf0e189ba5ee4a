"""Typed IR -> Python source, with the user's file, line numbers and variable names.

Each IR function becomes one Python function. Statements are written one per
generated line; the parsed tree's line numbers are then replaced by the IR's
``SourceLoc`` lines and the tree compiled with the user's file name, so pdb
shows the user's file and ``next`` steps by the user's lines. Every value is a
numpy scalar of its IR type: operations on two scalars of one type give that
type (wraparound, float32 rounding); what numpy does differently from pykern
(floor division by zero, shift counts, float->int saturation, ``**`` of
integers) goes through ``runtime`` helpers.

Example::

    >>> from pykern.sim.codegen_py import py_name
    >>> py_name("acc$s2")
    'acc'
"""

from __future__ import annotations

import ast
import re

from pykern.core.errors import CompileError
from pykern.frontend import ir
from pykern.frontend import types as T

#: block barriers (and the grid's): a ``yield`` of (kind, site, value) to the scheduler, which
#: resumes the threads together
_BARRIERS = {"syncthreads": "syncthreads", "syncthreads_count": "count", "syncthreads_and": "and",
             "syncthreads_or": "or", "grid_sync": "grid"}

#: wave operations: a ``yield`` of (name, site, value type, args...); the scheduler completes them
#: for the lanes of a wave waiting at the same site, as the cpu target's scheduler does
_WAVE_OPS = frozenset(ir.intrinsic_names("wave"))

_MATRIX = frozenset(ir.intrinsic_names("matrix"))

#: intrinsics read straight from the running thread's state (``scheduler.SimThread``)
_SPECIAL = {"thread_idx": "tid", "block_idx": "bid", "block_dim": "bdim", "grid_dim": "gdim"}

_VERSION = re.compile(r"^([A-Za-z_]\w*)(?:\$s\d+|\$u\d+_\d+)+$")


def py_name(name: str) -> str:
    """The user's name of an IR variable (versions ``x$s1`` are all ``x``); an internal
    name (with ``$``) becomes an identifier no user variable can have."""
    m = _VERSION.match(name)
    if m:
        return m.group(1)
    return name if name.isidentifier() else "_pk_" + re.sub(r"\W", "_", name)


class _Fn:
    """Source lines of one function: ``lines[k]`` came from user line ``src_lines[k]``."""

    def __init__(self, gen, fn: ir.Function):
        self.gen, self.fn = gen, fn
        self.lines: list = []
        self.src_lines: list = []
        self.cur_line = fn.loc.line if fn.loc else 1

    def emit(self, text: str, depth: int, loc) -> None:
        if loc is not None and loc.line:
            self.cur_line = loc.line
        self.lines.append("    " * depth + text)
        self.src_lines.append(self.cur_line)

    # ------------------------------------------------------------------ statements
    def block(self, stmts: list, depth: int) -> None:
        if not stmts:
            self.emit("pass", depth, None)
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s, depth: int) -> None:
        e, loc = self.expr, s.loc
        if isinstance(s, ir.Assign):
            self.emit(f"{py_name(s.target)} = {e(s.value)}", depth, loc)
        elif isinstance(s, ir.Store):
            self.emit(f"{e(s.array)}[{self.index(s.indices)}] = {e(s.value)}", depth, loc)
        elif isinstance(s, ir.ExprStmt):
            if isinstance(s.value, ir.Intrinsic) and s.value.name == "breakpoint":
                self.emit("breakpoint()", depth, loc)  # in this frame: pdb stops in the user's code
            else:
                self.emit(e(s.value), depth, loc)
        elif isinstance(s, ir.If):
            self.emit(f"if {e(s.cond)}:", depth, loc)
            self.block(s.then, depth + 1)
            if s.orelse:
                self.emit("else:", depth, None)
                self.block(s.orelse, depth + 1)
        elif isinstance(s, ir.While):
            self.emit(f"while {e(s.cond)}:", depth, loc)
            self.block(s.body, depth + 1)
        elif isinstance(s, ir.ForRange):
            dt = self.gen.dtype(self.fn.locals[s.var])
            self.emit(f"for {py_name(s.var)} in _pk_rt.typed_range({e(s.start)}, {e(s.stop)}, {e(s.step)}, {dt}):",
                      depth, loc)
            self.block(s.body, depth + 1)
        elif isinstance(s, ir.Break):
            self.emit("break", depth, loc)
        elif isinstance(s, ir.Continue):
            self.emit("continue", depth, loc)
        elif isinstance(s, ir.Return):
            self.emit("return" + (f" {e(s.value)}" if s.value is not None else ""), depth, loc)
        elif isinstance(s, ir.Raise):
            self.emit(f"_pk_rt.thread_raise({s.cls!r}, {s.args!r})", depth, loc)
        else:
            raise self.gen.unsupported(f"statement {type(s).__name__}", loc)

    def matrix(self, x) -> str:
        """A fragment op: a fragment is the whole tile, per thread, as on the cpu target."""
        e, g = self.expr, self.gen
        if x.name == "frag_new":
            ft = x.type
            return f"_pk_np.zeros(({ft.rows}, {ft.cols}), {g.dtype(ft.dtype)})"
        if x.name == "frag_fill":
            ft = x.args[0].type
            return f"_pk_rt.frag_fill({e(x.args[0])}, {g.cast(e(x.args[1]), x.args[1].type, ft.dtype)})"
        args = ", ".join(e(a) for a in x.args)
        if x.name == "frag_mma":
            return f"_pk_rt.frag_mma({args})"
        return f"_pk_rt.{x.name}({args}, {x.attrs['layout']!r})"

    def index(self, indices: list) -> str:
        if not indices:
            return "()"
        return ", ".join(self.expr(i) for i in indices)

    # ------------------------------------------------------------------ expressions
    def expr(self, x) -> str:
        e, g = self.expr, self.gen
        if isinstance(x, ir.Const):
            return g.const(x.value, x.type)
        if isinstance(x, ir.Var):
            return py_name(x.name)
        if isinstance(x, ir.BinOp):
            a, b = e(x.lhs), e(x.rhs)
            if x.op in ("+", "-", "*", "/", "&", "|", "^"):
                return f"({a} {x.op} {b})"
            helper = {"//": "floordiv", "%": "mod", "**": "power", "<<": "shl", ">>": "shr"}[x.op]
            return f"_pk_rt.{helper}({a}, {b})"
        if isinstance(x, ir.Compare):
            return f"({e(x.lhs)} {x.op} {e(x.rhs)})"
        if isinstance(x, ir.UnaryOp):
            if x.op == "not":
                return f"_pk_np.bool_(not {e(x.operand)})"
            return f"({x.op}{e(x.operand)})"
        if isinstance(x, ir.BoolOp):
            return "_pk_np.bool_(" + f" {x.op} ".join(e(v) for v in x.values) + ")"
        if isinstance(x, ir.IfExp):
            return f"({e(x.then)} if {e(x.cond)} else {e(x.orelse)})"
        if isinstance(x, ir.Cast):
            return g.cast(e(x.value), x.value.type, x.type)
        if isinstance(x, ir.Load):
            return f"{e(x.array)}[{self.index(x.indices)}]"
        if isinstance(x, ir.ArrayAttr):
            if x.attr in ("shape", "strides"):
                return f"_pk_np.int64({e(x.array)}.{x.attr}[{x.dim}])"
            if x.attr == "address":
                return f"_pk_np.int64({e(x.array)}.ctypes.data)"
            return f"_pk_np.int64({e(x.array)}.{x.attr})"
        if isinstance(x, ir.TupleExpr):
            return "(" + "".join(e(v) + ", " for v in x.elems) + ")"
        if isinstance(x, ir.TupleGet):
            return f"{e(x.value)}[{x.index}]"
        if isinstance(x, ir.Call):
            call = f"{g.fn_name(x.func)}({', '.join(e(a) for a in x.args)})"
            # a callee that reaches a barrier is a generator: the block's threads take turns at it
            return f"(yield from {call})" if g.suspends(g.module.functions[x.func]) else call
        if isinstance(x, ir.Intrinsic) and x.name in _BARRIERS:
            return f"(yield ({_BARRIERS[x.name]!r}, {g.new_site()}, {e(x.args[0]) if x.args else 'None'}))"
        if isinstance(x, ir.Intrinsic) and x.name in _WAVE_OPS:
            vt = g.dtype(x.args[1].type) if x.name.startswith("shfl") else "None"
            args = "".join(", " + e(a) for a in x.args)
            return f"(yield ({x.name!r}, {g.new_site()}, {vt}{args}))"
        if isinstance(x, ir.Intrinsic) and x.name in _SPECIAL:
            return f"_pk_rt.STATE.thread.{_SPECIAL[x.name]}[{x.attrs.get('axis', 0)}]"
        if isinstance(x, ir.Intrinsic) and x.name in _MATRIX:
            return self.matrix(x)
        if isinstance(x, ir.Intrinsic):
            args = "".join(e(a) + ", " for a in x.args)
            return f"_pk_rt.intrinsic({x.name!r}, {g.const_obj(x.attrs)}, {g.dtype(x.type)}, {args})"
        if isinstance(x, ir.Atomic):
            vals = ", ".join(e(v) for v in x.values)
            return f"_pk_rt.atomic({x.op!r}, {e(x.array)}, ({self.index(x.indices)},), {vals})"
        if isinstance(x, ir.AllocArray):
            return f"_pk_rt.alloc({x.space!r}, {x.name!r}, {x.shape!r}, {g.dtype(x.type.dtype)})"
        if isinstance(x, ir.ConstArray):
            import numpy as np

            arr = np.frombuffer(x.data, dtype=x.type.dtype.np_dtype).reshape(x.shape)
            arr.flags.writeable = False
            return g.const_obj(arr)
        if isinstance(x, ir.GlobalArray):
            return f"_pk_rt.global_array({x.address}, {x.shape!r}, {x.strides!r}, {g.dtype(x.type.dtype)})"
        if isinstance(x, ir.ArrayView):
            items = []
            for it in x.items:
                if isinstance(it, ir.Slice):
                    items.append(f"_pk_rt.sl({', '.join('None' if p is None else e(p) for p in (it.start, it.stop, it.step))})")
                else:
                    items.append(e(it))
            return f"_pk_rt.view({e(x.array)}, ({''.join(i + ', ' for i in items)}))"
        if isinstance(x, ir.Transpose):
            return f"{e(x.array)}.T"
        if isinstance(x, ir.Reshape):
            return f"{e(x.array)}.reshape(({''.join(e(s) + ', ' for s in x.shape)}))"
        if isinstance(x, ir.Reinterpret):
            if x.part:
                return f"{e(x.array)}.{'imag' if x.offset else 'real'}"
            return f"{e(x.array)}.view({g.dtype(x.type.dtype)})"
        if isinstance(x, ir.RecordField):
            return f"_pk_rt.field({e(x.value)}, {x.name!r})"
        if isinstance(x, ir.ExternCall):
            return self.external(x)
        raise g.unsupported(f"expression {type(x).__name__}", getattr(x, "loc", None))

    def external(self, x) -> str:
        """A call of external device code: its cpu build, called through ctypes."""
        from pykern.sim import runtime

        g = self.gen
        try:
            fn = runtime.external(g.externals, x.symbol, x.abi, x.params, x.type)
        except TypeError as exc:
            raise g.unsupported(f"{exc} (in a call of '{x.symbol}')", x.loc) from None
        return f"{g.const_obj(fn)}({', '.join(self.expr(a) for a in x.args)})"


class _Module:
    def __init__(self, module: ir.Module, externals=None):
        self.module = module
        self.externals = externals  # the external device code it calls, loaded (external_build.HostFunctions)
        self.consts: dict = {}  # name -> object placed in the globals of the generated code
        self._const_keys: dict = {}
        self.names: dict = {}  # IR function name -> Python name
        self.sites = 0
        used = set()
        for f in [*module.functions.values(), module.kernel]:
            base = f.pyname or py_name(f.name.split("(")[0].split(".")[-1])
            base = base if base.isidentifier() else "_pk_fn"
            name, k = base, 1
            while name in used:
                k += 1
                name = f"{base}_pk{k}"
            used.add(name)
            self.names[f.name] = name

    @staticmethod
    def suspends(fn) -> bool:
        """``fn`` reaches a barrier or a wave op: a generator the scheduler resumes."""
        return bool(fn.uses_barrier or fn.uses_wave_ops)

    def new_site(self) -> int:
        """A new sync site: threads meet only at the same one (two on one line are two)."""
        self.sites += 1
        return self.sites

    def fn_name(self, name: str) -> str:
        return self.names[name]

    def const_obj(self, obj) -> str:
        name = f"_pk_c{len(self.consts)}"
        self.consts[name] = obj
        return name

    def const(self, value, t) -> str:
        key = (repr(value), str(t))
        hit = self._const_keys.get(key)
        if hit is None:
            hit = self._const_keys[key] = self.const_obj(_scalar(value, t) if t.is_scalar else value)
        return hit

    def dtype(self, t) -> str:
        import numpy as np

        if not isinstance(t, (T.Boolean, T.Integer, T.Float, T.Complex, T.Record)):
            return "None"
        key = ("dtype", str(t))
        hit = self._const_keys.get(key)
        if hit is None:
            hit = self._const_keys[key] = self.const_obj(np.dtype(np.bool_) if isinstance(t, T.Boolean)
                                                         else t.np_dtype)
        return hit

    def cast(self, text: str, src, dst) -> str:
        """A ``Cast``: the numpy scalar constructor where it is exact (widening integers,
        int -> float, float -> float), the runtime's rules otherwise."""
        if src == dst:
            return text
        if isinstance(dst, T.BFloat):  # rounded as codegen/lowering/bf16.py rounds
            return f"_pk_rt.to_bf16({text})"
        if isinstance(src, T.BFloat):  # through its exact float32
            text, src = f"_pk_np.float32({text})", T.float32
            if src == dst:
                return text
        if isinstance(dst, T.Boolean):
            return f"_pk_np.bool_({text} != 0)"
        if isinstance(dst, (T.NPDatetime, T.NPTimedelta)):  # an int64 count of the unit
            return f"_pk_np.int64({text}).view({self.dtype(dst)})"
        exact = (isinstance(src, T.Integer) and isinstance(dst, T.Integer) and dst.bits >= src.bits
                 and (dst.signed == src.signed or dst.bits > src.bits and dst.signed)) or \
            (isinstance(src, (T.Integer, T.Boolean)) and isinstance(dst, (T.Float, T.Complex))) or \
            (isinstance(src, T.Float) and isinstance(dst, (T.Float, T.Complex))) or \
            (isinstance(src, T.Boolean) and isinstance(dst, T.Integer))
        if exact:
            return f"{self.dtype(dst)}.type({text})"
        return f"_pk_rt.cast({text}, {self.dtype(dst)})"

    def unsupported(self, what: str, loc) -> CompileError:
        return CompileError(f"{what} is not supported on the sim target yet", loc)


def _scalar(value, t):
    import numpy as np

    if isinstance(t, T.Boolean):
        return np.bool_(value)
    dt = t.np_dtype
    if isinstance(t, T.Integer):
        return np.array(int(value)).astype(dt)[()]  # wraps like a cast, never raises
    return dt.type(value)


def generate(module: ir.Module, filename: str, base_globals: dict, externals=None):
    """``(functions, source)``: the Python functions of ``module`` by IR name, compiled with
    ``filename`` and the IR's line numbers, their globals ``base_globals`` plus the
    runtime's names (all starting ``_pk_``), and the generated text (for messages).
    ``externals``: the external device functions the module calls, loaded."""
    import numpy as np

    from pykern.sim import runtime

    gen = _Module(module, externals)
    texts, line_map = [], []
    for f in [*module.functions.values(), module.kernel]:
        fg = _Fn(gen, f)
        params = ", ".join(py_name(p.name) for p in f.params)
        fg.emit(f"def {gen.names[f.name]}({params}):", 0, f.loc)
        fg.block(f.body, 1)
        texts += fg.lines
        line_map += fg.src_lines
    source = "\n".join(texts) + "\n"
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno = line_map[node.lineno - 1]
            end = getattr(node, "end_lineno", None)
            node.end_lineno = max(node.lineno, line_map[end - 1]) if end else node.lineno
    code = compile(tree, filename, "exec")
    env = dict(base_globals)
    env.update(gen.consts)
    env["_pk_rt"] = runtime
    env["_pk_np"] = np
    exec(code, env)
    return {name: env[py] for name, py in gen.names.items()}, source
