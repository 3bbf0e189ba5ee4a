"""The drivers behind device arrays and streams (``pykern.runtime.drivers``): one per target, each
doing every operation of the interface, and memory and stream code that names no target."""

import ast
import inspect
import pathlib

import numpy as np
import pytest

import pykern
from pykern import runtime
from pykern.runtime import drivers
from pykern.runtime.cpu.driver import CpuDriver
from pykern.runtime.hip.driver import HipDriver

OPERATIONS = sorted(n for n, v in vars(drivers.Driver).items() if inspect.isfunction(v))


@pytest.mark.parametrize("target", runtime.TARGETS)
def test_every_target_has_one_driver_doing_every_operation(target):
    drv = runtime.driver(target)
    assert drv is runtime.driver(target) and isinstance(drv, drivers.Driver)
    assert drv.name == runtime.MEMORY_TARGET[target]  # the sim target's arrays are host ("cpu") memory
    missing = [op for op in OPERATIONS if getattr(type(drv), op) is getattr(drivers.Driver, op)]
    assert not missing, f"{type(drv).__name__} leaves {missing} to the interface"


def test_the_current_targets_driver_is_the_default():
    assert runtime.driver() is runtime.driver(runtime.current_target())
    with pytest.raises(ValueError, match="unknown target"):
        runtime.driver("cuda")


def test_targets_differ_in_what_the_flags_say():
    assert (CpuDriver.host_memory, CpuDriver.asynchronous) == (True, False)
    assert (HipDriver.host_memory, HipDriver.asynchronous) == (False, True)
    from pykern.runtime.memory.dlpack import kDLCPU, kDLROCM

    assert (CpuDriver.dlpack_device, HipDriver.dlpack_device) == (kDLCPU, kDLROCM)


class _TorchLikeStream:
    cuda_stream = 0x40


@pytest.mark.parametrize("value, handle", [(None, 0), (0, 0), (0x20, 0x20), (_TorchLikeStream(), 0x40)])
def test_stream_handles_of_what_users_pass(value, handle):
    assert drivers.stream_handle(value) == handle
    assert int(pykern.runtime.streams.as_stream(value, "cpu")) == handle


def test_a_stream_of_a_pykern_stream_is_its_handle():
    s = pykern.runtime.streams.Stream(0x30, "cpu")
    assert drivers.stream_handle(s) == 0x30 and pykern.runtime.streams.as_stream(s, "cpu") is s
    with pytest.raises(TypeError, match="stream handle"):
        drivers.stream_handle("fast")


def test_cpu_memory_is_aligned_host_memory():
    drv = runtime.driver("cpu")
    for n in (0, 1, 1000):
        ptr, device, keeper, free = drv.allocate(n)
        assert ptr % 256 == 0 and device == 0 and free is None
        assert keeper.ctypes.data <= ptr and ptr + n <= keeper.ctypes.data + keeper.nbytes
    src = np.arange(8, dtype=np.uint8)
    dst = np.zeros(8, np.uint8)
    drv.copy_bytes(dst.ctypes.data, src.ctypes.data, 8)
    drv.memset(dst.ctypes.data, 7, 3)
    assert dst.tolist() == [7, 7, 7, 3, 4, 5, 6, 7]


def test_cpu_events_time_the_host_and_streams_finish_at_once():
    ev1, ev2 = pykern.event(target="cpu"), pykern.event(target="cpu")
    with pytest.raises(RuntimeError, match="never recorded"):
        ev1.elapsed_time(ev2)
    ev1.record()
    ev2.record(pykern.stream(target="cpu"))
    assert ev1.elapsed_time(ev2) >= 0 and ev1.query() and ev1.handle == 0
    got = []
    s = pykern.stream(target="cpu")
    s.add_callback(lambda stream, status, arg: got.append((stream, status, arg)), "x")
    assert got == [(s, 0, "x")] and s.query()


MEMORY_AND_STREAMS = ["runtime/memory/arrays.py", "runtime/memory/dlpack.py", "runtime/streams.py"]


@pytest.mark.parametrize("path", MEMORY_AND_STREAMS)
def test_memory_and_stream_code_names_no_target(path):
    """What differs between targets is a driver operation: no comparison with a target's name."""
    tree = ast.parse((pathlib.Path(pykern.__file__).parent / path).read_text())
    named = [f"line {node.lineno}" for node in ast.walk(tree) if isinstance(node, ast.Compare)
             and any(isinstance(c, ast.Constant) and c.value in ("cpu", "hip", "amdgpu") for c in
                     [node.left, *node.comparators, *[e for c in node.comparators if isinstance(c, (ast.Tuple, ast.Set, ast.List)) for e in c.elts]])]
    assert not named, f"{path} compares with a target name at {named}"
