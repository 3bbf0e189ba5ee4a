"""The disk cache across real processes: cold/warm, invalidation, races,
corruption, untrusted directories, LRU eviction and the CLI.

Every run is a fresh interpreter (tests/cache_worker.py) so imports, files and
renames are the real ones.  The payload is the worker's pickled dict, which
names the key it was made for: a hit that returned another kernel's entry
would fail its check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
WORKER = Path(__file__).resolve().parents[2] / "cache_worker.py"


def _env(cache_dir=None, **extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # edited modules must never come from a stale .pyc
    env["PYKERN_BUILD_ID"] = "test-build"  # other people's edits of the tree must not flip keys
    for k in ("PYKERN_CACHE", "PYKERN_CACHE_MAX_BYTES", "PYKERN_CACHE_EXPLAIN"):
        env.pop(k, None)
    if cache_dir is not None:
        env["PYKERN_CACHE_DIR"] = str(cache_dir)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_worker(cache_dir, module_dir, module, kernels, *, extra_args=(), env_extra=None, check=True):
    """Run one worker process; returns (parsed JSON, stderr)."""
    cmd = [sys.executable, str(WORKER), "--module-dir", str(module_dir), "--module", module]
    for k in kernels:
        cmd += ["--kernel", k]
    cmd += list(extra_args)
    p = subprocess.run(cmd, env=_env(cache_dir, **(env_extra or {})), capture_output=True, text=True,
                       timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p.stderr


def write(path: Path, text: str) -> None:
    path.write_text(textwrap.dedent(text))


HELPERS = """
    class _Device:  # what @pykern.jit(device=True) gives: a marker and .py_func
        __pykern_device__ = True
        def __init__(self, f):
            self.py_func = f

    def device(f):
        return _Device(f)

    @device
    def scale(x):
        return x * 2.0
"""

KMOD = """
    import helpers
    N = 4

    def unrelated():
        return 1

    def k(a, n):
        for i in range(N):
            a[i] = helpers.scale(a[i])

    def k2(a, n):
        a[0] = n

    def k3(a, n):
        a[1] = n + 1
"""


@pytest.fixture
def project(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write(src / "helpers.py", HELPERS)
    write(src / "kmod.py", KMOD)
    return src, tmp_path / "cache"


def test_cold_process_writes_warm_process_reads(project):
    src, cache = project
    cold, _ = run_worker(cache, src, "kmod", ["k", "k2"])
    assert [r["hit"] for r in cold["results"]] == [False, False]
    assert all(r["ok"] and r["stored"] for r in cold["results"])
    assert (cache.stat().st_mode & 0o777) == 0o700
    warm, err = run_worker(cache, src, "kmod", ["k", "k2"])
    assert [r["hit"] for r in warm["results"]] == [True, True], err
    assert all(r["ok"] for r in warm["results"])
    assert [r["digest"] for r in warm["results"]] == [r["digest"] for r in cold["results"]]
    # a hit is fingerprint + key + file read + checksum + unpickle: neither LLVM nor the
    # frontend's typing runs (how long it takes is benchmarks/bench_cache.py's business)
    assert not warm["modules"]["llvmlite"], "a cache hit must not load LLVM"
    assert not warm["modules"]["pykern.frontend.infer"], "a cache hit must not run the frontend"
    assert warm["warnings"] == []


def test_edits_invalidate_exactly_what_they_should(project):
    src, cache = project
    explain = {"PYKERN_CACHE_EXPLAIN": "1"}

    def one(expect_hit, *extra):
        out, err = run_worker(cache, src, "kmod", ["k"], extra_args=extra, env_extra=explain)
        r = out["results"][0]
        assert r["ok"], (out, err)
        assert r["hit"] is expect_hit, err
        return err

    err = one(False)
    assert "no kernel of this name was cached before" in err
    one(True)

    # An unrelated function in the same file changes, and the kernel moves down: still a hit.
    text = (src / "kmod.py").read_text().replace(
        "def unrelated():\n    return 1", "def unrelated():\n    x = 5\n\n    return x + 1\n")
    (src / "kmod.py").write_text(text)
    one(True)

    # The device function in another file changes: miss, and the reason names it.
    (src / "helpers.py").write_text((src / "helpers.py").read_text().replace("x * 2.0", "x * 3.0"))
    err = one(False)
    assert "callees.helpers.scale.source" in err, err
    one(True)

    # A global constant the kernel reads changes: miss.
    (src / "kmod.py").write_text((src / "kmod.py").read_text().replace("N = 4", "N = 5"))
    err = one(False)
    assert "globals.N" in err, err
    one(True)

    # Another arch, another option, another signature: each misses and says why.
    err = one(False, "--target", "amdgpu", "--arch", "gfx90a:xnack-")
    assert "target" in err
    err = one(False, "--target", "amdgpu", "--arch", "gfx942")
    assert "target.arch" in err, err
    err = one(False, "--options", '{"opt": 3, "fastmath": true, "debug": false}')
    assert "options.fastmath" in err, err
    err = one(False, "--signature", "(float64[:], int64)")
    assert "signature" in err, err

    # A new pykern build (upgrade) misses everything.
    out, err = run_worker(cache, src, "kmod", ["k"], env_extra={**explain, "PYKERN_BUILD_ID": "upgraded"})
    assert not out["results"][0]["hit"] and "pykern.build" in err, err


def test_eight_concurrent_writers_all_succeed(project):
    src, cache = project
    go = src / "go"
    kernels = ["k", "k2", "k3"]
    cmd_extra = ["--wait-for", str(go), "--compile-delay", "0.02", "--payload-bytes", "200000"]
    procs = []
    for i in range(8):
        cmd = [sys.executable, str(WORKER), "--module-dir", str(src), "--module", "kmod"]
        for k in kernels[i % 3:] + kernels[: i % 3]:  # different orders collide on different files
            cmd += ["--kernel", k]
        procs.append(subprocess.Popen(cmd + cmd_extra, env=_env(cache), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    time.sleep(0.5)  # let them all import and reach the start line
    go.write_text("go")
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        outs.append(json.loads(out))
    for out in outs:
        assert all(r["ok"] for r in out["results"]), out
        assert out["warnings"] == [], out
    digests = {r["kernel"]: r["digest"] for r in outs[0]["results"]}
    assert all({r["kernel"]: r["digest"] for r in o["results"]} == digests for o in outs)

    # The cache left behind is complete and valid: a fresh process hits everything.
    after, err = run_worker(cache, src, "kmod", kernels)
    assert all(r["hit"] and r["ok"] for r in after["results"]), err
    leftovers = [p for p in cache.rglob("*") if p.name.startswith(".tmp-")]
    assert leftovers == []
    from pykern.runtime.cache import KernelCache

    entries = KernelCache(cache).entries()
    assert len(entries) == 3 and all(e.valid for e in entries)


def _rewrite_version(path: Path, version: str) -> None:
    from pykern.runtime.cache import CacheKey, _decode_entry, _encode_entry

    _, key_json, payload = _decode_entry(path.read_bytes())
    path.write_bytes(_encode_entry(CacheKey(json.loads(key_json)), payload, version))


CORRUPTIONS = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:-100]),
    "flipped": lambda p: p.write_bytes((lambda b: b[:-50] + bytes([b[-50] ^ 0xFF]) + b[-49:])(p.read_bytes())),
    "empty": lambda p: p.write_bytes(b""),
    "wrong_version": lambda p: _rewrite_version(p, "0.0.0-not-this-one"),
    "garbage_header": lambda p: p.write_bytes(b"\x00" * 16 + p.read_bytes()[16:]),
}


def test_corrupted_entries_are_discarded_with_a_warning_and_recompiled(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    names = list(CORRUPTIONS)
    write(src / "many.py", "\n".join(f"def {n}(a, n):\n    a[0] = {i}\n" for i, n in enumerate(names)))
    cache = tmp_path / "cache"
    first, _ = run_worker(cache, src, "many", names, extra_args=["--payload-bytes", "4096"])
    for name, r in zip(names, first["results"]):
        CORRUPTIONS[name](Path(r["path"]))

    second, err = run_worker(cache, src, "many", names)
    for r in second["results"]:
        assert not r["hit"] and r["ok"] and r["stored"], (r, err)
    assert len(second["warnings"]) == len(names), err
    assert all("discarding bad entry" in w for w in second["warnings"])
    joined = "\n".join(second["warnings"])
    for why in ("truncated", "checksum", "empty file", "0.0.0-not-this-one", "bad magic"):
        assert why in joined, joined

    third, err = run_worker(cache, src, "many", names)
    assert all(r["hit"] and r["ok"] for r in third["results"]), err
    assert third["warnings"] == []


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX ownership")
def test_world_writable_dir_with_foreign_entry_is_refused(project):
    src, cache = project
    first, _ = run_worker(cache, src, "kmod", ["k"])
    entry = Path(first["results"][0]["path"])
    os.chmod(cache, 0o777)
    if os.geteuid() == 0:
        os.chown(entry, 12345, 12345)  # planted by someone else
    before = sorted(p.name for p in cache.rglob("*"))

    out, err = run_worker(cache, src, "kmod", ["k", "k2"])
    assert not out["enabled"]
    assert all(not r["hit"] and r["ok"] and r["stored"] is False for r in out["results"])
    assert any("refusing cache directory" in w and "writable by group or others" in w for w in out["warnings"]), err
    assert len(out["warnings"]) == 1  # one warning per directory, not per lookup
    assert sorted(p.name for p in cache.rglob("*")) == before  # nothing written there


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to plant a foreign file")
def test_foreign_entry_in_private_dir_is_refused(project):
    src, cache = project
    first, _ = run_worker(cache, src, "kmod", ["k"])
    os.chown(first["results"][0]["path"], 12345, 12345)
    out, err = run_worker(cache, src, "kmod", ["k"])
    r = out["results"][0]
    assert not r["hit"] and r["ok"] and r["stored"]
    assert any("not by this user" in w for w in out["warnings"]), err
    assert os.stat(r["path"]).st_uid == os.geteuid()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_dir_owned_by_someone_else_is_refused(project):
    src, cache = project
    cache.mkdir(mode=0o700)
    os.chown(cache, 12345, 12345)
    out, err = run_worker(cache, src, "kmod", ["k"])
    assert not out["enabled"] and "owned by uid 12345" in err


def test_lru_eviction_under_a_tiny_limit(project):
    src, cache = project
    (src / "kmod.py").write_text((src / "kmod.py").read_text() + "\ndef k4(a, n):\n    a[2] = n\n")
    limit = {"PYKERN_CACHE_MAX_BYTES": "40000"}  # room for three ~12 KB entries, not four
    big = ["--payload-bytes", "10000"]
    first, _ = run_worker(cache, src, "kmod", ["k", "k2", "k3"], extra_args=big, env_extra=limit)
    assert all(r["stored"] for r in first["results"])
    paths = {r["kernel"]: r["path"] for r in first["results"]}
    time.sleep(0.01)
    used, _ = run_worker(cache, src, "kmod", ["k"], extra_args=big, env_extra=limit)  # k is now recent
    assert used["results"][0]["hit"]
    time.sleep(0.01)
    fourth, _ = run_worker(cache, src, "kmod", ["k4"], extra_args=big, env_extra=limit)
    assert fourth["results"][0]["stored"]
    kept = {k for k, p in paths.items() if os.path.exists(p)}
    assert kept == {"k", "k3"}, kept  # k2 was least recently used
    total = sum(p.stat().st_size for p in cache.rglob("*.pkc"))
    assert total <= 40000
    info = subprocess.run([sys.executable, "-m", "pykern.runtime.cache.cli", "info", "--json"],
                          env=_env(cache), capture_output=True, text=True, check=True)
    assert json.loads(info.stdout)["evicted"] == 1


def test_cache_off_by_env_touches_nothing(project):
    src, cache = project
    out, _ = run_worker(cache, src, "kmod", ["k"], env_extra={"PYKERN_CACHE": "off"})
    assert not out["enabled"] and out["results"][0]["stored"] is False
    assert not cache.exists()


def _cli(cache, *args):
    p = subprocess.run([sys.executable, "-m", "pykern.runtime.cache.cli", *args], env=_env(cache),
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def test_cli_info_list_clear(project):
    src, cache = project
    run_worker(cache, src, "kmod", ["k", "k2"])
    run_worker(cache, src, "kmod", ["k"])
    rc, out, _ = _cli(cache, "info")
    assert rc == 0
    assert str(cache) in out and "entries    2" in out
    assert "hits       1" in out and "misses     2" in out and "writes     2" in out
    rc, out, _ = _cli(cache, "list")
    assert rc == 0 and "kmod.k (float32[:], int64)" in out and "kmod.k2 " in out and "cpu" in out
    for args in (["--dir", str(cache), "list"], ["list", "--dir", str(cache)]):  # env points elsewhere
        rc, out, _ = _cli(cache.parent / "elsewhere", *args)
        assert rc == 0 and "kmod.k2 " in out, args
    rc, out, _ = _cli(cache, "list", "--json")
    listed = json.loads(out)
    assert sorted(e["name"] for e in listed) == ["kmod.k", "kmod.k2"]

    old = next(e["path"] for e in listed if e["name"] == "kmod.k2")
    os.utime(old, (time.time() - 3 * 86400,) * 2)
    rc, out, _ = _cli(cache, "clear", "--older-than", "2d")
    assert rc == 0 and "removed 1 entry" in out and not os.path.exists(old)
    rc, out, _ = _cli(cache, "clear")
    assert "removed 1 entry" in out
    rc, out, _ = _cli(cache, "list")
    assert "no entries" in out

    for sub in ("info", "list", "clear"):
        rc, out, _ = _cli(cache, sub, "--help")
        assert rc == 0 and f"python -m pykern cache {sub}" in out
    rc, _, err = _cli(cache, "clear", "--older-than", "soon")
    assert rc == 2 and "not a duration" in err


@pytest.mark.skipif(not (ROOT / "pykern" / "__main__.py").exists(), reason="pykern/__main__.py not wired yet")
def test_python_m_pykern_cache(project):
    src, cache = project
    run_worker(cache, src, "kmod", ["k"])
    p = subprocess.run([sys.executable, "-m", "pykern", "cache", "info"], env=_env(cache),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and str(cache) in p.stdout and "entries    1" in p.stdout, p.stderr


def test_importing_the_cache_stays_cheap():
    code = textwrap.dedent("""
        import sys
        import pykern
        before = set(sys.modules)
        import pykern.runtime.cache, pykern.runtime.cache.cli
        new = set(sys.modules) - before
        heavy = sorted(m for m in new if m.split(".")[0] in ("numpy", "llvmlite") or m.startswith("pykern.codegen"))
        print(heavy)
    """)
    p = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]", p.stdout
