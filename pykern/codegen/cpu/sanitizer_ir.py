"""The kernel sanitizer's shadow-memory checker, as LLVM IR text linked into a sanitized cpu kernel.

A sanitized kernel calls these functions (the cpu target emits the calls):

* ``@pykern.san.access(T, addr, nbytes, site << 3 | local << 2 | kind, aux)`` before every array
  element access (kind 0 read, 1 write, 2 atomic; ``local``: a local array's element, private to
  its thread, checked for unwritten reads only; ``aux`` the element's index, 16 bits per axis, for
  local arrays, whose reports cannot find it from the address);
* ``@pykern.san.fresh(T, addr, nbytes)`` where a local array is allocated;
* ``@pykern.san.start(T, shared)`` when a thread starts (thread 0 of a block also forgets the
  block's shared memory: a new block's shared memory holds nothing written);
* ``@pykern.san.sync(T, kind, site)`` after a barrier (0 block, 1 grid) or ``syncwarp`` (2);
* ``@pykern.san.fence(T)`` after a ``threadfence``/``threadfence_system``.

Shadow memory is kept per element, not per byte: a 64-byte cell per aligned 4-byte granule
("word space", 16 shadow bytes per byte), which an access of a multiple of 4 bytes at a multiple
of 4 checks once per granule (one cell for a float32, two for a float64). A granule that a 1- or
2-byte or misaligned access touches is split: its cell is copied into four byte cells ("byte
space", 64 shadow bytes per byte) and marked, and every later access of it checks those. Both
spaces live in pages of 256 KiB (word space: 16 KiB of memory; byte space: 4 KiB) found through
an open-addressing table the runtime owns (``runtime/cpu/sanitizer.py``: it allocates a page when
the checker misses, calling back into Python, keeps the pages from one launch to the next and
reads the reports).

A cell holds three access records of 16 bytes: the last write and up to two reads since it (two
different threads, so a write by one of them still finds the other), then the three records'
fence counts (u32 each) and the granule's mode (u32: 1 = split into byte cells). A record is
``thread u32``, ``epoch u32`` (block barriers the thread had passed), ``warp epoch u16``
(``syncwarp``s), ``grid epoch u16`` (grid syncs), ``site u16``, ``flags u16`` (the write record's:
2 atomic). Thread ids grow from launch to launch (a launch's threads are ``base + 1 ..``), so a
record whose thread is at most the launch's ``base`` is from an earlier launch: ordered by the
launch boundary, as if absent. A write record whose thread *is* ``base`` marks memory nothing
wrote (a new block's shared memory, a new local array, an unwritten ``device_array``): a zero cell
is memory that is initialised and that nothing accessed, so fresh pages need no filling.

Two accesses of different threads are ordered when they are in different blocks and different
grid epochs, or in one block and different epochs, or in one warp and different warp epochs, or
through a fence and an atomic (``fenced``, the release/acquire pattern of the CUDA memory model:
the first thread -- or a thread of its block past a barrier that followed the access -- fenced
and then made an atomic access of some address, and the second thread's block later made an
atomic access of the same address followed by a device fence, the second thread being that
fencing thread or past a block barrier since the fence); nothing else orders them (the blocks of a sanitized launch run one after
another on one OS thread, so the records need no locks; a cooperative launch's blocks run at once
and take the context's spin lock).

The entry points are external in this text (so that they resolve the kernel module's
declarations when the two are linked); the cpu target internalises them afterwards.
The per-thread state ``T`` holds the thread's record fields at ``T_SAN_*`` (``cpu/target.py``).
"""

from __future__ import annotations

import string

from pykern.core.sanitize_layout import (  # noqa: F401  (the layout both sides share; the IR names them)
    ACQ_BYTES, BPAGE_BITS, BYTE_SPACE_KEY, CELL_BYTES, CELL_FC, CELL_MODE, F_FENCE, F_INIT, F_LOCK, F_RACE, GRANULE,
    R_RACE, R_STRAY, R_UNINIT, REL_BYTES, S_ACLOCK, S_BACQ, S_BASE, S_CACHE, S_DEDUP, S_DMASK, S_FLAGS, S_LOCK, S_MASK, S_MISS,
    S_NTHREADS, S_RADDR, S_RAUX, S_RBAR, S_RCUR, S_REL, S_REPORT, S_RKEY, S_RKIND, S_RPREV, S_RPREVKIND, S_RSHARED,
    S_RTABLE, S_SIZE, S_STATIC, S_TABLE, S_TSTATE, S_TSTRIDE, S_WS, TSTATE_BYTES, WPAGE_BITS, S_WATCH, S_NWATCH,
    S_WCALL, S_SKIP, S_NELIDE, S_ELIDED, ELIDED_BYTES, S_ELO, S_EHI, S_LKEY, S_LPAGE)

_TEXT = string.Template(r"""

; the sanitizer context (``start`` keeps it in T)
define internal ptr @pykern.san.ctx(ptr %t) alwaysinline {
  %sp = getelementptr i8, ptr %t, i64 $T_SAN_CTX
  %san = load ptr, ptr %sp
  ret ptr %san
}

; the sanitizer context, through the block and launch contexts
define internal ptr @pykern.san.ctxof(ptr %t) alwaysinline {
  %bp = getelementptr i8, ptr %t, i64 $T_BLK
  %blk = load ptr, ptr %bp
  %cp = getelementptr i8, ptr %blk, i64 $B_CTX
  %ctx = load ptr, ptr %cp
  %sp = getelementptr i8, ptr %ctx, i64 $C_SAN
  %san = load ptr, ptr %sp
  ret ptr %san
}

; the current thread's slot in the block's table of thread states (``T_SAN_TS``, 32 bytes per
; thread: epoch u32, warp epoch u16, grid epoch u16, last sync site + 1 i32, fences u32, clock + 1
; of its last atomic u32, its epoch at its last fence u32, that atomic's address u64)
define internal ptr @pykern.san.me(ptr %t) alwaysinline {
  %linp = getelementptr i8, ptr %t, i64 $T_LIN
  %lin = load i32, ptr %linp
  %l64 = zext i32 %lin to i64
  %o = shl i64 %l64, 5
  %tsp = getelementptr i8, ptr %t, i64 $T_SAN_TS
  %ts = load ptr, ptr %tsp
  %q = getelementptr i8, ptr %ts, i64 %o
  ret ptr %q
}

; the current thread's barrier epoch: its own count (``me``) plus the block's (``blocksync``)
define internal i32 @pykern.san.epoch(ptr %t, ptr %me) alwaysinline {
  %own = load i32, ptr %me
  %bp = getelementptr i8, ptr %t, i64 $T_SAN_BIAS
  %bias = load i32, ptr %bp
  %ep = add i32 %own, %bias
  ret i32 %ep
}

; the current thread's id: its block's first id + its index in the block
define internal i32 @pykern.san.thr(ptr %t) alwaysinline {
  %linp = getelementptr i8, ptr %t, i64 $T_LIN
  %lin = load i32, ptr %linp
  %blop = getelementptr i8, ptr %t, i64 $T_SAN_BLO
  %blo = load i32, ptr %blop
  %thr = add i32 %blo, %lin
  ret i32 %thr
}

; the shadow page of table key %key (null: the runtime gave none, its memory limit), remembered
; in the context's direct-mapped cache of 64 pages (key, page)
define internal ptr @pykern.san.page(ptr %san, i64 %key) alwaysinline {
entry:
  %lkp = getelementptr i8, ptr %san, i64 $S_LKEY
  %lk = load i64, ptr %lkp
  %lpp = getelementptr i8, ptr %san, i64 $S_LPAGE
  %hitl = icmp eq i64 %lk, %key
  br i1 %hitl, label %last, label %lookup
last:
  %lv = load ptr, ptr %lpp
  ret ptr %lv
lookup:
  %cachep = getelementptr i8, ptr %san, i64 $S_CACHE
  %cache = load ptr, ptr %cachep
  %x4 = lshr i64 %key, 6
  %x8 = lshr i64 %key, 12
  %x0 = xor i64 %key, %x4
  %x1 = xor i64 %x0, %x8
  %ci = and i64 %x1, 63
  %co = shl i64 %ci, 4
  %ckp = getelementptr i8, ptr %cache, i64 %co
  %ck = load i64, ptr %ckp
  %cvp = getelementptr i8, ptr %ckp, i64 8
  %hitc = icmp eq i64 %ck, %key
  br i1 %hitc, label %cached, label %search
cached:
  %cv = load ptr, ptr %cvp
  store i64 %key, ptr %lkp
  store ptr %cv, ptr %lpp
  ret ptr %cv
search:
  %sv = call ptr @pykern.san.search(ptr %san, i64 %key, ptr %ckp)
  store i64 %key, ptr %lkp
  store ptr %sv, ptr %lpp
  ret ptr %sv
}

; the page cache missed: the table's page of %key (the runtime makes one when the table has
; none), remembered at the cache slot %ckp
define internal ptr @pykern.san.search(ptr %san, i64 %key, ptr %ckp) noinline {
search:
  %cvp = getelementptr i8, ptr %ckp, i64 8
  %tab = load ptr, ptr %san
  %mp = getelementptr i8, ptr %san, i64 $S_MASK
  %mask = load i64, ptr %mp
  %hm = mul i64 %key, -7046029254386353131
  %hs = lshr i64 %hm, 29
  %h0 = and i64 %hs, %mask
  br label %probe
probe:
  %h = phi i64 [ %h0, %search ], [ %hn, %next ]
  %so = shl i64 %h, 4
  %slot = getelementptr i8, ptr %tab, i64 %so
  %sk = load i64, ptr %slot
  %same = icmp eq i64 %sk, %key
  br i1 %same, label %have, label %notsame
notsame:
  %empty = icmp eq i64 %sk, 0
  br i1 %empty, label %miss, label %next
next:
  %h1 = add i64 %h, 1
  %hn = and i64 %h1, %mask
  br label %probe
have:
  %vp = getelementptr i8, ptr %slot, i64 8
  %v = load ptr, ptr %vp
  br label %remember
miss:
  %mfp = getelementptr i8, ptr %san, i64 $S_MISS
  %mf = load ptr, ptr %mfp
  %mv = call ptr %mf(ptr %san, i64 %key)
  br label %remember
remember:
  %base = phi ptr [ %v, %have ], [ %mv, %miss ]
  store i64 %key, ptr %ckp
  store ptr %base, ptr %cvp
  ret ptr %base
}

; the word cell of the granule at %a (a multiple of 4), or null
define internal ptr @pykern.san.wcell(ptr %san, i64 %a) alwaysinline {
entry:
  %page = lshr i64 %a, $WPAGE_BITS
  %key = add i64 %page, 1
  %b = call ptr @pykern.san.page(ptr %san, i64 %key)
  %isnull = icmp eq ptr %b, null
  br i1 %isnull, label %none, label %some
none:
  ret ptr null
some:
  %off = and i64 %a, $WPAGE_MASK
  %g = lshr i64 %off, 2
  %eo = shl i64 %g, 6
  %e = getelementptr i8, ptr %b, i64 %eo
  ret ptr %e
}

; the byte cell of byte %a, or null
define internal ptr @pykern.san.bcell(ptr %san, i64 %a) alwaysinline {
entry:
  %page = lshr i64 %a, $BPAGE_BITS
  %k0 = add i64 %page, 1
  %key = or i64 %k0, $BYTE_SPACE_KEY
  %b = call ptr @pykern.san.page(ptr %san, i64 %key)
  %isnull = icmp eq ptr %b, null
  br i1 %isnull, label %none, label %some
none:
  ret ptr null
some:
  %off = and i64 %a, $BPAGE_MASK
  %eo = shl i64 %off, 6
  %e = getelementptr i8, ptr %b, i64 %eo
  ret ptr %e
}

; the acquire/release table's entry of the current thread's block
define internal ptr @pykern.san.myblock(ptr %san, ptr %t) alwaysinline {
  %lop = getelementptr i8, ptr %t, i64 $T_SAN_LO
  %lo = load i32, ptr %lop
  %blop = getelementptr i8, ptr %t, i64 $T_SAN_BLO
  %blo = load i32, ptr %blop
  %b0 = sub i32 %blo, %lo
  %b1 = sub i32 %b0, 1
  %q = call ptr @pykern.san.blockof(ptr %san, i32 %b1)
  ret ptr %q
}

; the acquire/release table's entry of the block of the thread with launch index %i (id - base - 1)
define internal ptr @pykern.san.blockof(ptr %san, i32 %i) alwaysinline {
  %ntp = getelementptr i8, ptr %san, i64 $S_NTHREADS
  %nt = load i32, ptr %ntp
  %bi = udiv i32 %i, %nt
  %bidx = zext i32 %bi to i64
  %acqp = getelementptr i8, ptr %san, i64 $S_BACQ
  %acq = load ptr, ptr %acqp
  %ao = mul i64 %bidx, $ACQ_BYTES
  %q = getelementptr i8, ptr %acq, i64 %ao
  ret ptr %q
}

; has the current thread acquired what the release at atomic clock %rt of address %rl published?
; (its block's last acquire: an atomic of %rl after that one, then a fence, by this thread or
; by another before a barrier this thread has passed since)
define internal i1 @pykern.san.acquired(ptr %san, ptr %t, i32 %rt, i64 %rl) {
entry:
  %q = call ptr @pykern.san.myblock(ptr %san, ptr %t)
  %at = load i32, ptr %q
  %aepp = getelementptr i8, ptr %q, i64 4
  %aep = load i32, ptr %aepp
  %athrp = getelementptr i8, ptr %q, i64 8
  %athr = load i32, ptr %athrp
  %alp = getelementptr i8, ptr %q, i64 16
  %al = load i64, ptr %alp
  %sameloc = icmp eq i64 %al, %rl
  %later = icmp ugt i32 %at, %rt
  %sync = and i1 %sameloc, %later
  br i1 %sync, label %who, label %no
who:
  %thr = call i32 @pykern.san.thr(ptr %t)
  %me = icmp eq i32 %athr, %thr
  %meep = call ptr @pykern.san.me(ptr %t)
  %ep = call i32 @pykern.san.epoch(ptr %t, ptr %meep)
  %past = icmp ugt i32 %ep, %aep
  %ok = or i1 %me, %past
  ret i1 %ok
no:
  ret i1 false
}

; the release table's entry of the thread with id %thr
define internal ptr @pykern.san.relof(ptr %san, ptr %t, i32 %thr) alwaysinline {
  %lop = getelementptr i8, ptr %t, i64 $T_SAN_LO
  %lo = load i32, ptr %lop
  %i0 = sub i32 %thr, %lo
  %i1 = sub i32 %i0, 1
  %idx = zext i32 %i1 to i64
  %relp = getelementptr i8, ptr %san, i64 $S_REL
  %rel = load ptr, ptr %relp
  %ro = mul i64 %idx, $REL_BYTES
  %r = getelementptr i8, ptr %rel, i64 %ro
  ret ptr %r
}

; did a fence and an atomic order the access of thread %rthr (its fence count then: %rfc, its
; barrier epoch: %rep) before the current thread's? Released by that thread (it fenced after the
; access, then made an atomic access), or by a thread of its block that fenced after a barrier
; that followed the access; acquired as ``acquired`` says
define internal i1 @pykern.san.fenced(ptr %san, ptr %t, i32 %rthr, i32 %rfc, i32 %rep) {
entry:
  %r = call ptr @pykern.san.relof(ptr %san, ptr %t, i32 %rthr)
  %lop = getelementptr i8, ptr %t, i64 $T_SAN_LO
  %lo = load i32, ptr %lop
  %i0 = sub i32 %rthr, %lo
  %i1 = sub i32 %i0, 1
  %relfc = load i32, ptr %r
  %after = icmp ugt i32 %relfc, %rfc
  br i1 %after, label %released, label %block
released:
  %rtp = getelementptr i8, ptr %r, i64 4
  %rt = load i32, ptr %rtp
  %rlp = getelementptr i8, ptr %r, i64 8
  %rl = load i64, ptr %rlp
  %ok1 = call i1 @pykern.san.acquired(ptr %san, ptr %t, i32 %rt, i64 %rl)
  br i1 %ok1, label %yes, label %block
block:
  %q = call ptr @pykern.san.blockof(ptr %san, i32 %i1)
  %bepp = getelementptr i8, ptr %q, i64 32
  %bep = load i32, ptr %bepp
  %before = icmp ult i32 %rep, %bep
  br i1 %before, label %breleased, label %no
breleased:
  %btp = getelementptr i8, ptr %q, i64 36
  %bt = load i32, ptr %btp
  %blp = getelementptr i8, ptr %q, i64 40
  %bl = load i64, ptr %blp
  %ok2 = call i1 @pykern.san.acquired(ptr %san, ptr %t, i32 %bt, i64 %bl)
  ret i1 %ok2
yes:
  ret i1 true
no:
  ret i1 false
}

; is the record at offset %o of cell %e unordered with the current thread's access? false for an
; earlier launch's record (thread <= base) and for one of the same thread
define internal i1 @pykern.san.unord(ptr %san, ptr %t, ptr %e, i64 %o) alwaysinline {
entry:
  %rec = getelementptr i8, ptr %e, i64 %o
  %rthr = load i32, ptr %rec
  %lop = getelementptr i8, ptr %t, i64 $T_SAN_LO
  %lo = load i32, ptr %lop
  %thr = call i32 @pykern.san.thr(ptr %t)
  %stale = icmp ule i32 %rthr, %lo
  %self = icmp eq i32 %rthr, %thr
  %skip = or i1 %stale, %self
  br i1 %skip, label %no, label %test
test:
  %blop = getelementptr i8, ptr %t, i64 $T_SAN_BLO
  %blo = load i32, ptr %blop
  %bhip = getelementptr i8, ptr %t, i64 $T_SAN_BHI
  %bhi = load i32, ptr %bhip
  %ge = icmp uge i32 %rthr, %blo
  %lt = icmp ult i32 %rthr, %bhi
  %inb = and i1 %ge, %lt
  br i1 %inb, label %inblock, label %cross
cross:
  %rgp = getelementptr i8, ptr %rec, i64 10
  %rgep = load i16, ptr %rgp
  %megp = call ptr @pykern.san.me(ptr %t)
  %gepp = getelementptr i8, ptr %megp, i64 6
  %gep = load i16, ptr %gepp
  %gsame = icmp eq i16 %rgep, %gep
  br i1 %gsame, label %maybe, label %no
inblock:
  %rep = getelementptr i8, ptr %rec, i64 4
  %repv = load i32, ptr %rep
  %meep = call ptr @pykern.san.me(ptr %t)
  %ep = call i32 @pykern.san.epoch(ptr %t, ptr %meep)
  %esame = icmp eq i32 %repv, %ep
  br i1 %esame, label %warps, label %no
warps:
  %wsp = getelementptr i8, ptr %san, i64 $S_WS
  %ws = load i32, ptr %wsp
  %wlinp = getelementptr i8, ptr %t, i64 $T_LIN
  %wlin = load i32, ptr %wlinp
  %wneg = sub i32 0, %ws
  %wl = and i32 %wlin, %wneg
  %wlo = add i32 %blo, %wl
  %whi = add i32 %wlo, %ws
  %wge = icmp uge i32 %rthr, %wlo
  %wlt = icmp ult i32 %rthr, %whi
  %inw = and i1 %wge, %wlt
  br i1 %inw, label %samewarp, label %maybe
samewarp:
  %rwp = getelementptr i8, ptr %rec, i64 8
  %rwep = load i16, ptr %rwp
  %mewp = call ptr @pykern.san.me(ptr %t)
  %wepp = getelementptr i8, ptr %mewp, i64 4
  %wep = load i16, ptr %wepp
  %wsame = icmp eq i16 %rwep, %wep
  br i1 %wsame, label %maybe, label %no
maybe:
  %fp = getelementptr i8, ptr %san, i64 $S_FLAGS
  %f = load i32, ptr %fp
  %fb = and i32 %f, $F_FENCE
  %hasf = icmp ne i32 %fb, 0
  br i1 %hasf, label %fchk, label %yes
fchk:
  %o4 = lshr i64 %o, 2
  %fo = add i64 %o4, $CELL_FC
  %fcp = getelementptr i8, ptr %e, i64 %fo
  %rfc = load i32, ptr %fcp
  %repp = getelementptr i8, ptr %rec, i64 4
  %repf = load i32, ptr %repp
  %ord = call i1 @pykern.san.fenced(ptr %san, ptr %t, i32 %rthr, i32 %rfc, i32 %repf)
  %un = xor i1 %ord, true
  ret i1 %un
yes:
  ret i1 true
no:
  ret i1 false
}

; the current thread's access record at %rec (flags left alone)
define internal void @pykern.san.record(ptr %t, ptr %rec, i16 %site) alwaysinline {
  %thr = call i32 @pykern.san.thr(ptr %t)
  store i32 %thr, ptr %rec
  %me = call ptr @pykern.san.me(ptr %t)
  %eps0 = load i64, ptr %me
  %biasp = getelementptr i8, ptr %t, i64 $T_SAN_BIAS
  %bias = load i32, ptr %biasp
  %bias64 = zext i32 %bias to i64
  %eps = add i64 %eps0, %bias64
  %p4 = getelementptr i8, ptr %rec, i64 4
  store i64 %eps, ptr %p4
  %p12 = getelementptr i8, ptr %rec, i64 12
  store i16 %site, ptr %p12
  ret void
}

; the current thread's access record at offset %o of cell %e, and its fence count
define internal void @pykern.san.put(ptr %t, ptr %e, i64 %o, i16 %site) alwaysinline {
  %rec = getelementptr i8, ptr %e, i64 %o
  call void @pykern.san.record(ptr %t, ptr %rec, i16 %site)
  %me = call ptr @pykern.san.me(ptr %t)
  %fcp = getelementptr i8, ptr %me, i64 12
  %fc = load i32, ptr %fcp
  %o4 = lshr i64 %o, 2
  %fo = add i64 %o4, $CELL_FC
  %cfp = getelementptr i8, ptr %e, i64 %fo
  store i32 %fc, ptr %cfp
  ret void
}

; hand a hazard to the runtime: counted in the context's table when the same (kind, sites) was
; seen before, else described in the context's report area and the runtime called
define internal void @pykern.san.report(ptr %san, ptr %t, i32 %rkind, i64 %a, i16 %site, i32 %kind, ptr %prev,
                                        i32 %prevkind, i64 %aux) {
entry:
  %pnull = icmp eq ptr %prev, null
  br i1 %pnull, label %nosite, label %psite
psite:
  %psp = getelementptr i8, ptr %prev, i64 12
  %ps = load i16, ptr %psp
  br label %key
nosite:
  br label %key
key:
  %prevsite = phi i16 [ %ps, %psite ], [ 0, %nosite ]
  %k1 = zext i32 %rkind to i64
  %pk = zext i32 %prevkind to i64
  %pk4 = shl i64 %pk, 4
  %k2 = or i64 %k1, %pk4
  %ck = zext i32 %kind to i64
  %ck6 = shl i64 %ck, 6
  %k3 = or i64 %k2, %ck6
  %cs = zext i16 %site to i64
  %cs8 = shl i64 %cs, 8
  %k4 = or i64 %k3, %cs8
  %pss = zext i16 %prevsite to i64
  %ps24 = shl i64 %pss, 24
  %k = or i64 %k4, %ps24
  %dp = getelementptr i8, ptr %san, i64 $S_DEDUP
  %dt = load ptr, ptr %dp
  %dmp = getelementptr i8, ptr %san, i64 $S_DMASK
  %dm = load i64, ptr %dmp
  %hm = mul i64 %k, -7046029254386353131
  %hs = lshr i64 %hm, 31
  %h = and i64 %hs, %dm
  %so = shl i64 %h, 4
  %slot = getelementptr i8, ptr %dt, i64 %so
  %sk = load i64, ptr %slot
  %cnt = getelementptr i8, ptr %slot, i64 8
  %same = icmp eq i64 %sk, %k
  br i1 %same, label %count, label %other
count:
  %c = load i64, ptr %cnt
  %c1 = add i64 %c, 1
  store i64 %c1, ptr %cnt
  ret void
other:
  %empty = icmp eq i64 %sk, 0
  br i1 %empty, label %claim, label %describe
claim:
  store i64 %k, ptr %slot
  store i64 1, ptr %cnt
  br label %describe
describe:
  %intab = zext i1 %empty to i32
""" + "".join(f"  %w{n} = getelementptr i8, ptr %san, i64 {off}\n  store {ty} {v}, ptr %w{n}\n" for n, (off, ty, v) in
              enumerate((("$S_RKIND", "i32", "%rkind"), ("$S_RTABLE", "i32", "%intab"), ("$S_RADDR", "i64", "%a"),
                         ("$S_RPREVKIND", "i32", "%prevkind"), ("$S_RKEY", "i64", "%k"),
                         ("$S_RAUX", "i64", "%aux")))) + r"""
  %cur = getelementptr i8, ptr %san, i64 $S_RCUR
  call void @pykern.san.record(ptr %t, ptr %cur, i16 %site)
  %curk = getelementptr i8, ptr %cur, i64 14
  %kind16 = trunc i32 %kind to i16
  store i16 %kind16, ptr %curk
  %pv = getelementptr i8, ptr %san, i64 $S_RPREV
  call void @llvm.memset.p0.i64(ptr %pv, i8 0, i64 16, i1 false)
  br i1 %pnull, label %bar, label %copyprev
copyprev:
  %pw = load i64, ptr %prev
  store i64 %pw, ptr %pv
  %prev8 = getelementptr i8, ptr %prev, i64 8
  %pw2 = load i64, ptr %prev8
  %pv8 = getelementptr i8, ptr %pv, i64 8
  store i64 %pw2, ptr %pv8
  br label %bar
bar:
  %meb = call ptr @pykern.san.me(ptr %t)
  %tbp = getelementptr i8, ptr %meb, i64 8
  %tb0 = load i32, ptr %tbp
  %bsp = getelementptr i8, ptr %t, i64 $T_SAN_BSITE
  %bs = load i32, ptr %bsp
  %hasbs = icmp ne i32 %bs, 0
  %tb1 = select i1 %hasbs, i32 %bs, i32 %tb0
  %tb = sub i32 %tb1, 1
  %rbp = getelementptr i8, ptr %san, i64 $S_RBAR
  store i32 %tb, ptr %rbp
  %blkp = getelementptr i8, ptr %t, i64 $T_BLK
  %blk = load ptr, ptr %blkp
  %shp = getelementptr i8, ptr %blk, i64 $B_SHARED
  %sh = load ptr, ptr %shp
  %rsp = getelementptr i8, ptr %san, i64 $S_RSHARED
  store ptr %sh, ptr %rsp
  %rfp = getelementptr i8, ptr %san, i64 $S_REPORT
  %rf = load ptr, ptr %rfp
  call void %rf(ptr %san)
  ret void
}

; one cell %e (of the word or byte at %a) for an access: checks, then the update. Returns whether
; the access reported (``quiet``: it already did)
define internal i1 @pykern.san.check(ptr %san, ptr %t, ptr %e, i64 %a, i16 %site, i32 %kind, i32 %flags,
                                     i1 %quiet, i64 %aux) alwaysinline {
entry:
  %wthr = load i32, ptr %e
  %lop = getelementptr i8, ptr %t, i64 $T_SAN_LO
  %lo = load i32, ptr %lop
  %isuninit = icmp eq i32 %wthr, %lo
  %wfp = getelementptr i8, ptr %e, i64 14
  %wf = load i16, ptr %wfp
  %iswrite = icmp eq i32 %kind, 1
  %isatomic = icmp eq i32 %kind, 2
  %checkinit0 = and i32 %flags, $F_INIT
  %checkinit = icmp ne i32 %checkinit0, 0
  %reads = xor i1 %iswrite, true
  %isread = icmp eq i32 %kind, 0
  %u1 = and i1 %isuninit, %reads
  %u2 = and i1 %u1, %checkinit
  %notquiet = xor i1 %quiet, true
  %u3 = and i1 %u2, %notquiet
  br i1 %u3, label %uninit, label %race0
uninit:
  call void @pykern.san.report(ptr %san, ptr %t, i32 $R_UNINIT, i64 %a, i16 %site, i32 %kind, ptr null, i32 0,
                               i64 %aux)
  br label %race0
race0:
  %q1 = phi i1 [ %quiet, %entry ], [ true, %uninit ]
  %checkrace0 = and i32 %flags, $F_RACE
  %checkrace = icmp ne i32 %checkrace0, 0
  br i1 %checkrace, label %wcheck, label %setinit
wcheck:
  %wunord = call i1 @pykern.san.unord(ptr %san, ptr %t, ptr %e, i64 0)
  %watomic16 = and i16 %wf, 2
  %watomic = icmp ne i16 %watomic16, 0
  %bothatomic = and i1 %watomic, %isatomic
  %notboth = xor i1 %bothatomic, true
  %wc = and i1 %wunord, %notboth
  %nq1 = xor i1 %q1, true
  %wrep = and i1 %wc, %nq1
  br i1 %wrep, label %wreport, label %wdone
wreport:
  %wk = select i1 %watomic, i32 2, i32 1
  call void @pykern.san.report(ptr %san, ptr %t, i32 $R_RACE, i64 %a, i16 %site, i32 %kind, ptr %e, i32 %wk,
                               i64 %aux)
  br label %wdone
wdone:
  %q2 = phi i1 [ %q1, %wcheck ], [ true, %wreport ]
  %r1 = getelementptr i8, ptr %e, i64 16
  %r2 = getelementptr i8, ptr %e, i64 32
  %r1thr = load i32, ptr %r1
  br i1 %isread, label %readupd, label %rchecks

; ---- a write or an atomic: against the reads since the last write
rchecks:
  %r1u = call i1 @pykern.san.unord(ptr %san, ptr %t, ptr %e, i64 16)
  %r2u = call i1 @pykern.san.unord(ptr %san, ptr %t, ptr %e, i64 32)
  %ru = or i1 %r1u, %r2u
  %nq2 = xor i1 %q2, true
  %rrep = and i1 %ru, %nq2
  br i1 %rrep, label %rreport, label %wupd
rreport:
  %which = select i1 %r1u, ptr %r1, ptr %r2
  call void @pykern.san.report(ptr %san, ptr %t, i32 $R_RACE, i64 %a, i16 %site, i32 %kind, ptr %which, i32 0,
                               i64 %aux)
  br label %wupd
wupd:
  %q3 = phi i1 [ %q2, %rchecks ], [ true, %rreport ]
  call void @pykern.san.put(ptr %t, ptr %e, i64 0, i16 %site)
  %nf = select i1 %isatomic, i16 2, i16 0
  store i16 %nf, ptr %wfp
  store i32 0, ptr %r1
  store i32 0, ptr %r2
  ret i1 %q3

; ---- a read: remember it (two readers of different threads at most)
readupd:
  %thr = call i32 @pykern.san.thr(ptr %t)
  %r1none = icmp ule i32 %r1thr, %lo
  %r1self = icmp eq i32 %r1thr, %thr
  %replace1 = or i1 %r1none, %r1self
  br i1 %replace1, label %put1, label %r1ord
put1:
  call void @pykern.san.put(ptr %t, ptr %e, i64 16, i16 %site)
  ret i1 %q2
r1ord:
  %r1un = call i1 @pykern.san.unord(ptr %san, ptr %t, ptr %e, i64 16)
  %r2un = call i1 @pykern.san.unord(ptr %san, ptr %t, ptr %e, i64 32)
  br i1 %r1un, label %second, label %newfirst
newfirst:
  ; the first read happened before this one: this one replaces it; the second stays only while it
  ; is still unordered with this one
  call void @pykern.san.put(ptr %t, ptr %e, i64 16, i16 %site)
  br i1 %r2un, label %keep2, label %drop2
drop2:
  store i32 0, ptr %r2
  ret i1 %q2
keep2:
  ret i1 %q2
second:
  br i1 %r2un, label %keep2, label %put2
put2:
  call void @pykern.san.put(ptr %t, ptr %e, i64 32, i16 %site)
  ret i1 %q2
setinit:
  br i1 %isread, label %done, label %markinit
markinit:
  call void @pykern.san.put(ptr %t, ptr %e, i64 0, i16 %site)
  %nf2 = select i1 %isatomic, i16 2, i16 0
  store i16 %nf2, ptr %wfp
  ret i1 %q1
done:
  ret i1 %q1
}

; the word cell %c (of the granule at %g) becomes four byte cells holding its state; false when
; the shadow memory ran out
define internal i1 @pykern.san.split(ptr %san, ptr %c, i64 %g) {
entry:
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %copy ]
  %more = icmp ult i64 %k, 4
  br i1 %more, label %body, label %mark
body:
  %b = add i64 %g, %k
  %be = call ptr @pykern.san.bcell(ptr %san, i64 %b)
  %bnull = icmp eq ptr %be, null
  br i1 %bnull, label %fail, label %copy
copy:
  call void @llvm.memcpy.p0.p0.i64(ptr %be, ptr %c, i64 $CELL, i1 false)
  %k1 = add i64 %k, 1
  br label %loop
mark:
  %mp = getelementptr i8, ptr %c, i64 $CELL_MODE
  store i32 1, ptr %mp
  ret i1 true
fail:
  ret i1 false
}

; the byte cell of byte %a, its granule split first (null: the shadow memory ran out)
define internal ptr @pykern.san.bytecell(ptr %san, i64 %a) {
entry:
  %g = and i64 %a, -4
  %c = call ptr @pykern.san.wcell(ptr %san, i64 %g)
  %cnull = icmp eq ptr %c, null
  br i1 %cnull, label %none, label %mode
mode:
  %mp = getelementptr i8, ptr %c, i64 $CELL_MODE
  %m = load i32, ptr %mp
  %split = icmp ne i32 %m, 0
  br i1 %split, label %cell, label %dosplit
dosplit:
  %ok = call i1 @pykern.san.split(ptr %san, ptr %c, i64 %g)
  br i1 %ok, label %cell, label %none
cell:
  %e = call ptr @pykern.san.bcell(ptr %san, i64 %a)
  ret ptr %e
none:
  ret ptr null
}

; the byte cells of [%a0, %a0 + %n), the granules split first
define internal i1 @pykern.san.bytes(ptr %san, ptr %t, i64 %a0, i64 %n, i16 %site, i32 %kind, i32 %flags,
                                     i1 %quiet, i64 %aux) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %cont ]
  %q = phi i1 [ %quiet, %entry ], [ %q2, %cont ]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %exit
body:
  %a = add i64 %a0, %i
  %e = call ptr @pykern.san.bytecell(ptr %san, i64 %a)
  %enull = icmp eq ptr %e, null
  br i1 %enull, label %skip, label %check
check:
  %qc = call i1 @pykern.san.check(ptr %san, ptr %t, ptr %e, i64 %a, i16 %site, i32 %kind, i32 %flags, i1 %q,
                                  i64 %aux)
  br label %cont
skip:
  br label %cont
cont:
  %q2 = phi i1 [ %qc, %check ], [ %q, %skip ]
  %i1 = add i64 %i, 1
  br label %loop
exit:
  ret i1 %q
}

define internal void @pykern.san.lock(ptr %san) {
entry:
  %fp = getelementptr i8, ptr %san, i64 $S_FLAGS
  %f = load i32, ptr %fp
  %l = and i32 %f, $F_LOCK
  %need = icmp ne i32 %l, 0
  br i1 %need, label %spin, label %done
spin:
  %lp = getelementptr i8, ptr %san, i64 $S_LOCK
  %r = cmpxchg ptr %lp, i32 0, i32 1 acquire monotonic
  %ok = extractvalue { i32, i1 } %r, 1
  br i1 %ok, label %done, label %spin
done:
  ret void
}

define internal void @pykern.san.unlock(ptr %san) {
entry:
  %fp = getelementptr i8, ptr %san, i64 $S_FLAGS
  %f = load i32, ptr %fp
  %l = and i32 %f, $F_LOCK
  %need = icmp ne i32 %l, 0
  br i1 %need, label %rel, label %done
rel:
  %lp = getelementptr i8, ptr %san, i64 $S_LOCK
  store atomic i32 0, ptr %lp release, align 4
  br label %done
done:
  ret void
}

; an atomic access at %a under fence tracking: the first atomic after a fence releases what the
; thread did before that fence; every atomic is the thread's candidate acquire for its next fence
define internal void @pykern.san.atomic(ptr %san, ptr %t, i64 %a) {
entry:
  %acp = getelementptr i8, ptr %san, i64 $S_ACLOCK
  %ac = load i32, ptr %acp
  %ac1 = add i32 %ac, 1
  store i32 %ac1, ptr %acp
  %me = call ptr @pykern.san.me(ptr %t)
  %pp = getelementptr i8, ptr %me, i64 16
  store i32 %ac1, ptr %pp
  %plp = getelementptr i8, ptr %me, i64 24
  store i64 %a, ptr %plp
  %fcp = getelementptr i8, ptr %me, i64 12
  %fc = load i32, ptr %fcp
  %fenced = icmp ne i32 %fc, 0
  br i1 %fenced, label %rel, label %done
rel:
  %thr = call i32 @pykern.san.thr(ptr %t)
  %r = call ptr @pykern.san.relof(ptr %san, ptr %t, i32 %thr)
  %rfc = load i32, ptr %r
  %new = icmp ne i32 %rfc, %fc
  br i1 %new, label %store, label %done
store:
  store i32 %fc, ptr %r
  %rtp = getelementptr i8, ptr %r, i64 4
  store i32 %ac1, ptr %rtp
  %rlp = getelementptr i8, ptr %r, i64 8
  store i64 %a, ptr %rlp
  ; the block's release: what its threads did before a barrier this thread passed before fencing
  %fepp = getelementptr i8, ptr %me, i64 20
  %fep = load i32, ptr %fepp
  %q = call ptr @pykern.san.myblock(ptr %san, ptr %t)
  %bepp = getelementptr i8, ptr %q, i64 32
  store i32 %fep, ptr %bepp
  %btp = getelementptr i8, ptr %q, i64 36
  store i32 %ac1, ptr %btp
  %blp = getelementptr i8, ptr %q, i64 40
  store i64 %a, ptr %blp
  br label %done
done:
  ret void
}

; every access: first the watchpoints, then (when race or init is checked) the shadow
define void @pykern.san.access(ptr %t, ptr %addr, i64 %n, i32 %sk, i64 %aux) {
entry:
  %san = call ptr @pykern.san.ctx(ptr %t)
  %nwp = getelementptr i8, ptr %san, i64 $S_NWATCH
  %nw = load i64, ptr %nwp
  %anyw = icmp ne i64 %nw, 0
  br i1 %anyw, label %watch, label %checks
watch:
  call void @pykern.san.watched(ptr %san, ptr %t, ptr %addr, i64 %n, i32 %sk, i64 %nw)
  br label %checks
checks:
  %fp = getelementptr i8, ptr %san, i64 $S_FLAGS
  %flags = load i32, ptr %fp
  %fc = and i32 %flags, 3
  %any = icmp ne i32 %fc, 0
  br i1 %any, label %check, label %done
check:
  call void @pykern.san.access.shadow(ptr %t, ptr %addr, i64 %n, i32 %sk, i64 %aux)
  br label %done
done:
  ret void
}

; the runtime's callback (thread id, address, bytes, site << 3 | local << 2 | kind) when the access
; overlaps a watched range
define internal void @pykern.san.watched(ptr %san, ptr %t, ptr %addr, i64 %n, i32 %sk, i64 %nw) {
entry:
  %tabp = getelementptr i8, ptr %san, i64 $S_WATCH
  %tab = load ptr, ptr %tabp
  %a = ptrtoint ptr %addr to i64
  %end = add i64 %a, %n
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %next ]
  %more = icmp ult i64 %k, %nw
  br i1 %more, label %body, label %exit
body:
  %k2 = shl i64 %k, 4
  %lop = getelementptr i8, ptr %tab, i64 %k2
  %lo = load i64, ptr %lop
  %hip = getelementptr i8, ptr %lop, i64 8
  %hi = load i64, ptr %hip
  %below = icmp ult i64 %a, %hi
  %above = icmp ugt i64 %end, %lo
  %hit = and i1 %below, %above
  %k1 = add i64 %k, 1
  br i1 %hit, label %call, label %next
next:
  br label %loop
call:
  call void @pykern.san.lock(ptr %san)
  %thr = call i32 @pykern.san.thr(ptr %t)
  %cbp = getelementptr i8, ptr %san, i64 $S_WCALL
  %cb = load ptr, ptr %cbp
  call void %cb(ptr %san, i32 %thr, i64 %a, i64 %n, i32 %sk)
  call void @pykern.san.unlock(ptr %san)
  br label %exit
exit:
  ret void
}

define internal void @pykern.san.access.shadow(ptr %t, ptr %addr, i64 %n, i32 %sk, i64 %aux) {
entry:
  %san = call ptr @pykern.san.ctx(ptr %t)
  %fp = getelementptr i8, ptr %san, i64 $S_FLAGS
  %flags0 = load i32, ptr %fp
  call void @pykern.san.lock(ptr %san)
  %kind = and i32 %sk, 3
  %s32 = lshr i32 %sk, 3
  %site = trunc i32 %s32 to i16
  %localbit = and i32 %sk, 4
  %islocal = icmp ne i32 %localbit, 0
  %noracef = and i32 %flags0, -2
  %flags = select i1 %islocal, i32 %noracef, i32 %flags0
  %a0 = ptrtoint ptr %addr to i64
  %isatomic = icmp eq i32 %kind, 2
  %ff = and i32 %flags, $F_FENCE
  %track = icmp ne i32 %ff, 0
  %hook = and i1 %isatomic, %track
  br i1 %hook, label %atomic, label %elided
atomic:
  call void @pykern.san.atomic(ptr %san, ptr %t, i64 %a0)
  br label %elided
elided:
  %elop = getelementptr i8, ptr %san, i64 $S_ELO
  %elo = load i64, ptr %elop
  %ehip = getelementptr i8, ptr %san, i64 $S_EHI
  %ehi = load i64, ptr %ehip
  %aend = add i64 %a0, %n
  %ebelow = icmp ult i64 %a0, %ehi
  %eabove = icmp ugt i64 %aend, %elo
  %enear = and i1 %ebelow, %eabove
  br i1 %enear, label %stray, label %sized
stray:
  call void @pykern.san.stray(ptr %san, ptr %t, i64 %a0, i64 %n, i16 %site, i32 %kind)
  br label %sized
sized:
  ; whole aligned granules: one check per granule (a split granule: per byte)
  %an = or i64 %a0, %n
  %al = and i64 %an, 3
  %words = icmp eq i64 %al, 0
  br i1 %words, label %wloop, label %bytes
wloop:
  %i = phi i64 [ 0, %sized ], [ %i1, %wcont ]
  %q = phi i1 [ false, %sized ], [ %q2, %wcont ]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %wbody, label %exit
wbody:
  %g = add i64 %a0, %i
  %c = call ptr @pykern.san.wcell(ptr %san, i64 %g)
  %cnull = icmp eq ptr %c, null
  br i1 %cnull, label %wskip, label %wmode
wmode:
  %mp = getelementptr i8, ptr %c, i64 $CELL_MODE
  %m = load i32, ptr %mp
  %split = icmp ne i32 %m, 0
  br i1 %split, label %wsplit, label %wcheck
wcheck:
  %qw = call i1 @pykern.san.check(ptr %san, ptr %t, ptr %c, i64 %g, i16 %site, i32 %kind, i32 %flags, i1 %q,
                                  i64 %aux)
  br label %wcont
wsplit:
  %qs = call i1 @pykern.san.bytes(ptr %san, ptr %t, i64 %g, i64 4, i16 %site, i32 %kind, i32 %flags, i1 %q,
                                  i64 %aux)
  br label %wcont
wskip:
  br label %wcont
wcont:
  %q2 = phi i1 [ %qw, %wcheck ], [ %qs, %wsplit ], [ %q, %wskip ]
  %i1 = add i64 %i, 4
  br label %wloop
bytes:
  %qb = call i1 @pykern.san.bytes(ptr %san, ptr %t, i64 %a0, i64 %n, i16 %site, i32 %kind, i32 %flags, i1 false,
                                  i64 %aux)
  br label %exit
exit:
  call void @pykern.san.unlock(ptr %san)
  ret void
}

; an access the checker sees that lands in the memory of a parameter this launch leaves unchecked
; (an out-of-bounds access of another array, or of that one): any access of an own-index one's, a
; write or atomic of a never-written one's could race with the accesses nobody recorded: reported
define internal void @pykern.san.stray(ptr %san, ptr %t, i64 %a, i64 %n, i16 %site, i32 %kind) {
entry:
  %nep = getelementptr i8, ptr %san, i64 $S_NELIDE
  %ne = load i32, ptr %nep
  %tabp = getelementptr i8, ptr %san, i64 $S_ELIDED
  %tab = load ptr, ptr %tabp
  %end = add i64 %a, %n
  %ne64 = zext i32 %ne to i64
  %isread = icmp eq i32 %kind, 0
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %next ]
  %more = icmp ult i64 %k, %ne64
  br i1 %more, label %body, label %exit
body:
  %o = mul i64 %k, $ELIDED_BYTES
  %lop = getelementptr i8, ptr %tab, i64 %o
  %lo = load i64, ptr %lop
  %hip = getelementptr i8, ptr %lop, i64 8
  %hi = load i64, ptr %hip
  %ownp = getelementptr i8, ptr %lop, i64 16
  %own = load i64, ptr %ownp
  %below = icmp ult i64 %a, %hi
  %above = icmp ugt i64 %end, %lo
  %hit = and i1 %below, %above
  %isown = icmp ne i64 %own, 0
  %writes = xor i1 %isread, true
  %matters = or i1 %isown, %writes
  %rep = and i1 %hit, %matters
  %k1 = add i64 %k, 1
  br i1 %rep, label %report, label %next
next:
  br label %loop
report:
  call void @pykern.san.report(ptr %san, ptr %t, i32 $R_STRAY, i64 %a, i16 %site, i32 %kind, ptr null, i32 0,
                               i64 %k)
  br label %exit
exit:
  ret void
}

; nothing written, nothing accessed: a new local array, or a new block's shared memory
define internal void @pykern.san.forget(ptr %san, ptr %t, i64 %a0, i64 %n) {
entry:
  %lop = getelementptr i8, ptr %t, i64 $T_SAN_LO
  %lo = load i32, ptr %lop
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %exit
body:
  %a = add i64 %a0, %i
  %rem = sub i64 %n, %i
  %al = and i64 %a, 3
  %aligned = icmp eq i64 %al, 0
  %room = icmp uge i64 %rem, 4
  %whole = and i1 %aligned, %room
  br i1 %whole, label %word, label %byte
word:
  %cw = call ptr @pykern.san.wcell(ptr %san, i64 %a)
  br label %cell
byte:
  %cb = call ptr @pykern.san.bytecell(ptr %san, i64 %a)
  br label %cell
cell:
  ; a whole aligned granule's cell, or one byte's (the granule split first)
  %c = phi ptr [ %cw, %word ], [ %cb, %byte ]
  %step = phi i64 [ 4, %word ], [ 1, %byte ]
  %cnull = icmp eq ptr %c, null
  br i1 %cnull, label %next, label %clear
clear:
  call void @llvm.memset.p0.i64(ptr %c, i8 0, i64 $CELL, i1 false)
  store i32 %lo, ptr %c
  br label %next
next:
  %i1 = add i64 %i, %step
  br label %loop
exit:
  ret void
}

define void @pykern.san.fresh(ptr %t, ptr %addr, i64 %n) {
  %san = call ptr @pykern.san.ctx(ptr %t)
  call void @pykern.san.lock(ptr %san)
  %a0 = ptrtoint ptr %addr to i64
  call void @pykern.san.forget(ptr %san, ptr %t, i64 %a0, i64 %n)
  call void @pykern.san.unlock(ptr %san)
  ret void
}

; a thread starts (``whole`` = 0; thread 0 also starts its block) or, on the work-item-loop path,
; a block does (``whole`` = 1): the block's fields in T, its thread states zeroed, its shared
; memory forgotten
define void @pykern.san.start(ptr %t, ptr %shared, i32 %whole) {
entry:
  %san = call ptr @pykern.san.ctxof(ptr %t)
  %bp = getelementptr i8, ptr %t, i64 $T_BLK
  %blk = load ptr, ptr %bp
""" + "".join(f"  %p{v} = getelementptr i8, ptr %blk, i64 {off}\n  %{v} = load i32, ptr %p{v}\n" for v, off in (
    ("bx", "$B_BID_X"), ("by", "$B_BID_Y"), ("bz", "$B_BID_Z"), ("gx", "$B_GDIM_X"), ("gy", "$B_GDIM_Y"),
    ("nt", "$B_NTHREADS"))) + r"""
  %basep = getelementptr i8, ptr %san, i64 $S_BASE
  %base = load i32, ptr %basep
  %skipp = getelementptr i8, ptr %san, i64 $S_SKIP
  %skip = load i32, ptr %skipp
  %zy = mul i32 %bz, %gy
  %zy1 = add i32 %zy, %by
  %zyx = mul i32 %zy1, %gx
  %blin = add i32 %zyx, %bx
  %g0 = mul i32 %blin, %nt
  %b1 = add i32 %g0, %base
  %blo = add i32 %b1, 1
  %bhi = add i32 %blo, %nt
  %strp = getelementptr i8, ptr %san, i64 $S_TSTRIDE
  %stride = load i32, ptr %strp
  %sb = mul i32 %blin, %stride
  %sb64 = zext i32 %sb to i64
  %so = shl i64 %sb64, 5
  %tsp0 = getelementptr i8, ptr %san, i64 $S_TSTATE
  %ts0 = load ptr, ptr %tsp0
  %ts = getelementptr i8, ptr %ts0, i64 %so
""" + "".join(f"  %s{n} = getelementptr i8, ptr %t, i64 {off}\n  store {ty} {v}, ptr %s{n}\n" for n, (off, ty, v) in
              enumerate((("$T_SAN_LO", "i32", "%base"), ("$T_SAN_BLO", "i32", "%blo"), ("$T_SAN_BHI", "i32", "%bhi"),
                         ("$T_SAN_TS", "ptr", "%ts"), ("$T_SAN_SKIP", "i32", "%skip"),
                         ("$T_SAN_CTX", "ptr", "%san"), ("$T_SAN_BIAS", "i32", "0"),
                         ("$T_SAN_BSITE", "i32", "0")))) + r"""
  %isblock = icmp ne i32 %whole, 0
  br i1 %isblock, label %forget, label %thread
thread:
  %linp = getelementptr i8, ptr %t, i64 $T_LIN
  %lin = load i32, ptr %linp
  %first = icmp eq i32 %lin, 0
  br i1 %first, label %forget, label %done
forget:
  %nt64 = zext i32 %nt to i64
  %tsbytes = shl i64 %nt64, 5
  call void @llvm.memset.p0.i64(ptr %ts, i8 0, i64 %tsbytes, i1 false)
  %cp = getelementptr i8, ptr %blk, i64 $B_CTX
  %ctx = load ptr, ptr %cp
  %dynp = getelementptr i8, ptr %ctx, i64 $C_DYN
  %dyn = load i64, ptr %dynp
  %stp = getelementptr i8, ptr %san, i64 $S_STATIC
  %st = load i64, ptr %stp
  %size = add i64 %dyn, %st
  %a0 = ptrtoint ptr %shared to i64
  call void @pykern.san.lock(ptr %san)
  call void @pykern.san.forget(ptr %san, ptr %t, i64 %a0, i64 %size)
  call void @pykern.san.unlock(ptr %san)
  br label %done
done:
  ret void
}

; a thread passed a barrier (%kind 0 block, 1 grid) or a ``syncwarp`` (2) at sync site %site
define internal void @pykern.san.passed(ptr %q, i32 %kind, i32 %site) alwaysinline {
entry:
  %site1 = add i32 %site, 1
  %barp = getelementptr i8, ptr %q, i64 8
  store i32 %site1, ptr %barp
  %warp = icmp eq i32 %kind, 2
  br i1 %warp, label %w, label %b
w:
  %wepp = getelementptr i8, ptr %q, i64 4
  %wep = load i16, ptr %wepp
  %wep1 = add i16 %wep, 1
  store i16 %wep1, ptr %wepp
  ret void
b:
  %ep = load i32, ptr %q
  %ep1 = add i32 %ep, 1
  store i32 %ep1, ptr %q
  %grid = icmp eq i32 %kind, 1
  br i1 %grid, label %g, label %done
g:
  %gepp = getelementptr i8, ptr %q, i64 6
  %gep = load i16, ptr %gepp
  %gep1 = add i16 %gep, 1
  store i16 %gep1, ptr %gepp
  br label %done
done:
  ret void
}

define void @pykern.san.sync(ptr %t, i32 %kind, i32 %site) {
  %q = call ptr @pykern.san.me(ptr %t)
  call void @pykern.san.passed(ptr %q, i32 %kind, i32 %site)
  ret void
}

; the work-item-loop path: every thread of the block passed the block barrier at %site (counted
; once for all of them, ``epoch``)
define void @pykern.san.blocksync(ptr %t, i32 %site) {
  %bp = getelementptr i8, ptr %t, i64 $T_SAN_BIAS
  %bias = load i32, ptr %bp
  %bias1 = add i32 %bias, 1
  store i32 %bias1, ptr %bp
  %sp = getelementptr i8, ptr %t, i64 $T_SAN_BSITE
  %site1 = add i32 %site, 1
  store i32 %site1, ptr %sp
  ret void
}

; a device- or system-scope fence: what the thread did before it is released by its next atomic;
; its last atomic before it becomes its block's acquire
define void @pykern.san.fence(ptr %t) {
entry:
  %me = call ptr @pykern.san.me(ptr %t)
  %fcp = getelementptr i8, ptr %me, i64 12
  %fc = load i32, ptr %fcp
  %fc1 = add i32 %fc, 1
  store i32 %fc1, ptr %fcp
  %fep = call i32 @pykern.san.epoch(ptr %t, ptr %me)
  %fepp = getelementptr i8, ptr %me, i64 20
  store i32 %fep, ptr %fepp
  %pp = getelementptr i8, ptr %me, i64 16
  %pend = load i32, ptr %pp
  %has = icmp ne i32 %pend, 0
  br i1 %has, label %acq, label %done
acq:
  %san = call ptr @pykern.san.ctx(ptr %t)
  call void @pykern.san.lock(ptr %san)
  %q = call ptr @pykern.san.myblock(ptr %san, ptr %t)
  store i32 %pend, ptr %q
  %ep = call i32 @pykern.san.epoch(ptr %t, ptr %me)
  %aepp = getelementptr i8, ptr %q, i64 4
  store i32 %ep, ptr %aepp
  %thr = call i32 @pykern.san.thr(ptr %t)
  %athrp = getelementptr i8, ptr %q, i64 8
  store i32 %thr, ptr %athrp
  %plp = getelementptr i8, ptr %me, i64 24
  %pl = load i64, ptr %plp
  %alp = getelementptr i8, ptr %q, i64 16
  store i64 %pl, ptr %alp
  call void @pykern.san.unlock(ptr %san)
  br label %done
done:
  ret void
}
""")


def checker_ir(layout: dict) -> str:
    """The checker's IR text; ``layout``: the cpu target's ``T_*``/``B_*``/``C_*`` offsets by name."""
    names = dict(layout)
    names.update({k: v for k, v in globals().items() if k[:2] in ("S_", "F_", "R_") and isinstance(v, int)})
    names.update(WPAGE_BITS=WPAGE_BITS, WPAGE_MASK=(1 << WPAGE_BITS) - 1, BPAGE_BITS=BPAGE_BITS,
                 BPAGE_MASK=(1 << BPAGE_BITS) - 1, CELL=CELL_BYTES, CELL_FC=CELL_FC, CELL_MODE=CELL_MODE,
                 ELIDED_BYTES=ELIDED_BYTES,
                 BYTE_SPACE_KEY=BYTE_SPACE_KEY, REL_BYTES=REL_BYTES, ACQ_BYTES=ACQ_BYTES)
    return _TEXT.substitute(names)
