"""Every kernel launch on the cpu target run again on the sim target, from the same inputs, and
the two compared byte for byte: a pytest plugin (``-p sim_shadow``) and a context manager.

A launch's array arguments (numpy arrays, device arrays, tuples of them) are copied before the cpu
runs; after it the sim runs the same kernel and configuration on the copies; every array argument
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
import json

import numpy as np

MAX_THREADS = 1 << 15
PER_KERNEL = 3

_state = {"rows": None, "where": "", "counts": {}}


class _Skip(Exception):
    pass


def _snapshot(a):
    if isinstance(a, np.ndarray):
        return a.copy(order="K")  # the same layout: the same argument type
    if hasattr(a, "copy_to_host") and hasattr(a, "_host_view"):
        return a.copy_to_host()
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return tuple(_snapshot(v) for v in a)
    if isinstance(a, (bool, int, float, complex, np.generic)) or a is None:
        return a
    raise _Skip(f"an argument of type {type(a).__name__}")


def _arrays(a):
    """The host arrays of one argument (after the launch), flattened out of tuples."""
    if isinstance(a, np.ndarray):
        return [a]
    if hasattr(a, "copy_to_host") and hasattr(a, "_host_view"):
        return [a.copy_to_host()]
    if isinstance(a, tuple):
        return [x for v in a for x in _arrays(v)]
    return []


def payload(a: np.ndarray) -> bytes:
    """The bytes of ``a``'s values: a record's fields, not the padding between them (which a
    compiled store of a whole record may fill with anything)."""
    if a.dtype.names:
        return b"".join(payload(np.ascontiguousarray(a[f])) for f in a.dtype.names)
    return np.ascontiguousarray(a).tobytes()


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
            snap = [_snapshot(a) for a in args]
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
            row.update(status="differs" if bad else "same", detail=f"arrays {bad}" if bad else "")
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
