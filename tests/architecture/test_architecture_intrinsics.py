"""The intrinsic catalogue (``ir.INTRINSICS``) is the one source: every row verifies, lowers and
compiles on every target, and the verifier, the analysis and codegen take their categories from it."""

import pytest

from pykern.codegen import get_target
from pykern.codegen.lowering import module as codegen_lower
from pykern.codegen.lowering import intrinsics as lower_intrinsics
from pykern.frontend import analysis
from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import verify
from pykern.frontend import types as T
from pykern.frontend import values as frontend_values

#: concrete types for the signature variables, three different instantiations
BINDINGS = [
    {"x": T.int32, "n": T.int32, "i": T.int32, "f": T.float32, "c": T.complex64, "p": T.int64},
    {"x": T.float64, "n": T.float64, "i": T.uint64, "f": T.float64, "c": T.complex128, "p": T.float64},
    {"x": T.boolean, "n": T.int8, "i": T.uint8, "f": T.float16, "c": None, "p": T.boolean},  # no complex32
]
#: printf conversions of print's "p" values
_PRINTF = {T.int64: "%lld", T.float64: "%f", T.boolean: "%s"}
AMDGPU_ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]
#: the matrix rows' variables: fragments of one 16x16x16 float16 -> float32 multiply, a float32 array
_ACC = T.Fragment("accumulator", 16, 16, 16, T.float32)
MATRIX = {"m": _ACC, "md": _ACC, "mc": _ACC, "ma": T.Fragment("matrix_a", 16, 16, 16, T.float16, "row"),
          "mb": T.Fragment("matrix_b", 16, 16, 16, T.float16, "col"), "a": T.Array(T.float32, 1, "C")}


def _type(part, binding):
    if part == "void":
        return T.void
    if part.startswith("Tuple("):
        return T.Tuple(tuple(_type(x.strip(), binding) for x in part[6:-1].split(",")))
    if part in MATRIX:
        return MATRIX[part]
    return binding[part] if part in binding else T.SCALARS.get(part) or T.ALIASES[part]


def _binds(name, binding) -> bool:
    """The row can be instantiated with ``binding`` (complex rows need a float32/64 part)."""
    return not ("c" in infer._split_rule(ir.INTRINSICS[name].signature)[0] + [infer._split_rule(
        ir.INTRINSICS[name].signature)[1]] and binding["c"] is None)


def catalogue_kernel(names, binding):
    """A kernel that calls each intrinsic of ``names`` once on scalar parameters, storing results."""
    params, body, locals_ = [], [], {}

    def param(name, t):
        params.append(ir.Param(name, t))
        locals_[name] = t
        return ir.Var(name, t)

    for k, name in enumerate(n for n in names if _binds(n, binding)):
        op = ir.INTRINSICS[name]
        want, res = infer._split_rule(op.signature)
        want = [w[:-3] if w.endswith("...") else w for w in want]  # a repeated argument: once
        args = [ir.Intrinsic("frag_new", [], t) if isinstance(t, T.Fragment) else param(f"p{k}_{j}", t)
                for j, t in enumerate(_type(w, binding) for w in want)]
        rt = _type(res, binding)
        attrs = {"axis": k % 3} if "axis" in op.attrs else {}
        if "layout" in op.attrs:
            attrs["layout"] = "row"
        if "mode" in op.attrs:
            attrs["mode"] = ("rn", "rz", "ru")[k % 3]
        if "format" in op.attrs:
            attrs["format"] = " ".join(_PRINTF[a.type] for a in args)
        node = ir.Intrinsic(name, args, rt, attrs)
        if isinstance(rt, (T.Void, T.Fragment)):
            body.append(ir.ExprStmt(node))
        else:
            out = param(f"out{k}", T.Array(rt, 1, "C"))
            body.append(ir.Store(out, [ir.Const(0, T.int64)], node))
    return ir.Module(ir.Function("catalogue", params, T.void, body, locals_, True), {})


def _have_amdgpu_toolchain():
    from pykern.codegen.amdgpu import toolchain
    from pykern.core.errors import CompileError

    try:
        return bool(toolchain.find_lld())
    except CompileError:
        return False


TARGETS = ["cpu"] + [f"amdgpu:{a}" for a in AMDGPU_ARCHS]


def _target(name):
    return get_target("cpu") if name == "cpu" else get_target("amdgpu", arch=name.split(":")[1])


@pytest.mark.parametrize("name", sorted(ir.INTRINSICS))
def test_every_row_verifies_and_lowers_on_every_target(name):
    # lowering alone (each target's methods, no LLVM passes); the compile tests below run the rest
    for binding in BINDINGS:
        mod = catalogue_kernel([name], binding)
        verify.verify_module(mod)  # the row's signature rule accepts what it promises
        for tname in TARGETS:
            tgt = _target(tname)
            lowered = codegen_lower.lower_module(mod, tgt, tgt.resolve_options(None))
            assert lowered.kernel_function.blocks, (name, tname)


@pytest.mark.slow
@pytest.mark.parametrize("binding", range(len(BINDINGS)))
@pytest.mark.parametrize("target", TARGETS)
def test_every_intrinsic_compiles_on_every_target(target, binding):
    """The whole back end (optimisation, device libraries, linking) takes every row."""
    if target != "cpu" and not _have_amdgpu_toolchain():
        pytest.skip("no ld.lld to link amdgpu code objects")
    mod = catalogue_kernel(list(ir.INTRINSICS), BINDINGS[binding])
    verify.verify_module(mod)
    art = _target(target).compile(mod)
    assert art.binary[:4] == b"\x7fELF"
    assert art.uses_barrier and art.uses_wave_ops


def test_every_intrinsic_compiles_for_cpu_and_one_gpu():
    targets = ["cpu", "amdgpu:gfx942"] if _have_amdgpu_toolchain() else ["cpu"]
    mod = catalogue_kernel(list(ir.INTRINSICS), BINDINGS[0])
    for t in targets:
        assert _target(t).compile(mod).binary[:4] == b"\x7fELF"


def test_the_signature_rules_reject_what_they_do_not_promise():
    wrong = {"x": T.Array(T.float32, 1), "n": T.boolean, "i": T.float32, "f": T.int32}
    for name, op in ir.INTRINSICS.items():
        want, res = infer._split_rule(op.signature)
        varargs = bool(want) and want[-1].endswith("...")
        want = [w[:-3] if w.endswith("...") else w for w in want]
        good = [_type(w, BINDINGS[0]) for w in want]
        attrs = {"axis": 0, "format": "%lld", "layout": "row", "mode": "rn"}
        assert infer.check_intrinsic(name, good, _type(res, BINDINGS[0]), attrs) is None, name
        if want and not varargs:
            assert infer.check_intrinsic(name, good[:-1], _type(res, BINDINGS[0]), attrs), name
        for j, w in enumerate(want):
            if w in wrong:
                bad = list(good)
                bad[j] = wrong[w]
                assert infer.check_intrinsic(name, bad, _type(res, BINDINGS[0]), attrs), (name, j)
        if "axis" in op.attrs:
            assert "axis" in infer.check_intrinsic(name, good, _type(res, BINDINGS[0]), {"format": "%lld"})
    assert "unknown intrinsic" in infer.check_intrinsic("frobnicate", [], T.void, {})


def test_categories_come_from_the_catalogue():
    by_cat = {c: {n for n, op in ir.INTRINSICS.items() if op.category == c} for c in ir.CATEGORIES}
    assert set(lower_intrinsics.BARRIER_KINDS) == analysis.BARRIERS == by_cat["barrier"]
    assert set(lower_intrinsics.WAVE_OPS) == analysis.WAVE_OPS == by_cat["wave"]
    assert set(lower_intrinsics.SPECIAL_REGISTERS) == by_cat["special"]
    assert set(lower_intrinsics._MATH_NAMES) == by_cat["math"]
    assert set(lower_intrinsics._FENCES) == by_cat["fence"]
    effects = {n for n, op in ir.INTRINSICS.items() if op.effects}
    # synchronisation has effects, and so do output, sleeping, debug errors and breakpoints (never merged or dropped)
    assert effects - by_cat["misc"] - by_cat["matrix"] == by_cat["barrier"] | by_cat["fence"] | by_cat["wave"]
    assert by_cat["matrix"] <= effects  # a fragment's storage changes in place: never merged or dropped
    assert effects & by_cat["misc"] == {"print", "nanosleep", "value_error", "index_error", "breakpoint"}
    assert frontend_values.PURE_INTRINSICS == set(ir.INTRINSICS) - effects
    # the flags the frontend records and the facts codegen reads come from the rows' categories
    for name in ir.INTRINSICS:
        mod = catalogue_kernel([name], BINDINGS[0])
        analysis.scan(mod)
        facts = analysis.function_facts(mod)[mod.kernel.name]
        want = (name in by_cat["barrier"], name in by_cat["wave"])
        assert (mod.kernel.uses_barrier, mod.kernel.uses_wave_ops) == (facts.barrier, facts.wave) == want, name


def test_a_malformed_row_is_refused():
    with pytest.raises(TypeError, match="selp"):
        ir.check_catalogue({**ir.INTRINSICS, "selp": "(boolean, x, x) -> x"})
    with pytest.raises(TypeError, match="cbrt"):
        ir.check_catalogue({"cbrt": ir.Op("maths", "(f) -> f")})


def test_kernel_language_calls_name_catalogued_intrinsics():
    from pykern.frontend import calls
    from pykern.lang import stubs

    calls.load_all()
    # expanded by the frontend into intrinsics, arithmetic or device functions (pykern/lang/warp.py)
    not_intrinsics = {"grid", "gridsize", "shared.array", "local.array", "const.array_like", "selp",
                      "match_any_sync", "match_all_sync"}
    names = {f._pk_name for f in calls.registry.CALLS
             if isinstance(f, stubs.Stub) and not isinstance(f, stubs.VectorTypeStub)
             and f._pk_name not in not_intrinsics
             and not f._pk_name.startswith(("atomic.", "cg.", "fp16.", "bf16.", "wmma."))}
    assert names and names <= set(ir.INTRINSICS), names - set(ir.INTRINSICS)
    assert set(infer.UNARY_MATH) | set(infer.BINARY_MATH) | set(infer.PREDICATES) <= set(ir.INTRINSICS)
