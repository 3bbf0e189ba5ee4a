"""A process that looks kernels up in the disk cache and fills it on a miss.

The cache tests run this script in fresh interpreters so that everything a
real program goes through -- import, fingerprinting, key building, file I/O,
atomic renames between racing processes -- really happens.

    python tests/cache_worker.py --cache DIR --module-dir D --module kmod \\
        --kernel k1 --kernel k2 [--producer pkg.mod:fn] [--checker pkg.mod:fn]

The payload is opaque: by default it is a pickled dict that names the key it
was made for (so a hit can prove it got the right kernel), but ``--producer``
(``fn(kernel, key) -> bytes``) and ``--checker`` (``fn(kernel, key, payload)
-> bool``) plug in anything -- e.g. a real compile that pickles a
KernelArtifact once the dispatcher exists.  Prints one JSON object on stdout:
``{"results": [{"kernel", "hit", "ok", "digest", "lookup_ms", "stored"}...],
"warnings": [...], "modules": {...}}``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pickle
import sys
import time
import warnings


def default_producer(kernel, key, size: int = 256, delay: float = 0.0) -> bytes:
    if delay:
        time.sleep(delay)  # stands in for a compile, widening race windows
    blob = (key.digest.encode() * (size // 64 + 1))[:size]
    return pickle.dumps({"digest": key.digest, "name": key.name, "pid": os.getpid(), "blob": blob})


def default_checker(kernel, key, payload: bytes) -> bool:
    d = pickle.loads(payload)
    return d["digest"] == key.digest and d["name"] == key.name and d["blob"].startswith(key.digest.encode())


def _load(spec: str):
    mod, _, fn = spec.partition(":")
    return getattr(importlib.import_module(mod), fn)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--cache", default=None, help="cache dir (default: PYKERN_CACHE_DIR / per-user)")
    p.add_argument("--module-dir", required=True)
    p.add_argument("--module", required=True)
    p.add_argument("--kernel", action="append", required=True)
    p.add_argument("--signature", default="(float32[:], int64)")
    p.add_argument("--target", default="cpu")
    p.add_argument("--arch", default=None)
    p.add_argument("--options", default='{"opt": 3, "fastmath": false, "debug": false}')
    p.add_argument("--payload-bytes", type=int, default=256)
    p.add_argument("--compile-delay", type=float, default=0.0)
    p.add_argument("--producer", default=None)
    p.add_argument("--checker", default=None)
    p.add_argument("--wait-for", default=None, help="spin until this file exists (start line for races)")
    args = p.parse_args(argv)

    sys.path.insert(0, args.module_dir)
    t_import = time.perf_counter()
    from pykern.frontend.fingerprint import fingerprint
    from pykern.runtime.cache import KernelCache, default_cache
    import_ms = (time.perf_counter() - t_import) * 1e3

    mod = importlib.import_module(args.module)
    producer = _load(args.producer) if args.producer else (
        lambda k, key: default_producer(k, key, args.payload_bytes, args.compile_delay))
    checker = _load(args.checker) if args.checker else default_checker
    options = json.loads(args.options)

    if args.wait_for:
        deadline = time.time() + 30
        while not os.path.exists(args.wait_for) and time.time() < deadline:
            time.sleep(0.001)

    results = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = KernelCache(args.cache) if args.cache else default_cache()
        for name in args.kernel:
            kernel = getattr(mod, name)
            t0 = time.perf_counter()
            key = cache.make_key(fingerprint(kernel), signature=args.signature, target=args.target,
                                 arch=args.arch, options=options)
            payload = cache.get(key)
            ok = payload is not None and checker(kernel, key, payload)
            lookup_ms = (time.perf_counter() - t0) * 1e3
            hit = payload is not None
            stored = None
            if not hit:
                payload = producer(kernel, key)
                stored = cache.put(key, payload)
                ok = checker(kernel, key, payload)
            results.append({"kernel": name, "hit": hit, "ok": bool(ok), "digest": key.digest,
                            "lookup_ms": lookup_ms, "stored": stored, "path": cache.entry_path(key)})
    for w in caught:
        print(f"{w.category.__name__}: {w.message}", file=sys.stderr)
    print(json.dumps({
        "results": results,
        "warnings": [str(w.message) for w in caught],
        "import_ms": import_ms,
        "enabled": cache.enabled,
        "modules": {m: m in sys.modules for m in ("llvmlite", "llvmlite.binding", "pykern.frontend.infer")},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
