"""numba.cuda's argument hints: ``cuda.In(a)``, ``cuda.Out(a)``, ``cuda.InOut(a)`` say how a
host array argument moves: copied to the device only, back to the host only, or both.
``wrap_arg(value, default=InOut)`` is numba's helper for launch extensions.

A host numpy array passed bare behaves as ``InOut`` (on the cpu target kernels use its
memory directly, which is the same thing). ``In`` matters there: the kernel works on a
copy, so its writes do not reach the host array, as on a GPU.

Example::

    k[1, 1](cuda.In(x), cuda.Out(y))      # x is only read, y only written
"""

from __future__ import annotations


class ArgHint:
    """A host value and how it moves for one launch (``to_device`` gives what the kernel gets)."""

    def __init__(self, value):
        self.value = value

    def to_device(self, retr, stream=0):
        """The device value for the kernel; write-backs to run after the launch go to ``retr``."""
        raise NotImplementedError

    def _device(self, stream, copy):
        from pykern.runtime.memory.arrays import auto_device

        return auto_device(self.value, stream=stream, copy=copy)

    def __repr__(self):
        return f"{type(self).__name__}({self.value!r})"


class In(ArgHint):
    """Copied to the device; the kernel's writes stay there."""

    def to_device(self, retr, stream=0):
        devary, _ = self._device(stream, copy=True)
        return devary


class Out(ArgHint):
    """Not copied in (the kernel writes it); copied back to the host array after the launch."""

    def to_device(self, retr, stream=0):
        devary, new = self._device(stream, copy=False)
        if new:
            retr.append(lambda: devary.copy_to_host(self.value, stream=stream))
        return devary


class InOut(ArgHint):
    """Copied in, and back to the host array after the launch."""

    def to_device(self, retr, stream=0):
        devary, new = self._device(stream, copy=True)
        if new:
            retr.append(lambda: devary.copy_to_host(self.value, stream=stream))
        return devary


def wrap_arg(value, default=InOut):
    """``value`` itself when it is already a hint, else ``default(value)`` (numba's ``wrap_arg``)."""
    return value if isinstance(value, ArgHint) else default(value)


def convert(args, stream):
    """``(device values, write-backs)`` for launch arguments some of which are hints, or None
    when none is."""
    if not any(isinstance(a, ArgHint) for a in args):
        return None
    retr = []
    return tuple(a.to_device(retr, stream=stream) if isinstance(a, ArgHint) else a for a in args), retr
