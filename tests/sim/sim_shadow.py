"""Every kernel launch on the cpu target run again on the sim target, from the same inputs, and
the two compared byte for byte: a pytest plugin (``-p sim_shadow``) and a context manager.

A launch's array arguments (numpy arrays, device arrays, tuples of them) are copied before the cpu
runs (arguments that share memory share it in the copies too); after it the sim runs the same kernel and configuration on the copies; every array argument
must then hold the same bytes on both. The program itself goes on with the cpu target's results
(the sim's copies are dropped). A launch is not shadowed (and says why) when an argument is of
another kind (a pointer, ``cuda.In``: memory the sim would change a second time), when it has more
than ``MAX_THREADS`` threads, or after ``PER_KERNEL`` launches of one kernel.

``--sim-shadow-report=PATH`` writes what was seen as JSON: one row per launch
``{"where", "kernel", "status", "detail"}``, status "same", "differs", "sim error" or "skipped".

Example::

    with shadowing() as rows:
        saxpy[4, 64](a, x, y, out)
    assert all(r["status"] == "same" for r in rows)
"""

from __future__ import annotations

import contextlib
import ctypes
import json

import numpy as np

MAX_THREADS = 1 << 15
PER_KERNEL = 3

_state = {"rows": None, "where": "", "counts": {}}


class _Skip(Exception):
    pass


def _extent(a: np.ndarray) -> tuple:
    lo = hi = a.ctypes.data
    for n, st in zip(a.shape, a.strides):
        lo, hi = (lo + (n - 1) * st, hi) if st < 0 else (lo, hi + (n - 1) * st)
    return lo, hi + a.itemsize


def _snapshot(args) -> list:
    """Copies of ``args``' arrays (device arrays as numpy arrays) sharing memory as the originals
    do: overlapping arrays are views of one copy of the bytes they span."""
    arrays = [a for a in _arrays(args, copy=False) if a.size]
    spans = sorted((_extent(a) for a in arrays))
    groups = []  # merged [lo, hi) spans, each copied once
    for lo, hi in spans:
        if groups and lo < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], hi)
        else:
            groups.append([lo, hi])
    copies = [(lo, hi, np.frombuffer(bytearray(ctypes.string_at(lo, hi - lo)), np.uint8)) for lo, hi in groups]

    def copy_of(a):
        if not a.size:
            return a.copy()
        lo = _extent(a)[0]
        for glo, ghi, buf in copies:
            if glo <= lo < ghi:
                return np.ndarray(a.shape, a.dtype, buffer=buf, offset=a.ctypes.data - glo, strides=a.strides)
        raise AssertionError("an array outside every span")

    def rebuild(a):
        if isinstance(a, np.ndarray):
            return copy_of(a)
        if hasattr(a, "copy_to_host") and hasattr(a, "_host_view"):
            return copy_of(a._host_view())
        if isinstance(a, tuple):
            vals = tuple(rebuild(v) for v in a)
            return type(a)(*vals) if hasattr(a, "_fields") else vals  # a namedtuple as itself
        if isinstance(a, (bool, int, float, complex, np.generic)) or a is None:
            return a
        raise _Skip(f"an argument of type {type(a).__name__}")

    return [rebuild(a) for a in args]


def _arrays(a, copy=True):
    """The host arrays of one argument (after the launch), flattened out of tuples."""
    if isinstance(a, np.ndarray):
        return [a]
    if hasattr(a, "copy_to_host") and hasattr(a, "_host_view"):
        return [a.copy_to_host() if copy else a._host_view()]
    if isinstance(a, (tuple, list)):
        return [x for v in a for x in _arrays(v, copy)]
    return []


def payload(a: np.ndarray) -> bytes:
    """The bytes of ``a``'s values: a record's fields, not the padding between them (which a
    compiled store of a whole record may fill with anything); every NaN as one NaN (LLVM leaves
    the sign and payload of a NaN an operation makes unspecified: it may swap the operands of a
    commutative one, whose first NaN x86 keeps)."""
    if a.dtype.names:
        return b"".join(payload(np.ascontiguousarray(a[f])) for f in a.dtype.names)
    a = np.ascontiguousarray(a)
    if a.dtype.kind in "fc" and np.isnan(a).any():
        parts = a.view(a.real.dtype) if a.dtype.kind == "c" else a.copy()
        parts = parts.copy()
        parts[np.isnan(parts)] = np.nan
        return parts.tobytes()
    return a.tobytes()


def _first_difference(c: np.ndarray, s: np.ndarray) -> str:
    if c.dtype.names or c.shape != s.shape:
        return "records" if c.dtype.names else f"shapes {c.shape} {s.shape}"
    cb, sb = c.reshape(-1).view(np.uint8).reshape(c.size, -1), s.reshape(-1).view(np.uint8).reshape(s.size, -1)
    k = int(np.nonzero((cb != sb).any(1))[0][0])
    return f"first at flat index {k}: cpu {c.reshape(-1)[k]!r}, sim {s.reshape(-1)[k]!r}"


def _threads(griddim, blockdim) -> int:
    def n(d):
        d = (d,) if isinstance(d, int) else tuple(d)
        return int(np.prod(d))
    return n(griddim) * n(blockdim)


def _install():
    from pykern import runtime as targets
    from pykern.dispatch.dispatcher import Dispatcher
    from pykern.frontend.types import CPointer

    original = Dispatcher.launch

    def launch(self, args, griddim, blockdim, stream=0, sharedmem=0, _prepared=False, _launcher=None):
        rows = _state["rows"]
        target = targets._chosen[0] if targets._chosen else targets.current_target()
        if rows is None or target != "cpu" or _state.get("busy"):
            return original(self, args, griddim, blockdim, stream, sharedmem, _prepared, _launcher)
        name = f"{getattr(self.py_func, '__module__', '?')}.{self.py_func.__qualname__}"
        row = {"where": _state["where"], "kernel": name, "status": "skipped", "detail": ""}
        try:
            n = _state["counts"].get(name, 0)
            if n >= PER_KERNEL:
                raise _Skip(f"more than {PER_KERNEL} launches")
            if any(isinstance(t, CPointer) for sig in self._signatures or () for t in sig[1]):
                raise _Skip("a raw pointer argument")
            if _threads(griddim, blockdim) > MAX_THREADS:
                raise _Skip(f"{_threads(griddim, blockdim)} threads")
            snap = _snapshot(args)
        except _Skip as e:
            row["detail"] = str(e)
            rows.append(row)
            return original(self, args, griddim, blockdim, stream, sharedmem, _prepared, _launcher)
        _state["counts"][name] = n + 1
        _state["busy"] = True  # launches the kernel makes (extensions, hints) are part of this one
        try:
            result = original(self, args, griddim, blockdim, stream, sharedmem, _prepared, None)
            import pykern

            pykern.synchronize()
            cpu = [x for a in args for x in _arrays(a)]
            saved = list(targets._chosen)
            targets._chosen[:] = ["sim"]
            try:
                original(self, snap, griddim, blockdim, 0, sharedmem, _prepared, None)
            except Exception as e:  # noqa: BLE001 -- reported, the program goes on with the cpu's results
                row.update(status="sim error", detail=f"{type(e).__name__}: {str(e)[:300]}")
                rows.append(row)
                return result
            finally:
                targets._chosen[:] = saved
            sim = [x for a in snap for x in _arrays(a)]
            bad = [k for k, (c, s) in enumerate(zip(cpu, sim)) if payload(c) != payload(s)]
            row.update(status="differs" if bad else "same", arrays=bad,
                       detail=f"arrays {bad}: {_first_difference(cpu[bad[0]], sim[bad[0]])}" if bad else "")
            rows.append(row)
            return result
        finally:
            _state["busy"] = False

    Dispatcher.launch = launch
    return original


@contextlib.contextmanager
def shadowing(where: str = ""):
    """Shadow every cpu launch in the block; yields the list of rows."""
    from pykern.dispatch.dispatcher import Dispatcher

    original = _install()
    rows, _state["rows"], _state["where"], _state["counts"] = [], [], where, {}
    _state["rows"] = rows
    try:
        yield rows
    finally:
        Dispatcher.launch = original
        _state["rows"] = None


# ---------------------------------------------------------------------- the pytest plugin


def pytest_addoption(parser):
    parser.addoption("--sim-shadow-report", default=None, help="write the sim-vs-cpu launch rows here (JSON)")


def pytest_configure(config):
    path = config.getoption("--sim-shadow-report")
    if path:
        _install()
        _state["rows"], _state["path"] = [], path


def pytest_runtest_setup(item):
    _state["where"] = item.nodeid
    _state["counts"] = {}


def pytest_sessionfinish(session):
    path = _state.get("path")
    if path:
        with open(path, "w") as f:
            json.dump(_state["rows"], f, indent=1)
