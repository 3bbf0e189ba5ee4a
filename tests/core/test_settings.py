"""pykern/core/settings.py is the one home of every PYKERN_* environment variable.

The scans read pykern/ with ``ast``: a ``PYKERN_`` name may appear as a bare string only as
the name a ``settings`` function is asked for, every environment read elsewhere must name a
variable that is provably not a ``PYKERN_`` one, every declared setting is read, and every
``PYKERN_`` name the code, the tests, the benchmarks, the scripts and the docs mention is
declared. The rest checks the readers: parsing, defaults, what invalid values do, reading at
call time, and that cache keys hold the same text they always held.
"""

import ast
import pathlib
import re
import warnings
from dataclasses import asdict

import pytest

from pykern.core import settings
from pykern.core.settings import SETTINGS, SettingError, SettingWarning

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "pykern"
HOME = PKG / "core" / "settings.py"
NAME = re.compile(r"PYKERN_[A-Z0-9_]*")
READERS = {"get", "raw", "source"}  # the settings functions that read the environment


def _sources(root=PKG):
    return [p for p in sorted(root.rglob("*.py")) if p != HOME]


def _settings_call(node) -> str:
    """The settings function ``node`` calls (``settings.get(...)``), or ""."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and node.func.value.id in ("settings", "_settings"):
        return node.func.attr
    return ""


def _docstrings(tree) -> set:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _is_environ(node) -> bool:
    """``os.environ``/``os.environb``, or ``environ`` imported from os."""
    return (isinstance(node, ast.Attribute) and node.attr in ("environ", "environb")
            and isinstance(node.value, ast.Name) and node.value.id == "os") or \
        (isinstance(node, ast.Name) and node.id in ("environ", "environb"))


def _constants_of(tree) -> dict:
    """Names bound to string constants: module-level ``X = "..."`` and ``for x in ("a", "b")`` loops."""
    out: dict = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, set()).add(n.value.value)
        elif isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name) and \
                isinstance(n.iter, (ast.Tuple, ast.List)) and \
                all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.iter.elts):
            out.setdefault(n.target.id, set()).update(e.value for e in n.iter.elts)
    return out


def _env_reads(tree):
    """``(key node, line)`` of every read of the process environment by name."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in ("get", "pop", "setdefault", "__getitem__") \
                    and _is_environ(f.value):
                yield (n.args[0] if n.args else None), n.lineno
            elif (isinstance(f, ast.Attribute) and f.attr == "getenv" and isinstance(f.value, ast.Name)
                  and f.value.id == "os") or (isinstance(f, ast.Name) and f.id == "getenv"):
                yield (n.args[0] if n.args else None), n.lineno
        elif isinstance(n, ast.Subscript) and _is_environ(n.value) and isinstance(n.ctx, ast.Load):
            yield n.slice, n.lineno
        elif isinstance(n, ast.Compare) and any(_is_environ(c) for c in n.comparators):
            yield n.left, n.lineno


def test_pykern_names_appear_only_as_settings_keys():
    """A bare ``"PYKERN_..."`` string outside settings.py is a read (or a name kept for one)
    that bypasses the table: only the name a settings function is asked for may be one."""
    bad = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        allowed = {id(n.args[0]) for n in ast.walk(tree) if _settings_call(n) and n.args}
        docs = _docstrings(tree)
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and NAME.fullmatch(n.value) \
                    and id(n) not in allowed and id(n) not in docs:
                bad.append(f"{path.relative_to(ROOT)}:{n.lineno}: {n.value!r}")
    assert not bad, "PYKERN_ names used outside pykern.core.settings' functions:\n" + "\n".join(bad)


def test_environment_reads_outside_settings_name_no_pykern_variable():
    bad = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        consts = _constants_of(tree)
        for key, line in _env_reads(tree):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                names = {key.value}
            elif isinstance(key, ast.Name) and key.id in consts:
                names = consts[key.id]
            else:
                bad.append(f"{path.relative_to(ROOT)}:{line}: a name this test cannot read "
                           f"({ast.unparse(key) if key is not None else 'none'})")
                continue
            bad += [f"{path.relative_to(ROOT)}:{line}: {n}" for n in sorted(names) if n.startswith("PYKERN")]
    assert not bad, "environment reads outside pykern/core/settings.py:\n" + "\n".join(bad)


def _read_names() -> dict:
    """{name: [places]} of every literal name pykern asks a settings reader for."""
    out: dict = {}
    for path in _sources():
        for n in ast.walk(ast.parse(path.read_text(), str(path))):
            if _settings_call(n) in READERS and n.args and isinstance(n.args[0], ast.Constant):
                out.setdefault(n.args[0].value, []).append(f"{path.relative_to(ROOT)}:{n.lineno}")
    return out


def test_every_setting_pykern_reads_is_declared_and_every_declared_one_is_read():
    read = _read_names()
    assert not set(read) - set(SETTINGS), {n: read[n] for n in set(read) - set(SETTINGS)}
    ours = {n for n, s in SETTINGS.items() if s.scope == "pykern"}
    assert not ours - set(read), f"declared in core/settings.py but never read: {sorted(ours - set(read))}"
    theirs = set(read) - ours
    assert not theirs, f"pykern reads settings declared for the tests/benchmarks/setup: {sorted(theirs)}"


_SCOPE_DIRS = {"tests": ("tests",), "benchmarks": ("benchmarks",), "setup": ("scripts",)}


def test_settings_of_the_tests_benchmarks_and_setup_are_read_there():
    for s in SETTINGS.values():
        if s.scope == "pykern":
            continue
        assert s.scope in _SCOPE_DIRS, s
        files = [p for d in _SCOPE_DIRS[s.scope] for p in (ROOT / d).rglob("*") if p.suffix in (".py", ".sh")]
        assert any(s.name in p.read_text(errors="replace") for p in files), f"{s.name} is read nowhere in {s.scope}"


def _outside_reads() -> dict:
    """{name: place} of PYKERN_ variables read by the tests, benchmarks and scripts."""
    out = {}
    for d in ("tests", "benchmarks", "scripts"):
        for p in (ROOT / d).rglob("*.py"):
            for key, line in _env_reads(ast.parse(p.read_text(), str(p))):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith("PYKERN_"):
                    out[key.value] = f"{p.relative_to(ROOT)}:{line}"
        for p in (ROOT / d).rglob("*.sh"):
            for m in re.finditer(r"\$\{?(PYKERN_[A-Z0-9_]*[A-Z0-9])", p.read_text()):
                out[m.group(1)] = str(p.relative_to(ROOT))
    return out


def test_every_pykern_name_mentioned_or_read_is_declared():
    mentioned = {}
    for path in [*PKG.rglob("*.py"), ROOT / "README.md", ROOT / "ARCHITECTURE.md", *(ROOT / "docs").rglob("*.md")]:
        for m in re.finditer(r"PYKERN_[A-Z0-9_]*[A-Z0-9]", path.read_text()):
            mentioned.setdefault(m.group(0), str(path.relative_to(ROOT)))
    mentioned.update(_outside_reads())
    unknown = {n: where for n, where in mentioned.items() if n not in SETTINGS}
    assert not unknown, f"PYKERN_ names not declared in pykern/core/settings.py: {unknown}"


def test_every_entry_is_documented():
    for s in SETTINGS.values():
        assert s.name.startswith("PYKERN_") and s.doc and s.values, s
        assert "\n" not in s.doc and len(s.doc) <= 120 and s.doc.endswith("."), s.name
        assert s.scope in ("pykern", *_SCOPE_DIRS), s
        assert set(s.cache_key) <= {"cpu", "amdgpu"}, s


# ----------------------------------------------------------------------------- the readers

def test_flags_read_the_same_words():
    for name, default in (("PYKERN_CACHE", True), ("PYKERN_TIERS", True), ("PYKERN_FULL_TRACEBACK", False),
                          ("PYKERN_CACHE_EXPLAIN", False), ("PYKERN_EXEC_SOURCES", False)):
        assert settings.get(name, {}) is default
        assert settings.get(name, {name: ""}) is default  # empty counts as unset
        for off in ("0", "off", " OFF ", "false", "No", "disabled", "none"):
            assert settings.get(name, {name: off}) is False, (name, off)
        for on in ("1", "on", "yes", "True", "2"):
            assert settings.get(name, {name: on}) is True, (name, on)


def test_values_defaults_and_what_an_invalid_value_does():
    assert settings.get("PYKERN_CPU_WAVESIZE", {}) == 64
    assert settings.get("PYKERN_CPU_WAVESIZE", {"PYKERN_CPU_WAVESIZE": " 32"}) == 32
    with pytest.raises(SettingError, match="PYKERN_CPU_WAVESIZE='16': must be 32 or 64"):
        settings.get("PYKERN_CPU_WAVESIZE", {"PYKERN_CPU_WAVESIZE": "16"})
    with pytest.raises(ValueError, match="expected one of auto, cpu, hip"):
        settings.get("PYKERN_TARGET", {"PYKERN_TARGET": "gpu"})
    assert settings.get("PYKERN_TARGET", {"PYKERN_TARGET": " CPU "}) == "cpu"
    assert settings.get("PYKERN_PRELOAD", {"PYKERN_PRELOAD": "yes"}) == "on"
    assert settings.get("PYKERN_PRELOAD", {"PYKERN_PRELOAD": "sometimes"}) == "auto"  # ignored silently
    assert settings.get("PYKERN_CPU_BARRIERS", {"PYKERN_CPU_BARRIERS": "coroutine"}) == "coroutine"
    assert settings.get("PYKERN_CPU_BARRIERS", {"PYKERN_CPU_BARRIERS": "Coroutine"}) == "auto"  # as before: exact
    assert settings.get("PYKERN_HOST_LD", {"PYKERN_HOST_LD": "Off"}) == "none"
    assert settings.get("PYKERN_HOST_LD", {"PYKERN_HOST_LD": " /usr/bin/ld "}) == "/usr/bin/ld"
    assert settings.get("PYKERN_CACHE_MAX_BYTES", {"PYKERN_CACHE_MAX_BYTES": "2MiB"}) == 2 << 20
    assert settings.get("PYKERN_CACHE_WAIT", {"PYKERN_CACHE_WAIT": "1.5h"}) == 5400
    assert settings.get("PYKERN_MEMORY_CACHE_ENTRIES", {"PYKERN_MEMORY_CACHE_ENTRIES": "-3"}) == 0
    for name, bad in (("PYKERN_MEMORY_CACHE_ENTRIES", "many"), ("PYKERN_CACHE_MAX_BYTES", "lots"),
                      ("PYKERN_CACHE_WAIT", "a while")):
        with pytest.warns(SettingWarning, match=f"ignoring {name}"):
            assert settings.get(name, {name: bad}) == settings.default(name)
    with pytest.raises(KeyError):
        settings.get("PYKERN_NO_SUCH_THING", {})


def test_paths_are_kept_as_written():
    # resolved where used: an absolute path made here would be remembered for another cwd
    assert settings.get("PYKERN_CACHE_DIR", {"PYKERN_CACHE_DIR": "rel/dir"}) == "rel/dir"
    assert settings.get("PYKERN_BUILD_ID", {}) is None


def test_read_at_call_time(monkeypatch):
    from pykern.core import bounded

    monkeypatch.setenv("PYKERN_MEMORY_CACHE_ENTRIES", "3")
    assert bounded.entries_limit() == 3
    monkeypatch.setenv("PYKERN_MEMORY_CACHE_ENTRIES", "5")
    assert bounded.entries_limit() == 5
    monkeypatch.delenv("PYKERN_MEMORY_CACHE_ENTRIES")
    assert bounded.entries_limit() == 256


def test_source_says_where_the_value_came_from():
    assert settings.source("PYKERN_TIERS", {}) == "default"
    assert settings.source("PYKERN_TIERS", {"PYKERN_TIERS": ""}) == "default"
    assert settings.source("PYKERN_TIERS", {"PYKERN_TIERS": "off"}) == "environment"
    assert settings.source("PYKERN_PRELOAD", {"PYKERN_PRELOAD": "sometimes"}) == "default"
    rows = {r[0]: r for r in settings.rows({"PYKERN_TIERS": "off", "PYKERN_CPU_WAVESIZE": "7"})}
    assert set(rows) == {n for n, s in SETTINGS.items() if s.scope == "pykern"}
    assert rows["PYKERN_TIERS"][1:3] == ("off", "environment")
    assert rows["PYKERN_CACHE"][1:3] == ("on", "default")
    assert rows["PYKERN_CPU_WAVESIZE"][1].startswith("invalid:")


def test_cache_keys_hold_the_settings_text_as_before(monkeypatch):
    """The key parts of the compile-time settings are unchanged (a cache written before still
    hits): ``env:<name>`` with the variable's text as set ("" when unset), cpu target only."""
    from pykern.codegen import CompileOptions, key_options

    assert settings.key_settings("cpu") == ["PYKERN_CPU_WAVESIZE", "PYKERN_CPU_BARRIERS"]
    assert settings.key_settings("amdgpu") == []
    opts = CompileOptions()
    monkeypatch.delenv("PYKERN_CPU_WAVESIZE", raising=False)
    monkeypatch.delenv("PYKERN_CPU_BARRIERS", raising=False)
    assert key_options("cpu", opts) == {**asdict(opts), "env:PYKERN_CPU_WAVESIZE": "", "env:PYKERN_CPU_BARRIERS": ""}
    monkeypatch.setenv("PYKERN_CPU_WAVESIZE", " 32")
    monkeypatch.setenv("PYKERN_CPU_BARRIERS", "coroutine")
    assert key_options("cpu", opts) == {**asdict(opts), "env:PYKERN_CPU_WAVESIZE": " 32",
                                        "env:PYKERN_CPU_BARRIERS": "coroutine"}
    assert key_options("amdgpu", opts) == asdict(opts)


def test_warning_names_the_value_once_per_text():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        env = {"PYKERN_CACHE_WAIT": "soon"}
        settings.get("PYKERN_CACHE_WAIT", env)
        settings.get("PYKERN_CACHE_WAIT", env)
    assert len([x for x in w if issubclass(x.category, SettingWarning)]) == 1
