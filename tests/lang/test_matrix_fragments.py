"""pykern.wmma on the cpu target: every configuration any GPU offers, both layouts of A and B and
of the accumulator in memory, against numpy. Floats within the matrix cores' bound
``(K + 2) * 2**-24 * (|A| @ |B| + |C|)`` of the exact result (float16 output: plus
``2**-11`` of that magnitude per mma_sync), integers exactly, and bit for bit against the documented order
(``lowering/matrix_reference.py``: C first, k ascending, one float32 rounding per step)."""

from __future__ import annotations

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

import pykern as cuda  # noqa: E402
from pykern import wmma  # noqa: E402
from pykern.core import matrix_shapes  # noqa: E402
from pykern.core.errors import CompileError  # noqa: E402

pytestmark = pytest.mark.usefixtures("cpu_target")

NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64,
      "int8": np.int8, "int32": np.int32}
CONFIGS = sorted(matrix_shapes.ALL)
_kernels: dict = {}


def kernel(cfg, la, lb, lc):
    """A kernel computing D = A @ B + C over ``steps`` k-tiles for one configuration and layouts."""
    key = (cfg, la, lb, lc)
    if key in _kernels:
        return _kernels[key]
    m, n, k, it, ct = cfg
    ti, tc = getattr(cuda, it), getattr(cuda, ct)
    lay = {"row": wmma.row_major, "col": wmma.col_major}
    mlay = {"row": wmma.mem_row_major, "col": wmma.mem_col_major}
    la_, lb_, lc_ = lay[la], lay[lb], mlay[lc]
    a_ld = 4 * k if la == "row" else m  # A stored m x 4k (row) or 4k x m (col)
    b_ld = n if lb == "row" else 4 * k
    c_ld = n if lc == "row" else m

    def k_(A, B, C, D):
        a = wmma.fragment(wmma.matrix_a, m, n, k, ti, la_)
        b = wmma.fragment(wmma.matrix_b, m, n, k, ti, lb_)
        c = wmma.fragment(wmma.accumulator, m, n, k, tc)
        wmma.load_matrix_sync(c, C, 0, c_ld, lc_)
        for t in range(4):
            wmma.load_matrix_sync(a, A, t * k if la == "row" else t * k * m, a_ld)
            wmma.load_matrix_sync(b, B, t * k * n if lb == "row" else t * k, b_ld)
            wmma.mma_sync(c, a, b, c)
        wmma.store_matrix_sync(D, 0, c, c_ld, lc_)

    _kernels[key] = cuda.jit(k_)
    return _kernels[key]


def inputs(cfg, seed):
    m, n, k, it, ct = cfg
    r = np.random.default_rng(seed)
    if it == "int8":
        A = r.integers(-128, 128, (m, 4 * k)).astype(np.int8)
        B = r.integers(-128, 128, (4 * k, n)).astype(np.int8)
        C = r.integers(-2**20, 2**20, (m, n)).astype(np.int32)
    else:
        A = r.standard_normal((m, 4 * k)).astype(NP[it])
        B = r.standard_normal((4 * k, n)).astype(NP[it])
        C = r.standard_normal((m, n)).astype(NP[ct])
    return A, B, C


def run(cfg, la, lb, lc, seed=0):
    A, B, C = inputs(cfg, seed)
    mem = lambda x, lay: np.ascontiguousarray(x if lay == "row" else x.T)  # noqa: E731
    D = np.zeros_like(mem(C, lc))
    kernel(cfg, la, lb, lc)[1, 64](mem(A, la), mem(B, lb), mem(C, lc), D)
    return A, B, C, (D if lc == "row" else D.T)


def reference_order(A, B, C, acc_dtype, k):
    """The documented order: per element, C first, then k ascending, each step rounded to float32
    (float16/bfloat16 inputs); a float16 accumulator is rounded to float16 once per mma_sync."""
    a = A.astype(np.float32)
    b = B.astype(np.float32)
    d = C.astype(np.float32)
    for kk in range(A.shape[1]):
        d = d + a[:, kk:kk + 1] * b[kk:kk + 1, :]  # products exact in float32
        if (kk + 1) % k == 0:
            d = d.astype(acc_dtype).astype(np.float32)
    return d.astype(acc_dtype)


@pytest.mark.parametrize("cfg", CONFIGS, ids=[f"{m}x{n}x{k}-{a}-{c}" for m, n, k, a, c in CONFIGS])
@pytest.mark.parametrize("layouts", [("row", "col", "row"), ("col", "row", "col"), ("row", "row", "row"),
                                     ("col", "col", "row")])
def test_every_configuration_and_layout(cfg, layouts):
    A, B, C, D = run(cfg, *layouts)
    m, n, k, it, ct = cfg
    if it == "int8":
        want = (A.astype(np.int64) @ B.astype(np.int64) + C).astype(np.int64)
        np.testing.assert_array_equal(D, (want + 2**31) % 2**32 - 2**31)
        return
    exact = A.astype(np.float64) @ B.astype(np.float64) + C.astype(np.float64)
    magnitude = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)) + np.abs(C.astype(np.float64))
    bound = (4 * k + 2) * 2.0**-24 * magnitude
    if ct == "float16":  # each of the 4 mma_sync rounds its result to float16
        bound = bound + 4 * 2.0**-11 * magnitude
    if it == "float64":
        bound = bound * 2.0**-29
    assert np.all(np.abs(D.astype(np.float64) - exact) <= bound)
    if it in ("float16", "bfloat16"):  # bit for bit: the documented order
        want = reference_order(A, B, C, NP[ct], k)
        np.testing.assert_array_equal(D.view(np.uint32 if ct == "float32" else np.uint16),
                                      want.view(np.uint32 if ct == "float32" else np.uint16))


def test_order_is_c_first_then_k_ascending():
    # C = 2**24 absorbs the products 1, 1 one at a time (2**24 + 1 rounds to 2**24): C first
    cfg = (16, 16, 16, "float16", "float32")
    A = np.zeros((16, 64), np.float16)
    B = np.zeros((64, 16), np.float16)
    A[0, :2] = 1
    B[:2, 0] = 1
    C = np.zeros((16, 16), np.float32)
    C[0, 0] = 2.0**24
    D = np.zeros_like(C)
    kernel(cfg, "row", "row", "row")[1, 64](A, B, C, D)
    assert D[0, 0] == 2.0**24 and D[1, 1] == 0


def test_fill_and_wave_of_32_lanes():
    @cuda.jit
    def k(D):
        c = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
        wmma.fill_fragment(c, 2.5)
        wmma.store_matrix_sync(D, 3, c, 20, wmma.mem_row_major)

    D = np.zeros(3 + 15 * 20 + 16 + 4, np.float32)
    k[1, 32](D)
    flat = np.zeros_like(D)
    for i in range(16):
        flat[3 + i * 20: 3 + i * 20 + 16] = 2.5
    np.testing.assert_array_equal(D, flat)


@pytest.mark.parametrize("src, msg", [
    ("a = wmma.fragment(wmma.matrix_a, 8, 8, 8, cuda.float16, wmma.row_major)", "no matrix core multiplies 8x8x8"),
    ("a = wmma.fragment(wmma.matrix_a, 16, 16, 16, cuda.float16)", "needs a layout"),
    ("a = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32, wmma.row_major)", "has no layout"),
    ("a = wmma.fragment(wmma.matrix_a, 16, 16, 16, cuda.int16, wmma.row_major)", "of int16 is not supported"),
    ("a = wmma.fragment(wmma.row_major, 16, 16, 16, cuda.float16, wmma.row_major)", "use must be one of"),
    ("a = wmma.fragment(wmma.matrix_a, 16, 16, 16, cuda.float16, wmma.row_major)\n"
     "    wmma.load_matrix_sync(a, X, 0, 16)", "the array holds float32, the fragment float16"),
    ("a = wmma.fragment(wmma.matrix_a, 16, 16, 16, cuda.float16, wmma.row_major)\n"
     "    b = wmma.fragment(wmma.matrix_b, 16, 16, 16, cuda.float16, wmma.row_major)\n"
     "    c = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.int32)\n"
     "    wmma.mma_sync(c, a, b, c)", "no matrix core computes 16x16x16 float16->int32"),
    ("a = wmma.fragment(wmma.matrix_a, 16, 16, 16, cuda.float16, wmma.row_major)\n"
     "    wmma.mma_sync(a, a, a, a)", "d must be a accumulator fragment"),
    ("c = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)\n"
     "    wmma.load_matrix_sync(c, X, 0, 16)", "needs its memory layout"),
])
def test_compile_errors_name_the_line(src, msg, tmp_path):
    path = tmp_path / "frag_err.py"
    path.write_text("import pykern as cuda\nfrom pykern import wmma\n\n\ndef k(X):\n    " + src + "\n")
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    with pytest.raises(CompileError, match=msg) as ei:
        cuda.jit(ns["k"])[1, 64](np.zeros(256, np.float32))
    assert "frag_err.py:" in str(ei.value)


@cuda.jit(device=True)
def _make_filled():
    c = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
    wmma.fill_fragment(c, 3.0)
    return c


@cuda.jit(device=True)
def _store(D, c):
    wmma.store_matrix_sync(D, 0, c, 16, wmma.mem_row_major)


@cuda.jit
def fragments_through_device_functions(D):
    c = _make_filled()
    _store(D, c)


def test_fragments_made_and_passed_by_device_functions():
    # the maker is inlined (force_inline): its storage outlives the call
    D = np.zeros((16, 16), np.float32)
    fragments_through_device_functions[1, 64](D)
    np.testing.assert_array_equal(D, np.full((16, 16), 3.0, np.float32))
