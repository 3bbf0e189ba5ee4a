"""Collect the core suite's Python kernels and compile each for AMDGPU archs.

The core suite is every Python-source kernel that tests/codegen/cpu/test_cpu_kernels.py,
tests/frontend/test_frontend_e2e.py, tests/codegen/cpu/test_codegen_semantics.py, tests/lang/test_numerics_semantics.py and the samples
(samples/*.py) compile for the cpu target. Rather than copying those kernels,
this module runs them -- in its own process, since it patches pykern -- and
records every (kernel function, argument types, options) the frontend is asked
to lower. Each distinct (fingerprint, signature, options) is then compiled with
``pykern.compile`` for every arch asked, and the code objects and pykern's own
facts about them (flat parameters, parsed metadata) are written to a directory
for an independent checker (tests/codegen/amdgpu/test_amdgpu_core_suite.py, llvm-readelf-22).

Run as a script::

    python tests/core_kernels.py [--suite=core|broad|all] OUTDIR gfx942 gfx1100 ...

writes ``OUTDIR/<kernel id>.<arch>.hsaco`` and ``OUTDIR/manifest.json``.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: The test modules whose Python kernels form the core suite.
CORE_TEST_MODULES = ["tests/codegen/cpu/test_cpu_kernels.py", "tests/frontend/test_frontend_e2e.py", "tests/codegen/cpu/test_codegen_semantics.py",
                     "tests/lang/test_numerics_semantics.py"]

#: A second, broader list: the test modules of features added after the core suite
#: (raise/assert, complex, float16, random, printing, slices, reductions, local
#: functions, datetimes, ...), compiled for fewer archs (``--suite broad``; no samples).
#: Chosen so that running them on cpu stays fast: the whole-tests sweep over every
#: module is ``--suite all`` (tests/codegen/amdgpu/test_amdgpu_core_suite.py, marked slow).
BROAD_TEST_MODULES = ["tests/frontend/test_optional_args.py", "tests/lang/test_lang_globals.py", "tests/lang/test_random.py",
                      "tests/lang/test_np_alloc.py", "tests/lang/test_barriers.py", "tests/numba_parity/test_numba_doc_examples.py",
                      "tests/lang/test_datetime.py", "tests/numba_parity/test_numpy_ufunc_parity.py", "tests/lang/test_fp16.py",
                      "tests/lang/test_lang_calls.py", "tests/frontend/test_raise_assert.py", "tests/lang/test_complex.py"]
#: pytest arguments of each suite's run besides its modules: tests named for amdgpu
#: compile for it themselves, and the disk-cache test runs its kernel in a child
#: process (no cpu kernel recorded here either way), so the broad run leaves them out
SUITE_PYTEST_ARGS = {"broad": ["-k", "not amdgpu and not disk_cache"]}

#: Modules ``--suite all`` leaves out: they compile no cpu kernels in-process (they
#: test the cache, the HIP runtime, notebooks, the CLI, processes), they check amdgpu
#: compilation of their kernels themselves (the fuzzer's programs; the samples are in
#: the core suite), or they are this very check.
ALL_SUITE_SKIP = ("test_amdgpu_core_suite.py", "test_dask_", "test_cache_", "test_lifetime_", "test_notebook_",
                  "test_preload.py", "test_benchmarks_smoke.py", "test_exec_sources.py", "test_native_guard.py",
                  "test_compile_time_paths.py", "test_first_call_paths.py", "test_cpu_warm_start.py",
                  "test_hip_", "test_memory_hip.py", "test_robust_cache_perms.py", "test_robust_interrupt.py",
                  "test_robust_limits.py", "test_architecture_layers.py", "test_architecture_errors.py",
                  "test_robust_fuzz.py", "test_samples.py", "test_cli.py")


def suite_modules(suite: str) -> list:
    """The test modules of ``suite``: "core", "broad" or "all" (every tests/test_*.py
    that compiles cpu kernels in-process)."""
    if suite == "core":
        return list(CORE_TEST_MODULES)
    if suite == "broad":
        return list(BROAD_TEST_MODULES)
    if suite == "all":
        names = sorted(os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(HERE) for f in fs
                       if f.startswith("test_") and f.endswith(".py"))
        return [n for n in names if not any(os.path.basename(n).startswith(p) for p in ALL_SUITE_SKIP)]
    raise ValueError(f"unknown suite {suite!r}: core, broad or all")


#: Small sizes for the samples' ``main`` (only argument *types* matter here);
#: a sample missing from this table runs with its defaults.
SAMPLE_ARGS = {
    "heat2d": dict(n=32, steps=2),
    "histogram": dict(n=4096),
    "mandelbrot": dict(w=32, h=32, max_iter=20),  # ``out`` is added below
    "matmul": dict(n=32),
    "monte_carlo_pi": dict(blocks=8, per_thread=256),
    "nbody": dict(n=64),
    "reduction": dict(n=4096),
    "saxpy": dict(n=4096),
    "scan": dict(n=4096),
}

#: samples whose main() does not run here, and why
SKIP_SAMPLES = {"dask_heat2d": "starts a dask LocalCluster (test_samples and tests/test_dask_*.py run it)"}

#: CompileOptions fields that are also @jit options and change amdgpu code
#: (``wave_size`` is not one: on amdgpu the arch decides it).
AMDGPU_OPTIONS = ("debug", "fastmath", "opt", "max_block_size", "max_registers")


class Recorder:
    """Hooks pykern so that every kernel the cpu target compiles is remembered.

    ``frontend.compile_ir`` notes which function and argument types a typed-IR
    module came from; ``CpuTarget.compile`` records it, with the options it
    was compiled with, once it compiled (so a test that expects a
    CompileError adds nothing)."""

    def __init__(self):
        self.seen = []  # (pyfunc, argtypes tuple, options dict, origin)
        self.origin = "?"
        self.active = True
        self._pending = {}  # id(module) -> (module, pyfunc, argtypes)

    def install(self):
        import pykern.frontend as frontend
        from pykern.codegen.cpu.target import CpuTarget
        from pykern.codegen.target_interface import CompileOptions

        real_compile_ir = frontend.compile_ir
        real_cpu_compile = CpuTarget.compile
        defaults = CompileOptions()
        rec = self

        def compile_ir(pyfunc, argtypes, *, is_kernel=True, debug=False):
            module = real_compile_ir(pyfunc, argtypes, is_kernel=is_kernel, debug=debug)
            if is_kernel and rec.active:
                fn = pyfunc.py_func if hasattr(pyfunc, "py_func") and not hasattr(pyfunc, "__code__") else pyfunc
                rec._pending[id(module)] = (module, fn, tuple(argtypes))
            return module

        def cpu_compile(self, module, options=None):
            art = real_cpu_compile(self, module, options)
            entry = rec._pending.pop(id(module), None)
            if entry is not None and entry[0] is module:
                used = options or defaults
                opts = {k: getattr(used, k) for k in AMDGPU_OPTIONS if getattr(used, k) != getattr(defaults, k)}
                rec.seen.append((entry[1], entry[2], opts, rec.origin))
            return art

        frontend.compile_ir = compile_ir
        CpuTarget.compile = cpu_compile


class _OriginPlugin:
    """Names the test that compiled each kernel (for failure messages)."""

    def __init__(self, rec):
        self.rec = rec

    def pytest_runtest_setup(self, item):
        self.rec.origin = item.nodeid


def run_core_tests(rec: Recorder, modules=None, extra=()) -> int:
    import pytest

    os.chdir(ROOT)
    args = ["-q", "-p", "no:cacheprovider", "--no-header", "-W", "ignore::pytest.PytestUnraisableExceptionWarning",
            *extra, *(CORE_TEST_MODULES if modules is None else modules)]
    return int(pytest.main(args, plugins=[_OriginPlugin(rec)]))


def run_samples(rec: Recorder, tmpdir: str) -> dict:
    """Run every sample's main() at a small size (its own numpy check still
    passes there); returns {sample: error text} for samples that failed."""
    import importlib

    sdir = os.path.join(ROOT, "samples")
    sys.path.insert(0, sdir)
    problems = {}
    for f in sorted(os.listdir(sdir)):
        if not f.endswith(".py") or f.startswith("_"):
            continue
        name = f[:-3]
        if name in SKIP_SAMPLES:
            continue
        rec.origin = f"samples/{f}"
        kw = dict(SAMPLE_ARGS.get(name, {}))
        try:
            mod = importlib.import_module(name)
            if "out" in inspect.signature(mod.main).parameters:
                kw["out"] = os.path.join(tmpdir, f"{name}.out")
            mod.main(**kw)
        except SystemExit as e:  # report() on a mismatch
            if e.code not in (0, None):
                problems[name] = f"SystemExit({e.code})"
        except Exception:
            problems[name] = traceback.format_exc(limit=3)
    return problems


def _kernel_key(fn, argtypes, opts):
    from pykern.frontend.fingerprint import fingerprint

    try:
        fp = json.dumps(fingerprint(fn), sort_keys=True, default=str)
    except Exception:  # no source file: fall back to the code object
        fp = repr(fn.__code__.co_code) + repr(fn.__code__.co_consts)
    return (fp, tuple(map(str, argtypes)), tuple(sorted(opts.items())))


def unique_kernels(seen):
    """Deduplicate (source/fingerprint, signature, options); keep the first origin."""
    out, index = [], {}
    for fn, argtypes, opts, origin in seen:
        k = _kernel_key(fn, argtypes, opts)
        if k in index:
            out[index[k]]["origins"].append(origin)
            continue
        index[k] = len(out)
        out.append(dict(fn=fn, argtypes=argtypes, opts=opts, origins=[origin]))
    return out


def _signature(argtypes):
    """``void(...)`` text for the argument types; checked to parse back to them."""
    from pykern.frontend import parse_signature

    text = "void(" + ", ".join(map(str, argtypes)) + ")"
    try:
        same = list(parse_signature(text)[1]) == list(argtypes)
    except Exception:  # records, named tuples, datetimes: their str is not signature text
        same = False
    return text if same else tuple(argtypes)  # pykern.compile also takes a tuple of types


def _uses_local_arrays(fn, argtypes, opts):
    from pykern.frontend import compile_ir
    from pykern.frontend import ir

    mod = compile_ir(fn, list(argtypes), debug=bool(opts.get("debug")))
    found = []

    def walk(obj):
        if isinstance(obj, ir.AllocArray) and obj.space == "local":
            found.append(obj)
        if isinstance(obj, (list, tuple)):
            for x in obj:
                walk(x)
        elif isinstance(obj, (ir.Expr, ir.Stmt)):
            for name in ir.fields(obj):
                if name not in ("type", "loc"):
                    walk(getattr(obj, name))

    for f in [mod.kernel, *mod.functions.values()]:
        walk(f.body)
    return bool(found)


def _compile_jobs(kernels, jobs, outdir):
    """Compile each (kernel index, arch) of ``jobs`` with ``pykern.compile``;
    returns {"index arch": facts or {"error": text}}."""
    import pykern
    from pykern.dispatch.dispatcher import Dispatcher

    out = {}
    for ki, arch in jobs:
        k = kernels[ki]
        try:
            ck = pykern.compile(Dispatcher(k["fn"], None, False, **k["opts"]), _signature(k["argtypes"]), arch=arch)
        except Exception as e:
            out[f"{ki} {arch}"] = dict(error=f"{type(e).__name__}: {e}"[:2000])
            continue
        path = os.path.join(outdir, f"{k['id']}.{arch}.hsaco")
        with open(path, "wb") as f:
            f.write(ck.code_object)
        md = ck.metadata or {}
        out[f"{ki} {arch}"] = dict(
            file=path, symbol=ck.name,
            params=[[p.name, p.offset, p.size, p.role] for p in ck.artifacts[0].params],
            md_private=md.get(".private_segment_fixed_size"), md_symbol=md.get(".symbol"),
            resources={n: v for n, v in (ck.resources or {}).items() if isinstance(v, (int, float, str, bool))},
        )
    return out


def _parallel(kernels, jobs, outdir, workers):
    """Run ``_compile_jobs`` split over ``workers`` processes forked from this
    one (the kernels are live function objects, possibly closures, so they are
    not sent anywhere: a fork shares them)."""
    if workers <= 1 or not hasattr(os, "fork"):
        return _compile_jobs(kernels, jobs, outdir)
    sys.stdout.flush()
    sys.stderr.flush()
    children = {}
    for w in range(1, workers):
        part = os.path.join(outdir, f"part{w}.json")
        pid = os.fork()
        if pid == 0:  # child: compile its share, write it, leave without running atexit hooks
            code = 0
            try:
                with open(part, "w") as f:
                    json.dump(_compile_jobs(kernels, jobs[w::workers], outdir), f)
            except BaseException:
                traceback.print_exc()
                code = 3
            finally:
                os._exit(code)
        children[pid] = (w, part)
    results = _compile_jobs(kernels, jobs[0::workers], outdir)
    for pid, (w, part) in children.items():
        _, status = os.waitpid(pid, 0)
        if status == 0:
            with open(part) as f:
                results.update(json.load(f))
            os.unlink(part)
        else:
            for ki, arch in jobs[w::workers]:
                results[f"{ki} {arch}"] = dict(error=f"compile worker died (wait status {status})")
    return results


def compile_all(kernels, archs, outdir, workers=1):
    """Manifest entries: one per kernel, with per-arch facts or errors."""
    entries = []
    for i, k in enumerate(kernels):
        fn = k["fn"]
        k["id"] = f"k{i:03d}_{fn.__name__}"
        entry = dict(id=k["id"], name=fn.__name__, module=getattr(fn, "__module__", None) or "?",
                     qualname=getattr(fn, "__qualname__", fn.__name__), signature=str(_signature(k["argtypes"])),
                     options=k["opts"], origins=k["origins"][:3], n_origins=len(k["origins"]), archs={})
        try:
            entry["uses_local_arrays"] = _uses_local_arrays(fn, k["argtypes"], k["opts"])
        except Exception as e:
            entry["uses_local_arrays"] = None
            entry["frontend_error"] = repr(e)
        entries.append(entry)
    jobs = [(ki, arch) for ki in range(len(kernels)) for arch in archs]
    results = _parallel(kernels, jobs, outdir, workers)
    for ki, arch in jobs:
        entries[ki]["archs"][arch] = results[f"{ki} {arch}"]
    return entries


def main(argv):
    suite = "core"
    if argv and argv[0].startswith("--suite="):
        suite, argv = argv[0].split("=", 1)[1], argv[1:]
    outdir, archs = argv[0], argv[1:]
    os.makedirs(outdir, exist_ok=True)
    os.environ["PYKERN_TARGET"] = "cpu"
    os.environ["PYKERN_CACHE"] = "off"  # every compile goes through the frontend (and is recorded)
    sys.path.insert(0, HERE)
    t0 = time.perf_counter()
    rec = Recorder()
    rec.install()
    rc = run_core_tests(rec, suite_modules(suite), SUITE_PYTEST_ARGS.get(suite, ()))
    n_tests = len(rec.seen)
    problems = run_samples(rec, outdir) if suite == "core" else {}
    t1 = time.perf_counter()
    rec.active = False
    kernels = unique_kernels(rec.seen)
    workers = int(os.environ.get("PYKERN_CORE_SUITE_WORKERS") or min(2, os.cpu_count() or 1))
    entries = compile_all(kernels, archs, outdir, workers)
    t2 = time.perf_counter()
    manifest = dict(suite=suite, test_modules=suite_modules(suite), pytest_rc=rc, recorded=len(rec.seen),
                    recorded_from_tests=n_tests, sample_problems=problems,
                    modules=sorted({e["module"] for e in entries}), workers=workers,
                    kernels=entries, collect_seconds=t1 - t0, compile_seconds=t2 - t1,
                    cpu_seconds=sum(os.times()[:4]))
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
