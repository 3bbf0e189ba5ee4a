"""Finding and running ld.lld, which turns an AMDGPU object into a loadable code object.

llvmlite emits relocatable objects (ET_REL); the HIP loader wants a linked
shared object (ET_DYN), which only a linker makes. Places tried, in order:

1. ``PYKERN_LLD`` (a path to an ld.lld executable),
2. ``$ROCM_PATH/llvm/bin/ld.lld``,
3. ``/opt/rocm/llvm/bin/ld.lld``,
4. ``ld.lld`` on ``PATH``, then versioned ``ld.lld-NN`` on ``PATH`` (newest first),
5. the PyPI ``ziglang`` package (``python -m ziglang ld.lld``).

Example::

    >>> from pykern.codegen.amdgpu import toolchain
    >>> hsaco = toolchain.link_shared(object_bytes)   # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache

from pykern.core import settings
from pykern.core.errors import CompileError

INSTALL_HINT = (
    "install a linker: `apt-get install lld-22` (Debian/Ubuntu), ROCm (/opt/rocm/llvm/bin/ld.lld), "
    "or `pip install ziglang`; or point PYKERN_LLD at an ld.lld executable"
)


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _versioned_on_path(path_env: str) -> list[str]:
    """``ld.lld-NN`` executables on PATH, highest NN first."""
    found: dict[int, str] = {}
    for d in path_env.split(os.pathsep):
        if not d or not os.path.isdir(d):
            continue
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            m = re.fullmatch(r"ld\.lld-(\d+)", n)
            if m and int(m.group(1)) not in found and _executable(os.path.join(d, n)):
                found[int(m.group(1))] = os.path.join(d, n)
    return [found[v] for v in sorted(found, reverse=True)]


def _ziglang_available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("ziglang") is not None
    except (ImportError, ValueError):
        return False


def _lld_environment(env: dict | None) -> tuple:
    """What the search for ld.lld reads: ``(PYKERN_LLD, ROCM_PATH, PATH)``."""
    env = os.environ if env is None else env
    return settings.get("PYKERN_LLD", env), env.get("ROCM_PATH"), env.get("PATH", "")


def candidates(env: dict | None = None) -> list[tuple[str, list[str] | None]]:
    """Every place looked at, in order: ``(description, command or None if absent)``."""
    return _candidates(*_lld_environment(env))


def _candidates(explicit, rocm, path_env) -> list[tuple[str, list[str] | None]]:
    out: list[tuple[str, list[str] | None]] = []
    if explicit:
        out.append((f"PYKERN_LLD={explicit}", [explicit] if _executable(explicit) else None))
    if rocm:
        p = os.path.join(rocm, "llvm", "bin", "ld.lld")
        out.append((p + " ($ROCM_PATH)", [p] if _executable(p) else None))
    p = "/opt/rocm/llvm/bin/ld.lld"
    out.append((p, [p] if _executable(p) else None))
    plain = shutil.which("ld.lld", path=path_env)
    out.append(("ld.lld on PATH", [plain] if plain else None))
    versioned = _versioned_on_path(path_env)
    out.append(("ld.lld-NN on PATH", [versioned[0]] if versioned else None))
    out.append(("PyPI ziglang (python -m ziglang ld.lld)",
                [sys.executable, "-m", "ziglang", "ld.lld"] if _ziglang_available() else None))
    return out


def find_lld(env: dict | None = None) -> list[str]:
    """The command (argv prefix) that runs ld.lld.

    An explicit ``PYKERN_LLD`` that does not exist is an error, not silently
    skipped: the user asked for that one. Raises ``CompileError`` naming every
    place tried and how to install a linker when none is found."""
    return list(_find_lld_cached(*_lld_environment(env)))


@lru_cache(maxsize=16)
def _find_lld_cached(lld, rocm, path_env) -> tuple:
    tried = _candidates(lld, rocm, path_env)
    if lld and tried[0][1] is None:
        raise CompileError(f"PYKERN_LLD={lld} is not an executable file", hint=INSTALL_HINT)
    for _, cmd in tried:
        if cmd:
            return tuple(cmd)
    places = "\n".join(f"  - {desc}: not found" for desc, _ in tried)
    raise CompileError("ld.lld not found; it is needed to link AMDGPU code objects. Tried:\n" + places,
                       hint=INSTALL_HINT)


def link_shared(obj: bytes, extra_args: tuple = (), env: dict | None = None) -> bytes:
    """Link one relocatable AMDGPU object into a shared code object (``ld.lld -shared``).

    Temp files are always removed; lld's diagnostics come back in a
    ``CompileError``."""
    return _run_lld(find_lld(env), obj, ("-shared", "--no-undefined", *extra_args))


def host_linker(env: dict | None = None):
    """The command that links cpu-target shared libraries, or None.

    binutils' ``ld`` first: it starts in ~3 ms, while Debian's ld.lld loads all
    of libLLVM (~20 ms) -- a cost every cpu compile would pay. Then ld.lld."""
    env = os.environ if env is None else env
    # a path, or "none" to keep cpu kernels in MCJIT (no shared library, so no LLVM-free warm start)
    explicit = settings.get("PYKERN_HOST_LD", env)
    if explicit:
        return None if explicit == "none" else [explicit]
    for name in ("ld.bfd", "ld"):
        found = shutil.which(name, path=env.get("PATH"))
        if found:
            return [found]
    try:
        return find_lld(env)
    except CompileError:
        return None


def link_host_shared(obj: bytes, env: dict | None = None) -> bytes:
    """Link a host (cpu target) object into a shared library, or b"" when no
    linker is available (the caller then keeps the MCJIT path). Its libc/libm
    references stay undefined: ``dlopen`` binds them to the running process.

    Example: ``link_host_shared(obj)[:4] == b"\\x7fELF"``"""
    cmd = host_linker(env)
    if cmd is None:
        return b""
    return _run_lld(cmd, obj, ("-shared",))


def _os_error_hint(e: BaseException):
    """The hint for a failure to run the linker: installing one helps only when
    it is missing, not when the process is out of file descriptors or memory."""
    import errno

    if isinstance(e, (FileNotFoundError, PermissionError)):
        return INSTALL_HINT
    if getattr(e, "errno", None) in (errno.EMFILE, errno.ENFILE):
        return ("the process has reached its limit of open files: raise it (`ulimit -n`, "
                "resource.setrlimit(RLIMIT_NOFILE)) or close files it no longer needs")
    return None


def _run_lld(cmd, obj: bytes, args: tuple) -> bytes:
    return _Link(cmd, obj, args).result()


def start_link_shared(obj: bytes, extra_args: tuple = (), env: dict | None = None) -> "_Link":
    """:func:`link_shared` started in the background: ld.lld runs as its own
    process while the caller goes on (e.g. emitting assembly on the other core);
    ``.result()`` waits and returns the code object (or raises ``CompileError``).

    Example: ``job = start_link_shared(obj); ...; hsaco = job.result()``"""
    return _Link(find_lld(env), obj, ("-shared", "--no-undefined", *extra_args))


def start_link_shared_early(extra_args: tuple = (), env: dict | None = None) -> "_Link":
    """:func:`start_link_shared` before the object exists: ld.lld starts now and waits for
    its input on a named pipe, which ``.feed(obj)`` fills once LLVM has emitted it.

    ld.lld spends ~6 of its ~9 ms on starting up (loading libLLVM) before it reads an
    input, so started while LLVM optimises, it hands back the code object ~3 ms after the
    object is written (issue 15 item 4). Where named pipes do not exist, or the early linker
    is gone by then, ``feed`` links from a regular file as :func:`start_link_shared` does.

    Example: ``job = start_link_shared_early(); ...; job.feed(obj); hsaco = job.result()``"""
    return _Link(find_lld(env), None, ("-shared", "--no-undefined", *extra_args))


class _Link:
    """One linker process on a temporary directory (removed by ``result``). ``obj=None``:
    the process starts before its input exists and reads it from a named pipe (``feed``)."""

    def __init__(self, cmd, obj, args: tuple):
        self.cmd, self.args = cmd, args
        try:
            self.tmp = tempfile.mkdtemp(prefix="pykern-lld-")
        except OSError as e:
            raise CompileError(f"cannot create a directory for the linker: {e}", hint=_os_error_hint(e)) from None
        self.dst = os.path.join(self.tmp, "kernel.so")
        self.src = src = os.path.join(self.tmp, "kernel.o")
        self.waiting = obj is None and hasattr(os, "mkfifo")
        try:
            if self.waiting:
                os.mkfifo(src, 0o600)
            elif obj is not None:
                with open(src, "wb") as f:
                    f.write(obj)
            self.proc = None if obj is None and not self.waiting else subprocess.Popen(
                [*cmd, *args, src, "-o", self.dst], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL, text=True)
        except OSError as e:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise CompileError(f"running {' '.join(cmd)} failed: {e}", hint=_os_error_hint(e)) from None

    def feed(self, obj: bytes) -> None:
        """Give an early-started linker its input; if it cannot take it (no named pipes
        here, the process is gone), link from a regular file instead."""
        if self.waiting:
            self.waiting = False
            try:
                self._write_pipe(obj)
                return
            except OSError:
                self.discard()
        elif self.proc is not None:
            raise RuntimeError("this link has its input already")
        self.__init__(self.cmd, obj, self.args)

    def _write_pipe(self, obj: bytes) -> None:
        import errno
        import select
        import time

        # non-blocking, so that a linker that exited before opening its input cannot hang us
        # (and the data is never written where no reader is: a FIFO drops it on the last close)
        deadline = time.monotonic() + 60
        while True:
            try:
                fd = os.open(self.src, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as e:
                if e.errno != errno.ENXIO or self.proc.poll() is not None or time.monotonic() > deadline:
                    raise OSError(f"the linker did not open its input: {e}") from None
                time.sleep(0.0005)
        try:
            view = memoryview(obj)
            while view:
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    if self.proc.poll() is not None:
                        raise OSError("the linker exited while reading its input") from None
                    select.select([], [fd], [], 0.05)
        finally:
            os.close(fd)

    def discard(self) -> None:
        """Stop waiting for this link: end the process, remove its files."""
        try:
            if self.proc is None:
                raise ProcessLookupError
            self.proc.kill()
            self.proc.communicate()
        except Exception:
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def result(self) -> bytes:
        cmd = self.cmd
        try:
            try:
                out, err = self.proc.communicate(timeout=120)
            except subprocess.TimeoutExpired as e:
                self.proc.kill()
                self.proc.communicate()
                raise CompileError(f"running {' '.join(cmd)} failed: {e}", hint=_os_error_hint(e)) from None
            if self.proc.returncode != 0 or not os.path.exists(self.dst):
                msg = (err or out or "").strip()
                tool = "ld.lld" if any("lld" in part for part in cmd) else os.path.basename(cmd[0])
                raise CompileError(f"{tool} failed (exit {self.proc.returncode}):\n{msg}")
            try:
                with open(self.dst, "rb") as f:
                    return f.read()
            except OSError as e:
                raise CompileError(f"cannot read the linker's output: {e}", hint=_os_error_hint(e)) from None
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
