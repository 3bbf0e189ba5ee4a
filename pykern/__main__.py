"""``python -m pykern`` (also installed as ``pykern``): info, compile, asm, cache.

Examples::

    python -m pykern info
    python -m pykern compile kernels.py:saxpy --signature "void(float32, float32[::1], float32[::1], float32[::1])" \\
        --arch gfx90a,gfx942 -o saxpy.hsaco
    python -m pykern asm kernels.py:saxpy --signature "..." --arch gfx1100
    python -m pykern compile kernels.py:saxpy kernels.py:stencil -s "..." -s "..." --arch gfx90a,gfx942 \\
        -o out/ --export kernels.pkc.tgz
    python -m pykern cache info
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys


def _info(args) -> int:
    import platform

    import pykern

    rows = [("pykern", pykern.__version__), ("python", platform.python_version())]
    try:
        import llvmlite
        import llvmlite.binding as llvm

        rows.append(("llvmlite", f"{llvmlite.__version__} (LLVM {'.'.join(map(str, llvm.llvm_version_info))})"))
    except Exception as e:  # pragma: no cover - llvmlite is a dependency
        rows.append(("llvmlite", f"missing: {e}"))
    from pykern.runtime.hip import library as hip

    ok, reason = hip.available()
    rows.append(("hip", reason))
    if ok:
        from pykern.runtime import device_registry as devices

        for d in devices.list_devices():
            rows.append((f"  device {d.id}", f"{d.name} {d.arch_target_id}"))
    from pykern.core import settings

    chosen = settings.get("PYKERN_TARGET") != "auto"
    rows.append(("target", pykern.current_target() if chosen or ok else "cpu (no usable AMD GPU)"))
    from pykern.codegen.amdgpu import devicelibs
    from pykern.codegen.amdgpu import toolchain

    try:
        rows.append(("ld.lld", " ".join(toolchain.find_lld())))
    except Exception as e:
        rows.append(("ld.lld", "NOT FOUND - " + str(e).splitlines()[0] + " (apt-get install lld-22)"))
    from pykern.codegen import external

    try:  # compiles the C++ kernels link (declare_device, link=)
        exe = external.clang()
        rows.append(("clang", f"{exe} ({external.clang_version(exe)})"))
    except Exception as e:
        rows.append(("clang", "NOT FOUND - " + str(e).splitlines()[0] + " (apt-get install clang-22)"))
    try:
        rows.append(("device libs", devicelibs.find_dir()))
    except Exception as e:
        rows.append(("device libs", "NOT FOUND - " + str(e).splitlines()[0] + " (apt-get install rocm-device-libs)"))
    from pykern.runtime.cache import KernelCache

    c = KernelCache().info()
    state = "off: " + c["disabled_reason"] if c["disabled_reason"] else "on"
    rows.append(("cache", f"{c['directory']} ({state}; {c['entries']} entries, {c['bytes']} bytes)"))
    for k, v in rows:
        print(f"{k:<14} {v}")
    # every setting pykern reads (pykern/core/settings.py), its value and where that came from
    table = settings.rows()
    width = max(len(name) for name, *_ in table)
    print("\nsettings (environment variables; pykern/core/settings.py):")
    for name, value, source, _doc in table:
        print(f"  {name:<{width}}  {value}  [{source}]")
    return 0


def _load_kernel(spec: str):
    """``FILE.py:NAME`` or ``MODULE:NAME`` -> the object NAME.

    A file is imported under its own module name (``kernels.py`` -> ``kernels``,
    its directory first on ``sys.path``), as the program that launches its
    kernels imports it: the module name is part of a kernel's cache key, so
    kernels compiled here are hits there (``--export``)."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise SystemExit(f"pykern: expected FILE.py:KERNEL or MODULE:KERNEL, got {spec!r}")
    if path.endswith(".py") or os.sep in path:
        if not os.path.exists(path):
            raise SystemExit(f"pykern: no such file: {path}")
        mod_name = os.path.splitext(os.path.basename(path))[0]
        loaded = sys.modules.get(mod_name)
        if loaded is not None and os.path.abspath(getattr(loaded, "__file__", "") or "") != os.path.abspath(path):
            # the name is taken (say, math.py): load it privately; its kernels' cache
            # keys then differ from a program's that imports it by that name
            mod_name = "_pykern_cli_" + mod_name
            spec_ = importlib.util.spec_from_file_location(mod_name, path)
            module = importlib.util.module_from_spec(spec_)
            sys.modules[mod_name] = module
            spec_.loader.exec_module(module)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
            module = None
    else:
        mod_name, module = path, None
    try:
        module = module or importlib.import_module(mod_name)
    except ImportError as e:
        raise SystemExit(f"pykern: cannot import {mod_name}: {e}") from None
    try:
        return getattr(module, name)
    except AttributeError:
        raise SystemExit(f"pykern: {path} defines no {name!r}") from None


def _compile(args, want_asm: bool) -> int:
    import pykern

    sigs = args.signature
    if len(sigs) not in (1, len(args.kernel)):
        raise SystemExit(f"pykern: {len(args.kernel)} kernels and {len(sigs)} signatures: give one signature "
                         "for all, or one per kernel in the same order")
    jobs = [(_load_kernel(spec), sigs[0] if len(sigs) == 1 else sigs[i]) for i, spec in enumerate(args.kernel)]
    archs = [a for a in args.arch.split(",") if a]
    opts = {}
    if args.fastmath:
        opts["fastmath"] = True
    if args.code_object_version:
        opts["code_object_version"] = args.code_object_version
    export = getattr(args, "export", None)
    cache = None
    if export:
        from pykern.runtime.cache import default_cache

        cache = default_cache()
        if not cache.enabled:
            raise SystemExit(f"pykern: --export needs the kernel cache: {cache.disabled_reason}")
    import contextlib

    with cache.tracking() if cache is not None else contextlib.nullcontext() as used:
        if _progress_wanted(args):
            for fn, sig in jobs:  # then assembled below from memory
                _compile_with_progress(pykern, fn, sig, archs, opts)
        kernels = [pykern.compile(fn, sig, arch=archs if len(archs) > 1 else archs[0], **opts) for fn, sig in jobs]
    if want_asm:
        text = "".join(ck.asm for ck in kernels)
        if args.output:
            with open(args.output, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return 0
    several = len(kernels) > 1
    if several and args.output:
        os.makedirs(args.output, exist_ok=True)
    names = [ck.name for ck in kernels]
    for ck, (fn, _) in zip(kernels, jobs):
        stem = ck.name if names.count(ck.name) == 1 else f"{fn.__module__}.{ck.name}"  # same name, two files
        out = os.path.join(args.output or ".", f"{stem}.hsaco") if several else (args.output or f"{ck.name}.hsaco")
        with open(out, "wb") as f:
            f.write(ck.code_object)
        print(f"wrote {out}: kernel {ck.name} for {', '.join(archs)} ({len(ck.code_object)} bytes)")
    if export:
        from pykern.runtime.cache.bundle import export_cache

        n = export_cache(cache, export, used)
        print(f"exported {n} cache entr{'y' if n == 1 else 'ies'} to {export}")
    return 0


def _progress_wanted(args) -> bool:
    if args.progress is not None:
        return args.progress
    return sys.stderr.isatty()


def _compile_with_progress(pykern, fn, signature, archs, opts) -> None:
    """One arch at a time with a line on stderr each (a first compile of many archs takes
    seconds); on a terminal the line is rewritten in place."""
    import time

    name = getattr(fn, "__name__", "kernel")
    tty = sys.stderr.isatty()
    start = time.perf_counter()
    for i, arch in enumerate(archs, 1):
        t = time.perf_counter()
        if tty:
            sys.stderr.write(f"\r\x1b[K[{i}/{len(archs)}] {name} for {arch} ...")
            sys.stderr.flush()
        pykern.compile(fn, signature, arch=arch, **opts)
        line = f"[{i}/{len(archs)}] {name} for {arch}: {(time.perf_counter() - t) * 1e3:.0f} ms"
        sys.stderr.write(("\r\x1b[K" + line) if tty else line + "\n")
        sys.stderr.flush()
    total = f"compiled {name} for {len(archs)} arch(es) in {time.perf_counter() - start:.2f} s"
    sys.stderr.write(("\r\x1b[K" if tty else "") + total + "\n")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pykern", description="pykern: Python kernels for AMD GPUs")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, target, devices, toolchain and cache location",
                   description="Show pykern/LLVM versions, the target, devices, where ld.lld and the device "
                               "libraries were found (or how to install them) and the cache location.")
    for name, what in (("compile", "write a linked code object (an offload bundle for several archs)"),
                       ("asm", "print the AMDGPU assembly")):
        c = sub.add_parser(name, help=what, description=what)
        c.add_argument("kernel", nargs="+", help="FILE.py:KERNEL or MODULE:KERNEL (several allowed)")
        c.add_argument("--signature", "-s", required=True, action="append",
                       help='e.g. "void(float32[::1], int64)"; once for all kernels, or once per kernel')
        c.add_argument("--arch", "-a", default="gfx942", help="gfx name(s), comma-separated (default gfx942)")
        c.add_argument("-o", "--output", help="output file")
        c.add_argument("--fastmath", action="store_true")
        c.add_argument("--code-object-version", type=int, choices=(4, 5, 6))
        c.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="a line per arch on stderr (default: when stderr is a terminal)")
        if name == "compile":
            c.add_argument("--export", metavar="ARCHIVE",
                           help="also write the compiled kernels' cache entries to ARCHIVE, for "
                                "`python -m pykern cache import` on the machines that launch them")
    sub.add_parser("cache", help="inspect, clear, export or import the compile cache (cache --help)",
                   add_help=False)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["cache"]:
        from pykern.runtime.cache.cli import main as cache_main

        return cache_main(argv[1:])
    args = _parser().parse_args(argv)
    from pykern.core.errors import PykernError

    try:
        if args.command == "info":
            return _info(args)
        return _compile(args, want_asm=args.command == "asm")
    except PykernError as e:
        print(str(e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
