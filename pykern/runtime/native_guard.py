"""The launch fast paths' hot steps in native code: numpy argument checks, and the
call of the kernel (cpu) or of hipModuleLaunchKernel (hip), each one call of a
builtin (``METH_FASTCALL``) function instead of Python code or a ctypes call.

* ``make(entries)`` -> ``guard(buf, a0, a1, ...)``: checks numpy arguments and copies
  their pointer, shape and strides into the kernel argument buffer. In Python
  that costs ~0.22 us per array (type, dtype, one struct read of data pointer and
  flags, two tuple unpacks for shape and strides); here ~0.1 us for all of them:
  it reads numpy's ``PyArrayObject`` fields and compares them with a table made
  with the fast path. It refuses (returns False, having written only into the
  buffer it was given) unless every array has exactly numpy's ``ndarray`` type
  (no subclass), the same dtype object (by identity, as the Python guard does:
  another byte order, a dtype with metadata is another object), the same ndim,
  and the same C-/F-contiguous and writeable flags. Its table (a ctypes int64
  array, the function's ``self``)::

      [n, (descr, ndim, flag mask, wanted flags, data offset,
           shape offset 0, stride offset 0, shape offset 1, ...) * n]

* ``make_call(fn, first, last)`` -> ``call(buf, ctx)``: a cpu kernel's entry called
  with the GIL released, as ctypes does (~0.1 us where ctypes converting its four
  arguments costs ~0.45).
* ``make_hip_launch(fn, function, grid, block, shared, stream)`` -> ``launch(extra)``:
  libamdhip64's ``hipModuleLaunchKernel`` likewise (~0.1 us where ctypes converting
  eleven arguments and the checked binding cost ~1); None for hipSuccess, else the code.

They are compiled once per process (llvmlite, MCJIT at -O0; ~2-5 ms), and only
where LLVM is loaded already (a process that compiled a kernel, or a notebook's
preload): a process that only launches cached kernels runs its first
``UPGRADE_AFTER`` fast-path launches without them, then loads LLVM once.
Every field offset they rely on (of ``PyArrayObject`` and of ctypes' data
objects) is probed at build time against what numpy and ctypes report for
objects of several layouts; anything unexpected leaves every ``make*``
returning None and the launches as they were.

Example::

    g = make([(np.dtype(np.float32), 1, 0x403, 0x403, 0, (8,), (16,))])
    buf = ctypes.create_string_buffer(24)
    g(buf, np.zeros(4, np.float32))  # True: pointer, 4 and 4 written at 0, 8, 16
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import NamedTuple

#: PyArrayObject_fields (numpy 1.x and 2.x alike): byte offsets after PyObject_HEAD
_ARRAY_FIELDS = {"data": 16, "nd": 24, "dimensions": 32, "strides": 40, "descr": 56, "flags": 64}
_METH_FASTCALL = 0x0080

_lock = threading.Lock()
_built: list = []  # [None] when unavailable, [_Built] when built


class _Built(NamedTuple):
    guard: "_MethodDef"  # method definitions of the three functions (kept alive here)
    call: "_MethodDef"
    hip: "_MethodDef"
    engine: object  # the MCJIT engine owning their code
    new: object  # PyCFunction_NewEx(method def, self, module)


def _function(md, table):
    """A builtin function of ``md`` whose ``self`` is ``table`` (kept alive by it)."""
    return _get().new(ctypes.addressof(md), table, None)


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


def _cdata_pointer_offset():
    """Offset of ``b_ptr`` (the memory a ctypes object owns) in ctypes' CDataObject."""
    off = object.__basicsize__
    for obj in (ctypes.create_string_buffer(24), (ctypes.c_int64 * 3)()):
        if ctypes.c_void_p.from_address(id(obj) + off).value != ctypes.addressof(obj):
            return None
    return off


def _probe_arrays():
    """True when numpy's arrays here have the field offsets ``_ARRAY_FIELDS`` says."""
    import numpy as np

    ro = np.arange(6.0).reshape(2, 3)
    ro.flags.writeable = False
    probes = [np.zeros(3, np.float32), np.arange(7, dtype=np.int8)[2::2], np.empty((2, 3), np.float32).T, ro,
              np.zeros(()), np.zeros((4, 4, 2), np.int16)[:, 1], np.zeros((3, 0), np.complex128)]
    f = _ARRAY_FIELDS
    i64, i32, ptr = ctypes.c_int64.from_address, ctypes.c_int32.from_address, ctypes.c_void_p.from_address
    for a in probes:
        base = id(a)
        if (ptr(base + 8).value != id(type(a)) or ptr(base + f["data"]).value != a.ctypes.data
                or i32(base + f["nd"]).value != a.ndim or ptr(base + f["descr"]).value != id(a.dtype)
                or i32(base + f["flags"]).value != a.flags.num):
            return False
        dims, strides = ptr(base + f["dimensions"]).value, ptr(base + f["strides"]).value
        for k in range(a.ndim):
            if i64(dims + 8 * k).value != a.shape[k] or i64(strides + 8 * k).value != a.strides[k]:
                return False
    return True


class _Api(NamedTuple):
    """What the IR calls or returns, as addresses in this process."""
    bptr: int  # offset of a ctypes object's memory pointer (its ``self`` table, its buffers)
    ndarray_type: int
    true: int
    false: int
    none: int
    incref: int
    save: int  # PyEval_SaveThread / PyEval_RestoreThread: the GIL released around a call
    restore: int
    from_long: int
    set_none: int  # PyErr_SetNone(TypeError): a call with the wrong number of arguments
    type_error: int


def _type_error(a: _Api) -> str:
    return f"""bad:
  %setf = inttoptr i64 {a.set_none} to ptr
  %te = inttoptr i64 {a.type_error} to ptr
  call void %setf(ptr %te)
  ret ptr null"""


def _method(name: str, check: str, body: str, a: _Api, bad: str = "") -> str:
    """A ``METH_FASTCALL`` function ``name(self, args, nargs)`` with ``self``'s table in %tbl:
    ``body`` if ``check`` (IR setting %nok from %nargs and %tbl) is true, else block ``bad``
    (default: raise TypeError)."""
    return f"""
define ptr @{name}(ptr %self, ptr %args, i64 %nargs) {{
entry:
  %tblp = getelementptr i8, ptr %self, i64 {a.bptr}
  %tbl = load ptr, ptr %tblp
  {check}
  br i1 %nok, label %go, label %bad
{bad or _type_error(a)}
go:
{body}
}}
"""


def _give(label: str, obj: int, a: _Api) -> str:
    """Block ``label``: return a new reference to the object at ``obj``."""
    return f"""{label}:
  %{label}.o = inttoptr i64 {obj} to ptr
  %{label}.inc = inttoptr i64 {a.incref} to ptr
  call void %{label}.inc(ptr %{label}.o)
  ret ptr %{label}.o"""


def _without_gil(call: str, a: _Api) -> str:
    """``call`` with the GIL released around it, as ctypes calls foreign functions."""
    return f"""  %savef = inttoptr i64 {a.save} to ptr
  %ts = call ptr %savef()
  {call}
  %restoref = inttoptr i64 {a.restore} to ptr
  call void %restoref(ptr %ts)"""


def _guard_ir(a: _Api) -> str:
    f = _ARRAY_FIELDS
    # the table says how many arrays, plus the buffer: any other count is refused (False)
    check = "%n = load i64, ptr %tbl\n  %n1 = add i64 %n, 1\n  %nok = icmp eq i64 %nargs, %n1"
    return _method("pykern_array_guard", check, f"""  %bufobj = load ptr, ptr %args
  %bufp = getelementptr i8, ptr %bufobj, i64 {a.bptr}
  %buf = load ptr, ptr %bufp
  br label %loop
loop:
  %i = phi i64 [0, %go], [%i1, %next]
  %pos = phi i64 [1, %go], [%pos1, %next]
  %done = icmp eq i64 %i, %n
  br i1 %done, label %ok, label %body
body:
  %i1 = add i64 %i, 1
  %argp = getelementptr ptr, ptr %args, i64 %i1
  %o = load ptr, ptr %argp
  %tp = getelementptr i8, ptr %o, i64 8
  %t = load i64, ptr %tp
  %tok = icmp eq i64 %t, {a.ndarray_type}
  br i1 %tok, label %descr, label %fail
descr:
  %e = getelementptr i64, ptr %tbl, i64 %pos
  %wd = load i64, ptr %e
  %dp = getelementptr i8, ptr %o, i64 {f["descr"]}
  %d = load i64, ptr %dp
  %e1 = getelementptr i64, ptr %e, i64 1
  %wnd = load i64, ptr %e1
  %ndp = getelementptr i8, ptr %o, i64 {f["nd"]}
  %nd32 = load i32, ptr %ndp
  %nd = sext i32 %nd32 to i64
  %e2 = getelementptr i64, ptr %e, i64 2
  %mask = load i64, ptr %e2
  %e3 = getelementptr i64, ptr %e, i64 3
  %wfl = load i64, ptr %e3
  %flp = getelementptr i8, ptr %o, i64 {f["flags"]}
  %fl32 = load i32, ptr %flp
  %fl = sext i32 %fl32 to i64
  %flm = and i64 %fl, %mask
  %dok = icmp eq i64 %d, %wd
  %ndok = icmp eq i64 %nd, %wnd
  %flok = icmp eq i64 %flm, %wfl
  %ok1 = and i1 %dok, %ndok
  %ok2 = and i1 %ok1, %flok
  br i1 %ok2, label %copy, label %fail
copy:
  %e4 = getelementptr i64, ptr %e, i64 4
  %offd = load i64, ptr %e4
  %datap = getelementptr i8, ptr %o, i64 {f["data"]}
  %data = load i64, ptr %datap
  %dst = getelementptr i8, ptr %buf, i64 %offd
  store i64 %data, ptr %dst, align 1
  %dimsp = getelementptr i8, ptr %o, i64 {f["dimensions"]}
  %dims = load ptr, ptr %dimsp
  %stp = getelementptr i8, ptr %o, i64 {f["strides"]}
  %strides = load ptr, ptr %stp
  %e5 = getelementptr i64, ptr %e, i64 5
  %nd2 = shl i64 %nd, 1
  %span = add i64 %nd2, 5
  br label %kloop
kloop:
  %k = phi i64 [0, %copy], [%k1, %kbody]
  %kdone = icmp eq i64 %k, %nd
  %pos1 = add i64 %pos, %span
  br i1 %kdone, label %next, label %kbody
kbody:
  %k2 = shl i64 %k, 1
  %eso = getelementptr i64, ptr %e5, i64 %k2
  %offs = load i64, ptr %eso
  %eto = getelementptr i64, ptr %eso, i64 1
  %offt = load i64, ptr %eto
  %sp = getelementptr i64, ptr %dims, i64 %k
  %sv = load i64, ptr %sp
  %tvp = getelementptr i64, ptr %strides, i64 %k
  %tv = load i64, ptr %tvp
  %ds = getelementptr i8, ptr %buf, i64 %offs
  store i64 %sv, ptr %ds, align 1
  %dt = getelementptr i8, ptr %buf, i64 %offt
  store i64 %tv, ptr %dt, align 1
  %k1 = add i64 %k, 1
  br label %kloop
next:
  br label %loop
{_give("ok", a.true, a)}
{_give("fail", a.false, a)}""", a, bad=_give("bad", a.false, a))


def _call_ir(a: _Api) -> str:
    return _method("pykern_call", "%nok = icmp eq i64 %nargs, 2", f"""  %fn = load ptr, ptr %tbl
  %e1 = getelementptr i64, ptr %tbl, i64 1
  %first = load i64, ptr %e1
  %e2 = getelementptr i64, ptr %tbl, i64 2
  %last = load i64, ptr %e2
  %o0 = load ptr, ptr %args
  %p0 = getelementptr i8, ptr %o0, i64 {a.bptr}
  %buf = load ptr, ptr %p0
  %a1 = getelementptr ptr, ptr %args, i64 1
  %o1 = load ptr, ptr %a1
  %p1 = getelementptr i8, ptr %o1, i64 {a.bptr}
  %ctx = load ptr, ptr %p1
{_without_gil("call void %fn(ptr %buf, ptr %ctx, i64 %first, i64 %last)", a)}
  br label %done
{_give("done", a.none, a)}""", a)


def _hip_ir(a: _Api) -> str:
    """``hip_launch(extra) -> None or int``: hipModuleLaunchKernel(table...) with ``extra``'s memory."""
    words = "\n".join(f"  %e{k} = getelementptr i64, ptr %tbl, i64 {k}\n  %w{k} = load i64, ptr %e{k}" for k in range(10))
    ints = "\n".join(f"  %u{k} = trunc i64 %w{k} to i32" for k in range(2, 9))
    launch = ("%rc = call i32 %fn(ptr %func, i32 %u2, i32 %u3, i32 %u4, i32 %u5, i32 %u6, i32 %u7, i32 %u8, "
              "ptr %stream, ptr null, ptr %extra)")
    return _method("pykern_hip_launch", "%nok = icmp eq i64 %nargs, 1", f"""{words}
{ints}
  %fn = inttoptr i64 %w0 to ptr
  %func = inttoptr i64 %w1 to ptr
  %stream = inttoptr i64 %w9 to ptr
  %o0 = load ptr, ptr %args
  %p0 = getelementptr i8, ptr %o0, i64 {a.bptr}
  %extra = load ptr, ptr %p0
{_without_gil(launch, a)}
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %done, label %err
{_give("done", a.none, a)}
err:
  %rc64 = sext i32 %rc to i64
  %froml = inttoptr i64 {a.from_long} to ptr
  %obj = call ptr %froml(i64 %rc64)
  ret ptr %obj""", a)


def _build():
    """The compiled functions, or None where a probe fails."""
    try:
        import numpy as np
    except ImportError:
        return None
    bptr = _cdata_pointer_offset()
    if bptr is None or ctypes.sizeof(ctypes.c_void_p) != 8 or not _probe_arrays():
        return None
    from pykern.core.llvm_host import LLVM_LOCK, _host_cpu, _tm_lock, llvm

    api = ctypes.pythonapi
    incref = ctypes.cast(api.Py_IncRef, ctypes.c_void_p).value
    new = api.PyCFunction_NewEx
    new.argtypes, new.restype = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p], ctypes.py_object
    def addr_of(f):
        return ctypes.cast(f, ctypes.c_void_p).value

    a = _Api(bptr, id(np.ndarray), id(True), id(False), id(None), incref, addr_of(api.PyEval_SaveThread),
             addr_of(api.PyEval_RestoreThread), addr_of(api.PyLong_FromLong), addr_of(api.PyErr_SetNone),
             id(TypeError))
    src = _guard_ir(a) + _call_ir(a) + _hip_ir(a)
    with LLVM_LOCK:
        ll = llvm()
        with _tm_lock:
            triple, cpu, feats = _host_cpu()
        # no optimisation: the IR is written as it should run, and codegen at -O3 costs ~10 ms more
        tm = ll.Target.from_triple(triple).create_target_machine(cpu=cpu, features=feats, opt=0, reloc="pic",
                                                                  codemodel="jitdefault")
        eng = ll.create_mcjit_compiler(ll.parse_assembly(""), tm)
        mod = ll.parse_assembly(src)
        mod.verify()
        eng.add_module(mod)
        eng.finalize_object()
        addr = eng.get_function_address("pykern_array_guard")
        call = eng.get_function_address("pykern_call")
        hip = eng.get_function_address("pykern_hip_launch")
    if not addr or not call or not hip:
        return None
    return _Built(_MethodDef(b"pykern_array_guard", addr, _METH_FASTCALL, None),
                  _MethodDef(b"pykern_call", call, _METH_FASTCALL, None),
                  _MethodDef(b"pykern_hip_launch", hip, _METH_FASTCALL, None), eng, new)


#: cpu fast-path launches (with Python guards and a ctypes call, in a process without LLVM)
#: before ``upgrade`` loads LLVM to build the native code: ~50 ms spent to save ~0.35 us per
#: launch, and ~0.2 us more per numpy argument
UPGRADE_AFTER = 50_000
#: the countdown the Python guards' fast paths decrement (see ``kernargs.compile_guarded``)
countdown = [UPGRADE_AFTER]


def _get(load: bool = False):
    if not _built:
        if not load and "llvmlite.binding" not in sys.modules:
            # a process that only launches kernels from the disk cache does not load LLVM (~50 ms)
            # for this until it has made many launches (``pending``, ``upgrade``)
            return None
        with _lock:
            if not _built:
                try:
                    got = _build()
                except Exception:  # no LLVM, an unexpected layout...: the Python guards stay
                    got = None
                _built.append(got)
    return _built[0]


def pending() -> bool:
    """True while native guards are not built only because LLVM is not loaded
    (Python guards made now count down to ``upgrade``)."""
    return not _built


def generation() -> int:
    """Changes once, when building was tried: fast paths made before are made again."""
    return len(_built)


def upgrade() -> bool:
    """Build the native guards now, loading LLVM (a fast path's countdown ran out);
    False, for the fast path that called it to refuse its arguments (the full
    launch then makes a fast path with native guards)."""
    if _get(load=True) is None:
        countdown[0] = 1 << 62  # never again
    return False


def make(entries):
    """``guard(buf, *arrays) -> bool`` for ``entries`` (one per array argument,
    in call order): ``(dtype, ndim, flag mask, wanted flags, data offset,
    shape offsets, stride offsets)``, offsets in bytes in ``buf``; None when
    native guards are unavailable here. The guard keeps the dtypes alive (their
    ids are what it compares)."""
    got = _get()
    if got is None:
        return None
    words = [len(entries)]
    for dtype, nd, mask, want, off_data, off_shape, off_stride in entries:
        if len(off_shape) != nd or len(off_stride) != nd:
            raise ValueError("one shape and one stride offset per dimension")
        words += [id(dtype), nd, mask, want, off_data]
        for s, t in zip(off_shape, off_stride):
            words += [s, t]
    table = (ctypes.c_int64 * len(words))(*words)
    table._pk_dtypes = [e[0] for e in entries]  # ctypes instances take attributes: the dtypes live as long as it
    return _function(got.guard, table)


def make_call(fn, first: int, last: int):
    """``call(buf, ctx)``: ``fn(buf, ctx, first, last)`` for a compiled cpu kernel's entry
    ``fn`` (a ctypes function, kept alive by the call) and ctypes objects ``buf`` and
    ``ctx``, with the GIL released meanwhile, as a ctypes call does: ~0.1 us where the
    ctypes call of ``fn`` converting its four arguments costs ~0.45. None when
    native guards are unavailable here (see ``make``)."""
    got = _get()
    if got is None:
        return None
    table = (ctypes.c_int64 * 3)(ctypes.cast(fn, ctypes.c_void_p).value, first, last)
    table._pk_fn = fn
    return _function(got.call, table)


def repoint_call(call, fn) -> None:
    """Make ``call`` (from ``make_call``) run ``fn`` from its next call on: a kernel's O3
    code replacing its first tier. The caller keeps the old code loaded (a call may be
    running it on another thread; the entry is read once per call)."""
    table = call.__self__
    table[0] = ctypes.cast(fn, ctypes.c_void_p).value
    table._pk_fn = fn


def make_hip_launch(fn, function: int, grid, block, shared: int, stream: int):
    """``launch(extra) -> None | int``: ``fn`` (libamdhip64's ``hipModuleLaunchKernel``,
    a ctypes function, kept alive by the result) called with this kernel handle and
    configuration, no kernel parameters, and ``extra`` (a ctypes array: the
    ``HIP_LAUNCH_PARAM_*`` list) with the GIL released; None for hipSuccess, else the
    error code. ~0.1 us where ctypes converting eleven arguments costs ~0.5. None when
    native code is unavailable here (see ``make``)."""
    got = _get()
    if got is None:
        return None
    table = (ctypes.c_int64 * 10)(ctypes.cast(fn, ctypes.c_void_p).value, function, *grid, *block, shared, stream)
    table._pk_fn = fn
    return _function(got.hip, table)


def available() -> bool:
    """Whether ``make`` gives native guards in this process (builds them once,
    if LLVM is loaded already)."""
    return _get() is not None
