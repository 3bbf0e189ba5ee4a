"""AMD GPU enumeration, selection and properties through the HIP runtime.

Properties come from ``hipDeviceGetAttribute`` / ``hipDeviceGetName`` (stable
across ROCm releases); only ``gcnArchName`` needs the properties struct, which
``hip_props`` reads.

Example (on an MI210)::

    from pykern.runtime import device_registry as devices
    if devices.get_device_count():
        d = devices.select_device(0)
        d.arch, d.wave_size, d.code_object_version    # ('gfx90a', 64, 5)
"""

from __future__ import annotations

import ctypes
import operator
import threading
from dataclasses import dataclass

from pykern.core.errors import HipError
from pykern.runtime.hip import library as hip
from pykern.runtime.hip import api as hip_api
from pykern.runtime.hip import properties as hip_props

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

    @property
    def compute_capability(self) -> tuple:
        """numba's ``(major, minor)``: HIP's own for an AMD GPU (``hipDeviceProp_t.major/minor``),
        read from the arch name (see ``compute_capability_of``)."""
        return compute_capability_of(self.arch)

    @property
    def uuid(self) -> str:
        """numba's ``Device.uuid`` spelling; AMD GPUs are named by their PCI bus id here."""
        return f"GPU-{self.pci_bus_id}" if self.pci_bus_id else f"GPU-{self.id}"

    def reset(self) -> None:
        """numba's ``Device.reset``: wait for the device's work (pykern frees memory with its arrays)."""
        ensure_current(self.id)
        hip.lib().hipDeviceSynchronize()

    def __enter__(self):
        """``with pykern.gpus[i]:`` makes device ``i`` current inside the block, as numba's."""
        prev = _current[0]
        select_device(self.id)
        _previous.setdefault(threading.get_ident(), []).append(prev)
        return self

    def __exit__(self, *exc):
        select_device(_previous[threading.get_ident()].pop())


# numba's spellings of the same properties, so ``pykern.get_current_device().WARP_SIZE``-style code reads.
_NUMBA_NAMES = {
    "MULTIPROCESSOR_COUNT": "compute_units",
    "WARP_SIZE": "wave_size",
    "MAX_THREADS_PER_BLOCK": "max_threads_per_block",
    "MAX_SHARED_MEMORY_PER_BLOCK": "max_shared_per_block",
}
for _numba, _ours in _NUMBA_NAMES.items():
    setattr(Device, _numba, property(operator.attrgetter(_ours), doc=f"numba's name for ``{_ours}``"))

#: numba's ``Device`` reads any ``CU_DEVICE_ATTRIBUTE_<NAME>`` as ``device.<NAME>`` (programs print
#: ``dev.MAX_BLOCK_DIM_Y``, size blocks by ``dev.MAX_REGISTERS_PER_BLOCK``): HIP's attribute of each.
NUMBA_ATTRIBUTES: dict[str, str] = {
    "MAX_THREADS_PER_BLOCK": "hipDeviceAttributeMaxThreadsPerBlock",
    "MAX_BLOCK_DIM_X": "hipDeviceAttributeMaxBlockDimX",
    "MAX_BLOCK_DIM_Y": "hipDeviceAttributeMaxBlockDimY",
    "MAX_BLOCK_DIM_Z": "hipDeviceAttributeMaxBlockDimZ",
    "MAX_GRID_DIM_X": "hipDeviceAttributeMaxGridDimX",
    "MAX_GRID_DIM_Y": "hipDeviceAttributeMaxGridDimY",
    "MAX_GRID_DIM_Z": "hipDeviceAttributeMaxGridDimZ",
    "MAX_SHARED_MEMORY_PER_BLOCK": "hipDeviceAttributeMaxSharedMemoryPerBlock",
    "SHARED_MEMORY_PER_BLOCK": "hipDeviceAttributeMaxSharedMemoryPerBlock",
    "TOTAL_CONSTANT_MEMORY": "hipDeviceAttributeTotalConstantMemory",
    "WARP_SIZE": "hipDeviceAttributeWarpSize",
    "MAX_PITCH": "hipDeviceAttributeMaxPitch",
    "MAX_REGISTERS_PER_BLOCK": "hipDeviceAttributeMaxRegistersPerBlock",
    "REGISTERS_PER_BLOCK": "hipDeviceAttributeMaxRegistersPerBlock",
    "CLOCK_RATE": "hipDeviceAttributeClockRate",
    "TEXTURE_ALIGNMENT": "hipDeviceAttributeTextureAlignment",
    "GPU_OVERLAP": "hipDeviceAttributeDeviceOverlap",
    "MULTIPROCESSOR_COUNT": "hipDeviceAttributeMultiprocessorCount",
    "KERNEL_EXEC_TIMEOUT": "hipDeviceAttributeKernelExecTimeout",
    "INTEGRATED": "hipDeviceAttributeIntegrated",
    "CAN_MAP_HOST_MEMORY": "hipDeviceAttributeCanMapHostMemory",
    "COMPUTE_MODE": "hipDeviceAttributeComputeMode",
    "CONCURRENT_KERNELS": "hipDeviceAttributeConcurrentKernels",
    "ECC_ENABLED": "hipDeviceAttributeEccEnabled",
    "PCI_BUS_ID": "hipDeviceAttributePciBusId",
    "PCI_DEVICE_ID": "hipDeviceAttributePciDeviceId",
    "PCI_DOMAIN_ID": "hipDeviceAttributePciDomainID",
    "TCC_DRIVER": "hipDeviceAttributeTccDriver",
    "MEMORY_CLOCK_RATE": "hipDeviceAttributeMemoryClockRate",
    "GLOBAL_MEMORY_BUS_WIDTH": "hipDeviceAttributeMemoryBusWidth",
    "L2_CACHE_SIZE": "hipDeviceAttributeL2CacheSize",
    "MAX_THREADS_PER_MULTI_PROCESSOR": "hipDeviceAttributeMaxThreadsPerMultiProcessor",
    "ASYNC_ENGINE_COUNT": "hipDeviceAttributeAsyncEngineCount",
    "UNIFIED_ADDRESSING": "hipDeviceAttributeUnifiedAddressing",
    "COMPUTE_CAPABILITY_MAJOR": "hipDeviceAttributeComputeCapabilityMajor",
    "COMPUTE_CAPABILITY_MINOR": "hipDeviceAttributeComputeCapabilityMinor",
    "STREAM_PRIORITIES_SUPPORTED": "hipDeviceAttributeStreamPrioritiesSupported",
    "GLOBAL_L1_CACHE_SUPPORTED": "hipDeviceAttributeGlobalL1CacheSupported",
    "LOCAL_L1_CACHE_SUPPORTED": "hipDeviceAttributeLocalL1CacheSupported",
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": "hipDeviceAttributeMaxSharedMemoryPerMultiprocessor",
    "MAX_REGISTERS_PER_MULTIPROCESSOR": "hipDeviceAttributeMaxRegistersPerMultiprocessor",
    "MANAGED_MEMORY": "hipDeviceAttributeManagedMemory",
    "MULTI_GPU_BOARD": "hipDeviceAttributeIsMultiGpuBoard",
    "MULTI_GPU_BOARD_GROUP_ID": "hipDeviceAttributeMultiGpuBoardGroupID",
    "HOST_NATIVE_ATOMIC_SUPPORTED": "hipDeviceAttributeHostNativeAtomicSupported",
    "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO": "hipDeviceAttributeSingleToDoublePrecisionPerfRatio",
    "PAGEABLE_MEMORY_ACCESS": "hipDeviceAttributePageableMemoryAccess",
    "CONCURRENT_MANAGED_ACCESS": "hipDeviceAttributeConcurrentManagedAccess",
    "COMPUTE_PREEMPTION_SUPPORTED": "hipDeviceAttributeComputePreemptionSupported",
    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": "hipDeviceAttributeCanUseHostPointerForRegisteredMem",
    "COOPERATIVE_LAUNCH": "hipDeviceAttributeCooperativeLaunch",
    "COOPERATIVE_MULTI_DEVICE_LAUNCH": "hipDeviceAttributeCooperativeMultiDeviceLaunch",
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": "hipDeviceAttributeSharedMemPerBlockOptin",
    "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST": "hipDeviceAttributeDirectManagedMemAccessFromHost",
    "MAX_PERSISTING_L2_CACHE_SIZE": "hipDeviceAttributePersistingL2CacheMaxSize",
    "MAX_BLOCKS_PER_MULTIPROCESSOR": "hipDeviceAttributeMaxBlocksPerMultiProcessor",
    "RESERVED_SHARED_MEMORY_PER_BLOCK": "hipDeviceAttributeReservedSharedMemPerBlock",
    "MEMORY_POOLS_SUPPORTED": "hipDeviceAttributeMemoryPoolsSupported",
}


def _numba_attribute(self: Device, name: str) -> int:
    hip_name = NUMBA_ATTRIBUTES.get(name)
    if hip_name is None:
        raise AttributeError(f"'Device' object has no attribute '{name}'")
    return _attr(hip.lib(), hip_name, self.id)


Device.__getattr__ = _numba_attribute  # only for names the dataclass does not have


def compute_capability_of(arch: str) -> tuple:
    """``(major, minor)`` for a gfx arch as HIP reports it (``hipDeviceAttributeComputeCapabilityMajor/
    Minor``): the arch number without its last (stepping) digit, the minor its last hex digit but one.

    >>> compute_capability_of("gfx90a"), compute_capability_of("gfx942"), compute_capability_of("gfx1100")
    ((9, 0), (9, 4), (11, 0))
    """
    num = arch.split(":")[0].removeprefix("gfx")
    if len(num) < 3 or not num[:-2].isdigit():
        raise ValueError(f"not a gfx arch name: {arch!r}")
    return int(num[:-2]), int(num[-2], 16)


def code_object_version_for(runtime_version: int) -> int:
    """Code object version to emit for a HIP runtime version (``hipRuntimeGetVersion``).

    >>> code_object_version_for(60_200_000), code_object_version_for(50_221_153)
    (5, 4)
    """
    major = runtime_version // 10_000_000
    return 5 if major >= 6 else 4


def runtime_version() -> int:
    """hipRuntimeGetVersion() of the loaded HIP runtime (e.g. 50221153 for ROCm 5.2)."""
    return hip.lib().runtime_version()


def preferred_code_object_version() -> int:
    """The code object version to emit for the loaded HIP runtime (5 for ROCm >= 6, else 4)."""
    return code_object_version_for(runtime_version())


def _attr(library, name: str, device: int) -> int:
    v = ctypes.c_int()
    library.hipDeviceGetAttribute(ctypes.byref(v), A[name], device)
    return v.value


def query_device(device_id: int) -> Device:
    """Read the properties of device ``device_id`` from the runtime."""
    L = hip.lib()
    namebuf = ctypes.create_string_buffer(256)
    L.hipDeviceGetName(namebuf, 256, device_id)
    gcn = hip_props.gcn_arch_name(L, device_id)
    arch, feats = hip_props.parse_gcn_arch_name(gcn)
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
_previous: dict[int, list] = {}  # thread -> devices current before each ``with gpu:`` it entered


def get_device_count() -> int:
    """Number of AMD GPUs; 0 when the runtime reports hipErrorNoDevice."""
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
    d = get_device(device_id)
    hip.lib().hipSetDevice(device_id)
    _current[0] = device_id
    return d


def current_device_id() -> int:
    """The device pykern allocates on and launches to."""
    return _current[0]


def ensure_current(device_id: int) -> None:
    """hipSetDevice(device_id) on this thread (HIP's current device is per thread)."""
    get_device(device_id)  # a clear error when there is no such device (cached after the first call)
    cur = ctypes.c_int(-1)
    L = hip.lib()
    L.hipGetDevice(ctypes.byref(cur))
    if cur.value != device_id:
        L.hipSetDevice(device_id)
