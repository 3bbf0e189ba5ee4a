"""The ``sim`` target: kernels run as Python, one thread at a time, so pdb can step through them.

The typed IR the compiled targets lower to LLVM is turned into Python source
(``codegen_py``) whose statements carry the user's file and line numbers and whose
variables carry the user's names; values are numpy scalars of the IR's types, so
integer wraparound and float32/float16 rounding are those of the compiled code.
``scheduler`` runs the threads of each block, handing a baton between them at barriers.

Example::

    >>> import pykern as cuda, numpy as np
    >>> cuda.set_target("sim")                       # doctest: +SKIP
    >>> @cuda.jit
    ... def k(x):
    ...     i = cuda.grid(1)
    ...     if i == 3:
    ...         breakpoint()                         # stops here in pdb, thread 3
    ...     x[i] = i
"""
