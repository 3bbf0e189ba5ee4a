"""Streams and events on a real AMD GPU (skipped without one)."""

import numpy as np
import pytest

from pykern.runtime.memory.arrays import device_array, to_device
from pykern.runtime.streams import default_stream, event, stream, synchronize

pytestmark = pytest.mark.amdgpu
HIP = {"target": "hip"}


def test_streams_are_real_and_queryable():
    s = stream(**HIP)
    assert s.handle != 0 and s.target == "hip"
    assert default_stream(**HIP).handle == 0
    a = np.arange(1 << 20, dtype=np.float32)
    d = to_device(a, stream=s, **HIP)
    out = d.copy_to_host(stream=s)
    s.synchronize()
    assert s.query() is True
    np.testing.assert_array_equal(out, a)
    synchronize(**HIP)


def test_events_time_device_work():
    s = stream(**HIP)
    e0, e1 = event(**HIP), event(**HIP)
    e0.record(s)
    d = device_array(32 << 20, np.uint8, stream=s, **HIP)
    d.copy_to_device(np.zeros(32 << 20, np.uint8), stream=s)
    e1.record(s)
    e1.synchronize()
    assert e1.query() and e0.elapsed_time(e1) > 0.0
    e1.wait(default_stream(**HIP))
    with pytest.raises(RuntimeError, match="timing"):
        event(timing=False, **HIP).elapsed_time(e1)
