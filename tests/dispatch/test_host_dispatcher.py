"""numba's Dispatcher API: specialize, extensions (prepare_args protocol),
overloads/definitions, get_*() resource queries, and the @jit options
forceinline, max_registers, lineinfo, opt, fastmath."""

import re
import subprocess

import numpy as np
import pytest

import pykern as cuda
from pykern.frontend import types as T


@cuda.jit
def _axpy(a, x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i]


def test_specialize_compiles_once_and_refuses_other_types(cpu_target):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    k = _axpy.specialize(np.float32(2), x, out)
    assert k.specialized and not _axpy.specialized
    assert k is _axpy.specialize(np.float32(3), x, out)  # same types: the same dispatcher
    k[1, 16](np.float32(2), x, out)
    np.testing.assert_array_equal(out, 2 * x)
    assert len(k.overloads) == 1 and k.definitions == k.overloads
    with pytest.raises(TypeError):
        k[1, 16](np.float32(2), x.astype(np.float64), out.astype(np.float64))
    with pytest.raises(RuntimeError, match="already specialized"):
        k.specialize(np.float32(2), x, out)
    with pytest.raises(RuntimeError, match="already specialized"):
        cuda.jit("void(float32, float32[:], float32[:])")(_axpy.py_func).specialize(np.float32(2), x, out)


class _Wrapped:
    def __init__(self, arr):
        self.arr = arr


class _Unwrap:
    """An extension as numba users write them: convert a foreign object to an
    array, and register a write-back that runs after the kernel."""

    def __init__(self):
        self.seen = []

    def prepare_args(self, ty, val, stream=0, retr=None):
        self.seen.append(ty)
        if isinstance(val, _Wrapped):
            host = val.arr
            dev = cuda.to_device(host)
            retr.append(lambda: dev.copy_to_host(host))
            return ty, dev  # pykern types the converted value itself
        return ty, val


def test_extensions_prepare_args_and_write_back(cpu_target):
    ext = _Unwrap()
    k = cuda.jit(extensions=[ext])(_axpy.py_func)
    x = np.arange(8, dtype=np.float64)
    out = np.zeros(8)
    k[1, 8](2.0, _Wrapped(x), _Wrapped(out))
    np.testing.assert_array_equal(out, 2 * x)
    assert ext.seen[1] is None  # pykern cannot type the wrapper: the extension converts it
    assert ext.seen[0] == T.float64
    assert k.extensions == [ext]


def test_resource_queries_with_and_without_signature(cpu_target):
    @cuda.jit
    def tile(a):
        s = cuda.shared.array(256, np.float32)
        loc = cuda.local.array(64, np.float32)
        i = cuda.threadIdx.x
        loc[i % 64] = a[i]
        s[i] = loc[(i * 7) % 64]
        cuda.syncthreads()
        a[i] = s[255 - i]

    a = np.arange(256, dtype=np.float32)
    tile[1, 256](a)
    sig = "void(float32[::1])"
    assert tile.get_shared_mem_per_block(sig) == 1024
    assert tile.get_max_threads_per_block(sig) == 1024
    regs = tile.get_regs_per_thread(sig)
    assert isinstance(regs, int) and 0 < regs <= 512
    assert tile.get_local_mem_per_thread(sig) >= 0
    allregs = tile.get_regs_per_thread()
    assert isinstance(allregs, dict) and list(allregs.values()) == [regs]
    assert tile.get_shared_mem_per_block() == {(T.Array(T.float32, 1, "C"),): 1024}
    eager = cuda.jit(sig, max_block_size=128)(tile.py_func)
    assert eager.specialized and eager.get_max_threads_per_block() == 128
    # numba's _Kernel answers the same queries: programs read them off k.overloads[sig]
    ov = next(iter(tile.overloads.values()))
    assert ov.get_regs_per_thread() == regs and ov.get_shared_mem_per_block() == 1024
    assert ov.get_max_threads_per_block() == 1024 and ov.get_local_mem_per_thread() >= 0
    assert ov.get_const_mem_size() == tile.get_const_mem_size(sig)


def _readelf_vgprs(code_object, tmp_path):
    import shutil

    tool = shutil.which("llvm-readelf-22") or shutil.which("llvm-readelf")
    if tool is None:
        pytest.skip("llvm-readelf-22 not installed")
    f = tmp_path / "k.hsaco"
    f.write_bytes(code_object)
    notes = subprocess.run([tool, "--notes", str(f)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"\.vgpr_count:\s+(\d+)", notes).group(1))


def _pressure(a, out):
    i = cuda.grid(1)
    if i < out.size:
        acc0 = a[i]
        acc1 = acc0 * 1.5
        vals = cuda.local.array(1, np.float32)
        s = 0.0
        for k in range(48):
            acc0 = acc0 * 1.0001 + acc1
            acc1 = acc1 * 0.9999 - acc0
            s += acc0 * acc1
        out[i] = s


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx1100", "gfx1201"])
def test_max_registers_caps_the_vgpr_count(arch, tmp_path):
    # a kernel with many live values: the cap must show in the code object
    src = "\n".join(f"        v{j} = a[(i + {j}) % n] * {j + 1}.5" for j in range(40))
    body = " + ".join(f"v{j} * v{(j * 7) % 40}" for j in range(40))
    code = (f"def wide(a, out):\n    n = a.size\n    i = cuda.grid(1)\n    if i < n:\n{src}\n"
            f"        out[i] = {body}\n")
    import linecache

    fname = f"<host-wide-{arch}>"
    linecache.cache[fname] = (len(code), None, code.splitlines(True), fname)
    ns = {"cuda": cuda}
    exec(compile(code, fname, "exec"), ns)
    sig = "void(float32[::1], float32[::1])"
    free = cuda.compile(ns["wide"], sig, arch=arch)
    capped = cuda.compile(ns["wide"], sig, arch=arch, max_registers=24)
    v_free, v_cap = _readelf_vgprs(free.code_object, tmp_path), _readelf_vgprs(capped.code_object, tmp_path)
    assert v_cap <= 24 < v_free
    assert free.metadata[".vgpr_count"] == v_free


def test_forceinline_device_function_is_inlined():
    @cuda.jit(device=True, forceinline=True)
    def twice(x):
        return x * 2

    @cuda.jit(device=True)
    def thrice(x):
        return x * 3

    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = twice(a[i]) + thrice(a[i])

    ck = cuda.compile(cuda.jit(k, opt=0), "void(float32[::1])", arch="gfx942")
    ir = ck.llvm_ir
    assert not re.search(r"(call|define) .*twice", ir)  # inlined by pykern itself, even at opt=0
    assert re.search(r"call .*thrice", ir)


def test_jit_options_are_accepted_and_honoured(cpu_uncached):
    @cuda.jit(lineinfo=True, opt=0, fastmath=True)
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 3.0 + 1.0

    a = np.arange(32, dtype=np.float32)
    k[1, 32](a)
    np.testing.assert_allclose(a, np.arange(32, dtype=np.float32) * 3 + 1)
    assert re.search(r"f(mul|add) fast", k.inspect_llvm("void(float32[::1])"))
    plain = cuda.jit(k.py_func)
    plain[1, 32](np.zeros(32, np.float32))
    assert not re.search(r"f(mul|add) fast", plain.inspect_llvm("void(float32[::1])"))
    with pytest.raises(TypeError, match="unknown option"):
        cuda.jit(no_such_option=1)(k.py_func)


_CONST_TABLE = np.arange(100, dtype=np.float64)


def test_get_const_mem_size_counts_constant_data_as_numba():
    @cuda.jit("void(float64[::1])")
    def table(x):
        c = cuda.const.array_like(_CONST_TABLE)
        i = cuda.grid(1)
        if i < x.size:
            x[i] = c[i % 100]

    assert table.get_const_mem_size() == _CONST_TABLE.nbytes

    @cuda.jit
    def fmt(val, to_print):
        if to_print:
            print(val)

    fmt[1, 1](1, False)
    fmt[1, 1](1.0, False)
    sizes = fmt.get_const_mem_size()
    # numba's test: at least b"%lld\n\0" and b"%f\n\0"; per signature as the whole dict says
    assert sizes[(cuda.int64, cuda.boolean)] >= 6 and sizes[(cuda.float64, cuda.boolean)] >= 4
    assert fmt.get_const_mem_size(cuda.void(cuda.int64, cuda.boolean)) == sizes[(cuda.int64, cuda.boolean)]

    @cuda.jit
    def plain(x):
        x[0] = 1.0

    plain[1, 1](np.zeros(1))
    assert list(plain.get_const_mem_size().values()) == [0]
