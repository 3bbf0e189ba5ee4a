"""Odd inputs give a CompileError (or compile), never another exception."""

import pytest

from frontend_helpers import define
from pykern.core.errors import CompileError
from pykern.frontend import compile_ir
from pykern.frontend import types as T

SNIPPETS = """
a[0] = a
x = cuda.grid(1)(3)
x = cuda.grid
x = len()
x = range(10)
x = a[None]
x = a[...]
x = a.shape[10]
i = cuda.threadIdx.x; x = a.shape[i]
t = (); x = t[0]
x = min(())
x = max(a)
x = round(a)
x = int(a)
x = np.float32(a)
cuda.atomic.add(a, 0)
cuda.atomic.add(1, 0, 1)
x = cuda.shfl_sync(-1, (1, 2), 0)
x = cuda.local.array((2, 2, 2, 2, 2), np.int8)
x = cuda.local.array(-1, np.int8)
x = cuda.local.array(2.5, np.int8)
x = cuda.shared.array(4, np.complex64)
x = cuda.shared.array(4, np.float32, 3)
x = cuda.shared.array(4)
x = 1 if a else 2
while a: pass
for i in range(a): pass
x = not a
x = -a
x = a < a
x = (a, 1) < (1, 2)
x = a and 1
a[0] += a
x = 1; x += a
x = 1; x[0] = 1
a[0][0][0] = 1
x, = a.shape
x = -True
x = ~True
x = 2 ** 100000
x = 10 ** 30
x = 1e308 * 10
x = 0.1 ** -400
x = (-8) ** 0.5
x = 5 % 0.0
x = 1 << -1
x = math.log(0)
x = math.sqrt(-1)
x = cuda.threadIdx.x.y
x = a.shape.foo
x = np.float32
x = a.dtype
x = len
x = abs(-2**63)
x = round(1e300)
x = round(2.5, 1e3)
x = round(a[0], 'x')
x = max(2**63, 1)
x = min(-1, 2**64 - 1)
x = int(1e300)
x = float(2**64 - 1)
x = np.int8(1000)
x = np.float16(1e10)
x = cuda.popc(True)
x = cuda.brev(-1)
x = cuda.fma(1, 2, 3)
x = cuda.ballot_sync(1.5, True)
x = cuda.shfl_sync(-1, 1.0, 1.5)
x = cuda.syncwarp(1, 2)
x = cuda.syncthreads_count(a)
x = cuda.atomic.add(a, (0, 0), 1)
x = cuda.atomic.cas(a, 0, 1)
x = cuda.atomic.compare_and_swap(a, 1.5, 2)
x = cuda.const.array_like(3)
x = np.dtype("complex64")
x = cuda.local.array(3, np.dtype("complex64"))
x = cuda.local.array(3, bool)
x = cuda.local.array(3, int)
x = cuda.local.array(3, float)
x = cuda.local.array(3, None)
x = math.hypot(1, 2, 3)
x = math.log(1, 2, 3)
x = math.isnan(a)
x = np.power(2, -1)
x = pow(2, 0.5)
x = 3 < 4 < 5
x = 1 < a[0] < 2 < a[1]
x = a[cuda.atomic.add(a, 0, 1) > 0]
x = (1, 2)[a[0]]
x = (1, 2.0)[0]
x = (a, a)[0][0]
f = 1.0; x = (a, a)[f]
a, *b = 1, 2, 3
x = min(a[0] > 0, True)
x = a[True]
x = a[(0,)]
x = a[()]
x = a[0, ]
a[()] = 1
a[0] = a[0] if a[0] else a
x = a[0]; x = (x, x)
x = lambda: 0
x = [i for i in range(3)]
x = {1}
x = a.T
x = a.size.bit_length()
x = cuda.threadIdx
x = cuda.laneid()
x = cuda.activemask(1)
x = cuda.gridsize(0)
x = cuda.grid('x')
x = math.pi.real
x = 1 + 'x'
x = None
return None
return
pass
""".strip().splitlines()


@pytest.mark.parametrize("line", SNIPPETS)
def test_snippet_never_crashes(line):
    f = define(f"def k(a):\n    {line}\n")
    try:
        m = compile_ir(f, [T.Array(T.float32, 1)])
    except CompileError as e:
        assert "internal error" not in str(e), str(e)
        assert e.line == 2 or e.line is None, str(e)
    else:
        assert str(m)  # printable
