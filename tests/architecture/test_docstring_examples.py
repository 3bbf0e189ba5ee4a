"""The examples in pykern's docstrings run and give what they show (doctest over the public modules)."""

import doctest
import glob
import importlib
import os
import warnings

import pytest

import pykern
from pykern.runtime.hip import library as hip

pytestmark = pytest.mark.usefixtures("cpu_target")


# --------------------------------------------------------------------------- docstring examples
def _pykern_modules():
    """Every module of the package: a docstring example anywhere is a promise to users."""
    root = os.path.dirname(pykern.__file__)
    for path in sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True)):
        rel = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".")
        yield rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _doctests():
    for name in _pykern_modules():
        if name == "pykern.__main__":
            continue  # running it is the CLI
        for t in doctest.DocTestFinder().find(importlib.import_module(name)):
            if t.examples:
                yield pytest.param(t, id=t.name)


@pytest.mark.parametrize("test", list(_doctests()))
def test_docstring_examples_hold(test):
    if any('"hip"' in e.source for e in test.examples) and not hip.available()[0]:
        pytest.skip("the example needs an AMD GPU")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runner.run(test, out=lambda s: pytest.fail(s, pytrace=False))
    assert runner.failures == 0
