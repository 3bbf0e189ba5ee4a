"""``python -m pykern info`` names the clang that compiles linked C++ (declare_device, link=), or
says it is missing."""

import shutil
import subprocess
import sys

from frontend_helpers import child_env


def _info(**env):
    r = subprocess.run([sys.executable, "-m", "pykern", "info"], capture_output=True, text=True,
                       env=child_env(**env), timeout=300)
    assert r.returncode == 0, r.stderr
    return next(line for line in r.stdout.splitlines() if line.startswith("clang "))


def test_info_names_clang_and_its_version():
    line = _info()
    if shutil.which("clang-22") or shutil.which("clang"):
        assert "clang version" in line, line
    else:
        assert "NOT FOUND" in line and "clang-22" in line, line


def test_info_says_when_the_chosen_clang_cannot_run(tmp_path):
    line = _info(PYKERN_CLANG=str(tmp_path / "no-such-clang"))
    assert "NOT FOUND" in line and "no-such-clang" in line, line
