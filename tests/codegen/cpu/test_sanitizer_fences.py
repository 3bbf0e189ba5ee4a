"""The sanitizer's model of fences and atomics between blocks (``sanitize=``): message passing and
the last-block reduction are clean with a fence before the releasing atomic and one after the
acquiring atomic, and report the race (with both accesses) when either fence is missing."""

import numpy as np
import pytest

import pykern as cuda
from pykern import int32

from tests.codegen.cpu.test_sanitizer import hazards, line_of

pytestmark = pytest.mark.usefixtures("cpu_uncached")

NB = 4


# ---- the last-block reduction: every block publishes a partial, the last to finish sums them
@cuda.jit(device=True)
def sum_partials(partial, out):
    s = 0
    for k in range(cuda.gridDim.x):
        s += partial[k]  # SUM
    out[0] = s


@cuda.jit(sanitize="all")
def last_block_sum(a, partial, count, out):
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        partial[b] = a[b] * 2  # PUBLISH
        cuda.threadfence()  # what this thread wrote is released by its next atomic
        if cuda.atomic.add(count, 0, 1) == cuda.gridDim.x - 1:
            cuda.threadfence()  # the atomic that saw every other block's ticket acquires their partials
            sum_partials(partial, out)


@cuda.jit(sanitize="all")
def last_block_sum_no_release(a, partial, count, out):
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = a[cuda.blockIdx.x] * 2  # PUBLISH
        if cuda.atomic.add(count, 0, 1) == cuda.gridDim.x - 1:
            cuda.threadfence()
            sum_partials(partial, out)


@cuda.jit(sanitize="all")
def last_block_sum_no_acquire(a, partial, count, out):
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = a[cuda.blockIdx.x] * 2  # PUBLISH
        cuda.threadfence()
        if cuda.atomic.add(count, 0, 1) == cuda.gridDim.x - 1:
            sum_partials(partial, out)


def _sum_args():
    a = np.arange(1, NB + 1, dtype=np.int32)
    return a, np.zeros(NB, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)


def test_last_block_reduction_with_both_fences_is_clean_and_right():
    a, partial, count, out = _sum_args()
    assert hazards(last_block_sum, NB, 32, a, partial, count, out) == []
    assert out[0] == 2 * a.sum() and count[0] == NB


@pytest.mark.parametrize("kernel", [last_block_sum_no_release, last_block_sum_no_acquire])
def test_last_block_reduction_without_a_fence_races(kernel):
    publish, total = line_of(kernel, "PUBLISH"), line_of(sum_partials, "SUM")
    got = hazards(kernel, NB, 32, *_sum_args())
    # the last block (3) reads the partials of blocks 0..2, written before their atomics with
    # nothing ordering the two: one hazard (the same two sites), three instances
    assert got == [("race", "array 'partial' element [0]", ("write", publish, (0, 0, 0), (0, 0, 0), 0),
                    ("read", total, (0, 0, 0), (NB - 1, 0, 0), 0), NB - 1)]


# ---- message passing through a flag, every thread of the consumer block reading after a barrier
@cuda.jit(sanitize="all")
def message(data, flag, out):
    t = cuda.threadIdx.x
    if cuda.blockIdx.x == 0:
        data[t] = t + 100  # SEND
        cuda.syncthreads()
        if t == 0:
            cuda.threadfence()
            cuda.atomic.exch(flag, 0, 1)
    else:
        if t == 0:
            while cuda.atomic.add(flag, 0, 0) == 0:
                pass
            cuda.threadfence()
        cuda.syncthreads()  # the acquire reaches the block's other threads
        out[t] = data[t]  # RECEIVE


@cuda.jit(sanitize="all")
def message_per_thread(data, flag, out):
    t = cuda.threadIdx.x
    if cuda.blockIdx.x == 0:
        data[t] = t + 100
        cuda.threadfence()
        cuda.atomic.add(flag, 0, 1)
    else:
        while cuda.atomic.add(flag, 0, 0) < cuda.blockDim.x:
            pass
        cuda.threadfence()
        out[t] = data[t]


@cuda.jit(sanitize="all")
def message_no_fence(data, flag, out):
    t = cuda.threadIdx.x
    if cuda.blockIdx.x == 0:
        data[t] = t + 100  # SEND
        cuda.atomic.add(flag, 0, 1)
    else:
        while cuda.atomic.add(flag, 0, 0) < cuda.blockDim.x:
            pass
        cuda.threadfence()
        out[t] = data[t]  # RECEIVE


def test_message_passing_through_a_flag_is_clean_and_right():
    for kernel in (message_per_thread, message):
        data, flag, out = np.zeros(32, np.int32), np.zeros(1, np.int32), np.zeros(32, np.int32)
        assert hazards(kernel, 2, 32, data, flag, out) == [], kernel
        np.testing.assert_array_equal(out, np.arange(32) + 100)


def test_message_without_the_sender_fence_races():
    send, receive = line_of(message_no_fence, "SEND"), line_of(message_no_fence, "RECEIVE")
    got = hazards(message_no_fence, 2, 32, np.zeros(32, np.int32), np.zeros(1, np.int32), np.zeros(32, np.int32))
    assert got == [("race", "array 'data' element [0]", ("write", send, (0, 0, 0), (0, 0, 0), 0),
                    ("read", receive, (0, 0, 0), (1, 0, 0), 0), 32)]


@cuda.jit(sanitize="all")
def message_block_fence_only(data, flag, out):
    t = cuda.threadIdx.x
    if cuda.blockIdx.x == 0:
        data[t] = t + 100  # SEND
        cuda.threadfence_block()  # orders nothing for another block
        cuda.atomic.add(flag, 0, 1)
    else:
        while cuda.atomic.add(flag, 0, 0) < cuda.blockDim.x:
            pass
        cuda.threadfence()
        out[t] = data[t]  # RECEIVE


def test_a_block_scope_fence_does_not_order_blocks():
    got = hazards(message_block_fence_only, 2, 32, np.zeros(32, np.int32), np.zeros(1, np.int32),
                  np.zeros(32, np.int32))
    assert [(h[0], h[1], h[4]) for h in got] == [("race", "array 'data' element [0]", 32)]


@cuda.jit(sanitize="all")
def fenced_but_other_flag(data, flag, other, out):
    t = cuda.threadIdx.x
    if cuda.blockIdx.x == 0:
        data[t] = t + 100  # SEND
        cuda.threadfence()
        cuda.atomic.add(flag, 0, 1)
    else:
        cuda.atomic.add(other, 0, 1)  # an atomic of another address acquires nothing
        cuda.threadfence()
        out[t] = data[t]  # RECEIVE


def test_an_atomic_of_another_address_does_not_acquire():
    got = hazards(fenced_but_other_flag, 2, 32, np.zeros(32, np.int32), np.zeros(1, np.int32),
                  np.zeros(1, np.int32), np.zeros(32, np.int32))
    assert [(h[0], h[1], h[4]) for h in got] == [("race", "array 'data' element [0]", 32)]


# ---- local arrays: reports name the element
@cuda.jit(sanitize="init")
def local_2d(out):
    t = cuda.local.array((2, 3), int32)
    for i in range(2):
        t[i, 0] = i
    out[0] = t[1, 0] + t[1, 2]  # READ


def test_local_array_reports_give_the_index():
    line = line_of(local_2d, "READ")
    assert hazards(local_2d, 1, 1, np.zeros(1, np.int32)) == [
        ("uninitialized", "local array 't' element [1, 2]", None, ("read", line, (0, 0, 0), (0, 0, 0), 0), 1)]
