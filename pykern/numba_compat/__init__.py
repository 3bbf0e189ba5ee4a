"""pykern/numba_compat"""
