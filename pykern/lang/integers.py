"""``np.gcd`` / ``np.lcm`` as pykern device functions (Euclid's loop: no single IR node), and
the repeated squaring of ``float ** int``.

The frontend (``calls.np_scalar.np_gcd``) passes the absolute values as the unsigned type of the
operands' width -- numpy's loops do the same: ``abs(INT_MIN)`` wraps to ``2**(n-1)``, which the
unsigned type holds -- and converts the result back, so ``gcd(INT_MIN, 0)`` is ``INT_MIN`` and
``lcm`` wraps on overflow, as numpy's results are.
"""

from __future__ import annotations

from pykern.dispatch.dispatcher import jit


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


@jit(device=True)
def float_int_power(a, exp, one):
    """``a ** exp`` for ``0 <= exp <= 0x10000`` by numba's repeated squaring (``int_power`` in
    numba/cpython/numbers.py), in ``a``'s type: ``float32 ** int32`` is float32 there, and only
    the same sequence of roundings gives numba's bits. ``one`` is 1 of ``a``'s type."""
    r = one
    while exp != 0:
        if exp & 1:
            r *= a
        exp >>= 1
        a *= a
    return r


import sys as _sys  # noqa: E402

from pykern.lang.stubs import register_device_library  # noqa: E402

register_device_library("integers", _sys.modules[__name__])
