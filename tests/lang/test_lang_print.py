"""``print()`` in kernels: numbers and string literals, formatted as numba.cuda
does (``%lld``/``%llu`` for integers, ``%f`` for floats, items separated by
spaces, one line per call). On the cpu target each call is one ``write(2)`` of
a whole line to the process's stdout (checked in a subprocess, with threads of
many blocks printing at once); on amdgpu it is HIP's hostcall printf through
ockl, and the code object asks the runtime for the hostcall buffer."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykern as cuda

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]


def _run(tmp_path, body):
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_print_formats_like_numba_cuda(tmp_path):
    out = _run(tmp_path, """
        import numpy as np
        import pykern as cuda

        LABEL = "const"

        @cuda.jit
        def k(x):
            i = cuda.grid(1)
            print("i", i, "x =", x[i], x[i] > 0.25, np.uint64(18446744073709551615), np.float32(1.5), "50%", LABEL)

        k[1, 2](np.array([0.125, 3.5]))
        print("host after")
    """)
    lines = out.splitlines()
    assert lines[-1] == "host after"
    want = {f"i {i} x = {x:f} {x > 0.25} 18446744073709551615 1.500000 50% const" for i, x in enumerate([0.125, 3.5])}
    assert set(lines[:-1]) == want


def test_print_lines_from_many_threads_never_interleave(tmp_path):
    out = _run(tmp_path, """
        import numpy as np
        import pykern as cuda

        @cuda.jit
        def k(x):
            i = cuda.grid(1)
            print("begin", i, "value", x[i], x[i] * 2.5, -i, "end")

        @cuda.jit
        def with_barrier(x):
            s = cuda.shared.array(64, cuda.float64)
            t = cuda.threadIdx.x
            s[t] = x[cuda.grid(1)]
            cuda.syncthreads()
            print("barrier", cuda.blockIdx.x, t, s[63 - t])

        x = np.arange(2048, dtype=np.float64)
        k[32, 64](x)
        with_barrier[4, 64](x)
    """)
    lines = out.splitlines()
    plain = [ln for ln in lines if ln.startswith("begin")]
    assert len(plain) == 2048 and len(lines) == 2048 + 256
    pat = re.compile(r"begin (\d+) value ([\d.]+) ([\d.]+) (-?\d+) end")
    seen = set()
    for ln in plain:
        m = pat.fullmatch(ln)
        assert m, ln
        i = int(m.group(1))
        assert m.group(2) == f"{float(i):f}" and m.group(3) == f"{i * 2.5:f}" and int(m.group(4)) == -i
        seen.add(i)
    assert seen == set(range(2048))
    barrier = {ln for ln in lines if ln.startswith("barrier")}
    assert barrier == {f"barrier {b} {t} {float(b * 64 + 63 - t):f}" for b in range(4) for t in range(64)}


def test_print_from_a_device_function_and_a_long_line(tmp_path):
    out = _run(tmp_path, """
        import pykern as cuda

        @cuda.jit(device=True)
        def report(n):
            print("device", n, n * n)

        @cuda.jit
        def k():
            report(7)
            print("a", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, "z")
            print()

        k[1, 1]()
    """)
    assert out.splitlines() == ["device 7 49", "a " + " ".join(map(str, range(1, 21))) + " z", ""]


def test_print_capfd(capfd):
    cuda.set_target("cpu")

    @cuda.jit(cache=False)
    def k(x):
        print("value", x[0])

    k[1, 1](np.array([2], np.int32))
    assert capfd.readouterr().out == "value 2\n"


def test_print_of_tuples_formats_them_as_numba_cuda_does(capfd):
    # numba.cuda prints a tuple argument element by element inside parentheses (a 1-tuple with
    # its trailing comma), nested tuples included; the tuple expression is evaluated once
    cuda.set_target("cpu")
    calls = np.zeros(1, np.int64)

    @cuda.jit(device=True)
    def pair(c):
        c[0] += 1
        return (c[0], np.float32(0.5))

    @cuda.jit(cache=False)
    def k(t, x, c):
        print(t)
        print("n", (x[0],), (x[1], (x[0] > 0, 7)), pair(c))

    k[1, 1]((1, ((2, -4), 3.0), (4,), np.uint8(5)), np.array([1.5, -2.0]), calls)
    t, x = (1, ((2, -4), 3.0), (4,), 5), (1.5, -2.0)
    want = [f"(1, ((2, -4), {3.0:f}), (4,), 5)",
            f"n ({x[0]:f},) ({x[1]:f}, ({x[0] > 0}, 7)) (1, {0.5:f})"]
    assert capfd.readouterr().out.splitlines() == want
    assert calls[0] == 1


def test_print_of_an_array_or_with_keywords_is_a_located_error():
    cuda.set_target("cpu")

    @cuda.jit(cache=False)
    def k(x):
        print(x)

    with pytest.raises(cuda.CompileError, match="numbers and string literals") as e:
        k[1, 1](np.zeros(2))
    assert e.value.line is not None

    @cuda.jit(cache=False)
    def k2(x):
        print(x[0], end="")

    with pytest.raises(cuda.CompileError, match="keyword 'end'"):
        k2[1, 1](np.zeros(2))


@cuda.jit
def _printing(x):
    i = cuda.grid(1)
    print("thread", i, "x =", x[i], x[i] > 0.5, np.uint64(7), 1, 2, 3, 4, 5, 6, 7, 8, "100%")


@pytest.mark.parametrize("arch", ARCHS)
def test_amdgpu_print_uses_the_hostcall_printf(arch, tmp_path):
    ck = cuda.compile(_printing, "void(float64[::1])", arch=arch)
    kinds = [a[".value_kind"] for a in ck.metadata[".args"]]
    # ockl's hostcall reads the buffer HIP allocates when the metadata asks for it
    assert "hidden_hostcall_buffer" in kinds
    p = tmp_path / "k.hsaco"
    p.write_bytes(ck.code_object)
    syms = subprocess.run(["llvm-readelf-22", "--syms", str(p)], capture_output=True, text=True, check=True).stdout
    assert not re.search(r"\sUND[ \t]+\S", syms)
    # the format string the HIP runtime formats on the host, NUL-terminated, in the code object
    fmt = b"thread %lld x = %f %s %llu %lld %lld %lld %lld %lld %lld %lld %lld 100%%\n\0"
    assert fmt in ck.code_object and b"True\0" in ck.code_object and b"False\0" in ck.code_object
    dis = subprocess.run(["llvm-objdump-22", "-d", str(p)], capture_output=True, text=True, check=True).stdout
    assert "s_swappc_b64" in dis or "s_swap_pc_i64" in dis or "s_setpc_b64" in dis  # the hostcall
    assert "global_atomic" in dis or "flat_atomic" in dis  # the hostcall's lock-free packet queue


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_amdgpu_print_of_tuples_carries_numba_cuda_format(arch):
    def k(t, x):
        print(t, (x[0], (x[1] > 0, 7)))

    ck = cuda.compile(k, "void(Tuple(int64, UniTuple(float32, 2)), float64[::1])", arch=arch)
    assert b"(%lld, (%f, %f)) (%f, (%s, %lld))\n\0" in ck.code_object
