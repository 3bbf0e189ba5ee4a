"""Which target kernels run on ("cpu" or "hip"): chosen in one place, ``pykern.runtime``.

These are the runtime's own functions and state, named here for the glue
(dispatcher, compiler, compat) and for ``pykern.set_target``/``current_target``.

Example::

    >>> import pykern
    >>> pykern.set_target("cpu"); pykern.current_target()
    'cpu'
"""

from __future__ import annotations

from .runtime import TARGETS, _chosen, current_target, set_target  # noqa: F401
