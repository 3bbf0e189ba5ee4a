"""The slice of the HIP runtime API pykern calls, written down as C text.

Prototypes are kept as C type spellings (exactly as ``hip_runtime_api.h``
declares them) so that a test can compare them with the header word for word;
``CTYPES`` turns each spelling into the ctypes type used for the binding.
Nothing here loads a library: see ``pykern.runtime.hip.library`` for that.

Example::

    >>> from pykern.runtime.hip.api import PROTOTYPES, ERROR_NAMES
    >>> PROTOTYPES["hipMalloc"]
    ('hipError_t', ('void**', 'size_t'))
    >>> ERROR_NAMES[100]
    'hipErrorNoDevice'
"""

from __future__ import annotations

import ctypes

# ---------------------------------------------------------------------------
# C type spellings -> ctypes. Opaque handles (hipStream_t, ...) are pointers to
# incomplete structs in the header; passing them as void* is ABI-identical.
# Enums are C ``int``.
CTYPES = {
    "void": None,
    "hipError_t": ctypes.c_int,
    "int": ctypes.c_int,
    "unsigned int": ctypes.c_uint,
    "unsigned": ctypes.c_uint,
    "size_t": ctypes.c_size_t,
    "float": ctypes.c_float,
    "int*": ctypes.POINTER(ctypes.c_int),
    "size_t*": ctypes.POINTER(ctypes.c_size_t),
    "float*": ctypes.POINTER(ctypes.c_float),
    "char*": ctypes.c_char_p,
    "const char*": ctypes.c_char_p,
    "void*": ctypes.c_void_p,
    "const void*": ctypes.c_void_p,
    "void**": ctypes.POINTER(ctypes.c_void_p),
    "hipDevice_t": ctypes.c_int,
    "hipDeviceAttribute_t": ctypes.c_int,
    "hipMemcpyKind": ctypes.c_int,
    "hipFunction_attribute": ctypes.c_int,
    "hipStream_t": ctypes.c_void_p,
    "hipEvent_t": ctypes.c_void_p,
    "hipStreamCallback_t": ctypes.c_void_p,  # a C function pointer (ctypes.CFUNCTYPE, cast)
    "hipModule_t": ctypes.c_void_p,
    "hipFunction_t": ctypes.c_void_p,
    "hipStream_t*": ctypes.POINTER(ctypes.c_void_p),
    "hipEvent_t*": ctypes.POINTER(ctypes.c_void_p),
    "hipModule_t*": ctypes.POINTER(ctypes.c_void_p),
    "hipFunction_t*": ctypes.POINTER(ctypes.c_void_p),
    "hipDeviceptr_t*": ctypes.POINTER(ctypes.c_void_p),
    # The properties struct changes layout between ROCm releases; we pass a
    # large zeroed buffer and read only fields at offsets checked per layout.
    "hipDeviceProp_t*": ctypes.c_void_p,
    "hipDeviceProp_tR0600*": ctypes.c_void_p,
}

#: name -> (C return type, C parameter types), as hip_runtime_api.h spells them.
PROTOTYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    # errors and versions
    "hipGetErrorName": ("const char*", ("hipError_t",)),
    "hipGetErrorString": ("const char*", ("hipError_t",)),
    "hipGetLastError": ("hipError_t", ()),
    "hipInit": ("hipError_t", ("unsigned int",)),
    "hipRuntimeGetVersion": ("hipError_t", ("int*",)),
    "hipDriverGetVersion": ("hipError_t", ("int*",)),
    # devices
    "hipGetDeviceCount": ("hipError_t", ("int*",)),
    "hipSetDevice": ("hipError_t", ("int",)),
    "hipGetDevice": ("hipError_t", ("int*",)),
    "hipDeviceGetAttribute": ("hipError_t", ("int*", "hipDeviceAttribute_t", "int")),
    "hipDeviceGetName": ("hipError_t", ("char*", "int", "hipDevice_t")),
    "hipDeviceGetPCIBusId": ("hipError_t", ("char*", "int", "int")),
    "hipDeviceTotalMem": ("hipError_t", ("size_t*", "hipDevice_t")),
    "hipDeviceSynchronize": ("hipError_t", ()),
    "hipGetDeviceProperties": ("hipError_t", ("hipDeviceProp_t*", "int")),
    "hipGetDevicePropertiesR0600": ("hipError_t", ("hipDeviceProp_tR0600*", "int")),
    "hipMemGetInfo": ("hipError_t", ("size_t*", "size_t*")),
    # memory
    "hipMalloc": ("hipError_t", ("void**", "size_t")),
    "hipFree": ("hipError_t", ("void*",)),
    "hipHostMalloc": ("hipError_t", ("void**", "size_t", "unsigned int")),
    "hipHostFree": ("hipError_t", ("void*",)),
    "hipMallocManaged": ("hipError_t", ("void**", "size_t", "unsigned int")),
    "hipHostGetDevicePointer": ("hipError_t", ("void**", "void*", "unsigned int")),
    "hipHostRegister": ("hipError_t", ("void*", "size_t", "unsigned int")),
    "hipHostUnregister": ("hipError_t", ("void*",)),
    "hipMemcpy": ("hipError_t", ("void*", "const void*", "size_t", "hipMemcpyKind")),
    "hipMemcpyAsync": ("hipError_t", ("void*", "const void*", "size_t", "hipMemcpyKind", "hipStream_t")),
    "hipMemset": ("hipError_t", ("void*", "int", "size_t")),
    "hipMemsetAsync": ("hipError_t", ("void*", "int", "size_t", "hipStream_t")),
    # streams and events
    "hipStreamCreate": ("hipError_t", ("hipStream_t*",)),
    "hipStreamCreateWithFlags": ("hipError_t", ("hipStream_t*", "unsigned int")),
    "hipStreamDestroy": ("hipError_t", ("hipStream_t",)),
    "hipStreamSynchronize": ("hipError_t", ("hipStream_t",)),
    "hipStreamQuery": ("hipError_t", ("hipStream_t",)),
    "hipStreamWaitEvent": ("hipError_t", ("hipStream_t", "hipEvent_t", "unsigned int")),
    "hipStreamAddCallback": ("hipError_t", ("hipStream_t", "hipStreamCallback_t", "void*", "unsigned int")),
    "hipEventCreate": ("hipError_t", ("hipEvent_t*",)),
    "hipEventCreateWithFlags": ("hipError_t", ("hipEvent_t*", "unsigned")),
    "hipEventRecord": ("hipError_t", ("hipEvent_t", "hipStream_t")),
    "hipEventSynchronize": ("hipError_t", ("hipEvent_t",)),
    "hipEventQuery": ("hipError_t", ("hipEvent_t",)),
    "hipEventElapsedTime": ("hipError_t", ("float*", "hipEvent_t", "hipEvent_t")),
    "hipEventDestroy": ("hipError_t", ("hipEvent_t",)),
    # modules and launch
    "hipModuleLoadData": ("hipError_t", ("hipModule_t*", "const void*")),
    "hipModuleUnload": ("hipError_t", ("hipModule_t",)),
    "hipModuleGetFunction": ("hipError_t", ("hipFunction_t*", "hipModule_t", "const char*")),
    "hipModuleGetGlobal": ("hipError_t", ("hipDeviceptr_t*", "size_t*", "hipModule_t", "const char*")),
    "hipFuncGetAttribute": ("hipError_t", ("int*", "hipFunction_attribute", "hipFunction_t")),
    "hipModuleLaunchKernel": (
        "hipError_t",
        (
            "hipFunction_t",
            "unsigned int", "unsigned int", "unsigned int",
            "unsigned int", "unsigned int", "unsigned int",
            "unsigned int", "hipStream_t", "void**", "void**",
        ),
    ),
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor": ("hipError_t", ("int*", "hipFunction_t", "int", "size_t")),
    # cooperative launch through the module API (ROCm >= 6.x; no ``extra``: kernelParams only)
    "hipModuleLaunchCooperativeKernel": (
        "hipError_t",
        (
            "hipFunction_t",
            "unsigned int", "unsigned int", "unsigned int",
            "unsigned int", "unsigned int", "unsigned int",
            "unsigned int", "hipStream_t", "void**",
        ),
    ),
}

#: Entry points that only newer runtimes export; a binding missing from the
#: loaded library is left unbound instead of failing the load.
OPTIONAL = frozenset({"hipGetDevicePropertiesR0600", "hipGetDeviceProperties", "hipModuleLaunchCooperativeKernel"})

# ---------------------------------------------------------------------------
# hipError_t, complete as of ROCm 6.x. Where the header has deprecated aliases
# (hipErrorMemoryAllocation = 2, ...) the table keeps every name and
# ERROR_NAMES maps the value to the current, first-declared one.
ERRORS: dict[str, int] = {
    "hipSuccess": 0,
    "hipErrorInvalidValue": 1,
    "hipErrorOutOfMemory": 2,
    "hipErrorMemoryAllocation": 2,
    "hipErrorNotInitialized": 3,
    "hipErrorInitializationError": 3,
    "hipErrorDeinitialized": 4,
    "hipErrorProfilerDisabled": 5,
    "hipErrorProfilerNotInitialized": 6,
    "hipErrorProfilerAlreadyStarted": 7,
    "hipErrorProfilerAlreadyStopped": 8,
    "hipErrorInvalidConfiguration": 9,
    "hipErrorInvalidPitchValue": 12,
    "hipErrorInvalidSymbol": 13,
    "hipErrorInvalidDevicePointer": 17,
    "hipErrorInvalidMemcpyDirection": 21,
    "hipErrorInsufficientDriver": 35,
    "hipErrorMissingConfiguration": 52,
    "hipErrorPriorLaunchFailure": 53,
    "hipErrorInvalidDeviceFunction": 98,
    "hipErrorNoDevice": 100,
    "hipErrorInvalidDevice": 101,
    "hipErrorInvalidImage": 200,
    "hipErrorInvalidContext": 201,
    "hipErrorContextAlreadyCurrent": 202,
    "hipErrorMapFailed": 205,
    "hipErrorMapBufferObjectFailed": 205,
    "hipErrorUnmapFailed": 206,
    "hipErrorArrayIsMapped": 207,
    "hipErrorAlreadyMapped": 208,
    "hipErrorNoBinaryForGpu": 209,
    "hipErrorAlreadyAcquired": 210,
    "hipErrorNotMapped": 211,
    "hipErrorNotMappedAsArray": 212,
    "hipErrorNotMappedAsPointer": 213,
    "hipErrorECCNotCorrectable": 214,
    "hipErrorUnsupportedLimit": 215,
    "hipErrorContextAlreadyInUse": 216,
    "hipErrorPeerAccessUnsupported": 217,
    "hipErrorInvalidKernelFile": 218,
    "hipErrorInvalidGraphicsContext": 219,
    "hipErrorInvalidSource": 300,
    "hipErrorFileNotFound": 301,
    "hipErrorSharedObjectSymbolNotFound": 302,
    "hipErrorSharedObjectInitFailed": 303,
    "hipErrorOperatingSystem": 304,
    "hipErrorInvalidHandle": 400,
    "hipErrorInvalidResourceHandle": 400,
    "hipErrorIllegalState": 401,
    "hipErrorNotFound": 500,
    "hipErrorNotReady": 600,
    "hipErrorIllegalAddress": 700,
    "hipErrorLaunchOutOfResources": 701,
    "hipErrorLaunchTimeOut": 702,
    "hipErrorPeerAccessAlreadyEnabled": 704,
    "hipErrorPeerAccessNotEnabled": 705,
    "hipErrorSetOnActiveProcess": 708,
    "hipErrorContextIsDestroyed": 709,
    "hipErrorAssert": 710,
    "hipErrorHostMemoryAlreadyRegistered": 712,
    "hipErrorHostMemoryNotRegistered": 713,
    "hipErrorLaunchFailure": 719,
    "hipErrorCooperativeLaunchTooLarge": 720,
    "hipErrorNotSupported": 801,
    "hipErrorStreamCaptureUnsupported": 900,
    "hipErrorStreamCaptureInvalidated": 901,
    "hipErrorStreamCaptureMerge": 902,
    "hipErrorStreamCaptureUnmatched": 903,
    "hipErrorStreamCaptureUnjoined": 904,
    "hipErrorStreamCaptureIsolation": 905,
    "hipErrorStreamCaptureImplicit": 906,
    "hipErrorCapturedEvent": 907,
    "hipErrorStreamCaptureWrongThread": 908,
    "hipErrorGraphExecUpdateFailure": 910,
    "hipErrorInvalidChannelDescriptor": 911,  # ROCm >= 6
    "hipErrorInvalidTexture": 912,  # ROCm >= 6
    "hipErrorUnknown": 999,
    "hipErrorRuntimeMemory": 1052,
    "hipErrorRuntimeOther": 1053,
    "hipErrorTbd": 1054,
}

#: value -> current name (first declared wins over the deprecated aliases).
ERROR_NAMES: dict[int, str] = {}
for _name, _value in ERRORS.items():
    ERROR_NAMES.setdefault(_value, _name)
del _name, _value

hipSuccess = 0
hipErrorNoDevice = 100
hipErrorNotReady = 600

# hipDeviceAttribute_t values used by devices.py (same in ROCm 5.x and 6.x;
# the test checks them against the installed header).
DEVICE_ATTRIBUTES: dict[str, int] = {
    "hipDeviceAttributeEccEnabled": 0,
    "hipDeviceAttributeAsyncEngineCount": 2,
    "hipDeviceAttributeCanMapHostMemory": 3,
    "hipDeviceAttributeCanUseHostPointerForRegisteredMem": 4,
    "hipDeviceAttributeClockRate": 5,
    "hipDeviceAttributeComputeMode": 6,
    "hipDeviceAttributeComputePreemptionSupported": 7,
    "hipDeviceAttributeConcurrentKernels": 8,
    "hipDeviceAttributeConcurrentManagedAccess": 9,
    "hipDeviceAttributeCooperativeLaunch": 10,
    "hipDeviceAttributeCooperativeMultiDeviceLaunch": 11,
    "hipDeviceAttributeDeviceOverlap": 12,
    "hipDeviceAttributeDirectManagedMemAccessFromHost": 13,
    "hipDeviceAttributeGlobalL1CacheSupported": 14,
    "hipDeviceAttributeHostNativeAtomicSupported": 15,
    "hipDeviceAttributeIntegrated": 16,
    "hipDeviceAttributeIsMultiGpuBoard": 17,
    "hipDeviceAttributeKernelExecTimeout": 18,
    "hipDeviceAttributeL2CacheSize": 19,
    "hipDeviceAttributeLocalL1CacheSupported": 20,
    "hipDeviceAttributeComputeCapabilityMajor": 23,
    "hipDeviceAttributeManagedMemory": 24,
    "hipDeviceAttributeMaxBlocksPerMultiProcessor": 25,
    "hipDeviceAttributeMaxBlockDimX": 26,
    "hipDeviceAttributeMaxBlockDimY": 27,
    "hipDeviceAttributeMaxBlockDimZ": 28,
    "hipDeviceAttributeMaxGridDimX": 29,
    "hipDeviceAttributeMaxGridDimY": 30,
    "hipDeviceAttributeMaxGridDimZ": 31,
    "hipDeviceAttributeMaxThreadsPerBlock": 56,
    "hipDeviceAttributeMaxThreadsPerMultiProcessor": 57,
    "hipDeviceAttributeMaxPitch": 58,
    "hipDeviceAttributeMemoryBusWidth": 59,
    "hipDeviceAttributeMemoryClockRate": 60,
    "hipDeviceAttributeComputeCapabilityMinor": 61,
    "hipDeviceAttributeMultiGpuBoardGroupID": 62,
    "hipDeviceAttributeMultiprocessorCount": 63,
    "hipDeviceAttributePageableMemoryAccess": 65,
    "hipDeviceAttributePciBusId": 67,
    "hipDeviceAttributePciDeviceId": 68,
    "hipDeviceAttributePciDomainID": 69,
    "hipDeviceAttributePersistingL2CacheMaxSize": 70,
    "hipDeviceAttributeMaxRegistersPerBlock": 71,
    "hipDeviceAttributeMaxRegistersPerMultiprocessor": 72,
    "hipDeviceAttributeReservedSharedMemPerBlock": 73,
    "hipDeviceAttributeMaxSharedMemoryPerBlock": 74,
    "hipDeviceAttributeSharedMemPerBlockOptin": 75,
    "hipDeviceAttributeSingleToDoublePrecisionPerfRatio": 77,
    "hipDeviceAttributeStreamPrioritiesSupported": 78,
    "hipDeviceAttributeTccDriver": 80,
    "hipDeviceAttributeTextureAlignment": 81,
    "hipDeviceAttributeTotalConstantMemory": 83,
    "hipDeviceAttributeTotalGlobalMem": 84,
    "hipDeviceAttributeUnifiedAddressing": 85,
    "hipDeviceAttributeWarpSize": 87,
    "hipDeviceAttributeMemoryPoolsSupported": 88,
    "hipDeviceAttributeMaxSharedMemoryPerMultiprocessor": 10002,
}

# hipMemcpyKind
hipMemcpyHostToHost = 0
hipMemcpyHostToDevice = 1
hipMemcpyDeviceToHost = 2
hipMemcpyDeviceToDevice = 3
hipMemcpyDefault = 4

# flags
hipStreamDefault = 0x0
hipStreamNonBlocking = 0x1
hipEventDefault = 0x0
hipEventBlockingSync = 0x1
hipEventDisableTiming = 0x2
hipHostMallocDefault = 0x0
hipHostMallocPortable = 0x1
hipHostMallocMapped = 0x2
hipHostMallocWriteCombined = 0x4
hipMemAttachGlobal = 0x1
hipMemAttachHost = 0x2
hipHostRegisterPortable = 0x1
hipHostRegisterMapped = 0x2

# hipModuleLaunchKernel ``extra`` markers (hip_runtime_api.h: ((void*)0x01) ...)
HIP_LAUNCH_PARAM_BUFFER_POINTER = 0x01
HIP_LAUNCH_PARAM_BUFFER_SIZE = 0x02
HIP_LAUNCH_PARAM_END = 0x03

#: Constants the header defines with #define, checked against it by a test.
DEFINES: dict[str, int] = {
    "hipStreamDefault": hipStreamDefault,
    "hipStreamNonBlocking": hipStreamNonBlocking,
    "hipEventDefault": hipEventDefault,
    "hipEventBlockingSync": hipEventBlockingSync,
    "hipEventDisableTiming": hipEventDisableTiming,
    "hipHostMallocDefault": hipHostMallocDefault,
    "hipHostMallocPortable": hipHostMallocPortable,
    "hipHostMallocMapped": hipHostMallocMapped,
    "hipHostMallocWriteCombined": hipHostMallocWriteCombined,
    "hipMemAttachGlobal": hipMemAttachGlobal,
    "hipMemAttachHost": hipMemAttachHost,
    "hipHostRegisterPortable": hipHostRegisterPortable,
    "hipHostRegisterMapped": hipHostRegisterMapped,
    "HIP_LAUNCH_PARAM_BUFFER_POINTER": HIP_LAUNCH_PARAM_BUFFER_POINTER,
    "HIP_LAUNCH_PARAM_BUFFER_SIZE": HIP_LAUNCH_PARAM_BUFFER_SIZE,
    "HIP_LAUNCH_PARAM_END": HIP_LAUNCH_PARAM_END,
}


def ctypes_signature(name: str):
    """``(restype, [argtypes])`` in ctypes for the prototype ``name``."""
    ret, args = PROTOTYPES[name]
    return CTYPES[ret], [CTYPES[a] for a in args]
