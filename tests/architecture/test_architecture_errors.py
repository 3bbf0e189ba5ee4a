"""A pykern bug while lowering is a located CompileError, never an unlocated one (as Triton's ``visit``)."""

import pytest

from frontend_helpers import lower
from pykern.core.errors import CompileError


def test_an_internal_error_in_an_expression_points_at_it(monkeypatch):
    from pykern.frontend import calls

    def broken(lw, node, name):
        raise KeyError("oops")

    monkeypatch.setitem(calls.registry.CALLS, abs, broken)
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


@pytest.mark.parametrize("method, line", [("expr_Subscript", 3), ("stmt_For", 2), ("expr_Compare", 3)])
def test_an_internal_error_in_any_visitor_mixin_is_located(monkeypatch, method, line):
    # the visitor methods live in one mixin per kind of node; all are reached through _visit
    from pykern.frontend.lower_ast import FunctionLowerer

    def broken(self, node):
        raise ValueError("mixin bug")

    monkeypatch.setattr(FunctionLowerer, method, broken)
    with pytest.raises(CompileError) as ei:
        lower("def k(a):\n    for i in range(2):\n        a[i] = 1.0 if a[i] > 0 else 2.0\n", "void(float32[:])")
    e = ei.value
    assert "internal error while compiling 'k': ValueError: mixin bug" in str(e)
    assert e.loc is not None and e.loc.line == line, e.loc


def test_the_lowering_mixins_do_not_shadow_each_other():
    # a method defined in two mixins would silently take the first one in the MRO
    from pykern.frontend.lower_ast import FunctionLowerer

    seen = {}
    for cls in FunctionLowerer.__mro__[:-1]:
        for name, v in vars(cls).items():
            if callable(v) and not name.startswith("__"):
                assert name not in seen, f"{name} is defined in {seen.get(name)} and {cls.__name__}"
                seen[name] = cls.__name__
