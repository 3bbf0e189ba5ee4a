"""A pykern bug while lowering is a located CompileError, never an unlocated one (as Triton's ``visit``)."""

import pytest

from frontend_helpers import lower
from pykern.errors import CompileError


def test_an_internal_error_in_an_expression_points_at_it(monkeypatch):
    from pykern.frontend import calls

    def broken(lw, node, name):
        raise KeyError("oops")

    monkeypatch.setitem(calls._BUILTINS, abs, broken)
    with pytest.raises(CompileError) as ei:
        lower("def k(a):\n    x = 1.0\n    a[0] = x + abs(a[1])\n", "void(float32[:])")
    e = ei.value
    assert "internal error while compiling 'k': KeyError: 'oops'" in str(e)
    assert "pykern bug" in e.hint
    # the innermost node being lowered: the abs() call, line 3, 0-based column 15
    assert e.loc is not None and (e.loc.line, e.loc.col) == (3, 15), e.loc
    assert isinstance(e.__cause__, KeyError)


def test_an_internal_error_in_a_statement_points_at_it(monkeypatch):
    from pykern.frontend.lower_ast import FunctionLowerer

    def broken(self, node):
        raise AttributeError("no such thing")

    monkeypatch.setattr(FunctionLowerer, "stmt_Pass", broken)
    with pytest.raises(CompileError) as ei:
        lower("def k(a):\n    a[0] = 1.0\n    if a[0] > 0:\n        pass\n", "void(float32[:])")
    e = ei.value
    assert "internal error while compiling 'k': AttributeError" in str(e)
    assert e.loc is not None and e.loc.line == 4, e.loc


def test_an_internal_error_outside_any_statement_is_located_at_the_function(monkeypatch):
    from pykern.frontend import analysis

    def broken(module):
        raise RuntimeError("analysis bug")

    monkeypatch.setattr(analysis, "scan", broken)
    with pytest.raises(CompileError) as ei:
        lower("def k(a):\n    a[0] = 1.0\n", "void(float32[:])")
    e = ei.value
    assert "internal error while compiling 'k': RuntimeError: analysis bug" in str(e)
    assert e.loc is not None and e.loc.line >= 1
