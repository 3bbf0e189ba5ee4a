"""Shared pytest setup.

``amdgpu`` marker (hip-runtime section): tests that need a real AMD GPU. They
are skipped, with the reason ``hip.available()`` gives, when none is present.
"""

import contextlib
import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# Health checks about generating data, not about pykern: `st.floats(width=16)` and filtered
# strategies occasionally reject too many draws on a loaded 2-core machine, which failed a CI run
# with no failing example. Loaded here, before the test modules build their `settings(...)`.
settings.register_profile("pykern", suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
settings.load_profile("pykern")

# Hermetic runs: kernels compiled by the suite go to a fresh cache directory, never the
# user's (tests that study the cache set their own PYKERN_CACHE_DIR per test).
os.environ.setdefault("PYKERN_CACHE_DIR", tempfile.mkdtemp(prefix="pykern-test-cache-"))


@contextlib.contextmanager
def _on_the_cpu_target():
    import pykern
    from pykern import runtime as targets

    saved = list(targets._chosen)
    pykern.set_target("cpu")
    try:
        yield
    finally:
        targets._chosen[:] = saved


@pytest.fixture(scope="module")
def cpu_target():
    """Run a module's kernels on the cpu target; the previous choice comes back after."""
    with _on_the_cpu_target():
        yield


@pytest.fixture
def cpu_uncached(monkeypatch):
    """The cpu target with the disk cache off (tests that compile throwaway kernels);
    the previous target choice comes back after."""
    monkeypatch.setenv("PYKERN_CACHE", "off")
    with _on_the_cpu_target():
        yield


@pytest.fixture
def cache_env(monkeypatch):
    """No cache setting from the environment and a fixed build id ("test-build"), so cache
    keys do not change when someone edits the tree; the memoised build identity is
    forgotten before and after."""
    from pykern.runtime.cache import key as cache_key

    for k in ("PYKERN_CACHE", "PYKERN_CACHE_DIR", "PYKERN_CACHE_MAX_BYTES", "PYKERN_CACHE_EXPLAIN"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("PYKERN_BUILD_ID", "test-build")
    cache_key._memo.pop("pykern", None)
    yield
    cache_key._memo.pop("pykern", None)


# --- hip-runtime section: the amdgpu marker ----------------------------------
def pytest_configure(config):
    if not any(str(m).startswith("amdgpu:") for m in config.getini("markers")):  # pyproject may have it already
        config.addinivalue_line("markers", "amdgpu: needs a real AMD GPU (skipped with the reason when none is usable)")


def pytest_collection_modifyitems(config, items):
    marked = [it for it in items if it.get_closest_marker("amdgpu") is not None]
    if not marked:
        return
    from pykern.runtime.hip import library as hip

    ok, reason = hip.available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no usable AMD GPU: {reason}")
    for it in marked:
        it.add_marker(skip)
