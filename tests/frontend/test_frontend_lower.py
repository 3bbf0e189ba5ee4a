"""AST -> IR: the printed IR and the types chosen for sample kernels."""

import numpy as np
import pytest

from frontend_helpers import DeviceFn, define, lower
from pykern.frontend import compile_ir
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.verify import verify_module


def body_text(module):
    return str(module.kernel)


def test_saxpy_ir():
    m = lower(
        """
        def saxpy(a, x, y, out):
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = a * x[i] + y[i]
        """,
        "void(float32, float32[::1], float32[::1], float32[::1])",
    )
    assert str(m.kernel) == (
        "kernel saxpy(a: float32, x: float32[::1], y: float32[::1], out: float32[::1]) -> void\n"
        "  locals: i: int64\n"
        "  i = ((int64(@block_idx(axis=0):int32) * int64(@block_dim(axis=0):int32)) + int64(@thread_idx(axis=0):int32))\n"
        "  if (i < x.shape[0]):\n"
        "    out[i] = ((a * x[i]) + y[i])"
    )
    assert m.functions == {}
    assert not m.kernel.uses_barrier and not m.kernel.uses_wave_ops and not m.kernel.uses_dynamic_shared


def test_reduction_with_shared_and_barrier():
    m = lower(
        """
        def red(x, out):
            sm = cuda.shared.array(128, np.float32)
            t = cuda.threadIdx.x
            s = 0
            for i in range(t, x.shape[0], cuda.blockDim.x):
                s += x[i]
            sm[t] = s
            cuda.syncthreads()
            k = 64
            while k > 0:
                if t < k:
                    sm[t] += sm[t + k]
                cuda.syncthreads()
                k //= 2
            if t == 0:
                cuda.atomic.add(out, 0, sm[0])
        """,
        "void(float32[::1], float32[::1])",
    )
    k = m.kernel
    # s = 0 then s += float32 widens s to float64 (int64 + float32 -> float64), as numba
    assert k.locals["s"] == T.float64
    assert k.locals["t"] == T.int32
    assert k.locals["i"] == T.int64
    assert k.locals["sm"] == T.Array(T.float32, 1, "C", "shared")
    assert k.uses_barrier and not k.uses_dynamic_shared
    text = str(k)
    assert "s = 0.0:float64" in text
    assert "sm = shared.array(128,):float32" in text
    assert "atomic.add(out[0:int64], sm[0:int64])" in text
    assert "k = (k // 2:int64)" in text


def test_literal_weakness():
    m = lower(
        """
        def k(a, b, c):
            x = a[0] * 2          # float32 * int literal -> float32
            y = a[0] + 1.5        # float32 + float literal -> float32
            z = b[0] + 1          # int32 + int literal -> int64 (numba: the literal is int64, integers widen to 64 bits)
            w = b[0] * 2.0        # int32 + float literal -> float64
            v = b[0] + c[0]       # int32 + int64 -> int64
            u = b[0] / 2          # int / int -> float64
            q = b[0] + 3000000000 # literal does not fit int32 -> int64
            r = True + True       # folded like Python
            s = c[0] + a[0]       # int64 + float32 -> float64 (numpy)
            t = 7 // -2           # Python floor division, folded
        """,
        "void(float32[:], int32[:], int64[:])",
    )
    L = m.kernel.locals
    assert (L["x"], L["y"], L["z"], L["w"], L["v"], L["u"]) == (T.float32, T.float32, T.int64, T.float64, T.int64, T.float64)
    assert (L["q"], L["r"], L["s"], L["t"]) == (T.int64, T.int64, T.float64, T.int64)
    text = str(m.kernel)
    assert "r = (1:int64 + 1:int64)" in text
    assert "t = -4:int64" in text


def test_globals_and_closures_are_frozen():
    N = 3
    SCALE = np.float32(0.5)
    TABLE = np.arange(6, dtype=np.int16).reshape(2, 3)
    DEBUG = False

    def k(a):
        if DEBUG:
            print("never compiled")
        for i in range(N):
            a[i] = a[i] * SCALE + TABLE[1, i] + OFFSETS[i]

    OFFSETS = (1, 2, 3)
    m = compile_ir(k, [T.Array(T.float32, 1)])
    text = str(m.kernel)
    assert "range(0:int64, 3:int64, 1:int64)" in text
    assert "0.5:float32" in text
    assert "const.array(2, 3):int16" in text
    assert "print" not in text
    consts = [e for e in _walk(m.kernel) if isinstance(e, ir.ConstArray)]
    assert consts and consts[0].data == TABLE.tobytes() and consts[0].shape == (2, 3)
    assert consts[0].type == T.Array(T.int16, 2, "C", "const", readonly=True)


def _walk(fn):
    from pykern.frontend.analysis import walk

    return [n for n in walk(fn.body) if isinstance(n, ir.Expr)]


def test_device_functions_specialised_and_mangled():
    src = """
    def addmul(a, b):
        return a + b, a * b

    def k(x, y, out):
        s, p = addmul(x[0], y[0])
        t = addmul(1, 2)
        out[0] = s + p + t[0]
    """
    addmul = define(src, "addmul")
    k = define(src, "k", addmul=DeviceFn(addmul))
    k.__globals__["addmul"] = DeviceFn(addmul)
    m = compile_ir(k, [T.Array(T.float32, 1), T.Array(T.float64, 1), T.Array(T.float64, 1)])
    assert set(m.functions) == {"addmul__f32_f64", "addmul__i64_i64"}
    f = m.functions["addmul__f32_f64"]
    assert f.return_type == T.Tuple((T.float64, T.float64))
    assert not f.is_kernel
    assert str(f).startswith("device addmul__f32_f64(a: float32, b: float64) -> UniTuple(float64, 2)")


def test_device_function_return_unification_and_barrier_propagation():
    src = """
    def clamp(x, lo, hi):
        if x < lo:
            return lo
        if x > hi:
            return hi
        return x

    def sync_then(x):
        cuda.syncthreads()
        return clamp(x, 0, 1)

    def k(a):
        a[0] = sync_then(a[0])
    """
    clamp = define(src, "clamp")
    g = clamp.__globals__
    g["clamp"] = DeviceFn(g["clamp"])
    g["sync_then"] = DeviceFn(g["sync_then"])
    m = compile_ir(g["k"], [T.Array(T.float32, 1)])
    assert m.functions["clamp__f32_i64_i64"].return_type == T.float64
    assert m.kernel.uses_barrier and m.functions["sync_then__f32"].uses_barrier
    assert not m.functions["clamp__f32_i64_i64"].uses_barrier
    # callees come before callers
    assert list(m.functions) == ["clamp__f32_i64_i64", "sync_then__f32"]


def test_device_function_falling_off_end_returns_none():
    src = """
    def pos(x):
        if x > 0:
            return x

    def k(a):
        a[0] = pos(a[0])
    """
    pos = define(src, "pos")
    pos.__globals__["pos"] = DeviceFn(pos)
    m = compile_ir(pos.__globals__["k"], [T.Array(T.float32, 1)])
    f = m.functions["pos__f32"]
    # Python's implicit `return None` (numba's Optional return), not a zero
    assert f.return_type == T.optional(T.float32)
    last = f.body[-1]
    assert isinstance(last, ir.Return) and last.value.elems[1].value is False


def test_param_widened_by_assignment_gets_prologue():
    m = lower(
        """
        def k(a, n):
            if a[1] > 0:
                n = n * 2.5
            a[0] = n
        """,
        "void(float32[:], int32)",
    )
    k = m.kernel  # (the int32 value and the float one meet at the read: one variable)
    assert [p.name for p in k.params] == ["a", "n$arg"]
    assert k.locals["n"] == T.float64 and k.locals["n$arg"] == T.int32
    assert str(k).splitlines()[2] == "  n = float64(n$arg)"


def test_tuples_shape_len_negative_index():
    m = lower(
        """
        def k(a, t):
            n, m = a.shape
            a[-1, 0] = len(a) + a.size + a.ndim + t[-1] + t[0] + a.shape[1] + a.strides[0]
            s = a.shape[::-1]
            a[0, 0] = s[0]
        """,
        "void(float64[:, :], UniTuple(int32, 3))",
    )
    text = str(m.kernel)
    assert "n = a.shape[0]" in text and "m = a.shape[1]" in text
    assert "a[(a.shape[0] + -1:int64), 0:int64]" in text
    assert "a.size" in text and "a.strides[0]" in text
    assert "t[2]" in text
    assert "s = (a.shape[1], a.shape[0],)" in text


def test_row_index_a_i_j_and_index_tuples():
    m = lower(
        """
        def k(a):
            i, j = cuda.grid(2)
            a[i][j] = a[cuda.grid(2)] + 1
            a[i][j] += 2
        """,
        "void(float32[:, ::1])",
    )
    text = str(m.kernel)
    assert "a[i, j] = " in text
    assert "a[i, j] = (a[((int64(@block_idx(axis=0):int32)" in text


def test_chained_comparison_and_boolops():
    m = lower(
        """
        def k(a, n):
            i = cuda.grid(1)
            if 0 <= i < n and not a[i] > 2 or i == 5:
                a[i] = 1
            x = a[0] or 3
            b = a[0] > 0 and a[1] > 0
        """,
        "void(float32[:], int32)",
    )
    text = str(m.kernel)
    assert "(((0:int64 <= i) and (i < int64(n))) and (not (a[i] > 2.0:float32)))" in text
    assert m.kernel.locals["x"] == T.float32 and m.kernel.locals["b"] == T.boolean
    assert "x = (a[0:int64] if boolean(a[0:int64]) else 3.0:float32)" in text


def test_math_typing():
    m = lower(
        """
        def k(f, d, h, i, out):
            a = math.sin(f[0])
            b = math.sqrt(d[0])
            c = math.exp(i[0])
            e = math.floor(f[0])
            g = np.floor(f[0])
            p = math.pow(f[0], 2)
            q = math.atan2(f[0], d[0])
            r = math.cos(h[0])
            s = math.isnan(f[0])
            t = math.isinf(i[0])
            u = math.sqrt(4.0)
            v = abs(i[0]) + abs(f[0])
            w = round(f[0])
            x = round(d[0], 2)
            y = max(f[0], i[0], 1)
            z = cuda.fma(f[0], f[0], 1.0)
            lg = math.log(d[0], 2)
            pc = cuda.popc(i[0]) + cuda.brev(i[0])
            pw = f[0] ** 2
            out[0] = math.pi + math.e
        """,
        "void(float32[:], float64[:], float16[:], int32[:], float64[:])",
    )
    L = m.kernel.locals
    assert (L["a"], L["b"], L["c"], L["e"], L["g"]) == (T.float32, T.float64, T.float64, T.int64, T.float32)
    assert (L["p"], L["q"], L["r"], L["s"], L["t"]) == (T.float32, T.float64, T.float16, T.boolean, T.boolean)
    assert (L["u"], L["v"], L["w"], L["x"], L["y"]) == (T.float64, T.float64, T.int64, T.float64, T.float64)
    # popc -> int32 and brev keeps int32; their sum is int64 (numba's integer rule)
    assert (L["z"], L["lg"], L["pc"], L["pw"]) == (T.float32, T.float64, T.int64, T.float32)
    text = str(m.kernel)
    assert "r = float16(@cos(float32(h[0:int64])):float32)" in text  # float16 via float32
    assert "t = False:boolean" in text
    assert "u = 2.0:float64" in text
    assert "e = int64(@floor(f[0:int64]):float32)" in text


def test_wave_and_sync_ops():
    m = lower(
        """
        def k(a, out):
            v = cuda.shfl_down_sync(-1, a[0], 1)
            m = cuda.ballot_sync(0xFFFFFFFF, v > 0)
            ok = cuda.all_sync(cuda.activemask(), v > 0)
            c = cuda.syncthreads_count(v > 0)
            cuda.syncwarp()
            cuda.threadfence()
            out[0] = m + c + ok + cuda.laneid + cuda.warpsize + cuda.lanemask_lt()
        """,
        "void(float32[:], uint64[:])",
    )
    text = str(m.kernel)
    assert "@shfl_down_sync(18446744073709551615:uint64, a[0:int64], 1:int32):float32" in text
    assert "@ballot_sync(4294967295:uint64, (v > 0.0:float32)):uint64" in text
    assert "@syncwarp(18446744073709551615:uint64):void" in text
    assert m.kernel.uses_wave_ops and m.kernel.uses_barrier


def test_atomics():
    m = lower(
        """
        def k(a, f):
            o1 = cuda.atomic.add(a, (0, 1), 1)
            o2 = cuda.atomic.max(f, 0, 2)
            o3 = cuda.atomic.and_(a, (1, 1), 6)
            o4 = cuda.atomic.cas(a, (0, 0), 0, 1)
            o6 = cuda.atomic.inc(a, (1, 0), 10)
            o7 = cuda.atomic.exch(f, -1, 3.5)
        """,
        "void(uint32[:, :], float32[:])",
    )
    text = str(m.kernel)
    assert "o1 = atomic.add(a[0:int64, 1:int64], 1:uint32)" in text
    assert "o2 = atomic.max(f[0:int64], 2.0:float32)" in text
    assert "o3 = atomic.and(a[1:int64, 1:int64], 6:uint32)" in text
    assert "o4 = atomic.cas(a[0:int64, 0:int64], 0:uint32, 1:uint32)" in text
    assert "o6 = atomic.inc(a[1:int64, 0:int64], 10:uint32)" in text
    assert "o7 = atomic.exch(f[(f.shape[0] + -1:int64)], 3.5:float32)" in text
    m = lower(
        """
        def k(a):
            old = cuda.atomic.compare_and_swap(a, 3, 4)
        """,
        "void(int32[:])",
    )
    assert "old = atomic.cas(a[0:int64], 3:int32, 4:int32)" in str(m.kernel)


def test_memory_spaces_and_dtype_spellings():
    m = lower(
        """
        def k(a):
            s1 = cuda.shared.array((4, 8), np.float32)
            s2 = cuda.shared.array(16, dtype=cuda_float64)
            s3 = cuda.shared.array(shape=2, dtype="int16")
            d1 = cuda.shared.array(0, np.float32)
            d2 = cuda.shared.array(0, np.int32)
            l1 = cuda.local.array(3, a.dtype)
            l2 = cuda.local.array(N * 2, np.dtype("uint8"))
            l3 = cuda.local.array(3, numba_like)
        """,
        "void(float32[:])",
        cuda_float64=T.float64,
        N=2,
        numba_like=type("NumbaType", (), {"__str__": lambda self: "int8"})(),
    )
    L = m.kernel.locals
    assert L["s1"] == T.Array(T.float32, 2, "C", "shared")
    assert L["s2"] == T.Array(T.float64, 1, "C", "shared")
    assert L["s3"] == T.Array(T.int16, 1, "C", "shared")
    assert L["d1"] == T.Array(T.float32, 1, "C", "shared")
    assert L["l1"] == T.Array(T.float32, 1, "C", "local")
    assert L["l2"] == T.Array(T.uint8, 1, "C", "local")
    assert L["l3"] == T.Array(T.int8, 1, "C", "local")
    assert m.kernel.uses_dynamic_shared
    allocs = [e for e in _walk(m.kernel) if isinstance(e, ir.AllocArray)]
    names = [a.name for a in allocs]
    # static allocations have distinct names; dynamic ones share the one buffer
    static = [a.name for a in allocs if a.shape != (0,)]
    assert len(set(static)) == len(static)
    assert len({a.name for a in allocs if a.shape == (0,)}) == 1
    assert (4, 8) in [a.shape for a in allocs] and (4,) in [a.shape for a in allocs]


def test_loops_break_continue_return():
    m = lower(
        """
        def k(a, n):
            for i in range(n - 1, -1, -1):
                if a[i] < 0:
                    continue
                if a[i] > 10:
                    break
                a[i] = 0
            j = 0
            while j < n:
                j += 1
                if j == 3:
                    return
            else_ok = 1
        """,
        "void(float32[:], int32)",
    )
    text = str(m.kernel)
    # n - 1 of an int32 is int64 (numba's integer rule), so the loop counts in int64
    assert "for i in range((int64(n) - 1:int64), -1:int64, -1:int64):" in text
    assert "continue" in text and "break" in text and "return" in text


def test_swap_and_multiple_targets():
    m = lower(
        """
        def k(a):
            x = a[0]
            y = a[1]
            x, y = y, x
            p = q = a[2] + 1
            a[0] = x + y + p + q
        """,
        "void(float32[:])",
    )
    text = str(m.kernel)
    # the swapped values are new versions of x and y (``versions``), both read before either is set
    assert "$t0 = y" in text and "$t1 = x" in text and "x$s1 = $t0" in text and "y$s1 = $t1" in text


def test_type_unified_across_branches():
    m = lower(
        """
        def k(a, b):
            if a[0] > 0:
                v = a[0]
            else:
                v = b[0]
            a[0] = v
        """,
        "void(float32[:], int64[:])",
    )
    assert m.kernel.locals["v"] == T.float64


def test_loop_carried_variable_used_before_its_assignment():
    m = lower(
        """
        def k(a, n):
            for i in range(n):
                if i > 0:
                    a[i] = prev
                prev = a[i] * 2
        """,
        "void(float32[:], int32)",
    )
    assert m.kernel.locals["prev"] == T.float32


def test_conversions():
    m = lower(
        """
        def k(a):
            x = np.float32(a[0])
            y = cuda_int32(a[0])
            z = int(a[0]) + float(1) + bool(a[0])
            w = np.uint8(300)
            v = float(3)
        """,
        "void(float64[:])",
        cuda_int32=T.int32,
    )
    L = m.kernel.locals
    assert (L["x"], L["y"], L["z"], L["w"], L["v"]) == (T.float32, T.int32, T.float64, T.uint8, T.float64)
    assert "w = 44:uint8" in str(m.kernel)


def test_compiles_module_level_function_from_file():
    m = compile_ir(_file_kernel, [T.Array(T.int32, 1)])
    assert m.kernel.loc.line == _file_kernel.__code__.co_firstlineno
    verify_module(m)


def _file_kernel(a):
    """A docstring is ignored."""
    i = 0
    while i < a.shape[0]:
        a[i] = i
        i += 1
    pass


def test_print_module_lists_device_functions_first():
    src = """
    def sq(x):
        return x * x

    def k(a):
        a[0] = sq(a[0])
    """
    sq = define(src, "sq")
    sq.__globals__["sq"] = DeviceFn(sq)
    m = compile_ir(sq.__globals__["k"], [T.Array(T.float32, 1)])
    text = str(m)
    assert text.index("device sq__f32") < text.index("kernel k")


def test_device_call_defaults_keywords_and_foreign_type_objects():
    src = """
    def scale(x, factor=2, offset=0.5):
        return x * factor + offset

    def k(a):
        a[0] = scale(a[0]) + scale(a[1], 3) + scale(a[2], offset=1.0) + scale(x=a[3], factor=a[4])
        a[1] = numba_f32(a[0])
    """
    scale = define(src, "scale")
    g = scale.__globals__
    g["scale"] = DeviceFn(scale)
    g["numba_f32"] = type("Float32Type", (), {"__str__": lambda s: "float32", "__call__": lambda s, x: x})()
    m = compile_ir(g["k"], [T.Array(T.float64, 1)])
    assert set(m.functions) == {"scale__f64_i64_f64", "scale__f64_f64_f64"}
    text = str(m.kernel)
    assert "scale__f64_i64_f64(a[0:int64], 2:int64, 0.5:float64)" in text
    assert "scale__f64_i64_f64(a[2:int64], 2:int64, 1.0:float64)" in text
    assert "a[1:int64] = float64(float32(a[0:int64]))" in text


def test_annotation_dynamic_tuple_index_and_dead_branch():
    m = lower(
        """
        def k(a, t):
            x: np.float32 = 1
            y = t[cuda.threadIdx.x]
            if False:
                a[0] = undefined_name
            a[0] = x + y
        """,
        "void(float64[:], UniTuple(int32, 3))",
    )
    assert m.kernel.locals["x"] == T.float32 and m.kernel.locals["y"] == T.int32
    text = str(m.kernel)
    assert "x = 1.0:float32" in text
    assert "(t[0] if (" in text and "undefined_name" not in text


def test_compile_ir_accepts_dispatcher_like_objects_and_device_top_level():
    f = define("def dev(x, y):\n    return x + y, x\n")

    class Disp:
        py_func = f

    m = compile_ir(Disp(), [T.int32, T.float32], is_kernel=False)
    assert not m.kernel.is_kernel
    assert m.kernel.return_type == T.Tuple((T.float64, T.int32))
