"""numba.cuda.kernels' ready-made kernels (``pykern.numba_compat.kernels.transpose``)."""

from pykern.numba_compat.kernels import transpose  # noqa: F401  (numba's spelling: cuda.kernels.transpose.transpose)
