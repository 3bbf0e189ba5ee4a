"""File operations of the kernel cache that never follow a symbolic link.

Loading a cache entry runs its code, and pykern may run as root, so the cache
trusts only what the current user owns and nobody else may write.  That is
checked at the point of use, on the object actually used, not once per process
on a path: a path component swapped for an attacker's symlink after a check
must not redirect a write, an append, a rename, an unlink or a clear.

* Below the cache root, every directory is opened with ``O_NOFOLLOW |
  O_DIRECTORY`` relative to its parent's fd and ``fstat``-checked (owned by this
  user, not group/other-writable) before anything is done in it.
* Files are opened with ``O_NOFOLLOW | O_NONBLOCK`` relative to a directory fd and checked
  by ``fstat`` of the opened fd (a regular file, ours, not group/other-writable,
  at most one link -- a hard link to a root-only file would pass the other checks;
  none is a file replaced since it was opened, whose content is still a whole one).
* Creation, rename and unlink are ``*at`` calls on a checked directory fd:
  ``rename``/``unlink`` act on the directory entry itself and never follow it.
* The configured root itself may be a symlink (users move ``~/.cache``), judged
  by its target; the link must then be ours (or root's).

    >>> with Dirs(path, create=True) as d:            # doctest: +SKIP
    ...     v1 = d.sub(d.root, "v1", create=True)
    ...     write_atomic(v1, "stats.json", b"{}")
"""

from __future__ import annotations

import os
import stat

__all__ = ["Untrusted", "TooLarge", "Dirs", "trust_problem", "read_file", "write_atomic", "create_exclusive", "append",
           "unlink", "exists", "scan", "TMP_PREFIX"]

TMP_PREFIX = ".tmp-"
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
# A FIFO planted where a file belongs must not block the open (a read waits for a writer
# forever): opened non-blocking it is refused by the regular-file check instead. No effect on
# regular files.
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_POSIX = hasattr(os, "geteuid")
#: The platform supports the ``*at`` calls this module is built on (Linux, macOS, BSDs).
SUPPORTED = bool(_O_NOFOLLOW and _O_DIRECTORY and os.open in os.supports_dir_fd
                 and os.stat in os.supports_dir_fd and os.unlink in os.supports_dir_fd)


class Untrusted(OSError):
    """A cache path that must not be used: a symlink, not ours, writable by others."""


class TooLarge(Untrusted):
    """A file bigger than its reader's limit (a sparse file planted there): never read."""


def trust_problem(st: os.stat_result, kind: str = "dir") -> str:
    """Why an object may not be trusted, or "" if it may.

    >>> trust_problem(os.stat("/"))  # doctest: +SKIP
    'owned by uid 0, not by this user (uid 1000)'
    """
    if kind == "dir" and not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if kind == "file" and not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if _POSIX:
        if st.st_uid != os.geteuid():
            return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
        if st.st_mode & 0o022:
            return f"writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
        # 0 links is a file renamed over or unlinked since it was opened: what the fd reads is
        # still the whole file that was published (a reader racing a writer, not an attack)
        if kind == "file" and st.st_nlink > 1:
            return f"a file with {st.st_nlink} hard links"
    return ""


def _check_fd(fd: int, what: str, kind: str) -> os.stat_result:
    st = os.fstat(fd)
    problem = trust_problem(st, kind)
    if problem:
        raise Untrusted(f"{what} is {problem}")
    return st


class Dirs:
    """Checked directory fds of one operation, all closed on exit.

    ``root`` is the cache directory; :meth:`sub` opens a child without
    following links.  Re-opening per operation (a few syscalls) is what makes
    the checks hold at the point of use, and a cache directory removed while a
    process runs is simply recreated."""

    def __init__(self, path: str, create: bool):
        self.path = path
        self._fds: list[int] = []
        self._memo: dict[tuple[int, str], int] = {}
        self.v1 = -1  # set by the store: its versioned subdirectory
        self.root = self._open_root(create)

    def _open_root(self, create: bool) -> int:
        try:
            lst = os.lstat(self.path)
        except FileNotFoundError:
            if not create:
                raise
            os.makedirs(self.path, mode=0o700, exist_ok=True)
            lst = os.lstat(self.path)
        if stat.S_ISLNK(lst.st_mode) and _POSIX and lst.st_uid not in (os.geteuid(), 0):
            raise Untrusted(f"{self.path} is a symbolic link owned by uid {lst.st_uid}")
        # a directory when looked at must still be one when opened: a symlink swapped in
        # between (the parent may be shared, /tmp) is refused, never followed
        nofollow = 0 if stat.S_ISLNK(lst.st_mode) else _O_NOFOLLOW
        fd = os.open(self.path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC | nofollow)
        self._fds.append(fd)
        _check_fd(fd, self.path, "dir")
        return fd

    def sub(self, parent: int, name: str, create: bool = False) -> int:
        """The checked fd of directory ``name`` in ``parent``; creates it (0700) if asked."""
        flags = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, 0o700, dir_fd=parent)
            except FileExistsError:
                pass
            fd = self._open_checked_link(parent, name, flags)
        except OSError as exc:
            fd = self._open_checked_link(parent, name, flags, exc)
        self._fds.append(fd)
        _check_fd(fd, name, "dir")
        return fd

    def child(self, parent: int, name: str, create: bool = False) -> int:
        """:meth:`sub`, opened once per operation (the layout's fixed directories)."""
        fd = self._memo.get((parent, name))
        if fd is None:
            fd = self._memo[(parent, name)] = self.sub(parent, name, create)
        return fd

    def release(self, fd: int) -> None:
        """Close a :meth:`sub` fd early (walking many subdirectories)."""
        if fd in self._fds:
            self._fds.remove(fd)
            os.close(fd)

    @staticmethod
    def _open_checked_link(parent: int, name: str, flags: int, exc: OSError | None = None) -> int:
        try:
            lst = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            raise
        if stat.S_ISLNK(lst.st_mode):
            raise Untrusted(f"{name} is a symbolic link")
        if not stat.S_ISDIR(lst.st_mode):
            raise Untrusted(f"{name} is not a directory")
        if exc is not None:
            raise exc
        return os.open(name, flags, dir_fd=parent)

    def close(self) -> None:
        while self._fds:
            try:
                os.close(self._fds.pop())
            except OSError:
                pass

    def __enter__(self) -> "Dirs":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _open_file(dfd: int, name: str, flags: int, mode: int = 0o600) -> int:
    try:
        return os.open(name, flags | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY | _O_NONBLOCK, mode, dir_fd=dfd)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        try:
            if stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                raise Untrusted(f"{name} is a symbolic link") from None
        except FileNotFoundError:
            pass
        raise


def read_file(dfd: int, name: str, touch: bool = False, limit: int | None = None,
              opened: list | None = None) -> bytes:
    """The content of regular file ``name`` in ``dfd``, refusing anything not
    ours or writable by others; ``touch`` bumps its mtime (through the fd);
    ``opened`` receives the fstat of the file read (to judge it later by inode)."""
    fd = _open_file(dfd, name, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        if opened is not None:
            opened.append(st)
        st = _check_fd(fd, name, "file")
        if limit is not None and st.st_size > limit:
            raise TooLarge(f"{name} is {st.st_size} bytes, more than {limit}")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, max(st.st_size, 1 << 16))
            if not chunk:
                break
            total += len(chunk)
            if limit is not None and total > limit:  # grown since the stat
                raise TooLarge(f"{name} is more than {limit} bytes")
            chunks.append(chunk)
        if touch:
            try:
                os.utime(fd)
            except OSError:
                pass
        return b"".join(chunks)
    finally:
        os.close(fd)


def create_exclusive(dfd: int, name: str, data: bytes) -> None:
    """Create ``name`` holding ``data``; FileExistsError if anything (even a
    dangling symlink) is there already."""
    fd = _open_file(dfd, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def write_atomic(dfd: int, name: str, data: bytes) -> None:
    """Write a private temp file in ``dfd`` and rename it over ``name``, so
    readers see the old file or the whole new one (rename replaces a symlink at
    ``name``, it never writes through it)."""
    tmp = f"{TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
    try:
        create_exclusive(dfd, tmp, data)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        unlink(dfd, tmp)
        raise


def append(dfd: int, name: str, data: bytes) -> int:
    """Append ``data`` to ``name`` (created 0600), one ``O_APPEND`` write;
    returns the file's size after it."""
    fd = _open_file(dfd, name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        _check_fd(fd, name, "file")
        _write_all(fd, data)
        return os.lseek(fd, 0, os.SEEK_CUR)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def unlink(dfd: int, name: str, only: os.stat_result | None = None) -> int:
    """Remove the directory entry ``name`` (a link itself, never its target); 1 if
    removed.  With ``only``, just while ``name`` is still that file (same device and
    inode): a bad file another process has since replaced by a good one stays."""
    if only is not None:
        try:
            now = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            return 0
        if (now.st_dev, now.st_ino) != (only.st_dev, only.st_ino):
            return 0
    try:
        os.unlink(name, dir_fd=dfd)
        return 1
    except OSError:
        return 0


def exists(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
        return True
    except OSError:
        return False


def scan(dfd: int) -> list[tuple[str, os.stat_result]]:
    """(name, lstat) of every entry of directory ``dfd``."""
    out = []
    with os.scandir(dfd) as it:
        names = [e.name for e in it]
    for name in names:
        try:
            out.append((name, os.stat(name, dir_fd=dfd, follow_symlinks=False)))
        except OSError:
            continue
    return out
