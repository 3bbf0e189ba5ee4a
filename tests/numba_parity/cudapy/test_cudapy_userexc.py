"""numba-cuda's ``tests/cudapy/test_userexc.py`` (see conftest.py): user exception classes raised from
kernels."""

from __future__ import annotations

import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


class _MyError(Exception):
    pass


def test_userexc_user_exception():
    # test_userexc.py TestUserExc.test_user_exception. numba prefixes "In function 'test_exc',
    # file ..., line N, tid=[0, 0, 0] ctaid=[0, 0, 0]" to the first argument; pykern keeps the
    # arguments and puts the place and thread in a note (README, "Differences"), so the note
    # is checked for the same facts (Python 3.10 has no notes and gets numba's prefix).
    import sys

    @cuda.jit("void(int32)", debug=True, opt=False)
    def test_exc(x):
        if x == 1:
            raise _MyError
        elif x == 2:
            raise _MyError("foo")

    def where(e):
        return "\n".join(getattr(e, "__notes__", [])) + str(e)

    test_exc[1, 1](0)
    with pytest.raises(_MyError) as cm:
        test_exc[1, 1](1)
    if sys.version_info >= (3, 11):
        assert cm.value.args == ()
    assert __file__.rsplit("/", 1)[-1] in where(cm.value)
    assert "(0, 0, 0)" in where(cm.value)
    with pytest.raises(_MyError) as cm:
        test_exc[1, 1](2)
    assert str(cm.value).endswith("foo")
    assert "raise _MyError(\"foo\")" in where(cm.value)
