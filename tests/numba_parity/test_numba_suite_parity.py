"""Behaviours numba-cuda 0.30.4's own test suite checks that pykern got wrong, each shown
on the cpu target with pykern's own kernels (not copies of numba's tests): what numba
refuses is refused at compile time, what it computes is compared with numpy/Python."""

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _all_sync_kernel(sig):
    def vote(mask, pred, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cuda.all_sync(mask[i], pred[i])

    return cuda.jit(sig)(vote) if sig else cuda.jit(vote)


@pytest.mark.parametrize("sig, msg", [
    ("void(float32[:], int32[:], int32[:])", "Mask type must be an integer"),
    ("void(boolean[:], int32[:], int32[:])", "Mask type must be an integer"),
    ("void(int32[:], float64[:], int32[:])", "Predicate must be an integer or boolean"),
])
def test_vote_refuses_a_bool_or_float_mask_and_a_float_predicate(sig, msg):
    """numba-cuda's vote typing: a bool mask would name lane 0 alone, a float predicate is
    usually the two arguments swapped."""
    with pytest.raises(cuda.CompileError, match=msg):
        _all_sync_kernel(sig)


def test_vote_takes_integer_masks_and_integer_or_bool_predicates():
    n = 64  # one wave of the cpu target; a mask of -1 names every lane
    mask = np.full(n, -1, np.int64)
    out = np.zeros(n, np.int32)
    for pred in (np.ones(n, np.uint32), np.ones(n, np.bool_), np.arange(n, dtype=np.int64)):
        _all_sync_kernel(None)[1, n](mask, pred, out)
        assert out.tolist() == [int(pred.astype(bool).all())] * n


@pytest.mark.parametrize("space", ["local", "shared"])
def test_an_unknown_dtype_name_is_refused_with_numbas_wording(space):
    src = f"def k(out):\n    a = cuda.{space}.array(10, dtype='int33')\n    out[0] = a[0]\n"
    ns = {"cuda": cuda}
    exec(compile(src, f"<nbtests3-{space}>", "exec"), ns)
    with pytest.raises(cuda.CompileError, match="Invalid NumPy dtype specified: 'int33'"):
        cuda.jit(ns["k"])[1, 1](np.zeros(1, np.int32))


@cuda.jit(device=True)
def _fill(a, v):
    for i in range(a.size):
        a[i] = v


@cuda.jit
def _returns_a_void_call(a, flag):
    if flag:
        return _fill(a, 7)
    _fill(a, 3)


def test_a_kernel_may_return_the_call_of_a_function_that_returns_nothing():
    """numba types a kernel's return as none, which ``return f(a)`` of such an f is."""
    for flag, want in ((1, 7), (0, 3)):
        a = np.zeros(4, np.int32)
        _returns_a_void_call[1, 1](a, flag)
        assert a.tolist() == [want] * 4


def test_a_kernel_returning_a_value_is_still_refused():
    def k(a):
        return a[0] + 1

    with pytest.raises(cuda.CompileError, match="kernels cannot return a value"):
        cuda.jit(k)[1, 1](np.zeros(2, np.int32))
