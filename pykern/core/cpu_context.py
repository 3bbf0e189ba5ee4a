"""What the cpu target's compiled code and its executor share: the launch context and the
shared memory of a block.

The launch context is one struct per launch, filled by the executor
(``runtime/cpu/executor.py``: ``LaunchCtx``, a ctypes structure built from
:data:`FIELDS`) and read and written by the compiled runner and scheduler
(``codegen/cpu/target.py``: byte offsets from :data:`OFFSETS`). Its fields are
naturally aligned, in order, as C lays out a struct (and ctypes does).

Example::

    >>> OFFSETS["error"], OFFSETS["vals"], OFFSETS["gbar"], SIZE
    (32, 64, 160, 184)
"""

from __future__ import annotations

#: Shared memory (static + dynamic) one block may use: the 64 KiB LDS of the GPUs pykern
#: targets, so that what runs on the cpu target fits them too. The compiled runner
#: allocates every block's shared area this big, so that (as in a GPU's LDS) a write past a
#: short dynamic array lands in memory of the block; the launcher refuses more.
LDS_BYTES = 64 * 1024

#: The launch context's fields in order: ``(name, scalar kind, count)``. Kinds: "i32",
#: "i64", "ptr" (8 bytes each but i32).
FIELDS = (
    ("grid", "i32", 3),
    ("block", "i32", 3),
    ("dyn_shared", "i64", 1),  # dynamic shared memory bytes of the launch
    ("error", "i32", 1),  # nonzero once a thread recorded an error (the first one wins)
    ("cancel", "i32", 1),  # set by Ctrl-C: the compiled loops poll it
    ("kind", "i32", 1),  # error kind (abi.ERROR_KINDS, and the cpu's own: divergent barriers ...)
    ("pad", "i32", 1),
    ("msg1", "ptr", 1),  # C strings of the error's source location(s)
    ("msg2", "ptr", 1),
    ("vals", "i64", 12),  # the error's values: indices, thread and block ids
    # cooperative launches (cg.this_grid().sync()): arrived, generation, exited blocks, blocks
    ("gbar", "i32", 4),
    ("san", "ptr", 1),  # sanitize=: the checker's context (runtime/cpu/sanitizer.py), null otherwise
)

KIND_SIZES = {"i32": 4, "i64": 8, "ptr": 8}


def _layout():
    offsets, end, align = {}, 0, 1
    for name, kind, count in FIELDS:
        size = KIND_SIZES[kind]
        end = -(-end // size) * size
        offsets[name] = end
        end += size * count
        align = max(align, size)
    return offsets, -(-end // align) * align


#: byte offset of each field
OFFSETS, SIZE = _layout()
