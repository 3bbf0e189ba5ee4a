"""Sanitized launches on the cpu target: the shadow memory the compiled checker
(``codegen/cpu/sanitizer_ir.py``) reads and writes, and the reports it hands back.

A launch of a kernel compiled with ``sanitize=`` runs its blocks one after another on the calling
thread (a cooperative launch: one OS thread per block, the checker under a spin lock). Shadow
memory is per element: a 64-byte cell per aligned 4-byte granule (16 bytes per byte of memory the
kernel touches with 4-, 8- or 16-byte elements), plus 64 bytes per byte for the granules that 1-
or 2-byte or misaligned accesses touched. It comes in 256 KiB pages made on the first access of
each (``_Store.page``) and kept for the next launch (thread ids grow from launch to launch, so an
earlier launch's records read as absent; nothing is cleared); one launch may hold at most
``SHADOW_LIMIT`` bytes (past it, accesses of new memory go unchecked and the launch warns), and a
launch that starts with more than ``KEEP_LIMIT`` bytes kept frees them all first. Memory is
initialised unless it is shared memory (per block), a local array or a ``device_array`` nothing
wrote yet (tracked per byte across launches while ``PYKERN_SANITIZE`` includes ``init``). Hazards
come back through ``_Shadow.report``; identical ones (same kind and the same two access sites) are
counted once, and after the launch they raise a ``SanitizerError`` (or warn, with ``warn``).

Example::

    @pykern.jit(sanitize="race")
    def k(a):
        a[0] = cuda.threadIdx.x        # every thread writes a[0]
    k[1, 32](np.zeros(1))              # SanitizerError: data race on array 'a' element [0] ...
"""

from __future__ import annotations

import ctypes
import threading
import warnings
from typing import NamedTuple

import numpy as np

from pykern.core import sanitize_layout as layout
from pykern.core.errors import SanitizerError, SanitizerWarning
from pykern.core.sanitize import REPORT_LIMIT, checks
from pykern.core.strides import span

CELL = layout.CELL_BYTES
#: shadow page size (bytes): 4096 word cells (16 KiB of memory) or 4096 byte cells (4 KiB)
PAGE_BYTES = (1 << layout.WPAGE_BITS) // layout.GRANULE * CELL
assert PAGE_BYTES == (1 << layout.BPAGE_BITS) * CELL
#: shadow bytes one launch may hold
SHADOW_LIMIT = 4 << 30
#: shadow bytes kept from one launch to the next: a launch that starts with more frees them all
#: (making and faulting in fresh pages cost sanitized saxpy more than its checks)
KEEP_LIMIT = 512 << 20
#: thread ids are u32: a launch whose ids would pass this starts the shadow afresh
_ID_LIMIT = (1 << 32) - 2

_MISS = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_REPORT = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_KINDS = {0: "read", 1: "write", 2: "atomic"}


class SanCtx(ctypes.Structure):
    """Layout fixed by ``codegen/cpu/sanitizer_ir.py`` (``S_*`` offsets)."""

    _fields_ = [
        ("table", ctypes.c_void_p), ("mask", ctypes.c_int64), ("miss", ctypes.c_void_p), ("report", ctypes.c_void_p),
        ("nthreads", ctypes.c_int32), ("wave", ctypes.c_int32), ("flags", ctypes.c_int32), ("lock", ctypes.c_int32),
        ("cache", ctypes.c_void_p), ("skip", ctypes.c_uint32), ("nelide", ctypes.c_uint32), ("elided", ctypes.c_void_p),
        ("_unused", ctypes.c_int64),
        ("dedup", ctypes.c_void_p), ("dmask", ctypes.c_int64), ("static", ctypes.c_int64),
        ("base", ctypes.c_uint32), ("aclock", ctypes.c_uint32), ("rel", ctypes.c_void_p), ("bacq", ctypes.c_void_p),
        ("tstate", ctypes.c_void_p), ("tstride", ctypes.c_uint32), ("_pad", ctypes.c_uint32),
        ("rkind", ctypes.c_int32), ("rtable", ctypes.c_int32), ("raddr", ctypes.c_uint64),
        ("rcur", ctypes.c_uint8 * 16), ("rprev", ctypes.c_uint8 * 16), ("rprevkind", ctypes.c_int32),
        ("rbar", ctypes.c_int32), ("rkey", ctypes.c_uint64), ("rshared", ctypes.c_uint64), ("raux", ctypes.c_uint64),
        ("watch", ctypes.c_void_p), ("nwatch", ctypes.c_int64), ("wcall", ctypes.c_void_p),
        ("elo", ctypes.c_uint64), ("ehi", ctypes.c_uint64), ("lkey", ctypes.c_uint64), ("lpage", ctypes.c_void_p),
    ]


assert ctypes.sizeof(SanCtx) == layout.S_SIZE and SanCtx.raux.offset == layout.S_RAUX
assert SanCtx.base.offset == layout.S_BASE and SanCtx.tstride.offset == layout.S_TSTRIDE
assert SanCtx.skip.offset == layout.S_SKIP and SanCtx.elided.offset == layout.S_ELIDED
assert SanCtx.watch.offset == layout.S_WATCH and SanCtx.wcall.offset == layout.S_WCALL

#: the watchpoints of a launch compiled with sanitize "watch" (``pykern.debug.watch`` sets it):
#: ``ranges()`` the [lo, hi) byte ranges watched, ``access(kind, file, line, col, thread, block,
#: address, nbytes)`` before each access that overlaps one, ``launch_ended()`` after the launch
watcher = None
_WATCHED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint64, ctypes.c_int64, ctypes.c_int32)

#: what the last sanitized launch of this process used: ``shadow_bytes`` (the shadow it held),
#: ``pages`` (shadow pages) and ``unchecked`` (the array parameters whose in-bounds accesses it
#: left unchecked, ``elision``); the benchmarks report them
last_launch = {"shadow_bytes": 0, "pages": 0, "unchecked": []}

_REC = np.dtype([("thr", "<u4"), ("ep", "<u4"), ("wep", "<u2"), ("gep", "<u2"), ("site", "<u2"), ("flags", "<u2")])


class _Store:
    """The shadow pages, kept from launch to launch: table key -> page (``sanitizer_ir``'s keys:
    word-space page + 1, byte-space page + 1 with ``BYTE_SPACE_KEY``), the open-addressing table
    the checker probes, and the next launch's thread id base."""

    def __init__(self):
        self.lock = threading.Lock()  # one sanitized launch at a time shares these pages
        self.reset()

    def reset(self):
        self.pages = {}
        self.bytes = 0
        self.used = 0
        self.table = np.zeros(2 * (1 << 12), np.uint64)
        self.next_base = 1  # a zero cell's thread (0) is always below a launch's base
        self.exhausted = False

    def page(self, key):
        """The shadow page of ``key`` (None past ``SHADOW_LIMIT``)."""
        mem = self.pages.get(key)
        if mem is not None:
            return mem
        if self.bytes + PAGE_BYTES > SHADOW_LIMIT:
            self.exhausted = True
            return None
        mem = np.zeros(PAGE_BYTES, np.uint8)  # a zero cell: initialised, nothing accessed
        self.bytes += PAGE_BYTES
        self.pages[key] = mem
        self._insert(key, mem.ctypes.data)
        return mem

    def _insert(self, key, value):
        self.used += 1
        if 2 * self.used > len(self.table) // 2:
            self._grow()
        mask = len(self.table) // 2 - 1
        h = ((key * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF) >> 29 & mask
        while self.table[2 * h]:
            h = (h + 1) & mask
        self.table[2 * h], self.table[2 * h + 1] = key, value

    def _grow(self):
        old = self.table
        self.table = np.zeros(2 * len(old), np.uint64)
        self.used = 0
        for k, v in zip(old[0::2].tolist(), old[1::2].tolist()):
            if k:
                self._insert(k, v)

    # ---- the cells of memory bytes (for device arrays' unwritten bytes)
    def word_cells(self, start, stop, make=True):
        """``[(granule address of the first, cells as (n, CELL) uint8)]`` covering the granules of
        ``[start, stop)``, page by page."""
        out = []
        wbits = layout.WPAGE_BITS
        g, end = start & ~3, (stop + 3) & ~3
        while g < end:
            page = g >> wbits
            lo, hi = page << wbits, min(end, (page + 1) << wbits)
            mem = self.page(page + 1) if make else self.pages.get(page + 1)
            if mem is not None:
                cells = mem.reshape(-1, CELL)
                out.append((g, cells[(g - lo) // 4:(hi - lo) // 4]))
            g = hi
        return out

    def byte_cell(self, a, make=True):
        bbits = layout.BPAGE_BITS
        key = ((a >> bbits) + 1) | layout.BYTE_SPACE_KEY
        mem = self.page(key) if make else self.pages.get(key)
        return None if mem is None else mem.reshape(-1, CELL)[a & ((1 << bbits) - 1)]


_store = _Store()


def _thr(cells):
    """The write records' thread ids of ``cells`` ((n, CELL) uint8)."""
    return cells[:, 0:4].copy().view("<u4")[:, 0]


def _mark_unwritten(store, start, bits, base):
    """At a launch's start: the bytes of ``[start, start + len(bits))`` whose ``bits`` are 0 read
    as unwritten (write record thread = ``base``), the others as initialised."""
    stop = start + len(bits)
    for g, cells in store.word_cells(start, stop):
        n = len(cells)
        addr = g + 4 * np.arange(n)[:, None] + np.arange(4)[None, :]
        inside = (addr >= start) & (addr < stop)
        written = np.ones((n, 4), bool)
        written[inside] = bits[addr[inside] - start] != 0
        whole = written.all(1) | (~written).all(1)
        cells[whole] = 0
        unw = whole & ~written[:, 0]
        cells[unw, 0:4] = np.frombuffer(np.uint32(base).tobytes(), np.uint8)
        for k in np.nonzero(~whole)[0].tolist():  # mixed granules: byte cells
            cells[k] = 0
            cells[k, layout.CELL_MODE] = 1
            for j in range(4):
                bc = store.byte_cell(g + 4 * k + j)
                if bc is not None:
                    bc[:] = 0
                    if not written[k, j]:
                        bc[0:4] = np.frombuffer(np.uint32(base).tobytes(), np.uint8)


def _read_written(store, start, bits, base):
    """At a launch's end: the bytes of the range that the launch wrote join ``bits``."""
    stop = start + len(bits)
    for g, cells in store.word_cells(start, stop, make=False):
        n = len(cells)
        addr = g + 4 * np.arange(n)[:, None] + np.arange(4)[None, :]
        inside = (addr >= start) & (addr < stop)
        written = np.repeat((_thr(cells) != base)[:, None], 4, 1)
        mode = cells[:, layout.CELL_MODE] != 0
        for k in np.nonzero(mode)[0].tolist():
            for j in range(4):
                bc = store.byte_cell(g + 4 * k + j, make=False)
                written[k, j] = bc is None or int(bc[0:4].copy().view("<u4")[0]) != base
        sel = inside & written
        bits[addr[sel] - start] = 1


class Access(NamedTuple):
    """One side of a hazard: ``kind`` "read"/"write"/"atomic", where in the source, which thread
    and block (3-tuples), and the barrier interval (barriers its block had passed)."""

    kind: str
    file: str
    line: int
    col: int
    thread: tuple
    block: tuple
    interval: int


class Hazard:
    """One reported hazard: ``kind`` "race" or "uninitialized", ``where`` (the array and element),
    ``first``/``second`` (the two ``Access``es of a race, in the order they ran; an uninitialised
    read has only ``second``), ``count`` (instances alike: the same kind and access sites) and
    ``text`` (what the error message says about it)."""

    def __init__(self, kind, where, first, second, text, key):
        self.kind, self.where, self.first, self.second = kind, where, first, second
        self.text, self.key, self.count = text, key, 0

    def __repr__(self):
        return f"<Hazard {self.kind} on {self.where} x{self.count}>"


class _Shadow:
    """The reports of one sanitized launch, and its view of the kept shadow pages."""

    def __init__(self, artifact, kernel_name, grid, block, dyn, modes, arrays, uninit, concurrent):
        self.art, self.kname, self.grid, self.block, self._dyn = artifact, kernel_name, grid, block, dyn
        self.arrays = arrays  # [(name, data, shape, strides)] of the launch's array arguments
        self.uninit = uninit  # [(start, bits: np.uint8 array)] memory nothing wrote yet
        self.sites = artifact.sanitizer_sites
        self.hazards = {}  # key -> Hazard
        self.elided = []  # (name, bit, kind, lo, hi) of the parameters left unchecked
        self.counted_in_table = set()
        self.errors = []
        self.dedup = np.zeros(2 * 4096, np.uint64)
        store = self.store = _store
        nt = block[0] * block[1] * block[2]
        total = nt * grid[0] * grid[1] * grid[2]
        if total + 1 > _ID_LIMIT:
            raise SanitizerError(f"kernel '{kernel_name}': a sanitized launch has at most {_ID_LIMIT - 1} threads, "
                                 f"not {total}", [])
        if store.bytes > KEEP_LIMIT or store.next_base + total + 1 > _ID_LIMIT:
            store.reset()
        store.exhausted = False
        self.base = store.next_base
        store.next_base += total + 1
        c = self.ctx = SanCtx()
        self._miss, self._report = _MISS(self.page), _REPORT(self.report)
        c.miss = ctypes.cast(self._miss, ctypes.c_void_p).value
        c.report = ctypes.cast(self._report, ctypes.c_void_p).value
        c.nthreads = nt
        c.wave = artifact.wave_size
        fences = bool(self.sites.get("fences"))
        c.flags = ((1 if "race" in modes else 0) | (2 if "init" in modes else 0) | (4 if concurrent else 0)
                   | (layout.F_FENCE if fences else 0))
        c.dedup, c.dmask = self.dedup.ctypes.data, 4095
        self._cache = np.zeros(2 * 64, np.uint64)  # the checker's page cache: (key, page) x 64
        c.cache = self._cache.ctypes.data
        c.static = (artifact.static_shared_bytes + 15) // 16 * 16
        c.base = self.base
        # the threads' states: one block's at a time, or every block's when they run at once
        self._tstate = np.zeros((total if concurrent else nt) * layout.TSTATE_BYTES, np.uint8)
        c.tstate, c.tstride = self._tstate.ctypes.data, nt if concurrent else 0
        if fences:  # the release table (per thread) and acquire table (per block) of ``fenced``
            self._rel = np.zeros(total * layout.REL_BYTES, np.uint8)
            self._acq = np.zeros(max(1, total // nt) * layout.ACQ_BYTES, np.uint8)
            c.rel, c.bacq = self._rel.ctypes.data, self._acq.ctypes.data
        for start, bits in uninit:
            _mark_unwritten(store, start, bits, self.base)
        self._point_at_table()

    def leave_unchecked(self, elided) -> None:
        """Skip the in-bounds accesses of the parameters ``elided`` (``elision``'s list); the
        checker reports any other access it sees land in their memory (``@pykern.san.stray``)."""
        self.elided = elided
        if not elided:
            return
        self._elided = np.array([(lo, hi, int(kind == "own"), bit) for _, bit, kind, lo, hi in elided], np.uint64)
        c = self.ctx
        c.skip = sum(1 << bit for _, bit, _, _, _ in elided)
        c.nelide, c.elided = len(elided), self._elided.ctypes.data
        c.elo, c.ehi = min(e[3] for e in elided), max(e[4] for e in elided)

    def _point_at_table(self):
        self.ctx.table, self.ctx.mask = self.store.table.ctypes.data, len(self.store.table) // 2 - 1

    def watch(self, w) -> None:
        """Report the accesses that overlap ``w.ranges()`` to ``w`` (the module's ``watcher``)."""
        ranges = [r for lo, hi in w.ranges() for r in (lo, hi)]
        if not ranges:
            return
        self._ranges = np.array(ranges, np.uint64)
        self._watcher, self._wcall = w, _WATCHED(self.watched)
        c = self.ctx
        c.watch, c.nwatch = self._ranges.ctypes.data, len(ranges) // 2
        c.wcall = ctypes.cast(self._wcall, ctypes.c_void_p).value

    def watched(self, _ctx, thr, addr, nbytes, sk):
        try:
            site = self.sites["access"][sk >> 3]  # (site << 3 | local << 2 | kind)
            f, line, col = site[1], site[2], site[3]
            t, b = self._coords(thr)
            self._watcher.access(_KINDS[sk & 3], f, line, col + 1, t, b, int(addr), int(nbytes))
        except BaseException as e:  # noqa: BLE001  (no exception may cross the native frames)
            self.errors.append(e)

    # ---- called by the checker
    def page(self, _ctx, key):
        try:
            mem = self.store.page(key)
            self._point_at_table()  # the table may have grown
            return None if mem is None else mem.ctypes.data
        except BaseException as e:  # noqa: BLE001  (no exception may cross the native frames)
            self.errors.append(e)
            self.store.exhausted = True
            return None

    def report(self, _ctx):
        try:
            self._take_report()
        except BaseException as e:  # noqa: BLE001
            self.errors.append(e)

    def _take_report(self):
        c = self.ctx
        key = int(c.rkey)
        h = self.hazards.get(key)
        if h is None:
            cur = np.frombuffer(bytes(c.rcur), _REC)[0]
            prev = np.frombuffer(bytes(c.rprev), _REC)[0]
            h = self.hazards[key] = self._describe(c.rkind, int(c.raddr), cur, prev, c.rprevkind, c.rbar,
                                                   int(c.rshared), int(c.raux), key)
        if c.rtable:
            self.counted_in_table.add(key)  # the checker counts it from now on
        else:
            h.count += 1

    # ---- what a report says
    def _coords(self, thr):
        g = thr - self.base - 1
        nt = self.ctx.nthreads
        blin, tlin = divmod(g, nt)
        bx, by, _ = self.block
        gx, gy, _ = self.grid
        t = (tlin % bx, tlin // bx % by, tlin // (bx * by))
        b = (blin % gx, blin // gx % gy, blin // (gx * gy))
        return t, b

    def _where(self, addr, site, shared_base, aux):
        """'array 'a' element [3, 1]' for an address an access of ``site`` touched."""
        name, nbytes, local_ndim = site[4], site[5], site[6]
        for aname, data, shape, strides in self.arrays:
            idx = _index_of(addr - data, shape, strides, nbytes)
            if idx is not None:
                return f"array '{aname}' element {[int(i) for i in idx]}"
        off = addr - shared_base
        total = self.ctx.static + self._dyn
        if shared_base and 0 <= off < max(total, 1):
            for sname, (soff, sshape, isz) in self.sites.get("shared", {}).items():
                n = int(np.prod(sshape)) * isz
                if soff <= off < soff + n:
                    flat = (off - soff) // isz
                    shown = name if name != "array" else sname  # the kernel's variable, not the symbol
                    return f"shared array '{shown}' element {[int(i) for i in np.unravel_index(flat, sshape)]}"
            if off >= self.ctx.static:
                return f"dynamic shared array '{name}' element [{(off - self.ctx.static) // nbytes}]"
        if local_ndim:  # (argument arrays and shared memory were looked at above)
            return f"local array '{name}' element {[(aux >> (16 * k)) & 0xFFFF for k in range(local_ndim)]}"
        return f"local array '{name}'"

    def _access(self, rec, kind, site) -> Access:
        t, b = self._coords(int(rec["thr"]))
        f, line, col = site[1], site[2], site[3]
        return Access(kind, f, line, col + 1, t, b, int(rec["ep"]))

    @staticmethod
    def _say(a: Access) -> str:
        return f"{a.kind} at {a.file}:{a.line}:{a.col} by thread {a.thread} of block {a.block}"

    def _describe(self, rkind, addr, cur, prev, prevkind, bar, shared_base, aux, key):
        acc = self.sites["access"]
        csite = acc[int(cur["site"])]
        kind = _KINDS[int(cur["flags"])]
        where = self._where(addr, csite, shared_base, aux)
        second = self._access(cur, kind, csite)
        if rkind == layout.R_STRAY:
            name, _, ekind, _, _ = self.elided[aux]
            how = "only at its threads' own grid index" if ekind == "own" else "nowhere"
            verb = "reads" if kind == "read" else "writes"
            text = (f"unchecked memory: {self._say(second)} {verb} {where} out of the bounds of the array it "
                    f"indexes; this launch did not check the accesses of array '{name}' (the kernel writes it "
                    f"{how}), so races with them cannot be ruled out (the 'bounds' check stops such accesses)")
            return Hazard("out-of-bounds", where, None, second, f"kernel '{self.kname}': {text}", key)
        if rkind == 2:
            text = (f"uninitialized read: {self._say(second)} reads {where}, which nothing has "
                    f"written {'since the block started' if 'shared' in where else 'since its allocation'}")
            return Hazard("uninitialized", where, None, second, f"kernel '{self.kname}': {text}", key)
        psite = acc[int(prev["site"])]
        pkind = _KINDS[int(prevkind)]
        ct, cb = self._coords(int(cur["thr"]))
        pt, pb = self._coords(int(prev["thr"]))
        syncs = self.sites.get("sync", [])
        after = f"after {syncs[bar]}" if 0 <= bar < len(syncs) else "since the kernel's start"
        if cb == pb:
            why = (f"both in barrier interval {int(cur['ep'])} of block {cb} ({after}): no barrier both threads "
                   "took part in separates them")
            if int(cur["ep"]) == int(prev["ep"]) and self._same_warp(cur, prev):
                why += " (same warp: no syncwarp between them either; lanes are not assumed to run in lockstep)"
        else:
            why = (f"different blocks, grid-sync interval {int(cur['gep'])} (first in barrier interval "
                   f"{int(prev['ep'])} of its block, second in interval {int(cur['ep'])}): only a grid sync, the "
                   "end of the launch, or a fence then an atomic in the first thread and an atomic of the same "
                   "address then a fence in the second orders different blocks")
        first = self._access(prev, pkind, psite)
        text = f"data race on {where}:\n    first:  {self._say(first)}\n    second: {self._say(second)}\n    {why}"
        return Hazard("race", where, first, second, f"kernel '{self.kname}': {text}", key)

    def _same_warp(self, a, b):
        nt, ws = self.ctx.nthreads, self.ctx.wave
        return ((int(a["thr"]) - self.base - 1) % nt) // ws == ((int(b["thr"]) - self.base - 1) % nt) // ws

    # ---- after the launch
    def finish(self):
        last_launch.update(shadow_bytes=self.store.bytes, pages=len(self.store.pages),
                           unchecked=sorted(e[0] for e in self.elided))
        counts = dict(zip(self.dedup[0::2].tolist(), self.dedup[1::2].tolist()))
        for key in self.counted_in_table:
            self.hazards[key].count += counts.get(key, 0)
        for start, bits in self.uninit:  # what the launch wrote stays written for the next one
            _read_written(self.store, start, bits, self.base)

    def outcome(self, modes):
        for e in self.errors:
            raise e
        if self.store.exhausted:
            warnings.warn(f"kernel '{self.kname}': the sanitizer's shadow memory reached {SHADOW_LIMIT >> 20} MiB; "
                          "later accesses to new memory went unchecked", SanitizerWarning, stacklevel=4)
        hazards = [h for h in self.hazards.values()]
        if not hazards:
            return
        shown = hazards[:REPORT_LIMIT]
        lines = [f"{h.text}\n    ({h.count} time{'s' if h.count != 1 else ''})" for h in shown]
        more = len(hazards) - len(shown)
        total = sum(h.count for h in hazards)
        head = (f"the sanitizer found {len(hazards)} distinct hazard{'s' if len(hazards) != 1 else ''} "
                f"({total} instance{'s' if total != 1 else ''}) in a launch of kernel '{self.kname}':\n")
        msg = head + "\n".join(lines) + (f"\n... and {more} more" if more else "")
        if "warn" in modes.split(","):
            warnings.warn(msg, SanitizerWarning, stacklevel=4)
            return
        raise SanitizerError(msg, hazards)


def _index_of(off, shape, strides, nbytes):
    """The element index of byte ``off`` of an array (``None`` when outside it)."""
    if off < 0:
        return None
    if not shape:
        return () if off < nbytes else None
    order = sorted(range(len(shape)), key=lambda k: -abs(strides[k]))
    idx = [0] * len(shape)
    rem = off
    for k in order:
        s = strides[k]
        if s <= 0:
            continue
        i = rem // s
        if i >= shape[k]:
            return None
        idx[k], rem = i, rem - i * s
    return tuple(idx) if rem < nbytes else None


def _extent(data, shape, strides, itemsize):
    """``[lo, hi)``: the bytes an array's in-bounds elements can touch (empty: lo == hi)."""
    lo, hi = span(shape, strides, itemsize)
    return data + lo, data + hi


def _distinct_elements(shape, strides, itemsize) -> bool:
    """Do different in-bounds indices of the array name disjoint bytes?"""
    reach = itemsize  # bytes the axes seen so far span from an element
    for n, s in sorted(((n, abs(s)) for n, s in zip(shape, strides) if n > 1), key=lambda d: d[1]):
        if s < reach:
            return False
        reach += (n - 1) * s
    return True


def elision(sites, arrays, uninit, grid, block) -> list:
    """``[(name, bit, kind, lo, hi)]``: the array parameters whose in-bounds accesses this launch
    leaves unchecked (their bits make ``SanCtx.skip``) and their memory ``[lo, hi)``. Of those the
    compiler found elidable (``sites["elide"]``, ``codegen/lowering/sanitize_elision``), the ones
    whose memory holds no unwritten byte and overlaps no memory the kernel may write through
    another name (another argument, unless never written in the kernel either; a device array
    the code names as a global); an own-index one also needs every grid axis its indices do not
    name to be of extent 1 and elements that do not overlap each other."""
    elide = sites.get("elide") or {}
    if not elide:
        return []
    size = sites.get("itemsize", {})
    ext = {name: _extent(data, shape, strides, size.get(name, 1 << 20)) for name, data, shape, strides in arrays}
    dims = {name: (shape, strides) for name, _, shape, strides in arrays}
    named = [_extent(*g) for g in sites.get("globals", ())]
    readonly = {n for n, (_, kind, _) in elide.items() if kind == "readonly"}
    out = []
    for name, (bit, kind, axes) in elide.items():
        if name not in ext:
            continue
        lo, hi = ext[name]
        others = [e for n, e in ext.items() if n != name and (kind == "own" or n not in readonly)] + named
        if any(a < hi and lo < b for a, b in others if a < b):
            continue
        if any(not bits[max(lo, start) - start:min(hi, start + len(bits)) - start].all()
               for start, bits in uninit if start < hi and lo < start + len(bits)):
            continue
        if kind == "own":
            if any((grid[a] != 1 or block[a] != 1) for a in range(3) if a not in axes):
                continue
            if not _distinct_elements(*dims[name], size.get(name, 1 << 20)):
                continue
        out.append((name, bit, kind, lo, hi))
    return out


def _array_arguments(artifact, argbuf):
    """``[(name, data, shape, strides)]`` of the launch's array arguments, read from the packed buffer."""
    import struct

    out, cur = [], None
    for p in artifact.params:
        v = struct.unpack_from("<" + p.code, argbuf, p.offset)[0]
        base = p.name.rsplit(".", 1)[0]
        if p.role == "data":
            cur = [base, v, [], []]
            out.append(cur)
        elif p.role == "shape" and cur is not None:
            cur[2].append(v)
        elif p.role == "stride" and cur is not None:
            cur[3].append(v)
    return [(n, d, tuple(s), tuple(st)) for n, d, s, st in out]


def run(kernel, ctx, grid, block, dynamic_shared, argbuf, args=(), kernel_name=None) -> None:
    """Run a sanitized ``kernel`` (a ``CpuKernel``) with the fresh launch context ``ctx`` and
    report its hazards (``SanitizerError``)."""
    art = kernel.artifact
    modes = art.sanitize
    tracked = {id(st): st for st in (getattr(a, "storage", None) for a in args or ())
               if getattr(st, "san_init", None) is not None}
    buf = ctypes.c_char.from_buffer(argbuf)
    nblocks = grid[0] * grid[1] * grid[2]
    args_p, ctx_p = ctypes.addressof(buf), ctypes.addressof(ctx)
    with _store.lock:
        shadow = _Shadow(art, kernel_name or art.name, grid, block, dynamic_shared, checks(modes),
                         _array_arguments(art, bytes(argbuf)), [(st.ptr, st.san_init) for st in tracked.values()],
                         art.cooperative)
        w = watcher if "watch" in modes.split(",") else None
        if w is not None:
            shadow.watch(w)  # a watched access must reach the checker: nothing goes unchecked
        else:
            shadow.leave_unchecked(elision(art.sanitizer_sites, shadow.arrays, shadow.uninit, grid, block))
        ctx.san = ctypes.addressof(shadow.ctx)
        if art.cooperative:
            ctx.gbar[3] = nblocks
            kernel._run_cooperative(args_p, ctx_p, ctx, nblocks, (argbuf, buf, shadow))
        else:
            kernel._run_inline(args_p, ctx_p, ctx, nblocks, serial=True)  # the checker sees one block at a time
        shadow.finish()
    if w is not None:
        w.launch_ended()
    for st in tracked.values():
        if st.san_init.all():
            st.san_init = None
    if ctx.error:
        kernel._raise(ctx, block)
    shadow.outcome(modes)
