"""The kernel sanitizer's settings: which checks a kernel is compiled with.

``@jit(sanitize=...)`` and the process-wide ``PYKERN_SANITIZE`` take the same values: ``"race"``
(data races on shared and global memory), ``"init"`` (reads of memory nothing wrote),
``"bounds"`` (indices checked as under ``debug=True``), ``"all"``, or a comma list of them; plus
``"warn"`` to get a ``SanitizerWarning`` instead of a ``SanitizerError``. A kernel is compiled
with the union of both. The checks run on the cpu target only (see docs/user/debugging.md, "Kernel sanitizer").

Example::

    >>> parse_modes("race, init")
    'init,race'
    >>> parse_modes("all,warn")
    'bounds,init,race,warn'
    >>> parse_modes(False)
    ''
"""

from __future__ import annotations


#: the checks, in canonical order
CHECKS = ("bounds", "init", "race")
#: distinct hazards a launch names in its error/warning (the rest are counted)
REPORT_LIMIT = 20


def parse_modes(value) -> str:
    """The canonical comma list of ``value`` (a str, a list of them, True = "all", False/None = "")."""
    if value is None or value is False:
        return ""
    if value is True:
        value = "all"
    if isinstance(value, (list, tuple, set, frozenset)):
        value = ",".join(str(v) for v in value)
    if not isinstance(value, str):
        raise TypeError(f"sanitize= takes a str such as 'race,init' or 'all', not {type(value).__name__}")
    got = set()
    for word in value.replace(" ", "").lower().split(","):
        if not word or word in ("0", "off", "none", "false"):
            continue
        if word in ("1", "all", "true", "on"):
            got.update(CHECKS)
        elif word in CHECKS or word in ("warn", "watch"):  # watch: pykern.debug.watch's instrumented build
            got.add(word)
        else:
            raise ValueError(f"unknown sanitizer check {word!r}: use race, init, bounds, all (and warn), "
                             "or a comma list of them")
    if got == {"warn"}:
        got.clear()  # warn alone checks nothing
    if got == {"warn", "watch"}:
        got.discard("warn")
    return ",".join(sorted(got))


def process_setting() -> str:
    """``PYKERN_SANITIZE`` as a canonical list ('' when unset); a bad value is a ValueError
    naming the variable."""
    from pykern.core import settings

    raw = settings.get("PYKERN_SANITIZE") or ""
    try:
        return parse_modes(raw)
    except ValueError as e:
        raise ValueError(f"PYKERN_SANITIZE={raw!r}: {e}") from None


def combine(decorator_value, process_value: str | None = None) -> str:
    """The checks a kernel is compiled with: its own ``sanitize=`` and the process setting."""
    mine = parse_modes(decorator_value)
    other = process_setting() if process_value is None else process_value
    if not other:
        return mine
    return ",".join(sorted(set(filter(None, mine.split(","))) | set(other.split(","))))


def checks(modes: str) -> set:
    """The set of checks in a canonical list (``warn`` excluded)."""
    return {m for m in modes.split(",") if m in CHECKS}
