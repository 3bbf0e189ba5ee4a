"""Reference pages generated from pykern's own tables at every build, so they cannot go stale.

Directives (used in docs/reference/*.md):

* ``pykern-api``: every name of ``pykern.__all__`` with its docstring;
* ``pykern-kernel-namespace``: the kernel-only names of ``pykern.lang.stubs`` and the intrinsic
  table ``pykern.frontend.ir.INTRINSICS``;
* ``pykern-libdevice``: the public device functions of ``pykern.lang.libdevice`` and their signatures;
* ``pykern-settings``: every ``PYKERN_*`` setting of ``pykern.core.settings``;
* ``pykern-cli``: the subcommands and options of ``python -m pykern``'s argument parser.

A public name or setting without documentation is a build warning, which ``sphinx-build -W`` (the
test command) turns into a failure. Docstrings are shown as preformatted text: they are written
for ``help()``, and parsing them as reST would make every docstring a possible build failure.
"""

from __future__ import annotations

import argparse
import inspect

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


def _section(directive, ident: str, title: str) -> nodes.section:
    """A section whose HTML id is ``ident`` with dots as dashes, case kept: ``pykern.stream`` and
    ``pykern.Stream`` are different names (tests/docs/test_docs_reference.py looks ids up)."""
    sec = nodes.section(ids=[anchor(ident)])
    sec += nodes.title(text=title)
    return sec


def anchor(ident: str) -> str:
    """The HTML id of a generated entry."""
    return ident.replace(".", "-").replace("_", "-")


def _doc_block(text: str) -> nodes.Node:
    return nodes.literal_block(text, text, language="none")


def _table(headers, rows, widths=None) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=len(headers))
    table += group
    for w in widths or [1] * len(headers):
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for target, cells in ((head, headers), *((body, r) for r in rows)):
        row = nodes.row()
        for c in cells:
            entry = nodes.entry()
            if isinstance(c, nodes.Node):
                entry += c
            else:
                entry += nodes.paragraph(text=str(c))
            row += entry
        target += row
    return table


def _kind(obj) -> str:
    if inspect.isclass(obj):
        return "class"
    if inspect.ismodule(obj):
        return "module"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.ismethod(obj):
        return "function"
    return type(obj).__name__


def _signature(obj) -> str:
    if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj)):
        return ""
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def public_entries():
    """``(name, kind, signature, doc)`` of every name in ``pykern.__all__``."""
    import pykern

    out = []
    for name in pykern.__all__:
        obj = getattr(pykern, name)
        doc = inspect.getdoc(obj) or ""
        out.append((name, _kind(obj), _signature(obj), doc))
    return out


class ApiDirective(SphinxDirective):
    def run(self):
        groups = {}
        for name, kind, sig, doc in public_entries():
            if not doc.strip():
                logger.warning("pykern.%s is public (pykern.__all__) but has no docstring", name,
                               location=self.get_location())
            sec = _section(self, f"pykern.{name}", f"pykern.{name}")
            sec += nodes.paragraph(text=f"{kind}" + (f"  {name}{sig}" if sig else ""))
            sec += _doc_block(doc or "(undocumented)")
            groups.setdefault(_GROUPS.get(kind, "Objects"), []).append(sec)
        result = []
        for title in sorted(groups, key=lambda g: _ORDER.index(g) if g in _ORDER else len(_ORDER)):
            group = _section(self, f"api-{title.lower()}", title)
            group.extend(groups[title])
            result.append(group)
        return result


# how the API page groups public names, by what they are (``_kind``)
_GROUPS = {"function": "Functions", "class": "Classes", "module": "Modules"}
_ORDER = ["Functions", "Classes", "Objects", "Modules"]


class KernelNamespaceDirective(SphinxDirective):
    def run(self):
        from pykern.frontend import ir
        from pykern.lang import stubs

        names = []
        for name in stubs.__all__:
            obj = getattr(stubs, name)
            members = [(f"{name}.{a}", m) for a, m in vars(obj).items()
                       if isinstance(m, stubs.Stub) and not a.startswith("_")]
            for full, o in [(name, obj), *members]:
                doc = inspect.getdoc(o) or ""
                if not doc.strip():
                    logger.warning("cuda.%s has no doc in pykern/lang/stubs.py", full, location=self.get_location())
                names.append((nodes.literal(text=f"cuda.{full}"), doc.replace("``", "")))
        sec = _section(self, "kernel-names", "Names inside kernels")
        sec += _table(["name", "meaning"], names, [1, 3])
        ops = [(nodes.literal(text=n), op.category, nodes.literal(text=op.signature),
                op.doc or ", ".join(op.also) or "")
               for n, op in sorted(ir.INTRINSICS.items())]
        sec2 = _section(self, "intrinsics", "Intrinsic operations")
        sec2 += nodes.paragraph(text="The operations kernel names lower to, with the typing rule the IR verifier "
                                     "checks: x any scalar, n a number, i an integer, f a float, c a complex.")
        sec2 += _table(["intrinsic", "category", "signature", "notes"], ops, [2, 1, 3, 2])
        return [sec, sec2]


class LibdeviceDirective(SphinxDirective):
    def run(self):
        from pykern.lang import libdevice

        rows = []
        for name in sorted(n for n in vars(libdevice) if not n.startswith("_")):
            obj = getattr(libdevice, name)
            # the signatures the device function was declared with (numba's libdevice signatures);
            # the dispatcher keeps them as (return type, argument types)
            sigs = [f"{ret}({', '.join(map(str, args))})" for ret, args in getattr(obj, "_signatures", None) or ()]
            if not (hasattr(obj, "py_func") or callable(obj)) or inspect.ismodule(obj) or inspect.isclass(obj):
                continue
            if getattr(obj, "__module__", libdevice.__name__) not in (libdevice.__name__, None) and not hasattr(obj, "py_func"):
                continue
            if sigs:
                sig = "; ".join(sigs)
            else:
                py = getattr(obj, "py_func", obj)
                sig = name + _signature(py) if inspect.isfunction(py) else ""
            rows.append((nodes.literal(text=f"libdevice.{name}"), nodes.literal(text=sig or "-")))
        if not rows:
            logger.warning("pykern.lang.libdevice exposes no device functions", location=self.get_location())
        return [nodes.paragraph(text=f"{len(rows)} functions."), _table(["function", "signature"], rows, [1, 2])]


class SettingsDirective(SphinxDirective):
    def run(self):
        from pykern.core import settings

        result = []
        for s in settings.SETTINGS.values():
            if s.scope != "pykern":
                continue
            if not (s.doc or "").strip():
                logger.warning("setting %s has no doc in pykern/core/settings.py", s.name, location=self.get_location())
            sec = _section(self, s.name, s.name)
            default = "on" if s.default is True else "off" if s.default is False else "(unset)" if s.default is None else str(s.default)
            facts = [("default", default)]
            if s.values:
                facts.append(("values", str(s.values)))
            if s.cache_key:
                facts.append(("in the cache key for", ", ".join(s.cache_key)))
            if s.key_note:
                facts.append(("cache key", s.key_note))
            sec += nodes.paragraph(text=s.doc)
            sec += _table(["", ""], facts, [1, 3])
            result.append(sec)
        return result


class CliDirective(SphinxDirective):
    def run(self):
        from pykern import __main__ as cli

        parser = cli._parser()
        result = [_doc_block(parser.format_help())]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    sec = _section(self, f"cli-{name}", f"pykern {name}")
                    text = sub.format_help() if sub.add_help else (sub.description or "")
                    if name == "cache":
                        text = _cache_help(cli)
                    sec += _doc_block(text)
                    result.append(sec)
        return result


def _cache_help(cli) -> str:
    """``cache`` parses its own arguments (pykern.runtime.cache's CLI); show that parser's help."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
        cli.main(["cache", "--help"])
    return buf.getvalue()


def setup(app):
    for name, cls in (("pykern-api", ApiDirective), ("pykern-kernel-namespace", KernelNamespaceDirective),
                      ("pykern-libdevice", LibdeviceDirective), ("pykern-settings", SettingsDirective),
                      ("pykern-cli", CliDirective)):
        app.add_directive(name, cls)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
