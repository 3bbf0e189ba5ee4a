"""``python -m pykern cache info|list|clear|export|import``: look at, tidy and ship the kernel cache.

Example::

    $ python -m pykern cache info
    location   /home/me/.cache/pykern
    ...
    $ python -m pykern cache clear --older-than 30d
    removed 12 entries
    $ python -m pykern cache export kernels.pkc.tgz        # on the build machine
    $ python -m pykern cache import kernels.pkc.tgz        # on each worker
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from pykern.runtime.cache import KernelCache, parse_age

__all__ = ["main"]


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _age(seconds: float) -> str:
    for unit, span in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= span:
            return f"{seconds / span:.0f}{unit} ago"
    return f"{max(seconds, 0):.0f}s ago"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pykern cache",
        description="Inspect or clear pykern's on-disk kernel cache. Its location is "
                    "$PYKERN_CACHE_DIR, else the per-user cache dir (e.g. ~/.cache/pykern); "
                    "PYKERN_CACHE=off disables it, PYKERN_CACHE_MAX_BYTES sets the size limit, "
                    "PYKERN_CACHE_EXPLAIN=1 logs why each lookup missed.")
    p.add_argument("--dir", help="cache directory to use instead of the configured one")
    # --dir also after the subcommand (SUPPRESS: absent there must not reset it)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dir", default=argparse.SUPPRESS, help="cache directory to use instead of the configured one")
    sub = p.add_subparsers(dest="command", metavar="{info,list,clear,export,import}")
    sub.required = True
    info = sub.add_parser("info", parents=[common], help="location, entry count, size, hit/miss counts",
                          description="Show where the cache is, whether it is in use, how many "
                                      "entries and bytes it holds, and its hit/miss counts.")
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    lst = sub.add_parser("list", parents=[common], help="one line per cached kernel",
                         description="List cached kernels, least recently used first: kernel name, "
                                     "signature, target, size and last use.")
    lst.add_argument("--json", action="store_true", help="print JSON instead of text")
    clear = sub.add_parser("clear", parents=[common], help="remove entries",
                           description="Remove every entry, or with --older-than only those not "
                                       "used for that long.")
    clear.add_argument("--older-than", metavar="D", type=_age_arg,
                       help="only entries unused for D (e.g. 7d, 12h, 30m, 45s; plain number = seconds)")
    exp = sub.add_parser("export", parents=[common], help="write the entries to an archive",
                         description="Write every valid entry (optionally only kernels whose name matches "
                                     "--name) to a .tar.gz archive that `cache import` loads on other machines.")
    exp.add_argument("archive", help="output file, e.g. kernels.pkc.tgz")
    exp.add_argument("--name", metavar="GLOB", help="only kernels whose module.qualname matches (fnmatch)")
    imp = sub.add_parser("import", parents=[common], help="load the entries of an archive",
                         description="Store the entries of an archive made by `cache export` (or `pykern "
                                     "compile --export`). Entries are verified (checksum, key) and refused "
                                     "when built by another pykern, LLVM or Python; nothing is extracted by "
                                     "name. Exit status 1 if any entry was refused.")
    imp.add_argument("archive")
    return p


def _age_arg(text: str) -> float:
    try:
        return parse_age(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    """Run the ``cache`` command; ``argv`` excludes the program name (a leading
    ``"cache"`` is accepted too).  Returns the exit status."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["cache"]:
        args_in = args_in[1:]
    try:
        args = _parser().parse_args(args_in)
    except SystemExit as exc:  # --help or a usage error: argparse has printed it
        return int(exc.code or 0)
    cache = KernelCache(args.dir, enabled=True) if args.dir else KernelCache(enabled=True)
    out = sys.stdout
    if args.command == "info":
        d = cache.info()
        if args.json:
            print(json.dumps(d, indent=2), file=out)
            return 0
        from pykern.runtime.cache import cache_enabled_by_env

        state = "refused: " + d["disabled_reason"] if d["disabled_reason"] else (
            "on" if cache_enabled_by_env() else "off (PYKERN_CACHE=off)")
        lookups = d["hits"] + d["misses"]
        rate = f" ({100.0 * d['hits'] / lookups:.0f}% hits)" if lookups else ""
        rows = [("location", d["directory"]), ("state", state), ("entries", str(d["entries"])),
                ("size", f"{_size(d['bytes'])} of {_size(d['max_bytes'])} limit"),
                ("hits", f"{d['hits']}{rate}"), ("misses", str(d["misses"])),
                ("writes", str(d["writes"])), ("compiles", str(d["compiles"])),
                ("imported", str(d["imported"])), ("discarded", f"{d['corrupt']} bad entries"),
                ("evicted", str(d["evicted"]))]
        for k, v in rows:
            print(f"{k:<10} {v}", file=out)
        return 0 if not d["disabled_reason"] else 1
    if args.command == "list":
        entries = cache.entries()
        if args.json:
            print(json.dumps([{"name": e.name, "signature": e.signature, "target": e.target,
                               "size": e.size, "last_used": e.last_used, "path": e.path,
                               "valid": e.valid, "problem": e.problem} for e in entries], indent=2), file=out)
            return 0
        now = time.time()
        if not entries:
            print(f"no entries in {cache.directory}", file=out)
        for e in entries:
            what = f"{e.name} {e.signature}" if e.valid else f"<unreadable: {e.problem}>"
            print(f"{_size(e.size):>10}  {_age(now - e.last_used):>9}  {e.target:<16} {what}", file=out)
        return 0
    if args.command == "export":
        from fnmatch import fnmatchcase

        from pykern.runtime.cache.bundle import export_cache

        digests = None
        if args.name:
            digests = [e.digest for e in cache.entries() if e.valid and fnmatchcase(e.name, args.name)]
        if cache.disabled_reason:
            print(f"pykern cache: {cache.disabled_reason}", file=sys.stderr)
            return 1
        n = export_cache(cache, args.archive, digests)
        print(f"exported {n} entr{'y' if n == 1 else 'ies'} from {cache.directory} to {args.archive}", file=out)
        return 0
    if args.command == "import":
        import tarfile
        import zlib

        from pykern.runtime.cache.bundle import import_cache

        try:
            report = import_cache(cache, args.archive)
        except (OSError, tarfile.TarError, EOFError, zlib.error) as exc:
            print(f"pykern cache import: cannot read {args.archive}: {exc}", file=sys.stderr)
            return 1
        for name, reason in report.skipped:
            print(f"skipped {name}: {reason}", file=sys.stderr)
        if report.damaged:
            print(f"pykern cache import: {args.archive} is damaged (truncated or corrupted: {report.damaged}); "
                  f"the entries before the damage were verified and stored", file=sys.stderr)
        print(f"imported {report.imported} entr{'y' if report.imported == 1 else 'ies'} into {cache.directory}"
              + (f", refused {len(report.skipped)}" if report.skipped else ""), file=out)
        return 1 if report.skipped or report.damaged or cache.disabled_reason else 0
    if args.command == "clear":
        n = cache.clear(args.older_than)
        print(f"removed {n} entr{'y' if n == 1 else 'ies'} from {cache.directory}", file=out)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
