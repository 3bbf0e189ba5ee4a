"""One cache, many processes and machines (issue 16, item 3).

* Compile once: N real processes that start together on one kernel compile
  it once (counted in the cache's stats); the others wait for the entry.  A
  process killed while it holds the "in progress" marker blocks nobody beyond
  the bound (at once on this host: its pid is gone; once the marker is older
  than ``PYKERN_CACHE_WAIT``, or after waiting that long, for a marker from
  another host).
* Export/import: a cache archive carries entries to another cache; import
  verifies them, refuses other pykern/LLVM/Python builds and never writes by
  member name (tar path traversal, links).
* ``pykern compile --export`` makes an AOT bundle whose entries are the ones
  the hip launch path looks up.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest

from frontend_helpers import IMPORTS, SAXPY_SIG, SAXPY_SRC
from pykern.runtime.cache import safe_fs as cache_fs
from pykern.runtime.cache import store as cache_store
from pykern.runtime.cache import CacheKey, KernelCache, _encode_entry, pykern_identity
from pykern.runtime.cache.bundle import export_cache, import_cache

pytestmark = pytest.mark.skipif(not cache_fs.SUPPORTED, reason="POSIX directory fds needed")
ROOT = Path(__file__).resolve().parents[3]

KMOD = '''
import pykern

@pykern.jit
def scale(a, out, f):
    i = pykern.grid(1)
    if i < a.size:
        out[i] = a[i] * f + 1.0
'''

WORKER = r'''
import json, os, sys, time
src, start, mode = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, src)
import numpy as np
import pykern
pykern.set_target("cpu")
import kmod
if mode == "hang":  # hold the marker forever: stuck in the compiler
    from pykern.codegen.cpu.target import CpuTarget
    def hang(self, *a, **k):
        print("holding", flush=True)
        time.sleep(600)
    CpuTarget.compile = hang
print("ready", flush=True)
while not os.path.exists(start):
    time.sleep(0.001)
t = time.perf_counter()
a = np.arange(256, dtype=np.float32)
out = np.zeros_like(a)
kmod.scale[4, 64](a, out, np.float32(3))
wall = time.perf_counter() - t
from pykern.codegen.cpu import tiers as cpu_tiers
from pykern.runtime.cache import default_cache
cpu_tiers.wait_all(300)  # a first call's O3 build stores the entry after the call returned
c = default_cache()
print(json.dumps({"ok": bool(np.array_equal(out, a * 3 + 1)), "compiles": c.stats["compiles"],
                  "hits": c.stats["hits"], "wall": wall, "warnings": []}), flush=True)
'''


def _env(cache_dir, **extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYKERN_BUILD_ID"] = "shared-test-build"
    env["PYKERN_CACHE_DIR"] = str(cache_dir)
    env.pop("PYKERN_CACHE", None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


@pytest.fixture
def project(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "kmod.py").write_text(KMOD)
    (tmp_path / "worker.py").write_text(WORKER)
    return tmp_path, src, tmp_path / "cache"


def _start(tmp, src, cache, mode="run", **env):
    return subprocess.Popen([sys.executable, str(tmp / "worker.py"), str(src), str(tmp / "go"), mode],
                            env=_env(cache, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _race(tmp, src, cache, n=4, **env):
    """n workers, released together once all are ready; their reports."""
    (tmp / "go").unlink(missing_ok=True)
    procs = [_start(tmp, src, cache, **env) for _ in range(n)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    t0 = time.perf_counter()
    (tmp / "go").touch()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    wall = time.perf_counter() - t0
    print(f"{n} processes: compiles {[o['compiles'] for o in outs]}, per-process launch wall "
          f"{[round(o['wall'], 3) for o in outs]} s, total {wall:.2f} s")
    return outs


def test_four_processes_compile_a_kernel_once(project):
    tmp, src, cache = project
    outs = _race(tmp, src, cache)
    assert all(o["ok"] for o in outs)
    assert sum(o["compiles"] for o in outs) == 1
    assert KernelCache(cache).persistent_stats()["compiles"] == 1
    assert not list(cache.glob("v1/entries/*/*.building*"))  # the marker went with its holder
    again = _race(tmp, src, cache, n=2)  # warm: nobody compiles
    assert all(o["ok"] and o["compiles"] == 0 and o["hits"] == 1 for o in again)
    assert KernelCache(cache).persistent_stats()["compiles"] == 1


@pytest.mark.parametrize("holder", ["this-host-killed", "other-host"])
def test_killed_marker_holder_blocks_nobody_beyond_the_bound(project, holder):
    tmp, src, cache = project
    (tmp / "go").touch()
    hang = _start(tmp, src, cache, mode="hang")
    assert hang.stdout.readline().strip() == "ready", hang.stderr.read()
    assert hang.stdout.readline().strip() == "holding", hang.stderr.read()
    markers = list(cache.glob("v1/entries/*/*.building.*"))
    assert len(markers) == 1
    hang.send_signal(signal.SIGKILL)
    hang.communicate()
    assert markers[0].exists()  # a killed holder cannot clean up
    if holder == "other-host":  # a pid that means nothing here: only its age counts
        info = json.loads(markers[0].read_bytes())
        info.update(host="another-machine", pid=1, time=time.time() - 3600)
        markers[0].write_text(json.dumps(info))
        os.utime(markers[0], (time.time() - 3600,) * 2)  # older than the bound (the default 120 s)
    outs = _race(tmp, src, cache)  # default bound: the new holder is never taken over mid-compile
    assert all(o["ok"] for o in outs)
    assert sum(o["compiles"] for o in outs) == 1  # one waiter took over, the others waited for it
    assert KernelCache(cache).persistent_stats()["compiles"] == 1
    assert not list(cache.glob("v1/entries/*/*.building*"))


# ----------------------------------------------------------- claims in one process


def _key(name="m.k"):
    return KernelCache(os.devnull, enabled=False).make_key({"name": name, "source": name},
                                                           signature="(int64,)", target="cpu")


@pytest.fixture(autouse=True)
def _build_id(monkeypatch):
    monkeypatch.setenv("PYKERN_BUILD_ID", "shared-test-build")
    from pykern.runtime.cache import key as cache_key

    cache_key._memo.pop("pykern", None)
    yield
    cache_key._memo.pop("pykern", None)


def test_claim_waits_for_the_holder_then_reads_its_entry(tmp_path):
    c = KernelCache(tmp_path / "c")
    k = _key()
    holding, result = threading.Event(), {}

    def other():
        with KernelCache(tmp_path / "c").compiling(k) as claim:
            result["claim"] = claim
            result["payload"] = KernelCache(tmp_path / "c").get(k) if claim.ready else None

    with c.compiling(k) as mine:
        assert mine.held and not mine.ready
        t = threading.Thread(target=other)
        t.start()
        holding.wait(0.3)  # the other claimant is waiting on our marker meanwhile
        assert t.is_alive()
        assert c.put(k, b"built once")
    t.join(60)
    assert result["claim"].ready and not result["claim"].held
    assert result["payload"] == b"built once"
    assert c.persistent_stats()["compiles"] == 1 and c.persistent_stats()["writes"] == 1


def test_marker_of_a_dead_process_is_taken_over_at_once(tmp_path):
    c = KernelCache(tmp_path / "c")
    k = _key()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    sub = tmp_path / "c" / "v1" / "entries" / k.digest[:2]
    sub.mkdir(parents=True)
    marker = sub / (k.digest + ".building.1")
    marker.write_text(json.dumps({"pid": dead.pid, "host": cache_store._host_id(), "time": time.time(),
                                  "nonce": "old"}))
    os.chmod(marker, 0o600)
    with c.compiling(k) as claim:
        assert claim.held and claim.marker == k.digest + ".building.2"  # the next generation
        assert json.loads((sub / claim.marker).read_bytes())["pid"] == os.getpid()
    assert not marker.exists()  # the superseded one goes with the claim that took it over
    assert not list(sub.glob("*.building*"))


def test_a_listing_taken_during_a_takeover_never_finds_the_key_unclaimed(tmp_path, monkeypatch):
    """A takeover creates the next generation and must not remove the one it supersedes
    before it is done: a claimant whose listing of the directory was taken before the new
    marker existed and whose look at the old one came after that removal found no marker at
    all, claimed generation 1 and compiled a second time beside the live holder (seen once
    as 2 compiles in test_killed_marker_holder_blocks_nobody_beyond_the_bound under load).
    Threads of one process take turns in ``compiling``, so the claimant standing for the
    other process runs the between-processes part, ``_claim``, itself."""
    c = KernelCache(tmp_path / "c")
    k = _key()
    c.put(_key("m.other"), b"x")
    sub = tmp_path / "c" / "v1" / "entries" / k.digest[:2]
    sub.mkdir(exist_ok=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (sub / (k.digest + ".building.1")).write_text(json.dumps({"pid": dead.pid, "host": cache_store._host_id()}))
    os.chmod(sub / (k.digest + ".building.1"), 0o600)
    other, holder, calls, real_scan = KernelCache(tmp_path / "c"), contextlib.ExitStack(), [], cache_fs.scan

    def scan(dfd):  # the other process's takeover lands between the listing and its stats
        if calls and calls[-1] == "inside":  # the other process's own listings
            return real_scan(dfd)
        calls.append("inside")
        try:
            if len(calls) == 1:
                names = os.listdir(dfd)
                assert holder.enter_context(other.compiling(k)).held
                return [(n, os.stat(n, dir_fd=dfd, follow_symlinks=False)) for n in names
                        if os.path.lexists(os.path.join(sub, n))]
            if len(calls) == 2:  # the holder publishes its entry and lets go
                other.put(k, b"built once")
                holder.close()
            return real_scan(dfd)
        finally:
            calls[-1] = "done"

    monkeypatch.setattr(cache_fs, "scan", scan)
    with holder:
        claim = KernelCache(tmp_path / "c")._claim(k)
    monkeypatch.undo()
    assert claim.ready and not claim.held, claim
    assert c.persistent_stats()["compiles"] == 1
    assert not list(sub.glob("*.building*"))


def test_the_hourly_sweep_leaves_a_superseded_marker_while_its_taker_holds(tmp_path):
    """A marker an hour old (a foreign holder's, taken over after the bound) stays while the
    claim that superseded it is held, even when a put of another key sweeps the directory:
    it is what a listing racing that claim's creation still finds (see the test above);
    it goes with the claim, and a dead key's markers all go once the newest is that old."""
    c = KernelCache(tmp_path / "c")
    k = _key()
    c.put(_key("m.other"), b"x")
    sub = tmp_path / "c" / "v1" / "entries" / k.digest[:2]
    sub.mkdir(exist_ok=True)
    old = time.time() - 7200
    marker = sub / (k.digest + ".building.1")
    marker.write_text(json.dumps({"pid": 1, "host": "another-machine", "time": old}))
    os.chmod(marker, 0o600)
    os.utime(marker, (old, old))
    with c.compiling(k) as claim:
        assert claim.held and claim.marker.endswith(".building.2")
        c.put(_key("m.third"), b"y")  # its eviction pass sweeps leftovers
        assert marker.exists()
    assert not list(sub.glob("*.building*"))
    for g in (1, 2):  # a holder killed after its takeover: both old, both swept
        m = sub / f"{k.digest}.building.{g}"
        m.write_text("{}")
        os.chmod(m, 0o600)
        os.utime(m, (old, old))
    c.evict()
    assert not list(sub.glob("*.building*"))


def test_foreign_marker_is_waited_for_up_to_the_bound(tmp_path, monkeypatch):
    """A fresh marker from another host: its pid means nothing here, so the
    waiter waits PYKERN_CACHE_WAIT, then takes over (never forever)."""
    monkeypatch.setenv("PYKERN_CACHE_WAIT", "1")
    c = KernelCache(tmp_path / "c")
    k = _key()
    c.put(_key("m.other"), b"x")
    sub = tmp_path / "c" / "v1" / "entries" / k.digest[:2]
    sub.mkdir(exist_ok=True)
    marker = sub / (k.digest + ".building.1")
    marker.write_text(json.dumps({"pid": os.getpid(), "host": "another-machine", "time": time.time()}))
    os.chmod(marker, 0o600)
    with c.compiling(k) as claim:
        assert claim.held and claim.marker.endswith(".building.2") and claim.waited > 0
    print(f"waited {claim.waited:.2f} s for a foreign marker with a 1 s bound")


@pytest.mark.parametrize("plant", ["empty", "garbage", "fifo"])
def test_unreadable_marker_is_taken_over_after_a_short_grace_not_the_bound(tmp_path, monkeypatch, plant):
    """A marker left empty by a crash between its create and its write, garbled, or a FIFO named
    like one: no holder can be behind it for long, so waiters take over within seconds instead of
    waiting PYKERN_CACHE_WAIT (a FIFO left out of the generations once made them loop forever)."""
    monkeypatch.setenv("PYKERN_CACHE_WAIT", "600")
    c = KernelCache(tmp_path / "c")
    k = _key()
    c.put(_key("m.other"), b"x")
    sub = tmp_path / "c" / "v1" / "entries" / k.digest[:2]
    sub.mkdir(exist_ok=True)
    marker = sub / (k.digest + ".building.1")
    if plant == "fifo":
        os.mkfifo(marker, 0o600)
    else:
        marker.write_bytes(b"" if plant == "empty" else b"\xff{not json")
        os.chmod(marker, 0o600)
    old = time.time() - 10
    os.utime(marker, (old, old), follow_symlinks=False)
    t0 = time.monotonic()
    with c.compiling(k) as claim:
        assert claim.held and claim.marker.endswith(".building.2")
    assert time.monotonic() - t0 < 5
    assert not os.path.lexists(marker)


def test_racing_takeovers_of_a_stale_marker_leave_one_holder(tmp_path):
    """Eight claimants find one dead holder's marker at once: exactly one takes
    it over (an O_EXCL create of the next generation); the others wait and read
    its entry.  Nothing is deleted to take over, so no live claim is lost."""
    k = _key()
    sub = tmp_path / "c" / "v1" / "entries" / k.digest[:2]
    KernelCache(tmp_path / "c").put(_key("m.other"), b"x")  # make the layout
    sub.mkdir(parents=True, exist_ok=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (sub / (k.digest + ".building.1")).write_text(json.dumps({"pid": dead.pid, "host": cache_store._host_id()}))
    os.chmod(sub / (k.digest + ".building.1"), 0o600)
    lock, state = threading.Lock(), {"active": 0, "max": 0, "held": 0, "ready": 0}
    barrier = threading.Barrier(8)

    def claimant():
        c = KernelCache(tmp_path / "c")
        barrier.wait()
        with c.compiling(k) as claim:
            with lock:
                state["held" if claim.held else "ready"] += claim.held or claim.ready
                state["active"] += claim.held
                state["max"] = max(state["max"], state["active"])
            if claim.held:
                time.sleep(0.05)
                c.put(k, b"once")
                with lock:
                    state["active"] -= 1

    threads = [threading.Thread(target=claimant) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert state["held"] == 1 and state["ready"] == 7 and state["max"] == 1, state
    assert KernelCache(tmp_path / "c").persistent_stats()["compiles"] == 1
    assert not list(sub.glob("*.building*"))


# ------------------------------------------------------------------ export/import


def _filled(path, n=3):
    c = KernelCache(path)
    keys = [_key(f"m.k{i}") for i in range(n)]
    for i, k in enumerate(keys):
        assert c.put(k, f"payload {i}".encode() * 100)
    return c, keys


def test_export_import_round_trip(tmp_path):
    a, keys = _filled(tmp_path / "a")
    assert export_cache(a, tmp_path / "b.tgz") == 3
    b = KernelCache(tmp_path / "b")
    report = import_cache(b, tmp_path / "b.tgz")
    assert report.imported == 3 and not report.skipped
    assert [b.get(k) for k in keys] == [f"payload {i}".encode() * 100 for i in range(3)]
    assert b.persistent_stats()["imported"] == 3 and b.persistent_stats()["compiles"] == 0
    assert {e["name"] for e in report.manifest["entries"]} == {"m.k0", "m.k1", "m.k2"}
    assert export_cache(a, tmp_path / "one.tgz", [keys[1].digest]) == 1


def _member(tf, name, data=b"", **kw):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for k, v in kw.items():
        setattr(info, k, v)
    tf.addfile(info, io.BytesIO(data) if data else None)


def test_import_refuses_foreign_corrupt_and_path_tricks(tmp_path):
    a, keys = _filled(tmp_path / "a", 1)
    good = next(a.raw_entries())[1]
    me = pykern_identity()

    def entry_for(**parts):
        k = CacheKey({**keys[0].parts, **parts})
        return k, _encode_entry(k, b"x", me["version"])

    other_pykern = entry_for(pykern={"version": me["version"], "build": "another-build"})
    other_llvm = entry_for(llvm="llvmlite 0.1 libllvmlite.so:sha256=other")
    other_python = entry_for(python="2.7")
    corrupt = bytearray(good)
    corrupt[-1] ^= 1
    outside = tmp_path / "outside"
    outside.mkdir()
    arch = tmp_path / "evil.tgz"
    hexd = "a" * 64
    with tarfile.open(arch, "w:gz") as tf:
        _member(tf, f"pykern-cache/entries/{keys[0].digest}.pkc", good)
        for k, data in (other_pykern, other_llvm, other_python):
            _member(tf, f"pykern-cache/entries/{k.digest}.pkc", data)
        _member(tf, f"pykern-cache/entries/{'b' * 64}.pkc", bytes(corrupt))
        _member(tf, f"pykern-cache/entries/{hexd}.pkc", good)  # name is not the key's digest
        _member(tf, "../outside/escape.pkc", good)
        _member(tf, str(outside / "abs.pkc"), good)
        _member(tf, f"pykern-cache/entries/{'c' * 64}.pkc", type=tarfile.SYMTYPE, linkname=str(outside / "t"))
        _member(tf, f"pykern-cache/entries/{'d' * 64}.pkc", type=tarfile.LNKTYPE, linkname="/etc/passwd")
        _member(tf, "pykern-cache/entries", type=tarfile.DIRTYPE)
    b = KernelCache(tmp_path / "b")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "b" not in p.relative_to(tmp_path).parts[:1])
    report = import_cache(b, arch)
    reasons = dict(report.skipped)
    assert report.imported == 1 and b.get(keys[0]) is not None
    assert len(report.skipped) == 10, report.skipped
    assert "another-build" in reasons[f"pykern-cache/entries/{other_pykern[0].digest}.pkc"]
    assert "LLVM" in reasons[f"pykern-cache/entries/{other_llvm[0].digest}.pkc"]
    assert "Python" in reasons[f"pykern-cache/entries/{other_python[0].digest}.pkc"]
    assert "corrupted" in reasons[f"pykern-cache/entries/{'b' * 64}.pkc"]
    assert "digest" in reasons[f"pykern-cache/entries/{hexd}.pkc"]
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "b" not in p.relative_to(tmp_path).parts[:1])
    assert after == before  # nothing written outside the cache
    assert [e.digest for e in b.entries()] == [keys[0].digest]


def _cli(*args, env):
    return subprocess.run([sys.executable, "-m", "pykern", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_cli_export_and_import(tmp_path):
    _filled(tmp_path / "a", 2)
    env = _env(tmp_path / "unused")
    r = _cli("cache", "export", str(tmp_path / "k.tgz"), "--dir", str(tmp_path / "a"), env=env)
    assert r.returncode == 0 and "exported 2 entries" in r.stdout, r.stderr
    r = _cli("cache", "export", str(tmp_path / "one.tgz"), "--name", "m.k1", "--dir", str(tmp_path / "a"), env=env)
    assert r.returncode == 0 and "exported 1 entry" in r.stdout, r.stderr
    r = _cli("cache", "import", str(tmp_path / "k.tgz"), "--dir", str(tmp_path / "b"), env=env)
    assert r.returncode == 0 and "imported 2 entries" in r.stdout, r.stderr
    r = _cli("cache", "info", "--dir", str(tmp_path / "b"), env=env)
    assert "imported   2" in r.stdout and "entries    2" in r.stdout, r.stdout
    r = _cli("cache", "import", str(tmp_path / "k.tgz"), "--dir", str(tmp_path / "c"),
             env=dict(env, PYKERN_BUILD_ID="a-different-build"))
    assert r.returncode == 1 and "imported 0 entries" in r.stdout and "a-different-build" in r.stderr
    r = _cli("cache", "import", str(tmp_path / "missing.tgz"), "--dir", str(tmp_path / "c"), env=env)
    assert r.returncode == 1 and "cannot read" in r.stderr


AOT_KERNELS = IMPORTS + SAXPY_SRC + '''
@cuda.jit
def fill(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v
'''

LAUNCH_PATH = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import kernels
from pykern.dispatch import compiler
from pykern.dispatch import argument_types
from pykern.runtime.cache import default_cache
out = {}
x = np.ones(8, np.float32)
for kern, args in ((kernels.saxpy, (np.float32(2), x, x, x)), (kernels.fill, (x, np.float32(1)))):
    # the argument types and target options build_overload uses for a device
    # reporting target id sys.argv[2] on a ROCm >= 6 runtime (code object v5)
    argtypes, _ = argument_types.argument_types(args, kern.__name__, "hip")
    for arch in sys.argv[2].split(","):
        _, hit = compiler.compile_artifact(kern, "amdgpu", argtypes, arch=arch, code_object_version=5)
        out[f"{kern.__name__}@{arch}"] = hit
print(json.dumps({"hits": out, "compiles": default_cache().stats["compiles"]}))
'''


@pytest.mark.slow
def test_aot_bundle_is_what_the_hip_launch_path_hits(tmp_path):
    """Build machine: ``pykern compile`` two kernels for two target ids with
    ``--export``; worker: ``cache import`` then the hip path's lookup (same
    argument types, target id and code object version as a launch) hits for
    every kernel and arch without compiling."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "kernels.py").write_text(AOT_KERNELS)
    archs = "gfx90a:xnack-,gfx942"
    build = _env(tmp_path / "build-cache")
    r = _cli("compile", f"{src / 'kernels.py'}:saxpy", f"{src / 'kernels.py'}:fill",
             "-s", SAXPY_SIG, "-s", "void(float32[::1], float32)",
             "--arch", archs, "-o", str(tmp_path / "out"), "--export", str(tmp_path / "bundle.tgz"), env=build)
    assert r.returncode == 0, r.stderr
    assert "exported 4 cache entries" in r.stdout, r.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fill.hsaco", "saxpy.hsaco"]
    worker = _env(tmp_path / "worker-cache")
    r = _cli("cache", "import", str(tmp_path / "bundle.tgz"), env=worker)
    assert r.returncode == 0 and "imported 4 entries" in r.stdout, r.stderr
    (tmp_path / "launch.py").write_text(LAUNCH_PATH)
    p = subprocess.run([sys.executable, str(tmp_path / "launch.py"), str(src), archs], capture_output=True,
                       text=True, env=worker, timeout=300)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert all(res["hits"].values()) and len(res["hits"]) == 4, res
    assert res["compiles"] == 0
    # the honest limit: a device reporting another target id is another key,
    # so the bundle must be built for the target ids the workers report
    p = subprocess.run([sys.executable, str(tmp_path / "launch.py"), str(src), "gfx942:sramecc+:xnack-"],
                       capture_output=True, text=True, env=worker, timeout=300)
    assert p.returncode == 0, p.stderr
    assert not any(json.loads(p.stdout)["hits"].values())


def test_runtime_code_object_version_is_part_of_the_key(tmp_path, monkeypatch):
    """build_overload passes the runtime's code object version (4 on ROCm 5): an
    entry built for v4 must never be what a v5 runtime's lookup returns (a
    shared cache or a bundle serves both)."""
    import pykern
    from pykern.dispatch import compiler
    from pykern.frontend import parse_signature

    monkeypatch.setenv("PYKERN_CACHE_DIR", str(tmp_path / "c"))

    @pykern.jit
    def put_one(out):
        out[0] = 1.0

    _, argtypes = parse_signature("void(float32[::1])")
    a4, hit4 = compiler.compile_artifact(put_one, "amdgpu", tuple(argtypes), arch="gfx90a", code_object_version=4)
    a5, hit5 = compiler.compile_artifact(put_one, "amdgpu", tuple(argtypes), arch="gfx90a", code_object_version=5)
    assert not hit4 and not hit5
    assert a4.code_object_version == 4 and a5.code_object_version == 5
    assert compiler.compile_artifact(put_one, "amdgpu", tuple(argtypes), arch="gfx90a",
                                     code_object_version=4)[0].code_object_version == 4
