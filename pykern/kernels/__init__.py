"""numba.cuda.kernels' ready-made kernels (``pykern.kernels.transpose``)."""

from . import transpose  # noqa: F401  (numba's spelling: cuda.kernels.transpose.transpose)
