"""The kernel sanitizer on the cpu target (``sanitize=``): a corpus of deliberately racy kernels
with the exact reports expected (both accesses: kind, source line, thread, block; the element;
the count of alike instances) and of deliberately clean ones, which must run clean and give the
results the unsanitized kernel gives."""

import inspect
import warnings

import numpy as np
import pytest

import pykern as cuda
from pykern import float32, int32, int64

pytestmark = pytest.mark.usefixtures("cpu_uncached")


def line_of(fn, marker):
    """The source line of ``fn`` that carries the comment ``# <marker>``."""
    fn = getattr(fn, "py_func", fn)
    lines, first = inspect.getsourcelines(fn)
    hits = [first + k for k, text in enumerate(lines) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def hazards(kernel, grid, block, *args, shared=0):
    """The (kind, element, first, second, count) of each hazard a launch reports, first and
    second as (kind, line, thread, block, barrier interval)."""
    try:
        kernel[grid, block, 0, shared](*args)
    except cuda.SanitizerError as e:
        def acc(a):
            return None if a is None else (a.kind, a.line, a.thread, a.block, a.interval)

        return [(h.kind, h.where, acc(h.first), acc(h.second), h.count) for h in e.reports]
    return []


# ---- tree reductions
@cuda.jit(sanitize="all")
def tree_sum(a, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    k = 32
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        cuda.syncthreads()
        k //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit(sanitize="all")
def tree_sum_no_barrier(a, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    k = 32
    while k > 0:
        if t < k:
            s[t] += s[t + k]  # RACE
        k //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def test_tree_reduction_with_barriers_is_clean_and_right():
    a = np.arange(256, dtype=np.float32)
    out = np.zeros(4, np.float32)
    assert hazards(tree_sum, 4, 64, a, out) == []
    np.testing.assert_array_equal(out, a.reshape(4, 64).sum(1))


def test_tree_reduction_without_the_loop_barrier_races():
    line = line_of(tree_sum_no_barrier, "RACE")
    a = np.arange(256, dtype=np.float32)
    got = hazards(tree_sum_no_barrier, 4, 64, a, np.zeros(4, np.float32))
    # thread 0 reads s[1] (k=1, its last step) before thread 1 (run after it) writes s[1] at k=32;
    # in every block, the race between the read of s[t+k] and the write of s[t] by thread t+k
    assert got == [("race", "shared array 's' element [1]", ("read", line, (0, 0, 0), (0, 0, 0), 1),
                    ("write", line, (1, 0, 0), (0, 0, 0), 1), 4 * 31)]


# ---- the last warp of a reduction, unrolled
@cuda.jit(sanitize="all")
def last_warp(a, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    if t < 64:
        s[t] += s[t + 64]
    cuda.syncthreads()
    if t < 32:
        s[t] += s[t + 32]  # W
        s[t] += s[t + 16]  # R16
        s[t] += s[t + 8]  # R8
    if t == 0:
        out[0] = s[0]


@cuda.jit(sanitize="all")
def last_warp_syncwarp(a, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    if t < 64:
        s[t] += s[t + 64]
    cuda.syncthreads()
    if t < 32:
        step = 32
        while step > 0:
            v = s[t] + s[t + step]
            cuda.syncwarp()
            s[t] = v
            cuda.syncwarp()
            step //= 2
    if t == 0:
        out[0] = s[0]


def test_last_warp_without_syncwarp_races():
    w, r16, r8 = (line_of(last_warp, m) for m in ("W", "R16", "R8"))
    got = hazards(last_warp, 1, 128, np.ones(128, np.float32), np.zeros(1, np.float32))
    # lanes run one after another: lane 0 reads s[16] and s[8] before lanes 16 and 8 write them
    assert got == [
        ("race", "shared array 's' element [8]", ("read", r8, (0, 0, 0), (0, 0, 0), 2),
         ("write", w, (8, 0, 0), (0, 0, 0), 2), 8),
        ("race", "shared array 's' element [16]", ("read", r16, (0, 0, 0), (0, 0, 0), 2),
         ("write", w, (16, 0, 0), (0, 0, 0), 2), 16),
    ]


def test_last_warp_with_syncwarp_is_clean_and_right():
    out = np.zeros(1, np.float32)
    a = np.arange(128, dtype=np.float32)
    assert hazards(last_warp_syncwarp, 1, 128, a, out) == []
    assert out[0] == a.sum()


# ---- histograms
@cuda.jit(sanitize="all")
def hist_plain(x, h):
    i = cuda.grid(1)
    if i < x.size:
        h[x[i]] += 1  # H


@cuda.jit(sanitize="all")
def hist_atomic(x, h):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)


@cuda.jit(sanitize="all")
def hist_shared(x, h):
    local = cuda.shared.array(8, int64)
    t = cuda.threadIdx.x
    if t < 8:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(local, x[i], 1)
    cuda.syncthreads()
    if t < 8:
        cuda.atomic.add(h, t, local[t])


@cuda.jit(sanitize="all")
def hist_shared_no_barrier(x, h):
    local = cuda.shared.array(8, int64)
    t = cuda.threadIdx.x
    if t < 8:
        local[t] = 0  # ZERO
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(local, x[i], 1)  # ADD
    cuda.syncthreads()
    if t < 8:
        cuda.atomic.add(h, t, local[t])


def test_histograms():
    x = (np.arange(1000) * 7 % 8).astype(np.int64)
    h = np.zeros(8, np.int64)
    line = line_of(hist_plain, "H")
    got = hazards(hist_plain, 4, 256, x, h)
    # thread 0 writes h[0] (x[0] = 0); thread 8 reads it (x[8] = 0) and then writes it
    assert got == [
        ("race", "array 'h' element [0]", ("write", line, (0, 0, 0), (0, 0, 0), 0),
         ("read", line, (8, 0, 0), (0, 0, 0), 0), 992),
        ("race", "array 'h' element [0]", ("write", line, (0, 0, 0), (0, 0, 0), 0),
         ("write", line, (8, 0, 0), (0, 0, 0), 0), 992),
    ]
    for k in (hist_atomic, hist_shared):
        h[:] = 0
        assert hazards(k, 4, 256, x, h) == []
        np.testing.assert_array_equal(h, np.bincount(x, minlength=8))


def test_shared_histogram_without_the_zeroing_barrier_races():
    x = (np.arange(256) * 7 % 8).astype(np.int64)
    zero, add = line_of(hist_shared_no_barrier, "ZERO"), line_of(hist_shared_no_barrier, "ADD")
    got = hazards(hist_shared_no_barrier, 1, 256, x, np.zeros(8, np.int64))
    # x[t] = 7t % 8. Threads 1, 2, 3 add to local[7], [6], [5] before threads 7, 6, 5 zero them
    # (an atomic on memory nothing wrote; then the zeroing races with it: thread 5's comes first);
    # threads 1, 2, 3 zero local[1..3] before threads 7, 6, 5 add to them, and local[5..7] are
    # zeroed before later threads add: six elements where a plain write and another thread's
    # atomic meet
    assert got == [
        ("uninitialized", "shared array 'local' element [7]", None, ("atomic", add, (1, 0, 0), (0, 0, 0), 0), 3),
        ("race", "shared array 'local' element [5]", ("atomic", add, (3, 0, 0), (0, 0, 0), 0),
         ("write", zero, (5, 0, 0), (0, 0, 0), 0), 3),
        ("race", "shared array 'local' element [3]", ("write", zero, (3, 0, 0), (0, 0, 0), 0),
         ("atomic", add, (5, 0, 0), (0, 0, 0), 0), 6),
    ]


# ---- reads before the write barrier, neighbours' blocks
@cuda.jit(sanitize="all")
def read_before_barrier(out):
    s = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    v = s[(t + 1) % 64]  # READ
    s[t] = t  # WRITE
    cuda.syncthreads()
    out[t] = v


def test_shared_read_before_the_write_barrier():
    r, w = line_of(read_before_barrier, "READ"), line_of(read_before_barrier, "WRITE")
    got = hazards(read_before_barrier, 1, 64, np.zeros(64, np.int32))
    assert got == [
        ("uninitialized", "shared array 's' element [1]", None, ("read", r, (0, 0, 0), (0, 0, 0), 0), 63),
        ("race", "shared array 's' element [1]", ("read", r, (0, 0, 0), (0, 0, 0), 0),
         ("write", w, (1, 0, 0), (0, 0, 0), 0), 63),
        ("race", "shared array 's' element [0]", ("write", w, (0, 0, 0), (0, 0, 0), 0),
         ("read", r, (63, 0, 0), (0, 0, 0), 0), 1),
    ]


@cuda.jit(sanitize="all")
def stencil_in_place(a):
    i = cuda.grid(1)
    if 0 < i < a.size - 1:
        v = (a[i - 1] + a[i + 1]) * 0.5  # READ
        a[i] = v  # WRITE


@cuda.jit(sanitize="all")
def stencil_block_output(a, out, out2):
    # each block smooths its part into out, then reads its neighbour block's out: same launch
    i = cuda.grid(1)
    out[i] = a[i] * 2  # OUT
    cuda.syncthreads()
    t = cuda.threadIdx.x
    if t == cuda.blockDim.x - 1 and i + 1 < out.size:
        out2[i] = out[i] + out[i + 1]  # NEXT


@cuda.jit(sanitize="all")
def stencil_two_arrays(a, out):
    i = cuda.grid(1)
    if 0 < i < a.size - 1:
        out[i] = (a[i - 1] + a[i + 1]) * 0.5


def test_stencils():
    read, write = line_of(stencil_in_place, "READ"), line_of(stencil_in_place, "WRITE")
    got = hazards(stencil_in_place, 2, 32, np.arange(64.0))
    # thread i+1 reads a[i] after thread i wrote it, and writes a[i+1] after thread i read it,
    # for i = 1..61 -- across the two blocks too (thread 31 of block 0, thread 0 of block 1):
    # only the end of the launch orders blocks
    assert got == [
        ("race", "array 'a' element [1]", ("write", write, (1, 0, 0), (0, 0, 0), 0),
         ("read", read, (2, 0, 0), (0, 0, 0), 0), 61),
        ("race", "array 'a' element [2]", ("read", read, (1, 0, 0), (0, 0, 0), 0),
         ("write", write, (2, 0, 0), (0, 0, 0), 0), 61),
    ]
    a = np.arange(64.0)
    out = np.zeros(64)
    assert hazards(stencil_two_arrays, 2, 32, a, out) == []
    np.testing.assert_array_equal(out[1:-1], (a[:-2] + a[2:]) * 0.5)
    out_l, nxt = line_of(stencil_block_output, "OUT"), line_of(stencil_block_output, "NEXT")
    got = hazards(stencil_block_output, 2, 32, np.arange(64.0), np.zeros(64), np.zeros(64))
    # block 0's last thread reads out[32], which block 1 writes later in the same launch
    assert got == [("race", "array 'out' element [32]", ("read", nxt, (31, 0, 0), (0, 0, 0), 1),
                    ("write", out_l, (0, 0, 0), (1, 0, 0), 0), 1)]


# ---- halo exchange between blocks
@cuda.jit(sanitize="all")
def halo_same_launch(u):
    # each block updates its cells, then reads its neighbour's edge cell: racy without a grid sync
    i = cuda.grid(1)
    u[i] = u[i] + 1.0  # UPDATE
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and i > 0:
        u[i] = u[i] + u[i - 1]  # HALO


@cuda.jit(sanitize="all")
def halo_grid_sync(u, v):
    i = cuda.grid(1)
    g = cuda.cg.this_grid()
    u[i] = u[i] + 1.0
    g.sync()
    if i > 0:
        v[i] = u[i] + u[i - 1]
    else:
        v[i] = u[i]


def test_halo_exchange():
    upd, halo = line_of(halo_same_launch, "UPDATE"), line_of(halo_same_launch, "HALO")
    got = hazards(halo_same_launch, 2, 16, np.zeros(32))
    # block 1 thread 0 reads u[15]: block 0's thread 15 wrote it (the blocks run in order)
    assert got == [("race", "array 'u' element [15]", ("write", upd, (15, 0, 0), (0, 0, 0), 0),
                    ("read", halo, (0, 0, 0), (1, 0, 0), 1), 1)]
    u, v = np.arange(32.0), np.zeros(32)
    assert hazards(halo_grid_sync, 2, 16, u, v) == []
    w = np.arange(32.0) + 1
    np.testing.assert_array_equal(v, np.concatenate([w[:1], w[1:] + w[:-1]]))


# ---- double-buffered tiles
@cuda.jit(sanitize="all")
def tiles_double_buffered(a, out):
    buf = cuda.shared.array((2, 32), float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    buf[0, t] = a[0, t]
    cuda.syncthreads()
    for k in range(a.shape[0]):
        cur = k % 2
        if k + 1 < a.shape[0]:
            buf[1 - cur, t] = a[k + 1, t]  # the next tile, while others read this one
        acc += buf[cur, (t + 1) % 32]
        cuda.syncthreads()
    out[t] = acc


@cuda.jit(sanitize="all")
def tiles_single_buffer(a, out):
    buf = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    for k in range(a.shape[0]):
        buf[t] = a[k, t]  # LOAD
        cuda.syncthreads()
        acc += buf[(t + 1) % 32]  # USE
    out[t] = acc


def test_double_buffered_tiles():
    a = np.arange(4 * 32, dtype=np.float32).reshape(4, 32)
    out = np.zeros(32, np.float32)
    assert hazards(tiles_double_buffered, 1, 32, a, out) == []
    np.testing.assert_array_equal(out, np.roll(a, -1, axis=1).sum(0))
    load, use = line_of(tiles_single_buffer, "LOAD"), line_of(tiles_single_buffer, "USE")
    got = hazards(tiles_single_buffer, 1, 32, a, np.zeros(32, np.float32))
    # without a second barrier, thread t loads the next tile into buf[t] after thread t-1 read it
    # for this one, in the interval after an iteration's barrier (32 threads x 3 iterations; the
    # block runs each stretch between barriers for all its threads in turn, thread 31 first
    # reading buf[0] that thread 0 then loads)
    assert got == [
        ("race", "shared array 'buf' element [0]", ("read", use, (31, 0, 0), (0, 0, 0), 1),
         ("write", load, (0, 0, 0), (0, 0, 0), 1), 96),
    ]


# ---- uninitialised local arrays and device arrays
@cuda.jit(sanitize="init")
def local_partial(out):
    t = cuda.local.array(4, int32)
    t[0] = 1
    out[0] = t[0] + t[1]  # SUM


def test_local_array_read_before_written():
    line = line_of(local_partial, "SUM")
    got = hazards(local_partial, 1, 2, np.zeros(1, np.int32))
    assert got == [("uninitialized", "local array 't' element [1]", None, ("read", line, (0, 0, 0), (0, 0, 0), 0), 2)]


def test_device_arrays_remember_what_was_written(monkeypatch):
    monkeypatch.setenv("PYKERN_SANITIZE", "init")

    @cuda.jit
    def fill(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = i

    @cuda.jit
    def shift(a, b):
        i = cuda.grid(1)
        if i + 1 < a.size:
            b[i] = a[i + 1]  # READ

    line = line_of(shift, "READ")
    d, e = cuda.device_array(40), cuda.device_array(40)
    fill[1, 32](d)  # elements 0..31
    got = hazards(shift, 1, 40, d, e)
    assert got == [("uninitialized", "array 'a' element [32]", None, ("read", line, (31, 0, 0), (0, 0, 0), 0), 8)]
    d[32:] = np.ones(8)  # a host write of the rest
    assert hazards(shift, 1, 40, d, e) == []
    np.testing.assert_array_equal(e.copy_to_host()[:39], np.r_[np.arange(1.0, 32.0), np.ones(8)])
    # to_device and device_array_like of a copy: written
    assert hazards(shift, 1, 40, cuda.to_device(np.ones(40)), e) == []


# ---- options, modes, results
def test_clean_results_equal_unsanitized_ones():
    plain = cuda.jit(tree_sum.py_func)  # the same kernel, unsanitized
    checked = cuda.jit(tree_sum.py_func, sanitize="all")
    a = np.random.default_rng(1).random(64 * 8).astype(np.float32)
    o1, o2 = np.zeros(8, np.float32), np.zeros(8, np.float32)
    plain[8, 64](a, o1)
    checked[8, 64](a, o2)
    np.testing.assert_array_equal(o1, o2)
    (ov_plain,), (ov_checked,) = plain.overloads.values(), checked.overloads.values()
    assert ov_plain.artifact.sanitize == "" and ov_checked.artifact.sanitize == "bounds,init,race"
    assert ov_plain.artifact.name != ov_checked.artifact.name  # never one cache entry


def test_warn_mode_warns_and_finishes():
    @cuda.jit(sanitize="race,warn")
    def racy(a):
        a[0] = cuda.threadIdx.x

    a = np.zeros(1)
    with pytest.warns(cuda.SanitizerWarning, match=r"data race on array 'a' element \[0\]"):
        racy[1, 8](a)
    assert a[0] == 7  # the last thread's write, as unsanitized


def test_bounds_check_is_debugs():
    @cuda.jit(sanitize="bounds")
    def oob(a):
        a[cuda.threadIdx.x + 1] = 1.0

    with pytest.raises(cuda.KernelIndexError, match="out of bounds"):
        oob[1, 4](np.zeros(4))


def test_mode_values():
    from pykern.core.sanitize import combine, parse_modes

    assert parse_modes("all") == "bounds,init,race"
    assert parse_modes(["race", "init"]) == "init,race"
    assert parse_modes(None) == parse_modes(False) == parse_modes("") == ""
    assert combine("race", "init") == "init,race"
    with pytest.raises(ValueError, match="unknown sanitizer check 'races'"):
        parse_modes("races")
    with pytest.raises(ValueError, match="unknown sanitizer check"):
        cuda.jit(sanitize="data")(lambda a: None)


def test_process_setting_sanitizes_every_kernel(monkeypatch):
    monkeypatch.setenv("PYKERN_SANITIZE", "race")

    @cuda.jit
    def racy(a):
        a[0] = cuda.threadIdx.x

    with pytest.raises(cuda.SanitizerError):
        racy[1, 2](np.zeros(1))
    monkeypatch.setenv("PYKERN_SANITIZE", "bogus")
    with pytest.raises(ValueError, match="PYKERN_SANITIZE='bogus'"):
        cuda.jit(racy.py_func)[1, 2](np.zeros(1))


def test_gpu_builds_warn_that_the_checks_are_cpu_only():
    from pykern.dispatch.compiler import _for_target, compile_options

    @cuda.jit(sanitize="all")
    def k(a):
        a[0] = 1

    opts = compile_options(k.options)
    with pytest.warns(cuda.SanitizerWarning, match="init and race checks run on the cpu target only"):
        got = _for_target(opts, "amdgpu", k)
    assert got.sanitize == "" and got.debug  # the bounds checks stay
    assert _for_target(opts, "cpu", k) is opts


def test_reports_are_counted_once_and_capped():
    from pykern.core.sanitize import REPORT_LIMIT

    @cuda.jit(sanitize="race")
    def many(a):
        t = cuda.threadIdx.x
        a[0] = t
        a[1] = t
        a[2] = t

    with pytest.raises(cuda.SanitizerError) as e:
        many[2, 16](np.zeros(3))
    assert [h.count for h in e.value.reports] == [31, 31, 31]
    assert len(e.value.reports) <= REPORT_LIMIT
    assert "3 distinct hazards (93 instances)" in str(e.value)
