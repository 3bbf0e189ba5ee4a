"""numba.cuda.cudadrv.devices' names on pykern (see ``pykern.numba_compat.cudadrv``)."""

def get_context(devnum=None):
    """The current context (``devnum`` selects that device first, as numba's)."""
    from pykern.numba_compat.host_api import current_context, select_device

    if devnum is not None:
        select_device(devnum)
    return current_context()


def require_context(fn):
    """numba's decorator making a context current before ``fn`` runs; pykern needs none."""
    return fn


def reset():
    """numba destroys every context; pykern waits for outstanding work (see ``pykern.close``)."""
    from pykern.numba_compat.host_api import close

    close()


def __getattr__(name):
    if name == "gpus":
        import pykern

        return pykern.gpus
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["get_context", "require_context", "reset", "gpus"]
