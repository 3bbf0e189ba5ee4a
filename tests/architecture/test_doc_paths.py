"""Every module, file and test path that ARCHITECTURE.md, README.md and docs/ name exists.

What is checked, in each document:

* ``pykern/...`` and ``tests/...`` paths anywhere in the text (``{a,b}`` alternatives expanded);
* backticked module paths: ``cpu/regions.py``, ``hip/launch.launcher``, ``runtime.backends``,
  ``pykern.lang.random`` -- a slash path (``.py`` optional) must end a file or folder of
  ``pykern/`` (``executor.py`` alone names the one module of that name: module names are unique,
  ``test_module_names.py``), then any dotted rest after the file must be attributes of the module;
  a dotted ``pykern.x.y`` (or ``x.y`` whose first part is a ``pykern`` package) must import, the
  rest being attributes.

Names with placeholders (``test_<name>.py``, ``bench_*.py``, ``...``) are patterns, not paths.
"""

import importlib
import importlib.util
import pathlib
import re
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "pykern"
#: the documents a reader follows into the code (CHANGELOG.md is history: it names what was)
DOCS = [ROOT / "ARCHITECTURE.md", ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]

_PATH_IN_TEXT = re.compile(r"(?<![\w./-])((?:pykern|tests)/[\w./{},*<>-]*[\w}])")
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_PLACEHOLDER = re.compile(r"[<>*]|\.\.\.|\$")
#: what ends a file name that is not a module (``debugging.ipynb``, ``RESULTS.md``)
_FILE_KINDS = {"ipynb", "md", "txt", "json", "toml", "cfg", "ini", "yml", "yaml", "csv", "html", "rst", "sh", "so", "h",
               "hpp", "c", "cc", "cpp", "cxx", "cu", "hip", "ll", "bc", "o"}
_PACKAGES = {p.name for p in PKG.iterdir() if (p / "__init__.py").exists()}
#: every folder name below pykern/ (``hip``, ``lowering``...): a slash path starting with one is a module path
_FOLDERS = {p.name for p in PKG.rglob("*") if p.is_dir() and (p / "__init__.py").exists()} | {"pykern"}
#: module base name (no ``.py``) -> its dotted name, for the unique ones (``kernargs`` -> ``pykern.runtime.kernargs``)
_BY_BASENAME = {}
for _p in sorted(PKG.rglob("*.py")):
    if not _p.stem.startswith("__"):  # __init__, __main__ (find_spec("__main__") fails in a -c process)
        _BY_BASENAME.setdefault(_p.stem, []).append("pykern." + _p.relative_to(PKG).with_suffix("").as_posix().replace("/", "."))
#: (a name that is also a module outside pykern -- ``types``, ``random`` -- may mean that one: left out)
_BY_BASENAME = {k: v[0] for k, v in _BY_BASENAME.items() if len(v) == 1 and importlib.util.find_spec(k) is None}
#: old flat names of modules that moved into a folder: ``hip_launch`` is now ``hip/launch``
_FLAT = {p.parent.name + "_" + p.stem for p in PKG.rglob("*.py") if p.parent != PKG and p.name != "__init__.py"}
#: base names of the repository's other Python files (tests, benchmarks, scripts, samples)
_OTHER_FILES = {p.name for d in ("tests", "benchmarks", "scripts", "samples") for p in (ROOT / d).rglob("*.py")}


def expand(text: str) -> list:
    """``a/{b,c}/d`` -> ``["a/b/d", "a/c/d"]`` (nested alternatives too)."""
    m = re.search(r"\{([^{}]*)\}", text)
    if not m:
        return [text]
    return [x for alt in m.group(1).split(",") for x in expand(text[:m.start()] + alt + text[m.end():])]


def _files_under_pykern() -> list:
    return [p.relative_to(PKG).as_posix() for p in PKG.rglob("*")
            if "__pycache__" not in p.parts and (p.suffix == ".py" or p.is_dir())]


_PYKERN_FILES = _files_under_pykern()


def _ends_a_pykern_path(rel: str) -> bool:
    """``rel`` (``cpu/regions.py``, ``memory``, ``runtime/hip/``) is the end of a path below pykern/."""
    rel = rel.strip("/")
    return any(f == rel or f.endswith("/" + rel) for f in _PYKERN_FILES)


def _module_of(rel: str):
    """The dotted module name of the one pykern file whose path ends with ``rel`` (no ``.py``)."""
    hits = [f for f in _PYKERN_FILES if f.endswith(".py") and (f[:-3] == rel or f[:-3].endswith("/" + rel))]
    if len(hits) != 1:
        return None
    return "pykern." + hits[0][:-3].replace("/", ".").removesuffix(".__init__")


def _has_attrs(module: str, attrs: list) -> bool:
    try:
        obj = importlib.import_module(module)
    except ImportError:
        return False
    with warnings.catch_warnings():  # an attribute may choose the target (and say there is no GPU)
        warnings.simplefilter("ignore")
        for a in attrs:
            if not hasattr(obj, a):
                return False
            obj = getattr(obj, a)
    return True


def _dotted_resolves(name: str) -> bool:
    """``pykern.a.b.attr`` imports as far as a module goes, and the rest are attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        mod = ".".join(parts[:cut])
        try:
            importlib.import_module(mod)
        except ImportError:
            continue
        return _has_attrs(mod, parts[cut:])
    return False


def problem(token: str):
    """Why the backticked ``token`` names nothing (None when it is fine or names no module path)."""
    token = token.rstrip(".,:;")
    if _PLACEHOLDER.search(token) or token.startswith(("tests/", "/", "~", "../")) or "://" in token:
        return None
    for t in expand(token):
        t = t.split("(")[0].split("[")[0]
        if "/" in t:
            if t.startswith(("benchmarks/", "scripts/", "docs/", "samples/", "notebooks/", "examples/")):
                if not (ROOT / t).exists():
                    return f"{t}: no such file"
                continue
            if t.split("/")[0] not in _FOLDERS or t.rsplit(".", 1)[-1] in _FILE_KINDS:
                continue                                  # amdgcn/bitcode, hip/hip_runtime.h
            path, _, rest = t.partition(".py")
            if rest and not rest.startswith("."):
                continue                                  # .pyc, .pyi...: not a module path
            if not t.endswith(".py") and "." in t.rsplit("/", 1)[-1]:
                path, _, rest = t.partition(".")          # hip/launch.launcher
                rest = "." + rest
            path = path.removeprefix("pykern/")
            if not path:
                continue                                  # `pykern/` itself
            if not _ends_a_pykern_path(path + ".py") and not _ends_a_pykern_path(path):
                return f"{t}: no such module or folder in pykern/"
            attrs = [a for a in rest.split(".") if a]
            if attrs:
                mod = _module_of(path)
                if mod is None or not _has_attrs(mod, attrs):
                    return f"{t}: {'.'.join(attrs)} is not in {mod or path}"
        elif t.endswith(".py"):
            if not _ends_a_pykern_path(t) and t not in _OTHER_FILES:
                return f"{t}: no module of that name in pykern/"
        elif t.rsplit(".", 1)[-1] in _FILE_KINDS:
            continue                                      # debugging.ipynb: a file, not a module
        elif re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", t):
            first = t.split(".")[0]
            if first in _FLAT and first not in _BY_BASENAME:
                return f"{t}: {first} is an old flat name (now {first.replace('_', '/', 1)})"
            if first in _BY_BASENAME and first not in _PACKAGES:
                if not _has_attrs(_BY_BASENAME[first], t.split(".")[1:]):
                    return f"{t}: not in {_BY_BASENAME[first]}"
            elif first == "pykern" or first in _PACKAGES:
                full = t if first == "pykern" else "pykern." + t
                if not _dotted_resolves(full):
                    return f"{t}: does not import as a module (and attributes)"
    return None


def problems_in(text: str) -> list:
    out = []
    for m in _PATH_IN_TEXT.finditer(text):
        raw = m.group(1)
        if _PLACEHOLDER.search(raw):
            continue
        for p in expand(raw):
            p = p.rstrip(".")
            if not (ROOT / p).exists():
                out.append(f"{p}: no such file or folder")
    for m in _BACKTICKED.finditer(text):
        why = problem(m.group(1))
        if why:
            out.append(why)
    return sorted(set(out))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_named_paths_exist(doc):
    found = problems_in(doc.read_text())
    assert not found, f"{doc.relative_to(ROOT)} names what does not exist:\n" + "\n".join(found)


def test_stale_names_are_found():
    text = ("`runtime/launch.py` `plan`, pykern/runtime/launch.py, `hip/launch.no_such_name`, "
            "`pykern.runtime.no_such`, `runtime.launch.load`, tests/{lang,nowhere}, `nowhere.py`, "
            "`cpu_executor._loaded`, `kernargs.no_such`")
    found = problems_in(text)
    assert found == sorted([
        "cpu_executor._loaded: cpu_executor is an old flat name (now cpu/executor)",
        "hip/launch.no_such_name: no_such_name is not in pykern.runtime.hip.launch",
        "kernargs.no_such: not in pykern.runtime.kernargs",
        "nowhere.py: no module of that name in pykern/",
        "pykern.runtime.no_such: does not import as a module (and attributes)",
        "pykern/runtime/launch.py: no such file or folder",
        "runtime.launch.load: does not import as a module (and attributes)",
        "runtime/launch.py: no such module or folder in pykern/",
        "tests/nowhere: no such file or folder",
    ])


def test_existing_names_pass():
    text = ("`cpu/regions.py`, `hip/launch.launcher`, `pykern.lang.random`, `runtime/{cpu,hip}/driver.py`, "
            "`core/strides.py`, pykern/core/settings.py, tests/architecture/, `test_<name>.py`, `executor.py`, "
            "`cpu_helpers.py`, `pykern/`, `amdgcn/bitcode`, `syncthreads_count/and/or`, tests/runtime/{cpu,hip}, `hip/hip_runtime.h`, "
            "`kernargs.compile_guarded`, `settings.get`, `debugging.ipynb`, `types.ulonglong`")
    assert problems_in(text) == []
