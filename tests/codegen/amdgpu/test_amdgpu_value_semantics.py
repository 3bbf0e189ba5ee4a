"""Differential test of the amdgpu math lowering against the cpu target, without a GPU.

For every math function ``AmdgpuTarget.math`` lowers (``_LLVM_MATH`` intrinsics and the
``_OCML_MATH`` catalogue), a generated kernel stores ``f(np.float64(c))`` for constant
special values ``c`` (0.0, -0.0, subnormals, tiny, 1.0, near poles, large, inf, -inf, nan;
-48.5/-190.5: gamma underflowing to a signed zero).
The kernel is compiled for gfx942 and gfx1100: after linking ocml and O3, LLVM has folded
most calls to the constant it stores, which the test reads from the optimised IR. Where
LLVM cannot fold (``llvm.sqrt.f32`` of a negative, ``llvm.exp2.f32(inf)``, ocml's
``lgamma`` of negative arguments, ``amdgcn.rcp/rsq/frexp/fract``), the same optimised
module is retargeted to the host and run (:func:`host_module`): the amdgcn intrinsics
left become exact IEEE stand-ins (``rcp`` -> ``1/x``, ``rsq`` -> ``1/sqrt(x)``, ...), a
case that would need another intrinsic is skipped with that reason. Where both exist the
emulated value must equal the folded one (the emulator is checked on every run). The
hardware's ``v_rcp``/``v_rsq``/``v_exp_f32``/``v_log_f32`` are approximations where the
stand-ins are exact; ocml refines them (Newton steps), so the difference stays inside the
ulp tolerances, and special values (0, inf, NaN) are the same.

The reference is the same kernel on the cpu target (which carries the GPU semantics).
Exact operations (``_EXACT``) must agree bit for bit; ocml's approximations within
``tolerance()`` ulps (2 by default: ocml's and glibc's own error bounds; ``gamma`` and
``lgamma`` near its zeros more, measured values in ``_ULPS``). NaN-ness, infinities and
the sign of a zero must always match. The default run (~20 s) takes a fixed value set per
function, float64 on gfx942 only; ``-m slow`` (~10 min) adds random arguments over the whole
exponent range and the full cross product for the two-argument functions, for both dtypes on
both archs.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import linecache
import math
import re
import zlib

import numpy as np
import pytest

import pykern
import pykern as cuda
from pykern.codegen.amdgpu import target as amd
from pykern.core.errors import CompileError

pytestmark = pytest.mark.usefixtures("cpu_target")

ARCHS = ["gfx942", "gfx1100"]
DTYPES = ["float64", "float32"]


def _have_toolchain():
    from pykern.codegen.amdgpu import devicelibs
    from pykern.codegen.amdgpu import toolchain

    try:
        devicelibs.find_dir()
        toolchain.find_lld()
    except CompileError as e:
        return str(e).splitlines()[0]
    return None


_MISSING = _have_toolchain()
needs_toolchain = pytest.mark.skipif(_MISSING is not None, reason=f"amdgpu toolchain: {_MISSING}")

# ------------------------------------------------------------------ the functions
#: catalogue name -> the Python spelling that reaches ``Target.math`` with it
UNARY = {
    "sin": "math.sin", "cos": "math.cos", "tan": "math.tan", "asin": "math.asin", "acos": "math.acos",
    "atan": "math.atan", "sinh": "math.sinh", "cosh": "math.cosh", "tanh": "math.tanh", "asinh": "math.asinh",
    "acosh": "math.acosh", "atanh": "math.atanh", "exp": "math.exp", "exp2": "np.exp2", "expm1": "math.expm1",
    "log": "math.log", "log2": "math.log2", "log10": "math.log10", "log1p": "math.log1p", "cbrt": "np.cbrt",
    "erf": "math.erf", "erfc": "math.erfc", "lgamma": "math.lgamma", "gamma": "math.gamma",
    "sqrt": "math.sqrt", "fabs": "math.fabs", "floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc",
    "rint": "np.rint",
}  # fmt: skip
BINARY = {
    "atan2": "math.atan2", "pow": "math.pow", "hypot": "math.hypot", "fmod": "math.fmod",
    "remainder": "math.remainder", "nextafter": "math.nextafter", "copysign": "math.copysign",
}  # fmt: skip
TERNARY = {"fma": "cuda.fma"}
#: correctly rounded (or exact) on both targets: bit-exact agreement
_EXACT = {"sqrt", "fabs", "floor", "ceil", "trunc", "rint", "copysign", "fma", "fmod", "remainder", "nextafter"}
#: measured worst cases (ocml vs glibc) with a margin: tgamma f64 5 ulp (gamma(-0.0875..), where
#: glibc is within 0.02 ulp of mpmath), f32 6 ulp (gamma(1.0000001)); lgamma for x < 0 near its zeros
#: -2.457.. and -2.747.. (relative error grows without bound there): 4 ulp f64 / 11 ulp f32 at -2.5
_ULPS = {("gamma", "float64"): 6, ("gamma", "float32"): 8, ("lgamma", "float64"): 8, ("lgamma", "float32"): 16}
def tolerance(name, dt):
    if name in _EXACT:
        return 0
    return _ULPS.get((name, dt), 2)


def test_every_catalogue_function_is_covered():
    lowered = set(amd._LLVM_MATH) | set(amd._OCML_MATH)
    covered = set(UNARY) | set(BINARY) | set(TERNARY)
    # every entry is reachable: round(x) lowers as "rint", so the catalogue has no "round"
    assert lowered == covered
    # and every "math" intrinsic of the IR catalogue reaches one of them
    from pykern.frontend import ir

    assert set(ir.intrinsic_names("math")) == covered


# ------------------------------------------------------------------ the values
def _values(dt):
    if dt == "float64":
        v = [0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-310, 2.2250738585072014e-308, 1e-200, -1e-200, 1e-20, -1e-20,
             1e-8, 0.5, -0.5, 1.0, -1.0, 0.9999999999999999, -0.9999999999999999, 1.0000000000000002,
             1.5707963267948966, -1.5707963267948966, 3.141592653589793, 2.0, -2.0, -3.0, -2.5,
             10.0, 100.0, 709.0, 710.0, -745.0, -746.0, -190.5, -191.5, 1e22, 1e300, -1e300, 1.7976931348623157e308]
    else:
        v = [0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754944e-38, 1e-30, -1e-30, 1e-10, -1e-10, 1e-4, 0.5, -0.5,
             1.0, -1.0, 0.99999994, -0.99999994, 1.0000001, 1.5707964, -1.5707964, 3.1415927, 2.0, -2.0, -3.0, -2.5,
             10.0, 88.0, 89.0, -103.0, -104.0, -48.5, -49.5, 1e10, 1e30, -1e30, 3.4028235e38]
    v += [math.inf, -math.inf, math.nan]
    return [float(np.dtype(dt).type(x)) for x in v]


def _random_values(dt, n, seed):
    """Both signs, magnitudes spread over the whole exponent range (subnormals included)."""
    rng = np.random.default_rng(seed)
    bits = np.uint64 if dt == "float64" else np.uint32
    raw = rng.integers(0, np.iinfo(bits).max, size=4 * n, dtype=bits, endpoint=True).view(dt)
    return [float(x) for x in raw[np.isfinite(raw)][:n]]


def argsets(name, dt, slow=False):
    vals = _values(dt)
    if name in UNARY:
        extra = _random_values(dt, 400, zlib.crc32(name.encode()))  # the same each run if slow else []
        return tuple((v,) for v in vals + extra)
    if name in BINARY:
        small = vals if slow else vals[::5] + [-0.0, vals[2], vals[3], math.inf, -math.inf, math.nan]
        return tuple(itertools.product(small, small))
    small = vals[::2] if slow else vals[::9] + [-0.0, math.inf, math.nan]
    return tuple(itertools.product(small, small, small))


# ------------------------------------------------------------------ kernels
def _lit(v):
    if math.isnan(v):
        return "math.nan"
    if math.isinf(v):
        return "math.inf" if v > 0 else "-math.inf"
    return repr(v)


@functools.lru_cache(maxsize=None)
def make_kernel(name, dt, sets):
    """A kernel storing ``f(*sets[i])`` at ``out[i]``; the constants are typed
    (``np.float64(c)``): a bare Python float would be folded by the frontend itself."""
    expr = {**UNARY, **BINARY, **TERNARY}[name]
    lines = ["def k(out):"]
    for i, args in enumerate(sets):
        a = ", ".join(f"np.{dt}({_lit(x)})" for x in args)
        lines.append(f"    out[{i}] = {expr}({a})")
    src = "\n".join(lines) + "\n"
    fname = f"<value_semantics {name} {dt} {len(sets)}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)  # for error locations
    g = {"math": math, "np": np, "cuda": cuda}
    exec(compile(src, fname, "exec"), g)
    return cuda.jit(g["k"])


@functools.lru_cache(maxsize=None)
def cpu_values(name, dt, sets):
    k = make_kernel(name, dt, sets)
    out = np.full(len(sets), 7.0, dtype=dt)
    k[1, 1](out)
    return out


# ------------------------------------------------------------------ reading the IR
_STORE = re.compile(r"store (float|double) (\S+), ptr addrspace\(1\) %(\S+?),")
_GEP = re.compile(r"%(\S+) = getelementptr (?:inbounds )?i8, ptr addrspace\(1\) %out\.data, i64 (\d+)")


def _const(text, ty):
    # LLVM prints both float and double constants as a decimal or as the double's bits
    d = np.array([int(text, 16)], dtype=np.uint64).view(np.float64)[0] if text.startswith("0x") else float(text)
    return np.float32(d) if ty == "float" else np.float64(d)


def folded_values(ir_text, n, dt):
    """The constant stored at each ``out[i]`` of the optimised kernel; None where the
    stored value is computed at run time."""
    body = ir_text.split("define amdgpu_kernel", 1)[1].split("\n}", 1)[0]
    offsets = {"out.data": 0}
    offsets.update((m.group(1), int(m.group(2))) for m in _GEP.finditer(body))
    res = [None] * n
    for m in _STORE.finditer(body):
        ty, val, ptr = m.groups()
        if not val.startswith("%"):
            res[offsets[ptr] // np.dtype(dt).itemsize] = _const(val, ty)
    return res


# ------------------------------------------------------------------ host emulation
_EMU = {
    "rcp": "define internal {t} @emu.amdgcn.rcp.{s}({t} %x) {{\n  %r = fdiv {t} 1.0, %x\n  ret {t} %r\n}}",
    "rsq": "define internal {t} @emu.amdgcn.rsq.{s}({t} %x) {{\n  %q = call {t} @llvm.sqrt.{s}({t} %x)\n"
           "  %r = fdiv {t} 1.0, %q\n  ret {t} %r\n}}",
    "sqrt": "define internal {t} @emu.amdgcn.sqrt.{s}({t} %x) {{\n  %r = call {t} @llvm.sqrt.{s}({t} %x)\n"
            "  ret {t} %r\n}}",
    # v_frexp_mant/exp: inf and NaN keep their value, exponent 0
    "frexp.mant": "define internal {t} @emu.amdgcn.frexp.mant.{s}({t} %x) {{\n"
                  "  %p = call {{ {t}, i32 }} @llvm.frexp.{s}.i32({t} %x)\n  %m = extractvalue {{ {t}, i32 }} %p, 0\n"
                  "  ret {t} %m\n}}",
    "frexp.exp": "define internal i32 @emu.amdgcn.frexp.exp.i32.{s}({t} %x) {{\n"
                 "  %p = call {{ {t}, i32 }} @llvm.frexp.{s}.i32({t} %x)\n  %e = extractvalue {{ {t}, i32 }} %p, 1\n"
                 "  %a = call {t} @llvm.fabs.{s}({t} %x)\n  %f = fcmp one {t} %a, 0x7FF0000000000000\n"
                 "  %r = select i1 %f, i32 %e, i32 0\n  ret i32 %r\n}}",
    # v_fract: x - floor(x), at most the float below 1.0, NaN for NaN and inf
    "fract": "define internal {t} @emu.amdgcn.fract.{s}({t} %x) {{\n  %f = call {t} @llvm.floor.{s}({t} %x)\n"
             "  %d = fsub {t} %x, %f\n  %m = call {t} @llvm.minnum.{s}({t} %d, {t} {below1})\n"
             "  %n = fcmp uno {t} %d, %d\n  %r = select i1 %n, {t} %d, {t} %m\n  ret {t} %r\n}}",
}
_BELOW1 = {"float": "0x3FEFFFFFE0000000", "double": "0x3FEFFFFFFFFFFFFF"}
_AMDGCN = re.compile(r"@llvm\.amdgcn\.([a-z.]+?)\.(?:i32\.)?(f32|f64)\b")


def host_module(text):
    """The optimised amdgcn module as host IR (address spaces, calling convention,
    target attributes dropped; amdgcn intrinsics replaced by ``_EMU``), or (None, why)."""
    from pykern.core.llvm_host import host_triple

    used = set(_AMDGCN.findall(text))
    known = {f"@llvm.amdgcn.{n}.{s}" for n, s in used} | {f"@llvm.amdgcn.{n}.i32.{s}" for n, s in used}
    unknown = (set(re.findall(r"@llvm\.amdgcn\.[\w.]+", text)) - known) | {n for n, _ in used if n not in _EMU}
    if unknown:
        return None, f"amdgcn intrinsics without a host stand-in: {sorted(unknown)}"
    lines = [ln for ln in text.splitlines()
             if not ln.startswith(("target datalayout", "target triple", "attributes #"))
             and not (ln.startswith("declare") and "@llvm.amdgcn." in ln)]
    t = "\n".join(lines).replace("amdgpu_kernel ", "")
    t = re.sub(r" addrspace\(\d+\)", "", t)
    t = re.sub(r" #\d+", "", t)
    t = t.replace("@llvm.amdgcn.", "@emu.amdgcn.")
    defs = []
    for n, s in sorted(used):
        ty = "float" if s == "f32" else "double"
        defs.append(_EMU[n].format(t=ty, s=s, below1=_BELOW1[ty]))
    return f'target triple = "{host_triple()}"\n{t}\n' + "\n".join(defs) + "\n", None


def run_on_host(text, n, dt):
    src, why = host_module(text)
    if src is None:
        return None, why
    from pykern.core.llvm_host import LLVM_LOCK, llvm

    ll = llvm()
    with LLVM_LOCK:
        mod = ll.parse_assembly(src)
        mod.verify()
        ee = ll.create_mcjit_compiler(mod, ll.Target.from_default_triple().create_target_machine())
        ee.finalize_object()
        addr = ee.get_function_address("k")
        out = np.full(n, 7.0, dtype=dt)
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(addr)
        fn(out.ctypes.data, n, out.itemsize)
        del ee
    return out, None


# ------------------------------------------------------------------ comparing
def ulps(a, b, dt):
    """Distance in units in the last place (of dt) between two finite values."""
    it = np.int64 if dt == "float64" else np.int32
    sign = 1 << (8 * np.dtype(dt).itemsize - 1)

    def key(x):
        i = int(np.array([x], dtype=dt).view(it)[0])
        return i if i >= 0 else -(i & (sign - 1))

    return abs(key(a) - key(b))


def mismatch(got, want, dt, tol):
    """Why ``got`` (amdgpu) is not acceptable for ``want`` (cpu), or None."""
    if np.isnan(got) or np.isnan(want):
        return None if np.isnan(got) and np.isnan(want) else "NaN-ness differs"
    if np.isinf(got) or np.isinf(want):
        return None if got == want else "infinity differs"
    if got == 0 and want == 0:
        return None if np.signbit(got) == np.signbit(want) else "sign of zero differs"
    if np.signbit(got) != np.signbit(want):
        return "sign differs"
    u = ulps(got, want, dt)
    return None if u <= tol else f"{u} ulps (tolerance {tol})"


def amdgpu_values(name, dt, arch, sets):
    """(values, how many came from host emulation, skipped [(args, reason)])."""
    k = make_kernel(name, dt, sets)
    ck = pykern.compile(k, f"void({dt}[::1])", arch=arch)
    got = folded_values(ck.llvm_ir, len(sets), dt)
    emu, why = (None, None) if all(g is not None for g in got) else run_on_host(ck.llvm_ir, len(sets), dt)
    values, emulated, skipped = [], 0, []
    for i, g in enumerate(got):
        if g is None:
            if emu is None:
                skipped.append((sets[i], why))
            else:
                emulated += 1
                g = emu[i]
        elif emu is not None:
            # the emulator must reproduce what LLVM folded
            e = emu[i]
            assert g == e or (np.isnan(g) and np.isnan(e)), (name, dt, arch, sets[i], g, e)
        values.append(g)
    return values, emulated, skipped


def check(name, dt, arch, slow=False):
    sets = argsets(name, dt, slow)
    want = cpu_values(name, dt, sets)
    got, emulated, skipped = amdgpu_values(name, dt, arch, sets)
    tol = tolerance(name, dt)
    bad = []
    for args, g, w in zip(sets, got, want):
        if g is None:
            continue
        why = mismatch(g, w, dt, tol)
        if why:
            bad.append(f"{name}{args}: amdgpu {g!r}, cpu {w!r}: {why}")
    assert not bad, f"{len(bad)} of {len(sets)} differ on {arch} {dt}:\n" + "\n".join(bad[:40])
    if skipped:
        pytest.skip(f"{len(skipped)} cases neither folded nor emulable, e.g. {skipped[0]}")
    return len(sets), emulated


ALL = list(UNARY) + list(BINARY) + list(TERNARY)


#: the default run: float64 on gfx942 only -- ocml's float64 code does not depend on the ISA,
#: its float32 code does (instruction choices per arch); -m slow checks every pair
DEFAULT_PAIRS = [("float64", "gfx942"), ("float32", "gfx942"), ("float32", "gfx1100")]


@needs_toolchain
@pytest.mark.parametrize("dt,arch", DEFAULT_PAIRS)
@pytest.mark.parametrize("name", ALL)
def test_amdgpu_math_matches_cpu(name, dt, arch):
    check(name, dt, arch)


@needs_toolchain
def test_most_cases_fold_and_the_emulator_runs_the_rest():
    """The comparison reads folded constants for nearly everything; a change that stopped
    LLVM folding (an unknown ocml shape) would show here before the emulator hid it."""
    total = emulated = 0
    for name in ("sin", "exp", "pow", "atan2", "lgamma", "sqrt", "asinh"):
        n, e = check(name, "float64", "gfx942")
        total, emulated = total + n, emulated + e
    assert 0 < emulated < total // 3, (emulated, total)


@needs_toolchain
@pytest.mark.parametrize("dt", DTYPES)
def test_sign_of_zero_fixes(dt):
    """The three ocml deviations fixed in AmdgpuTarget._ocml, stated directly."""
    tiny = float(np.finfo(dt).smallest_subnormal)
    cases = {"expm1": [(-0.0,), (tiny,), (-tiny,)], "log1p": [(-0.0,), (-tiny,), (tiny,)],
             "nextafter": [(-tiny, 1.0), (tiny, -1.0), (0.0, -0.0), (-0.0, 0.0)]}
    want = {"expm1": [-0.0, tiny, -tiny], "log1p": [-0.0, -tiny, tiny], "nextafter": [-0.0, 0.0, -0.0, 0.0]}
    for name, sets in cases.items():
        sets = tuple(tuple(float(np.dtype(dt).type(a)) for a in args) for args in sets)
        got, _, _ = amdgpu_values(name, dt, "gfx942", sets)
        for args, g, w in zip(sets, got, want[name]):
            assert g == w and np.signbit(g) == np.signbit(w), (name, args, g, w)
        # and the cpu target, the reference, answers the same
        cpu = cpu_values(name, dt, sets)
        assert [(float(c), bool(np.signbit(c))) for c in cpu] == [(w, bool(np.signbit(w))) for w in want[name]]


@needs_toolchain
@pytest.mark.parametrize("dt", DTYPES)
def test_gamma_is_exact_at_the_integers(dt):
    """gamma(n) is the correctly rounded (n-1)! on both targets, up to the last finite one
    (Python's math.gamma is exact up to 23): ocml gave 0.9999998 for gamma(2.0) in float32,
    glibc 479001599.99999994 for gamma(13.0), so int(math.gamma(n + 1)) could be n! - 1."""
    from fractions import Fraction

    top = 171 if dt == "float64" else 35
    sets = tuple((float(n),) for n in range(1, top + 2))
    ft = np.dtype(dt).type
    want = []
    for n in range(1, top + 1):
        exact = math.factorial(n - 1)
        c = ft(float(exact))
        want.append(min((c, np.nextafter(c, ft(0)), np.nextafter(c, ft(np.inf))),
                        key=lambda w: abs(Fraction(float(w)) - exact)))
    cpu = cpu_values("gamma", dt, sets)
    assert list(cpu[:top]) == want
    assert cpu[top] == np.inf  # the first overflowing one keeps the library's answer
    if dt == "float64":
        assert list(cpu[:23]) == [math.gamma(n) for n in range(1, 24)]
    for arch in ARCHS:
        got, _, _ = amdgpu_values("gamma", dt, arch, sets)
        assert got[:top] == want and got[top] == np.inf, arch


def _cmath_kernel(fname, ctype, zs):
    lines = ["def k(out):"] + [f"    out[{i}] = cmath.{fname}(np.{ctype}(complex({_lit(z.real)}, {_lit(z.imag)})))"
                               for i, z in enumerate(zs)]
    src = "\n".join(lines) + "\n"
    name = f"<value_semantics cmath.{fname} {ctype}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    g = {"math": math, "np": np, "cmath": __import__("cmath")}
    exec(compile(src, name, "exec"), g)
    return cuda.jit(g["k"])


@needs_toolchain
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("ctype", ["complex64", "complex128"])
@pytest.mark.parametrize("fname", ["atanh", "atan"])
def test_complex_atanh_atan_poles_and_huge_on_amdgpu(fname, ctype, arch):
    """pykern/lang/complex_math.py's atanh/atan through ocml, at the poles +-1/+-i and beyond
    sqrt(MAX/4), against numpy (the cpu target's side is tests/lang/test_complex.py).
    Run from the optimised module on the host: part of it folds, part does not."""
    from types_helpers import atanh_hard, close_parts

    dt = np.dtype(ctype).type
    zs = atanh_hard(dt)
    ck = pykern.compile(_cmath_kernel(fname, ctype, zs), f"void({ctype}[::1])", arch=arch)
    got, why = run_on_host(ck.llvm_ir, len(zs), ctype)
    if got is None:
        pytest.skip(why)
    with np.errstate(all="ignore"):
        ref = (np.arctanh if fname == "atanh" else np.arctan)(zs)
    close_parts(got, ref, 2e-6 if ctype == "complex64" else 2e-15)


@pytest.mark.slow
@needs_toolchain
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", ALL)
def test_amdgpu_math_matches_cpu_exhaustive(name, dt, arch):
    check(name, dt, arch, slow=True)
