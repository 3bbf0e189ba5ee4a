"""A variable's versions that never meet get names of their own (numba types each SSA version apart).

The typing passes (``lower_ast``) give a variable one type for the whole function. numba
instead types each assignment's value (an SSA version) on its own and unifies only the
versions that meet where paths join (a phi: after an ``if``, at a loop's head), so it accepts
``t = a[i]`` (2-d) then ``t = t.reshape(4)``, or ``for t in range(3)`` then ``t = 2.5``.

``split`` finds, before lowering, the *webs* of each variable: its definitions (assignments,
loop targets, the parameter's value on entry) joined when one read can see both, through
``if`` joins and loop back edges (reaching definitions over the structured AST). A variable
with more than one web gets a copy of the function's AST in which every web but the first
is renamed ``name$sK``; the typing passes then see separate variables. Versions of one web
are still unified as before (``x = 1; if c: x = 2.5`` with ``x`` read after the ``if`` is
float64 at both assignments: numba gives the int version int64 and widens at the join, a
difference pykern keeps), and versions of one web that cannot unify stay a ``CompileError``.

Left whole (not split): names a nested ``def``/``lambda`` reads (it reads the variable when it
is called, not one version), names bound by a nested ``def``, compile-time arguments, and
every name of a function using statements pykern refuses anyway (``del``, ``global``,
``try``, ...; the lowerer reports them). An augmented assignment (``s += x``) belongs to the
web of the value it reads. Renaming follows source order, so it is deterministic.
"""

from __future__ import annotations

import ast
import copy
import re

from pykern.frontend.local_defs import captures

_SUFFIX = "$s"
# a version (t$s1), and a literal_unroll copy of a loop variable (t$u12_0, lower_loops.unroll_body)
_INTERNAL = re.compile(r"(?<![\w$])([A-Za-z_]\w*)(?:\$s\d+|\$u\d+_\d+)+")


def user_text(text: str) -> str:
    """``text`` with every variable pykern renamed named as the user wrote it (``t$s1`` -> ``t``)."""
    return _INTERNAL.sub(r"\1", text) if text and "$" in text else text


def user_listing(text: str) -> str:
    """An IR listing (``inspect_types``) with the user's names: a variable's versions are named
    as in the source, and its ``locals:`` entries of one type are listed once."""
    lines = user_text(text).splitlines()
    for k, line in enumerate(lines):
        head, sep, rest = line.partition("locals: ")
        if sep and not head.strip():
            lines[k] = head + sep + ", ".join(dict.fromkeys(_top_level_items(rest)))
    return "\n".join(lines)


def _top_level_items(text: str) -> list:
    """``text`` split at the ", " outside brackets (``t: UniTuple(int64, 2)`` is one item)."""
    items, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and text.startswith(", ", k):
            items.append(text[start:k])
            start = k + 2
    return items + [text[start:]]


class _Bail(Exception):
    """A construct the analysis does not model: leave every name whole."""


# statements whose only effect on variables is the names they read
_READ_ONLY = (ast.Expr, ast.Assert, ast.Raise, ast.Pass, ast.Global, ast.Nonlocal)  # declarations of names only read (_nested_names)
_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)


def split(fn: ast.FunctionDef, params: list, keep: set):
    """``(fn, {})`` when no variable of ``fn`` has two webs, else a renamed copy of ``fn`` (the
    original may be shared: a nested def's node) and {internal name: user's name}. ``params``
    hold run-time values on entry; ``keep`` are names never split."""
    try:
        flow = _Flow(keep | _nested_names(fn))
        flow.walk(fn.body, {p: frozenset([flow.param_def(p)]) for p in params if p not in flow.keep})
    except _Bail:
        return fn, {}
    renames = flow.renames()
    if not renames:
        return fn, {}
    return _copy_with(fn, {id(node): new for node, new in renames}), {new: node.id for node, new in renames}


def _copy_with(fn, by_id: dict):
    """A deep copy of ``fn`` with the Name nodes ``by_id`` (by their id in ``fn``) renamed."""
    memo: dict = {}
    out = copy.deepcopy(fn, memo)
    for old_id, new in by_id.items():
        memo[old_id].id = new
    return out


def _nested_names(fn) -> set:
    """Names a nested def or lambda of ``fn`` reads or a nested def binds."""
    out = set()
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.Lambda)):
            out |= captures(n)
            if isinstance(n, ast.FunctionDef):
                out.add(n.name)
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            if set(n.names) & assigned_names(fn):
                raise _Bail  # lowering refuses the assignment; leave the names alone until then
            continue
        todo.extend(ast.iter_child_nodes(n))
    return out


def assigned_names(fn) -> set:
    """Names ``fn`` itself binds (assignments, loop and ``with`` targets, nested defs), not
    those its nested functions bind."""
    out = set()
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out.add(n.name)
            continue
        elif isinstance(n, ast.Lambda):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return out



class _Loop:
    def __init__(self):
        self.breaks: list = []
        self.continues: list = []


def _join(*states):
    """Where paths meet: each name may hold any definition reaching it on one of them."""
    live = [s for s in states if s is not None]
    if not live:
        return None
    out = dict(live[0])
    for s in live[1:]:
        for k, v in s.items():
            out[k] = out.get(k, frozenset()) | v
    return out


class _Flow:
    """Reaching definitions over the structured AST. A state maps each name to the
    definitions (ids) its value may come from; None is a state no path reaches."""

    def __init__(self, keep):
        self.keep = set(keep)
        self.def_ids: dict = {}  # id(Name node) -> def id, numbered in source order
        self.def_nodes: list = []  # def id -> Name node (None for a parameter's entry value)
        self.def_names: list = []  # def id -> variable name
        self.reads: dict = {}  # id(Name node) -> (node, definitions it may see)
        self.ties: dict = {}  # def id -> definitions in its web (an augmented assignment's reads)
        self.loops: list = []

    def param_def(self, name) -> int:
        self.def_nodes.append(None)
        self.def_names.append(name)
        return len(self.def_nodes) - 1

    def define(self, node: ast.Name, st: dict) -> int:
        d = self.def_ids.get(id(node))
        if d is None:
            d = self.def_ids[id(node)] = len(self.def_nodes)
            self.def_nodes.append(node)
            self.def_names.append(node.id)
        st[node.id] = frozenset([d])
        return d

    def read(self, node: ast.Name, st: dict):
        if node.id in self.keep:
            return
        seen = st.get(node.id, frozenset())
        _, before = self.reads.get(id(node), (node, frozenset()))
        self.reads[id(node)] = (node, before | seen)

    # -- expressions -------------------------------------------------------------------------

    def loads(self, node, st):
        if node is None:
            return
        todo = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, _SCOPES):
                raise _Bail
            if isinstance(n, ast.Lambda):  # its body reads at call time (its names are kept whole)
                todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
                continue
            if isinstance(n, ast.Name):
                self.read(n, st)
            todo.extend(ast.iter_child_nodes(n))

    def target(self, node, st):
        """Assign to ``node``, left to right as Python does (``i, a[i] = ...`` indexes by the new i)."""
        if isinstance(node, ast.Name):
            if node.id not in self.keep:
                self.define(node, st)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for e in node.elts:
                self.target(e, st)
        elif isinstance(node, ast.Starred):
            self.target(node.value, st)
        else:
            self.loads(node, st)

    # -- statements --------------------------------------------------------------------------

    def walk(self, body, st):
        for s in body:
            st = self.stmt(s, {} if st is None else st)  # code after a return: reached by nothing
        return st

    def stmt(self, s, st):
        if isinstance(s, ast.Assign):
            self.loads(s.value, st)
            for t in s.targets:
                self.target(t, st)
        elif isinstance(s, ast.AnnAssign):
            self.loads(s.value, st)
            if s.value is not None:
                self.target(s.target, st)
        elif isinstance(s, ast.AugAssign):
            self.augassign(s, st)
        elif isinstance(s, ast.If):
            self.loads(s.test, st)
            return _join(self.walk(s.body, dict(st)), self.walk(s.orelse, dict(st)))
        elif isinstance(s, (ast.For, ast.While)):
            return self.loop(s, st)
        elif isinstance(s, ast.Return):
            self.loads(s.value, st)
            return None
        elif isinstance(s, (ast.Break, ast.Continue)):
            if self.loops:
                loop = self.loops[-1]
                (loop.breaks if isinstance(s, ast.Break) else loop.continues).append(st)
            return None
        elif isinstance(s, ast.FunctionDef):
            for d in s.args.defaults + s.args.kw_defaults:
                self.loads(d, st)
        elif isinstance(s, _READ_ONLY):
            for child in ast.iter_child_nodes(s):
                self.loads(child, st)
        else:
            raise _Bail
        return st

    def augassign(self, s, st):
        self.loads(s.value, st)
        t = s.target
        if not isinstance(t, ast.Name):
            self.loads(t, st)
            return
        if t.id in self.keep:
            return
        before = st.get(t.id, frozenset())
        d = self.define(t, st)
        self.ties[d] = self.ties.get(d, frozenset()) | before

    def loop(self, s, st):
        """A ``for``/``while`` loop: its head is where the state on entry meets the states at
        the ends of iterations; walked until that settles (the sets only grow)."""
        if isinstance(s, ast.For):
            self.loads(s.iter, st)
        head = dict(st)
        while True:
            loop = _Loop()
            self.loops.append(loop)
            try:
                body_in = dict(head)
                if isinstance(s, ast.While):
                    self.loads(s.test, body_in)
                else:
                    self.target(s.target, body_in)
                end = self.walk(s.body, body_in)
            finally:
                self.loops.pop()
            new_head = _join(st, end, *loop.continues)
            if new_head == head:
                break
            head = new_head
        # the loop ends at its head (the test fails, the sequence is exhausted), then runs `else`
        return _join(self.walk(s.orelse, dict(head)), *loop.breaks)

    # -- webs --------------------------------------------------------------------------------

    def renames(self) -> list:
        """[(Name node, internal name)] for every definition and read of a web that is not
        its variable's first."""
        parent = list(range(len(self.def_nodes)))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(group):
            group = sorted(group)
            for g in group[1:]:
                a, b = find(group[0]), find(g)
                if a != b:
                    parent[max(a, b)] = min(a, b)  # a web's root is its first definition

        for _, seen in self.reads.values():
            union(seen)
        for d, before in self.ties.items():
            union(before | {d})
        roots_of: dict = {}  # name -> web roots in source order
        for d, name in enumerate(self.def_names):
            r = find(d)
            roots = roots_of.setdefault(name, [])
            if r not in roots:
                roots.append(r)
        new_name = {}
        for name, roots in roots_of.items():
            # a parameter's web keeps the name (the parameter's), else the first assigned
            for k, r in enumerate(sorted(roots)[1:], 1):
                new_name[r] = f"{name}{_SUFFIX}{k}"
        if not new_name:
            return []
        out = []
        for d, node in enumerate(self.def_nodes):
            new = new_name.get(find(d))
            if new is not None and node is not None:
                out.append((node, new))
        for node, seen in self.reads.values():
            new = new_name.get(find(min(seen))) if seen else None
            if new is not None:
                out.append((node, new))
        return out
