"""Whole numba.cuda programs of the kinds found on GitHub and StackOverflow and in numba-cuda's
documentation, run as their authors wrote them (``import pykern as cuda``) on the cpu target and
checked against numpy or plain Python: histograms, scans, SpMV, Floyd-Warshall, LU, convolution,
k-means, batched 3x3 solves, a mode filter (``a.fill(v)``), Julia sets, sorting networks, particles
as records, the heat equation, wavefronts, Black-Scholes with libdevice, a raw-pointer argument."""

import math

import numpy as np
import pytest

import pykern as cuda
from pykern import float32
from pykern.numba_compat import numba_types as types

pytestmark = pytest.mark.usefixtures("cpu_uncached")


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
