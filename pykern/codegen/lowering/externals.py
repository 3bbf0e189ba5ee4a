"""Lowering of calls of external device functions (``ir.ExternCall``, from ``declare_device``):
the function declared with its calling convention and called. numba's ABI is ``int f(T *ret,
args...)`` -- the result comes back through a pointer to a private slot, the status returned is
ignored (foreign code raises no Python exception); the C ABI is ``T f(args...)``. Pointers cross
as generic (address space 0) pointers, the kind C and HIP code takes; small integers and booleans
carry the sign/zero extension attributes clang gives them, so an external function that is not
inlined reads the same values. The definition comes from the kernel's link items
(``codegen/external.py`` links them before optimisation).

Example (``int32(int32)``, numba's ABI)::

    %ret = alloca i32
    %status = call i32 @times2(ptr %ret, i32 %x)
    %r = load i32, ptr %ret
"""

from __future__ import annotations

from llvmlite import ir as L

from pykern.frontend import types as T
from pykern.codegen.lowering.llvm_types import I1, I32

GENERIC = L.PointerType()  # address space 0: what pointers in C/HIP code are


def _extension(t):
    """The parameter attribute C gives a value of type ``t`` narrower than 32 bits."""
    if isinstance(t, T.Boolean):
        return ("zeroext",)
    if isinstance(t, T.Integer) and t.bits < 32:
        return ("zeroext",) if not t.signed else ("signext",)
    return ()


class ExternCallLowering:
    """``_x_ExternCall`` of ``FunctionLowering`` (see the module docstring)."""

    def _x_ExternCall(self, e):
        b = self.builder
        params = [GENERIC if isinstance(p, T.Array) else self.types.value(p) for p in e.params]
        attrs = [() if isinstance(p, T.Array) else _extension(p) for p in e.params]
        numba_abi = e.abi == "numba"
        rty = e.type
        if numba_abi:
            params = [GENERIC] + params
            attrs = [()] + attrs
            fnty = L.FunctionType(I32, params)
        else:
            fnty = L.FunctionType(self.types.value(rty), params)
        fn = self._extern_function(e, fnty, attrs)
        args = []
        for a, p in zip(e.args, e.params):
            v = self.expr(a)
            if isinstance(p, T.Array):
                v = b.extract_value(v, 0)
                if v.type != GENERIC:
                    v = b.addrspacecast(v, GENERIC)
            args.append(v)
        arg_attrs = {k: a for k, a in enumerate(attrs) if a}
        if not numba_abi:
            return b.call(fn, args, arg_attrs=arg_attrs or None)
        # the result's slot (a byte for void: numba passes a pointer whatever the type)
        slot_ty = L.IntType(8) if isinstance(rty, T.Void) else self.types.memory(rty)
        slot = self.alloca(slot_ty, name=f"{e.symbol}.ret")
        b.call(fn, [slot] + args, arg_attrs=arg_attrs or None)
        if isinstance(rty, T.Void):
            return None
        v = b.load(slot)
        return b.trunc(v, I1) if isinstance(rty, T.Boolean) else v

    def _extern_function(self, e, fnty, attrs):
        mod = self.module
        fn = mod.globals.get(e.symbol)
        if fn is None:
            fn = L.Function(mod, fnty, e.symbol)
            for k, a in enumerate(attrs):
                for name in a:
                    fn.args[k].add_attribute(name)
            if isinstance(e.type, T.Boolean) and e.abi == "c":
                fn.return_value.add_attribute("zeroext")
            return fn
        if not isinstance(fn, L.Function) or fn.function_type != fnty:
            self.fail(f"external device function '{e.symbol}' is declared twice with different signatures "
                      f"(or its name is taken): {fnty} here", e.loc)
        return fn
