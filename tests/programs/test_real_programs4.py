"""numba.cuda programs of the fourth probe round, run as their authors wrote them (``import pykern as
cuda``) on the cpu target and checked against numpy or plain Python: numba-cuda's documentation
examples (random, Monte Carlo, cooperative groups, atomics, dynamic shared memory, gufuncs with
streams, memory management) and kernels of the kinds found on GitHub and StackOverflow (histograms,
scans, SpMV, Floyd-Warshall, LU, convolution, k-means, sorting networks, wavefronts...).

Most ran unchanged; the ones that did not name what they exposed: ``a.fill(v)`` in kernels, numba's
device attribute names (``dev.MAX_REGISTERS_PER_BLOCK``), ``cuda.CudaSupportError``, signature
strings and types spelled with numba's constructors (``Tuple((int32, float32))``,
``types.UniTuple(types.float64, 2)``)."""

import math

import numpy as np
import pytest

import pykern as cuda
from pykern import float32, float64, int32, void
from pykern.numba_compat import numba_types as types
from pykern.lang.random import create_xoroshiro128p_states, xoroshiro128p_normal_float32, xoroshiro128p_uniform_float32

pytestmark = pytest.mark.usefixtures("cpu_uncached")

# ---- numba's xoroshiro128+ in plain Python (numba.cuda.random's seeding and draws), for references
_M64 = (1 << 64) - 1


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & _M64


def _next(s):
    s0, s1 = s
    r = (s0 + s1) & _M64
    s1 ^= s0
    s[0] = _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & _M64)
    s[1] = _rotl(s1, 36)
    return r


def _jump(s):
    a = b = 0
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for bit in range(64):
            if word & (1 << bit):
                a ^= s[0]
                b ^= s[1]
            _next(s)
    s[0], s[1] = a, b


def _states(n, seed):
    z = (seed + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    s = [z ^ (z >> 31)] * 2
    out = []
    for _ in range(n):
        out.append(list(s))
        _jump(s)
    return out


def _uniform32(s):
    return np.float32((_next(s) >> 11) * (1.0 / (1 << 53)))


def test_random_3d_grid_doc_example():
    # numba-cuda docs, "Random Number Generation": one generator per thread of a 3-d grid
    @cuda.jit
    def random_3d(arr, rng_states):
        startx, starty, startz = cuda.grid(3)
        stridex, stridey, stridez = cuda.gridsize(3)
        tid = startz * stridey * stridex + starty * stridex + startx
        for i in range(startz, arr.shape[0], stridez):
            for j in range(starty, arr.shape[1], stridey):
                for k in range(startx, arr.shape[2], stridex):
                    arr[i, j, k] = xoroshiro128p_uniform_float32(rng_states, tid)

    BLOCKS, THREADS = 2, 2
    S = BLOCKS * THREADS
    rng_states = create_xoroshiro128p_states(S ** 3, seed=1)
    arr = cuda.device_array((6, 5, 7), dtype=np.float32)
    random_3d[(BLOCKS, BLOCKS, BLOCKS), (THREADS, THREADS, THREADS)](arr, rng_states)
    st = _states(S ** 3, 1)
    ref = np.zeros((6, 5, 7), np.float32)
    for z in range(S):
        for y in range(S):
            for x in range(S):
                for i in range(z, 6, S):
                    for j in range(y, 5, S):
                        for k in range(x, 7, S):
                            ref[i, j, k] = _uniform32(st[z * S * S + y * S + x])
    assert np.array_equal(arr.copy_to_host(), ref)


def test_monte_carlo_integration_doc_example():
    # numba-cuda docs, "Monte Carlo Integration": forall + a device function + cuda.reduce
    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    @cuda.jit(device=True)
    def func(x):
        return x ** 2

    @cuda.jit
    def mc_integrator_kernel(out, rng_states, lower_lim, upper_lim):
        size = len(out)
        gid = cuda.grid(1)
        if gid < size:
            samp = xoroshiro128p_uniform_float32(rng_states, gid)
            samp = samp * (upper_lim - lower_lim) + lower_lim
            y = func(samp)
            out[gid] = y

    def mc_integrate(lower_lim, upper_lim, nsamps):
        out = cuda.to_device(np.zeros(nsamps, dtype="float32"))
        rng_states = create_xoroshiro128p_states(nsamps, seed=42)
        mc_integrator_kernel.forall(nsamps)(out, rng_states, lower_lim, upper_lim)
        factor = (upper_lim - lower_lim) / (nsamps - 1)
        return sum_reduce(out) * factor, out.copy_to_host()

    r, out = mc_integrate(1, 2, 20000)
    assert abs(r - 7 / 3) < 0.02
    st = _states(3, 42)
    for g in range(3):  # float32 sample * int64 limits: numba computes float64, as numpy does
        s = np.float64(_uniform32(st[g])) * 1 + 1
        assert out[g] == np.float32(s * s)


def test_cooperative_groups_doc_example_with_overload_lookup():
    # numba-cuda docs, "Cooperative Groups": rows computed one after another by the whole grid, the
    # overload found by its argument types for max_cooperative_grid_blocks
    @cuda.jit(void(int32[:, ::1]))
    def sequential_rows(M):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()
        rows = M.shape[0]
        cols = M.shape[1]
        for row in range(1, rows):
            opposite = cols - col - 1
            M[row, col] = M[row - 1, opposite] + 1
            g.sync()

    A = np.zeros((128, 256), dtype=np.int32)
    blockdim = 32
    griddim = A.shape[1] // blockdim
    overload = sequential_rows.overloads[(int32[:, ::1],)]
    assert overload.max_cooperative_grid_blocks(blockdim) >= griddim
    sequential_rows[griddim, blockdim](A)
    ref = np.zeros_like(A)
    for row in range(1, A.shape[0]):
        ref[row] = ref[row - 1][::-1] + 1
    assert np.array_equal(A, ref)


def test_atomics_doc_examples_max_and_3d_index():
    # numba-cuda docs, "Supported Atomic Operations": atomic max, and min/max at a tuple index
    @cuda.jit
    def max_example(result, values):
        tid = cuda.threadIdx.x
        bid = cuda.blockIdx.x
        bdim = cuda.blockDim.x
        i = (bid * bdim) + tid
        cuda.atomic.max(result, 0, values[i])

    arr = np.random.RandomState(0).rand(16384)
    result = np.zeros(1, dtype=np.float64)
    max_example[256, 64](result, arr)
    assert result[0] == max(arr)

    @cuda.jit
    def minmax_3d(result, values):
        i, j, k = cuda.grid(3)
        I, J, K = values.shape
        if i < I and j < J and k < K:
            cuda.atomic.max(result, (0, 1, 2), values[i, j, k])
            cuda.atomic.min(result, (1, 0, 0), values[i, j, k])

    v = np.random.RandomState(1).rand(5, 6, 7)
    res = np.zeros((2, 2, 3))
    res[1, 0, 0] = 10
    minmax_3d[(1, 1, 1), (8, 8, 8)](res, v)
    assert res[0, 1, 2] == v.max() and res[1, 0, 0] == v.min()


def test_dynamic_shared_memory_doc_examples_alias():
    # numba-cuda docs, "Dynamic shared memory": every shared.array(0, ...) is the same memory; a slice
    # gives another offset
    @cuda.jit
    def f(out):
        f32_arr = cuda.shared.array(0, dtype=np.float32)
        i32_arr = cuda.shared.array(0, dtype=np.int32)
        f32_arr[0] = 3.14
        out[0] = f32_arr[0]
        out[1] = i32_arr[0]

    @cuda.jit
    def f_with_view(out):
        f32_arr = cuda.shared.array(0, dtype=np.float32)
        i32_arr = cuda.shared.array(0, dtype=np.int32)[1:]
        f32_arr[0] = 3.14
        i32_arr[0] = 1
        out[0] = f32_arr[0]
        out[1] = i32_arr[0]
        out[2] = f32_arr[1]

    out = np.zeros(3)
    f[1, 1, 0, 4](out)
    assert out[0] == np.float32(3.14) and out[1] == np.float32(3.14).view(np.int32)
    f_with_view[1, 1, 0, 8](out)
    assert out.tolist() == [np.float32(3.14), 1, np.int32(1).view(np.float32)]


def test_gufunc_doc_example_with_device_arrays_on_a_stream():
    # numba-cuda docs, "Generalized CUDA ufuncs": matmulcore on device arrays, out= and stream=
    @cuda.guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)")
    def matmulcore(A, B, C):
        m, n = A.shape
        n, p = B.shape
        for i in range(m):
            for j in range(p):
                C[i, j] = 0
                for k in range(n):
                    C[i, j] += A[i, k] * B[k, j]

    matmulcore.max_blocksize = 32
    rng = np.random.RandomState(2)
    A = rng.rand(100, 2, 4).astype(np.float32)
    B = rng.rand(100, 4, 5).astype(np.float32)
    stream = cuda.stream()
    dA = cuda.to_device(A, stream)
    dB = cuda.to_device(B, stream)
    dC = cuda.device_array(shape=(100, 2, 5), dtype=A.dtype, stream=stream)
    matmulcore(dA, dB, out=dC, stream=stream)
    C = dC.copy_to_host(stream=stream)
    stream.synchronize()
    assert np.allclose(C, A @ B, rtol=1e-5)
    assert np.allclose(matmulcore(A, B), A @ B, rtol=1e-5)

    @cuda.guvectorize(["void(float64[:], intp, float64[:])"], "(n),()->(n)")
    def move_mean(a, window_arr, out):  # numba's docs' moving average, a scalar core argument
        window_width = window_arr
        asum = 0.0
        count = 0
        for i in range(window_width):
            asum += a[i]
            count += 1
            out[i] = asum / count
        for i in range(window_width, len(a)):
            asum += a[i] - a[i - window_width]
            out[i] = asum / count

    arr = np.arange(20, dtype=np.float64).reshape(2, 10)
    ref = np.array([[arr[r, max(0, i - 2):i + 1].mean() for i in range(10)] for r in range(2)])
    assert np.allclose(move_mean(arr, 3), ref)


def test_shared_memory_histogram_of_an_image():
    # a privatised histogram: per-block bins in shared memory, merged with global atomics
    NBINS = 256

    @cuda.jit
    def hist_kernel(img, hist):
        sh = cuda.shared.array(NBINS, dtype=np.uint32)
        tx = cuda.threadIdx.x
        for b in range(tx, NBINS, cuda.blockDim.x):
            sh[b] = 0
        cuda.syncthreads()
        for i in range(cuda.grid(1), img.size, cuda.gridsize(1)):
            cuda.atomic.add(sh, img[i], 1)
        cuda.syncthreads()
        for b in range(tx, NBINS, cuda.blockDim.x):
            if sh[b] > 0:
                cuda.atomic.add(hist, b, sh[b])

    img = np.random.RandomState(3).randint(0, 256, size=(300, 211)).astype(np.uint8)
    d_hist = cuda.to_device(np.zeros(NBINS, np.uint32))
    hist_kernel[16, 128](img.ravel(), d_hist)
    assert np.array_equal(d_hist.copy_to_host(), np.bincount(img.ravel(), minlength=256))


def test_blelloch_scan_across_blocks():
    # work-efficient exclusive scan per block (up-sweep, down-sweep), block sums added by a second kernel
    TPB = 128

    @cuda.jit
    def scan_block(a, out, sums):
        temp = cuda.shared.array(shape=2 * TPB, dtype=float32)
        tid = cuda.threadIdx.x
        bid = cuda.blockIdx.x
        n = 2 * TPB
        ai = bid * n + tid
        bi = ai + TPB
        temp[tid] = a[ai] if ai < a.size else 0
        temp[tid + TPB] = a[bi] if bi < a.size else 0
        offset = 1
        d = n >> 1
        while d > 0:
            cuda.syncthreads()
            if tid < d:
                temp[offset * (2 * tid + 2) - 1] += temp[offset * (2 * tid + 1) - 1]
            offset *= 2
            d >>= 1
        if tid == 0:
            sums[bid] = temp[n - 1]
            temp[n - 1] = 0
        d = 1
        while d < n:
            offset >>= 1
            cuda.syncthreads()
            if tid < d:
                x = offset * (2 * tid + 1) - 1
                y = offset * (2 * tid + 2) - 1
                t = temp[x]
                temp[x] = temp[y]
                temp[y] += t
            d *= 2
        cuda.syncthreads()
        if ai < a.size:
            out[ai] = temp[tid]
        if bi < a.size:
            out[bi] = temp[tid + TPB]

    @cuda.jit
    def add_offsets(out, offs):
        i = cuda.grid(1)
        if i < out.size:
            out[i] += offs[i // (2 * TPB)]

    n = 3000
    a = np.random.RandomState(4).randint(0, 10, n).astype(np.float32)
    nb = (n + 2 * TPB - 1) // (2 * TPB)
    d_a = cuda.to_device(a)
    d_out = cuda.device_array_like(d_a)
    d_sums = cuda.device_array(nb, np.float32)
    scan_block[nb, TPB](d_a, d_out, d_sums)
    offs = np.concatenate([[0], np.cumsum(d_sums.copy_to_host())[:-1]]).astype(np.float32)
    add_offsets[(n + 255) // 256, 256](d_out, cuda.to_device(offs))
    assert np.array_equal(d_out.copy_to_host(), np.concatenate([[0], np.cumsum(a)[:-1]]).astype(np.float32))


def test_csr_spmv_thread_per_row_and_warp_per_row():
    rng = np.random.RandomState(5)
    dense = np.where(rng.rand(200, 150) < 0.05, rng.rand(200, 150), 0.0)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))])
    indices = np.nonzero(dense)[1]
    data = dense[dense != 0]
    x = rng.rand(150)

    @cuda.jit
    def spmv_csr_scalar(indptr, indices, data, x, y):
        row = cuda.grid(1)
        if row < y.shape[0]:
            dot = 0.0
            for jj in range(indptr[row], indptr[row + 1]):
                dot += data[jj] * x[indices[jj]]
            y[row] = dot

    WS = 32  # written for 32-lane warps: lanes of a 64-lane wave form two such groups

    @cuda.jit
    def spmv_csr_vector(indptr, indices, data, x, y):
        tid = cuda.grid(1)
        row = tid // WS
        lane = tid & (WS - 1)
        if row < y.shape[0]:
            s = 0.0
            for jj in range(indptr[row] + lane, indptr[row + 1], WS):
                s += data[jj] * x[indices[jj]]
            off = WS // 2
            while off > 0:
                s += cuda.shfl_down_sync(0xFFFFFFFF, s, off)
                off //= 2
            if lane == 0:
                y[row] = s

    y1, y2 = np.zeros(200), np.zeros(200)
    spmv_csr_scalar[(200 + 63) // 64, 64](indptr, indices, data, x, y1)
    spmv_csr_vector[(200 * WS + 127) // 128, 128](indptr, indices, data, x, y2)
    assert np.allclose(y1, dense @ x) and np.allclose(y2, dense @ x)


def test_floyd_warshall_one_launch_per_pivot():
    n = 60
    rng = np.random.RandomState(6)
    D = rng.randint(1, 20, (n, n)).astype(np.float32)
    D[rng.rand(n, n) < 0.7] = np.inf
    np.fill_diagonal(D, 0)

    @cuda.jit
    def fw_kernel(d, k):
        i, j = cuda.grid(2)
        n = d.shape[0]
        if i < n and j < n:
            alt = d[i, k] + d[k, j]
            if alt < d[i, j]:
                d[i, j] = alt

    dd = cuda.to_device(D)
    bpg = (math.ceil(n / 16), math.ceil(n / 16))
    for k in range(n):
        fw_kernel[bpg, (16, 16)](dd, k)
    ref = D.copy()
    for k in range(n):
        ref = np.minimum(ref, ref[:, k:k + 1] + ref[k:k + 1, :])
    assert np.array_equal(dd.copy_to_host(), ref)


def test_lu_decomposition_without_pivoting():
    n = 40
    A = np.random.RandomState(7).rand(n, n) + n * np.eye(n)

    @cuda.jit
    def scale_col(a, k):
        i = cuda.grid(1) + k + 1
        if i < a.shape[0]:
            a[i, k] /= a[k, k]

    @cuda.jit
    def update(a, k):
        i, j = cuda.grid(2)
        i += k + 1
        j += k + 1
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] -= a[i, k] * a[k, j]

    d = cuda.to_device(A)
    for k in range(n - 1):
        m = n - k - 1
        scale_col[(m + 31) // 32, 32](d, k)
        update[((m + 7) // 8, (m + 7) // 8), (8, 8)](d, k)
    LU = d.copy_to_host()
    ref = A.copy()
    for k in range(n - 1):
        ref[k + 1:, k] /= ref[k, k]
        ref[k + 1:, k + 1:] -= np.outer(ref[k + 1:, k], ref[k, k + 1:])
    assert np.allclose(LU, ref, rtol=0, atol=1e-12)
    assert np.allclose((np.tril(LU, -1) + np.eye(n)) @ np.triu(LU), A)


def test_convolution_with_shared_halo_tile_and_const_filter():
    R = 2
    K = 2 * R + 1
    filt = (np.arange(K * K, dtype=np.float32).reshape(K, K) - 12) / 25
    BS = 16

    @cuda.jit
    def conv(img, out):
        f = cuda.const.array_like(filt)
        tile = cuda.shared.array((BS + 2 * R, BS + 2 * R), dtype=float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        x, y = cuda.grid(2)
        H, W = img.shape
        for dy in range(ty, BS + 2 * R, BS):
            for dx in range(tx, BS + 2 * R, BS):
                gy = cuda.blockIdx.y * BS + dy - R
                gx = cuda.blockIdx.x * BS + dx - R
                if 0 <= gy < H and 0 <= gx < W:
                    tile[dy, dx] = img[gy, gx]
                else:
                    tile[dy, dx] = 0
        cuda.syncthreads()
        if y < H and x < W:
            acc = float32(0)
            for i in range(K):
                for j in range(K):
                    acc += f[i, j] * tile[ty + i, tx + j]
            out[y, x] = acc

    img = np.random.RandomState(8).rand(70, 45).astype(np.float32)
    out = np.zeros_like(img)
    conv[((45 + BS - 1) // BS, (70 + BS - 1) // BS), (BS, BS)](img, out)
    p = np.pad(img.astype(np.float64), R)
    ref = sum(filt[i, j] * p[i:i + 70, j:j + 45] for i in range(K) for j in range(K))
    assert np.allclose(out, ref, atol=1e-5)


def test_kmeans_assignment_and_atomic_update():
    rng = np.random.RandomState(9)
    pts = np.concatenate([rng.randn(300, 2) + c for c in ([0, 0], [5, 5], [0, 6])]).astype(np.float32)
    K = 3

    @cuda.jit
    def assign(points, centroids, labels):
        i = cuda.grid(1)
        if i >= points.shape[0]:
            return
        best = 0
        bestd = np.inf
        for c in range(centroids.shape[0]):
            d = 0.0
            for k in range(points.shape[1]):
                t = points[i, k] - centroids[c, k]
                d += t * t
            if d < bestd:
                bestd = d
                best = c
        labels[i] = best

    @cuda.jit
    def accumulate(points, labels, sums, counts):
        i = cuda.grid(1)
        if i < points.shape[0]:
            c = labels[i]
            for k in range(points.shape[1]):
                cuda.atomic.add(sums, (c, k), points[i, k])
            cuda.atomic.add(counts, c, 1)

    d_pts = cuda.to_device(pts)
    d_lab = cuda.device_array(pts.shape[0], np.int32)
    c = pts[[0, 300, 600]].copy()
    for _ in range(4):
        assign.forall(pts.shape[0])(d_pts, cuda.to_device(c), d_lab)
        sums = cuda.to_device(np.zeros((K, 2), np.float32))
        counts = cuda.to_device(np.zeros(K, np.int32))
        accumulate[(pts.shape[0] + 127) // 128, 128](d_pts, d_lab, sums, counts)
        lab = d_lab.copy_to_host()
        ref = np.argmin(((pts[:, None, :] - c[None]).astype(np.float64) ** 2).sum(-1), 1)
        assert np.array_equal(lab, ref)
        assert np.array_equal(counts.copy_to_host(), np.bincount(ref, minlength=K))
        c = (sums.copy_to_host() / counts.copy_to_host()[:, None]).astype(np.float32)
        assert np.allclose(c, [pts[ref == k].mean(0) for k in range(K)], atol=1e-4)


def test_batched_3x3_solves_in_local_arrays_of_tuple_shape():
    @cuda.jit(device=True)
    def solve3(M, b, x):
        A = cuda.local.array((3, 4), dtype=np.float64)
        for i in range(3):
            for j in range(3):
                A[i, j] = M[i, j]
            A[i, 3] = b[i]
        for k in range(3):
            for i in range(k + 1, 3):
                f = A[i, k] / A[k, k]
                for j in range(k, 4):
                    A[i, j] -= f * A[k, j]
        for i in range(2, -1, -1):
            s = A[i, 3]
            for j in range(i + 1, 3):
                s -= A[i, j] * x[j]
            x[i] = s / A[i, i]

    @cuda.jit
    def batched(Ms, bs, xs):
        i = cuda.grid(1)
        if i < Ms.shape[0]:
            solve3(Ms[i], bs[i], xs[i])

    rng = np.random.RandomState(10)
    Ms = rng.rand(100, 3, 3) + 3 * np.eye(3)
    bs = rng.rand(100, 3)
    xs = np.zeros((100, 3))
    batched[4, 32](Ms, bs, xs)
    assert np.allclose(xs, np.linalg.solve(Ms, bs[..., None])[..., 0])


def test_chunked_pipeline_on_streams_with_pinned_and_mapped_memory():
    @cuda.jit
    def scale_shift(a, v):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2 + v

    N, nstreams = 1 << 14, 4
    chunk = N // nstreams
    h = cuda.pinned_array(N, dtype=np.float32)
    h[:] = np.arange(N, dtype=np.float32)
    out = cuda.pinned_array_like(h)
    streams = [cuda.stream() for _ in range(nstreams)]
    start, end = cuda.event(), cuda.event()
    start.record()
    for k, s in enumerate(streams):
        sl = slice(k * chunk, (k + 1) * chunk)
        d = cuda.to_device(h[sl], stream=s)
        scale_shift[(chunk + 255) // 256, 256, s](d, np.float32(k))
        d.copy_to_host(out[sl], stream=s)
    end.record()
    end.synchronize()
    assert cuda.event_elapsed_time(start, end) >= 0
    for s in streams:
        s.synchronize()
    assert np.array_equal(out, np.arange(N, dtype=np.float32) * 2 + np.repeat(np.arange(nstreams), chunk))

    m = cuda.mapped_array(16, dtype=np.int64)
    m[:] = 3

    @cuda.jit
    def sq(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * a[i] + i

    sq[1, 16](m)
    cuda.synchronize()
    assert np.array_equal(m, 9 + np.arange(16))


def test_device_array_methods_from_the_host():
    a = np.arange(24, dtype=np.float64)
    d = cuda.to_device(a)
    assert (d.shape, d.size, d.ndim, len(d), d.nbytes) == ((24,), 24, 1, 24, 192)
    assert [p.copy_to_host().tolist() for p in d.split(8)] == [a[i:i + 8].tolist() for i in (0, 8, 16)]
    d2 = d.reshape(4, 6)
    assert np.array_equal(d2.ravel().copy_to_host(), a)
    assert np.array_equal(d2[1:3, ::2].copy_to_host(), a.reshape(4, 6)[1:3, ::2])
    assert d2[2, 3] == 15
    d[2:5] = np.array([-1.0, -2.0, -3.0])
    d[0] = 100
    d2[3] = 7
    d[6:8] = 9.5
    ref = a.copy()
    ref[2:5] = [-1, -2, -3]
    ref[0] = 100
    ref[18:24] = 7
    ref[6:8] = 9.5
    s = cuda.stream()
    h = d.copy_to_host(stream=s)
    s.synchronize()
    assert np.array_equal(h, ref)
    # numba's DeviceNDArray.T is a transposed copy (its transpose kernel), C-contiguous
    assert d2.T.is_c_contiguous() and np.array_equal(d2.T.copy_to_host(), ref.reshape(4, 6).T)
    e = cuda.device_array((3, 4), dtype=np.int32, order="F")
    e.copy_to_device(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert np.array_equal(e.copy_to_host(), np.arange(12).reshape(3, 4))

    @cuda.jit
    def add1(x):
        i, j = cuda.grid(2)
        if i < x.shape[0] and j < x.shape[1]:
            x[i, j] += 1

    add1[(1, 1), (8, 8)](d2)
    assert np.array_equal(d.copy_to_host(), ref + 1)


def test_device_report_and_selection():
    # the "what GPU do I have" preamble programs print before their kernels
    try:
        dev = cuda.select_device(0)
    except cuda.CudaSupportError:  # numba.cuda re-exports it
        raise AssertionError("select_device(0) failed") from None
    assert cuda.get_current_device() == dev and len(cuda.gpus) >= 1
    info = {a: getattr(dev, a) for a in (
        "MULTIPROCESSOR_COUNT", "MAX_THREADS_PER_BLOCK", "WARP_SIZE", "MAX_SHARED_MEMORY_PER_BLOCK",
        "MAX_BLOCK_DIM_X", "MAX_BLOCK_DIM_Y", "MAX_BLOCK_DIM_Z", "MAX_GRID_DIM_X", "MAX_GRID_DIM_Y",
        "MAX_GRID_DIM_Z", "MAX_REGISTERS_PER_BLOCK", "TOTAL_CONSTANT_MEMORY", "CLOCK_RATE", "L2_CACHE_SIZE",
        "MAX_THREADS_PER_MULTI_PROCESSOR", "COMPUTE_CAPABILITY_MAJOR", "COMPUTE_CAPABILITY_MINOR",
        "CONCURRENT_KERNELS", "UNIFIED_ADDRESSING", "COOPERATIVE_LAUNCH")}
    assert all(isinstance(v, int) for v in info.values())
    assert (info["COMPUTE_CAPABILITY_MAJOR"], info["COMPUTE_CAPABILITY_MINOR"]) == dev.compute_capability
    assert info["MAX_BLOCK_DIM_Y"] >= 64 and info["WARP_SIZE"] in (32, 64)
    with pytest.raises(AttributeError):
        dev.NOT_AN_ATTRIBUTE

    @cuda.jit
    def fill_ones(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = 1

    tpb = min(256, info["MAX_THREADS_PER_BLOCK"])
    for gpu in cuda.gpus:
        with gpu:
            arr = cuda.device_array(1000)
            fill_ones[(1000 + tpb - 1) // tpb, tpb](arr)
            assert arr.copy_to_host().sum() == 1000


def test_per_thread_mode_filter_with_array_fill():
    # a 3x3 mode (majority) filter over a label image: each thread clears its local counts with
    # counts.fill(0) -- numba's array method, which needs no allocation
    NL = 8

    @cuda.jit
    def mode_filter(labels, out):
        y, x = cuda.grid(2)
        H, W = labels.shape
        if y < H and x < W:
            counts = cuda.local.array(NL, dtype=np.int32)
            counts.fill(0)
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    yy = min(max(y + dy, 0), H - 1)
                    xx = min(max(x + dx, 0), W - 1)
                    counts[labels[yy, xx]] += 1
            best = 0
            for k in range(1, NL):
                if counts[k] > counts[best]:
                    best = k
            out[y, x] = best

    @cuda.jit
    def reset_rows(a, v):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i, 1:].fill(v)  # a row view, the value cast to the element type as numpy's fill does

    labels = np.random.RandomState(11).randint(0, NL, (23, 31)).astype(np.int32)
    out = np.zeros_like(labels)
    mode_filter[((23 + 7) // 8, (31 + 7) // 8), (8, 8)](labels, out)
    p = np.pad(labels, 1, mode="edge")
    ref = np.zeros_like(labels)
    for y in range(23):
        for x in range(31):
            ref[y, x] = np.bincount(p[y:y + 3, x:x + 3].ravel(), minlength=NL).argmax()
    assert np.array_equal(out, ref)
    a = np.zeros((5, 4), np.int16)
    reset_rows[1, 8](a, -2.7)
    r = np.zeros((5, 4), np.int16)
    r[:, 1:].fill(-2.7)
    assert np.array_equal(a, r)


def test_device_functions_declared_with_numba_tuple_constructors():
    # signatures as numba programs write them: the string Tuple((...)) and types.UniTuple(...)
    @cuda.jit("Tuple((float64, int64))(float64[:])", device=True)
    def max_and_index(row):
        best = row[0]
        at = 0
        for j in range(1, row.shape[0]):
            if row[j] > best:
                best = row[j]
                at = j
        return best, at

    @cuda.jit(types.UniTuple(types.float64, 2)(types.float64, types.float64), device=True)
    def polar(x, y):
        return math.hypot(x, y), math.atan2(y, x)

    @cuda.jit(void(float64[:, :], float64[:, :], types.UniTuple(types.int64, 2)))
    def k(a, out, offs):
        i = cuda.grid(1)
        if i < a.shape[0]:
            v, j = max_and_index(a[i])
            r, t = polar(v, 1.0 * j)
            out[i, 0] = v + offs[0]
            out[i, 1] = j + offs[1]
            out[i, 2] = r
            out[i, 3] = t

    a = np.random.RandomState(12).rand(10, 7)
    out = np.zeros((10, 4))
    k[1, 16](a, out, (10, 20))
    m, j = a.max(1), a.argmax(1)
    assert np.array_equal(out[:, 0], m + 10) and np.array_equal(out[:, 1], j + 20)
    assert np.allclose(out[:, 2], np.hypot(m, j)) and np.allclose(out[:, 3], np.arctan2(j, m))


def test_julia_set_with_complex_arguments():
    @cuda.jit(device=True)
    def julia_iter(z, c, max_iter):
        for n in range(max_iter):
            if abs(z) > 2.0:
                return n
            z = z * z + c
        return max_iter

    @cuda.jit
    def julia(out, c, xmin, xmax, ymin, ymax, max_iter):
        x, y = cuda.grid(2)
        h, w = out.shape
        if y < h and x < w:
            z = complex(xmin + x * (xmax - xmin) / (w - 1), ymin + y * (ymax - ymin) / (h - 1))
            out[y, x] = julia_iter(z, c, max_iter)

    h, w = 30, 40
    out = np.zeros((h, w), np.int32)
    c = complex(-0.8, 0.156)
    julia[((w + 15) // 16, (h + 15) // 16), (16, 16)](out, c, -1.5, 1.5, -1.0, 1.0, 60)
    ref = np.zeros_like(out)
    for y in range(h):
        for x in range(w):
            z = complex(-1.5 + x * 3.0 / (w - 1), -1.0 + y * 2.0 / (h - 1))
            n = 0
            while n < 60 and abs(z) <= 2.0:
                z = z * z + c
                n += 1
            ref[y, x] = n
    assert np.array_equal(out, ref)


def test_bitonic_sort_in_global_memory():
    @cuda.jit
    def bitonic_step(a, j, k):
        i = cuda.grid(1)
        ixj = i ^ j
        if ixj > i and i < a.size:
            if (i & k) == 0:
                if a[i] > a[ixj]:
                    a[i], a[ixj] = a[ixj], a[i]
            elif a[i] < a[ixj]:
                a[i], a[ixj] = a[ixj], a[i]

    n = 1 << 9
    x = np.random.RandomState(13).rand(n).astype(np.float32)
    d = cuda.to_device(x)
    k = 2
    while k <= n:
        j = k >> 1
        while j > 0:
            bitonic_step[n // 128, 128](d, j, k)
            j >>= 1
        k <<= 1
    assert np.array_equal(d.copy_to_host(), np.sort(x))


def test_particles_as_records_updated_through_device_functions():
    particle = np.dtype([("x", np.float32), ("y", np.float32), ("vx", np.float32), ("vy", np.float32),
                         ("mass", np.float64), ("id", np.int32)], align=True)

    @cuda.jit(device=True)
    def kinetic(p):
        return 0.5 * p.mass * (p.vx * p.vx + p.vy * p.vy), p.id

    @cuda.jit(device=True)
    def bounce(p, lo, hi):
        if p.x < lo or p.x > hi:
            p.vx = -p.vx
        if p.y < lo or p.y > hi:
            p.vy = -p.vy

    @cuda.jit
    def step(ps, dt, energy, ids):
        i = cuda.grid(1)
        if i < ps.shape[0]:
            p = ps[i]
            p.x += p.vx * dt
            p.y += p.vy * dt
            bounce(p, np.float32(0), np.float32(1))
            e, pid = kinetic(ps[i])
            energy[i] = e
            ids[i] = pid

    n = 50
    rng = np.random.RandomState(14)
    ps = np.zeros(n, particle)
    for f in ("x", "y"):
        ps[f] = rng.rand(n)
    for f in ("vx", "vy"):
        ps[f] = rng.randn(n)
    ps["mass"] = rng.rand(n) + 1
    ps["id"] = np.arange(n) * 3
    d = cuda.to_device(ps)
    energy, ids = cuda.device_array(n, np.float64), cuda.device_array(n, np.int32)
    step[2, 32](d, np.float32(0.1), energy, ids)
    ref = ps.copy()
    dt = np.float32(0.1)
    ref["x"] += ref["vx"] * dt
    ref["y"] += ref["vy"] * dt
    ref["vx"][(ref["x"] < 0) | (ref["x"] > 1)] *= -1
    ref["vy"][(ref["y"] < 0) | (ref["y"] > 1)] *= -1
    assert np.array_equal(d.copy_to_host(), ref)
    e = 0.5 * ref["mass"] * (ref["vx"] * ref["vx"] + ref["vy"] * ref["vy"])
    assert np.allclose(energy.copy_to_host(), e, rtol=1e-12)
    assert np.array_equal(ids.copy_to_host(), ref["id"])


def test_heat_equation_with_dynamic_shared_halo_and_swapped_buffers():
    @cuda.jit
    def step(u, un, alpha):
        sh = cuda.shared.array(0, dtype=float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bw = cuda.blockDim.x + 2
        i, j = cuda.grid(2)
        n, m = u.shape
        if i < n and j < m:
            sh[(ty + 1) * bw + tx + 1] = u[i, j]
            if tx == 0 and i > 0:
                sh[(ty + 1) * bw] = u[i - 1, j]
            if tx == cuda.blockDim.x - 1 and i < n - 1:
                sh[(ty + 1) * bw + tx + 2] = u[i + 1, j]
            if ty == 0 and j > 0:
                sh[tx + 1] = u[i, j - 1]
            if ty == cuda.blockDim.y - 1 and j < m - 1:
                sh[(ty + 2) * bw + tx + 1] = u[i, j + 1]
        cuda.syncthreads()
        if 0 < i < n - 1 and 0 < j < m - 1:
            c = sh[(ty + 1) * bw + tx + 1]
            lap = (sh[ty * bw + tx + 1] + sh[(ty + 2) * bw + tx + 1] + sh[(ty + 1) * bw + tx]
                   + sh[(ty + 1) * bw + tx + 2] - 4 * c)
            un[i, j] = c + alpha * lap
        elif i < n and j < m:
            un[i, j] = u[i, j]

    n, m = 40, 48
    u0 = np.zeros((n, m), np.float32)
    u0[15:25, 20:30] = 100
    a, b = cuda.to_device(u0), cuda.device_array((n, m), np.float32)
    B = (16, 8)
    shbytes = (B[0] + 2) * (B[1] + 2) * 4
    for _ in range(20):
        step[((n + 15) // 16, (m + 7) // 8), B, 0, shbytes](a, b, np.float32(0.2))
        a, b = b, a
    ref = u0.copy()
    for _ in range(20):
        nxt = ref.copy()
        nxt[1:-1, 1:-1] = ref[1:-1, 1:-1] + np.float32(0.2) * (
            ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2] + ref[1:-1, 2:] - 4 * ref[1:-1, 1:-1])
        ref = nxt
    assert np.allclose(a.copy_to_host(), ref, atol=1e-3)


def test_needleman_wunsch_antidiagonal_wavefront():
    MATCH, MISMATCH, GAP = 2, -1, -2

    @cuda.jit
    def diag(S, a, b, d):
        i = max(1, d - b.size) + cuda.grid(1)
        j = d - i
        if 1 <= i <= a.size and 1 <= j <= b.size:
            s = MATCH if a[i - 1] == b[j - 1] else MISMATCH
            S[i, j] = max(S[i - 1, j - 1] + s, S[i - 1, j] + GAP, S[i, j - 1] + GAP)

    rng = np.random.RandomState(15)
    a = rng.randint(0, 4, 50).astype(np.int8)
    b = rng.randint(0, 4, 40).astype(np.int8)
    S = np.zeros((51, 41), np.int32)
    S[:, 0] = np.arange(51) * GAP
    S[0, :] = np.arange(41) * GAP
    dS = cuda.to_device(S)
    for d in range(2, 51 + 41 - 1):
        diag[1, 64](dS, a, b, d)
    for i in range(1, 51):
        for j in range(1, 41):
            s = MATCH if a[i - 1] == b[j - 1] else MISMATCH
            S[i, j] = max(S[i - 1, j - 1] + s, S[i - 1, j] + GAP, S[i, j - 1] + GAP)
    assert np.array_equal(dS.copy_to_host(), S)


def test_option_pricing_paths_with_normal_draws():
    @cuda.jit
    def paths(states, S0, mu, sigma, dt, nsteps, out):
        i = cuda.grid(1)
        if i < out.size:
            s = S0
            for _ in range(nsteps):
                z = xoroshiro128p_normal_float32(states, i)
                s *= math.exp((mu - 0.5 * sigma * sigma) * dt + sigma * math.sqrt(dt) * z)
            out[i] = s

    n = 2048
    states = create_xoroshiro128p_states(n, seed=123)
    out = np.zeros(n, np.float32)
    f = np.float32
    paths[n // 128, 128](states, f(100), f(0.05), f(0.2), f(1 / 50), 50, out)
    assert abs(np.exp(-0.05) * np.maximum(out - 100, 0).mean() - 10.45) < 1.5
    # the first path from numba's Box-Muller formula in float32
    st = _states(1, 123)[0]
    s = f(100)
    for _ in range(50):
        u1, u2 = _uniform32(st), _uniform32(st)
        z = np.sqrt(f(-2) * np.log(u1)) * np.cos(f(2) * f(np.pi) * u2)
        s = s * np.exp((f(0.05) - f(0.5) * f(0.2) * f(0.2)) * f(1 / 50) + f(0.2) * np.sqrt(f(1 / 50)) * z)
    assert abs(out[0] - s) / s < 1e-4


def test_numba_device_attribute_names_read_hip_attributes(monkeypatch):
    # on a GPU, dev.<NAME> is hipDeviceGetAttribute of HIP's attribute of that name (no GPU here:
    # the read is recorded); the cpu device answers every name the GPU one does
    from pykern.numba_compat import host_api as compat
    from pykern.runtime import device_registry as devices
    from pykern.runtime.hip import library as hip
    from pykern.runtime.hip import api as hip_api

    asked = []
    monkeypatch.setattr(hip, "lib", lambda: "L")
    monkeypatch.setattr(devices, "_attr", lambda lib, name, dev: asked.append((lib, name, dev)) or 7)
    d = devices.Device(id=3, name="gpu", gcn_arch_name="gfx90a", arch="gfx90a", features=(), compute_units=104,
                       wave_size=64, max_shared_per_block=65536, max_threads_per_block=1024,
                       max_block_dim=(1024, 1024, 1024), max_grid_dim=(2**31 - 1,) * 3, clock_khz=1700000,
                       memory_clock_khz=1600000, total_memory=1 << 36, pci_bus_id="0000:03:00.0",
                       runtime_version=60_200_000, driver_version=60_200_000)
    assert d.MAX_REGISTERS_PER_BLOCK == 7 and d.L2_CACHE_SIZE == 7
    assert asked == [("L", "hipDeviceAttributeMaxRegistersPerBlock", 3), ("L", "hipDeviceAttributeL2CacheSize", 3)]
    assert d.WARP_SIZE == 64 and len(asked) == 2  # a field the dataclass holds is not asked again
    with pytest.raises(AttributeError):
        d.NOT_AN_ATTRIBUTE
    assert all(n in hip_api.DEVICE_ATTRIBUTES for n in devices.NUMBA_ATTRIBUTES.values())
    cpu = compat.CpuDevice()
    assert all(isinstance(getattr(cpu, n), int) for n in devices.NUMBA_ATTRIBUTES)


def test_black_scholes_and_twiddles_with_libdevice():
    # libdevice spellings: normcdf for the cumulative normal, sincospi for exact DFT twiddles
    from pykern.lang import libdevice

    @cuda.jit
    def black_scholes(S, K, T, r, v, call, put):
        i = cuda.grid(1)
        if i < S.size:
            sq = v * math.sqrt(T[i])
            d1 = (math.log(S[i] / K[i]) + (r + 0.5 * v * v) * T[i]) / sq
            d2 = d1 - sq
            e = K[i] * math.exp(-r * T[i])
            call[i] = S[i] * libdevice.normcdf(d1) - e * libdevice.normcdf(d2)
            put[i] = e * libdevice.normcdf(-d2) - S[i] * libdevice.normcdf(-d1)

    rng = np.random.RandomState(16)
    n = 256
    S, K, T = rng.uniform(5, 30, n), rng.uniform(1, 100, n), rng.uniform(0.25, 10, n)
    call, put = np.zeros(n), np.zeros(n)
    black_scholes[2, 128](S, K, T, 0.02, 0.3, call, put)
    cnd = np.vectorize(lambda x: 0.5 * math.erfc(-x / math.sqrt(2)))
    sq = 0.3 * np.sqrt(T)
    d1 = (np.log(S / K) + (0.02 + 0.5 * 0.09) * T) / sq
    d2 = d1 - sq
    assert np.allclose(call, S * cnd(d1) - K * np.exp(-0.02 * T) * cnd(d2), rtol=1e-12, atol=1e-12)
    assert np.allclose(call - put, S - K * np.exp(-0.02 * T), rtol=1e-10, atol=1e-10)  # put-call parity

    @cuda.jit
    def twiddles(n, w, w32):
        k = cuda.grid(1)
        if k < w.shape[0]:
            s, c = libdevice.sincospi(-2.0 * k / n)
            w[k, 0] = c
            w[k, 1] = s
            w32[k, 0] = libdevice.cospif(np.float32(-2.0 * k / n))
            w32[k, 1] = libdevice.sinpif(np.float32(-2.0 * k / n))

    N = 16
    w, w32 = np.zeros((N, 2)), np.zeros((N, 2), np.float32)
    twiddles[1, N](N, w, w32)
    ref = np.exp(-2j * np.pi * np.arange(N) / N)
    assert np.allclose(w[:, 0], ref.real, atol=1e-15) and np.allclose(w[:, 1], ref.imag, atol=1e-15)
    assert np.allclose(w32[:, 0], ref.real, atol=1e-7) and np.allclose(w32[:, 1], ref.imag, atol=1e-7)
    quarter = np.arange(0, N, N // 4)  # multiples of pi/2: exactly 0 and +-1, where cos(pi * x) is not
    assert np.array_equal(np.abs(w[quarter]), np.abs(np.round(np.stack([ref.real, ref.imag], 1)[quarter])))


def test_kernels_decorated_with_numba_cpu_options():
    # projects share one options dict between numba.njit and cuda.jit; numba.cuda's target options
    # accept nopython and nogil (no effect on a GPU)
    opts = dict(nopython=True, nogil=True, fastmath=False)

    @cuda.jit(device=True, **opts)
    def smoothstep(e0, e1, x):
        t = min(max((x - e0) / (e1 - e0), 0.0), 1.0)
        return t * t * (3.0 - 2.0 * t)

    @cuda.jit(**opts)
    def apply(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = smoothstep(0.2, 0.8, x[i])

    x = np.linspace(0, 1, 101)
    out = np.zeros_like(x)
    apply[1, 128](x, out)
    t = np.clip((x - 0.2) / 0.6, 0, 1)
    assert np.allclose(out, t * t * (3 - 2 * t), rtol=0, atol=1e-15)


# a stencil's weights as a global tuple of tuples, read with run-time indices (numba indexes any
# UniTuple at run time; pykern refused tuples of tuples before)
GAUSS = ((1, 2, 1), (2, 4, 2), (1, 2, 1))


def test_stencil_weights_in_a_nested_global_tuple_indexed_at_run_time():
    from collections import namedtuple

    Offset = namedtuple("Offset", "dy dx")
    NEIGHBOURS = (Offset(-1, 0), Offset(1, 0), Offset(0, -1), Offset(0, 1))

    @cuda.jit
    def gauss_blur(img, out):
        y, x = cuda.grid(2)
        if 0 < y < img.shape[0] - 1 and 0 < x < img.shape[1] - 1:
            acc = 0.0
            for dy in range(3):
                for dx in range(3):
                    acc += GAUSS[dy][dx] * img[y + dy - 1, x + dx - 1]
            out[y, x] = acc / 16

    @cuda.jit
    def local_max(img, out, taps):
        y, x = cuda.grid(2)
        if 0 < y < img.shape[0] - 1 and 0 < x < img.shape[1] - 1:
            is_max = True
            for k in range(len(NEIGHBOURS)):
                o = NEIGHBOURS[k]  # a namedtuple picked at run time
                if img[y + o.dy, x + o.dx] >= img[y, x]:
                    is_max = False
            w = 0.0
            for j in range(len(taps)):
                w += taps[j][j % 2]  # a tuple argument of pairs, indexed twice at run time
            out[y, x] = w if is_max else 0.0

    img = np.random.RandomState(17).rand(20, 24)
    out = np.zeros_like(img)
    gauss_blur[(2, 2), (16, 16)](img, out)
    G = np.array(GAUSS)
    ref = sum(G[dy, dx] * img[dy:dy + 18, dx:dx + 22] for dy in range(3) for dx in range(3)) / 16
    assert np.allclose(out[1:-1, 1:-1], ref, rtol=0, atol=1e-15)

    taps = ((1.0, 2.0), (3.0, 4.0), (5.0, 6.0))
    out2 = np.zeros_like(img)
    local_max[(2, 2), (16, 16)](img, out2, taps)
    c = img[1:-1, 1:-1]
    peak = (c > img[:-2, 1:-1]) & (c > img[2:, 1:-1]) & (c > img[1:-1, :-2]) & (c > img[1:-1, 2:])
    assert np.array_equal(out2[1:-1, 1:-1], np.where(peak, 1.0 + 4.0 + 5.0, 0.0))


WEIGHTS = (1.0, 4.0, 6.0, 4.0, 1.0)


def test_builtin_sum_any_all_in_a_smoothing_kernel():
    # Python's sum/any/all, as numba's overloads of them compile in kernels: of a global tuple, a
    # tuple built in the kernel and a row of an array
    @cuda.jit
    def smooth(x, out, valid, rowsum):
        i = cuda.grid(1)
        n = x.shape[1]
        if i < x.shape[0]:
            norm = sum(WEIGHTS)
            for j in range(2, n - 2):
                acc = 0.0
                for k in range(5):
                    acc += WEIGHTS[k] * x[i, j + k - 2]
                out[i, j] = acc / norm
            ends = (x[i, 0], x[i, n - 1])
            valid[i] = all((ends[0] >= 0, ends[1] >= 0)) and not any((x[i, 1] > 0.99, x[i, 2] > 0.99))
            rowsum[i] = sum(x[i], 100.0) - sum(ends)

    x = np.random.RandomState(18).rand(12, 20)
    x[3, 0] = -1
    out, valid, rowsum = np.zeros_like(x), np.zeros(12, np.bool_), np.zeros(12)
    smooth[1, 16](x, out, valid, rowsum)
    w = np.array(WEIGHTS)
    ref = np.stack([np.convolve(r, w / w.sum(), mode="valid") for r in x])
    assert np.allclose(out[:, 2:-2], ref, rtol=0, atol=1e-15)
    assert valid.tolist() == [(r[0] >= 0 and r[-1] >= 0) and not (r[1] > 0.99 or r[2] > 0.99) for r in x]
    assert np.allclose(rowsum, [100.0 + sum(r) - (r[0] + r[-1]) for r in x], rtol=0, atol=1e-12)


def test_raw_pointer_argument_doc_example():
    # numba-cuda docs, "ex_cpointer": a kernel declared with types.CPointer(types.uint8) takes the
    # address from __cuda_array_interface__; pykern refused CPointer before
    sig = types.void(types.CPointer(types.uint8), types.uint32)

    @cuda.jit(sig)
    def add_one(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] += 1

    x = cuda.to_device(np.arange(10, dtype=np.uint8))
    x_ptr = x.__cuda_array_interface__["data"][0]
    add_one[1, 32](x_ptr, len(x))
    assert x.copy_to_host().tolist() == list(range(1, 11))

    @cuda.jit("void(CPointer(float64), int64, float64[::1])")  # the string spelling, another dtype
    def gather(p, n, out):
        i = cuda.grid(1)
        if i < n:
            out[i] = p[n - 1 - i] * 2

    a = np.arange(5.0)
    out = np.zeros(5)
    gather[1, 8](a.ctypes.data, 5, out)
    assert out.tolist() == [8.0, 6.0, 4.0, 2.0, 0.0]

    def length(p, out):
        out[0] = len(p)

    with pytest.raises(cuda.CompileError, match="raw pointer has no length"):  # eager: compiled here
        cuda.jit(types.void(types.CPointer(types.float64), types.float64[:]))(length)
