"""One name per module: no two modules in pykern/ share a file name (``__init__.py`` aside).

A reader who sees ``arrays.py`` in a traceback, an editor tab or a grep hit should know which
module it is. The few repeats that are right are listed below with why; a new repeat, or a
listed one whose paths changed, fails.
"""

import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "pykern"

#: basename -> the exact paths allowed to share it, and why
ALLOWED = {
    # One Driver per run target, in the target's own package (runtime/drivers.py is the interface
    # and registry); numba_compat/cudadrv/driver.py is numba's own module name, the public path
    # ``pykern.cudadrv.driver`` that ported programs import.
    "driver.py": {"runtime/cpu/driver.py", "runtime/hip/driver.py", "numba_compat/cudadrv/driver.py"},
    # One Target per codegen target, in the target's own package (codegen/target_interface.py
    # is the interface): the folder says which target, the name says which role.
    "target.py": {"codegen/cpu/target.py", "codegen/amdgpu/target.py"},
}


def repeated_basenames(root: pathlib.Path) -> dict:
    """{basename: set of paths relative to ``root``} for every basename used more than once."""
    by_name = collections.defaultdict(set)
    for p in root.rglob("*.py"):
        if p.name != "__init__.py":
            by_name[p.name].add(p.relative_to(root).as_posix())
    return {name: paths for name, paths in by_name.items() if len(paths) > 1}


def test_no_repeated_module_basename():
    repeats = repeated_basenames(PKG)
    unexpected = {name: sorted(paths) for name, paths in repeats.items() if ALLOWED.get(name) != paths}
    assert not unexpected, (
        "module names used more than once in pykern/ (rename so each says what it holds, "
        f"or list a per-target repeat in ALLOWED with why): {unexpected}")


def test_allow_list_is_current():
    repeats = repeated_basenames(PKG)
    stale = {name: sorted(paths) for name, paths in ALLOWED.items() if repeats.get(name) != paths}
    assert not stale, f"ALLOWED entries that no longer match the tree: {stale}"


def test_repeat_is_found(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "arrays.py").write_text("")
        (tmp_path / d / "__init__.py").write_text("")
    (tmp_path / "a" / "only.py").write_text("")
    assert repeated_basenames(tmp_path) == {"arrays.py": {"a/arrays.py", "b/arrays.py"}}


def test_no_repeated_test_file_basename():
    # pytest imports test files by basename (the test folders are not packages): a second
    # tests/**/test_x.py is an "import file mismatch" that stops the whole run at collection
    repeats = {name: sorted(paths) for name, paths in repeated_basenames(ROOT / "tests").items()
               if name.startswith("test_")}
    assert not repeats, f"test file names used more than once under tests/ (rename one): {repeats}"
