"""Which declared signature a ``vectorize``/``guvectorize`` call runs, by numpy's ufunc casting.

numpy picks the first loop every input casts to under ``'safe'`` casting; pykern does the same
after an exact match (numba looks its kernels up by the exact input types first), and where no
loop takes the inputs safely, the first one they all cast to under ``'same_kind'`` (numpy's
default ``casting`` for a ufunc call whose loop is given): a float64 array passed to a gufunc
declared only for float32 is converted and the result is float32, as numba converts it.

Python ``int``/``float``/``complex`` arguments follow numpy 2's rules (NEP 50): they are *weak*
-- an int fits any integer, float or complex loop, a float any float or complex loop, a complex
a complex loop -- when some array argument is of their kind or a higher one (bool < integer <
float/complex); otherwise, and when every input is a Python scalar, each is its default dtype
(int64, float64, complex128). A weak int outside the chosen integer type's range is numpy's
``OverflowError``, not a wrapped value.

Example::

    loops = [(np.dtype("float32"),), (np.dtype("float64"),)]
    choose(loops, [np.dtype("int16")], [False])    # 0: int16 -> float32 is safe
    choose(loops[:1], [np.dtype("float64")], [False])  # 0: same_kind, float32 result
"""

from __future__ import annotations

import numpy as np

#: numpy's simplified kind order for weak Python scalars (dtype_kind_to_simplified_ordering)
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 2}
_PY_SCALARS = (int, float, complex)


def is_weak_candidate(value) -> bool:
    """A Python int, float or complex (not bool, not a numpy scalar: those are strong)."""
    return type(value) in _PY_SCALARS


def weak_literals(dtypes, weak) -> bool:
    """Whether the Python scalars among the inputs (``weak[k]`` true) stay weak: some array
    input is of their kind or a higher one (numpy's ``should_use_min_scalar_weak_literals``)."""
    arrays = [_KIND_ORDER.get(d.kind, 3) for d, w in zip(dtypes, weak) if not w]
    scalars = [1 if d.kind in "iu" else 2 for d, w in zip(dtypes, weak) if w]
    return bool(arrays) and bool(scalars) and max(arrays) >= max(scalars)


def _weak_fits(d: np.dtype, want: np.dtype) -> bool:
    """A weak Python scalar (its default dtype ``d``) into loop type ``want`` (numpy's
    ``can_cast_pyscalar_scalar_to``)."""
    if want.kind == "c":
        return True
    if want.kind == "f":
        return d.kind != "c"
    if want.kind in "iu":
        return d.kind in "iu"
    return bool(np.can_cast(d, want, "safe"))


def _fits(d, want, weak, rule) -> bool:
    if weak:
        return _weak_fits(d, want)
    if rule == "exact":
        return d == want
    return bool(np.can_cast(d, want, rule))


def choose(loops, dtypes, weak):
    """Index of the loop (a sequence of input dtypes) the inputs ``dtypes`` run, or None.
    ``weak[k]``: input ``k`` is a Python scalar (see the module docstring)."""
    keep_weak = weak_literals(dtypes, weak)
    weak = [w and keep_weak for w in weak]
    for rule in ("exact", "safe", "same_kind"):
        for i, want in enumerate(loops):
            if len(want) == len(dtypes) and all(_fits(d, w, wk, rule) for d, w, wk in zip(dtypes, want, weak)):
                return i
    return None


def check_python_ints(values, want) -> None:
    """numpy's ``OverflowError`` for a Python int out of the range of the integer loop type it
    goes into (numpy 2 converts it with a range check, it never wraps): ``vadd(int8_array, 1000)``."""
    for v, d in zip(values, want):
        if type(v) is int and d.kind in "iu" and not (np.iinfo(d).min <= v <= np.iinfo(d).max):
            raise OverflowError(f"Python integer {v} out of bounds for {d}")
