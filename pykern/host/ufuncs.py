"""numba.cuda's ``vectorize`` and ``guvectorize``: ufunc-like objects whose loop
is a generated pykern kernel (one thread per output element / loop index).

Both take eager signature lists or, for ``vectorize``, none at all (then each
call's input dtypes pick the types and the frontend infers the result type).
Inputs broadcast as in numpy; host arrays come back as host arrays (copied to
and from the GPU on "hip"), device arrays stay on the device; ``out=`` and
``stream=`` work as in numba. A ``vectorize`` ufunc is also a device function:
kernels may call it on scalars.

Example::

    import math, numpy as np, pykern as cuda

    @cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
    def hypot(a, b):
        return math.sqrt(a * a + b * b)

    x = np.arange(10, dtype=np.float32)
    assert np.allclose(hypot(x, 2), np.hypot(x, 2))

    @cuda.guvectorize(["void(float64[:, :], float64[:])"], "(m,n)->(m)")
    def row_max(a, res):
        for i in range(a.shape[0]):
            res[i] = a[i, 0]
            for j in range(1, a.shape[1]):
                res[i] = max(res[i], a[i, j])

    assert np.array_equal(row_max(np.eye(3)), np.ones(3))
"""

from __future__ import annotations

import re

import numpy as np

from pykern.core.errors import LaunchError
from pykern.frontend import types as T
from pykern.dispatch.generated import as_def, define, is_device_operand
from pykern.host import ufunc_casting, ufunc_plans
from pykern.runtime import current_target

_MAX_NDIM = 4  # kernel arrays have 1 to 4 dimensions


def _weak_scalar_dtype(arrays: list, value) -> np.dtype:
    """A Python scalar argument of a lazily typed ufunc, as a literal in a kernel: an int
    next to integer arrays is numba's int64 literal (uint64 above int64's range); a float,
    or an int next to a float array, is weak (NEP 50: it takes the arrays' type)."""
    if type(value) is int and all(d.kind in "iub" for d in arrays):
        from pykern.frontend.infer import literal_type

        return _np_dtype(literal_type(value))
    return np.result_type(*arrays, value)


def _np_dtype(t) -> np.dtype:
    from pykern.frontend import types as T

    if isinstance(t, T.Array):
        t = t.dtype
    return np.dtype(t.np_dtype)


def _scalar_dtype(v) -> np.dtype:
    if isinstance(v, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(v, int):
        return np.dtype(np.int64)
    if isinstance(v, float):
        return np.dtype(np.float64)
    return np.asarray(v).dtype


def _broadcast_device(d, shape):
    """A zero-copy view of DeviceArray ``d`` broadcast to ``shape`` (stride 0
    on new and length-1 axes, as ``np.broadcast_to``)."""
    from pykern.runtime.memory.arrays import DeviceArray

    pad = len(shape) - d.ndim
    if pad < 0:
        raise ValueError(f"cannot broadcast shape {d.shape} to {shape}")
    strides = [0] * pad
    for n, s, want in zip(d.shape, d.strides, shape[pad:]):
        if n == want:
            strides.append(s)
        elif n == 1:
            strides.append(0)
        else:
            raise ValueError(f"operands could not be broadcast together: {d.shape} -> {shape}")
    return DeviceArray(shape, tuple(strides), d.dtype, d.storage, d.ptr, d.stream)


def _no_duplicate_out(out):
    if out is not None:
        raise ValueError("cannot specify argument 'out' as both positional and keyword")


def _device_or_host(out):
    """An output operand as a DeviceArray when it is device memory (a foreign
    ``__cuda_array_interface__`` object is wrapped, zero-copy, and that view is what numba
    returns), else as given."""
    if out is None or not is_device_operand(out):
        return out
    from pykern.runtime.memory.arrays import as_device_array

    return as_device_array(out)


class _Operands:
    """Inputs of one call, made into arrays of the loop's shape on the target."""

    def __init__(self, args, target, stream):
        from pykern.runtime.memory.arrays import as_device_array

        self.target = target
        self.stream = stream
        self.any_device = False
        self.values = []
        for a in args:
            if is_device_operand(a):
                self.any_device = True
                self.values.append(as_device_array(a))
            elif isinstance(a, np.ndarray):
                self.values.append(a)
            elif np.ndim(a) == 0 and not isinstance(a, (list, tuple)):
                self.values.append(a)
            else:
                self.values.append(np.asarray(a))

    def dtype(self, k):
        v = self.values[k]
        return v.dtype if hasattr(v, "dtype") and getattr(v, "ndim", 0) else _scalar_dtype(v)

    def shape(self, k):
        return tuple(getattr(self.values[k], "shape", ()))

    def array(self, k, shape, dtype=None, outs=(), elementwise=True):
        """Operand ``k`` as an array of ``shape`` (broadcast, zero-copy where it can)
        in ``dtype`` when given, on the target's memory. Where its memory overlaps one of
        ``outs`` it is read from a copy, as numpy's ufuncs do (``vadd(a[:-1], a[:-1],
        out=a[1:])``), unless ``elementwise`` and it is that output element for element."""
        arr = self._array(self.values[k], shape, dtype)
        if any(_overlaps(arr, o, elementwise) for o in outs):
            arr = self._array(_copy_of(self.values[k], self.stream), shape, dtype)
        return arr

    def _array(self, v, shape, dtype):
        from pykern.runtime.memory.arrays import DeviceArray, to_device

        if isinstance(v, DeviceArray):
            if dtype is not None and v.dtype != dtype:
                v = to_device(v.copy_to_host().astype(dtype), stream=self.stream)
            return _broadcast_device(v, shape)
        h = np.asarray(v, dtype=dtype)
        if self.target == "hip":
            base = to_device(np.ascontiguousarray(h), stream=self.stream)
            return _broadcast_device(base, shape)
        return np.broadcast_to(h, shape)


def _memory(a):
    """(address space, first element's address, item size) of an array, or None for a
    number or an empty array; host arrays and cpu-target device arrays share the host's."""
    from pykern.runtime.memory.arrays import DeviceArray

    if isinstance(a, DeviceArray):
        where, ptr, itemsize = ("host" if a.target == "cpu" else a.target), a.ptr, a.dtype.itemsize
    elif isinstance(a, np.ndarray):
        where, ptr, itemsize = "host", a.__array_interface__["data"][0], a.itemsize
    else:
        return None
    return None if a.size == 0 else (where, ptr, itemsize)


def _overlaps(x, out, elementwise: bool) -> bool:
    """Whether input view ``x`` must be copied before a launch writes ``out``: their byte
    ranges meet (numpy's cheap bounds test, which copies when unsure too), and ``x`` is not
    ``out`` itself element for element (same first address, item size, shape and strides:
    each element is read by the thread that writes it) or that does not make it safe."""
    from pykern.core.strides import span as _span

    mx, mo = _memory(x), _memory(out)
    if mx is None or mo is None or mx[0] != mo[0]:
        return False
    if elementwise and mx[1:] == mo[1:] and tuple(x.shape) == tuple(out.shape) and \
            tuple(x.strides) == tuple(out.strides):
        return False
    lx, hx = _span(x.shape, x.strides, mx[2])
    lo, ho = _span(out.shape, out.strides, mo[2])
    return mx[1] + lx < mo[1] + ho and mo[1] + lo < mx[1] + hx


def _check_out_cast(name: str, result: np.dtype, out) -> None:
    """numpy's ``casting='same_kind'`` for an ``out=`` array: a float result into an integer
    array (or complex into float...) is its ``UFuncTypeError``, a ``TypeError``."""
    if not np.can_cast(result, out.dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc {name!r} output from {np.dtype(result)!r} to {np.dtype(out.dtype)!r} "
                        "with casting rule 'same_kind'")


def _copy_of(v, stream):
    """A copy of operand ``v`` in new memory of its kind (on ``stream`` for device arrays)."""
    from pykern.runtime.memory.arrays import DeviceArray, device_array

    if isinstance(v, DeviceArray):
        c = device_array(v.shape, v.dtype, stream=stream, target=v.target)
        c.copy_to_device(v, stream=stream)
        return c
    return np.array(v)


def _resolve(sigs, dtypes, values, fname):
    """The declared signature (ret, argtypes) the inputs run: numpy's ufunc casting
    (``ufunc_casting``: exact, then 'safe', then 'same_kind'; Python scalars weak by NEP 50)."""
    weak = [ufunc_casting.is_weak_candidate(v) for v in values]
    loops = [[_np_dtype(t) for t in argtypes] for _, argtypes in sigs]
    i = ufunc_casting.choose(loops, dtypes, weak)
    if i is None:
        have = ", ".join(str(d) for d in dtypes)
        raise LaunchError(f"{fname}: no signature matches the input types ({have}) under numpy's 'same_kind' "
                          f"casting; signatures: {[str(a) for _, a in sigs]}")
    ufunc_casting.check_python_ints(values, loops[i])
    return sigs[i]


def _plan_operand(v, shape, dtype):
    """How a call plan (``ufunc_plans``) makes an operand like ``v`` into what
    ``_Operands.array(k, shape, dtype)`` gives the kernel, or None where it makes no plan (a
    dtype conversion of a device array)."""
    from pykern.runtime.memory.arrays import DeviceArray

    if isinstance(v, DeviceArray):
        if dtype is not None and v.dtype != dtype:
            return None
        if v.shape == shape:
            return ufunc_plans.identity
        lead = len(shape) - v.ndim
        if lead > 0 and shape[lead:] == v.shape and shape[:lead] == (1,) * lead:  # _broadcast_device's view, made directly
            return lambda a: DeviceArray(shape, (0,) * lead + a.strides, a.dtype, a.storage, a.ptr, a.stream)
        return lambda a: _broadcast_device(a, shape)
    if isinstance(v, np.ndarray):
        if dtype is not None and v.dtype != dtype:
            return lambda a: np.broadcast_to(np.asarray(a, dtype=dtype), shape)
        if v.shape == shape:
            return ufunc_plans.readonly_view
        lead = len(shape) - v.ndim
        if lead > 0 and shape[lead:] == v.shape and shape[:lead] == (1,) * lead:
            return ufunc_plans.leading_ones(lead)
        return lambda a: np.broadcast_to(a, shape)
    return ufunc_plans.spread(shape, dtype)


class CUDAUFunc:
    """What ``@vectorize`` returns: call it like a numpy ufunc, or call it from
    kernels on scalars (it is a device function too)."""

    def __init__(self, func, signatures=None, **options):
        from pykern.dispatch.dispatcher import Dispatcher
        from pykern.frontend import parse_signature

        func = as_def(func)
        self.py_func = func
        self.__name__ = getattr(func, "__name__", "ufunc")
        self.__doc__ = func.__doc__
        self.__pykern_device__ = True  # kernels call it as a device function
        self.options = dict(options)
        self._device = Dispatcher(func, None, device=True, **options)
        self._sigs = [parse_signature(s) for s in (signatures or [])]
        self._kernels = {}  # (ndim, nin, cast types) -> kernel Dispatcher
        self._lazy_types = {}  # input dtypes -> (ret type, argtypes)
        self._plans = ufunc_plans.PlanCache()  # call key -> what a call with that key does
        self.nin = func.__code__.co_argcount
        self.nout = 1

    @property
    def types(self):
        """numpy-style type strings of the eager signatures (``'ff->f'``)."""
        return ["".join(_np_dtype(a).char for a in args) + "->" + _np_dtype(r).char for r, args in self._sigs]

    def _types_for(self, dtypes, values):
        if self._sigs:
            ret, argtypes = _resolve(self._sigs, dtypes, values, self.__name__)
            if not isinstance(ret, T.Void):
                return ret, argtypes
            dtypes = [_np_dtype(t) for t in argtypes]  # a signature of argument types only: typed by the body
        key = tuple(dtypes)
        hit = self._lazy_types.get(key)
        if hit is None:
            from pykern.frontend import compile_ir
            from pykern.frontend.typeof import typeof

            argtypes = [typeof(np.zeros((), d)[()]) for d in dtypes]
            ret = compile_ir(self.py_func, argtypes, is_kernel=False).kernel.return_type
            hit = self._lazy_types[key] = (ret, argtypes)
        return hit

    def _kernel(self, ndim, argtypes):
        key = (ndim, tuple(argtypes))
        k = self._kernels.get(key)
        if k is None:
            from pykern.dispatch.dispatcher import Dispatcher
            from pykern.lang import stubs

            nin = len(argtypes)
            ins = ", ".join(f"a{j}" for j in range(nin))
            idx = ", ".join(f"i{d}" for d in range(ndim))
            lines = [f"def ufunc_kernel({ins}, out):", "    i = cuda.grid(1)", "    if i < out.size:", "        r = i"]
            for d in reversed(range(ndim)):
                lines.append(f"        i{d} = r % out.shape[{d}]")
                lines.append(f"        r = r // out.shape[{d}]")
            call = ", ".join(f"cast{j}(a{j}[{idx}])" for j in range(nin))
            lines.append(f"        out[{idx}] = fn({call})")
            ns = {"cuda": stubs, "fn": self._device, "__name__": getattr(self.py_func, "__module__", None) or __name__}
            for j, t in enumerate(argtypes):
                # a datetime converts with its unit: the pykern type (np.datetime64 has none)
                ns[f"cast{j}"] = t if T.is_datetime(t) else _np_dtype(t).type
            k = self._kernels[key] = Dispatcher(define("ufunc_kernel", "\n".join(lines) + "\n", ns), None,
                                                **{o: v for o, v in self.options.items() if o != "forceinline"})
        return k

    def __call__(self, *args, out=None, stream=0):
        # a call like an earlier one replays that one's decisions (``ufunc_plans``)
        key = ufunc_plans.call_key(args, out) if (stream is None or stream == 0) and len(args) == self.nin else None
        r = self._plans.replay(key, args, out)
        if r is ufunc_plans.MISS:
            r = self._call(*args, out=out, stream=stream)
            self._plans.learn(key, lambda: self._plan(args, out))
        return r

    def _input_types(self, ops):
        """The input dtypes as ``_types_for`` takes them (with ``ops.values``: Python scalars
        are weak, ``ufunc_casting``); a lazily typed ufunc gives a Python scalar the arrays' type."""
        dtypes = [ops.dtype(k) for k in range(self.nin)]
        if not self._sigs:  # lazy: the type of a Python scalar argument depends on the arrays'
            weak = [ufunc_casting.is_weak_candidate(v) for v in ops.values]
            arrays = [d for d, w in zip(dtypes, weak) if not w]
            if arrays:
                dtypes = [_weak_scalar_dtype(arrays, ops.values[k]) if w else d
                          for k, (d, w) in enumerate(zip(dtypes, weak))]
        return dtypes

    def _plan(self, args, out):
        """The call plan (``ufunc_plans``) of a call like this one (it succeeded), or None where
        the plans leave it to ``_call``: another target than cpu, more than ``_MAX_NDIM``
        dimensions, an ``out`` of another shape than the loop's, an empty loop."""
        target = current_target()
        if target != "cpu":
            return None
        ops = _Operands(args, target, 0)
        ret, argtypes = self._types_for(self._input_types(ops), ops.values)
        rdt = _np_dtype(ret)
        shape = np.broadcast_shapes(*(ops.shape(k) for k in range(self.nin)))
        if out is not None:
            if tuple(out.shape) != np.broadcast_shapes(shape, tuple(out.shape)):
                return None
            shape = tuple(out.shape)
        kshape = shape if shape else (1,)
        n = int(np.prod(kshape))
        if len(kshape) > _MAX_NDIM or not n or (out is not None and tuple(out.shape) != kshape):
            return None
        convs = [_plan_operand(v, kshape, None) for v in ops.values]
        launch = self._kernel(len(kshape), argtypes).forall(n)
        overlap = ufunc_plans.may_overlap
        if out is not None:
            def with_out(args, out):
                for a in args:
                    if overlap(a, out):
                        return ufunc_plans.MISS  # the full path decides what to read from a copy
                launch(*[c(a) for c, a in zip(convs, args)], out)
                return out

            return with_out
        new = ufunc_plans.new_device_array(kshape, rdt) if ops.any_device else (lambda: np.empty(kshape, rdt))
        to_scalar = shape == () and not ops.any_device

        def fresh(args, out):
            res = new()
            launch(*[c(a) for c, a in zip(convs, args)], res)
            if shape == ():
                return res.reshape(shape)[()] if to_scalar else res.reshape(())
            return res

        return fresh

    def _call(self, *args, out=None, stream=0):
        from pykern.runtime.memory.arrays import DeviceArray, device_array

        if len(args) == self.nin + 1:
            _no_duplicate_out(out)
            args, out = args[:-1], args[-1]
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional arguments but {len(args)} were given")
        out = _device_or_host(out)
        target = current_target()
        ops = _Operands(args, target, stream)
        ret, argtypes = self._types_for(self._input_types(ops), ops.values)
        rdt = _np_dtype(ret)
        shape = np.broadcast_shapes(*(ops.shape(k) for k in range(self.nin)))
        if out is not None:
            oshape = tuple(out.shape)
            if np.broadcast_shapes(shape, oshape) != oshape:
                raise ValueError(f"{self.__name__}: out has shape {oshape}, the result {shape}")
            _check_out_cast(self.__name__, rdt, out)
            shape = oshape
        scalar_result = shape == ()
        kshape = shape if shape else (1,)
        if len(kshape) > _MAX_NDIM:
            return self._by_rows(ops, shape, rdt, out, stream)
        device_out = isinstance(out, DeviceArray)
        if device_out:
            res = out if out.shape == kshape else out.reshape(kshape)
        elif target == "hip" or (ops.any_device and out is None):
            res = device_array(kshape, out.dtype if out is not None else rdt, stream=stream)
        elif out is not None:
            res = out.reshape(kshape) if out.shape != kshape else out
        else:
            res = np.empty(kshape, rdt)
        ins = [ops.array(k, kshape, None, outs=(res,)) for k in range(self.nin)]
        n = int(np.prod(kshape))
        if n:
            self._kernel(len(kshape), argtypes).forall(n, stream=stream)(*ins, res)
        if device_out:
            return out
        if target == "hip" and not ops.any_device:
            host = res.copy_to_host(stream=stream)
            if out is not None:
                out[...] = host.reshape(out.shape)
                return out
            return host[()] if scalar_result else host.reshape(shape)
        if isinstance(res, DeviceArray):
            return res if not scalar_result else res.reshape(())  # stays on the device
        if out is not None:
            return out
        return res.reshape(shape)[()] if scalar_result else res

    def _by_rows(self, ops, shape, rdt, out, stream):
        """More dimensions than a kernel array has (numba takes any): one call per index of
        the first axis, on views (numpy's result; a launch per row, so only for this case)."""
        from pykern.runtime.memory.arrays import device_array

        given = () if out is None else (out,)  # rows of an input may overlap other rows of out
        ins = [ops.array(k, shape, None, outs=given) if np.ndim(ops.values[k]) else ops.values[k]
               for k in range(self.nin)]
        if out is None:
            if ops.target == "hip" and not ops.any_device:
                return self._by_rows(ops, shape, rdt, device_array(shape, rdt, stream=stream),
                                     stream).copy_to_host(stream=stream)
            out = device_array(shape, rdt, stream=stream) if ops.any_device else np.empty(shape, rdt)
        for i in range(shape[0]):
            self(*[a[i] if np.ndim(a) else a for a in ins], out=out[i], stream=stream)
        return out

    def reduce(self, arg, stream=0):
        """numba's ``ufunc.reduce`` of a binary ufunc over a 1-d array, in numba's order: the
        array's halves combined by this ufunc on the device (``left = f(left, right)``), again
        and again, an odd last element folded in after the rest (``f(rest, last)``). No initial
        value: ``mul.reduce`` is the product, a non-associative ``f`` gives numba's result, and
        float sums round as there. An empty array is numba's TypeError."""
        if self.nin != 2:
            raise TypeError("reduce needs a binary ufunc")
        if np.ndim(arg) != 1:
            raise TypeError("reduce needs a 1-d array")
        n = arg.shape[0]
        if n == 0:
            raise TypeError("Reduction on an empty array.")
        if n == 1:
            return arg[0]
        from pykern.runtime.memory.arrays import to_device
        from pykern.runtime.streams import stream as new_stream

        s = stream or new_stream()
        with s.auto_synchronize():
            mem = arg if is_device_operand(arg) else to_device(np.ascontiguousarray(arg), stream=s)
            held = []  # the views stay referenced until the stream is done with them
            out = self._reduce_halves(mem, held, s)
            buf = np.empty(1, dtype=arg.dtype)
            out.copy_to_host(buf, stream=s)
        return buf[0]

    def _reduce_halves(self, mem, held, stream):
        n = mem.shape[0]
        if n % 2:
            rest, last = mem.split(n - 1)
            held += [rest, last]
            out = self._reduce_halves(rest, held, stream)
            return self(out, last, out=out, stream=stream)
        left, right = mem.split(n // 2)
        held += [left, right]
        self(left, right, out=left, stream=stream)
        return self._reduce_halves(left, held, stream) if n // 2 > 1 else left

    def __reduce__(self):
        """Pickled by value as its device function is (``pykern/dispatch/serialize.py``) with its signatures
        and options: a ufunc travels to Dask workers and ``multiprocessing`` as a kernel does."""
        return (_rebuild_ufunc, (self._device, self._sigs, self.options))

    def __repr__(self):
        return f"<pykern vectorized ufunc {self.__name__}>"


_CORE = re.compile(r"\(([^()]*)\)")


def _parse_layout(layout: str):
    """``'(m,n),(n)->(m)'`` -> ([('m','n'), ('n',)], [('m',)])."""
    if "->" not in layout:
        raise ValueError(f"gufunc layout {layout!r} needs '->'")
    lhs, rhs = layout.replace(" ", "").split("->")

    def dims(side):
        return [tuple(d for d in m.group(1).split(",") if d) for m in _CORE.finditer(side)]

    return dims(lhs), dims(rhs)


class CUDAGUFunc:
    """What ``@guvectorize`` returns: loops the core function over the leading
    (broadcast) dimensions, one thread per loop index."""

    def __init__(self, func, signatures, layout, **options):
        from pykern.dispatch.dispatcher import Dispatcher
        from pykern.frontend import parse_signature
        from pykern.frontend import types as T

        if not signatures:
            raise TypeError("guvectorize needs a list of signatures, e.g. ['void(float32[:], float32[:])']")
        func = as_def(func)
        self.py_func = func
        self.__name__ = getattr(func, "__name__", "gufunc")
        self.options = dict(options)
        self.layout = layout
        self.in_dims, self.out_dims = _parse_layout(layout)
        self.nin, self.nout = len(self.in_dims), len(self.out_dims)
        self._device = Dispatcher(func, None, device=True, **options)
        self._sigs = [parse_signature(s) for s in signatures]
        for (ret, _), sig in zip(self._sigs, signatures):
            if ret != T.void:
                raise TypeError(f"guvectorized functions cannot return values: signature {sig} specifies "
                                f"{ret} return type")
        for _, argtypes in self._sigs:
            if len(argtypes) != self.nin + self.nout:
                raise TypeError(f"signature has {len(argtypes)} arguments, layout {layout!r} {self.nin + self.nout}")
        self._kernels = {}
        self._plans = ufunc_plans.PlanCache()  # call key -> what a call with that key does

    def _kernel(self, loop_ndim, argtypes, scalar_args):
        key = (loop_ndim, tuple(argtypes), tuple(scalar_args))
        k = self._kernels.get(key)
        if k is None:
            from pykern.dispatch.dispatcher import Dispatcher
            from pykern.lang import stubs

            n = len(argtypes)
            names = [f"a{j}" for j in range(n)]
            idx = ", ".join(f"i{d}" for d in range(loop_ndim))
            lines = [f"def gufunc_kernel({', '.join(names)}, nloop):", "    i = cuda.grid(1)", "    if i < nloop:",
                     "        r = i"]
            for d in reversed(range(loop_ndim)):
                lines.append(f"        i{d} = r % a0.shape[{d}]")
                lines.append(f"        r = r // a0.shape[{d}]")
            call = ", ".join(f"{nm}[{idx}]" for nm in names)  # scalars: an element; arrays: the core view
            lines.append(f"        fn({call})")
            k = self._kernels[key] = Dispatcher(
                define("gufunc_kernel", "\n".join(lines) + "\n",
                          {"cuda": stubs, "fn": self._device,
                           "__name__": getattr(self.py_func, "__module__", None) or __name__}), None,
                **{o: v for o, v in self.options.items() if o != "forceinline"})
        return k

    def __call__(self, *args, out=None, stream=0):
        # a call like an earlier one replays that one's decisions (``ufunc_plans``)
        key = None
        if out is None and (stream is None or stream == 0) and len(args) in (self.nin, self.nin + self.nout):
            key = ufunc_plans.call_key(args, None)
        r = self._plans.replay(key, args, None)
        if r is ufunc_plans.MISS:
            r = self._call(*args, out=out, stream=stream)
            self._plans.learn(key, lambda: self._plan(args))
        return r

    def _bind(self, args, outs, target, stream):
        """``(operands, signature, core dimension sizes, loop shapes)`` of inputs ``args`` and
        outputs ``outs``: the signature their dtypes pick, the sizes their shapes bind."""
        ops = _Operands(args, target, stream)
        dtypes = [ops.dtype(k) for k in range(self.nin)]
        heads = [(None, tuple(a[: self.nin])) for _, a in self._sigs]
        _, head = _resolve(heads, dtypes, ops.values, self.__name__)
        sig = next(a for _, a in self._sigs if tuple(a[: self.nin]) == head)
        # bind core dimension sizes and the broadcast loop shape
        sizes, loops = {}, []
        for k, core in enumerate(self.in_dims):
            shp = ops.shape(k)
            if len(shp) < len(core):
                raise ValueError(f"{self.__name__}: input {k} has {len(shp)} dimensions, layout needs {len(core)}")
            for name, n in zip(core, shp[len(shp) - len(core):] if core else ()):
                if sizes.setdefault(name, n) != n:
                    raise ValueError(f"{self.__name__}: dimension {name!r} is {sizes[name]} and {n}")
            loops.append(shp[: len(shp) - len(core)])
        for k, core in enumerate(self.out_dims):
            if outs:
                shp = tuple(outs[k].shape)
                for name, n in zip(core, shp[len(shp) - len(core):] if core else ()):
                    sizes.setdefault(name, n)
                loops.append(shp[: len(shp) - len(core)])
        for core in self.out_dims:
            missing = [d for d in core if d not in sizes]
            if missing:
                raise ValueError(f"{self.__name__}: output dimension(s) {missing} are not given by any input")
        return ops, sig, sizes, loops

    def _plan(self, args):
        """The call plan (``ufunc_plans``) of a call like this one (it succeeded; outputs, if
        any, the last positional arguments), or None where the plans leave it to ``_call``:
        another target than cpu, an output of another shape than the loop's, an input
        converted to another dtype on the device, an empty loop."""
        from pykern.frontend import types as T
        from pykern.runtime.memory.arrays import DeviceArray

        target = current_target()
        if target != "cpu":
            return None
        outs = list(args[self.nin:])
        ops, sig, sizes, loops = self._bind(args[: self.nin], outs, target, 0)
        loop = np.broadcast_shapes(*loops) if loops else ()
        kloop = loop if loop else (1,)
        nloop = int(np.prod(kloop))
        if not nloop:
            return None
        convs, scalar_args, same_ok = [], [], []
        for k, core in enumerate(self.in_dims):
            t, v = sig[k], ops.values[k]
            conv = _plan_operand(v, kloop + tuple(sizes[d] for d in core), _np_dtype(t))
            if conv is None:
                return None
            is_scalar = not isinstance(t, T.Array)
            if not core and not is_scalar:  # '()' operand of array type: a 1-element view per loop index
                conv = (lambda a, c=conv: _add_unit_axis(c(a))) if isinstance(v, DeviceArray) else \
                    (lambda a, c=conv: c(a)[..., None]) if isinstance(v, np.ndarray) else \
                    ufunc_plans.spread(kloop + (1,), _np_dtype(t))  # a number: [..., None] of its spread
            convs.append(conv)
            scalar_args.append(is_scalar)
            same_ok.append(not core and not any(self.out_dims))  # elementwise: reads what it then writes
        news, shapes, out_convs = [], [], []
        for k, core in enumerate(self.out_dims):
            cshape = tuple(sizes[d] for d in core)
            if outs and tuple(outs[k].shape) != kloop + cshape:
                if not isinstance(outs[k], DeviceArray):
                    return None  # a host reshape may copy (then the full path writes back)
                out_convs.append(_plan_operand(outs[k], kloop + cshape, None))
            else:
                out_convs.append(ufunc_plans.identity)
            rdt = _np_dtype(sig[self.nin + k])
            news.append(None if outs else ufunc_plans.new_device_array(kloop + cshape, rdt) if ops.any_device
                        else (lambda s=kloop + cshape, d=rdt: np.empty(s, d)))
            shapes.append((loop + cshape, bool(core)))
            scalar_args.append(False)
        launch = self._kernel(len(kloop), sig, scalar_args).forall(nloop)
        nin = self.nin
        overlap = ufunc_plans.may_overlap
        # each result as the kernel gets it: a '()' output is a 1-element view per loop index
        as_operand = [ufunc_plans.identity if core else (_add_unit_axis if ops.any_device or outs and
                                                          isinstance(outs[k], DeviceArray) else _unit_axis)
                      for k, (_, core) in enumerate(shapes)]
        if outs:
            pairs = list(zip(range(nin), same_ok))

            def run(args, _out):
                given = args[nin:]
                for o in given:  # the full path decides what to read from a copy
                    for k, ok in pairs:
                        if overlap(args[k], o, ok):
                            return ufunc_plans.MISS
                operands = [c(a) for c, a in zip(convs, args)]
                operands += [m(c(o)) for m, c, o in zip(as_operand, out_convs, given)]
                launch(*operands, nloop)
                return given[0] if len(given) == 1 else tuple(given)

            return run
        # new results: what the full path returns, a reshape (a host 0-d result as its scalar)
        finish = [(lambda r, s=shape: r.reshape(s) if s else r) if ops.any_device else
                  (lambda r, s=shape: r.reshape(s)[()] if s == () else r if r.shape == s else r.reshape(s))
                  for shape, _ in shapes]

        def run(args, _out):
            results = [new() for new in news]
            operands = [c(a) for c, a in zip(convs, args)]
            operands += [m(r) for m, r in zip(as_operand, results)]
            launch(*operands, nloop)
            if len(results) == 1:
                return finish[0](results[0])
            return tuple(f(r) for f, r in zip(finish, results))

        return run

    def _call(self, *args, out=None, stream=0):
        from pykern.frontend import types as T
        from pykern.runtime.memory.arrays import DeviceArray, device_array

        outs = list(args[self.nin:])
        if len(args) not in (self.nin, self.nin + self.nout):
            n = len(args)
            raise TypeError(f"{self.__name__}: gufunc accepts {self.nin} positional arguments (the inputs) or "
                            f"{self.nin + self.nout} positional arguments (inputs and outputs). "
                            f"Got {n} positional argument{'' if n == 1 else 's'}.")
        args = args[: self.nin]
        if out is not None:
            if outs:
                _no_duplicate_out(out)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(outs) not in (0, self.nout):
            raise TypeError(f"{self.__name__}() takes {self.nin} inputs (and optionally {self.nout} outputs)")
        outs = [_device_or_host(o) for o in outs]
        target = current_target()
        ops, sig, sizes, loops = self._bind(args, outs, target, stream)
        loop = np.broadcast_shapes(*loops) if loops else ()
        kloop = loop if loop else (1,)  # no loop dimensions: one call
        operands, scalar_args = [], []
        results = []
        for k, core in enumerate(self.out_dims):
            t = sig[self.nin + k]
            cshape = tuple(sizes[d] for d in core)
            rdt = _np_dtype(t)
            given = outs[k] if outs else None
            if given is not None:
                _check_out_cast(self.__name__, rdt, given)
            if isinstance(given, DeviceArray):
                res = _broadcast_device(given, kloop + cshape)
            elif target == "hip" or (ops.any_device and given is None):
                res = device_array(kloop + cshape, rdt, stream=stream)
            elif given is not None:
                res = given.reshape(kloop + cshape)
            else:
                res = np.empty(kloop + cshape, rdt)
            results.append((res, given, cshape))
            operands.append(res if core else (res[..., None] if not isinstance(res, DeviceArray) else _add_unit_axis(res)))
            scalar_args.append(False)
        # numpy copies an input that overlaps an output; element for element (no core dimensions
        # on either side) the very output is read before it is written and needs no copy
        outs_written = [res for res, _, _ in results]
        no_core_out = not any(self.out_dims)
        for k, core in enumerate(self.in_dims):
            t = sig[k]
            cshape = tuple(sizes[d] for d in core)
            arr = ops.array(k, kloop + cshape, _np_dtype(t), outs=outs_written, elementwise=no_core_out and not core)
            is_scalar = not isinstance(t, T.Array)
            if not core and not is_scalar:  # '()' operand of array type: a 1-element view per loop index
                arr = arr[..., None] if not isinstance(arr, DeviceArray) else _add_unit_axis(arr)
            operands.insert(k, arr)
            scalar_args.insert(k, is_scalar)
        for arr in operands:
            if arr.ndim > _MAX_NDIM:
                raise ValueError(f"{self.__name__}: loop and core dimensions give {arr.ndim}-d arrays; "
                                 f"at most {_MAX_NDIM} are supported")
        nloop = int(np.prod(kloop))
        if nloop:
            self._kernel(len(kloop), sig, scalar_args).forall(nloop, stream=stream)(*operands, nloop)
        rets = []
        for res, given, cshape in results:
            shape = loop + cshape
            if isinstance(given, DeviceArray):
                rets.append(given)
            elif target == "hip" and not ops.any_device:
                host = res.copy_to_host(stream=stream).reshape(shape)
                if given is not None:
                    given[...] = host
                    rets.append(given)
                else:
                    rets.append(host[()] if shape == () else host)
            elif isinstance(res, DeviceArray):
                rets.append(res.reshape(shape) if shape else res)
            elif given is not None:
                if not np.shares_memory(res, given):  # reshape had to copy (a strided out): write back
                    given[...] = res.reshape(given.shape)
                rets.append(given)
            else:
                r = res.reshape(shape)
                rets.append(r[()] if shape == () else r)
        return rets[0] if len(rets) == 1 else tuple(rets)

    def __reduce__(self):
        """Pickled by value, as :class:`CUDAUFunc`."""
        return (_rebuild_gufunc, (self._device, [tuple(a) for _, a in self._sigs], self.layout, self.options))

    def __repr__(self):
        return f"<pykern gufunc {self.__name__} {self.layout}>"


def _rebuild_ufunc(device, sigs, options):
    u = CUDAUFunc(device.py_func, None, **options)
    u._sigs = list(sigs)
    return u


def _rebuild_gufunc(device, sigs, layout, options):
    return CUDAGUFunc(device.py_func, sigs, layout, **options)


def _unit_axis(a):
    return a[..., None]


def _add_unit_axis(d):
    from pykern.runtime.memory.arrays import DeviceArray

    return DeviceArray(d.shape + (1,), d.strides + (d.dtype.itemsize,), d.dtype, d.storage, d.ptr, d.stream)


def _ufunc_options(options: dict, unknown_error) -> dict:
    """numba's checks of ``vectorize``/``guvectorize`` options: ``nopython=True`` is redundant (a
    warning), ``nopython=False`` an error, other unknown options ``unknown_error(names)``."""
    from pykern.dispatch.dispatcher import _KNOWN_OPTIONS

    if "nopython" in options:
        if not options.pop("nopython"):
            raise TypeError("nopython flag must be True")
        import warnings

        warnings.warn("nopython kwarg for cuda target is redundant", RuntimeWarning, stacklevel=3)
    unknown = [k for k in options if k not in _KNOWN_OPTIONS]
    if unknown:
        raise unknown_error(", ".join(repr(k) for k in unknown))
    return options


class UnrecognizedOptions(KeyError, TypeError):
    """numba's ``vectorize`` raises KeyError for options it does not know; it is a TypeError
    too, as ``@jit``'s unknown options are."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def _unknown_vectorize_option(names):
    return UnrecognizedOptions(f"Unrecognized options: {names}")


def _unknown_guvectorize_option(names):
    return TypeError(f"The following target options are not supported: {names}")


def vectorize(signatures=None, target=None, **options):
    """numba.cuda's ``@vectorize``: ``@cuda.vectorize(['f4(f4, f4)'])``, or with
    no signatures (types from each call's inputs). ``target`` is accepted
    for numba's ``@vectorize(..., target='cuda')`` spelling, and so is ``nopython=True``
    (always so here; numba warns that it is redundant)."""
    options = _ufunc_options(options, _unknown_vectorize_option)
    if callable(signatures) and hasattr(signatures, "__code__"):
        return CUDAUFunc(signatures, None, **options)
    sigs = [signatures] if isinstance(signatures, str) else signatures

    def decorate(fn):
        return CUDAUFunc(getattr(fn, "py_func", fn), sigs, **options)

    return decorate


def guvectorize(signatures, layout, target=None, **options):
    """numba.cuda's ``@guvectorize(signatures, layout)``, e.g. ``'(n),(n)->()'``.
    Outputs are the last arguments; a ``()`` output is a 1-element array
    (``res[0] = ...``), as in numba. ``target`` and ``nopython=True`` are accepted as in
    :func:`vectorize`."""
    options = _ufunc_options(options, _unknown_guvectorize_option)
    sigs = [signatures] if isinstance(signatures, str) else signatures

    def decorate(fn):
        return CUDAGUFunc(getattr(fn, "py_func", fn), sigs, layout, **options)

    return decorate
