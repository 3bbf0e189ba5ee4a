"""numpy's array layout rules on plain ``(shape, strides, itemsize)``: contiguity, the
layout letter a kernel type carries, dense strides, the bytes a view spans.

One home for the rules that device arrays (``runtime/memory``), launch typing
(``frontend/typeof``) and numba's helpers (``numba_compat``) all apply to arrays
that are not numpy's own (numpy answers for its arrays with ``a.flags``).
Contiguity is numpy's *relaxed* rule: axes of extent 1 may have any stride, and
an empty array is contiguous.

Example::

    >>> is_contiguous((2, 3), (24, 8), 8, "C"), is_contiguous((2, 1, 3), (24, 999, 8), 8, "C")
    (True, True)
    >>> layout((3, 4), (8, 24), 8), layout((3, 4), (64, 8), 8)
    ('F', 'A')
    >>> c_strides((2, 0, 3), 4), span((4,), (-8,), 8)
    ((12, 12, 4), (-24, 8))
"""

from __future__ import annotations


def c_strides(shape, itemsize: int) -> tuple:
    """Byte strides of a dense C-order array of ``shape`` (an extent 0 counts as 1, as numpy's)."""
    strides, acc = [], itemsize
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def f_strides(shape, itemsize: int) -> tuple:
    """Byte strides of a dense Fortran-order array of ``shape``."""
    strides, acc = [], itemsize
    for n in shape:
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(strides)


def is_contiguous(shape, strides, itemsize: int, order: str = "C") -> bool:
    """Whether the view is dense in ``order`` ("C": last axis fastest, "F": first), by numpy's
    relaxed rule (what ``ndarray.flags.c_contiguous`` / ``f_contiguous`` say)."""
    size = 1
    for n in shape:
        size *= n
    if size == 0:
        return True
    dims = zip(shape, strides) if order == "F" else zip(reversed(shape), reversed(strides))
    acc = itemsize
    for n, s in dims:
        if n != 1:
            if s != acc:
                return False
            acc *= n
    return True


def layout(shape, strides, itemsize: int) -> str:
    """The layout letter of a kernel's array type: "C", "F" (more than one axis, not "C"), else "A"."""
    c = is_contiguous(shape, strides, itemsize, "C")
    f = not c and len(shape) > 1 and is_contiguous(shape, strides, itemsize, "F")
    return layout_letter(c, f, len(shape))


def layout_letter(c_contiguous: bool, f_contiguous: bool, ndim: int) -> str:
    """The layout letter of an array that is (or is not) C and F contiguous (``ndarray.flags``):
    "C" first; "F" only with more than one axis (a 1-d dense array is "C")."""
    return "C" if c_contiguous else ("F" if ndim > 1 and f_contiguous else "A")


def span(shape, strides, itemsize: int) -> tuple:
    """``(lo, hi)``: the byte range, relative to the first element, that a view touches
    (``(0, 0)`` for an empty one)."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n == 0:
            return 0, 0
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + itemsize
