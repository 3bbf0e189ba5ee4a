"""What the sim target refuses, and kernel output on it."""

import numpy as np
import pytest

import pykern as cuda
from pykern import runtime as targets


@pytest.fixture
def sim():
    saved = list(targets._chosen)
    cuda.set_target("sim")
    yield
    targets._chosen[:] = saved


@cuda.jit
def speak(x):
    i = cuda.grid(1)
    if i == 1:
        print("thread", i, "has", x[i], x[i] > 1)


def test_print_formats_as_the_compiled_targets(sim, capfd):
    speak[1, 2](np.array([1.5, 2.5]))
    assert capfd.readouterr().out == "thread 1 has 2.500000 True\n"


@cuda.jit
def stops_early(x):
    i = cuda.grid(1)
    if i == 2:
        raise ValueError("no")
    x[i] = 1


def test_a_raise_ends_only_that_thread(sim):
    x = np.zeros(4, np.int32)
    stops_early[1, 4](x)
    assert x.tolist() == [1, 1, 0, 1]


@cuda.jit
def double(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= 2


def test_device_arrays_of_the_sim_target_live_in_host_memory(sim):
    d = cuda.to_device(np.arange(4, dtype=np.float32))
    assert d.target == "cpu"
    double[1, 4](d)
    assert d.copy_to_host().tolist() == [0, 2, 4, 6]
    assert cuda.current_target() == "sim"
