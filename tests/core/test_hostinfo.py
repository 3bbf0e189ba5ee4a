"""One host identity (``core.hostinfo.cpu_identity``) for cache keys, artifacts and the loader,
and one reader of /proc/cpuinfo."""

import dataclasses
import os

import pytest

from pykern.core.errors import LaunchError
from pykern.core.hostinfo import cpu_identity, cpuinfo


def _artifact():
    from pykern.codegen import get_target
    from pykern.frontend import compile_ir, parse_signature

    def k(a):
        a[0] = 1.0

    return get_target("cpu").compile(compile_ir(k, parse_signature("void(float64[::1])")[1]))


def test_cache_keys_and_artifacts_carry_the_one_identity():
    from pykern.runtime.cache.key import build_key

    key = build_key({"name": "m.k", "source": "..."}, signature="(int64,)", target="cpu")
    assert key.parts["target"]["host"] == cpu_identity()
    art = _artifact()
    assert art.host_cpu == cpu_identity()
    assert not hasattr(art, "host")


@pytest.mark.parametrize("loader", ["shared object", "mcjit"])
def test_code_built_for_another_host_is_refused_on_either_path(loader):
    from pykern.codegen.cpu.target import with_shared_object
    from pykern.runtime.cpu import executor

    art = _artifact()
    if loader == "shared object":
        art = with_shared_object(art)
        if not art.shared_object:
            pytest.skip("no host linker here: artifacts carry no shared object")
    # a name not loaded yet: the process' loaded kernels are looked up by name before any check
    other = dataclasses.replace(art, name=art.name + "_elsewhere", host_cpu="elsewhere-cpu flags:0")
    with pytest.raises(LaunchError, match="compiled for another host .elsewhere-cpu"):
        executor.load(other)
    assert executor.load(art) is not None


@pytest.mark.skipif(not os.path.exists("/proc/cpuinfo"), reason="no /proc/cpuinfo")
def test_cpuinfo_fields_feed_the_identity_and_the_clock_rate():
    import hashlib

    from pykern.numba_compat.host_api import CpuDevice

    fields = cpuinfo()
    flags = fields.get("flags") or fields.get("Features") or ""
    assert cpu_identity().endswith(f"flags:{hashlib.sha256(flags.encode()).hexdigest()[:16]}")
    clock = CpuDevice().CLOCK_RATE
    if "cpu MHz" in fields:
        assert clock > 0
    else:
        assert clock == 0
