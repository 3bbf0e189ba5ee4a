"""Typed IR (``frontend.ir``) -> LLVM IR (``llvmlite.ir``), target-independent.

One ``_x_<NodeClass>`` method per expression node and ``_s_<NodeClass>`` per
statement. Everything that differs between targets goes through the
``Target`` methods (``codegen/target.py``); there is no ``if target ==``.

This module holds the module and function structure (kernel and device functions, locals,
kernel arguments rebuilt from their flat parameters), statements and control flow, calls
(inlined or not) and the facts gathered before lowering (``frontend.analysis.function_facts``). ``FunctionLowering``
gathers the node methods of its mixins, one module each:

* ``scalars.py`` -- constants, arithmetic, comparisons, conversions;
* ``array_ops.py`` -- element access and bounds checks, views, shared/local/const arrays;
* ``intrinsics.py`` -- intrinsics (registers, barriers, wave ops, math...) and atomics;
* ``range_loops.py`` -- ``for ... in range`` loops;
* ``llvm_types.py`` -- the LLVM type of each pykern type, shared helpers.

Every local variable is an entry-block ``alloca`` (mem2reg/SROA clean up).

Example::

    lowered = lower_module(ir_module, get_target("cpu"), CompileOptions())
    print(lowered.llmodule)
"""

from __future__ import annotations

import numbers

from llvmlite import ir as L

from pykern.core.errors import CompileError
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.analysis import function_facts, walk
from pykern.codegen import abi_map as abi
from pykern.codegen.contract import CompileOptions, KernelInfo, LoweredKernel, SyncSite
from pykern.codegen.lowering.array_ops import ArrayLowering
from pykern.codegen.lowering.intrinsics import BARRIER_KINDS, WAVE_OPS, IntrinsicLowering  # noqa: F401  (cpu_regions reads them here)
from pykern.codegen.lowering.scalars import ScalarLowering
from pykern.codegen.lowering.bf16 import BF16Lowering
from pykern.codegen.lowering.extern_calls import ExternCallLowering
from pykern.codegen.lowering.llvm_types import I1, I8, TypeMap, _sizeof, _zero  # noqa: F401  (cpu_regions reads _sizeof here)
from pykern.codegen.lowering.range_loops import RangeLoopLowering


# --------------------------------------------------------------------------
# module
# --------------------------------------------------------------------------


class ModuleLowering:
    """Lowers one ``ir.Module`` (a kernel and its device functions)."""

    def __init__(self, module: ir.Module, target, options: CompileOptions):
        self.module = module
        self.target = target
        self.options = options
        self.types = TypeMap(target)
        self.fp_contract = bool(target.fp_contract()) and options.fma  # asked once per module
        kname = module.kernel.name
        self.llmodule = L.Module(name=kname)
        self.llmodule.triple = target.triple()
        self.llmodule.data_layout = target.data_layout()
        # (uses_barrier, uses_wave_ops, uses_dynamic_shared) per function name, transitive
        uses = {name: f[:3] for name, f in function_facts(module).items()}
        b, w, d = uses[kname]
        self.uses = uses
        self.info = KernelInfo(
            kernel_name=kname,
            uses_barrier=b,
            uses_wave_ops=w,
            uses_dynamic_shared=d,
            wave_size=options.wave_size or 64,
            debug=options.debug,
            sanitize=options.sanitize,
            function_uses=uses,
        )
        target.analyse(module, self.info)
        self._device_fns = {}  # name -> llvm Function
        self._pending = []  # (ir.Function, llvm Function)
        self._strings = {}
        self._shared_offsets = {}
        self.local_bytes = 0  # local.array bytes of every function lowered so far
        self.poll_interval = int(target.loop_poll_interval() or 0)
        #: sanitize=: the kernel's array parameters whose accesses the launch may leave unchecked,
        #: ``{name: (mask bit, kind, grid axes)}`` (``sanitize_elision``)
        self.san_elide = {}
        if options.sanitize:
            from pykern.codegen.lowering.sanitize_elision import elidable

            found = elidable(module.kernel)
            self.san_elide = {n: (bit, kind, axes) for bit, (n, (kind, axes)) in enumerate(found.items())}
            # the memory a launch's elided arguments must not overlap: device arrays the code names
            # as globals (any function of the module may write them)
            glob = {(g.address, tuple(g.shape), tuple(g.strides), _sizeof(g.type.dtype))
                    for f in (module.kernel, *module.functions.values()) for g in walk(f.body)
                    if isinstance(g, ir.GlobalArray)}
            self.info.target_facts["sanitize_elide"] = dict(self.san_elide)
            self.info.target_facts["sanitize_globals"] = sorted(glob)

    # ---- helpers used by FunctionLowering
    def new_site(self, kind: str, loc) -> SyncSite:
        site = SyncSite(len(self.info.sync_sites), kind, loc)
        self.info.sync_sites.append(site)
        return site

    def access_site(self, kind: str, loc, array: str, nbytes: int, local_ndim: int = 0) -> int:
        """The id of a sanitized array access (``KernelInfo.access_sites``), one per source
        position, kind and array (an inlined device function's accesses share their sites);
        ``local_ndim``: the axes of a local array whose access passes its index (else 0)."""
        key = (kind, loc.file if loc else "", loc.line if loc else 0, loc.col if loc else 0, array, nbytes,
               local_ndim)
        ids = self.info.target_facts.setdefault("access_site_ids", {})
        if key not in ids:
            ids[key] = len(self.info.access_sites)
            self.info.access_sites.append(key)
        return ids[key]

    def cstring(self, text: str):
        if text not in self._strings:
            data = bytearray(text.encode("utf-8")) + b"\0"
            ty = L.ArrayType(I8, len(data))
            g = L.GlobalVariable(self.llmodule, ty, f"__pykern_str{len(self._strings)}")
            g.global_constant = True
            g.linkage = "private"
            g.initializer = L.Constant(ty, data)
            self._strings[text] = g
        return self._strings[text]

    def intrinsic(self, name, ret, argtypes):
        g = self.llmodule.globals.get(name)
        if g is None:
            g = L.Function(self.llmodule, L.FunctionType(ret, list(argtypes)), name)
        return g

    def shared_offset(self, name: str, nbytes: int, align: int) -> int:
        if name not in self._shared_offsets:
            off = (self.info.static_shared_bytes + align - 1) // align * align
            self._shared_offsets[name] = off
            self.info.shared.append((name, off, nbytes, align))
            self.info.static_shared_bytes = off + nbytes
        return self._shared_offsets[name]

    def device_function(self, fn: ir.Function):
        """The LLVM function of a (non-inlined) device function, declared on demand."""
        f = self._device_fns.get(fn.name)
        if f is None:
            argtys = [self.types.value(p.type) for p in fn.params] + list(self.target.hidden_param_types())
            fnty = L.FunctionType(self.types.value(fn.return_type), argtys)
            f = L.Function(self.llmodule, fnty, _sanitize("__pykern_dev_" + fn.name))
            f.linkage = "internal"
            self._device_fns[fn.name] = f
            self._pending.append((fn, f))
        return f

    def run(self) -> LoweredKernel:
        k = self.module.kernel
        params = abi.flatten_params([p.type for p in k.params], [p.name for p in k.params])
        ptypes = [self.types.param(p) for p in params]
        kfn = self.target.define_kernel(self.llmodule, self.info, params, ptypes, self.options)
        fx = (self.target.kernel_lowering(self.info) or FunctionLowering)(self, k, kfn, is_kernel=True)
        fx.lower_kernel(params)
        while self._pending:
            fn, f = self._pending.pop()
            FunctionLowering(self, fn, f, is_kernel=False).lower_device()
        return LoweredKernel(self.llmodule, kfn, params, self.info, self.options, self.module)


def _sanitize(name: str) -> str:
    return "".join(c if (c.isalnum() or c in "_.$") else "_" for c in name)


def lower_module(module: ir.Module, target, options: CompileOptions) -> LoweredKernel:
    """Lower ``module`` for ``target``; returns the unverified llvmlite module + facts."""
    return ModuleLowering(module, target, options).run()


# --------------------------------------------------------------------------
# functions
# --------------------------------------------------------------------------


class _InlineFrame:
    def __init__(self, slot, exit_block, fn):
        self.slot = slot
        self.exit = exit_block
        self.fn = fn


class FunctionLowering(ScalarLowering, BF16Lowering, ArrayLowering, IntrinsicLowering, ExternCallLowering,
                       RangeLoopLowering):
    """Lowers one function body; this is the ``fx`` the Target methods get. Statements,
    control flow and calls are here; the mixins lower scalars, arrays and intrinsics."""

    # the module's, the same for every function lowered into it (read from ``ml``, never copied)
    target = property(lambda self: self.ml.target)
    options = property(lambda self: self.ml.options)
    info = property(lambda self: self.ml.info)
    types = property(lambda self: self.ml.types)
    module = property(lambda self: self.ml.llmodule)

    def __init__(self, ml: ModuleLowering, irfn: ir.Function, llfn, is_kernel: bool):
        self.ml = ml
        self.function = llfn
        self.ir_function = irfn
        self.is_kernel = is_kernel
        nh = len(self.target.hidden_param_types())
        self.hidden = list(llfn.args[len(llfn.args) - nh:]) if nh else []
        self._entry = llfn.append_basic_block("entry")
        self._abuilder = L.IRBuilder(self._entry)
        body = llfn.append_basic_block("body")
        self.builder = L.IRBuilder(body)
        self.loc = irfn.loc
        self.scopes = [{}]
        self.loops = []  # (continue_block, break_block)
        self.inline = []  # stack of _InlineFrame
        self.inline_chain = [irfn.name]

    # ---- the fx API for targets
    def alloca(self, lltype, name=""):
        a = self._abuilder.alloca(lltype, name=name)
        return a

    def intrinsic(self, name, ret, argtypes):
        return self.ml.intrinsic(name, ret, argtypes)

    def cstring(self, text):
        return self.ml.cstring(text)

    def fail(self, msg, loc=None, hint=None):
        raise CompileError(msg, loc or self.loc, hint)

    # ---- structure
    def _declare_locals(self, fn: ir.Function, prefix=""):
        scope = {}
        for name, ty in fn.locals.items():
            if isinstance(ty, T.Void):
                continue
            llty = self.types.value(ty)
            scope[name] = slot = self.alloca(llty, name=prefix + name)
            # a variable assigned on one path only reads as 0 on the others (as
            # documented), never as LLVM's undef, which may be any value
            self.builder.store(_zero(llty), slot)
        return scope

    def _finish(self):
        self._abuilder.branch(self.function.blocks[1])

    def _new_block(self, name):
        return self.function.append_basic_block(name)

    def _ensure_open(self):
        """After a terminator, continue emitting into a fresh (dead) block."""
        if self.builder.block.is_terminated:
            self.builder.position_at_end(self._new_block("dead"))

    def lower_kernel(self, params):
        fn = self.ir_function
        self.scopes = [self._declare_locals(fn)]
        self.target.kernel_prologue(self)
        args = list(self.function.args)
        # rebuild each kernel argument from its flat parameters
        by_arg = {}
        for p, a in zip(params, args):
            by_arg.setdefault(p.arg_index, []).append(a)
        for i, prm in enumerate(fn.params):
            vals = list(by_arg.get(i, []))
            v = self._unflatten(prm.type, vals)
            if prm.name in self.scopes[-1]:
                self.builder.store(v, self.scopes[-1][prm.name])
        self.lower_block(fn.body)
        if not self.builder.block.is_terminated:
            self.target.kernel_return(self)
        self._finish()

    def _unflatten(self, t, vals):
        b = self.builder
        if isinstance(t, T.Array):
            st = self.types.value(t)
            v = _zero(st)
            v = b.insert_value(v, vals.pop(0), 0)
            for k in range(t.ndim):
                v = b.insert_value(v, vals.pop(0), [1, k])
            for k in range(t.ndim):
                v = b.insert_value(v, vals.pop(0), [2, k])
            return v
        if isinstance(t, T.Tuple):
            v = _zero(self.types.value(t))
            for k, e in enumerate(t.elems):
                v = b.insert_value(v, self._unflatten(e, vals), k)
            return v
        if isinstance(t, T.Complex):  # two flat parameters (abi.py)
            v = b.insert_value(_zero(self.types.value(t)), vals.pop(0), 0)
            return b.insert_value(v, vals.pop(0), 1)
        a = vals.pop(0)
        if isinstance(t, T.Boolean):
            return b.icmp_unsigned("!=", a, L.Constant(I8, 0))
        if isinstance(t, T.BFloat):
            return self.to_bf16(a, T.float64)
        return a

    def lower_device(self):
        fn = self.ir_function
        self.scopes = [self._declare_locals(fn)]
        for prm, a in zip(fn.params, self.function.args):
            if prm.name in self.scopes[-1]:
                self.builder.store(a, self.scopes[-1][prm.name])
        self.lower_block(fn.body)
        if not self.builder.block.is_terminated:
            self._ret_default()
        self._finish()

    def _ret_default(self):
        rt = self.function.function_type.return_type
        if isinstance(rt, L.VoidType):
            self.builder.ret_void()
        else:
            self.builder.ret(_zero(rt))

    def stop_thread(self):
        """Leave the thread (debug failure): kernel return, or a zero result
        from a device function (its caller continues; the error is recorded)."""
        if self.is_kernel:
            self.target.kernel_return(self)
        else:
            self._ret_default()

    def exit_thread(self):
        """Leave the thread for good (``raise``). A device function that can raise is always
        inlined (``_x_Call``), so this is the kernel's return; the work-item-loop lowering
        (``cpu_regions``) marks the thread exited instead."""
        if not self.is_kernel:
            self.fail("internal error: 'raise' in a device function that is not inlined")
        self.target.kernel_return(self)

    def debug_failure(self, fail_bb, ok_bb, kind, text, values):
        """Fill ``fail_bb``, where a ``debug=True`` check failed: record a ``kind`` error
        "<file>:<line>: <text> in `<source line>`" with the three i64 ``values``
        (``Target.record_error``) and leave the thread; code continues at ``ok_bb``."""
        self.builder.position_at_end(fail_bb)
        where, src = self._where()
        msg = f"{where}: {text}" + (f" in `{src}`" if src else "")
        self.target.record_error(self, kind, msg, values)
        self.stop_thread()
        self.builder.position_at_end(ok_bb)

    def _where(self):
        """("<file>:<line>", the stripped source line or "") of the node being lowered."""
        loc = self.loc
        where = f"{loc.file}:{loc.line}" if loc else "<unknown>"
        return where, (loc.source_line or "").strip() if loc else ""

    def var(self, name):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        self.fail(f"internal error: unknown variable {name!r}")

    # ---- statements
    def lower_block(self, stmts):
        for s in stmts:
            self._ensure_open()
            if s.loc is not None:
                self.loc = s.loc
            m = getattr(self, "_s_" + type(s).__name__, None)
            if m is None:
                self.fail(f"internal error: cannot lower statement {type(s).__name__}")
            m(s)

    def _s_Assign(self, s):
        v = self.expr(s.value)
        self.builder.store(v, self.var(s.target))

    def _s_ExprStmt(self, s):
        self.expr(s.value)

    def _s_If(self, s):
        b = self.builder
        then_bb = self._new_block("if.then")
        else_bb = self._new_block("if.else") if s.orelse else None
        end_bb = self._new_block("if.end")
        self._branch_on(s.cond, then_bb, else_bb or end_bb)
        b.position_at_end(then_bb)
        self.lower_block(s.then)
        if not b.block.is_terminated:
            b.branch(end_bb)
        if else_bb is not None:
            b.position_at_end(else_bb)
            self.lower_block(s.orelse)
            if not b.block.is_terminated:
                b.branch(end_bb)
        b.position_at_end(end_bb)

    def _s_While(self, s):
        b = self.builder
        head = self._new_block("while.head")
        body = self._new_block("while.body")
        latch = self._new_block("while.latch") if self.ml.poll_interval else head
        end = self._new_block("while.end")
        b.branch(head)
        b.position_at_end(head)
        self._branch_on(s.cond, body, end)
        b.position_at_end(body)
        self.loops.append((latch, end))
        self.lower_block(s.body)
        self.loops.pop()
        if not b.block.is_terminated:
            b.branch(latch)
        if latch is not head:
            b.position_at_end(latch)
            self._poll()
            b.branch(head)
        b.position_at_end(end)

    def _poll(self):
        """Ask the target whether the thread must stop (e.g. Ctrl-C on cpu);
        if so leave it like a failed debug bounds check does."""
        stop = self.target.loop_poll(self)
        if stop is None:
            return
        b = self.builder
        stop_bb = self._new_block("poll.stop")
        go_bb = self._new_block("poll.go")
        b.cbranch(stop, stop_bb, go_bb)
        b.position_at_end(stop_bb)
        self.stop_thread()
        b.position_at_end(go_bb)

    def _s_Break(self, s):
        if not self.loops:
            self.fail("'break' outside a loop")
        self.builder.branch(self.loops[-1][1])

    def _s_Continue(self, s):
        if not self.loops:
            self.fail("'continue' outside a loop")
        self.builder.branch(self.loops[-1][0])

    def _s_Raise(self, s):
        """The thread stops (numba.cuda: the kernel returns the exception's code). Under
        debug=True it first records a "raise" error: the exception's index in
        ``info.exceptions`` and "<file>:<line>: `<source line>`" (its first thread wins)."""
        if self.info.debug:
            table = self.info.exceptions
            # repr tells 1, 1.0 and True apart, which == does not
            same = [k for k, (c, a) in enumerate(table) if c == s.cls and repr(a) == repr(s.args)]
            if not same:
                table.append((s.cls, s.args))
            where, src = self._where()
            msg = f"{where}" + (f": `{src}`" if src else "")
            index = same[0] if same else len(table) - 1
            i64 = L.IntType(64)
            self.target.record_error(self, "raise", msg, [L.Constant(i64, index), L.Constant(i64, 0), L.Constant(i64, 0)])
        self.exit_thread()

    def _s_Return(self, s):
        b = self.builder
        val = self.expr(s.value) if s.value is not None else None
        if self.inline:
            fr = self.inline[-1]
            if val is not None and fr.slot is not None:
                b.store(val, fr.slot)
            b.branch(fr.exit)
        elif self.is_kernel:
            self.target.kernel_return(self)
        elif val is None or isinstance(self.function.function_type.return_type, L.VoidType):
            b.ret_void()
        else:
            b.ret(val)

    # ---- expressions
    def expr(self, e):
        if e.loc is not None:
            self.loc = e.loc
        m = getattr(self, "_x_" + type(e).__name__, None)
        if m is None:
            self.fail(f"internal error: cannot lower expression {type(e).__name__}")
        return m(e)

    def _x_Var(self, e):
        return self.builder.load(self.var(e.name))

    def _branch_on(self, e, true_bb, false_bb):
        """Branch on the truth of condition ``e``, an ``and``/``or``/``not`` of
        them as one conditional branch per operand (what clang emits for ``if (a
        && b)``), not a bool phi that SimplifyCFG turns into an ``and`` computing
        ``b`` on every path: kept apart, the operands stay in the blocks they
        guard, where the code that needs them already computed them (tiled
        matmul: one instruction fewer per guarded load). Same short-circuit
        evaluation either way."""
        if isinstance(e, ir.BoolOp):
            if e.loc is not None:
                self.loc = e.loc
            for v in e.values[:-1]:
                nxt = self._new_block("bool.next")
                if e.op == "and":
                    self._branch_on(v, nxt, false_bb)
                else:
                    self._branch_on(v, true_bb, nxt)
                self.builder.position_at_end(nxt)
            self._branch_on(e.values[-1], true_bb, false_bb)
        elif isinstance(e, ir.UnaryOp) and e.op == "not":
            self._branch_on(e.operand, false_bb, true_bb)
        else:
            val = self.expr(e)
            if val.type != I1:
                val = self._to_bool(val, e.type)
            self.builder.cbranch(val, true_bb, false_bb)

    def _x_BoolOp(self, e):
        b = self.builder
        end = self._new_block("bool.end")
        incoming = []
        for i, v in enumerate(e.values):
            val = self.expr(v)
            if val.type != I1:
                val = self._to_bool(val, v.type)
            if i == len(e.values) - 1:
                incoming.append((val, b.block))
                b.branch(end)
            else:
                nxt = self._new_block("bool.next")
                incoming.append((val, b.block))
                if e.op == "and":
                    b.cbranch(val, nxt, end)
                else:
                    b.cbranch(val, end, nxt)
                b.position_at_end(nxt)
        b.position_at_end(end)
        phi = b.phi(I1)
        for v, bb in incoming:
            phi.add_incoming(v, bb)
        return phi

    def _x_IfExp(self, e):
        b = self.builder
        cond = self.expr(e.cond)
        tb = self._new_block("ifx.then")
        eb = self._new_block("ifx.else")
        end = self._new_block("ifx.end")
        b.cbranch(cond, tb, eb)
        b.position_at_end(tb)
        tv = self.expr(e.then)
        tbb = b.block
        b.branch(end)
        b.position_at_end(eb)
        ev = self.expr(e.orelse)
        ebb = b.block
        b.branch(end)
        b.position_at_end(end)
        phi = b.phi(tv.type)
        phi.add_incoming(tv, tbb)
        phi.add_incoming(ev, ebb)
        return phi

    # ---- tuples
    def _x_TupleExpr(self, e):
        v = _zero(self.types.value(e.type))
        for k, el in enumerate(e.elems):
            v = self.builder.insert_value(v, self.expr(el), k)
        return v

    def _x_TupleGet(self, e):
        return self.builder.extract_value(self.expr(e.value), e.index)

    # ---- calls
    def _x_Call(self, e):
        fn = self.ml.module.functions.get(e.func)
        if fn is None:
            self.fail(f"internal error: unknown device function {e.func!r}")
        args = [self.expr(a) for a in e.args]
        if fn.raises or getattr(fn, "force_inline", False) or self.target.must_inline(fn, self.info):
            return self._inline_call(fn, args, e)
        f = self.ml.device_function(fn)
        return self.builder.call(f, args + list(self.hidden))

    def _inline_call(self, fn, args, e):
        if fn.name in self.inline_chain:
            self.fail(
                f"recursive call of device function '{fn.pyname or fn.name}' cannot be inlined",
                e.loc,
                "device functions that can raise (and, on cpu, those with barriers or compiled with "
                "debug=True) cannot recurse; use a loop" if fn.raises else
                "GPU kernels with barriers (or debug=True on cpu) cannot recurse; use a loop",
            )
        b = self.builder
        rt = fn.return_type
        slot = None if isinstance(rt, T.Void) else self.alloca(self.types.value(rt), name=f"{fn.name}.ret")
        if slot is not None:
            b.store(_zero(self.types.value(rt)), slot)
        scope = self._declare_locals(fn, prefix=f"{fn.pyname or fn.name}.")
        for prm, a in zip(fn.params, args):
            if prm.name in scope:
                b.store(a, scope[prm.name])
        exit_bb = self._new_block(f"inl.{_sanitize(fn.pyname or fn.name)}.end")
        saved = (self.scopes, self.loops, self.loc)
        self.scopes = [scope]
        self.loops = []
        self.inline.append(_InlineFrame(slot, exit_bb, fn))
        self.inline_chain.append(fn.name)
        try:
            self.lower_block(fn.body)
            if not b.block.is_terminated:
                b.branch(exit_bb)
        finally:
            self.inline.pop()
            self.inline_chain.pop()
            self.scopes, self.loops, self.loc = saved
        b.position_at_end(exit_bb)
        return b.load(slot) if slot is not None else None
