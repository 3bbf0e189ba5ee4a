"""``breakpoint()`` and ``pdb.set_trace()`` in kernels: one ``breakpoint`` intrinsic, where
the sim target stops in pdb at the user's line (the compiled targets refuse it)."""

from __future__ import annotations

import builtins

from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic
from pykern.frontend.calls.registry import lowers, lowers_attribute


@lowers_attribute("pdb", "set_trace")  # (pdb is not imported for this: a kernel's caller did)
@lowers(builtins.breakpoint)
def _breakpoint(lw, node, name):
    if node.args or node.keywords:
        raise lw.error(f"{name}() in kernels takes no arguments", node)
    return intrinsic(lw, "breakpoint", [], T.void, node)
