"""``np.gcd`` / ``np.lcm`` as pykern device functions (Euclid's loop: no single IR node).

The frontend (``np_scalar.np_gcd``) passes the absolute values as the unsigned type of the
operands' width -- numpy's loops do the same: ``abs(INT_MIN)`` wraps to ``2**(n-1)``, which the
unsigned type holds -- and converts the result back, so ``gcd(INT_MIN, 0)`` is ``INT_MIN`` and
``lcm`` wraps on overflow, as numpy's results are.
"""

from __future__ import annotations

from .dispatcher import jit


@jit(device=True)
def gcd_unsigned(a, b):
    while a != 0:
        a, b = b % a, a
    return b


@jit(device=True)
def lcm_unsigned(a, b):
    g = gcd_unsigned(a, b)
    if g == 0:
        return g  # gcd(0, 0): numpy's lcm is 0
    return a // g * b


import sys as _sys  # noqa: E402

_sys.modules["pykern.stubs"].DEVICE_LIBRARIES["integers"] = _sys.modules[__name__]
