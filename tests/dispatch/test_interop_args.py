"""Foreign arrays as kernel arguments: objects with ``__cuda_array_interface__`` or
``__dlpack__`` (torch tensors) are passed zero-copy, as numba.cuda does."""

import numpy as np
import pytest

import pykern as cuda


@cuda.jit
def add_rows(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] + i * 10


class CAIArray:
    """A minimal producer of the CUDA array interface over numpy memory (what a
    GPU library looks like to the launcher; on the cpu target memory is host memory)."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = {
            "shape": arr.shape, "typestr": arr.dtype.str, "strides": arr.strides,
            "data": (arr.ctypes.data, False), "version": 3,
        }


def test_cuda_array_interface_objects_are_kernel_arguments():
    cuda.set_target("cpu")
    a = np.arange(12.0).reshape(3, 4)
    out = np.zeros_like(a)
    add_rows[(1, 1), (4, 4)](CAIArray(a), CAIArray(out))
    np.testing.assert_array_equal(out, a + np.arange(3)[:, None] * 10)


def test_torch_tensors_are_kernel_arguments_zero_copy():
    torch = pytest.importorskip("torch", reason="optional: pip install torch==2.13.0 (CPU build)")
    cuda.set_target("cpu")
    a = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    out = torch.zeros(4, 3, dtype=torch.float32).T  # a non-contiguous view
    add_rows[(1, 1), (4, 4)](a, out)
    want = a.numpy() + np.arange(3, dtype=np.float32)[:, None] * 10
    np.testing.assert_array_equal(out.numpy(), want)


def test_unsupported_foreign_array_is_a_launch_error():
    torch = pytest.importorskip("torch", reason="optional: pip install torch==2.13.0 (CPU build)")
    cuda.set_target("cpu")
    with pytest.raises(cuda.LaunchError, match="argument 1"):
        add_rows[1, 1](torch.zeros(2, 2, dtype=torch.bfloat16), np.zeros((2, 2)))  # no bfloat16 type yet
