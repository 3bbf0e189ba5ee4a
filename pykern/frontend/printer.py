"""A readable listing of IR functions (what ``print(fn)`` shows).

Example::

    kernel saxpy(a: float32, x: float32[::1], out: float32[::1]) -> void
      locals: i: int64
      i = ((int64(@block_idx(axis=0):int32) * ...
      if (i < out.shape[0]):
        out[i] = ((a * x[i]) + ...)
"""

from __future__ import annotations

from . import ir


def format_function(fn: "ir.Function") -> str:
    """The listing of one function: header, locals, then the statements."""
    kind = "kernel" if fn.is_kernel else "device"
    params = ", ".join(f"{p.name}: {p.type}" for p in fn.params)
    lines = [f"{kind} {fn.name}({params}) -> {fn.return_type}"]
    pnames = {p.name for p in fn.params}
    others = [(n, t) for n, t in fn.locals.items() if n not in pnames]
    if others:
        lines.append("  locals: " + ", ".join(f"{n}: {t}" for n, t in others))
    flags = [f for f in ("uses_barrier", "uses_wave_ops", "uses_dynamic_shared") if getattr(fn, f, False)]
    if flags:
        lines.append("  flags: " + ", ".join(flags))
    _block(fn.body, 1, lines)
    return "\n".join(lines)


def _block(stmts, depth: int, lines: list):
    pad = "  " * depth
    if not stmts:
        lines.append(pad + "pass")
    for s in stmts:
        if isinstance(s, ir.Assign):
            lines.append(f"{pad}{s.target} = {s.value}")
        elif isinstance(s, ir.Store):
            lines.append(f"{pad}{s.array}[{', '.join(map(str, s.indices))}] = {s.value}")
        elif isinstance(s, ir.ExprStmt):
            lines.append(f"{pad}{s.value}")
        elif isinstance(s, ir.If):
            lines.append(f"{pad}if {s.cond}:")
            _block(s.then, depth + 1, lines)
            if s.orelse:
                lines.append(f"{pad}else:")
                _block(s.orelse, depth + 1, lines)
        elif isinstance(s, ir.While):
            lines.append(f"{pad}while {s.cond}:")
            _block(s.body, depth + 1, lines)
        elif isinstance(s, ir.ForRange):
            lines.append(f"{pad}for {s.var} in range({s.start}, {s.stop}, {s.step}):")
            _block(s.body, depth + 1, lines)
        elif isinstance(s, ir.Break):
            lines.append(pad + "break")
        elif isinstance(s, ir.Continue):
            lines.append(pad + "continue")
        elif isinstance(s, ir.Return):
            lines.append(pad + "return" + (f" {s.value}" if s.value is not None else ""))
        else:
            lines.append(f"{pad}<{type(s).__name__}>")
