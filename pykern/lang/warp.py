"""``cuda.match_any_sync`` / ``cuda.match_all_sync`` as pykern device functions.

AMD GPUs have no match instruction: each distinct value of the wave is found
with one shuffle (the value of the lowest lane still unmatched) and one ballot
(the lanes holding it), so the loop runs once per distinct value. Masks are
64-bit (wave64); only lanes in ``mask`` that are active take part. Floats
compare by value (``-0.0`` matches ``0.0``; NaNs match each other), where CUDA
compares bits.

Example (what the frontend calls for ``m = cuda.match_any_sync(mask, v)``)::

    m = match_any_sync(np.uint64(mask), v)
"""

from __future__ import annotations

from pykern.lang import stubs as cuda
from pykern.dispatch.dispatcher import jit
from pykern.frontend.types import uint64


@jit(device=True)
def _same(a, b):
    return a == b or (a != a and b != b)


@jit(device=True)
def match_any_sync(mask, value):
    if mask == 0xFFFFFFFF:  # numba's "every lane" also means every lane of a 64-lane wave
        mask = ~uint64(0)
    active = cuda.activemask() & mask
    remaining = active
    result = uint64(0)
    while remaining != 0:
        leader = cuda.ffs(remaining) - 1
        lv = cuda.shfl_sync(mask, value, leader)
        same = cuda.ballot_sync(mask, _same(value, lv)) & active
        if _same(value, lv):
            result = same
        remaining = remaining & ~same & ~(uint64(1) << uint64(leader))
    return result


@jit(device=True)
def match_all_sync(mask, value):
    if mask == 0xFFFFFFFF:
        mask = ~uint64(0)
    active = cuda.activemask() & mask
    leader = cuda.ffs(active) - 1
    lv = cuda.shfl_sync(mask, value, leader)
    same = cuda.ballot_sync(mask, _same(value, lv)) & active
    if same == active:
        return active, True
    return uint64(0), False


import sys as _sys  # noqa: E402

from pykern.lang.stubs import register_device_library  # noqa: E402

register_device_library("warp", _sys.modules[__name__])
