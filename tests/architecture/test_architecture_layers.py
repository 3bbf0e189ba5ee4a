"""ARCHITECTURE.md's layer rules, checked against every import statement in pykern/.

The rules are read from ARCHITECTURE.md itself (the "Layers" table and the
"Known import cycles" table), so the document and the test cannot drift apart.
Imports are read with ``ast`` -- module-level and function-level alike, only
``if TYPE_CHECKING:`` blocks are skipped (they never run).
"""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "pykern"
DOC = ROOT / "ARCHITECTURE.md"


# ----------------------------------------------------------------------------- reading the code
def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree):
    """Every Import/ImportFrom with its line, outside ``if TYPE_CHECKING:`` bodies."""
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                todo.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            todo.append(child)


def _target(name: str) -> str:
    """The pykern module ``name`` refers to: itself, or the package/module defining attribute ``name``."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def imports_of(mod: str) -> dict:
    """{imported pykern module: first line} for module ``mod``."""
    path = MODULES[mod]
    is_pkg = path.name == "__init__.py"
    out: dict = {}
    for node in _import_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names = [f"{prefix}.{a.name}" for a in node.names] if prefix.split(".")[0] == "pykern" else [prefix]
        for n in names:
            if n.split(".")[0] != "pykern":
                continue
            t = _target(n)
            if t and t != mod:
                out.setdefault(t, node.lineno)
    return out


GRAPH = {m: imports_of(m) for m in MODULES}


# ----------------------------------------------------------------------------- reading the rules
def _table(heading: str) -> list:
    """Rows (lists of cells, markdown stripped of backticks) of the first table under ``heading``."""
    text = DOC.read_text()
    m = re.search(rf"^#+ {re.escape(heading)}\s*$", text, re.M)
    assert m, f"ARCHITECTURE.md has no '{heading}' section"
    rows = []
    for line in text[m.end():].splitlines():
        line = line.strip()
        if not line:
            if rows:
                break
            continue
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip().replace("`", "") for c in line.strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            continue
        rows.append(cells)
    return rows[1:]  # without the header


def _split(cell: str) -> list:
    return [x.strip() for x in cell.split(",") if x.strip()]


LAYERS = {row[0]: (_split(row[1]), _split(row[2])) for row in _table("Layers")}


def _pattern_match(pattern: str, mod: str) -> int:
    """How specific ``pattern`` matches ``mod`` (0 = no match)."""
    if pattern.endswith(".*"):
        base = pattern[:-2]
        return len(base) if mod.startswith(base + ".") else 0
    return len(pattern) + 1000 if pattern == mod else 0


def layer_of(mod: str) -> str:
    best = max(((_pattern_match(p, mod), name) for name, (pats, _) in LAYERS.items() for p in pats), default=(0, ""))
    return best[1] if best[0] else ""


def allowed(src: str, dst: str) -> bool:
    ls, ld = layer_of(src), layer_of(dst)
    if ls == ld:
        return True
    may = LAYERS[ls][1]
    return "everything" in may or ld in may or any(_pattern_match(p, dst) for p in may if p not in LAYERS)


# ----------------------------------------------------------------------------- the tests
def test_the_rules_are_a_table_in_architecture_md():
    assert {"base", "frontend", "codegen", "runtime", "dispatch", "lang", "host", "numba_compat", "glue"} <= set(LAYERS), LAYERS
    for name, (_, may) in LAYERS.items():
        for m in may:
            assert m in LAYERS or m == "everything" or any(_pattern_match(m, x) for x in MODULES), (name, m)


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_every_module_is_in_a_layer(mod):
    assert layer_of(mod), f"{mod} is in no layer of ARCHITECTURE.md's Layers table"


def test_imports_follow_the_layer_rules():
    broken = [f"{MODULES[src].relative_to(ROOT)}:{line}: {src} ({layer_of(src)}) imports {dst} ({layer_of(dst)})"
              for src, deps in GRAPH.items() for dst, line in sorted(deps.items()) if not allowed(src, dst)]
    assert not broken, "imports that break ARCHITECTURE.md's layer rules:\n" + "\n".join(broken)


def _cycles() -> list:
    """Strongly connected groups of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(frozenset(group))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


KNOWN_CYCLES = [frozenset(_split(row[0])) for row in _table("Known import cycles")]


def test_no_import_cycles_but_the_known_ones():
    found = _cycles()
    new = [sorted(c) for c in found if c not in KNOWN_CYCLES]
    assert not new, f"import cycles not in ARCHITECTURE.md's 'Known import cycles': {new}"


def test_the_known_cycles_still_exist():
    # a cycle that was broken must leave the list, so the list stays the truth
    found = set(_cycles())
    stale = [sorted(c) for c in KNOWN_CYCLES if c not in found]
    assert not stale, f"remove these from ARCHITECTURE.md's 'Known import cycles': {stale}"


def test_the_reader_sees_function_level_imports():
    # the rules cover imports inside functions too (they run, just later)
    assert "pykern.runtime.hip.library" in GRAPH["pykern.runtime"]  # only imported inside current_target()
    assert "pykern.frontend.lower_ast" in GRAPH["pykern.frontend"]  # only imported inside compile_ir()
    # and a layer violation is reported
    assert not allowed("pykern.runtime.backends", "pykern.frontend.typeof")
    assert not allowed("pykern.codegen.target_interface", "pykern.frontend.verify")
    assert allowed("pykern.codegen.lowering.module", "pykern.frontend.ir")
