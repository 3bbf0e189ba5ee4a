"""The HIP device properties struct, as far as ``gcnArchName``, and reading a device's target id.

Only ``gcnArchName`` needs the properties struct (everything else pykern reads
comes from ``hipDeviceGetAttribute``); its layout changed in ROCm 6, so it is
read from a generously sized buffer at the offset of the layout matching the
entry point used, and validated. Both ``hip.available()`` (which names the
archs it found) and ``devices`` (which describes each device) read it here.

Example::

    >>> parse_gcn_arch_name("gfx90a:sramecc+:xnack-")
    ('gfx90a', ('sramecc+', 'xnack-'))
"""

from __future__ import annotations

import ctypes
import re

from pykern.core.errors import HipError

_ARCH_RE = re.compile(r"^gfx[0-9a-f]{2,5}(?::[A-Za-z0-9_]+[+-])*$")


def parse_gcn_arch_name(name: str) -> tuple[str, tuple]:
    """Split a target id into ``(arch, features)``.

    >>> parse_gcn_arch_name("gfx90a:sramecc+:xnack-")
    ('gfx90a', ('sramecc+', 'xnack-'))
    """
    parts = name.strip().split(":")
    return parts[0], tuple(p for p in parts[1:] if p)


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


def gcn_arch_name(library, device: int) -> str:
    """Device ``device``'s target id (``"gfx90a:sramecc+:xnack-"``), read from the properties struct of ``library``."""
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
