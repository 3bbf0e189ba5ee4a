"""numba-cuda's ``tests/cudapy/test_inline.py`` (see conftest.py): the inline= option of device
functions."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _cost_model_false(expr, caller_info, callee_info):
    return False


def _cost_model_true(expr, caller_info, callee_info):
    return True


@pytest.mark.parametrize("opt", [{"inline": "always"}, {"inline": "never"}, {"inline": True},
                                 {"inline": False}, {"inline": _cost_model_false},
                                 {"inline": _cost_model_true}, {"forceinline": True},
                                 {"forceinline": False}],
                         ids=lambda opt: ", ".join(f"{k}={getattr(v, '__name__', v)}" for k, v in opt.items()))
def test_inline_options(opt):
    # test_inline.py TestCudaInline.test_call_inline_* / test_call_forceinline_* (the LLVM IR
    # checks of whether the call was inlined are left out: pykern's IR is its own)
    a = np.ones(2, dtype=np.int32)

    @cuda.jit(**opt)
    def set_zero(a):
        a[0] = 0

    @cuda.jit((cuda.int32[::1],))
    def call_set_zero(a):
        set_zero(a)

    call_set_zero[1, 2](a)
    assert np.all(a == np.arange(2, dtype=np.int32))
