"""The examples of numba.cuda's documentation (numba-cuda's ``tests/doc_examples``), run as
written with ``import pykern as cuda`` (cupy arrays replaced by device arrays) on the cpu target.
The heat equation and sessionization return early in some threads and then sync the rest of the
grid: they failed with "divergent barrier" until exited threads counted as arrived."""

import numpy as np
import pytest

import pykern as cuda
from pykern import int32

pytestmark = pytest.mark.usefixtures("cpu_uncached")


def test_ex_laplace():
    size = 1001
    data = np.zeros(size)
    data[500] = 10000
    buf_0 = cuda.to_device(data)
    buf_1 = cuda.device_array_like(buf_0)
    niter = 200

    @cuda.jit
    def solve_heat_equation(buf_0, buf_1, timesteps, k):
        i = cuda.grid(1)
        if i >= len(buf_0):
            return
        grid = cuda.cg.this_grid()
        for step in range(timesteps):
            if (step % 2) == 0:
                data = buf_0
                next_data = buf_1
            else:
                data = buf_1
                next_data = buf_0
            curr_temp = data[i]
            if i == 0:
                next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
            elif i == len(data) - 1:
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
            else:
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp) + data[i + 1])
            next_data[i] = next_temp
            grid.sync()

    solve_heat_equation.forall(len(data))(buf_0, buf_1, niter, 0.25)
    results = buf_1.copy_to_host()
    np.testing.assert_allclose(results.sum(), 10000)


def test_ex_sessionize():
    session_timeout = np.int64(np.timedelta64("3600", "s"))
    ids = cuda.to_device(np.array([1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
                                   4, 4, 4, 4, 4, 4, 4, 4, 4]))
    sec = cuda.to_device(np.array(
        [1, 2, 3, 5000, 5001, 5002, 1, 2, 3, 1, 2, 5000, 5001, 10000, 10001, 10002, 10003, 15000,
         150001, 1, 5000, 50001, 15000, 20000, 25000, 25001, 25002, 25003],
        dtype="datetime64[ns]").astype("int64"))
    results = cuda.to_device(np.zeros(len(ids)))

    @cuda.jit
    def sessionize(user_id, timestamp, results):
        gid = cuda.grid(1)
        size = len(user_id)
        if gid >= size:
            return
        is_first_datapoint = gid == 0
        if not is_first_datapoint:
            new_user = user_id[gid] != user_id[gid - 1]
            timed_out = (timestamp[gid] - timestamp[gid - 1] > session_timeout)
            is_sess_boundary = new_user or timed_out
        else:
            is_sess_boundary = True
        if is_sess_boundary:
            results[gid] = gid
            grid = cuda.cg.this_grid()
            grid.sync()
            look_ahead = 1
            while results[gid + look_ahead] == 0:
                results[gid + look_ahead] = gid
                look_ahead += 1
                if gid + look_ahead == size - 1:
                    results[gid + look_ahead] = gid
                    break

    sessionize.forall(len(ids))(ids, sec, results)
    expect = [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 11, 11, 13, 13, 13, 13, 17, 18, 19, 20, 21, 21, 23,
              24, 24, 24, 24]
    np.testing.assert_equal(expect, results.copy_to_host())


def test_ex_grid_sync():
    sig = (int32[:, ::1],)

    @cuda.jit(sig)
    def sequential_rows(M):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()
        rows = M.shape[0]
        cols = M.shape[1]
        for row in range(1, rows):
            opposite = cols - col - 1
            M[row, col] = M[row - 1, opposite] + 1
            g.sync()

    A = np.zeros((256, 256), dtype=np.int32)
    blockdim = 32
    griddim = A.shape[1] // blockdim
    assert sequential_rows.overloads[sig].max_cooperative_grid_blocks(blockdim) >= griddim
    sequential_rows[griddim, blockdim](A)
    np.testing.assert_equal(A, np.tile(np.arange(256), (256, 1)).T)


def test_ex_globals_constant_and_device_array_capture():
    tax_rate = 0.08
    prices = np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float64)

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * prices[i] * (1 + tax_rate)

    d_quantities = cuda.to_device(np.array([1, 2, 3, 4, 5], dtype=np.float64))
    d_totals = cuda.device_array(5, dtype=np.float64)
    compute_totals[1, 32](d_quantities, d_totals)
    tax_rate = 0.10  # noqa: F841  (captured at the first compile: no effect)
    prices[:] = [20.0, 50.0, 10.0, 30.0, 60.0]
    compute_totals[1, 32](d_quantities, d_totals)
    np.testing.assert_allclose(d_totals.copy_to_host(), [10.8, 54.0, 16.2, 64.8, 162.0])

    d_prices = cuda.to_device(np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32))

    @cuda.jit
    def by_pointer(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * d_prices[i]

    dq = cuda.to_device(np.ones(5, np.float32))
    dt = cuda.to_device(np.zeros(5, np.float32))
    by_pointer[1, 32](dq, dt)
    np.testing.assert_array_equal(dt.copy_to_host(), [10.0, 25.0, 5.0, 15.0, 30.0])
    d_prices[:] = np.array([20.0, 50.0, 10.0, 30.0, 60.0], dtype=np.float32)
    by_pointer[1, 32](dq, dt)  # a global device array is captured by pointer: sees the new data
    np.testing.assert_array_equal(dt.copy_to_host(), [20.0, 50.0, 10.0, 30.0, 60.0])


def test_ex_ufunc():
    @cuda.jit
    def f(r, x):
        np.sin(x, r)

    x = np.arange(10, dtype=np.float32) - 5
    r = np.zeros_like(x)
    f[1, 1](r, x)
    np.testing.assert_allclose(r, np.sin(x))
