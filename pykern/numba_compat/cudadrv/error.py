"""numba.cuda.cudadrv.error's exception names. A failing HIP call raises ``HipError``, which is
``CudaAPIError`` here (``except CudaAPIError`` catches it; ``.code`` is the HIP status)."""

from pykern.core.errors import HipError, PykernError

CudaAPIError = HipError
CudaDriverError = HipError


class CudaSupportError(PykernError, ImportError):
    """numba's "no usable CUDA driver/device" error; pykern raises ``HipError``/``LaunchError`` for
    these, so this is only for programs that name it."""
