"""The neutral value types, as a small AST.

Benchmarks name parameter types in a signature notation (VERINA's, which every
format here shares): ``List (Int)``, ``(Int × Int)``, ``Prod Nat Nat``. These are
written by hand; parsing them once into a canonical tree is what lets every later
stage treat ``List (Int)`` and ``List Int`` alike, and lets each language plug-in
map a type to its own syntax. Types we cannot model (``Map Int Int``,
``Int -> Bool``) become :class:`Opaque` and travel through as notation text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SCALARS = ("Nat", "Int", "Bool", "Char", "String", "Float", "UInt8")


class TypeParseError(ValueError):
    """A type string that is not a Lean type at all (unbalanced parentheses, empty)."""


@dataclass(frozen=True)
class ValueType:
    """Base class of all types; ``str(t)`` is the canonical signature notation."""

    def notation(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.notation()

    def atom(self) -> str:
        """Notation safe to use as a type argument (parenthesised if compound)."""
        text = self.notation()
        return text if isinstance(self, Scalar) else f"({text})"


@dataclass(frozen=True)
class Scalar(ValueType):
    name: str

    def notation(self) -> str:
        return self.name


@dataclass(frozen=True)
class ListT(ValueType):
    elem: ValueType

    def notation(self) -> str:
        return f"List {self.elem.atom()}"


@dataclass(frozen=True)
class ArrayT(ValueType):
    elem: ValueType

    def notation(self) -> str:
        return f"Array {self.elem.atom()}"


@dataclass(frozen=True)
class OptionT(ValueType):
    elem: ValueType

    def notation(self) -> str:
        return f"Option {self.elem.atom()}"


@dataclass(frozen=True)
class ProdT(ValueType):
    fst: ValueType
    snd: ValueType

    def notation(self) -> str:
        left = self.fst.atom() if isinstance(self.fst, ProdT) else _arg(self.fst)
        return f"{left} × {_arg(self.snd, right=True)}"


@dataclass(frozen=True)
class Opaque(ValueType):
    """A type we do not model; values of it are kept as notation text."""

    text: str

    def notation(self) -> str:
        return self.text

    def atom(self) -> str:
        return self.text if re.fullmatch(r"[\w.]+", self.text) else f"({self.text})"


def _arg(t: ValueType, right: bool = False) -> str:
    # `×` binds looser than application and is right-associative.
    if isinstance(t, ProdT):
        return t.notation() if right else t.atom()
    if isinstance(t, Opaque):
        return t.atom()
    return t.notation()


NAT, INT, BOOL, CHAR, STRING, FLOAT, UINT8 = (Scalar(n) for n in SCALARS)

_TOKEN = re.compile(r"\s*(->|→|×|\(|\)|[A-Za-z_][\w.]*|\S)")


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            break
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise TypeParseError(f"unexpected end of type {self.text!r}")
        self.pos += 1
        return tok

    def parse(self) -> ValueType:
        t = self.arrow()
        if self.peek() is not None:
            raise TypeParseError(f"unexpected {self.peek()!r} in type {self.text!r}")
        return t

    def arrow(self) -> ValueType:
        start = self.pos
        left = self.prod()
        if self.peek() in ("->", "→"):
            self.take()
            self.arrow()
            return Opaque(_join(self.tokens[start : self.pos]))
        return left

    def prod(self) -> ValueType:
        left = self.app()
        if self.peek() == "×":
            self.take()
            return ProdT(left, self.prod())
        return left

    def app(self) -> ValueType:
        start = self.pos
        head = self.take()
        if head == "(":
            inner = self.arrow()
            if self.take() != ")":
                raise TypeParseError(f"unbalanced parentheses in type {self.text!r}")
            return inner
        if head in (")", "×", "->", "→") or not re.match(r"[A-Za-z_]", head):
            raise TypeParseError(f"unexpected {head!r} in type {self.text!r}")
        args: list[ValueType] = []
        while self.peek() is not None and self.peek() not in (")", "×", "->", "→"):
            args.append(self.atom())
        if head in ("List", "Array", "Option") and len(args) == 1:
            return {"List": ListT, "Array": ArrayT, "Option": OptionT}[head](args[0])
        if head == "Prod" and len(args) == 2:
            return ProdT(args[0], args[1])
        if head in SCALARS and not args:
            return Scalar(head)
        return Opaque(_join(self.tokens[start : self.pos]))

    def atom(self) -> ValueType:
        tok = self.take()
        if tok == "(":
            inner = self.arrow()
            if self.take() != ")":
                raise TypeParseError(f"unbalanced parentheses in type {self.text!r}")
            return inner
        if tok in SCALARS:
            return Scalar(tok)
        if re.match(r"[A-Za-z_]", tok):
            return Opaque(tok)
        raise TypeParseError(f"unexpected {tok!r} in type {self.text!r}")


def _join(tokens: list[str]) -> str:
    out = ""
    for tok in tokens:
        if out and not out.endswith("(") and tok != ")":
            out += " "
        out += tok
    return out


def parse_type(text: str) -> ValueType:
    """Parse a Lean type string; unknown constructors become :class:`Opaque`."""
    if not isinstance(text, str) or not text.strip():
        raise TypeParseError(f"empty type string {text!r}")
    return _Parser(text.strip()).parse()


def is_modelled(t: ValueType) -> bool:
    """True when every part of ``t`` is a type we model (no opaque leaves)."""
    if isinstance(t, Opaque):
        return False
    if isinstance(t, (ListT, ArrayT, OptionT)):
        return is_modelled(t.elem)
    if isinstance(t, ProdT):
        return is_modelled(t.fst) and is_modelled(t.snd)
    return True
