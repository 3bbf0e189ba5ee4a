"""Where users wait (issue 14 item 6): an AOT compile of many archs from the CLI shows
progress on a terminal (or when asked), and stays quiet in pipes and logs."""

import os
import subprocess
import sys

import pytest

from frontend_helpers import IMPORTS, SAXPY_SIG as SIG, SAXPY_SRC, child_env

KERNEL = IMPORTS + SAXPY_SRC
ARCHS = "gfx90a,gfx942,gfx1100"


@pytest.fixture
def cli(tmp_path):
    src = tmp_path / "kernels.py"
    src.write_text(KERNEL)
    env = child_env(PYKERN_CACHE_DIR=str(tmp_path / "cache"))
    out = tmp_path / "saxpy.hsaco"
    return [sys.executable, "-m", "pykern", "compile", f"{src}:saxpy", "-s", SIG, "--arch", ARCHS, "-o", str(out)], \
        env, out


def test_progress_when_asked(cli):
    cmd, env, out = cli
    r = subprocess.run(cmd + ["--progress"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert [ln.split(":")[0] for ln in lines[:3]] == [f"[{i}/3] saxpy for {a}" for i, a in
                                                      enumerate(ARCHS.split(","), 1)]
    assert lines[3].startswith("compiled saxpy for 3 arch(es) in ")
    assert out.read_bytes()[:4] == b"__CL"  # the offload bundle, as without progress


def test_quiet_in_a_pipe(cli):
    cmd, env, _ = cli
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_on_a_terminal_rewrites_one_line(cli):
    cmd, env, _ = cli
    master, slave = os.openpty()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=slave, env=env, timeout=600)
        os.close(slave)
        slave = None
        data = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            data += chunk
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    assert r.returncode == 0
    text = data.decode()
    assert "\r\x1b[K[1/3] saxpy for gfx90a" in text and "[3/3] saxpy for gfx1100" in text
    assert text.rstrip().splitlines()[-1].endswith("s") and "compiled saxpy for 3 arch(es)" in text
