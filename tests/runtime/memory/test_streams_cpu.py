"""Streams and events on the cpu target: immediate execution, host timestamps."""

import time

import numpy as np
import pytest

from pykern.runtime import streams
from pykern.runtime.memory.arrays import device_array, to_device
from pykern.runtime.streams import Event, Stream, as_stream, default_stream, event, stream, synchronize

CPU = {"target": "cpu"}


def test_stream_objects():
    s = stream(**CPU)
    assert isinstance(s, Stream) and s.target == "cpu"
    s.synchronize()
    assert s.query() is True
    with s.auto_synchronize() as t:
        assert t is s
    assert default_stream(**CPU) is default_stream(**CPU)
    assert default_stream(**CPU).is_default and int(default_stream(**CPU)) == 0
    assert as_stream(0, "cpu") is default_stream(**CPU)
    assert as_stream(None, "cpu") is default_stream(**CPU)
    assert as_stream(s, "cpu") is s
    assert as_stream(0x1234, "cpu").handle == 0x1234
    with pytest.raises(TypeError):
        as_stream("fast", "cpu")
    synchronize(**CPU)


def test_async_copies_on_a_stream():
    s = stream(**CPU)
    a = np.arange(20, dtype=np.float32)
    d = to_device(a, stream=s, **CPU)
    assert d.stream is s
    out = np.empty_like(a)
    d.copy_to_host(out, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, a)
    e = device_array(20, np.float32, stream=s, **CPU)
    e.copy_to_device(d, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(e.copy_to_host(), a)


def test_event_timing():
    s = stream(**CPU)
    start, end = event(**CPU), event(timing=True, **CPU)
    assert isinstance(start, Event) and start.timing
    assert end.query()  # never recorded: complete, as CUDA/HIP report
    start.record(s)
    time.sleep(0.03)
    end.record(s)
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert 25.0 <= ms < 5000.0
    assert streams.event_elapsed_time(start, end) == ms
    end.wait(s)


def test_event_misuse_is_reported():
    a, b = event(timing=False, **CPU), event(**CPU)
    a.record()
    b.record()
    with pytest.raises(RuntimeError, match="timing"):
        a.elapsed_time(b)
    never = event(**CPU)
    with pytest.raises(RuntimeError, match="never recorded"):
        b.elapsed_time(never)
    never.synchronize()  # as cuEventSynchronize/hipEventSynchronize: returns at once


def test_unknown_target_refused():
    with pytest.raises(ValueError, match="unknown target"):
        stream(target="cuda")
