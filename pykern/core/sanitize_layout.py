"""The kernel sanitizer's shadow-memory layout: the one contract between the checker compiled into a
sanitized kernel (``codegen/cpu/sanitizer_ir.py``, LLVM IR text) and the runtime that owns its
pages and reads its reports (``runtime/cpu/sanitizer.py``): cell and page sizes, the sanitizer
context's byte offsets (``S_*``), its flags and report kinds.

Example::

    >>> (1 << WPAGE_BITS) // GRANULE * CELL_BYTES  # bytes of a word-space shadow page
    262144
"""

#: bytes of one shadow cell; a word cell covers ``GRANULE`` bytes of memory, a byte cell one
CELL_BYTES = 64
GRANULE = 4
#: memory bytes one shadow page covers (log2): word space, byte space
WPAGE_BITS, BPAGE_BITS = 14, 12
#: the byte space's table keys carry this bit
BYTE_SPACE_KEY = 1 << 62
#: cell fields
CELL_FC, CELL_MODE = 48, 60

# ---- the sanitizer context (``runtime/cpu/sanitizer.py`` SanCtx; must match)
S_TABLE, S_MASK, S_MISS, S_REPORT, S_NTHREADS, S_WS, S_FLAGS, S_LOCK = 0, 8, 16, 24, 32, 36, 40, 44
S_CACHE, S_DEDUP, S_DMASK, S_STATIC = 48, 80, 88, 96
#: the mask of the array parameters whose in-bounds accesses go unchecked this launch (u32; bit:
#: ``codegen/lowering/sanitize_elision``'s order), copied into each thread's state at its start
S_SKIP = 56
#: the unchecked parameters' memory: how many ranges, and the table of them (32 bytes each: lo
#: u64, hi u64, own u64 -- 1: any access of it by another name collides, 0: only a write --,
#: the parameter's bit u64); an access the checker sees that lands in one is reported
S_NELIDE, S_ELIDED = 60, 64
ELIDED_BYTES = 32
S_BASE, S_ACLOCK, S_REL, S_BACQ, S_TSTATE, S_TSTRIDE = 104, 108, 112, 120, 128, 136
# the report being handed to the runtime
S_RKIND, S_RTABLE, S_RADDR, S_RCUR, S_RPREV, S_RPREVKIND, S_RBAR, S_RKEY, S_RSHARED, S_RAUX = (
    144, 148, 152, 160, 176, 192, 196, 200, 208, 216)
# watchpoints (``pykern.debug.watch``): [lo, hi) byte ranges (u64 pairs), their count, and the
# runtime's callback for an access that overlaps one
S_WATCH, S_NWATCH, S_WCALL = 224, 232, 240
#: [lo, hi) around every range of ``S_ELIDED`` (an access outside it need not look at them)
S_ELO, S_EHI = 248, 256
#: the page the checker found last: its table key (0: none) and address
S_LKEY, S_LPAGE = 264, 272
S_SIZE = 280
#: bytes of a thread's state in the context's table (``@pykern.san.me``)
TSTATE_BYTES = 32
#: SanCtx flags
F_RACE, F_INIT, F_LOCK, F_FENCE = 1, 2, 4, 8
#: report kinds (R_STRAY: an access the checker saw landed in an unchecked parameter's memory)
R_RACE, R_UNINIT, R_STRAY = 1, 2, 3
#: bytes per thread of the release table and per block of the acquire table (``fenced``)
REL_BYTES, ACQ_BYTES = 16, 48

