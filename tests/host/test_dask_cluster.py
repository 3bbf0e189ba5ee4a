"""pykern kernels on a Dask LocalCluster of worker processes, cpu target (issue 16 items 2, 5).

One cluster per module (starting one costs seconds); every worker shares the module's
cache directory, whose stats count compilations across the cluster."""

import os
import time

import numpy as np
import pytest

pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask.array as da  # noqa: E402

import pykern as cuda  # noqa: E402

N_WORKERS = 2


@cuda.jit
def smooth(u, out):
    i, j = cuda.grid(2)
    n, m = out.shape
    if i < n and j < m:
        if 0 < i < n - 1 and 0 < j < m - 1:
            out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
        else:
            out[i, j] = u[i, j]


@cuda.jit
def axpy(x, y, out, a):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


def smooth_numpy(u):
    """One smoothing step of the whole array: edge cells keep their value."""
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("cluster-cache"))
    saved = {k: os.environ.get(k) for k in ("PYKERN_TARGET", "PYKERN_CACHE_DIR")}
    # worker processes inherit the environment: the cpu target and one shared cache directory
    os.environ.update(PYKERN_TARGET="cpu", PYKERN_CACHE_DIR=cache)
    cluster = distributed.LocalCluster(n_workers=N_WORKERS, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    c.pykern_cache = cache
    try:
        yield c
    finally:
        c.close()
        cluster.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _stats(client):
    from pykern.host.dask import compile_stats

    return compile_stats(client.pykern_cache)


def test_map_blocks_equals_numpy(client):
    import pykern.host.dask as pkd

    rng = np.random.default_rng(1)
    x, y = rng.random(10_000), rng.random(10_000)
    dx, dy = da.from_array(x, chunks=2_500), da.from_array(y, chunks=2_500)
    got = pkd.map_blocks(axpy, dx, dy, args=(2.5,)).compute()
    np.testing.assert_array_equal(got, 2.5 * x + y)


def _wait_for_writes(client, writes, timeout=120.0):
    deadline = time.monotonic() + timeout
    while _stats(client)["writes"] < writes:
        assert time.monotonic() < deadline, "the first worker never stored its compiled kernel"
        time.sleep(0.05)


def test_stencil_with_overlap_equals_numpy_and_compiles_once(client):
    import pykern.host.dask as pkd

    u = np.random.default_rng(2).random((256, 192))
    x = da.from_array(u, chunks=(64, 96))  # 8 blocks over 2 workers
    before = _stats(client)
    # one block first: the first worker compiles and stores; every other block, on any
    # worker, then finds it in the shared cache (concurrent first compiles are the cache's
    # compile-once work)
    pkd.map_overlap(smooth, x[:64, :96], depth=1, boundary="none").compute()
    # a cpu compile returns first-tier code and stores its O3 build from a background thread;
    # a worker asking before that store misses, waits on the claim and then hits, so wait for it
    _wait_for_writes(client, before["writes"] + 1)
    got = pkd.map_overlap(smooth, pkd.map_overlap(smooth, x, depth=1, boundary="none"),
                          depth=1, boundary="none").compute()
    np.testing.assert_array_equal(got, smooth_numpy(smooth_numpy(u)))
    after = _stats(client)
    assert after["writes"] - before["writes"] == 1  # one kernel, one signature: compiled once in the cluster
    assert after["misses"] - before["misses"] == 1
    workers = client.run(lambda: 1)
    assert len(workers) == N_WORKERS


def _die_once(block, marker):
    # the first attempt kills its worker process outright (as an OOM kill would)
    if block.size and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return block


def test_killed_worker_is_retried_and_the_result_is_right(client, tmp_path):
    import pykern.host.dask as pkd

    u = np.random.default_rng(3).random((128, 128))
    x = da.from_array(u, chunks=64)
    marker = str(tmp_path / "died")
    hurt = x.map_blocks(_die_once, marker, dtype=x.dtype, meta=np.empty((0, 0)))
    got = pkd.map_overlap(smooth, hurt, depth=1, boundary="none").compute()
    assert os.path.exists(marker)  # a worker did die
    np.testing.assert_array_equal(got, smooth_numpy(u))
    client.wait_for_workers(N_WORKERS, timeout=120)


def test_gpu_per_worker_gives_each_worker_its_own_device(client):
    import pykern.host.dask as pkd

    plugin = pkd.GPUPerWorker(devices=[0, 1])
    assert [plugin.choose(n) for n in (0, 1, 2, 3)] == [0, 1, 0, 1]
    client.register_plugin(plugin)
    # the cpu target never loads HIP in the workers, so the choice is made by environment
    seen = client.run(lambda dask_worker: (dask_worker.name, os.environ.get("HIP_VISIBLE_DEVICES"),
                                           getattr(dask_worker, "pykern_device", None)))
    by_name = {name: (env, dev) for name, env, dev in seen.values()}
    assert sorted(env for env, _ in by_name.values()) == ["0", "1"]
    assert all(env == str(dev) for env, dev in by_name.values())
