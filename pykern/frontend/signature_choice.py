"""Choosing among explicit signatures, as numba does.

A function declared with several signatures (``@jit(["void(float32)",
"void(float64)"])``) is called with argument types that may match none of them
exactly. numba rates each candidate by the conversions its arguments need --
*promote* (same kind, wider: int32 -> int64, float32 -> float64), *safe* (no
value lost: int32 -> float64) or *unsafe* (anything else between numbers:
float64 -> float32, float -> int) -- and takes the candidate whose counts
``(unsafe, safe, promote)`` are smallest; an exact match always wins. Two
candidates with the same best rating are ambiguous: a ``TypeError``.

The kinds come from numba's casting rules (``numba/core/typeconv/rules.py``),
closed transitively: a chain of conversions is as bad as its worst link.

Example::

    >>> from pykern.frontend import types as T
    >>> sigs = [(T.void, [T.float32]), (T.void, [T.float64])]
    >>> choose(sigs, (T.int64,), "f")[1]
    [float64]
"""

from __future__ import annotations

import functools

from pykern.frontend import types as T

EXACT, PROMOTE, SAFE, UNSAFE = 0, 1, 2, 3

_EDGES = []  # (src, dst, kind) for one step; the reverse of each is unsafe


def _edge(a, b, kind):
    _EDGES.append((a, b, kind))
    _EDGES.append((b, a, UNSAFE))


_edge(T.boolean, T.int8, SAFE)
_edge(T.boolean, T.uint8, SAFE)
for _a, _b in ((T.int8, T.int16), (T.int16, T.int32), (T.int32, T.int64), (T.uint8, T.uint16),
               (T.uint16, T.uint32), (T.uint32, T.uint64), (T.float16, T.float32), (T.float32, T.float64)):
    _edge(_a, _b, PROMOTE)
for _a, _b in ((T.uint8, T.int16), (T.uint16, T.int32), (T.uint32, T.int64), (T.int8, T.float16),
               (T.uint8, T.float16), (T.int16, T.float32), (T.int32, T.float64), (T.int64, T.float64),
               (T.uint64, T.float64)):
    _edge(_a, _b, SAFE)
_edge(T.int32, T.float32, UNSAFE)


@functools.cache
def _kinds():
    """(actual, declared) -> conversion kind, for every pair of scalar types the rules connect.
    Built at the first signature choice, not at import: a first launch seldom chooses."""
    types = sorted({t for e in _EDGES for t in e[:2]}, key=str)
    best = {(t, t): EXACT for t in types}
    for a, b, k in _EDGES:
        best[a, b] = min(best.get((a, b), UNSAFE), k)
    changed = True
    while changed:  # minimax paths: a chain is as bad as its worst step
        changed = False
        for (a, b), k1 in list(best.items()):
            for c in types:
                k2 = best.get((b, c))
                if k2 is None:
                    continue
                k = max(k1, k2)
                if k < best.get((a, c), UNSAFE + 1):
                    best[a, c] = k
                    changed = True
    return best



def conversion(actual: T.Type, declared: T.Type):
    """The conversion kind from ``actual`` to ``declared`` (EXACT..UNSAFE), or None."""
    if actual == declared:
        return EXACT
    if isinstance(actual, T.EnumMember):  # numba's IntEnumMember converts as its int64; an Enum's never
        return conversion(T.int64, declared) if isinstance(actual.member, int) else None
    if actual.is_scalar and declared.is_scalar:
        return _kinds().get((actual, declared), UNSAFE)
    if isinstance(declared, T.Array) and isinstance(actual, T.Array):
        if actual.dtype != declared.dtype or actual.ndim != declared.ndim:
            return None
        if declared.layout == "A" or declared.layout == actual.layout or actual.ndim <= 1 and actual.layout in "CF":
            return SAFE if (declared.layout, declared.readonly) != (actual.layout, actual.readonly) else EXACT
        return None
    if isinstance(declared, T.Tuple) and isinstance(actual, T.Tuple):
        if len(declared.elems) != len(actual.elems):
            return None
        kinds = [conversion(a, d) for a, d in zip(actual.elems, declared.elems)]
        return None if None in kinds else max(kinds, default=EXACT)
    return None


def _rating(argtypes, sig_types):
    if len(argtypes) != len(sig_types):
        return None
    counts = [0, 0, 0, 0]
    for a, d in zip(argtypes, sig_types):
        k = conversion(a, d)
        if k is None:
            return None
        counts[k] += 1
    return (counts[UNSAFE], counts[SAFE], counts[PROMOTE])


def _sig_text(sig_types) -> str:
    return "(" + ", ".join(map(str, sig_types)) + ")"


class NoMatch(TypeError):
    pass


class Ambiguous(TypeError):
    pass


def choose(signatures, argtypes, name: str, ambiguous_ok: bool = False):
    """The ``(return_type, argtypes)`` of ``signatures`` that ``argtypes`` convert to best.

    Raises ``NoMatch`` when none accepts them and ``Ambiguous`` (naming the
    tied candidates) when two are equally good -- unless ``ambiguous_ok``: a call
    of a device function takes the first of them in declaration order, as numba's
    typing does (numba issue 8307), while a launch refuses the tie."""
    argtypes = tuple(argtypes)
    for sig in signatures:
        if tuple(sig[1]) == argtypes:
            return sig
    rated = [(r, sig) for sig in signatures if (r := _rating(argtypes, sig[1])) is not None]
    if not rated:
        sigs = " | ".join(_sig_text(s[1]) for s in signatures)
        raise NoMatch(f"{name}: No matching definition for argument type(s) {_sig_text(argtypes)}; "
                      f"its signatures are {sigs}")
    best = min(r for r, _ in rated)
    winners = [sig for r, sig in rated if r == best]
    if len(winners) > 1 and not ambiguous_ok:
        raise Ambiguous(
            f"{name}: ambiguous call with arguments {_sig_text(argtypes)}: signatures "
            + " and ".join(_sig_text(s[1]) for s in winners)
            + " match equally well; pass arguments of the exact types (e.g. np.float32(x))"
        )
    return winners[0]
