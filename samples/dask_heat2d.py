"""2-D heat equation on a chunked array over a Dask cluster of worker processes.

Each block advances ``exchange`` time steps between halo exchanges (``map_overlap`` with
``depth=exchange``), all on pykern kernels in the workers. Checks against numpy, then
prints how many compilations happened across the cluster (from the shared cache's stats)
and the time against one process running the same kernel on the whole array.

    python samples/dask_heat2d.py [--workers 4] [--n 1024] [--steps 40] [--exchange 10]

Needs ``pip install 'pykern[dask]'``.
"""

import argparse
import os
import time

import numpy as np

import pykern as cuda
from _util import report
from heat2d import reference, step  # noqa: F401  (step runs in the workers)


# the stencil and its numpy reference are samples/heat2d.py's (kernels travel to workers by value)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--chunk", type=int, default=0, help="block edge (default: n // 2)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--exchange", type=int, default=5, help="time steps between halo exchanges")
    opt = ap.parse_args()
    import dask.array as da
    from distributed import Client, LocalCluster

    import pykern.dask as pkd

    n, alpha = opt.n, np.float64(0.2)
    u0 = np.zeros((n, n))
    u0[n // 4: n // 2, n // 4: n // 2] = 100.0
    chunk = opt.chunk or n // 2
    rounds, rest = divmod(opt.steps, opt.exchange)
    assert rest == 0, "--steps must be a multiple of --exchange"

    stats0 = pkd.compile_stats()
    # one process, the whole array (the cpu target already uses every core of the machine)
    whole = pkd.block_kernel(step, args=(alpha,), steps=opt.steps)
    whole(u0)  # compile
    t = time.perf_counter()
    single = whole(u0)
    t_single = time.perf_counter() - t

    os.environ.setdefault("PYKERN_TARGET", cuda.current_target())  # the workers use the same target
    with LocalCluster(n_workers=opt.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        if cuda.current_target() == "hip":
            client.register_plugin(pkd.GPUPerWorker())

        def solve():
            x = da.from_array(u0, chunks=chunk)
            for _ in range(rounds):
                x = pkd.map_overlap(step, x, depth=opt.exchange, boundary="none", args=(alpha,),
                                    steps=opt.exchange)
            return x.compute()

        t = time.perf_counter()
        got = solve()  # the first run includes each worker receiving (and compiling or loading) the kernel
        t_first = time.perf_counter() - t
        t = time.perf_counter()
        got = solve()
        t_cluster = time.perf_counter() - t
    stats = {k: v - stats0.get(k, 0) for k, v in pkd.compile_stats().items()}
    ok = np.allclose(got, reference(u0, alpha, opt.steps)) and np.array_equal(got, single)
    print(f"cluster: {opt.workers} worker processes, {((n + chunk - 1) // chunk) ** 2} blocks, "
          f"{rounds} halo exchanges; compilations in all (client and workers): {stats.get('writes', 0)} "
          f"(cache hits {stats.get('hits', 0)}, misses {stats.get('misses', 0)})")
    print(f"one process {t_single * 1e3:.1f} ms, cluster {t_cluster * 1e3:.1f} ms "
          f"(first run {t_first * 1e3:.1f} ms): speed-up {t_single / t_cluster:.2f}x")
    report("dask_heat2d", ok, t_cluster, f"{n}x{n}, {opt.steps} steps")


if __name__ == "__main__":
    main()
