"""``to_device(h)`` does not keep ``h`` alive: the deprecated ``d.to_host()`` copies back into
``h`` through a weak reference (current numba-cuda keeps no reference at all), so a large host
array the user deletes is freed while its device copy lives on."""

import gc
import warnings
import weakref

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_the_host_array_is_freed_while_the_device_array_lives():
    h = np.ones(1 << 20)
    alive = weakref.ref(h)
    d = cuda.to_device(h)
    del h
    gc.collect()
    assert alive() is None, "the device array kept the host array alive"
    assert d.copy_to_host().sum() == 1 << 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ValueError, match="no longer exists"):
            d.to_host()


def test_to_host_still_copies_back_while_the_host_array_lives():
    h = np.zeros(5)
    d = cuda.to_device(h)
    d.copy_to_device(np.arange(5.0))
    with pytest.warns(DeprecationWarning):
        d.to_host()
    assert h.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_an_ndarray_subclass_is_held_weakly_too():
    class Tagged(np.ndarray):
        pass

    h = np.arange(4.0).view(Tagged)
    alive = weakref.ref(h)
    d = cuda.to_device(h)
    d.copy_to_device(np.full(4, 7.0))
    with pytest.warns(DeprecationWarning):
        d.to_host()
    assert h.tolist() == [7.0] * 4
    del h
    gc.collect()
    assert alive() is None
