"""numba.cuda's @cuda.reduce: a tree reduction on the device with any binary function."""

import numpy as np

import pykern as cuda
from _util import report, timed


@cuda.reduce
def sum_reduce(a, b):
    return a + b


@cuda.reduce
def max_reduce(a, b):
    return max(a, b)


def main(n=1 << 20):
    x = np.random.default_rng(3).random(n)
    dx = cuda.to_device(x)
    ok = np.isclose(sum_reduce(dx), x.sum())
    ok &= max_reduce(x) == x.max()
    ok &= np.isclose(sum_reduce(x, init=10.0), x.sum() + 10.0)
    res = cuda.device_array(1)
    sum_reduce(dx, res=res)  # the result stays on the device
    ok &= np.isclose(res.copy_to_host()[0], x.sum())
    t = timed(sum_reduce, dx)
    report("reduce", bool(ok), t, f"n={n}")


if __name__ == "__main__":
    main()
