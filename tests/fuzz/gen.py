"""Random pykern kernel programs, as source text.

A program is one module: optionally a device function, then a kernel
``kern_<id>(out_i, out_f, x, y)`` (int64/float64 outputs, int64/float64 inputs)
in which thread ``i`` computes one int64 and one float64 value and writes them
to ``out_i[i]`` and ``out_f[i]``. Valid programs use only the supported
grammar: int/float arithmetic (``// % **`` with Python semantics), bit ops and
shifts (counts >= 64 and negative run-time counts, numpy's rule), ``np.minimum/
maximum/fmin/fmax`` (with NaN and +-0 operands), ``np.fmod`` and floor/ceil/trunc
of integers (exact), ``np.lcm``/``np.gcd``/``np.fmod`` of narrow integers with an int literal
(numba's int64), constant negative shift counts, a constant ``// 0`` in a branch not taken, ``float()`` of a float32 and ``math.hypot``/``atan2``/``copysign`` of float32 and
uint16 (narrow types only inside such an expression, widened at once),
comparisons (chained), ``and/or/not``, conditional expressions,
``if/elif/else``, ``for range`` with any step, bounded ``while``,
``break/continue``, early ``return``, tuples, loads at computed indices, math
calls, casts, device-function calls.

Why int64/float64 only: the reference (``run.reference_outputs``) runs the
same source as plain Python with every literal turned into a numpy int64/
float64 scalar, so integer overflow wraps exactly as the kernel's and float
results are IEEE doubles on both sides. Divisors are built non-zero and
positive-or-negative-but-never -1-after-wrap-free (``e % 5 + 1``), float->int
casts only take bounded operands, so no program relies on undefined
behaviour.

Invalid programs are valid ones with one mutation (unsupported node, type
clash, wrong arity, shadowed builtin called, huge constant, recursion, ...);
``Program.expect_line`` is the line the CompileError should point at.

Example::

    import random
    p = generate(random.Random(7))
    print(p.source)
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

#: the kinds of program ``generate`` can make
KINDS = ("valid", "invalid", "edge")

INT_VARS = ("v0", "v1", "v2", "v3")
FLT_VARS = ("f0", "f1", "f2")
#: builtin names a valid program may use as ordinary local variables
SHADOW_OK = ("list", "id", "hash", "type")


@dataclass
class Program:
    """One generated module. ``kind``: "valid" (must compile and match the
    reference), "invalid" (must raise CompileError at ``expect_line``), or
    "either" (valid Python whose acceptance is up to pykern: must compile and
    match, or raise a located CompileError)."""

    source: str
    entry: str
    kind: str
    mutation: str = ""
    expect_line: int | None = None
    ident: str = "0"
    nthreads: int = 40
    notes: list = field(default_factory=list)

    @property
    def filename(self) -> str:
        return f"<pykern-fuzz-{self.ident}>"


def _is_const(expr: str) -> bool:
    return re.search(r"[A-Za-z_]", expr) is None


class _Gen:
    def __init__(self, r: random.Random, ident: str):
        self.r = r
        self.ident = ident
        self.lines: list[str] = []
        self.loop_depth = 0
        self.loopvars: list[str] = []
        self.n_loops = 0
        self.has_dev = False
        self.int_vars = list(INT_VARS)
        self.budget = 0
        self.stmt_lines: list[tuple[int, int]] = []  # (line index, indent) of body statements

    # ------------------------------------------------------------ emission
    def emit(self, indent: int, text: str, stmt: bool = True) -> int:
        self.lines.append("    " * indent + text)
        if stmt:
            self.stmt_lines.append((len(self.lines) - 1, indent))
        return len(self.lines)  # 1-based line number

    # ------------------------------------------------------------ expressions
    def chance(self, p):
        return self.r.random() < p

    def int_atom(self):
        r = self.r
        c = r.randrange(12)
        if c < 4:
            return r.choice(self.int_vars)
        if c == 4:
            return "x[i]"
        if c == 5:
            return f"x[(i + {r.randint(0, 60)}) % x.size]"
        if c == 6 and self.loopvars:
            return r.choice(self.loopvars)
        if c == 7:
            return r.choice(["len(x)", "x.shape[0]", "out_i.size", "i"])
        if c == 8:
            return str(r.choice([2**62 + 3, -(2**63) + 1, 2**31, -(2**31), 2**32 + 1, 9223372036854775807]))
        if c == 9:
            return r.choice(["int(y[i] * 3.5)", "round(y[i])", "math.floor(y[i])", "math.ceil(y[i] / 3.0)",
                             "int(y[i])", "int(-y[i])"])
        return str(r.randint(-20, 40))

    def int_expr(self, d=3):
        r = self.r
        if d <= 0 or self.chance(0.25):
            return self.int_atom()
        a, b = self.int_expr(d - 1), self.int_expr(d - 1)
        # pykern folds constant subexpressions and rejects int64 overflow in
        # them (a documented CompileError), so never combine two constants
        if _is_const(a):
            a = r.choice(self.int_vars)
        c = r.randrange(23)
        if c == 21:  # numba's int64 literal in numpy functions: np.lcm(np.uint8(255), 2) is 510, not uint8's 254
            fn = r.choice(["np.lcm", "np.gcd", "np.fmod"])
            return f"{fn}({r.choice(['np.uint8', 'np.int8', 'np.uint16', 'np.int32'])}({a}), {r.choice([2, 3, 6, 12, 200])})"
        if c == 22:  # a constant division by zero in a branch that never runs (i >= 0) compiles, as in
            # numba (where it runs, debug=True raises ZeroDivisionError: tests/robustness/test_robust_numba_differential.py)
            return f"({a} if i >= 0 else {r.randint(-9, 9)} {r.choice(['//', '%'])} 0)"
        if c == 17:  # numpy's shift rule: counts >= 64 and negative (run-time) counts shift all out
            return f"({a} {r.choice(['<<', '>>'])} ({r.choice(self.int_vars)} % 80 - 8))"
        if c == 18:  # exact integer fmod (C remainder; 0 for a zero divisor, as numpy)
            return f"np.fmod({a}, {r.choice([b, f'({b} % 5)', str(r.choice([2, -3, 7, 0]))])})"
        if c == 19:
            return f"np.{r.choice(['minimum', 'maximum', 'fmin', 'fmax'])}({a}, {b})"
        if c == 20:  # floor/ceil/trunc of an integer: the integer, exactly (no float64 round trip)
            return f"{r.choice(['math.floor', 'math.ceil', 'math.trunc', 'np.floor', 'np.ceil', 'np.trunc'])}({a})"
        if c == 16:  # constant counts, negative ones too (every bit shifted out, as numpy)
            return f"({a} {r.choice(['<<', '>>'])} {r.choice([r.randint(0, 70), r.randint(-130, -1)])})"
        if c < 5:
            return f"({a} {r.choice(['+', '-', '*', '+', '-'])} {b})"
        if c == 5:
            return f"({a} {r.choice(['&', '|', '^'])} {b})"
        if c == 6:
            return f"({a} // ({b} % {r.randint(2, 9)} + 1))"
        if c == 7:
            return f"({a} % ({b} % {r.randint(2, 9)} + 1))"
        if c == 8:  # negative divisors, Python floor semantics
            return f"({a} {r.choice(['//', '%'])} (-({b} % {r.randint(2, 9)}) - 2))"
        if c == 9:
            return f"({a} ** {r.randint(0, 3)})"
        if c == 10:
            return f"(-{a})"
        if c == 11:
            return f"{r.choice(['min', 'max'])}({a}, {b})"
        if c == 12:
            return f"abs({a})"
        if c == 13:
            return f"({a} if {self.cond(d - 1)} else {b})"
        if c == 14:
            return f"({a}, {b})[{r.randint(0, 1)}]"
        if c == 15 and self.has_dev:
            if self.chance(0.5):
                return f"dev_{self.ident}({a}, {b})"
            return f"dev2_{self.ident}({a}, {b})[{r.randint(0, 1)}]"
        return f"({a} {r.choice(['<<', '>>'])} {r.randint(0, 40)})"

    def flt_atom(self):
        r = self.r
        c = r.randrange(9)
        if c < 4:
            return r.choice(FLT_VARS)
        if c == 4:
            return "y[i]"
        if c == 5:
            return f"y[(i + {r.randint(0, 60)}) % y.size]"
        if c == 6:
            return f"float({self.int_atom()})"
        return repr(r.choice([0.5, -1.25, 3.0, 1e-3, 2.5e3, -7.75, 0.1, 1e10]))

    def flt_expr(self, d=3):
        r = self.r
        if d <= 0 or self.chance(0.25):
            return self.flt_atom()
        a, b = self.flt_expr(d - 1), self.flt_expr(d - 1)
        c = r.randrange(22)
        if c == 20:  # float() of a float32 is float32 (numba): a float32 division, widened after
            return f"np.float64(float(np.float32({a})) / np.float32(3))"
        if c == 21:  # uint16 with float32 in two-argument math functions: float64 (numba.cuda's signatures)
            fn = r.choice(["math.hypot", "math.atan2", "math.copysign"])
            return f"{fn}(np.float32({a}), np.uint16({self.int_atom()}))"
        if c == 18:  # numpy's NaN rules: minimum/maximum propagate, fmin/fmax ignore; +-0 and NaN operands
            x = r.choice([b, "float('nan')", "-0.0", "0.0", f"(-{b})"])
            return f"np.{r.choice(['minimum', 'maximum', 'fmin', 'fmax'])}({a}, {x})"
        if c == 19:
            return f"np.fmod({a}, {r.choice([b, '0.0', '-2.5', '(abs(' + b + ') + 0.5)'])})"
        if c == 14:
            return f"math.sqrt(abs({self.int_atom()}))"  # int argument -> float
        if c == 15:
            return f"({self.int_atom()} {r.choice(['//', '%'])} (abs({a}) + 0.5))"  # mixed int/float
        if c == 16:
            return f"(abs({a}) ** {r.choice(['0.5', '1.5', '-1.0', '2'])})"
        if c == 17:
            return f"{r.choice(['min', 'max'])}({a}, {b}, {self.flt_atom()})"
        if c < 4:
            return f"({a} {r.choice(['+', '-', '*'])} {b})"
        if c == 4:
            return f"({a} / (abs({b}) + 1.0))"
        if c == 5:
            return f"({a} {r.choice(['//', '%'])} (abs({b}) + 0.5))"
        if c == 6:
            return f"({a} % (-abs({b}) - 0.75))"
        if c == 7:
            fn = r.choice(["math.sin({})", "math.cos({})", "math.sqrt(abs({}))", "math.exp(-abs({}))",
                           "math.log(abs({}) + 1.0)", "math.fabs({})", "math.atan({})", "math.tanh({})"])
            return fn.format(a)
        if c == 8:
            return f"{r.choice(['min', 'max'])}({a}, {b})"
        if c == 9:
            return f"({a} if {self.cond(d - 1)} else {b})"
        if c == 10:
            return f"({a} * {self.int_atom()})"  # int -> float promotion
        if c == 11:
            return f"({a} ** 2)"
        if c == 12:
            return f"(-{a})"
        return f"math.hypot({a}, {b})"

    def cond(self, d=2):
        r = self.r
        c = r.randrange(9)
        if d <= 0 or c < 3:
            return f"{self.int_expr(1)} {r.choice(['<', '<=', '>', '>=', '==', '!='])} {self.int_expr(1)}"
        if c == 3:
            return f"{self.flt_expr(1)} {r.choice(['<', '<=', '>', '>='])} {self.flt_expr(1)}"
        if c == 4:
            return f"{self.int_atom()} < {self.int_atom()} <= {self.int_atom()}"
        if c == 5:
            return f"({self.cond(d - 1)}) {r.choice(['and', 'or'])} ({self.cond(d - 1)})"
        if c == 6:
            return f"not ({self.cond(d - 1)})"
        if c == 7:
            return f"{self.int_expr(1)} % 2 == 0"
        return f"{self.flt_atom()} > {self.int_atom()}"  # mixed int/float compare

    # ------------------------------------------------------------ statements
    def block(self, indent, n):
        for _ in range(n):
            self.stmt(indent)

    def stmt(self, indent):
        r = self.r
        self.budget -= 1
        depth_ok = self.budget > 0 and indent < 5
        c = r.randrange(20)
        if c < 5 or not depth_ok and c >= 10:
            if self.chance(0.6):
                self.emit(indent, f"{r.choice(self.int_vars)} = {self.int_expr()}")
            else:
                self.emit(indent, f"{r.choice(FLT_VARS)} = {self.flt_expr()}")
        elif c < 7:
            if self.chance(0.5):
                op = r.choice(["+=", "-=", "*=", "^=", "|="])
                self.emit(indent, f"{r.choice(self.int_vars)} {op} {self.int_expr(2)}")
            elif self.chance(0.5):
                self.emit(indent, f"{r.choice(self.int_vars)} //= {self.int_expr(1)} % 4 + 1")
            else:
                op = r.choice(["+=", "-=", "*="])
                self.emit(indent, f"{r.choice(FLT_VARS)} {op} {self.flt_expr(2)}")
        elif c < 8:
            a, b = r.sample(self.int_vars, 2)
            if self.chance(0.5):
                self.emit(indent, f"{a}, {b} = {b}, {a}")
            else:
                f = r.choice(FLT_VARS)
                self.emit(indent, f"t_ = ({self.int_expr(2)}, {self.flt_expr(2)}, {self.int_expr(1)})")
                self.emit(indent, f"{a} = t_[0] + t_[2]")
                self.emit(indent, f"{b}, {f}, _u = t_")
        elif c < 9 and self.loop_depth:
            self.emit(indent, f"if {self.cond()}:")
            self.emit(indent + 1, r.choice(["break", "continue"]))
        elif c < 10 and self.chance(0.3):
            self.emit(indent, f"if {self.cond()}:")
            self.emit(indent + 1, f"out_i[i] = {self.int_expr(2)}")
            self.emit(indent + 1, f"out_f[i] = {self.flt_expr(2)}")
            self.emit(indent + 1, "return")
        elif c < 13:
            self.emit(indent, f"if {self.cond()}:")
            self.block(indent + 1, r.randint(1, 3))
            for _ in range(r.randint(0, 2)):
                self.emit(indent, f"elif {self.cond()}:")
                self.block(indent + 1, r.randint(1, 2))
            if self.chance(0.5):
                self.emit(indent, "else:")
                self.block(indent + 1, r.randint(1, 2))
        elif c < 16:
            j = f"j{self.n_loops}"
            self.n_loops += 1
            step = r.choice([1, 1, 2, 3, -1, -2])
            lo = r.choice(["0", str(r.randint(-3, 3)), f"{self.int_expr(1)} % 4"])
            hi = r.choice([str(r.randint(0, 8)), f"{self.int_expr(1)} % 7"])
            if step < 0:
                lo, hi = hi, lo
            rng = f"range({hi})" if lo == "0" and step == 1 and self.chance(0.5) else f"range({lo}, {hi}, {step})"
            self.emit(indent, f"for {j} in {rng}:")
            self.loop_depth += 1
            self.loopvars.append(j)
            self.block(indent + 1, r.randint(1, 3))
            self.loopvars.pop()
            self.loop_depth -= 1
        elif c < 18:
            w = f"w{self.n_loops}"
            self.n_loops += 1
            self.emit(indent, f"{w} = 0")
            cond = f" and ({self.cond(1)})" if self.chance(0.5) else ""
            self.emit(indent, f"while {w} < {r.randint(0, 6)}{cond}:")
            self.emit(indent + 1, f"{w} += 1")  # first, so `continue` cannot skip it
            self.loop_depth += 1
            self.block(indent + 1, r.randint(1, 3))
            self.loop_depth -= 1
        elif c < 19:
            if self.chance(0.5):
                self.emit(indent, "pass")
            else:  # a bool variable used later as a condition and as a number
                self.emit(indent, f"bb = {self.cond(1)}")
                self.emit(indent, "if bb:")
                self.emit(indent + 1, f"{r.choice(self.int_vars)} += 1 + bb")
        else:
            self.emit(indent, f"{r.choice(self.int_vars)} = {self.int_expr(2)} if {self.cond(1)} else {self.int_expr(2)}")

    # ------------------------------------------------------------ program
    def program(self, n_stmts=None) -> Program:
        r = self.r
        self.emit(0, "import math", False)
        self.emit(0, "import numpy as np", False)
        self.emit(0, "import pykern as cuda", False)
        self.emit(0, "", False)
        if self.chance(0.25):
            self.has_dev = True
            self.emit(0, "@cuda.jit(device=True)", False)
            self.emit(0, f"def dev_{self.ident}(a, b):", False)
            self.emit(1, "if a > b:", False)
            self.emit(2, "return a - b * 2", False)
            self.emit(1, "return (a ^ b) + 1", False)
            self.emit(0, "", False)
            self.emit(0, "@cuda.jit(device=True)", False)
            self.emit(0, f"def dev2_{self.ident}(a, b):", False)
            self.emit(1, "s = a + b", False)
            self.emit(1, "return s, a - dev_" + self.ident + "(b, s)", False)
            self.emit(0, "", False)
        if self.chance(0.15):
            self.int_vars[3] = r.choice(SHADOW_OK)
        self.emit(0, f"def kern_{self.ident}(out_i, out_f, x, y):", False)
        self.body_start = len(self.lines)
        self.emit(1, "i = cuda.grid(1)")
        self.emit(1, "if i >= out_i.size:")
        self.emit(2, "return")
        for k, v in enumerate(self.int_vars):
            self.emit(1, f"{v} = {['x[i]', str(r.randint(-5, 5)), 'i', 'x[(i + 1) % x.size]'][k]}")
        for k, v in enumerate(FLT_VARS):
            self.emit(1, f"{v} = {['y[i]', repr(r.choice([0.0, 1.5, -2.25])), 'float(i) * 0.5'][k]}")
        self.budget = n_stmts if n_stmts is not None else r.randint(2, 14)
        while self.budget > 0:
            self.stmt(1)
        self.emit(1, f"out_i[i] = {self.int_expr()}")
        self.emit(1, f"out_f[i] = {self.flt_expr()}")
        return Program("\n".join(self.lines) + "\n", f"kern_{self.ident}", "valid", ident=self.ident,
                       nthreads=r.choice([1, 7, 40, 64, 100]))


# ---------------------------------------------------------------- mutations
# Each: (name, statement template or callable). ``{v}`` an int variable,
# ``{f}`` a float variable. The inserted statement is where the error is.
_STMT_MUTATIONS = [
    ("lambda", "{v} = (lambda **q: 1)()"),  # (lambdas work; **kwargs parameters do not)
    ("list_literal", "{v} = [1, 2, 3]"),
    ("list_comp", "{v} = [q for q in range(3)][0]"),
    ("dict_literal", "{v} = {{1: 2}}[1]"),
    ("set_literal", "{v} = len({{1, 2}})"),
    ("string_value", "{v} = 'abc'"),
    ("fstring", "{v} = f'{{{v}}}'"),
    ("bytes_value", "{v} = b'ab'[0]"),
    ("starred", "{v} = max(*x)"),
    ("del_stmt", "del {v}"),
    ("global_stmt", "global g_xyz\n{v} = g_xyz"),
    ("import_stmt", "import os"),
    ("try_stmt", "try:\n    {v} = 1\nexcept Exception:\n    {v} = 2"),
    ("with_stmt", "with open('f') as q:\n    {v} = 1"),
    ("class_def", "class Q:\n    pass"),
    ("yield_expr", "{v} = yield 1"),
    ("matmul", "{v} = {v} @ {v}"),
    ("attr_unknown", "{v} = x.foo"),
    ("call_unknown", "{v} = undefined_function_xyz({v})"),
    ("name_unknown", "{v} = {v} + undefined_name_xyz"),
    ("store_scalar_arg", "if i >= 0:\n    x = 3\nout_i[i] = x[i]"),
    ("store_attr", "cuda.threadIdx.x = 1"),
    ("type_clash_tuple_add", "{v} = {v} + (1, 2)"),
    ("type_clash_tuple_var", "if i >= 0:\n    {v} = (1, 2)\nout_i[i] = {v}"),
    ("type_clash_array_var", "if i >= 0:\n    {f} = y\nout_f[i] = {f}"),
    ("type_clash_store_array", "out_f[i] = y"),
    ("type_clash_store_tuple", "out_i[i] = (1, 2)"),
    ("type_clash_array_arith", "{v} = x + 1"),
    ("float_index", "{v} = x[1.5]"),
    ("too_many_indices", "{v} = x[i, 0]"),
    ("tuple_index_oob", "{v} = ({v}, 1)[5]"),
    ("tuple_index_var", "{v} = ({v}, 1.0)[{v}]"),
    ("arity_math", "{f} = math.sin({f}, {f})"),
    ("arity_math0", "{f} = math.sqrt()"),
    ("arity_grid", "{v} = cuda.grid()"),
    ("arity_grid2", "{v} = cuda.grid(1, 2)"),
    ("arity_range", "for q in range(1, 2, 3, 4):\n    pass"),
    ("arity_abs", "{v} = abs()"),
    ("arity_min", "{v} = min({v})"),
    ("arity_sync", "cuda.syncthreads(1)"),
    ("arity_len", "{v} = len(x, y)"),
    ("range_step0", "for q in range(0, 4, 0):\n    pass"),
    ("range_float", "for q in range(2.5):\n    pass"),
    ("shadow_range", "range = 3\nfor q in range(2):\n    pass"),
    ("shadow_abs", "abs = 5\n{v} = abs({v})"),
    ("shadow_math", "math = 2\n{f} = math.sin({f})"),
    ("shadow_len", "len = 1\n{v} = len(x)"),
    ("huge_int", "{v} = 18446744073709551616"),
    ("huge_int2", "{v} = {v} + 100000000000000000000000000000"),
    ("huge_neg", "{v} = -9223372036854775809"),
    ("return_value", "return 1"),
    ("kernel_call_kernel", "kern_{ident}(out_i, out_f, x, y)"),
    ("compare_tuple_int", "{v} = 1 if ({v}, 1) < 2 else 0"),
    ("neg_tuple", "{v} = -({v}, 1)"),
    ("not_callable", "{v} = {v}(1)"),
    ("subscript_int", "{v} = {v}[0]"),
    ("ellipsis", "{v} = x[...]"),
    ("none_value", "{v} = None + 1"),
    ("local_array_huge", "q = cuda.local.array(1 << 40, np.int64)"),
    ("local_array_neg", "q = cuda.local.array(-4, np.int64)"),
    # a run-time shape (a local assigned a constant once, `v1 = 3`, is a valid shape, as in numba)
    ("local_array_var_shape", "q = cuda.local.array({v} + i, np.int64)"),
    ("shared_array_huge", "q = cuda.shared.array(1 << 30, np.float64)"),
    ("shared_array_bad_dtype", "q = cuda.shared.array(4, np.object_)"),
    ("aug_tuple", "{v} += (1, 2)"),
    ("assign_to_call", "x.size = 3"),
    ("bool_shift_float", "{v} = {v} << 1.5"),
    ("bitop_float", "{f} = {f} & 1"),
]

# Valid-Python constructs whose acceptance is pykern's choice; each must either
# compile and match the reference, or be rejected with a located CompileError.
_EDGE_MUTATIONS = [
    ("unreachable_after_return", "return\n{v} = {v} + 1"),
    ("unreachable_after_break", "for q in range(3):\n    break\n    {v} += 1"),
    ("unreachable_after_continue", "for q in range(3):\n    continue\n    {v} += 1"),
    ("while_true_break", "while True:\n    {v} += 1\n    break"),
    ("while_false", "while False:\n    {v} += 1"),
    ("if_false", "if False:\n    {v} = {v} // 0"),
    ("empty_if", "if {v} > 0:\n    pass"),
    ("empty_for", "for q in range(5):\n    pass"),
    ("empty_while", "while False:\n    pass"),
    ("shadow_as_value", "sum = {v} + 1\n{v} = sum * 2"),
    ("nested_def", "def inner(q):\n    return q"),
    ("iterate_array", "for q in x:\n    {v} += q"),
    ("for_else", "for q in range(2):\n    pass\nelse:\n    {v} = 1"),
    ("while_else", "while False:\n    pass\nelse:\n    {v} = 1"),
    ("const_fold_big_ok", "{v} = 9223372036854775807 + 0"),
    ("deep_if", None),
    ("deep_expr", None),
    ("deep_paren", None),
    ("many_stmts", None),
    ("deep_loops", None),
]


#: mutations whose error may rightly point at another line of the function
#: (a shadowed builtin is local to the whole function; a type clash shows at
#: either assignment; a resource total at the declaration or the kernel)
LOOSE_LINE = {
    "shadow_range", "shadow_abs", "shadow_math", "shadow_len", "store_scalar_arg", "type_clash_tuple_var",
    "type_clash_array_var", "shared_array_huge", "local_array_huge", "del_stmt", "yield_expr", "global_stmt",
}


def _indent_block(text: str, indent: int) -> list[str]:
    return ["    " * indent + ln for ln in text.split("\n")]


def _insert(p: Program, g: _Gen, text: str, kind: str, name: str, where=None) -> Program:
    """Insert ``text`` as statements before a random body statement (after the
    prologue, so variables exist)."""
    r = g.r
    prologue = g.body_start + 3 + len(INT_VARS) + len(FLT_VARS)
    cands = [(ix, ind) for ix, ind in g.stmt_lines if ix >= prologue and not g.lines[ix].strip().startswith(("elif", "else"))]
    if kind == "invalid":  # statically dead code (empty constant range, if False) is skipped by pykern
        cands = [(ix, ind) for ix, ind in cands if ind == 1]
    ix, ind = where if where is not None else r.choice(cands)
    text = text.format(v=r.choice(g.int_vars), f=r.choice(FLT_VARS), ident=g.ident)
    new = _indent_block(text, ind)
    lines = g.lines[:ix] + new + g.lines[ix:]
    # the error belongs to the statement that uses the bad construct: the last
    # line for shadow_*, the first otherwise
    line = None if name in LOOSE_LINE else ix + 1
    return Program("\n".join(lines) + "\n", p.entry, kind, name, line, p.ident, p.nthreads)


def _deep(p: Program, g: _Gen, name: str) -> Program:
    r = g.r
    prologue = g.body_start + 3 + len(INT_VARS) + len(FLT_VARS)
    ix, ind = prologue, 1
    v = r.choice(g.int_vars)
    n = r.choice([20, 50, 90, 200, 400])
    if name == "deep_if":
        n = min(n, 90)
        new = ["    " * (ind + k) + f"if {v} > {-k - 100}:" for k in range(n)]
        new.append("    " * (ind + n) + f"{v} += 1")
    elif name == "deep_expr":
        new = ["    " * ind + f"{v} = " + " + ".join([v] + [str(k % 7) for k in range(n)])]
    elif name == "deep_paren":
        n = min(n, 150)  # CPython's parser stops at 200 nested parentheses
        new = ["    " * ind + f"{v} = " + "(" * n + v + " + 1)" * n]
    elif name == "many_stmts":
        new = ["    " * ind + f"{v} = {v} * 3 + {k}" for k in range(n * 5)]
    else:  # deep_loops: CPython refuses >= 20 statically nested blocks
        n = 15
        new = ["    " * (ind + k) + f"for q{k} in range(1):" for k in range(n)]
        new.append("    " * (ind + n) + f"{v} += 1")
    lines = g.lines[:ix] + new + g.lines[ix:]
    return Program("\n".join(lines) + "\n", p.entry, "either", name, ix + 1, p.ident, p.nthreads, [f"n={n}"])


def _recursion(g: _Gen, r, ident) -> Program:
    mutual = r.random() < 0.5
    src = ["import math", "import numpy as np", "import pykern as cuda", ""]
    src += ["@cuda.jit(device=True)", f"def rec_{ident}(a):"]
    if mutual:  # mutual recursion needs a signature even with a base case
        src += ["    if a <= 0:", "        return 0"]
    # a self-call types from a base case (numba infers it); without one it is numba's runaway recursion
    call_line = len(src) + 1
    src += [f"    return {'rec2_' if mutual else 'rec_'}{ident}(a - 1) + 1", ""]
    if mutual:
        src += ["@cuda.jit(device=True)", f"def rec2_{ident}(a):", f"    return rec_{ident}(a) * 2", ""]
    src += [f"def kern_{ident}(out_i, out_f, x, y):", "    i = cuda.grid(1)", "    if i < out_i.size:",
            f"        out_i[i] = rec_{ident}(x[i])"]
    # the error may point at either call of the cycle; the first is checked
    return Program("\n".join(src) + "\n", f"kern_{ident}", "invalid", "mutual_recursion" if mutual else "recursion",
                   None if mutual else call_line, ident, 8)


def generate(r: random.Random, kind: str | None = None, ident: str = "0") -> Program:
    """A program of ``kind`` ("valid", "invalid", "edge"; default: drawn).

    Example: ``generate(random.Random(1), "invalid").source``"""
    # invalid programs cost ~1 ms (they stop in the frontend), valid ones ~50 ms
    # (LLVM), so a CI run gets many cheap rejections and enough valid programs
    kind = kind or r.choices(["valid", "invalid", "edge"], weights=[30, 55, 15])[0]
    g = _Gen(r, ident)
    if kind == "invalid" and r.random() < 0.04:
        return _recursion(g, r, ident)
    p = g.program()
    if kind == "valid":
        return p
    if kind == "invalid":
        name, text = r.choice(_STMT_MUTATIONS)
        return _insert(p, g, text, "invalid", name)
    name, text = r.choice(_EDGE_MUTATIONS)
    if text is None:
        return _deep(p, g, name)
    return _insert(p, g, text, "either", name)


def programs(kind: str | None = None):
    """A hypothesis strategy of ``Program`` s (shrinks through the Random it draws)."""
    from hypothesis import strategies as st

    kinds = st.sampled_from(KINDS) if kind is None else st.just(kind)
    return st.builds(lambda r, k, n: generate(r, k, f"h{n}"), st.randoms(use_true_random=False), kinds,
                     st.integers(0, 10**9))


def batch(seed: int, start: int, count: int) -> list[Program]:
    """Programs ``start .. start+count-1`` of the run with ``seed``; each is a
    pure function of (seed, index), so any one can be regenerated alone."""
    return [generate(random.Random(seed * 1_000_003 + k), ident=f"s{seed}_{k}") for k in range(start, start + count)]
