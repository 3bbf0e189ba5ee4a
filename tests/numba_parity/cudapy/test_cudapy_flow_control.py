"""numba-cuda's ``tests/cudapy/test_flow_control.py`` (see conftest.py): numba's flow-control use cases
(loops, breaks, nested ifs) against Python."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


# numba's usecases assign their results to the parameters res1/res2, which no one can see;
# they are kept verbatim except that res1/res2 are the two cells of an output array, so the
# kernel's answers are compared with the same function run by Python.
_FLOW_SRC = '''
def for_loop_usecase1(x, y, res):
    result = 0
    for i in range(x):
        result += i
    res[0] = result


def for_loop_usecase2(x, y, res):
    result = 0
    for i, j in enumerate(range(x, y, -1)):
        result += i * j
    res[0] = result


def for_loop_usecase4(x, y, res):
    result = 0
    for i in range(10):
        for j in range(10):
            result += 1
    res[0] = result


def for_loop_usecase5(x, y, res):
    result = 0
    for i in range(x):
        result += 1
        if result > y:
            break
    res[0] = result


def for_loop_usecase6(x, y, res):
    result = 0
    for i in range(x):
        if i > y:
            continue
        result += 1
    res[0] = result


def for_loop_usecase7(x, y, res):
    for i in range(x):
        x = 0
        for j in range(x):
            res[0] = 1
        else:
            pass
    res[0] = 0


def for_loop_usecase9(x, y, res):
    z = 0
    for i in range(x):
        x = 0
        for j in range(x):
            if j == x / 2:
                z += j
                break
        else:
            z += y
    res[0] = z


def for_loop_usecase10(x, y, res):
    for i in range(x):
        if i == y:
            z = y
            break
    else:
        z = i * 2
    res[0] = z


def while_loop_usecase1(x, y, res):
    result = 0
    i = 0
    while i < x:
        result += i
        i += 1
    res[0] = result


def while_loop_usecase2(x, y, res):
    result = 0
    while result != x:
        result += 1
    res[0] = result


def while_loop_usecase3(x, y, res):
    result = 0
    i = 0
    j = 0
    while i < x:
        while j < y:
            result += i + j
            i += 1
            j += 1
    res[0] = result


def while_loop_usecase4(x, y, res):
    result = 0
    while True:
        result += 1
        if result > x:
            break
    res[0] = result


def while_loop_usecase5(x, y, res):
    result = 0
    while result < x:
        if result > y:
            result += 2
            continue
        result += 1
    res[0] = result


def ifelse_usecase2(x, y, res):
    if x > y:
        res[0] = 1
    elif x == 0 or y == 0:
        res[0] = 2
    else:
        res[0] = 3


def ifelse_usecase3(x, y, res):
    if x > 0:
        if y > 0:
            res[0] = 1
        elif y < 0:
            res[0] = 1
        else:
            res[0] = 0
    elif x < 0:
        res[0] = 1
    else:
        res[0] = 0


def ifelse_usecase4(x, y, res):
    if x == y:
        res[0] = 1


def ternary_ifelse_usecase1(x, y, res):
    res[0] = True if x > y else False


def double_infinite_loop(x, y, res):
    L = x
    i = y
    while True:
        while True:
            if i == L - 1:
                break
            i += 1
        i += 1
        if i >= L:
            break
    res[0] = i
    res[1] = L
'''


_FLOW_CASES = [
    ("for_loop_usecase1", [-10, 0, 10], [0]),
    ("for_loop_usecase2", [-10, 0, 10], [-10, 0, 10]),
    ("for_loop_usecase4", [10], [10]),
    ("for_loop_usecase5", [100], [50]),
    ("for_loop_usecase6", [100], [50]),
    ("for_loop_usecase7", [5], [0]),
    ("for_loop_usecase9", [0, 1], [0, 2, 10]),
    ("for_loop_usecase10", [5], [2, 7]),
    ("while_loop_usecase1", [10], [0]),
    ("while_loop_usecase2", [10], [0]),
    ("while_loop_usecase3", [10], [10]),
    ("while_loop_usecase4", [10], [0]),
    ("while_loop_usecase5", [0, 5, 10], [0, 5, 10]),
    ("ifelse_usecase2", [-1, 0, 1], [-1, 0, 1]),
    ("ifelse_usecase3", [-1, 0, 1], [-1, 0, 1]),
    ("ifelse_usecase4", [-1, 0, 1], [-1, 0, 1]),
    ("ternary_ifelse_usecase1", [-1, 0, 1], [-1, 0, 1]),
    ("double_infinite_loop", [10], [0]),
]


@pytest.fixture(scope="module")
def flow_module(tmp_path_factory):
    import importlib.util

    path = tmp_path_factory.mktemp("flow") / "nb_flow_usecases.py"
    path.write_text(_FLOW_SRC)
    spec = importlib.util.spec_from_file_location("nb_flow_usecases", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name,xs,ys", _FLOW_CASES, ids=[c[0] for c in _FLOW_CASES])
def test_flow_control(flow_module, name, xs, ys):
    # test_flow_control.py TestFlowControl.test_<case> (run_test with intp arguments)
    pyfunc = getattr(flow_module, name)
    cfunc = cuda.jit((cuda.intp, cuda.intp, cuda.intp[::1]))(pyfunc)
    for x, y in itertools.product(xs, ys):
        expected = [0, 0]
        pyfunc(x, y, expected)
        got = np.zeros(2, dtype=np.intp)
        cfunc[1, 1](x, y, got)
        assert got.tolist() == expected, (name, x, y)
