"""Sanitized launches on the cpu target: the shadow memory the compiled checker
(``codegen/cpu/sanitizer_ir.py``) reads and writes, and the reports it hands back.

A launch of a kernel compiled with ``sanitize=`` runs its blocks one after another on the calling
thread (a cooperative launch: one OS thread per block, the checker under a spin lock), with a
fresh shadow: 48 bytes per byte of memory the kernel touches, in 4 KiB pages made on the first
access of each (``_Shadow.page``), at most ``SHADOW_LIMIT`` bytes (past it accesses go unchecked
and the launch warns). Memory is initialised unless it is shared memory (per block), a local array
or a ``device_array`` nothing wrote yet (tracked per byte across launches while
``PYKERN_SANITIZE`` includes ``init``). Hazards come back through ``_Shadow.report``; identical
ones (same kind and the same two access sites) are counted once, and after the launch they raise
a ``SanitizerError`` (or warn, with ``warn``).

Example::

    @pykern.jit(sanitize="race")
    def k(a):
        a[0] = cuda.threadIdx.x        # every thread writes a[0]
    k[1, 32](np.zeros(1))              # SanitizerError: data race on array 'a' element [0] ...
"""

from __future__ import annotations

import ctypes
import warnings
from typing import NamedTuple

import numpy as np

from pykern.core.errors import SanitizerError, SanitizerWarning
from pykern.core.sanitize import REPORT_LIMIT, checks

ENTRY = 48
PAGE = 4096
#: shadow bytes one launch may allocate (48 per byte of memory touched)
SHADOW_LIMIT = 4 << 30
#: shadow pages kept for the next launch (bytes): allocating and faulting in fresh memory cost
#: sanitized saxpy more than its checks
SPARE_LIMIT = 256 << 20
_spare_pages: list = []
_fresh = []


def _fresh_page():
    """A shadow page of memory that is initialised and that nothing accessed."""
    if not _fresh:
        page = np.zeros(PAGE * ENTRY, np.uint8)
        page.reshape(PAGE, ENTRY)[:, 14] = 1
        _fresh.append(page)
    return _fresh[0]


_MISS = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_REPORT = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_KINDS = {0: "read", 1: "write", 2: "atomic"}


class SanCtx(ctypes.Structure):
    """Layout fixed by ``codegen/cpu/sanitizer_ir.py`` (``S_*`` offsets)."""

    _fields_ = [
        ("table", ctypes.c_void_p), ("mask", ctypes.c_int64), ("miss", ctypes.c_void_p), ("report", ctypes.c_void_p),
        ("nthreads", ctypes.c_int32), ("wave", ctypes.c_int32), ("flags", ctypes.c_int32), ("lock", ctypes.c_int32),
        ("ckey", ctypes.c_int64), ("cval", ctypes.c_void_p), ("dedup", ctypes.c_void_p), ("dmask", ctypes.c_int64),
        ("static", ctypes.c_int64),
        ("rkind", ctypes.c_int32), ("rtable", ctypes.c_int32), ("raddr", ctypes.c_uint64),
        ("rcur", ctypes.c_uint8 * 16), ("rprev", ctypes.c_uint8 * 16), ("rprevkind", ctypes.c_int32),
        ("rbar", ctypes.c_int32), ("rkey", ctypes.c_uint64), ("rshared", ctypes.c_uint64),
        ("watch", ctypes.c_void_p), ("nwatch", ctypes.c_int64), ("wcall", ctypes.c_void_p),
    ]


assert ctypes.sizeof(SanCtx) == 184

#: the watchpoints of a launch compiled with sanitize "watch" (``pykern.debug.watch`` sets it):
#: ``ranges()`` the [lo, hi) byte ranges watched, ``access(kind, file, line, col, thread, block,
#: address, nbytes)`` before each access that overlaps one, ``launch_ended()`` after the launch
watcher = None
_WATCHED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint64, ctypes.c_int64, ctypes.c_int32)

#: what the last sanitized launch of this process used: ``shadow_bytes`` (the shadow pages it
#: made) and ``pages`` (4 KiB pages of memory it touched); the benchmarks report them
last_launch = {"shadow_bytes": 0, "pages": 0}

_REC = np.dtype([("thr", "<u4"), ("ep", "<u4"), ("wep", "<u2"), ("gep", "<u2"), ("site", "<u2"), ("flags", "<u2")])


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
    """The shadow memory and report collection of one sanitized launch."""

    def __init__(self, artifact, kernel_name, grid, block, dyn, modes, arrays, uninit, concurrent):
        self.art, self.kname, self.grid, self.block, self._dyn = artifact, kernel_name, grid, block, dyn
        self.arrays = arrays  # [(name, data, shape, strides)] of the launch's array arguments
        self.uninit = uninit  # [(start, bits: np.uint8 array)] memory nothing wrote yet
        self.sites = artifact.sanitizer_sites
        self.pages = {}
        self.bytes = 0
        self.exhausted = False
        self.hazards = {}  # key -> Hazard
        self.counted_in_table = set()
        self.errors = []
        cap = 1 << 12
        self.table = np.zeros(2 * cap, np.uint64)
        self.dedup = np.zeros(2 * 4096, np.uint64)
        c = self.ctx = SanCtx()
        c.table, c.mask = self.table.ctypes.data, cap - 1
        self._miss, self._report = _MISS(self.page), _REPORT(self.report)
        c.miss = ctypes.cast(self._miss, ctypes.c_void_p).value
        c.report = ctypes.cast(self._report, ctypes.c_void_p).value
        c.nthreads = block[0] * block[1] * block[2]
        c.wave = artifact.wave_size
        c.flags = (1 if "race" in modes else 0) | (2 if "init" in modes else 0) | (4 if concurrent else 0)
        c.dedup, c.dmask = self.dedup.ctypes.data, 4095
        c.static = (artifact.static_shared_bytes + 15) // 16 * 16
        self.used = 0

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
            _k, f, line, col, _name, _n = self.sites["access"][sk >> 2]
            t, b = self._coords(thr)
            self._watcher.access(_KINDS[sk & 3], f, line, col + 1, t, b, int(addr), int(nbytes))
        except BaseException as e:  # noqa: BLE001  (no exception may cross the native frames)
            self.errors.append(e)

    # ---- called by the checker
    def page(self, _ctx, page):
        try:
            return self._page(page)
        except BaseException as e:  # noqa: BLE001  (no exception may cross the native frames)
            self.errors.append(e)
            self.exhausted = True
            return None

    def _page(self, page):
        if self.bytes + PAGE * ENTRY > SHADOW_LIMIT:
            self.exhausted = True
            return None
        mem = _spare_pages.pop() if _spare_pages else np.empty(PAGE * ENTRY, np.uint8)
        mem[:] = _fresh_page()  # every byte initialised, nothing accessed, unless ...
        rows = mem.reshape(PAGE, ENTRY)
        lo = page * PAGE
        for start, bits in self.uninit:
            a, b = max(lo, start), min(lo + PAGE, start + len(bits))
            if a < b:
                rows[a - lo:b - lo, 14] = bits[a - start:b - start]
        self.bytes += mem.nbytes
        self.pages[page] = mem
        self._insert(page + 1, mem.ctypes.data)
        return mem.ctypes.data

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
        self.ctx.table, self.ctx.mask = self.table.ctypes.data, len(self.table) // 2 - 1
        self.used = 0
        for k, v in zip(old[0::2].tolist(), old[1::2].tolist()):
            if k:
                self._insert(k, v)

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
                                                   int(c.rshared), key)
        if c.rtable:
            self.counted_in_table.add(key)  # the checker counts it from now on
        else:
            h.count += 1

    # ---- what a report says
    def _coords(self, thr):
        g = thr - 1
        nt = self.ctx.nthreads
        blin, tlin = divmod(g, nt)
        bx, by, _ = self.block
        gx, gy, _ = self.grid
        t = (tlin % bx, tlin // bx % by, tlin // (bx * by))
        b = (blin % gx, blin // gx % gy, blin // (gx * gy))
        return t, b

    def _where(self, addr, site, shared_base):
        """'array 'a' element [3, 1]' for an address an access of ``site`` touched."""
        _kind, _f, _l, _c, name, nbytes = site
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
        return f"local array '{name}'"  # (argument arrays and shared memory were looked at above)

    def _access(self, rec, kind, site) -> Access:
        t, b = self._coords(int(rec["thr"]))
        _k, f, line, col, _name, _n = site
        return Access(kind, f, line, col + 1, t, b, int(rec["ep"]))

    @staticmethod
    def _say(a: Access) -> str:
        return f"{a.kind} at {a.file}:{a.line}:{a.col} by thread {a.thread} of block {a.block}"

    def _describe(self, rkind, addr, cur, prev, prevkind, bar, shared_base, key):
        acc = self.sites["access"]
        csite = acc[int(cur["site"])]
        kind = _KINDS[int(cur["flags"])]
        where = self._where(addr, csite, shared_base)
        second = self._access(cur, kind, csite)
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
                   f"{int(prev['ep'])} of its block, second in interval {int(cur['ep'])}): only a grid sync or the "
                   "end of the launch orders different blocks")
        first = self._access(prev, pkind, psite)
        text = f"data race on {where}:\n    first:  {self._say(first)}\n    second: {self._say(second)}\n    {why}"
        return Hazard("race", where, first, second, f"kernel '{self.kname}': {text}", key)

    def _same_warp(self, a, b):
        nt, ws = self.ctx.nthreads, self.ctx.wave
        return ((int(a["thr"]) - 1) % nt) // ws == ((int(b["thr"]) - 1) % nt) // ws

    # ---- after the launch
    def finish(self):
        last_launch.update(shadow_bytes=self.bytes, pages=len(self.pages))
        counts = dict(zip(self.dedup[0::2].tolist(), self.dedup[1::2].tolist()))
        for key in self.counted_in_table:
            self.hazards[key].count += counts.get(key, 0)
        for start, bits in self.uninit:  # what the launch wrote stays written for the next one
            for p in range(start // PAGE, (start + len(bits) + PAGE - 1) // PAGE):
                mem = self.pages.get(p)
                if mem is None:
                    continue
                lo = p * PAGE
                a, b = max(lo, start), min(lo + PAGE, start + len(bits))
                bits[a - start:b - start] |= mem.reshape(PAGE, ENTRY)[a - lo:b - lo, 14] & 1
        room = max(0, SPARE_LIMIT // (PAGE * ENTRY) - len(_spare_pages))
        _spare_pages.extend(list(self.pages.values())[:room])  # page faults cost more than the checks
        self.pages.clear()

    def outcome(self, modes):
        for e in self.errors:
            raise e
        if self.exhausted:
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
    uninit = []
    for a in args or ():
        st = getattr(a, "storage", None)
        bits = getattr(st, "san_init", None)
        if bits is not None:
            uninit.append((st.ptr, bits))
    buf = ctypes.c_char.from_buffer(argbuf)
    shadow = _Shadow(art, kernel_name or art.name, grid, block, dynamic_shared, checks(modes),
                     _array_arguments(art, bytes(argbuf)), [(s, b) for s, b in uninit], art.cooperative)
    w = watcher if "watch" in modes.split(",") else None
    if w is not None:
        shadow.watch(w)
    nblocks = grid[0] * grid[1] * grid[2]
    ctx.san = ctypes.addressof(shadow.ctx)
    args_p, ctx_p = ctypes.addressof(buf), ctypes.addressof(ctx)
    if art.cooperative:
        ctx.gbar[3] = nblocks
        kernel._run_cooperative(args_p, ctx_p, ctx, nblocks, (argbuf, buf, shadow))
    else:
        kernel._run_inline(args_p, ctx_p, ctx, nblocks, serial=True)  # the checker sees one block at a time
    shadow.finish()
    if w is not None:
        w.launch_ended()
    for st in {id(a.storage): a.storage for a in args or () if getattr(getattr(a, "storage", None), "san_init", None)
               is not None}.values():
        if st.san_init.all():
            st.san_init = None
    if ctx.error:
        kernel._raise(ctx, block)
    shadow.outcome(modes)
