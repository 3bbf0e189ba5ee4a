"""Compile, run and judge generated programs (see ``gen``).

In-process: ``check_program(prog)`` returns a result dict whose ``status``
starts with ``ok`` or ``FAIL``. Crash-isolated: ``run_batches(seed, n)``
runs programs in worker subprocesses (``python run.py worker ...``) that
print one JSON line per program, so a segfault, an LLVM abort or a hang is
seen as a crash of the program that was running, and the batch goes on
with the next program in a fresh worker.

The reference runs the program's own source as plain Python, once per
thread, after one AST rewrite: every int/float literal, ``len``/``.size``/
``.shape``, ``range`` item, ``int()``, ``round()`` and math result becomes a
numpy int64/float64 scalar, so integer arithmetic wraps at 64 bits exactly
as in the kernel, while ``//``, ``%`` and ``**`` keep Python semantics.

Example::

    python tests/fuzz/run.py worker --seed 1 --start 0 --count 50
"""

from __future__ import annotations

import ast
import json
import linecache
import math
import os
import re
import subprocess
import sys
import threading
import time
import types
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))

from fuzz import gen  # noqa: E402

SENTINEL_I = -777
SENTINEL_F = -777.0


# ------------------------------------------------------------------ loading
def load(prog: gen.Program):
    """Exec ``prog.source`` as a module registered in linecache (so
    ``inspect.getsource`` works) and return its kernel function (plain, not jitted)."""
    lines = prog.source.splitlines(True)
    linecache.cache[prog.filename] = (len(prog.source), None, lines, prog.filename)
    mod = types.ModuleType(f"pykern_fuzz_{prog.ident}")
    mod.__file__ = prog.filename
    code = compile(prog.source, prog.filename, "exec")
    exec(code, mod.__dict__)
    sys.modules[mod.__name__] = mod
    return getattr(mod, prog.entry)


def unload(prog: gen.Program):
    linecache.cache.pop(prog.filename, None)
    sys.modules.pop(f"pykern_fuzz_{prog.ident}", None)


# ------------------------------------------------------------------ reference
class _Numpyfy(ast.NodeTransformer):
    """Literals and sizes -> numpy scalars; imports dropped (the reference
    environment provides ``math``, ``np`` and a fake ``cuda``)."""

    def visit_Constant(self, node):
        if type(node.value) is int:
            return ast.copy_location(ast.Call(ast.Name("_I", ast.Load()), [node], []), node)
        if type(node.value) is float:
            return ast.copy_location(ast.Call(ast.Name("_F", ast.Load()), [node], []), node)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr in ("size", "shape", "ndim") and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Call(ast.Name("_S", ast.Load()), [node], []), node)
        return node

    def visit_Import(self, node):
        return ast.Pass()


def _S(v):
    return tuple(np.int64(q) for q in v) if isinstance(v, tuple) else np.int64(v)


def _f1(fn):
    def call(v):
        try:
            return np.float64(fn(float(v)))
        except ValueError:
            return np.float64("nan")
        except OverflowError:
            return np.float64("inf")

    return call


def _to_int(fn, v):
    """math.floor/ceil/trunc as Python: of an integer exact (never through float64)."""
    return np.int64(fn(int(v) if isinstance(v, (int, np.integer)) else float(v)))


def _f2(fn):
    """A two-argument math function in float64 (numba.cuda's type for float32 with uint16), as
    numpy's loop computes it: the C library's, as the kernel's (Python's own math.hypot can be
    an ulp away, which ``x % hypot(...)`` of a large ``x`` magnifies)."""
    return lambda a, b: np.float64(fn(np.float64(a), np.float64(b)))


def _float(v):
    """``float()`` as numba types it: a float32 stays float32, anything else is float64."""
    return v if isinstance(v, np.float32) else np.float64(v)


_FAKE_MATH = types.SimpleNamespace(
    sin=_f1(math.sin), cos=_f1(math.cos), sqrt=_f1(math.sqrt), exp=_f1(math.exp), log=_f1(math.log),
    fabs=_f1(math.fabs), atan=_f1(math.atan), tanh=_f1(math.tanh), hypot=_f2(np.hypot),
    atan2=_f2(np.arctan2), copysign=_f2(np.copysign),
    floor=lambda v: _to_int(math.floor, v), ceil=lambda v: _to_int(math.ceil, v), trunc=lambda v: _to_int(math.trunc, v),
)


class _FakeCuda:
    def __init__(self):
        self.tid = 0

    def grid(self, ndim):
        return np.int64(self.tid)

    def jit(self, *a, **k):
        if a and callable(a[0]):
            return a[0]
        return lambda f: f


def _range(*a):
    return (np.int64(v) for v in range(*[int(q) for q in a]))


def reference_outputs(prog: gen.Program, nthreads_launched: int, x, y):
    """(out_i, out_f, ok_mask): the program run as Python per thread.
    ``ok_mask[t]`` is False where Python raised (that thread is not compared)."""
    tree = _Numpyfy().visit(ast.parse(prog.source))
    ast.fix_missing_locations(tree)
    fake = _FakeCuda()
    env = {
        "_I": np.int64, "_F": np.float64, "_S": _S, "np": np, "math": _FAKE_MATH, "cuda": fake,
        "range": _range, "len": lambda v: np.int64(len(v)), "int": lambda v: np.int64(int(v)),
        "float": _float, "round": lambda v: np.int64(round(float(v))),
    }
    exec(compile(tree, prog.filename + "-ref", "exec"), env)
    fn = env[prog.entry]
    n = len(x)
    out_i = np.full(n, SENTINEL_I, np.int64)
    out_f = np.full(n, SENTINEL_F, np.float64)
    ok = np.ones(n, bool)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in range(nthreads_launched):
            fake.tid = t
            try:
                fn(out_i, out_f, x, y)
            except (ArithmeticError, ValueError):
                if t < n:
                    ok[t] = False
    return out_i, out_f, ok


# ------------------------------------------------------------------ judging
def error_kind(msg: str) -> str:
    """A CompileError message reduced to its kind: names, numbers and types elided."""
    m = msg.splitlines()[0]
    m = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "_", m)
    m = re.sub(r"\b(u?int\d+|float\d+|boolean|bool|void)\b(\[[^\]]*\])?", "T", m)
    m = re.sub(r"(Uni)?Tuple\([^)]*\)|tuple\([^)]*\)", "T", m)
    m = re.sub(r"\b\d+\b", "N", m)
    m = re.sub(r"\(.*\)", "(..)", m)
    return " ".join(m.split()[:7])


def inputs_for(prog: gen.Program):
    import random

    r = random.Random(prog.ident)
    n = prog.nthreads
    x = np.array([r.choice([r.randint(-50, 100), r.randint(-50, 100), r.randint(-(2**63), 2**63 - 1)])
                  for _ in range(n)], np.int64)
    y = np.array([r.randint(-80, 80) * 0.25 for _ in range(n)], np.float64)
    block = r.choice([1, 32, 64, 256]) if n > 1 else 1
    grid = (n + block - 1) // block + r.randint(0, 1)
    return x, y, grid, block


def floats_match(a, b):
    both_nan = np.isnan(a) & np.isnan(b)
    close = np.isclose(a, b, rtol=1e-9, atol=1e-12) | (a == b)
    return both_nan | close


def check_program(prog: gen.Program, options=None, reference=None, amdgpu=False) -> dict:
    """Compile (and, if it compiles, run and compare) one program.
    ``reference`` replaces ``reference_outputs`` (to test the judge itself);
    ``amdgpu``: a program that ran is also compiled for gfx942 (code object only)."""
    import pykern
    from pykern.core.errors import CompileError, PykernError

    res = {"id": prog.ident, "kind": prog.kind, "mutation": prog.mutation}
    try:
        fn = load(prog)
    except SyntaxError as e:
        res["status"] = "skip_python_syntax"
        res["detail"] = str(e)
        return res
    try:
        opts = dict(options or {})
        opts.setdefault("cache", False)
        k = pykern.jit(fn, **opts)
        x, y, grid, block = inputs_for(prog)
        out_i = np.full(len(x), SENTINEL_I, np.int64)
        out_f = np.full(len(x), SENTINEL_F, np.float64)
        try:
            k[grid, block](out_i, out_f, x, y)
        except CompileError as e:
            res["error_kind"] = error_kind(e.msg)
            res["message"] = str(e)
            res["line"] = e.line
            return _judge_rejection(prog, e, res)
        except PykernError as e:
            res["status"] = "FAIL_other_pykern_error"
            res["message"] = f"{type(e).__name__}: {e}"
            return res
        except Exception as e:  # noqa: BLE001 -- any non-pykern exception is the finding
            import traceback

            res["status"] = "FAIL_internal_exception"
            res["message"] = f"{type(e).__name__}: {e}"
            res["traceback"] = traceback.format_exc()[-1500:]
            return res
        if prog.kind == "invalid":
            res["status"] = "FAIL_accepted_invalid"
            return res
        ri, rf, ok = (reference or reference_outputs)(prog, grid * block, x, y)
        bad_i = (ri != out_i) & ok
        bad_f = ~floats_match(rf, out_f) & ok
        if bad_i.any() or bad_f.any():
            t = int(np.flatnonzero(bad_i | bad_f)[0])
            res["status"] = "FAIL_mismatch"
            res["message"] = (f"thread {t}: x={x[t]!r} y={y[t]!r} kernel=({out_i[t]!r}, {out_f[t]!r}) "
                              f"python=({ri[t]!r}, {rf[t]!r}); grid={grid} block={block}")
            return res
        res["status"] = "ok_match"
        res["ref_skipped_threads"] = int((~ok).sum())
        if amdgpu:
            _check_amdgpu(fn, opts, res)
        return res
    finally:
        unload(prog)


_SIG = "void(int64[::1], float64[::1], int64[::1], float64[::1])"


def _check_amdgpu(fn, opts, res):
    import pykern

    opts = {k: v for k, v in opts.items() if k in ("opt", "debug", "fastmath")}
    try:
        co = pykern.compile(fn, _SIG, arch="gfx942", **opts)
        if bytes(co.code_object[:4]) != b"\x7fELF":
            res["status"] = "FAIL_amdgpu_not_elf"
        res["amdgpu"] = True
    except Exception as e:  # noqa: BLE001 -- it ran on the cpu, so any error here is a finding
        res["status"] = "FAIL_amdgpu_" + type(e).__name__
        res["message"] = str(e)[:1500]


def _judge_rejection(prog, e, res):
    if e.file != prog.filename or e.line is None:
        res["status"] = "FAIL_unlocated_error"
        return res
    nlines = prog.source.count("\n")
    if not 1 <= e.line <= nlines or not e.source_line or "^" not in str(e):
        res["status"] = "FAIL_bad_location"
        return res
    if prog.kind == "valid":
        res["status"] = "FAIL_rejected_valid"
        return res
    if prog.expect_line is not None and prog.kind == "invalid" and e.line != prog.expect_line:
        res["status"] = "FAIL_wrong_line"
        res["expect_line"] = prog.expect_line
        return res
    res["status"] = "ok_rejected"
    return res


# ------------------------------------------------------------------ worker
def _options_for(index: int):
    # alternate optimisation levels and bounds checking: neither may change results
    return [{}, {"opt": 0}, {"debug": True}, {"opt": 1}][index % 4]


#: every n-th program that runs on the cpu is also compiled for gfx942 (0.25 s each)
AMDGPU_EVERY = int(os.environ.get("PYKERN_FUZZ_AMDGPU_EVERY", "40"))


def worker(seed: int, start: int, count: int, hang_s: float = 30.0) -> None:
    """Check programs start..start+count-1 of ``seed``; one JSON line each on stdout.
    A program running longer than ``hang_s`` ends the worker with a "hang" line."""
    os.environ.setdefault("PYKERN_TARGET", "cpu")
    os.environ["PYKERN_CACHE"] = "off"
    import pykern

    pykern.set_target("cpu")
    state = {"k": None, "t": time.monotonic()}

    def watchdog():
        while True:
            time.sleep(0.5)
            if state["k"] is not None and time.monotonic() - state["t"] > hang_s:
                sys.stdout.write(json.dumps({"hang": state["k"]}) + "\n")
                sys.stdout.flush()
                os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()
    for k in range(start, start + count):
        prog = gen.batch(seed, k, 1)[0]
        sys.stdout.write(json.dumps({"start": k}) + "\n")
        sys.stdout.flush()
        state["t"], state["k"] = time.monotonic(), k
        res = check_program(prog, _options_for(k), amdgpu=(k % AMDGPU_EVERY == 0))
        state["k"] = None
        res["index"] = k
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()


def run_range(seed: int, start: int, count: int, timeout: float = 600.0) -> list[dict]:
    """Programs start..start+count-1 in worker subprocesses; a crashed or hung
    worker yields a ``CRASH``/``HANG`` result for its program and a new worker
    continues after it."""
    results: list[dict] = []
    k = start
    end = start + count
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    while k < end:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "worker", str(seed), str(k), str(end - k)],
                           capture_output=True, text=True, timeout=timeout, env=env)
        started = None
        for line in p.stdout.splitlines():
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if "start" in d:
                started = d["start"]
            elif "hang" in d:
                results.append({"index": d["hang"], "id": f"s{seed}_{d['hang']}", "status": "FAIL_HANG",
                                "mutation": gen.batch(seed, d["hang"], 1)[0].mutation})
                started = None
                k = d["hang"] + 1
            else:
                results.append(d)
                started = None
                k = d["index"] + 1
        if p.returncode != 0 and started is not None:
            results.append({"index": started, "id": f"s{seed}_{started}", "status": "FAIL_CRASH",
                            "mutation": gen.batch(seed, started, 1)[0].mutation,
                            "message": f"worker exit {p.returncode}; stderr tail: {p.stderr[-800:]}"})
            k = started + 1
        elif p.returncode != 0 and not any(r.get("status") == "FAIL_HANG" and r["index"] == k - 1 for r in results):
            raise RuntimeError(f"fuzz worker failed outside a program (exit {p.returncode}): {p.stderr[-2000:]}")
        elif p.returncode == 0:
            break
    return results


def run_parallel(seed: int, count: int, workers: int = 2) -> list[dict]:
    """``count`` programs of ``seed`` split over ``workers`` concurrent worker chains."""
    from concurrent.futures import ThreadPoolExecutor

    share = [(count * w // workers, count * (w + 1) // workers) for w in range(workers)]
    with ThreadPoolExecutor(workers) as ex:
        parts = list(ex.map(lambda ab: run_range(seed, ab[0], ab[1] - ab[0]), share))
    return [r for part in parts for r in part]


def summarize(results: list[dict]) -> dict:
    from collections import Counter

    status = Counter(r["status"] for r in results)
    kinds = Counter(r["error_kind"] for r in results if r.get("error_kind"))
    return {"programs": len(results), "status": dict(status), "error_kinds": dict(kinds),
            "crashes": status.get("FAIL_CRASH", 0), "hangs": status.get("FAIL_HANG", 0)}


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "show":
        p = gen.batch(int(sys.argv[2]), int(sys.argv[3]), 1)[0]
        print(f"# kind={p.kind} mutation={p.mutation} expect_line={p.expect_line} nthreads={p.nthreads}")
        print(p.source)
        if len(sys.argv) > 4:
            import pykern

            pykern.set_target("cpu")
            print(json.dumps(check_program(p, _options_for(int(sys.argv[3]))), indent=1))
    else:
        seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
        t = time.time()
        res = run_parallel(seed, n)
        for r in res:
            if r["status"].startswith("FAIL"):
                print(json.dumps(r))
        print(json.dumps(summarize(res), indent=1))
        print(f"{time.time() - t:.1f}s")
