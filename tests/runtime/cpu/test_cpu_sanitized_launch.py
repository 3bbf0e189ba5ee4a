"""Sanitized launches (``runtime/cpu/sanitizer.py``) as launches: Ctrl-C stops a long one, and the
shadow pages kept from one launch to the next neither report an earlier launch's accesses nor
forget which device array bytes were written."""

import os
import signal
import threading

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")


@cuda.jit(sanitize="race")
def spin(a, n):
    s = 0.0
    for k in range(n):
        s += k * 1e-9
    a[cuda.grid(1)] = s


def test_ctrl_c_stops_a_long_sanitized_launch():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGINT reaches the main thread only")
    z = np.zeros(1)
    spin[1, 1](z, 10)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            spin[1, 1](z, 1 << 40)  # hours without the interrupt
    finally:
        timer.cancel()
    spin[1, 1](z, 1000)  # the kernel still runs
    assert round(z[0] * 1e9) == 499500


@cuda.jit(sanitize="race")
def write_own(a):
    a[cuda.grid(1)] = cuda.threadIdx.x


@cuda.jit(sanitize="race")
def read_neighbour(a, out):
    i = cuda.grid(1)
    out[i] = a[(i + 1) % a.size]


def test_an_earlier_launch_orders_its_accesses_before_the_next():
    a, out = np.zeros(64, np.int32), np.zeros(64, np.int32)
    for _ in range(3):  # the same memory, written and read by other threads, launch after launch
        write_own[2, 32](a)
        read_neighbour[2, 32](a, out)
    np.testing.assert_array_equal(out, np.roll(np.tile(np.arange(32), 2), -1))


@cuda.jit(sanitize="init")
def fill_half(a):
    i = cuda.grid(1)
    if i % 2 == 0:
        a[i] = i


@cuda.jit(sanitize="init")
def read_one(a, i, out):
    out[0] = a[i]


def test_written_bytes_of_a_device_array_persist_across_launches(monkeypatch):
    monkeypatch.setenv("PYKERN_SANITIZE", "init")
    d = cuda.device_array(64, np.int8)  # 1-byte elements: the checker keeps these bytes apart
    fill_half[2, 32](d)
    out = np.zeros(1, np.int8)
    read_one[1, 1](d, 4, out)  # written by the first launch
    assert out[0] == 4
    with pytest.raises(cuda.SanitizerError, match=r"uninitialized read.*array 'a' element \[5\]"):
        read_one[1, 1](d, 5, out)
