"""Readable results of ``inspect_*`` and ``resources`` in Jupyter, unchanged values elsewhere.

``k.inspect_asm(sig)`` returns a :class:`Listing`: a ``str`` (every existing caller keeps
working: ``"s_endpgm" in k.inspect_asm(sig)``) that a notebook renders as a highlighted
code block and IPython prints as text rather than a quoted one-line repr.
``k.resources(sig)`` returns a :class:`Resources`: a ``dict`` shown as a small table.

Example::

    >>> text = Listing("define void @k()", "llvm")
    >>> text == "define void @k()", text._repr_markdown_().splitlines()[0]
    (True, '```llvm')
"""

from __future__ import annotations


class Listing(str):
    """A str with a language for notebook display (``llvm``, ``asm``, ``python``)."""

    def __new__(cls, text: str, language: str = "", title: str = ""):
        obj = super().__new__(cls, text)
        obj.language = language
        obj.title = title
        return obj

    def _repr_markdown_(self) -> str:
        fence = "````" if "```" in self else "```"
        head = f"**{self.title}**\n\n" if self.title else ""
        return f"{head}{fence}{self.language}\n{str(self).rstrip()}\n{fence}\n"

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def __reduce__(self):  # pickles (and copies) as the plain str it is
        return (str, (str(self),))


class Resources(dict):
    """The ``resources()`` dict, shown in a notebook as a two-column table."""

    def _repr_markdown_(self) -> str:
        rows = "\n".join(f"| {k} | {v} |" for k, v in self.items())
        return f"| resource | value |\n|---|---|\n{rows}\n"

    def _repr_pretty_(self, p, cycle) -> None:
        width = max((len(str(k)) for k in self), default=0)
        p.text("\n".join(f"{k:<{width}}  {v}" for k, v in self.items()))

    def __reduce__(self):
        return (dict, (dict(self),))


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where rich output reaches a front-end)."""
    import sys

    if "IPython" not in sys.modules:
        return False
    try:
        from IPython import get_ipython

        ip = get_ipython()
    except Exception:
        return False
    return ip is not None and getattr(ip, "kernel", None) is not None


def show(listing: Listing, file=None) -> None:
    """Print ``listing``; in a notebook (and without ``file``) display it rich."""
    if file is None and in_notebook():
        from IPython.display import display

        display(listing)
    else:
        import sys

        print(str(listing), file=file or sys.stdout)
