"""Signature strings and objects: ``"void(float32[:], int64)"`` -> (void, [float32[:], int64]).

Accepted spellings (numba's, plus what ``str(type)`` prints, so that every
type round-trips)::

    void(float32[:], float64[:, ::1], int32, UniTuple(float32, 3))
    float32(float32, float32)           # a device function returning float32
    (float32[:], int32)                 # return type left out: void
    float32[::1, :]                     # a bare argument list: void
    Tuple(int32, float64)  UniTuple(int64 x 2)  array(float32, 2d, C)
    readonly float32[:]   shared float32[::1]

Example::

    >>> parse_signature("void(float32[:], int32)")
    (void, [float32[:], int32])
"""

from __future__ import annotations

import re

from pykern.core.errors import CompileError
from pykern.frontend import types as T
from pykern.frontend.types import Signature  # noqa: F401  (defined with the types it is made of)

_ACCEPTED = (
    "accepted: 'ret(arg, ...)' or '(arg, ...)' with scalar names (int8..int64, uint8..uint64, "
    "float16/32/64, boolean, void), arrays 'float32[:]', 'float32[:, ::1]' (C), 'float32[::1, :]' (F), "
    "tuples 'UniTuple(float32, 3)', 'Tuple(int32, float64)'; or pykern types, e.g. void(float32[:], int32)"
)


class SignatureError(CompileError, TypeError):
    """A signature string or object pykern cannot read."""


_TOKEN = re.compile(r"\s*(::1|::|:|\(|\)|\[|\]|,|\d+|[A-Za-z_][A-Za-z_0-9]*)")


def _tokenize(text: str) -> list:
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise SignatureError(f"cannot read signature {text!r} at {text[pos:]!r}; {_ACCEPTED}")
        tokens.append(m.group(1))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    def fail(self, what: str):
        where = " ".join(self.toks[self.i : self.i + 3]) or "end of text"
        raise SignatureError(f"cannot read signature {self.text!r}: {what} (at {where!r}); {_ACCEPTED}")

    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def take(self, expected=None):
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            self.fail(f"expected {expected!r}" if expected else "unexpected end")
        self.i += 1
        return tok

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    # type := prefix* base dims?
    def type_(self) -> T.Type:
        readonly, space = False, "global"
        while self.peek() in ("readonly", "shared", "local", "const", "global"):
            tok = self.take()
            if tok == "readonly":
                readonly = True
            else:
                space = tok
        tok = self.peek()
        if tok is None or not re.match(r"[A-Za-z_]", tok):
            self.fail("expected a type name")
        self.take()
        if tok == "UniTuple":
            self.take("(")
            elem = self.type_()
            if self.peek() == "x":
                self.take()
            else:
                self.take(",")
            n = self.take()
            if not n.isdigit():
                self.fail("expected the tuple length")
            self.take(")")
            base: T.Type = T.Tuple((elem,) * int(n))
        elif tok == "Tuple":
            self.take("(")
            # numba's constructor spelling Tuple((int32, float32)) (its str() is Tuple(int32, float32))
            inner = self.peek() == "("
            if inner:
                self.take("(")
            elems = self.type_list(")")
            self.take(")")
            if inner:
                if self.peek() == ",":
                    self.take()
                self.take(")")
            base = T.Tuple(tuple(elems))
        elif tok == "CPointer" and self.peek() == "(":  # numba's raw pointer parameter
            self.take("(")
            elem = self.type_()
            self.take(")")
            base = T.cpointer(elem)
        elif tok == "array" and self.peek() == "(":
            base = self.numba_array()
        else:
            base = _scalar_by_name(tok)
            if base is None:
                self.fail(f"unknown type name {tok!r}")
        if self.peek() == "[":
            base = self.dims(base)
        if isinstance(base, T.Array):
            if readonly or space != "global":
                base = base.with_(readonly=readonly or base.readonly, space=space)
        elif readonly or space != "global":
            self.fail("'readonly'/'shared'/'local'/'const' apply to arrays only")
        return base

    def numba_array(self) -> T.Array:
        # numba's str(): array(float32, 2d, C)
        self.take("(")
        dtype = self.type_()
        self.take(",")
        n = self.take()
        if not n.isdigit() or self.take() != "d":
            self.fail("expected '<n>d'")
        self.take(",")
        layout = self.take()
        if layout not in ("C", "F", "A"):
            self.fail("layout must be C, F or A")
        readonly = False
        if self.peek() == ",":
            self.take()
            flag = self.take()
            if flag != "readonly":
                self.fail("expected 'readonly'")
            readonly = True
        self.take(")")
        ndim = int(n)
        if ndim == 1 and layout == "F":
            layout = "C"
        return _make_array(self, dtype, ndim, layout, readonly)

    def dims(self, dtype: T.Type) -> T.Array:
        if isinstance(dtype, T.Array) or not dtype.is_scalar:
            self.fail(f"cannot make an array of {dtype}")
        self.take("[")
        marks = []
        while self.peek() != "]":
            tok = self.take()
            if tok not in (":", "::1"):
                self.fail("array dimensions are ':' or '::1'")
            marks.append(tok == "::1")
            if self.peek() == ",":
                self.take()
            elif self.peek() != "]":
                self.fail("expected ',' or ']'")
        self.take("]")
        layout = T.layout_from_marks(marks)
        if layout is None:
            self.fail("'::1' may mark only the first (F) or the last (C) dimension")
        return _make_array(self, dtype, len(marks), layout, False)

    def type_list(self, closer: str) -> list:
        out = []
        while self.peek() != closer:
            out.append(self.type_())
            if self.peek() == ",":
                self.take()
            elif self.peek() != closer:
                self.fail(f"expected ',' or {closer!r}")
        return out

    def signature(self):
        if self.peek() == "(":
            self.take("(")
            args = self.type_list(")")
            self.take(")")
            ret: T.Type = T.void
        else:
            first = self.type_()
            if self.peek() == "(":
                self.take("(")
                args = self.type_list(")")
                self.take(")")
                ret = first
            else:
                # a bare list of argument types
                args = [first]
                while self.peek() == ",":
                    self.take()
                    if self.at_end():  # 'float32[:], int32, ': numba evaluates it as a Python tuple
                        break
                    args.append(self.type_())
                ret = T.void
        if not self.at_end():
            self.fail("unexpected text after the signature")
        for a in args:
            if isinstance(a, T.Void):
                self.fail("'void' is only a return type")
        return ret, args


def _make_array(p: _Parser, dtype, ndim, layout, readonly) -> T.Array:
    if not dtype.is_scalar:
        p.fail(f"cannot make an array of {dtype}")
    if not 0 <= ndim <= T.MAX_NDIM:
        p.fail(f"arrays have 0 to {T.MAX_NDIM} dimensions, not {ndim}")
    return T.Array(dtype, ndim, layout, readonly=readonly)


def _scalar_by_name(name: str):
    if name == "void" or name == "none":
        return T.void
    return T.SCALARS.get(name) or T.ALIASES.get(name)


def parse_type(text: str) -> T.Type:
    """One type from its spelling: ``parse_type("float32[:, ::1]")``."""
    p = _Parser(text)
    t = p.type_()
    if not p.at_end():
        p.fail("unexpected text after the type")
    return t


def _coerce_type(obj) -> T.Type:
    """A pykern Type from a Type, a numpy dtype/type, a string, or a numba type (by str())."""
    if isinstance(obj, T.Type):
        return obj
    if isinstance(obj, str):
        return parse_type(obj)
    try:
        import numpy as np

        if isinstance(obj, np.dtype) or (isinstance(obj, type) and issubclass(obj, np.generic)):
            return T.from_dtype(obj)
    except TypeError as e:
        raise SignatureError(str(e)) from None
    text = str(obj)
    try:
        return parse_type(text)
    except SignatureError:
        raise SignatureError(f"cannot use {obj!r} as a type; {_ACCEPTED}") from None


def parse_signature(sig):
    """``(return_type, [argtypes])`` of ``sig`` (see ``_parse_signature``); a record
    type argument (``pykern.from_dtype(dt)``) means a record passed by reference,
    as in numba: a 0-d array of the record."""
    rt, args = _parse_signature(sig)
    return rt, [T.Array(a, 0, "A") if isinstance(a, T.Record) else a for a in args]


def declares_return(sig) -> bool:
    """Whether ``sig`` names a return type: ``"int32(int32)"`` and ``int32(int32)`` do,
    ``"(int32, int32)"`` and ``(int32, int32)`` do not -- for a device function numba then
    infers the return type from the body."""
    if isinstance(sig, str):
        text = sig.strip()
        return not text.startswith("(") and "(" in text
    return isinstance(sig, Signature) or (hasattr(sig, "return_type") and hasattr(sig, "args"))


def _parse_signature(sig):
    """``(return_type, [argtypes])`` from a signature string, a ``Signature``
    (``void(float32[:], int32)``), a numba signature (``.return_type``/``.args``),
    or a tuple/list of argument types (return type void).

    >>> parse_signature("float32(float32, int64)")
    (float32, [float32, int64])
    """
    if isinstance(sig, str):
        return _Parser(sig).signature()
    if isinstance(sig, Signature):
        return sig.return_type, list(sig.args)
    if hasattr(sig, "return_type") and hasattr(sig, "args"):  # numba's Signature
        return _coerce_type(sig.return_type), [_coerce_type(a) for a in sig.args]
    if isinstance(sig, (tuple, list)):
        args = [_coerce_type(a) for a in sig]
        for a in args:
            if isinstance(a, T.Void):
                raise SignatureError(f"'void' is only a return type; {_ACCEPTED}")
        return T.void, args
    if isinstance(sig, T.Type):
        return T.void, [sig]
    raise SignatureError(f"cannot read signature {sig!r}; {_ACCEPTED}")
