"""The HIP module cache keeps the most recently used modules loaded, whichever launch path
used them: a kernel launched only through the generated fast path (the default stream or a
raw stream handle) marks its module used, as a full launch does. Checked on the cache's
bookkeeping with the HIP calls replaced by a recorder (``test_bounded_resources``), no device."""

from __future__ import annotations

import pytest

from pykern import runtime as targets
from test_bounded_resources import fast_path_kernel

LIMIT = 4
NEW_KERNELS = 10


@pytest.fixture
def hip_chosen():
    saved = list(targets._chosen)
    targets._chosen[:] = ["hip"]
    yield
    targets._chosen[:] = saved


@pytest.mark.parametrize("stream", [0, 0x5555], ids=["default stream", "raw handle"])
def test_a_kernel_launched_through_the_fast_path_stays_loaded(monkeypatch, hip_chosen, stream):
    k, args, hk, cache, driver, lib = fast_path_kernel(monkeypatch, LIMIT)
    launcher = k[1, 16, stream]
    for _ in range(3):
        launcher(*args)
    assert launcher._fast is not None  # the rest go through the fast path
    misses = launcher._misses
    for i in range(NEW_KERNELS):  # a notebook defining and running new kernels in between
        cache.acquire(b"new kernel %d" % i, 0)
        launcher(*args)
    loads = [c[1] for c in driver.of("load")]
    assert loads.count(hk.artifact.binary) == 1, "the kernel's module was evicted and reloaded"
    assert len(loads) == 1 + NEW_KERNELS
    assert launcher._misses == misses  # never stepped aside for a reload
    assert lib.functions == [hk.function] * (3 + NEW_KERNELS)


def test_touch_is_what_keeps_a_module(monkeypatch):
    """The bookkeeping the fast path calls: ``touch`` makes a module the most recently used."""
    _, _, hk, cache, driver, _ = fast_path_kernel(monkeypatch, 2)
    mine = hk._module
    cache.acquire(b"a", 0)
    cache.touch(mine)
    cache.acquire(b"b", 0)  # evicts "a", the least recently used
    assert mine.handle is not None and cache.key(b"a", 0) not in cache
    cache.acquire(b"c", 0)  # now ours is the least recently used
    assert mine.handle is None and hk.function is None
