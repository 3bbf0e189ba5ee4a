"""Checking ``k[griddim, blockdim, stream, sharedmem]`` before anything runs.

Example::

    >>> normalize_config((4, 256))
    ((4, 1, 1), (256, 1, 1), 0, 0)
"""

from __future__ import annotations

import operator

from pykern.core.errors import LaunchError, LaunchValueError

#: The per-block thread limit of every AMD GPU and of the cpu target.
MAX_BLOCK_THREADS = 1024
#: HSA dispatch packets hold the grid size in work-items as a u32 per axis.
MAX_GRID_ITEMS = (1 << 32) - 1


def _dims(value, what):
    if isinstance(value, (tuple, list)):
        items = list(value)
    else:
        items = [value]
    if not 1 <= len(items) <= 3:
        raise LaunchValueError(f"{what} must be a sequence of 1, 2 or 3 integers, got {items!r}")
    out = []
    for v in items:
        try:
            n = operator.index(v)
        except TypeError:
            raise LaunchError(f"{what} must be a sequence of integers, got {items!r} "
                              f"(a {type(v).__name__} is not an int)") from None
        if n <= 0:
            raise LaunchValueError(f"{what} must be positive in every dimension, got {value!r}")
        out.append(n)
    while len(out) < 3:
        out.append(1)
    return tuple(out)


_checked: dict = {}


def normalize_config(config):
    """``(griddim, blockdim[, stream[, sharedmem]])`` -> 3-tuples, stream, bytes.

    Raises ``LaunchError`` for anything a GPU would refuse. Configurations of
    plain ints are remembered: the same launch shape is checked once."""
    # only exact ints are remembered: 4.0 == 4 as a dict key, but 4.0 must be refused
    plain = type(config) is tuple and _plain(config)
    if plain:
        hit = _checked.get(config)
        if hit is not None:
            return hit
    result = _normalize(config)
    if plain and len(_checked) < 4096:
        _checked[config] = result
    return result


def _plain(config) -> bool:
    def ok(v):
        return type(v) is int or (type(v) is tuple and all(type(x) is int for x in v))

    # the stream slot holds an int (0) or a Stream: only plain ints are cached

    return all(ok(v) for v in config)


def _normalize(config):
    if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
        raise LaunchValueError(
            f"launch configuration must be [griddim, blockdim] or [griddim, blockdim, stream, sharedmem], got {config!r}"
        )
    griddim = _dims(config[0], "griddim")
    blockdim = _dims(config[1], "blockdim")
    stream = config[2] if len(config) > 2 else 0
    shared = config[3] if len(config) > 3 else 0
    try:
        shared = operator.index(shared)
    except TypeError:
        raise LaunchError(f"dynamic shared memory size must be an int (bytes), got {shared!r}") from None
    if shared < 0:
        raise LaunchValueError(f"dynamic shared memory size must be >= 0 bytes, got {shared}")
    threads = blockdim[0] * blockdim[1] * blockdim[2]
    if threads > MAX_BLOCK_THREADS:
        raise LaunchValueError(f"block {blockdim} has {threads} threads; the limit is {MAX_BLOCK_THREADS} per block")
    for axis, (g, b) in enumerate(zip(griddim, blockdim)):
        if g * b > MAX_GRID_ITEMS:
            raise LaunchValueError(
                f"grid too large on axis {'xyz'[axis]}: {g} blocks x {b} threads exceeds {MAX_GRID_ITEMS} threads"
            )
    return griddim, blockdim, stream, shared
