"""Launch configurations are checked before anything runs (LaunchError with the reason)."""

import numpy as np
import pytest

import pykern
from pykern.dispatch.launch_config import normalize_config


def test_ints_and_tuples_become_3d():
    assert normalize_config((4, 256)) == ((4, 1, 1), (256, 1, 1), 0, 0)
    assert normalize_config(((2, 3), (16, 16), 0, 128)) == ((2, 3, 1), (16, 16, 1), 0, 128)
    assert normalize_config((np.int64(7), (np.int32(8), 2, 2))) == ((7, 1, 1), (8, 2, 2), 0, 0)


@pytest.mark.parametrize(
    "config, words",
    [
        ((0, 256), ["griddim", "positive"]),
        ((4, 0), ["blockdim", "positive"]),
        ((4, (32, 33)), ["1056 threads", "1024"]),
        ((4, 2048), ["2048 threads"]),
        ((4.0, 256), ["griddim", "sequence of integers"]),
        (((1, 2, 3, 4), 64), ["1, 2 or 3 integers"]),
        ((1, 64, 0, -8), ["shared", ">= 0"]),
        ((1, 64, 0, 1.5), ["shared", "int"]),
        (((1 << 31), 1024), ["grid too large"]),
        ((4,), ["launch configuration"]),
    ],
)
def test_bad_configurations_are_refused(config, words):
    with pytest.raises(pykern.LaunchError) as e:
        normalize_config(config)
    for w in words:
        assert w in str(e.value)


def test_kernel_needs_configuration_and_device_functions_are_not_launchable():
    @pykern.jit
    def k(a):
        a[0] = 1

    @pykern.jit(device=True)
    def d(x):
        return x

    with pytest.raises(pykern.LaunchError, match=r"k\[griddim, blockdim\]"):
        k(np.zeros(1))
    with pytest.raises(pykern.LaunchError, match="device function"):
        d[1, 1]
    with pytest.raises(pykern.LaunchError, match="only be called from a kernel"):
        d(1)
    with pytest.raises(pykern.LaunchError, match="positive"):
        k[0, 32]


def test_unknown_jit_option_is_a_type_error():
    with pytest.raises(TypeError, match="unknown option"):
        pykern.jit(bogus=True)(lambda a: None)


def test_wrong_argument_count_is_a_launch_error_before_compiling():
    @pykern.jit
    def k(a, b):
        a[0] = b

    with pytest.raises(pykern.LaunchError, match="takes 2 argument.*but 3 were given"):
        k[1, 1](np.zeros(1), 1.0, 2.0)
    with pytest.raises(pykern.LaunchError, match="but 1 were given"):
        k[1, 1](np.zeros(1))
    assert not k.overloads  # nothing was compiled


def test_list_argument_is_a_launch_error_naming_the_position():
    @pykern.jit
    def k(a, b):
        a[0] = b[0]

    with pytest.raises(pykern.LaunchError, match="argument 2.*list"):
        k[1, 1](np.zeros(1), [1.0])
