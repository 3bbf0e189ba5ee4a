"""Every ``PYKERN_*`` environment variable, declared once: the one place pykern reads them.

``SETTINGS`` maps each name to a :class:`Setting` -- its parser, default, one-line doc, the
values it takes, what an invalid value does, and whether its text is part of a cache key.
Code reads a setting with :func:`get` at the moment it needs it (so ``monkeypatch.setenv``
and a subprocess's environment work), never with ``os.environ`` (``tests/core/test_settings.py``
fails on such a read of a ``PYKERN_`` name). ``python -m pykern info`` lists every setting
with its value and where the value came from.

An empty value counts as unset everywhere. Reading is cheap: the environment's text is
parsed once per distinct text (the last one is remembered per setting).

Example::

    >>> from pykern.core import settings
    >>> settings.get("PYKERN_MEMORY_CACHE_ENTRIES", {})
    256
    >>> settings.get("PYKERN_CACHE", {"PYKERN_CACHE": "off"})
    False
    >>> settings.source("PYKERN_CACHE", {"PYKERN_CACHE": "off"})
    'environment'

The settings whose ``scope`` is not ``"pykern"`` are read by the project's own tests,
benchmarks and setup script (documented here so that every ``PYKERN_`` name has one home);
pykern itself never reads them.
"""

from __future__ import annotations

import os
import re

__all__ = ["Setting", "SETTINGS", "SettingError", "SettingWarning", "get", "raw", "source", "default",
           "key_settings", "rows", "parse_size", "parse_age"]


class SettingError(ValueError):
    """A setting whose ``invalid`` is ``"error"`` has a value it does not take."""


class SettingWarning(UserWarning):
    """A setting whose ``invalid`` is ``"warn"`` has a value it does not take: the default is used."""


class Setting:
    """One environment variable.

    ``parse(text)`` turns its (non-empty) text into the value or raises ``ValueError`` saying
    why not; ``default`` is the value when it is unset or empty. ``invalid`` says what a value
    ``parse`` refuses does: ``"error"`` (:func:`get` raises :class:`SettingError`), ``"warn"``
    (a :class:`SettingWarning`, then the default) or ``"default"`` (the default, silently).
    ``cache_key``: the targets whose disk-cache key holds the variable's text (it changes the
    code compiled for them); ``key_note``: how it reaches cache keys otherwise, if it does.
    ``scope``: ``"pykern"`` (the library reads it) or who else does (``"tests"``,
    ``"benchmarks"``, ``"setup"``)."""

    __slots__ = ("name", "parse", "default", "doc", "values", "invalid", "cache_key", "key_note", "scope")

    def __init__(self, name, parse, default, doc, values, *, invalid="default", cache_key=(), key_note="",
                 scope="pykern"):
        assert invalid in ("error", "warn", "default"), invalid
        self.name, self.parse, self.default, self.doc, self.values = name, parse, default, doc, values
        self.invalid, self.cache_key, self.key_note, self.scope = invalid, tuple(cache_key), key_note, scope

    def __repr__(self) -> str:
        return f"Setting({self.name!r}, default={self.default!r})"


# ----------------------------------------------------------------------------- value parsers

#: the words that turn a flag off (any other non-empty text turns it on)
OFF_WORDS = frozenset({"0", "off", "false", "no", "disable", "disabled", "none"})


def flag(text: str) -> bool:
    """On unless ``text`` is one of :data:`OFF_WORDS` (any case, spaces ignored)."""
    return text.strip().lower() not in OFF_WORDS


def choice(*values: str, aliases: dict | None = None, fold_case: bool = True):
    """A parser taking one of ``values`` (``aliases`` maps other spellings onto them)."""
    aliases = aliases or {}

    def parse(text: str) -> str:
        t = text.strip().lower() if fold_case else text.strip()
        t = aliases.get(t, t)
        if t not in values:
            raise ValueError(f"expected one of {', '.join(values)}")
        return t

    return parse


def text(value: str) -> str:
    """The text as it is (paths: their meaning may depend on the current directory, so
    they are resolved where they are used)."""
    return value


def stripped(value: str) -> str:
    return value.strip()


def count(value: str) -> int:
    """A whole number; negative ones count as 0."""
    try:
        return max(0, int(value.strip()))
    except ValueError:
        raise ValueError("not an integer") from None


def wave_size(value: str) -> int:
    t = value.strip()
    if t not in ("32", "64"):
        raise ValueError("must be 32 or 64")
    return int(t)


def host_linker(value: str) -> str:
    """A path, or ``"none"`` (also ``off``, ``0``): no host linker."""
    t = value.strip()
    return "none" if t.lower() in ("none", "off", "0") else t


def _quantity(value: str, units: dict, what: str, examples: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(value))
    if not m or m.group(2).lower() not in units:
        raise ValueError(f"not a {what}: {value!r} (examples: {examples})")
    return float(m.group(1)) * units[m.group(2).lower()]


_SIZE_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000**2, "mb": 1000**2,
               "mib": 1 << 20, "g": 1000**3, "gb": 1000**3, "gib": 1 << 30, "t": 1000**4,
               "tb": 1000**4, "tib": 1 << 40}
_AGE_UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(value: str) -> int:
    """Bytes from ``"1GiB"``, ``"500M"``, ``"4096"``.

    >>> parse_size("2KiB")
    2048
    """
    return int(_quantity(value, _SIZE_UNITS, "size", "1073741824, 500M, 1GiB"))


def parse_age(value: str) -> float:
    """Seconds from ``"7d"``, ``"12h"``, ``"30m"``, ``"45s"`` or ``"90"``.

    >>> parse_age("2h")
    7200.0
    """
    return _quantity(value, _AGE_UNITS, "duration", "7d, 12h, 30m, 45s")


def _number(value: str) -> int:
    return int(value.strip())


_ON_OFF = "on or off (1/true/yes, 0/false/no; any other text is on)"

# ----------------------------------------------------------------------------- the table

SETTINGS: dict[str, Setting] = {s.name: s for s in (
    # which target, which machine
    Setting("PYKERN_TARGET", choice("auto", "cpu", "hip", "sim"), "auto",
            "The target kernels run on; auto: hip with a usable AMD GPU, else cpu; sim: Python for pdb.",
            "auto, cpu, hip or sim", invalid="error", key_note="the target it picks is part of every key"),
    Setting("PYKERN_ARCH", stripped, "gfx942",
            "The AMD GPU a cpu-target process compiles for when asked for GPU facts (resources, inspect_asm).",
            "an amdgpu target id such as gfx90a, gfx942, gfx1100", key_note="the arch it names is part of the key"),
    Setting("PYKERN_CPU_WAVESIZE", wave_size, 64,
            "Lanes per wave on the cpu target (32 behaves as RDNA GPUs, 64 as CDNA).",
            "32 or 64", invalid="error", cache_key=("cpu",)),
    Setting("PYKERN_CPU_BARRIERS", choice("auto", "coroutine", fold_case=False), "auto",
            "coroutine runs every cpu-target kernel with barriers as coroutines, not as work-item loops.",
            "auto or coroutine", cache_key=("cpu",)),
    Setting("PYKERN_SANITIZE", text, "",
            "cpu-target checks added to every kernel: race, init, bounds, all (comma list; warn: warn, do not raise).",
            "race, init, bounds, all, warn or a comma list (an error otherwise)",
            key_note="the checks are compile options, part of the key"),
    Setting("PYKERN_TIERS", flag, True,
            "Start a cpu kernel on quickly built code while the O3 build runs (off: O3 at once).", _ON_OFF),
    # the toolchain
    Setting("PYKERN_LLD", text, None,
            "The ld.lld executable that links AMDGPU code objects (unset: ROCm's, PATH's, then ziglang's).",
            "a path to an executable (an error when it is not one)"),
    Setting("PYKERN_CLANG", text, None,
            "The clang that compiles external HIP/C++ device code (link=, declare_device) (unset: clang-22, then clang).",
            "a path to a clang executable",
            key_note="clang's version and flags are part of the key of the compiled external code"),
    Setting("PYKERN_HOST_LD", host_linker, None,
            "The linker of cpu-target shared libraries (unset: ld.bfd/ld, then ld.lld; none: keep kernels in MCJIT).",
            "a path, or none (also off, 0)"),
    Setting("PYKERN_DEVICE_LIBS", text, None,
            "The directory holding ROCm's ocml.bc and ockl.bc (unset: ROCm, pip and Debian places are searched).",
            "a directory with ocml.bc and ockl.bc (an error when it lacks them)",
            key_note="the libraries' contents are part of the key of kernels that link them"),
    Setting("PYKERN_HIP_LIBRARY", text, None,
            "The libamdhip64 to load; when set nothing else is tried (unset: ROCM_PATH, /opt/rocm, the loader).",
            "a path or a name the dynamic loader finds"),
    # the disk cache
    Setting("PYKERN_CACHE", flag, True, "The on-disk kernel cache (off: every process compiles its kernels).", _ON_OFF),
    Setting("PYKERN_CACHE_DIR", text, None,
            "Where the disk cache lives (unset: $XDG_CACHE_HOME/pykern or ~/.cache/pykern, per platform).",
            "a directory path (~ is expanded)"),
    Setting("PYKERN_CACHE_MAX_BYTES", parse_size, 1 << 30,
            "Size bound of the disk cache; least recently used entries go first.",
            "a size: 1073741824, 500M, 1GiB", invalid="warn"),
    Setting("PYKERN_CACHE_WAIT", parse_age, 120.0,
            "How long a process waits for another that compiles the same kernel before compiling it itself.",
            "a duration: 90, 45s, 30m, 12h", invalid="warn"),
    Setting("PYKERN_CACHE_EXPLAIN", flag, False,
            "Log why each disk-cache lookup missed (which key parts changed).", _ON_OFF),
    Setting("PYKERN_BUILD_ID", text, None,
            "Names this build of pykern in cache keys instead of the stamp of its source files (for packagers).",
            "any text", key_note="replaces the source stamp in every key"),
    Setting("PYKERN_MEMORY_CACHE_ENTRIES", count, 256,
            "Entries each per-process map keeps (compiled artifacts, loaded GPU modules, argument flatteners).",
            "a whole number, 0 keeps none", invalid="warn"),
    # the session
    Setting("PYKERN_PRELOAD", choice("auto", "on", "off", aliases={"1": "on", "true": "on", "yes": "on",
                                                                    "0": "off", "false": "off", "no": "off"}),
            "auto", "Load LLVM and the compiler on a thread at import (auto: in interactive sessions only).",
            "auto, on or off (1/true/yes, 0/false/no)"),
    Setting("PYKERN_EXEC_SOURCES", flag, False,
            "Remember the text of every exec()'d function, so kernels defined by exec compile; set before import.",
            _ON_OFF),
    Setting("PYKERN_FULL_TRACEBACK", flag, False,
            "Keep pykern's internal frames in the tracebacks of its errors (for bug reports).", _ON_OFF),
    # the project's tests, benchmarks and setup
    Setting("PYKERN_WITH_TORCH", stripped, "0", "1 makes scripts/setup.sh install torch's CPU build (DLPack tests).",
            "0 or 1", scope="setup"),
    Setting("PYKERN_CORE_SUITE_WORKERS", _number, None,
            "Processes tests/core_kernels.py compiles the recorded kernels with (unset: up to 2).",
            "a whole number", scope="tests"),
    Setting("PYKERN_FUZZ_SEED", _number, 20261202, "Seed of the differential fuzz test's programs.",
            "a whole number", scope="tests"),
    Setting("PYKERN_FUZZ_COUNT", _number, 2000, "How many programs the differential fuzz test checks.",
            "a whole number", scope="tests"),
    Setting("PYKERN_FUZZ_AMDGPU_EVERY", _number, 40,
            "Every n-th fuzz program that runs on the cpu is also compiled for gfx942.", "a whole number",
            scope="tests"),
    Setting("PYKERN_BENCH_NUMBA_VENV", text, None,
            "The venv with numba the numba benchmark row runs in (unset: under the user's cache dir).",
            "a directory", scope="benchmarks"),
    Setting("PYKERN_BENCH_NUMBA_PYTHON", text, None,
            "An interpreter with numba for the numba benchmark row (wins over PYKERN_BENCH_NUMBA_VENV).",
            "a path", scope="benchmarks"),
)}

# ----------------------------------------------------------------------------- reading

_memo: dict = {}  # name -> (text, value): the last text parsed


def _text(name: str, env) -> str:
    return (os.environ if env is None else env).get(name) or ""


def get(name: str, env=None):
    """The value of setting ``name`` now: parsed from the environment (or from the mapping
    ``env``), the default when unset or empty. Raises ``KeyError`` for an undeclared name."""
    s = SETTINGS[name]
    t = _text(name, env)
    if not t:
        return s.default
    hit = _memo.get(name)
    if hit is not None and hit[0] == t:
        return hit[1]
    try:
        value = s.parse(t)
    except ValueError as e:
        if s.invalid == "error":
            raise SettingError(f"{name}={t!r}: {e}") from None
        if s.invalid == "warn":
            import warnings

            warnings.warn(f"pykern: ignoring {name}={t!r}: {e}; using {s.default!r}", SettingWarning, stacklevel=3)
        value = s.default
    _memo[name] = (t, value)
    return value


def raw(name: str, env=None) -> str:
    """The text setting ``name`` has in the environment, "" when unset (what cache keys hold)."""
    SETTINGS[name]
    return (os.environ if env is None else env).get(name, "")


def source(name: str, env=None) -> str:
    """``"environment"`` when the value comes from the environment, else ``"default"``
    (unset, empty, or a value the setting ignores)."""
    s = SETTINGS[name]
    t = _text(name, env)
    if not t:
        return "default"
    try:
        s.parse(t)
    except ValueError:
        return "environment" if s.invalid == "error" else "default"
    return "environment"


def default(name: str):
    """The declared default of setting ``name``."""
    return SETTINGS[name].default


def key_settings(target: str) -> list:
    """Names of the settings whose text is part of target ``target``'s cache keys."""
    return [s.name for s in SETTINGS.values() if target in s.cache_key]


def rows(env=None) -> list:
    """``(name, value shown, source, doc)`` of every setting pykern reads, in table order
    (``python -m pykern info``); a value the setting refuses is shown with why."""
    out = []
    for s in SETTINGS.values():
        if s.scope != "pykern":
            continue
        try:
            value = get(s.name, env)
        except SettingError as e:
            out.append((s.name, f"invalid: {e}", "environment", s.doc))
            continue
        src = source(s.name, env)
        shown = "on" if value is True else "off" if value is False else "(unset)" if value is None else str(value)
        if src == "default" and _text(s.name, env):
            src = f"default ({s.name}={_text(s.name, env)!r} ignored)"
        out.append((s.name, shown, src, s.doc))
    return out
