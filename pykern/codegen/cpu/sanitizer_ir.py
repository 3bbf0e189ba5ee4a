"""The kernel sanitizer's shadow-memory checker, as LLVM IR text linked into a sanitized cpu kernel.

A sanitized kernel calls these functions (the cpu target emits the calls):

* ``@pykern.san.access(T, addr, nbytes, site << 2 | kind)`` before every array element access
  (kind 0 read, 1 write, 2 atomic);
* ``@pykern.san.fresh(T, addr, nbytes)`` where a local array is allocated;
* ``@pykern.san.start(T, shared)`` when a thread starts (thread 0 of a block also forgets the
  block's shared memory: a new block's shared memory holds nothing written);
* ``@pykern.san.sync(T, kind, site)`` after a barrier (0 block, 1 grid) or ``syncwarp`` (2).

Shadow memory: 48 bytes per byte of memory, in pages of 4096 bytes found through an
open-addressing table the runtime owns (``runtime/cpu/sanitizer.py``: it allocates a page when the
checker misses, calling back into Python, and reads the reports). An entry holds three access
records of 16 bytes: the last write, and up to two reads since it (two different threads, so a
write by one of them still finds the other). A record is ``thread u32`` (global thread id + 1, 0
= none), ``epoch u32`` (block barriers the thread had passed), ``warp epoch u16`` (``syncwarp``s),
``grid epoch u16`` (grid syncs), ``site u16``, ``flags u16`` (the write record's: 1 initialised,
2 atomic). Two accesses of different threads are ordered when they are in different blocks and
different grid epochs, or in one block and different epochs, or in one warp and different warp
epochs; nothing else orders them (the blocks of a sanitized launch run one after another on one
OS thread, so the records need no locks; a cooperative launch's blocks run at once and take the
context's spin lock).

The entry points are external in this text (so that they resolve the kernel module's
declarations when the two are linked); the cpu target internalises them afterwards.
The per-thread state ``T`` holds the thread's record fields at ``T_SAN`` (``cpu/target.py``).
"""

from __future__ import annotations

import string

#: bytes of shadow per byte of memory, and the page size the table maps
ENTRY_BYTES = 48
PAGE_BITS = 12

# ---- the sanitizer context (``runtime/cpu/sanitizer.py`` SanCtx; must match)
S_TABLE, S_MASK, S_MISS, S_REPORT, S_NTHREADS, S_WS, S_FLAGS, S_LOCK = 0, 8, 16, 24, 32, 36, 40, 44
S_CKEY, S_CVAL, S_DEDUP, S_DMASK, S_STATIC = 48, 56, 64, 72, 80
# the report being handed to the runtime
S_RKIND, S_RTABLE, S_RADDR, S_RCUR, S_RPREV, S_RPREVKIND, S_RBAR, S_RKEY, S_RSHARED = (
    88, 92, 96, 104, 120, 136, 140, 144, 152)
# watchpoints (``pykern.debug.watch``): [lo, hi) byte ranges (u64 pairs), their count, and the
# runtime's callback for an access that overlaps one
S_WATCH, S_NWATCH, S_WCALL = 160, 168, 176
S_SIZE = 184
#: SanCtx flags
F_RACE, F_INIT, F_LOCK = 1, 2, 4
#: report kinds
R_RACE, R_UNINIT = 1, 2

def _byte_call(result, entry, addr, quiet):
    """The checker's call for one byte: ``%result`` = reported, from shadow entry ``%entry``."""
    return (f"  %{result} = call i1 @pykern.san.byte(ptr %san, ptr %t, ptr %{entry}, i64 %{addr}, i32 %thr, "
            f"i32 %ep, i16 %wep, i16 %gep, i16 %site, i32 %kind, i32 %flags, i1 %{quiet})\n")


_TEXT = string.Template(r"""

define internal ptr @pykern.san.ctx(ptr %t) alwaysinline {
  %bp = getelementptr i8, ptr %t, i64 $T_BLK
  %blk = load ptr, ptr %bp
  %cp = getelementptr i8, ptr %blk, i64 $B_CTX
  %ctx = load ptr, ptr %cp
  %sp = getelementptr i8, ptr %ctx, i64 $C_SAN
  %san = load ptr, ptr %sp
  ret ptr %san
}

; the shadow entry of byte %a, or null (the runtime gave no page: its memory limit)
define internal ptr @pykern.san.entry(ptr %san, i64 %a) {
entry:
  %page = lshr i64 %a, $PAGE_BITS
  %key = add i64 %page, 1
  %ckp = getelementptr i8, ptr %san, i64 $S_CKEY
  %ck = load i64, ptr %ckp
  %cvp = getelementptr i8, ptr %san, i64 $S_CVAL
  %hitc = icmp eq i64 %ck, %key
  br i1 %hitc, label %cached, label %search
cached:
  %cv = load ptr, ptr %cvp
  br label %found
search:
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
  %mv = call ptr %mf(ptr %san, i64 %page)
  br label %remember
remember:
  %base = phi ptr [ %v, %have ], [ %mv, %miss ]
  store i64 %key, ptr %ckp
  store ptr %base, ptr %cvp
  br label %found
found:
  %b = phi ptr [ %cv, %cached ], [ %base, %remember ]
  %isnull = icmp eq ptr %b, null
  br i1 %isnull, label %none, label %some
none:
  ret ptr null
some:
  %off = and i64 %a, $PAGE_MASK
  %eo = mul i64 %off, $ENTRY
  %e = getelementptr i8, ptr %b, i64 %eo
  ret ptr %e
}

; is the access record %rec unordered with the current access (thread %thr, ...)? false for
; an empty record and for one of the same thread
define internal i1 @pykern.san.unord(ptr %san, ptr %rec, i32 %thr, i32 %ep, i16 %wep, i16 %gep) {
entry:
  %rthr = load i32, ptr %rec
  %none = icmp eq i32 %rthr, 0
  %self = icmp eq i32 %rthr, %thr
  %skip = or i1 %none, %self
  br i1 %skip, label %no, label %test
test:
  %ntp = getelementptr i8, ptr %san, i64 $S_NTHREADS
  %nt = load i32, ptr %ntp
  %r0 = sub i32 %rthr, 1
  %c0 = sub i32 %thr, 1
  %rb = udiv i32 %r0, %nt
  %cb = udiv i32 %c0, %nt
  %sameblk = icmp eq i32 %rb, %cb
  br i1 %sameblk, label %inblock, label %cross
cross:
  %rgp = getelementptr i8, ptr %rec, i64 10
  %rgep = load i16, ptr %rgp
  %gsame = icmp eq i16 %rgep, %gep
  ret i1 %gsame
inblock:
  %rep = getelementptr i8, ptr %rec, i64 4
  %repv = load i32, ptr %rep
  %esame = icmp eq i32 %repv, %ep
  br i1 %esame, label %warps, label %no
warps:
  %wsp = getelementptr i8, ptr %san, i64 $S_WS
  %ws = load i32, ptr %wsp
  %rl = urem i32 %r0, %nt
  %cl = urem i32 %c0, %nt
  %rw = udiv i32 %rl, %ws
  %cw = udiv i32 %cl, %ws
  %wdiff = icmp ne i32 %rw, %cw
  br i1 %wdiff, label %yes, label %samewarp
samewarp:
  %rwp = getelementptr i8, ptr %rec, i64 8
  %rwep = load i16, ptr %rwp
  %wsame = icmp eq i16 %rwep, %wep
  ret i1 %wsame
yes:
  ret i1 true
no:
  ret i1 false
}

define internal void @pykern.san.put(ptr %rec, i32 %thr, i32 %ep, i16 %wep, i16 %gep, i16 %site) alwaysinline {
  store i32 %thr, ptr %rec
  %p4 = getelementptr i8, ptr %rec, i64 4
  store i32 %ep, ptr %p4
  %p8 = getelementptr i8, ptr %rec, i64 8
  store i16 %wep, ptr %p8
  %p10 = getelementptr i8, ptr %rec, i64 10
  store i16 %gep, ptr %p10
  %p12 = getelementptr i8, ptr %rec, i64 12
  store i16 %site, ptr %p12
  ret void
}

; hand a hazard to the runtime: counted in the context's table when the same (kind, sites) was
; seen before, else described in the context's report area and the runtime called
define internal void @pykern.san.report(ptr %san, ptr %t, i32 %rkind, i64 %a, i32 %thr, i32 %ep, i16 %wep,
                                        i16 %gep, i16 %site, i32 %kind, ptr %prev, i32 %prevkind) {
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
                         ("$S_RPREVKIND", "i32", "%prevkind"), ("$S_RKEY", "i64", "%k")))) + r"""
  %cur = getelementptr i8, ptr %san, i64 $S_RCUR
  call void @pykern.san.put(ptr %cur, i32 %thr, i32 %ep, i16 %wep, i16 %gep, i16 %site)
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
  %tbp = getelementptr i8, ptr %t, i64 $T_SAN_BAR
  %tb = load i32, ptr %tbp
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

; one byte of an access: checks, then the shadow update. Returns whether it reported.
define internal i1 @pykern.san.byte(ptr %san, ptr %t, ptr %e, i64 %a, i32 %thr, i32 %ep, i16 %wep, i16 %gep,
                                    i16 %site, i32 %kind, i32 %flags, i1 %quiet) {
entry:
  %wfp = getelementptr i8, ptr %e, i64 14
  %wf = load i16, ptr %wfp
  %init16 = and i16 %wf, 1
  %isinit = icmp ne i16 %init16, 0
  %iswrite = icmp eq i32 %kind, 1
  %isatomic = icmp eq i32 %kind, 2
  %checkinit0 = and i32 %flags, $F_INIT
  %checkinit = icmp ne i32 %checkinit0, 0
  %reads = xor i1 %iswrite, true
  %isread = icmp eq i32 %kind, 0
  %u0 = xor i1 %isinit, true
  %u1 = and i1 %u0, %reads
  %u2 = and i1 %u1, %checkinit
  %notquiet = xor i1 %quiet, true
  %u3 = and i1 %u2, %notquiet
  br i1 %u3, label %uninit, label %race0
uninit:
  call void @pykern.san.report(ptr %san, ptr %t, i32 $R_UNINIT, i64 %a, i32 %thr, i32 %ep, i16 %wep, i16 %gep,
                               i16 %site, i32 %kind, ptr null, i32 0)
  br label %race0
race0:
  %q1 = phi i1 [ %quiet, %entry ], [ true, %uninit ]
  %checkrace0 = and i32 %flags, $F_RACE
  %checkrace = icmp ne i32 %checkrace0, 0
  br i1 %checkrace, label %wcheck, label %setinit
wcheck:
  %wunord = call i1 @pykern.san.unord(ptr %san, ptr %e, i32 %thr, i32 %ep, i16 %wep, i16 %gep)
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
  call void @pykern.san.report(ptr %san, ptr %t, i32 $R_RACE, i64 %a, i32 %thr, i32 %ep, i16 %wep, i16 %gep,
                               i16 %site, i32 %kind, ptr %e, i32 %wk)
  br label %wdone
wdone:
  %q2 = phi i1 [ %q1, %wcheck ], [ true, %wreport ]
  %r1 = getelementptr i8, ptr %e, i64 16
  %r2 = getelementptr i8, ptr %e, i64 32
  %r1thr = load i32, ptr %r1
  %r2thr = load i32, ptr %r2
  br i1 %isread, label %readupd, label %rchecks

; ---- a write or an atomic: against the reads since the last write
rchecks:
  %r1u = call i1 @pykern.san.unord(ptr %san, ptr %r1, i32 %thr, i32 %ep, i16 %wep, i16 %gep)
  %r2u = call i1 @pykern.san.unord(ptr %san, ptr %r2, i32 %thr, i32 %ep, i16 %wep, i16 %gep)
  %ru = or i1 %r1u, %r2u
  %nq2 = xor i1 %q2, true
  %rrep = and i1 %ru, %nq2
  br i1 %rrep, label %rreport, label %wupd
rreport:
  %which = select i1 %r1u, ptr %r1, ptr %r2
  call void @pykern.san.report(ptr %san, ptr %t, i32 $R_RACE, i64 %a, i32 %thr, i32 %ep, i16 %wep, i16 %gep,
                               i16 %site, i32 %kind, ptr %which, i32 0)
  br label %wupd
wupd:
  %q3 = phi i1 [ %q2, %rchecks ], [ true, %rreport ]
  call void @pykern.san.put(ptr %e, i32 %thr, i32 %ep, i16 %wep, i16 %gep, i16 %site)
  %nf = select i1 %isatomic, i16 3, i16 1
  store i16 %nf, ptr %wfp
  store i32 0, ptr %r1
  store i32 0, ptr %r2
  ret i1 %q3

; ---- a read: remember it (two readers of different threads at most)
readupd:
  %r1none = icmp eq i32 %r1thr, 0
  %r1self = icmp eq i32 %r1thr, %thr
  %replace1 = or i1 %r1none, %r1self
  br i1 %replace1, label %put1, label %r1ord
put1:
  call void @pykern.san.put(ptr %r1, i32 %thr, i32 %ep, i16 %wep, i16 %gep, i16 %site)
  ret i1 %q2
r1ord:
  %r1un = call i1 @pykern.san.unord(ptr %san, ptr %r1, i32 %thr, i32 %ep, i16 %wep, i16 %gep)
  %r2un = call i1 @pykern.san.unord(ptr %san, ptr %r2, i32 %thr, i32 %ep, i16 %wep, i16 %gep)
  br i1 %r1un, label %second, label %newfirst
newfirst:
  ; the first read happened before this one: this one replaces it; the second stays only while it
  ; is still unordered with this one
  call void @pykern.san.put(ptr %r1, i32 %thr, i32 %ep, i16 %wep, i16 %gep, i16 %site)
  br i1 %r2un, label %keep2, label %drop2
drop2:
  store i32 0, ptr %r2
  ret i1 %q2
keep2:
  ret i1 %q2
second:
  br i1 %r2un, label %keep2, label %put2
put2:
  call void @pykern.san.put(ptr %r2, i32 %thr, i32 %ep, i16 %wep, i16 %gep, i16 %site)
  ret i1 %q2
setinit:
  br i1 %isread, label %done, label %markinit
markinit:
  %wf1 = or i16 %wf, 1
  store i16 %wf1, ptr %wfp
  ret i1 %q1
done:
  ret i1 %q1
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

; every access: first the watchpoints, then (when race or init is checked) the shadow
define void @pykern.san.access(ptr %t, ptr %addr, i64 %n, i32 %sk) {
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
  call void @pykern.san.access.shadow(ptr %t, ptr %addr, i64 %n, i32 %sk)
  br label %done
done:
  ret void
}

; the runtime's callback (thread id + 1, address, bytes, site << 2 | kind) when the access
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
  %thrp = getelementptr i8, ptr %t, i64 $T_SAN_THR
  %thr = load i32, ptr %thrp
  %cbp = getelementptr i8, ptr %san, i64 $S_WCALL
  %cb = load ptr, ptr %cbp
  call void %cb(ptr %san, i32 %thr, i64 %a, i64 %n, i32 %sk)
  call void @pykern.san.unlock(ptr %san)
  br label %exit
exit:
  ret void
}

define internal void @pykern.san.access.shadow(ptr %t, ptr %addr, i64 %n, i32 %sk) {
entry:
  %san = call ptr @pykern.san.ctx(ptr %t)
  %fp = getelementptr i8, ptr %san, i64 $S_FLAGS
  %flags = load i32, ptr %fp
  call void @pykern.san.lock(ptr %san)
  %thrp = getelementptr i8, ptr %t, i64 $T_SAN_THR
  %thr = load i32, ptr %thrp
  %epp = getelementptr i8, ptr %t, i64 $T_SAN_EP
  %ep = load i32, ptr %epp
  %wepp = getelementptr i8, ptr %t, i64 $T_SAN_WEP
  %wep = load i16, ptr %wepp
  %gepp = getelementptr i8, ptr %t, i64 $T_SAN_GEP
  %gep = load i16, ptr %gepp
  %kind = and i32 %sk, 3
  %s32 = lshr i32 %sk, 2
  %site = trunc i32 %s32 to i16
  %a0 = ptrtoint ptr %addr to i64
  ; an access within one page (all but misaligned ones): its bytes' entries follow each other
  %po = and i64 %a0, $PAGE_MASK
  %pend = add i64 %po, %n
  %onepage = icmp ule i64 %pend, $PAGE
  br i1 %onepage, label %first, label %loop
first:
  %e0 = call ptr @pykern.san.entry(ptr %san, i64 %a0)
  %e0null = icmp eq ptr %e0, null
  br i1 %e0null, label %exit, label %floop
floop:
  %fi = phi i64 [ 0, %first ], [ %fi1, %floop ]
  %fq = phi i1 [ false, %first ], [ %fq2, %floop ]
  %fa = add i64 %a0, %fi
  %feo = mul i64 %fi, $ENTRY
  %fe = getelementptr i8, ptr %e0, i64 %feo
""" + _byte_call("fq2", "fe", "fa", "fq") + r"""  %fi1 = add i64 %fi, 1
  %fmore = icmp ult i64 %fi1, %n
  br i1 %fmore, label %floop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %cont ]
  %q = phi i1 [ false, %entry ], [ %q2, %cont ]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %exit
body:
  %a = add i64 %a0, %i
  %e = call ptr @pykern.san.entry(ptr %san, i64 %a)
  %enull = icmp eq ptr %e, null
  br i1 %enull, label %skip, label %check
check:
""" + _byte_call("qc", "e", "a", "q") + r"""  br label %cont
skip:
  br label %cont
cont:
  %q2 = phi i1 [ %qc, %check ], [ %q, %skip ]
  %i1 = add i64 %i, 1
  br label %loop
exit:
  call void @pykern.san.unlock(ptr %san)
  ret void
}

; nothing written, nothing accessed: a new local array, or a new block's shared memory
define internal void @pykern.san.forget(ptr %san, i64 %a0, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %cont ]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %exit
body:
  %a = add i64 %a0, %i
  %e = call ptr @pykern.san.entry(ptr %san, i64 %a)
  %enull = icmp eq ptr %e, null
  br i1 %enull, label %cont, label %clear
clear:
  call void @llvm.memset.p0.i64(ptr %e, i8 0, i64 $ENTRY, i1 false)
  br label %cont
cont:
  %i1 = add i64 %i, 1
  br label %loop
exit:
  ret void
}

define void @pykern.san.fresh(ptr %t, ptr %addr, i64 %n) {
  %san = call ptr @pykern.san.ctx(ptr %t)
  call void @pykern.san.lock(ptr %san)
  %a0 = ptrtoint ptr %addr to i64
  call void @pykern.san.forget(ptr %san, i64 %a0, i64 %n)
  call void @pykern.san.unlock(ptr %san)
  ret void
}

define void @pykern.san.start(ptr %t, ptr %shared) {
entry:
  %san = call ptr @pykern.san.ctx(ptr %t)
  %bp = getelementptr i8, ptr %t, i64 $T_BLK
  %blk = load ptr, ptr %bp
""" + "".join(f"  %p{v} = getelementptr i8, ptr %blk, i64 {off}\n  %{v} = load i32, ptr %p{v}\n" for v, off in (
    ("bx", "$B_BID_X"), ("by", "$B_BID_Y"), ("bz", "$B_BID_Z"), ("gx", "$B_GDIM_X"), ("gy", "$B_GDIM_Y"),
    ("nt", "$B_NTHREADS"))) + r"""
  %linp = getelementptr i8, ptr %t, i64 $T_LIN
  %lin = load i32, ptr %linp
  %zy = mul i32 %bz, %gy
  %zy1 = add i32 %zy, %by
  %zyx = mul i32 %zy1, %gx
  %blin = add i32 %zyx, %bx
  %g0 = mul i32 %blin, %nt
  %g1 = add i32 %g0, %lin
  %thr = add i32 %g1, 1
  %thrp = getelementptr i8, ptr %t, i64 $T_SAN_THR
  store i32 %thr, ptr %thrp
  %epp = getelementptr i8, ptr %t, i64 $T_SAN_EP
  store i32 0, ptr %epp
  %wepp = getelementptr i8, ptr %t, i64 $T_SAN_WEP
  store i32 0, ptr %wepp
  %barp = getelementptr i8, ptr %t, i64 $T_SAN_BAR
  store i32 -1, ptr %barp
  %first = icmp eq i32 %lin, 0
  br i1 %first, label %forget, label %done
forget:
  %cp = getelementptr i8, ptr %blk, i64 $B_CTX
  %ctx = load ptr, ptr %cp
  %dynp = getelementptr i8, ptr %ctx, i64 $C_DYN
  %dyn = load i64, ptr %dynp
  %stp = getelementptr i8, ptr %san, i64 $S_STATIC
  %st = load i64, ptr %stp
  %size = add i64 %dyn, %st
  %a0 = ptrtoint ptr %shared to i64
  call void @pykern.san.lock(ptr %san)
  call void @pykern.san.forget(ptr %san, i64 %a0, i64 %size)
  call void @pykern.san.unlock(ptr %san)
  br label %done
done:
  ret void
}

define void @pykern.san.sync(ptr %t, i32 %kind, i32 %site) {
entry:
  %barp = getelementptr i8, ptr %t, i64 $T_SAN_BAR
  store i32 %site, ptr %barp
  %warp = icmp eq i32 %kind, 2
  br i1 %warp, label %w, label %b
w:
  %wepp = getelementptr i8, ptr %t, i64 $T_SAN_WEP
  %wep = load i16, ptr %wepp
  %wep1 = add i16 %wep, 1
  store i16 %wep1, ptr %wepp
  ret void
b:
  %epp = getelementptr i8, ptr %t, i64 $T_SAN_EP
  %ep = load i32, ptr %epp
  %ep1 = add i32 %ep, 1
  store i32 %ep1, ptr %epp
  %grid = icmp eq i32 %kind, 1
  br i1 %grid, label %g, label %done
g:
  %gepp = getelementptr i8, ptr %t, i64 $T_SAN_GEP
  %gep = load i16, ptr %gepp
  %gep1 = add i16 %gep, 1
  store i16 %gep1, ptr %gepp
  br label %done
done:
  ret void
}
""")


def checker_ir(layout: dict) -> str:
    """The checker's IR text; ``layout``: the cpu target's ``T_*``/``B_*``/``C_*`` offsets by name."""
    names = dict(layout)
    names.update({k: v for k, v in globals().items() if k[:2] in ("S_", "F_", "R_") and isinstance(v, int)})
    names.update(PAGE_BITS=PAGE_BITS, PAGE_MASK=(1 << PAGE_BITS) - 1, PAGE=1 << PAGE_BITS, ENTRY=ENTRY_BYTES)
    return _TEXT.substitute(names)
