"""A truncated cache bundle (a copy cut short, a download that stopped): ``cache import``
stores the entries before the damage -- each verified by its own checksum -- and says in
one line that the bundle is damaged, instead of a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pykern.runtime.cache import KernelCache
from pykern.runtime.cache.bundle import export_cache, import_cache

ROOT = str(Path(__file__).resolve().parents[3])
N = 20


@pytest.fixture
def bundle(tmp_path, cache_env):
    """A bundle of N entries of incompressible payloads, and the payload of each key."""
    src = KernelCache(tmp_path / "src")
    payloads = {}
    for i in range(N):
        key = KernelCache(os.devnull, enabled=False).make_key({"name": f"m.k{i}", "source": f"m.k{i}"},
                                                              signature="(int64,)", target="cpu")
        payloads[key.digest] = (key, os.urandom(20_000))
        assert src.put(key, payloads[key.digest][1])
    path = tmp_path / "k.pkc.tgz"
    assert export_cache(src, path) == N
    return path, payloads


def _truncate(path, fraction):
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


@pytest.mark.parametrize("fraction", [0.5, 0.97])
def test_import_of_a_truncated_bundle_keeps_the_entries_before_the_damage(tmp_path, bundle, fraction):
    path, payloads = bundle
    _truncate(path, fraction)
    dst = KernelCache(tmp_path / "dst")
    report = import_cache(dst, path)
    assert report.damaged, report
    assert 0 < report.imported < N
    stored = [e.digest for e in dst.entries()]
    assert len(stored) == report.imported
    for digest in stored:  # what it wrote is each entry whole
        key, payload = payloads[digest]
        assert dst.get(key) == payload


def test_cli_import_of_a_truncated_bundle_says_so_in_one_line(tmp_path, bundle):
    path, _ = bundle
    _truncate(path, 0.5)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYKERN_BUILD_ID="test-build")
    r = subprocess.run([sys.executable, "-m", "pykern", "cache", "import", str(path), "--dir", str(tmp_path / "c")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "is damaged" in r.stderr and str(path) in r.stderr
    n = int(r.stdout.split("imported ")[1].split()[0])
    assert 0 < n < N and len(KernelCache(tmp_path / "c").entries()) == n


def test_cli_import_of_a_bundle_cut_inside_its_header_cannot_read_it(tmp_path, bundle):
    path, _ = bundle
    _truncate(path, 0.0005)  # a few bytes of gzip header
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYKERN_BUILD_ID="test-build")
    r = subprocess.run([sys.executable, "-m", "pykern", "cache", "import", str(path), "--dir", str(tmp_path / "c")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and ("cannot read" in r.stderr or "is damaged" in r.stderr)
