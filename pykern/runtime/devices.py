"""AMD GPU enumeration, selection and properties through the HIP runtime.

Properties come from ``hipDeviceGetAttribute`` / ``hipDeviceGetName`` (stable
across ROCm releases); only ``gcnArchName`` needs the properties struct, whose
layout changed in ROCm 6, so it is read from a generously sized buffer at the
offset of the layout matching the entry point used, and validated.

Example (on an MI210)::

    from pykern.runtime import devices
    if devices.get_device_count():
        d = devices.select_device(0)
        d.arch, d.wave_size, d.code_object_version    # ('gfx90a', 64, 5)
"""

from __future__ import annotations

import ctypes
import re
import threading
from dataclasses import dataclass

from pykern.errors import HipError
from pykern.runtime import hip_api

A = hip_api.DEVICE_ATTRIBUTES


@dataclass(frozen=True)
class Device:
    """What pykern needs to know about one GPU (all sizes in bytes)."""

    id: int
    name: str
    gcn_arch_name: str  # with target-id features: "gfx90a:sramecc+:xnack-"
    arch: str  # "gfx90a"
    features: tuple  # ("sramecc+", "xnack-")
    compute_units: int
    wave_size: int
    max_shared_per_block: int  # LDS a block may use
    max_threads_per_block: int
    max_block_dim: tuple
    max_grid_dim: tuple
    clock_khz: int
    memory_clock_khz: int
    total_memory: int
    pci_bus_id: str
    runtime_version: int  # HIP_VERSION: major*10_000_000 + minor*100_000 + patch
    driver_version: int

    @property
    def code_object_version(self) -> int:
        """The code object version this runtime loads (5 for ROCm >= 6, else 4)."""
        return code_object_version_for(self.runtime_version)

    @property
    def target_id(self) -> str:
        """The arch with features, as LLVM's ``-mcpu``/target-id wants it."""
        return self.gcn_arch_name

    arch_target_id = target_id  # the name the compiler driver uses

    # numba spelling, so ``pykern.get_current_device().compute_capability``-style code reads.
    @property
    def MULTIPROCESSOR_COUNT(self) -> int:
        return self.compute_units

    @property
    def WARP_SIZE(self) -> int:
        return self.wave_size

    @property
    def MAX_THREADS_PER_BLOCK(self) -> int:
        return self.max_threads_per_block

    @property
    def MAX_SHARED_MEMORY_PER_BLOCK(self) -> int:
        return self.max_shared_per_block


def code_object_version_for(runtime_version: int) -> int:
    """Code object version to emit for a HIP runtime version (``hipRuntimeGetVersion``).

    >>> code_object_version_for(60_200_000), code_object_version_for(50_221_153)
    (5, 4)
    """
    major = runtime_version // 10_000_000
    return 5 if major >= 6 else 4


def runtime_version() -> int:
    """hipRuntimeGetVersion() of the loaded HIP runtime (e.g. 50221153 for ROCm 5.2)."""
    from pykern.runtime.hip import lib

    return lib().runtime_version()


def preferred_code_object_version() -> int:
    """The code object version to emit for the loaded HIP runtime (5 for ROCm >= 6, else 4)."""
    return code_object_version_for(runtime_version())


_ARCH_RE = re.compile(r"^gfx[0-9a-f]{2,5}(?::[A-Za-z0-9_]+[+-])*$")


def parse_gcn_arch_name(name: str) -> tuple[str, tuple]:
    """Split a target id into ``(arch, features)``.

    >>> parse_gcn_arch_name("gfx90a:sramecc+:xnack-")
    ('gfx90a', ('sramecc+', 'xnack-'))
    """
    parts = name.strip().split(":")
    return parts[0], tuple(p for p in parts[1:] if p)


# --- the properties struct, only as far as gcnArchName -----------------------
class _DeviceArch(ctypes.Structure):
    _fields_ = [("bits", ctypes.c_uint)]  # 21 one-bit flags packed in an unsigned


class _PropsR0000(ctypes.Structure):
    """hipDeviceProp_t of ROCm <= 5 (hipGetDeviceProperties), up to gcnArchName."""

    _fields_ = [
        ("name", ctypes.c_char * 256),
        ("totalGlobalMem", ctypes.c_size_t),
        ("sharedMemPerBlock", ctypes.c_size_t),
        ("regsPerBlock", ctypes.c_int),
        ("warpSize", ctypes.c_int),
        ("maxThreadsPerBlock", ctypes.c_int),
        ("maxThreadsDim", ctypes.c_int * 3),
        ("maxGridSize", ctypes.c_int * 3),
        ("clockRate", ctypes.c_int),
        ("memoryClockRate", ctypes.c_int),
        ("memoryBusWidth", ctypes.c_int),
        ("totalConstMem", ctypes.c_size_t),
        ("major", ctypes.c_int),
        ("minor", ctypes.c_int),
        ("multiProcessorCount", ctypes.c_int),
        ("l2CacheSize", ctypes.c_int),
        ("maxThreadsPerMultiProcessor", ctypes.c_int),
        ("computeMode", ctypes.c_int),
        ("clockInstructionRate", ctypes.c_int),
        ("arch", _DeviceArch),
        ("concurrentKernels", ctypes.c_int),
        ("pciDomainID", ctypes.c_int),
        ("pciBusID", ctypes.c_int),
        ("pciDeviceID", ctypes.c_int),
        ("maxSharedMemoryPerMultiProcessor", ctypes.c_size_t),
        ("isMultiGpuBoard", ctypes.c_int),
        ("canMapHostMemory", ctypes.c_int),
        ("gcnArch", ctypes.c_int),
        ("gcnArchName", ctypes.c_char * 256),
    ]


def _ints(n):
    return ctypes.c_int * n


class _PropsR0600(ctypes.Structure):
    """hipDeviceProp_tR0600 of ROCm >= 6 (hipGetDevicePropertiesR0600), up to gcnArchName."""

    _fields_ = [
        ("name", ctypes.c_char * 256),
        ("uuid", ctypes.c_char * 16),
        ("luid", ctypes.c_char * 8),
        ("luidDeviceNodeMask", ctypes.c_uint),
        ("totalGlobalMem", ctypes.c_size_t),
        ("sharedMemPerBlock", ctypes.c_size_t),
        ("regsPerBlock", ctypes.c_int),
        ("warpSize", ctypes.c_int),
        ("memPitch", ctypes.c_size_t),
        ("maxThreadsPerBlock", ctypes.c_int),
        ("maxThreadsDim", _ints(3)),
        ("maxGridSize", _ints(3)),
        ("clockRate", ctypes.c_int),
        ("totalConstMem", ctypes.c_size_t),
        ("major", ctypes.c_int),
        ("minor", ctypes.c_int),
        ("textureAlignment", ctypes.c_size_t),
        ("texturePitchAlignment", ctypes.c_size_t),
        ("deviceOverlap", ctypes.c_int),
        ("multiProcessorCount", ctypes.c_int),
        ("kernelExecTimeoutEnabled", ctypes.c_int),
        ("integrated", ctypes.c_int),
        ("canMapHostMemory", ctypes.c_int),
        ("computeMode", ctypes.c_int),
        ("maxTexture1D", ctypes.c_int),
        ("maxTexture1DMipmap", ctypes.c_int),
        ("maxTexture1DLinear", ctypes.c_int),
        ("maxTexture2D", _ints(2)),
        ("maxTexture2DMipmap", _ints(2)),
        ("maxTexture2DLinear", _ints(3)),
        ("maxTexture2DGather", _ints(2)),
        ("maxTexture3D", _ints(3)),
        ("maxTexture3DAlt", _ints(3)),
        ("maxTextureCubemap", ctypes.c_int),
        ("maxTexture1DLayered", _ints(2)),
        ("maxTexture2DLayered", _ints(3)),
        ("maxTextureCubemapLayered", _ints(2)),
        ("maxSurface1D", ctypes.c_int),
        ("maxSurface2D", _ints(2)),
        ("maxSurface3D", _ints(3)),
        ("maxSurface1DLayered", _ints(2)),
        ("maxSurface2DLayered", _ints(3)),
        ("maxSurfaceCubemap", ctypes.c_int),
        ("maxSurfaceCubemapLayered", _ints(2)),
        ("surfaceAlignment", ctypes.c_size_t),
        ("concurrentKernels", ctypes.c_int),
        ("ECCEnabled", ctypes.c_int),
        ("pciBusID", ctypes.c_int),
        ("pciDeviceID", ctypes.c_int),
        ("pciDomainID", ctypes.c_int),
        ("tccDriver", ctypes.c_int),
        ("asyncEngineCount", ctypes.c_int),
        ("unifiedAddressing", ctypes.c_int),
        ("memoryClockRate", ctypes.c_int),
        ("memoryBusWidth", ctypes.c_int),
        ("l2CacheSize", ctypes.c_int),
        ("persistingL2CacheMaxSize", ctypes.c_int),
        ("maxThreadsPerMultiProcessor", ctypes.c_int),
        ("streamPrioritiesSupported", ctypes.c_int),
        ("globalL1CacheSupported", ctypes.c_int),
        ("localL1CacheSupported", ctypes.c_int),
        ("sharedMemPerMultiprocessor", ctypes.c_size_t),
        ("regsPerMultiprocessor", ctypes.c_int),
        ("managedMemory", ctypes.c_int),
        ("isMultiGpuBoard", ctypes.c_int),
        ("multiGpuBoardGroupID", ctypes.c_int),
        ("hostNativeAtomicSupported", ctypes.c_int),
        ("singleToDoublePrecisionPerfRatio", ctypes.c_int),
        ("pageableMemoryAccess", ctypes.c_int),
        ("concurrentManagedAccess", ctypes.c_int),
        ("computePreemptionSupported", ctypes.c_int),
        ("canUseHostPointerForRegisteredMem", ctypes.c_int),
        ("cooperativeLaunch", ctypes.c_int),
        ("cooperativeMultiDeviceLaunch", ctypes.c_int),
        ("sharedMemPerBlockOptin", ctypes.c_size_t),
        ("pageableMemoryAccessUsesHostPageTables", ctypes.c_int),
        ("directManagedMemAccessFromHost", ctypes.c_int),
        ("maxBlocksPerMultiProcessor", ctypes.c_int),
        ("accessPolicyMaxWindowSize", ctypes.c_int),
        ("reservedSharedMemPerBlock", ctypes.c_size_t),
        ("hostRegisterSupported", ctypes.c_int),
        ("sparseHipArraySupported", ctypes.c_int),
        ("hostRegisterReadOnlySupported", ctypes.c_int),
        ("timelineSemaphoreInteropSupported", ctypes.c_int),
        ("memoryPoolsSupported", ctypes.c_int),
        ("gpuDirectRDMASupported", ctypes.c_int),
        ("gpuDirectRDMAFlushWritesOptions", ctypes.c_uint),
        ("gpuDirectRDMAWritesOrdering", ctypes.c_int),
        ("memoryPoolSupportedHandleTypes", ctypes.c_uint),
        ("deferredMappingHipArraySupported", ctypes.c_int),
        ("ipcEventSupported", ctypes.c_int),
        ("clusterLaunch", ctypes.c_int),
        ("unifiedFunctionPointers", ctypes.c_int),
        ("reserved", _ints(63)),
        ("hipReserved", _ints(32)),
        ("gcnArchName", ctypes.c_char * 256),
    ]


GCN_ARCH_NAME_OFFSET = {
    "hipGetDeviceProperties": _PropsR0000.gcnArchName.offset,
    "hipGetDevicePropertiesR0600": _PropsR0600.gcnArchName.offset,
}
_PROPS_BUFFER = 16384  # far larger than any layout so far: a newer, longer struct cannot overrun
_SCAN_RE = re.compile(rb"gfx[0-9a-f]{2,5}(?::[A-Za-z0-9_]+[+-])*\x00")


def _gcn_arch_name(library, device: int) -> str:
    buf = ctypes.create_string_buffer(_PROPS_BUFFER)
    entry = "hipGetDevicePropertiesR0600" if hasattr(library, "hipGetDevicePropertiesR0600") else "hipGetDeviceProperties"
    getattr(library, entry)(ctypes.cast(buf, ctypes.c_void_p), device)
    off = GCN_ARCH_NAME_OFFSET[entry]
    raw = buf.raw[off : off + 256].split(b"\x00", 1)[0].decode(errors="replace")
    if _ARCH_RE.match(raw):
        return raw
    # layout drifted in some release: the arch string is still unmistakable
    m = _SCAN_RE.search(buf.raw)
    if m:
        return m.group(0)[:-1].decode()
    raise HipError(-1, "hipErrorUnknown", f"{entry}: no gcnArchName found in the device properties (read {raw!r})")


def _attr(library, name: str, device: int) -> int:
    v = ctypes.c_int()
    library.hipDeviceGetAttribute(ctypes.byref(v), A[name], device)
    return v.value


def query_device(device_id: int) -> Device:
    """Read the properties of device ``device_id`` from the runtime."""
    from pykern.runtime.hip import lib

    L = lib()
    namebuf = ctypes.create_string_buffer(256)
    L.hipDeviceGetName(namebuf, 256, device_id)
    gcn = _gcn_arch_name(L, device_id)
    arch, feats = parse_gcn_arch_name(gcn)
    total = ctypes.c_size_t()
    L.hipDeviceTotalMem(ctypes.byref(total), device_id)
    pci = ctypes.create_string_buffer(64)
    try:
        L.hipDeviceGetPCIBusId(pci, 64, device_id)
        pci_id = pci.value.decode()
    except HipError:
        pci_id = ""
    rt, drv = ctypes.c_int(), ctypes.c_int()
    L.hipRuntimeGetVersion(ctypes.byref(rt))
    L.hipDriverGetVersion(ctypes.byref(drv))
    g = lambda n: _attr(L, n, device_id)  # noqa: E731
    return Device(
        id=device_id,
        name=namebuf.value.decode(errors="replace"),
        gcn_arch_name=gcn,
        arch=arch,
        features=feats,
        compute_units=g("hipDeviceAttributeMultiprocessorCount"),
        wave_size=g("hipDeviceAttributeWarpSize"),
        max_shared_per_block=g("hipDeviceAttributeMaxSharedMemoryPerBlock"),
        max_threads_per_block=g("hipDeviceAttributeMaxThreadsPerBlock"),
        max_block_dim=tuple(g(f"hipDeviceAttributeMaxBlockDim{c}") for c in "XYZ"),
        max_grid_dim=tuple(g(f"hipDeviceAttributeMaxGridDim{c}") for c in "XYZ"),
        clock_khz=g("hipDeviceAttributeClockRate"),
        memory_clock_khz=g("hipDeviceAttributeMemoryClockRate"),
        total_memory=total.value,
        pci_bus_id=pci_id,
        runtime_version=rt.value,
        driver_version=drv.value,
    )


_lock = threading.Lock()
_devices: dict[int, Device] = {}
_current: list[int] = [0]


def get_device_count() -> int:
    """Number of AMD GPUs; 0 when the runtime reports hipErrorNoDevice."""
    from pykern.runtime import hip

    try:
        return hip.device_count()
    except HipError as e:
        if e.code == hip_api.hipErrorNoDevice:
            return 0
        raise


def get_device(device_id: int | None = None) -> Device:
    """Properties of ``device_id`` (default: the selected device), queried once."""
    i = _current[0] if device_id is None else device_id
    d = _devices.get(i)
    if d is None:
        with _lock:
            d = _devices.get(i)
            if d is None:
                n = get_device_count()
                if n == 0:
                    from pykern.runtime import hip

                    raise HipError(100, "hipErrorNoDevice", f"no AMD GPU to use: {hip.available()[1]}", "pykern")
                if not 0 <= i < n:
                    raise HipError(101, "hipErrorInvalidDevice", f"device {i} does not exist ({n} AMD GPU(s) present)")
                d = _devices[i] = query_device(i)
    return d


def list_devices() -> list[Device]:
    """Every visible device (empty list when there is none)."""
    return [get_device(i) for i in range(get_device_count())]


def select_device(device_id: int) -> Device:
    """Make ``device_id`` current for this process's pykern calls (hipSetDevice)."""
    from pykern.runtime.hip import lib

    d = get_device(device_id)
    lib().hipSetDevice(device_id)
    _current[0] = device_id
    return d


def current_device_id() -> int:
    """The device pykern allocates on and launches to."""
    return _current[0]


def ensure_current(device_id: int) -> None:
    """hipSetDevice(device_id) on this thread (HIP's current device is per thread)."""
    from pykern.runtime.hip import lib

    get_device(device_id)  # a clear error when there is no such device (cached after the first call)
    cur = ctypes.c_int(-1)
    L = lib()
    L.hipGetDevice(ctypes.byref(cur))
    if cur.value != device_id:
        L.hipSetDevice(device_id)
