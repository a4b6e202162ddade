"""Coq types ⇄ the project's neutral type AST (``veriscale.values.types``).

VERINA's Coq signatures are hand-written (``(list Z)``, ``(Z  * nat)``,
``list (ascii * nat)``); one parse makes them the same neutral types the Lean
tasks use, which is what lets values (and whole suites) travel between the two.
``R`` and function types are kept as :class:`Opaque` with their Coq text.
"""

from __future__ import annotations

import re

from veriscale.values.types import (
    ArrayT,
    ListT,
    Opaque,
    OptionT,
    ProdT,
    Scalar,
    TypeParseError,
    ValueType,
)

COQ_SCALARS = {"Z": "Int", "nat": "Nat", "bool": "Bool", "string": "String", "ascii": "Char"}
"""Coq scalar → neutral scalar name."""

NEUTRAL_SCALARS = {v: k for k, v in COQ_SCALARS.items()}
NEUTRAL_SCALARS["UInt8"] = "Z"  # no UInt8 in the Coq track; closest carrier

_TOKEN = re.compile(r"\s*(->|\*|\(|\)|[A-Za-z_][\w.']*|\S)")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # pragma: no cover - the pattern matches any non-space
            break
        out.append(m.group(1))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise TypeParseError(f"unexpected end of Coq type {self.text!r}")
        self.pos += 1
        return tok

    def parse(self) -> ValueType:
        t = self.arrow()
        if self.peek() is not None:
            raise TypeParseError(f"unexpected {self.peek()!r} in Coq type {self.text!r}")
        return t

    def arrow(self) -> ValueType:
        start = self.pos
        left = self.prod()
        if self.peek() == "->":
            self.take()
            self.arrow()
            return Opaque(" ".join(self.toks[start:self.pos]).replace("( ", "(")
                          .replace(" )", ")"))
        return left

    def prod(self) -> ValueType:
        # `*` is left-associative in Coq: A * B * C = (A * B) * C.
        left = self.app()
        while self.peek() == "*":
            self.take()
            left = ProdT(left, self.app())
        return left

    def app(self) -> ValueType:
        head = self.take()
        if head == "(":
            inner = self.arrow()
            if self.take() != ")":
                raise TypeParseError(f"unbalanced parentheses in Coq type {self.text!r}")
            return inner
        if not re.match(r"[A-Za-z_]", head):
            raise TypeParseError(f"unexpected {head!r} in Coq type {self.text!r}")
        args: list[ValueType] = []
        while self.peek() not in (None, ")", "*", "->"):
            args.append(self.atom())
        if head in ("list", "option") and len(args) == 1:
            return ListT(args[0]) if head == "list" else OptionT(args[0])
        if head == "prod" and len(args) == 2:
            return ProdT(args[0], args[1])
        if head in COQ_SCALARS and not args:
            return Scalar(COQ_SCALARS[head])
        if not args:
            return Opaque(head)
        return Opaque(f"{head} " + " ".join(coq_type_atom(a) for a in args))

    def atom(self) -> ValueType:
        tok = self.take()
        if tok == "(":
            inner = self.arrow()
            if self.take() != ")":
                raise TypeParseError(f"unbalanced parentheses in Coq type {self.text!r}")
            return inner
        if tok in COQ_SCALARS:
            return Scalar(COQ_SCALARS[tok])
        if re.match(r"[A-Za-z_]", tok):
            return Opaque(tok)
        raise TypeParseError(f"unexpected {tok!r} in Coq type {self.text!r}")


def parse_coq_type(text: str) -> ValueType:
    """The neutral type of a Coq type string; unknown constructors are :class:`Opaque`."""
    if not isinstance(text, str) or not text.strip():
        raise TypeParseError(f"empty Coq type string {text!r}")
    return _Parser(text.strip()).parse()


def coq_type(t: ValueType) -> str:
    """Canonical Coq text of a neutral type (``Array`` is carried as ``list``)."""
    if isinstance(t, Scalar):
        if t.name not in NEUTRAL_SCALARS:
            raise TypeParseError(f"the Coq track has no counterpart of {t.name}")
        return NEUTRAL_SCALARS[t.name]
    if isinstance(t, (ListT, ArrayT)):
        return f"list {coq_type_atom(t.elem)}"
    if isinstance(t, OptionT):
        return f"option {coq_type_atom(t.elem)}"
    if isinstance(t, ProdT):
        right = coq_type(t.snd)
        return f"{coq_type(t.fst)} * " + (f"({right})" if isinstance(t.snd, ProdT) else right)
    if isinstance(t, Opaque):
        return t.text
    raise TypeParseError(f"no Coq type for {t!r}")  # pragma: no cover


def standard_type(t: ValueType) -> str | None:
    """``coq_type(t)`` when ``t`` is built of the standard library's types only (no
    task-defined or opaque type): text that means the same outside the task."""
    if isinstance(t, Scalar):
        return NEUTRAL_SCALARS.get(t.name)
    if isinstance(t, (ListT, ArrayT, OptionT)):
        return coq_type(t) if standard_type(t.elem) is not None else None
    if isinstance(t, ProdT):
        ok = standard_type(t.fst) is not None and standard_type(t.snd) is not None
        return coq_type(t) if ok else None
    return None


def coq_type_atom(t: ValueType) -> str:
    text = coq_type(t)
    return text if re.fullmatch(r"[\w.']+", text) else f"({text})"


def same_shape(coq: ValueType, other: ValueType) -> bool:
    """Do a Coq-track type and another language's type carry the same values
    (``Array`` and ``List`` alike, ``UInt8`` inside ``Z``)? Used by ``port``."""
    if isinstance(other, ArrayT):
        other = ListT(other.elem)
    if isinstance(coq, Scalar) and isinstance(other, Scalar):
        return coq.name == other.name or (coq.name == "Int" and other.name == "UInt8")
    if isinstance(coq, (ListT, OptionT)) and type(coq) is type(other):
        return same_shape(coq.elem, other.elem)  # type: ignore[attr-defined]
    if isinstance(coq, ProdT) and isinstance(other, ProdT):
        return same_shape(coq.fst, other.fst) and same_shape(coq.snd, other.snd)
    return False
