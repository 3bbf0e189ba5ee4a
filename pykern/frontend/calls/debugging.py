"""``breakpoint()`` and ``pdb.set_trace()`` in kernels: one ``breakpoint`` intrinsic, where
the sim target stops in pdb at the user's line (the compiled targets refuse it)."""

from __future__ import annotations

import builtins
import pdb

from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic
from pykern.frontend.calls.registry import lowers


@lowers(builtins.breakpoint, pdb.set_trace)
def _breakpoint(lw, node, name):
    if node.args or node.keywords:
        raise lw.error(f"{name}() in kernels takes no arguments", node)
    return intrinsic(lw, "breakpoint", [], T.void, node)
