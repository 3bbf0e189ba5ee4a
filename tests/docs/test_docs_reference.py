"""The generated reference has an entry for every public name and every setting.

The entries are generated from ``pykern.__all__`` and ``pykern.core.settings`` by
docs/_ext/pykern_reference.py; a name without a docstring is a build warning (an error under -W),
and these tests check the built pages hold an entry for each name, so a public name or setting
added without documentation fails the suite."""


import pykern
from pykern.core import settings

from .conftest import load_ext


def _ext():
    return load_ext("pykern_reference")


def test_every_public_name_has_a_documented_entry(built_docs):
    ext = _ext()
    html = (built_docs / "reference" / "api.html").read_text()
    missing = [n for n in pykern.__all__ if f'id="{ext.anchor("pykern." + n)}"' not in html]
    assert not missing, f"public names with no entry in the API reference: {missing}"
    undocumented = [n for n, _kind, _sig, doc in ext.public_entries() if not doc.strip()]
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_every_setting_has_an_entry(built_docs):
    ext = _ext()
    html = (built_docs / "reference" / "settings.html").read_text()
    names = [row[0] for row in settings.rows()]
    assert names
    missing = [n for n in names if f'id="{ext.anchor(n)}"' not in html]
    assert not missing, f"settings with no entry in the reference: {missing}"


def test_cli_and_kernel_namespace_pages_are_generated(built_docs):
    cli = (built_docs / "reference" / "cli.html").read_text()
    for sub in ("info", "compile", "asm", "cache"):
        assert f'id="cli-{sub}"' in cli, sub
    assert "--code-object-version" in cli
    from pykern.frontend import ir
    from pykern.lang import stubs

    ns = (built_docs / "reference" / "kernel-namespace.html").read_text()
    for name in stubs.__all__:
        assert f"cuda.{name}" in ns, name
    for op in ir.INTRINSICS:
        assert op in ns, op
    lib = (built_docs / "reference" / "libdevice.html").read_text()
    for fn in ("sincos", "sinf", "frexp", "byte_perm"):
        assert f"libdevice.{fn}<" in lib, fn
