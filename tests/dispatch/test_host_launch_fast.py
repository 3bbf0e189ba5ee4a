"""The launch fast path (issue 15 item 3): a launcher that ran once keeps a
generated check+pack+call for arguments of the same kinds. Whatever differs
must take the full path, with its results and its LaunchErrors unchanged."""

import threading

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import LaunchError

pytestmark = pytest.mark.usefixtures("cpu_target")


@pytest.fixture(params=["native", "python"])
def guards(request, monkeypatch):
    """Both ways a fast path checks numpy arguments: one native call
    (``runtime.native_guard``) where it works here, or the Python guards."""
    from pykern.core.llvm_host import llvm
    from pykern.runtime import native_guard

    if request.param == "python":
        monkeypatch.setattr(native_guard, "make", lambda entries: None)
        return request.param
    llvm()  # native guards are made where LLVM is loaded (a kernel from the disk cache may not load it)
    if not native_guard.available():
        pytest.skip("no native guards in this process")
    return request.param


def _uses_native(launcher):
    return launcher._fast.__globals__.get("_native") is not None


@cuda.jit
def _scale(out, x, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * a


@cuda.jit
def _sum2d(out, m):
    i = cuda.grid(1)
    if i < m.shape[0]:
        s = 0.0
        for j in range(m.shape[1]):
            s += m[i, j]
        out[i] = s


def _fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


@cuda.jit
def _nothing():
    pass


@cuda.jit(debug=True)
def _oob(a, n):
    i = cuda.grid(1)
    a[i + n] = 1.0


def _fast(launcher):
    return launcher._fast


def test_same_kinds_take_the_fast_path_and_compute_the_same():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    _scale[1, 16](out, x, 2.0)
    _scale[1, 16](out, x, 2.0)  # the second full launch of a launcher makes its fast path
    assert _scale[1, 16] is _scale[1, 16]  # one launcher per (grid, block) of ints
    assert _fast(_scale[1, 16]) is not None
    for a in (3.0, -1.5, 0.0):
        x2 = np.random.rand(16).astype(np.float32)
        _scale[1, 16](out, x2, a)
        np.testing.assert_allclose(out, x2 * np.float32(a), rtol=1e-6)
    dx, dout = cuda.to_device(x), cuda.device_array_like(out)
    _scale[1, 16](dout, dx, 4.0)
    _scale[1, 16](dout, dx, 5.0)
    np.testing.assert_array_equal(dout.copy_to_host(), x * 5)


def test_other_kinds_after_the_fast_path_pick_their_own_overload():
    x32 = np.arange(8, dtype=np.float32)
    out32 = np.zeros_like(x32)
    _scale[1, 8](out32, x32, 2.0)
    _scale[1, 8](out32, x32, 2.0)
    x64, out64 = x32.astype(np.float64) + 0.25, np.zeros(8)
    _scale[1, 8](out64, x64, 2.0)  # another dtype
    np.testing.assert_array_equal(out64, x64 * 2)
    _scale[1, 8](out32, x32, 3)  # an int scalar instead of a float
    np.testing.assert_array_equal(out32, x32 * 3)
    _scale[1, 8](out32, x32, np.float32(0.5))  # a numpy scalar
    np.testing.assert_array_equal(out32, x32 * np.float32(0.5))
    _scale[1, 8](out32, x32, 1 << 63)  # beyond int64: uint64, as the full path types it
    np.testing.assert_array_equal(out32, x32 * np.float32(1 << 63))
    ro = x32.copy()
    ro.flags.writeable = False
    _scale[1, 8](out32, ro, 2.0)  # a read-only array is another type
    np.testing.assert_array_equal(out32, x32 * 2)


def test_new_device_array_views_each_launch():
    x = np.arange(64, dtype=np.float32)
    dx, dout = cuda.to_device(x), cuda.to_device(np.zeros(64, np.float32))
    for lo in range(0, 40, 8):  # a fresh view per launch, contiguous: typed once in the fast path
        _scale[1, 8](dout[lo:lo + 8], dx[lo:lo + 8], 2.0)
    for view in (dx[1:17:2], dx[:8], dx[::-1][:8]):  # other layouts fall back to the full path
        out = cuda.to_device(np.zeros(8, np.float32))
        _scale[1, 8](out, view, 1.0)
        np.testing.assert_array_equal(out.copy_to_host(), view.copy_to_host())
    host = dout.copy_to_host()
    np.testing.assert_array_equal(host[:40], x[:40] * 2)
    assert (host[40:] == 0).all()


def test_layouts_are_told_apart():
    m = np.arange(12, dtype=np.float64).reshape(3, 4)
    out = np.zeros(3)
    for arr in (m, np.asfortranarray(m), m[:, ::-1], m, np.asfortranarray(m)):
        out[:] = 0
        _sum2d[1, 3](out, arr)
        np.testing.assert_array_equal(out, arr.sum(axis=1))


def test_errors_are_raised_exactly_as_without_the_fast_path():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    _scale[1, 8](out, x, 2.0)
    _scale[1, 8](out, x, 2.0)
    with pytest.raises(LaunchError, match="takes 3 argument"):
        _scale[1, 8](out, x)
    with pytest.raises(LaunchError):
        _scale[1, 8](out, "not an array", 2.0)
    with pytest.raises(LaunchError):
        _scale[1, 8](out, x, 1 << 64)  # fits no 64-bit integer
    _scale[1, 8](out, x, 2.0)  # and the fast path still works after them
    np.testing.assert_array_equal(out, x * 2)


def test_eager_signatures_refuse_what_does_not_convert_before_running():
    _fill32 = cuda.jit("void(int32[:], int32)")(_fill)
    out = np.zeros(4, np.int32)
    _fill32[1, 4](out, 5)
    _fill32[1, 4](out, 6)
    assert (out == 6).all()
    with pytest.raises(LaunchError):
        _fill32[1, 4](out, 1 << 70)  # no numba type (ints up to 64 bits keep their low bits, as numba's)
    assert (out == 6).all()  # nothing ran
    for bad in ((out.reshape(2, 2), 1), (out.astype(np.float32), 1), (out, 1.5j)):
        with pytest.raises(LaunchError):
            _fill32[1, 4](*bad)
    _fill32[1, 4](out, 7)
    assert (out == 7).all()


def test_kernel_errors_come_from_the_fast_path_too():
    a = np.zeros(4, np.float32)
    _oob[1, 4](a, 0)
    _oob[1, 4](a, 0)
    for _ in range(2):
        with pytest.raises(IndexError, match="out of bounds"):
            _oob[1, 4](a, 2)
    _oob[1, 4](a, 0)


def test_no_arguments_and_multi_block_grids():
    _nothing[1, 1]()
    _nothing[1, 1]()
    _nothing[3, 2]()
    _nothing[3, 2]()
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    for _ in range(3):
        _scale[8, 128](out, x, 2.0)  # several blocks: run inline, chunked
    np.testing.assert_array_equal(out, x * 2)


def test_extensions_added_later_are_applied():
    calls = []

    class Ext:
        def prepare_args(self, ty, val, stream=0, retr=None):
            calls.append(ty)
            return ty, val

    x = np.arange(4, dtype=np.float32)
    out = np.zeros_like(x)
    k = cuda.jit(_scale.py_func)
    k[1, 4](out, x, 2.0)
    k[1, 4](out, x, 2.0)
    k.extensions.append(Ext())
    k[1, 4](out, x, 3.0)
    assert len(calls) == 3
    np.testing.assert_array_equal(out, x * 3)


def test_threads_share_a_launcher():
    launcher = _scale[1, 64]
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(200):
                x = rng.random(64, dtype=np.float32)
                out = np.zeros_like(x)
                launcher(out, x, 2.0)
                np.testing.assert_array_equal(out, x * 2)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_a_float_grid_is_still_refused():
    _scale[1, 8], _scale[(1, 1), 8, 0, 0]  # cached launchers of equal keys
    for bad in ((1.0, 8), (1, 8.0), ((1.0, 1), 8, 0, 0), (1, 8, 0, 0.0)):
        with pytest.raises(LaunchError):
            _scale[bad]


def test_tuple_and_four_part_configurations_get_the_fast_path():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    for config in (((1, 1), (8, 1)), (1, 8, 0, 0)):
        for a in (1.0, 2.0, 3.0):
            _scale[config](out, x, a)
            np.testing.assert_array_equal(out, x * a)
        assert _scale[config] is _scale[config] and _fast(_scale[config]) is not None


def _on_fake_hip(k, args, hip):
    """Run ``k``'s launches on the "hip" target with a gfx942 kernel assembled without a
    device (as benchmarks/bench_hip_launch.py does) and ``hip()`` as the HIP library;
    returns a context manager."""
    import contextlib
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks"))
    try:
        from bench_hip_launch import _fake_kernel
    finally:
        sys.path.pop(0)
    from pykern.dispatch import compiler
    from pykern import runtime as targets
    from pykern.dispatch.argument_types import argument_types
    from pykern.runtime.hip import launch as hip_launch

    argtypes = argument_types(args, k.__name__)[0]
    art, _ = compiler.compile_artifact(k, "amdgpu", argtypes, arch="gfx942")
    k._overloads[("hip", argtypes)] = compiler.Overload(k, "hip", argtypes, art, _fake_kernel(art))

    @contextlib.contextmanager
    def on():
        saved_target, saved_hip = list(targets._chosen), hip_launch._hip
        targets._chosen[:] = ["hip"]
        hip_launch._hip = hip
        try:
            yield
        finally:
            targets._chosen[:] = saved_target
            hip_launch._hip = saved_hip

    return on()


def _fake_device_arrays(*ptrs):
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks"))
    try:
        from bench_hip_launch import _fake_device_array
    finally:
        sys.path.pop(0)
    return [_fake_device_array(16, p) for p in ptrs]


def _launch_five_times(k, args):
    """Two full launches (the second makes the fast path), two fast ones (the scalar
    changed between them), one full one with the last arguments."""
    k[2, 8](*args)
    k[2, 8](*args)
    assert _fast(k[2, 8]) is not None
    k[2, 8](*args)
    args[2] = -1.0
    k[2, 8](*args)
    k.launch(tuple(args), (2, 1, 1), (8, 1, 1))


def test_hip_host_path_packs_what_the_full_path_packs():
    """No GPU here: the driver call is recorded (as in benchmarks/bench_hip_launch.py)
    and the fast path must hand it the same bytes and configuration as the full one."""
    import ctypes

    seen = []

    class Recorder:
        def hipModuleLaunchKernel(self, fn, g0, g1, g2, b0, b1, b2, shared, stream, params, extra):
            ints = [(v.value or 0) if hasattr(v, "value") else v for v in (fn, g0, g1, g2, b0, b1, b2, shared, stream)]
            size = ctypes.c_size_t.from_address(extra[3]).value
            seen.append((ints, ctypes.string_at(extra[1], size)))

    k = cuda.jit(_scale.py_func)
    args = [*_fake_device_arrays(0x10000, 0x20000), 2.5]
    with _on_fake_hip(k, args, lambda: Recorder()):
        _launch_five_times(k, args)
    assert len(seen) == 5
    assert seen[0] == seen[1] == seen[2] and seen[3] == seen[4] and seen[0] != seen[3]
    assert seen[0][0][1:8] == [2, 1, 1, 8, 1, 1, 0]


_HIP_NAMES = ["g0", "g1", "g2", "b0", "b1", "b2", "sh"]
#: a stand-in for hipModuleLaunchKernel: records its arguments in @rec, returns @ret
_HIP_STUB = (
    "@rec = global [11 x i64] zeroinitializer\n@ret = global i32 0\n"
    "define i32 @stub(ptr %f, " + ", ".join(f"i32 %{n}" for n in _HIP_NAMES) + ", ptr %s, ptr %p, ptr %x) {\n"
    + "".join(f"  %i{j} = ptrtoint ptr %{n} to i64\n" for j, n in ((0, "f"), (8, "s"), (9, "p"), (10, "x")))
    + "".join(f"  %i{j + 1} = zext i32 %{n} to i64\n" for j, n in enumerate(_HIP_NAMES))
    + "".join(f"  %a{j} = getelementptr i64, ptr @rec, i64 {j}\n  store i64 %i{j}, ptr %a{j}\n" for j in range(11))
    + "  %rc = load i32, ptr @ret\n  ret i32 %rc\n}\n")


_CFG = ((2, 3, 4), (8, 2, 1), 0, 16)  # every number told apart


def test_hip_host_path_calls_a_real_hip_library_natively():
    """With a HipLibrary (here around a compiled stand-in for hipModuleLaunchKernel that
    records its arguments), the fast path calls it natively: the same arguments and
    bytes as the full path's ctypes call, and its error code raised as the checked
    binding raises it."""
    import ctypes
    import types

    from pykern.core.llvm_host import llvm, new_host_target_machine
    from pykern.runtime.hip import api as hip_api
    from pykern.runtime import native_guard
    from pykern.runtime.hip.library import HipError, HipLibrary

    ll = llvm()
    if not native_guard.available():
        pytest.skip("no native code in this process")
    eng = ll.create_mcjit_compiler(ll.parse_assembly(""), new_host_target_machine())
    eng.add_module(ll.parse_assembly(_HIP_STUB))
    eng.finalize_object()
    rec = (ctypes.c_int64 * 11).from_address(eng.get_global_value_address("rec"))
    ret = ctypes.c_int32.from_address(eng.get_global_value_address("ret"))
    restype, argtypes = hip_api.ctypes_signature("hipModuleLaunchKernel")
    stub = ctypes.CFUNCTYPE(restype, *argtypes)(eng.get_function_address("stub"))
    lib = object.__new__(HipLibrary)
    lib.raw, lib._get_error_string = types.SimpleNamespace(hipModuleLaunchKernel=stub), None
    lib.hipModuleLaunchKernel = lib._checked(stub, "hipModuleLaunchKernel")
    seen = []
    calls = []
    real = lib.hipModuleLaunchKernel

    def full_path_call(*a):
        calls.append("ctypes")
        return real(*a)

    lib.hipModuleLaunchKernel = full_path_call  # (the fast path takes ``raw``'s)
    k = cuda.jit(_scale.py_func)
    args = [*_fake_device_arrays(0x10000, 0x20000), 2.5]

    def launch(*a):
        n = len(calls)
        k[_CFG](*a)
        extra = (ctypes.c_void_p * 5).from_address(rec[10])
        size = ctypes.c_size_t.from_address(extra[3]).value
        seen.append((list(rec[:10]), ctypes.string_at(extra[1], size), len(calls) > n))

    with _on_fake_hip(k, args, lambda: lib):
        launch(*args)
        launch(*args)
        assert _fast(k[_CFG]).__globals__["_NL"] is not None
        launch(*args)
        args[2] = -1.0
        launch(*args)
        ret.value = 101  # hipErrorInvalidDevice
        with pytest.raises(HipError) as fast_err:
            k[_CFG](*args)
        with pytest.raises(HipError) as full_err:
            k.launch(tuple(args), (2, 3, 4), (8, 2, 1), 0, 16)
        assert str(fast_err.value) == str(full_err.value) and fast_err.value.code == 101
        ret.value = 0
        k.launch(tuple(args), (2, 3, 4), (8, 2, 1), 0, 16)
        seen.append((list(rec[:10]), None, True))
    assert [s[2] for s in seen] == [True, True, False, False, True]  # ctypes on the full path only
    assert seen[0][:2] == seen[1][:2] == seen[2][:2] and seen[3][0] == seen[4][0] and seen[0][1] != seen[3][1]
    assert seen[0][0] == [0xF00D, 2, 3, 4, 8, 2, 1, 16, 0, 0]
    del eng  # (after the last call)


def test_the_native_hip_launch_returns_the_real_librarys_answer():
    """Against the real libamdhip64 (no GPU here, so it refuses): the native call
    returns the code the ctypes call returns."""
    import ctypes

    from pykern.core.llvm_host import llvm
    from pykern.runtime.hip import library as hip
    from pykern.runtime.hip import api as hip_api
    from pykern.runtime import native_guard

    llvm()
    try:
        lib = hip.load_library()
    except Exception as e:  # no HIP runtime installed
        pytest.skip(f"no libamdhip64: {e}")
    if hip.available()[0]:
        pytest.skip("a GPU is here: a bogus kernel handle is not for it")
    if not native_guard.available():
        pytest.skip("no native code in this process")
    raw = lib.raw.hipModuleLaunchKernel
    extra = (ctypes.c_void_p * 5)(hip_api.HIP_LAUNCH_PARAM_BUFFER_POINTER, 0, hip_api.HIP_LAUNCH_PARAM_BUFFER_SIZE,
                                  0, hip_api.HIP_LAUNCH_PARAM_END)
    for func, grid, block in ((0xF00D, (1, 1, 1), (1, 1, 1)), (0, (2, 3, 4), (5, 6, 7))):
        want = raw(func, *grid, *block, 0, None, None, extra)
        launch = native_guard.make_hip_launch(raw, func, grid, block, 0, 0)
        assert (launch(extra) or 0) == want
        with pytest.raises(TypeError):
            launch()
        assert want != 0  # (a GPU here would have run a bogus kernel handle: nothing reaches this)


def test_a_redefined_device_function_reaches_a_launcher_with_a_fast_path(tmp_path):
    import importlib.util

    src = "import pykern as cuda\n\n@cuda.jit(device=True)\ndef bump(x):\n    return x + {n}\n"
    kern = "\n@cuda.jit\ndef apply(a):\n    i = cuda.grid(1)\n    if i < a.size:\n        a[i] = bump(a[i])\n"
    path = tmp_path / "fast_redef.py"
    path.write_text(src.format(n=1) + kern)
    spec = importlib.util.spec_from_file_location("fast_redef", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = np.zeros(4)
    for _ in range(3):
        mod.apply[1, 4](a)
    assert (a == 3).all() and _fast(mod.apply[1, 4]) is not None
    path2 = tmp_path / "fast_redef_cell2.py"  # a notebook cell re-run: the device function only
    path2.write_text(src.format(n=10))
    exec(compile(path2.read_text(), str(path2), "exec"), mod.__dict__)
    mod.apply[1, 4](a)
    assert (a == 13).all()
    mod.apply[1, 4](a)
    mod.apply[1, 4](a)
    assert (a == 33).all()


# ---------------------------------------------------------------------------- every guard of the fast path
# Each case makes a launcher's fast path with C-contiguous float32 vectors, then launches
# with an argument that differs in one thing the kernel's type depends on; the outcome
# (results, or the exception's class and message) must be that of a dispatcher which
# never had a fast path. A fast path missing that check would run the kernel compiled
# for the first kind (wrong results, a write to read-only memory, no error).

def _outcome(k, grid, args):
    try:
        k[grid](*args)
    except Exception as e:  # compared below
        return type(e), str(e)
    return "ran", [np.array(a, copy=True) if isinstance(a, np.ndarray) else
                   a.copy_to_host() if hasattr(a, "copy_to_host") else a for a in args]


def _assert_same(got, want):
    assert got[0] == want[0], (got, want)
    if got[0] != "ran":
        assert got[1] == want[1]
        return
    for g, w in zip(got[1], want[1]):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
        else:
            assert g == w


def _primed(py_func, grid, args, guards=None):
    """A new dispatcher of ``py_func`` whose ``[grid]`` launcher has its fast path for ``args``
    (checking numpy arguments the ``guards`` way, when given)."""
    k = cuda.jit(py_func)
    k[grid](*args)
    k[grid](*args)
    assert _fast(k[grid]) is not None
    if guards is not None and any(type(a) is np.ndarray for a in args):
        assert _uses_native(k[grid]) == (guards == "native")
    assert _fast(k[grid])(tuple(args)) is True  # and takes these arguments
    return k


def _fresh_vs_primed(py_func, grid, prime_args, make_bad, guards=None):
    """``make_bad()`` builds the arguments anew for each run (kernels write them)."""
    k = _primed(py_func, grid, prime_args, guards)
    got = _outcome(k, grid, make_bad())
    want = _outcome(cuda.jit(py_func), grid, make_bad())
    _assert_same(got, want)
    return got


def _vectors(n=8, dtype=np.float32):
    return np.zeros(n, dtype), np.arange(n, dtype=dtype) + 1


_SCALE = _scale.py_func


@pytest.mark.parametrize("case", [
    "x strided", "x reversed", "x float64", "x int32", "x 2-d", "x 2-d of one row", "x 0-d", "x byte-swapped", "x ndarray subclass",
    "out read-only", "out 2-d", "out F-order 2-d", "out strided", "a numpy float32", "a int", "x a list",
])
def test_a_numpy_argument_unlike_the_fast_paths_goes_the_full_way(case, guards):
    def bad():
        out, x = _vectors()
        big = np.arange(32, dtype=np.float32) + 1
        if case == "x strided":
            x = big[::4]
        elif case == "x reversed":
            x = big[::-1][:8]
        elif case == "x float64":
            x = x.astype(np.float64) + 0.5
        elif case == "x int32":
            x = x.astype(np.int32)
        elif case == "x 2-d":
            x = x.reshape(2, 4)
        elif case == "x 2-d of one row":  # C- and F-contiguous like a vector: only its ndim differs
            x = x.reshape(1, 8)
        elif case == "x 0-d":
            x = np.array(3.0, np.float32)
        elif case == "x byte-swapped":
            x = x.astype(">f4")
        elif case == "x ndarray subclass":
            x = x.view(type("Sub", (np.ndarray,), {}))
        elif case == "out read-only":
            out.flags.writeable = False
        elif case == "out 2-d":  # out[i] = v is then a row assignment: one row per thread
            out = np.zeros((8, 2), np.float32)
        elif case == "out F-order 2-d":
            out = np.asfortranarray(np.zeros((8, 2), np.float32))
        elif case == "out strided":
            out = np.zeros(16, np.float32)[::2]
        elif case == "x a list":
            x = list(x)
        a = {"a numpy float32": np.float32(1.5), "a int": 3}.get(case, 2.0)
        return out, x, a

    _fresh_vs_primed(_SCALE, (1, 8), (*_vectors(), 2.0), bad, guards)


def _set_strides(a, strides):
    import warnings

    with warnings.catch_warnings():  # deprecated in numpy 2.4, still what users may do
        warnings.simplefilter("ignore", DeprecationWarning)
        a.strides = strides


class _Sub(np.ndarray):
    pass


def _change_in_place(change, out, x):
    """Change ``out`` or ``x`` (float32 vectors of 8) without making a new array object
    (except the subclass case: numpy refuses ``__class__`` assignment, so it is a view)."""
    if change == "read-only":
        out.flags.writeable = False
    elif change == "reshaped to 2-d":
        x.shape = (2, 4)
    elif change == "reshaped to 2-d of one row":  # still C- and F-contiguous
        x.shape = (1, 8)
    elif change == "dtype viewed as int32":
        x.dtype = np.int32
    elif change == "dtype viewed as float16":  # another itemsize: 16 elements
        x.dtype = np.float16
    elif change == "dtype byte-swapped":
        x.dtype = x.dtype.newbyteorder()
    elif change == "strides set to 0":  # every element the first: not contiguous
        _set_strides(x, (0,))
    elif change == "out strides set to 0":
        _set_strides(out, (0,))
    elif change == "resized (a new buffer)":  # the same type: the fast path runs it, at the new pointer
        out.resize(16, refcheck=False)
    elif change == "shrunk":  # the same type and buffer, a smaller shape
        x.resize(4, refcheck=False)
        out.resize(4, refcheck=False)
    elif change == "x as a subclass":
        return out, x.view(_Sub)
    return out, x


_IN_PLACE = ["read-only", "reshaped to 2-d", "reshaped to 2-d of one row", "dtype viewed as int32",
             "dtype viewed as float16", "dtype byte-swapped", "strides set to 0", "out strides set to 0",
             "resized (a new buffer)", "shrunk", "x as a subclass"]


@pytest.mark.parametrize("change", _IN_PLACE)
def test_an_array_changed_in_place_after_the_fast_path_goes_the_full_way(change, guards):
    """The same array object, changed in place between two launches of one launcher:
    nothing may be remembered per array. The outcome is a fresh dispatcher's (which
    never had a fast path) on arrays changed alike, and numpy's where it ran."""
    def changed():
        out, x = _vectors()
        return (*_change_in_place(change, out, x), 2.0)

    out, x = _vectors()
    k = _primed(_SCALE, (1, 8), (out, x, 2.0), guards)
    args = (*_change_in_place(change, out, x), 2.0)
    want = _outcome(cuda.jit(_SCALE), (1, 8), changed())
    got = _outcome(k, (1, 8), args)
    _assert_same(got, want)
    if got[0] == "ran" and change in ("resized (a new buffer)", "shrunk", "strides set to 0", "x as a subclass"):
        n = min(8, out.size, x.size)  # the kernel's own bound: out.size
        np.testing.assert_array_equal(out[:n], (x[:n] * np.float32(2)).astype(out.dtype))


@pytest.mark.parametrize("change", ["transposed strides", "reshaped (5, 3)", "rows overlapping"])
def test_a_matrix_changed_in_place_after_the_fast_path(change, guards):
    """2-d: shape and strides set in place on the array the fast path was made with (same
    ndim): an F-order or non-contiguous layout is refused, a new shape is packed."""
    def change_(m):
        if change == "transposed strides":  # (5, 3) F-order over the same 15 doubles
            m.shape = (5, 3)
            _set_strides(m, (8, 40))
        elif change == "reshaped (5, 3)":
            m.shape = (5, 3)
        else:  # every row the first one: not contiguous
            _set_strides(m, (0, 8))
        return m

    m = np.arange(15.0).reshape(3, 5)
    k = _primed(_sum2d.py_func, (1, 5), (np.zeros(5), m), guards)
    change_(m)
    res = np.zeros(5)
    got = _outcome(k, (1, 5), (res, m))
    want = _outcome(cuda.jit(_sum2d.py_func), (1, 5), (np.zeros(5), change_(np.arange(15.0).reshape(3, 5))))
    _assert_same(got, want)
    assert got[0] == "ran"
    n = m.shape[0]
    np.testing.assert_array_equal(res[:n], m.sum(axis=1))


def test_the_same_object_changed_back_and_forth_between_launches(guards):
    """One array object, its dtype, shape and flags changed and restored between
    launches of one launcher: each launch sees the array as it is then."""
    out, x = _vectors()
    k = _primed(_SCALE, (1, 8), (out, x, 2.0), guards)
    for step in range(3):
        x.dtype = np.int32
        x[:] = np.arange(8, dtype=np.int32) * (step + 1)
        k[1, 8](out, x, 2.0)  # int32 x: another overload
        np.testing.assert_array_equal(out, np.arange(8) * (step + 1) * 2)
        x.dtype = np.float32
        x[:] = np.arange(8, dtype=np.float32) + step
        k[1, 8](out, x, 2.0)  # back to the fast path's kind
        np.testing.assert_array_equal(out, (np.arange(8) + step) * 2)
        out.flags.writeable = False
        with pytest.raises(Exception) as e1:
            k[1, 8](out, x, 2.0)
        with pytest.raises(Exception) as e2:
            cuda.jit(_SCALE)[1, 8](out, x, 2.0)
        assert (type(e1.value), str(e1.value)) == (type(e2.value), str(e2.value))
        out.flags.writeable = True
    assert _fast(k[1, 8])((out, x, 2.0)) is True


def test_numpy_and_device_arrays_and_scalars_mixed(guards):
    """The native call packs the numpy arguments, Python the rest, into one buffer."""
    out, x = _vectors(16)
    dx = cuda.to_device(x)
    k = _primed(_SCALE, (1, 16), (out, dx, 2.0), guards)
    for a in (0.5, -3.0):
        y = np.random.rand(16).astype(np.float32)
        k[1, 16](out, cuda.to_device(y), a)
        np.testing.assert_array_equal(out, y * np.float32(a))
    d_out = cuda.to_device(np.zeros(16, np.float32))
    k2 = _primed(_SCALE, (1, 16), (d_out, x, 1.5), guards)
    k2[1, 16](d_out, x[::-1].copy(), 4.0)
    np.testing.assert_array_equal(d_out.copy_to_host(), x[::-1] * 4)


@pytest.mark.parametrize("shape", [(3, 5, 1), (3,), (1, 3, 5)])
def test_a_matrix_fast_path_refuses_other_ndims_with_the_same_flags(shape, guards):
    """C-contiguous like the matrix the fast path was made for; only the ndim differs."""
    _fresh_vs_primed(_sum2d.py_func, (1, 3), (np.zeros(3), np.zeros((3, 5))),
                     lambda: (np.zeros(3), np.arange(15.0).reshape(shape) if len(shape) > 1 else np.arange(3.0)),
                     guards)


@pytest.mark.parametrize("case", ["float64", "2-d", "strided view", "numpy instead"])
def test_a_device_argument_unlike_the_fast_paths_goes_the_full_way(case):
    def bad():
        out, x = _vectors()
        d_out = cuda.to_device(out)
        if case == "float64":
            d_x = cuda.to_device(x.astype(np.float64))
        elif case == "2-d":
            d_x = cuda.to_device(x.reshape(2, 4))
        elif case == "strided view":
            d_x = cuda.to_device(np.arange(16, dtype=np.float32))[::2]
        else:
            d_x = x
        return d_out, d_x, 2.0

    out, x = _vectors()
    _fresh_vs_primed(_SCALE, (1, 8), (cuda.to_device(out), cuda.to_device(x), 2.0), bad)


def _record_x(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i].x


def test_a_records_fields_renamed_in_place_go_the_full_way(guards):
    """numpy lets a structured dtype's field names change in place (the same dtype
    object): the fast path must not read the old ``x`` afterwards."""
    dt = np.dtype([("x", np.float64), ("y", np.float64)])
    a, out = np.zeros(4, dt), np.zeros(4)
    a["x"], a["y"] = 1.0, 2.0
    k = _primed(_record_x, (1, 4), (a, out), guards)
    k[1, 4](a, out)
    np.testing.assert_array_equal(out, a["x"])
    a.dtype.names = ("y", "x")
    k[1, 4](a, out)
    np.testing.assert_array_equal(out, a["x"])  # 2.0 now
    assert (out == 2.0).all()
    a.dtype.names = ("x", "y")
    k[1, 4](a, out)
    assert (out == 1.0).all()


def _nested_x(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i].p.x


@pytest.mark.parametrize("grid", [1, 2])
def test_a_nested_records_fields_renamed_in_place_retype_the_argument(grid):
    """Renaming an inner record's fields in place leaves the outer dtype's hash and
    equality as they were: the argument-type memos must still see the change."""
    dt = np.dtype([("p", [("x", np.float64), ("y", np.float64)]), ("z", np.float64)])
    a, out = np.zeros(8, dt), np.zeros(8)
    a["p"]["x"], a["p"]["y"] = 1.0, 2.0
    k = cuda.jit(_nested_x)
    k[grid, 8 // grid](a, out)
    assert (out == 1.0).all()
    a.dtype.fields["p"][0].names = ("y", "x")
    k[grid, 8 // grid](a, out)
    np.testing.assert_array_equal(out, a["p"]["x"])
    assert (out == 2.0).all()
    d = cuda.to_device(np.zeros(8, dt))
    d.copy_to_device(a)
    k[grid, 8 // grid](d, out)
    assert (out == 2.0).all()
