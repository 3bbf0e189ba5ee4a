"""ctypes bindings to the HIP runtime (libamdhip64), found and loaded on demand.

Every binding has the exact argtypes/restype of ``hip_api.PROTOTYPES`` and is
checked: a failing call raises ``pykern.HipError(code, name, message)`` whose
``name`` is the hipError_t enumerator and ``message`` the runtime's text.

Where the library comes from, in order:

1. ``PYKERN_HIP_LIBRARY`` (a path; when set, nothing else is tried),
2. a copy already loaded in this process (e.g. by torch), so there is only
   ever one HIP runtime per process,
3. ``$ROCM_PATH/lib`` and ``$HIP_PATH/lib``, then ``/opt/rocm/lib``,
4. the dynamic loader's search path (``libamdhip64.so``, ``.so.7/.6/.5``).

Example::

    >>> from pykern.runtime.hip import library as hip
    >>> ok, why = hip.available()      # never raises
    >>> if ok:
    ...     n = hip.device_count()
"""

from __future__ import annotations

import ctypes
import os
import threading

from pykern.core import settings
from pykern.core.errors import HipError
from pykern.runtime.hip import api as hip_api
from pykern.runtime.hip import properties as hip_props
from pykern.runtime.hip.presence import hip_loaded_in_process

_LOADER_NAMES = ("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5")


class HipLibraryNotFound(HipError):
    """No usable libamdhip64 could be loaded; ``tried`` lists ``(place, why)``."""

    CODE = -1
    NAME = "hipLibraryNotFound"

    def __init__(self, tried: list[tuple[str, str]], hint: str = ""):
        self.tried = list(tried)
        lines = ["cannot load the HIP runtime library (libamdhip64); tried:"]
        lines += [f"  - {place}: {why}" for place, why in self.tried]
        lines.append(
            hint
            or "hint: install ROCm (or Debian's libamdhip64-5), set ROCM_PATH, or point PYKERN_HIP_LIBRARY at libamdhip64.so"
        )
        super().__init__(self.CODE, self.NAME, "\n".join(lines))


def error_name(code: int) -> str:
    """The hipError_t enumerator name of ``code`` (``'hipErrorUnknown(1234)'``-style if unknown)."""
    name = hip_api.ERROR_NAMES.get(code)
    return name if name is not None else f"hipErrorUnrecognized{code}"


class HipLibrary:
    """A loaded libamdhip64 with checked bindings as attributes.

    ``lib.hipMalloc(byref(p), n)`` raises HipError on failure and returns None
    on success. ``lib.raw.<name>`` is the unchecked ctypes function (for calls
    whose non-success codes are normal answers, like hipStreamQuery).
    """

    def __init__(self, cdll: ctypes.CDLL, path: str, source: str):
        self.raw = cdll
        self.path = path
        self.source = source
        self.missing: list[str] = []
        self._get_error_string = None
        for name, (ret, _args) in hip_api.PROTOTYPES.items():
            try:
                fn = getattr(cdll, name)
            except AttributeError:
                if name in hip_api.OPTIONAL:
                    self.missing.append(name)
                    continue
                raise
            restype, argtypes = hip_api.ctypes_signature(name)
            fn.restype = restype
            fn.argtypes = argtypes
            if ret == "hipError_t":
                setattr(self, name, self._checked(fn, name))
            else:
                setattr(self, name, fn)
        self._get_error_string = cdll.hipGetErrorString

    def _checked(self, fn, name):
        def call(*args):
            rc = fn(*args)
            if rc:
                raise self.error(rc, name)

        call.__name__ = name
        call.__qualname__ = f"HipLibrary.{name}"
        return call

    def error(self, code: int, call: str = "") -> HipError:
        """A HipError for status ``code`` with the runtime's own message."""
        msg = ""
        try:
            raw = self._get_error_string(code)
            msg = raw.decode(errors="replace") if raw else ""
        except Exception:  # the message is a courtesy; never mask the real error
            pass
        name = error_name(code)
        if msg == name:  # ROCm 5 returns the name as the message
            msg = _DESCRIPTIONS.get(code, "")
        return HipError(code, name, msg, call)

    def runtime_version(self) -> int:
        """HIP_VERSION of the runtime: major*10_000_000 + minor*100_000 + patch."""
        v = ctypes.c_int()
        self.hipRuntimeGetVersion(ctypes.byref(v))
        return v.value

    def __repr__(self) -> str:
        return f"<HipLibrary {self.path} (from {self.source})>"


# Short explanations for codes users meet; the runtime's own text wins when it
# says more than the bare name.
_DESCRIPTIONS = {
    100: "no AMD GPU is visible to the HIP runtime (check /dev/kfd, /dev/dri permissions and HIP_VISIBLE_DEVICES)",
    101: "invalid device ordinal",
    2: "out of device memory",
    1: "invalid argument",
    200: "the code object is not valid for this device",
    209: "no code object for this GPU's architecture",
    98: "invalid device function (kernel symbol not found or wrong arch)",
    500: "named symbol not found",
    700: "the kernel accessed an illegal address",
    701: "too many resources requested for launch",
    719: "the kernel failed on the device",
}


def candidates() -> list[tuple[str, str]]:
    """``(place, what to dlopen)`` in the order they are tried (see module doc)."""
    explicit = settings.get("PYKERN_HIP_LIBRARY")
    if explicit:
        return [(f"PYKERN_HIP_LIBRARY={explicit}", explicit)]
    out: list[tuple[str, str]] = []
    for path in hip_loaded_in_process():
        out.append((f"already loaded in this process: {path}", path))
    for var in ("ROCM_PATH", "HIP_PATH"):
        root = os.environ.get(var)
        if root:
            out.append((f"${var}/lib ({root}/lib/libamdhip64.so)", os.path.join(root, "lib", "libamdhip64.so")))
    out.append(("/opt/rocm/lib/libamdhip64.so", "/opt/rocm/lib/libamdhip64.so"))
    import ctypes.util  # (imports subprocess: ~5 ms)

    found = ctypes.util.find_library("amdhip64")
    if found:
        out.append((f"ctypes.util.find_library('amdhip64') -> {found}", found))
    for name in _LOADER_NAMES:
        out.append((f"dynamic loader: {name}", name))
    return out


_lock = threading.Lock()
_library: HipLibrary | None = None
_load_error: HipLibraryNotFound | None = None


def load_library(reload: bool = False) -> HipLibrary:
    """The process-wide HipLibrary; raises HipLibraryNotFound listing every place tried."""
    global _library, _load_error
    if _library is not None and not reload:
        return _library
    with _lock:
        if _library is not None and not reload:
            return _library
        tried: list[tuple[str, str]] = []
        seen: set[str] = set()
        for place, target in candidates():
            if target in seen:
                continue
            seen.add(target)
            if os.sep in target and not os.path.exists(target):
                tried.append((place, "no such file"))
                continue
            try:
                cdll = ctypes.CDLL(target)
            except OSError as e:
                tried.append((place, str(e) or "dlopen failed"))
                continue
            try:
                lib = HipLibrary(cdll, getattr(cdll, "_name", target), place)
            except AttributeError as e:
                tried.append((place, f"loaded, but it lacks a HIP entry point ({e})"))
                continue
            _library, _load_error = lib, None
            return lib
        hint = ""
        if settings.get("PYKERN_HIP_LIBRARY"):
            hint = "hint: PYKERN_HIP_LIBRARY is set, so no other place was searched; unset it to search ROCM_PATH, /opt/rocm/lib and the loader path"
        _load_error = HipLibraryNotFound(tried, hint)
        raise _load_error


def lib() -> HipLibrary:
    """Shorthand for ``load_library()``."""
    return _library if _library is not None else load_library()


def device_count() -> int:
    """Number of HIP devices; raises HipError (hipErrorNoDevice, 100) when there are none."""
    n = ctypes.c_int(0)
    lib().hipGetDeviceCount(ctypes.byref(n))
    return n.value


def available() -> tuple[bool, str]:
    """``(True, description)`` when a usable AMD GPU is present, else ``(False, reason)``.

    Never raises: the reason names the library tried or the HIP status seen.

    >>> ok, reason = available()
    """
    try:
        library = load_library()
    except HipLibraryNotFound as e:
        return False, e.message.splitlines()[0] + " (" + "; ".join(p for p, _ in e.tried) + ")"
    except Exception as e:  # pragma: no cover - defensive: available() must not raise
        return False, f"loading the HIP runtime failed: {e!r}"
    try:
        n = device_count()
    except HipError as e:
        return False, f"{library.path}: hipGetDeviceCount failed: {e.name} ({e.code}): {e.message}"
    except Exception as e:  # pragma: no cover
        return False, f"{library.path}: hipGetDeviceCount failed: {e!r}"
    if n <= 0:
        return False, f"{library.path}: hipGetDeviceCount found no devices"
    try:
        archs = sorted({hip_props.parse_gcn_arch_name(hip_props.gcn_arch_name(library, i))[0] for i in range(n)})
        return True, f"{n} AMD GPU(s) ({', '.join(archs)}) via {library.path}"
    except Exception as e:
        return False, f"{library.path}: {n} device(s) but querying them failed: {e}"
