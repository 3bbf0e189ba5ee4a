"""Run a snippet in a fresh Python process and get back what it raised.

Crash-prone checks (LLVM aborts, stack overflows) must not kill pytest, so the
robustness tests run them through ``outcome(code)``: ``setup`` is exec'd as
source file ``<robust>`` (registered in linecache, so kernels defined there
compile), then ``body`` runs inside ``try``; the child
prints ``{"ok": ..., "type": ..., "msg": ..., "line": ...}`` as JSON, and a
process that dies instead yields ``{"crashed": returncode, "stderr": ...}``.

Example::

    r = outcome("k[1, 2000](a)", setup=KERNEL)
    assert r["type"] == "LaunchError"
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

_WRAPPER = r"""
import json, linecache, sys, traceback
import numpy as np
import pykern as cuda
cuda.set_target("cpu")
_src = {setup!r}
linecache.cache["<robust>"] = (len(_src), None, _src.splitlines(True), "<robust>")
exec(compile(_src, "<robust>", "exec"), globals())
out = {{"ok": True}}
try:
{body}
except BaseException as e:
    out = {{"ok": False, "type": type(e).__name__, "msg": str(e), "line": getattr(e, "line", None),
            "file": getattr(e, "file", None), "mro": [c.__name__ for c in type(e).__mro__]}}
sys.stdout.write("\n@@RESULT@@" + json.dumps(out, default=str) + "\n")
"""


def outcome(body: str, setup: str = "", timeout: float = 120, env: dict | None = None) -> dict:
    """Run ``setup`` then ``body`` (inside try) in a child python; see module doc."""
    code = _WRAPPER.format(setup=textwrap.dedent(setup), body=textwrap.indent(textwrap.dedent(body), "    "))
    e = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    e.update(env or {})
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=e)
    if p.returncode != 0 or "@@RESULT@@" not in p.stdout:
        return {"crashed": p.returncode, "stderr": p.stderr[-2000:], "stdout": p.stdout[-1000:]}
    return json.loads(p.stdout.split("@@RESULT@@")[-1])
