"""``python -m pykern``: info, compile, asm and cache, each with --help."""

import subprocess
import sys

import pytest

from frontend_helpers import IMPORTS, SAXPY_SIG as SIG, SAXPY_SRC, child_env


def run(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "pykern", *args], capture_output=True, text=True,
                          env=child_env(**(env or {})), cwd=cwd, timeout=300)


@pytest.mark.parametrize("cmd", [[], ["info"], ["compile"], ["asm"], ["cache"]])
def test_help(cmd):
    r = run(*cmd, "--help")
    assert r.returncode == 0, r.stderr
    assert "usage" in r.stdout.lower()


def test_info_names_toolchain_and_cache(tmp_path):
    r = run("info", env={"PYKERN_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 0, r.stderr
    for word in ("pykern", "LLVM 22", "hip", "ld.lld", "device libs", "cache", str(tmp_path / "c")):
        assert word in r.stdout, (word, r.stdout)
    assert "hipErrorNoDevice" in r.stdout or "no devices" in r.stdout or "not found" in r.stdout.lower()


def test_info_lists_every_setting_with_its_value_and_source(tmp_path):
    import re

    from pykern.core.settings import SETTINGS

    r = run("info", env={"PYKERN_CACHE_DIR": str(tmp_path / "c"), "PYKERN_TIERS": "off",
                         "PYKERN_MEMORY_CACHE_ENTRIES": "many", "PYKERN_PRELOAD": "", "PYKERN_CACHE_EXPLAIN": ""})
    assert r.returncode == 0, r.stderr
    rows = dict(re.findall(r"^  (PYKERN_\w+) +(.*)$", r.stdout, re.M))
    assert set(rows) == {n for n, s in SETTINGS.items() if s.scope == "pykern"}, r.stdout
    assert rows["PYKERN_TIERS"] == "off  [environment]"
    assert rows["PYKERN_CACHE_DIR"] == f"{tmp_path / 'c'}  [environment]"
    assert rows["PYKERN_TARGET"] == "cpu  [environment]"  # child_env runs the children on the cpu target
    assert rows["PYKERN_PRELOAD"] == "auto  [default]"  # empty is unset
    assert rows["PYKERN_CACHE_EXPLAIN"] == "off  [default]"
    assert rows["PYKERN_MEMORY_CACHE_ENTRIES"] == "256  [default (PYKERN_MEMORY_CACHE_ENTRIES='many' ignored)]"


KERNEL = IMPORTS + SAXPY_SRC


def test_compile_single_and_bundle(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(KERNEL)
    env = {"PYKERN_CACHE_DIR": str(tmp_path / "c")}
    r = run("compile", f"{src}:saxpy", "--signature", SIG, "--arch", "gfx942", "-o", str(tmp_path / "k.hsaco"), env=env)
    assert r.returncode == 0, r.stderr
    blob = (tmp_path / "k.hsaco").read_bytes()
    assert blob[:4] == b"\x7fELF"
    r = run("compile", f"{src}:saxpy", "--signature", SIG, "--arch", "gfx90a,gfx1100", "-o", str(tmp_path / "b.hsaco"), env=env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "b.hsaco").read_bytes().startswith(b"__CLANG_OFFLOAD_BUNDLE__")


def test_asm_prints_amdgpu_assembly(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(KERNEL)
    r = run("asm", f"{src}:saxpy", "--signature", SIG, "--arch", "gfx1100", env={"PYKERN_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 0, r.stderr
    assert "gfx1100" in r.stdout and "s_endpgm" in r.stdout


def test_bad_kernel_spec_and_bad_signature(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(KERNEL)
    r = run("compile", f"{src}:nope", "--signature", SIG)
    assert r.returncode != 0 and "defines no 'nope'" in r.stderr
    r = run("compile", f"{src}:saxpy", "--signature", "void(floot32[:])", env={"PYKERN_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode != 0 and "floot32" in r.stderr
