"""VERINA's value notation ⇄ typed values.

VERINA writes every compound value (in its JSON rows, in its generated test files)
as a Lean literal, so the dataset format's value notation *is* Lean's literal
syntax. It lives here, with the format, and the Lean plug-in uses it to write
values into Lean files and to read Lean's answers back; other languages have their
own literal syntax in their plug-ins.

Rendering (:func:`render`) produces escape-safe Lean source for any value,
so that no input, however hostile its strings, can break the generated file.
Parsing (:func:`parse`) is type-directed and accepts every form we meet:
Lean source literals, VERINA's hand-written literals (``some (1)``), ``#eval``
``Repr`` output (``some 1``, ``(15, 3.000000)``) and ``#reduce`` normal forms
(``Int.ofNat 3``, ``Int.negSucc 1``, ``{ toList := [..] }``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from veriscale.values.brackets import balanced_end
from veriscale.values.types import ArrayT, ListT, Opaque, OptionT, ProdT, Scalar, ValueType
from veriscale.values.value import IllTyped, OpaqueValue, Some, Unparsable, check

# ---------------------------------------------------------------- rendering


def _escape_char(c: str, quote: str) -> str:
    if c == "\\":
        return "\\\\"
    if c == quote:
        return "\\" + quote
    if c == "\n":
        return "\\n"
    if c == "\t":
        return "\\t"
    if c == "\r":
        return "\\r"
    code = ord(c)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    return c


def string_literal(s: str) -> str:
    """A Lean string literal denoting exactly ``s``."""
    return '"' + "".join(_escape_char(c, '"') for c in s) + '"'


def char_literal(c: str) -> str:
    """A Lean char literal denoting exactly ``c``."""
    return "'" + _escape_char(c, "'") + "'"


def _float(x: float) -> str:
    if math.isnan(x):
        return "(0.0 / 0.0)"
    if math.isinf(x):
        return "(1.0 / 0.0)" if x > 0 else "(-1.0 / 0.0)"
    text = repr(x).replace("e+", "e")
    if "e" not in text and "." not in text:
        text += ".0"
    return text


def render(t: ValueType, v: Any, *, arg: bool = True) -> str:
    """Lean source for value ``v`` of type ``t``.

    With ``arg=True`` (the default) the text is safe as a function argument:
    negative numbers and applications such as ``some 3`` are parenthesised.
    """
    why = check(t, v)
    if why:
        raise IllTyped(why)
    return _render(t, v, arg)


def _render(t: ValueType, v: Any, arg: bool) -> str:
    def wrap(text: str) -> str:
        return f"({text})" if arg else text

    if isinstance(t, Scalar):
        if t.name == "Bool":
            return "true" if v else "false"
        if t.name == "Char":
            return char_literal(v)
        if t.name == "String":
            return string_literal(v)
        if t.name == "Float":
            text = _float(v)
            return wrap(text) if text.startswith("-") else text
        return wrap(str(v)) if v < 0 else str(v)
    if isinstance(t, ListT):
        return "[" + ", ".join(_render(t.elem, x, False) for x in v) + "]"
    if isinstance(t, ArrayT):
        return "#[" + ", ".join(_render(t.elem, x, False) for x in v) + "]"
    if isinstance(t, ProdT):
        return "(" + _render(t.fst, v[0], False) + ", " + _render_tail(t.snd, v[1]) + ")"
    if isinstance(t, OptionT):
        if v is None:
            return "none"
        return wrap("some " + _render(t.elem, v.value, True))
    if isinstance(t, Opaque):
        text = v.text.strip()
        return wrap(text) if arg and not _is_atomic(text) else text
    raise TypeError(f"cannot render type {t!r}")  # pragma: no cover


def _render_tail(t: ValueType, v: Any) -> str:
    # `(a, b, c)` is Lean's own notation for `(a, (b, c))`.
    if isinstance(t, ProdT):
        return _render(t.fst, v[0], False) + ", " + _render_tail(t.snd, v[1])
    return _render(t, v, False)


def _is_atomic(text: str) -> bool:
    if re.fullmatch(r"[\w.']+", text):
        return True
    if text[:1] in "([" or text.startswith("#["):
        return balanced_end(text) == len(text)
    return False


# ---------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<chr>'(?:[^'\\]|\\x[0-9a-fA-F]{2}|\\u\{[0-9a-fA-F]+\}|\\u[0-9a-fA-F]{4}|\\.)')
    | (?P<num>-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+))
    | (?P<name>\.?[A-Za-z_][\w.]*)
    | (?P<punct>\#\[|:=|[-\[\](),{}/])
    )""",
    re.VERBOSE,
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def _unescape(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            raise Unparsable("dangling backslash in literal")
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e == "x" and re.match(r"[0-9a-fA-F]{2}", body[i + 2 : i + 4]):
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif e == "u" and body[i + 2 : i + 3] == "{":
            m = re.match(r"\{([0-9a-fA-F]{1,6})\}", body[i + 2 :])
            if m is None or int(m.group(1), 16) > 0x10FFFF:
                raise Unparsable(f"bad unicode escape in literal: {body[i:i + 12]!r}")
            out.append(chr(int(m.group(1), 16)))
            i += 2 + m.end()
        elif e == "u" and re.match(r"[0-9a-fA-F]{4}", body[i + 2 : i + 6]):
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        else:
            raise Unparsable(f"unknown escape \\{e} in literal")
    return "".join(out)


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise Unparsable(f"unexpected text {text[pos:pos + 20].strip()!r}")
            kind = m.lastgroup or ""
            self.items.append((kind, m.group(kind)))
            pos = m.end()
        self.pos = 0

    def peek(self, ahead: int = 0) -> tuple[str, str] | None:
        i = self.pos + ahead
        return self.items[i] if i < len(self.items) else None

    def next(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise Unparsable(f"literal ends early: {self.text!r}")
        self.pos += 1
        return tok

    def expect(self, value: str) -> None:
        _kind, got = self.next()
        if got != value:
            raise Unparsable(f"expected {value!r}, found {got!r} in {self.text!r}")

    def at(self, value: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[1] == value


def parse(t: ValueType, text: str) -> Any:
    """Parse Lean text into the canonical value of ``t``.

    Raises :class:`Unparsable` when the text is not one complete literal and
    :class:`IllTyped` when it is one but does not fit ``t``.
    """
    if isinstance(t, Opaque):
        text = text.strip()
        while text.startswith("(") and balanced_end(text) == len(text):
            text = text[1:-1].strip()
        if not text:
            raise Unparsable("empty literal")
        return OpaqueValue(text)
    return _parse_all([t], text, "literal")[0]


def parse_args(types: Sequence[ValueType], text: str) -> list[Any]:
    """Parse the arguments of a call, as :func:`render` wrote them one after another
    (``(-1) #[2, 3] "a"``), into the canonical values of ``types``."""
    if any(isinstance(t, Opaque) for t in types):
        raise Unparsable("an opaque argument has no delimiter")
    return _parse_all(types, text, "the arguments")


def _parse_all(types: Sequence[ValueType], text: str, what: str) -> list[Any]:
    """``text`` as one value of each of ``types``, in order, and nothing else."""
    toks = _Tokens(text)
    values = [_parse(toks, t) for t in types]
    if toks.peek() is not None:
        raise Unparsable(f"trailing text after {what} in {text!r}")
    for t, value in zip(types, values, strict=True):
        why = check(t, value)
        if why:
            raise IllTyped(why)
    return values


def _parse(toks: _Tokens, t: ValueType) -> Any:
    if toks.at("("):
        if isinstance(t, ProdT):
            # `(a, b)` is the pair's own syntax; `((a, b))` adds redundant parentheses.
            saved = toks.pos
            try:
                toks.next()
                first = _parse(toks, t.fst)
                toks.expect(",")
                second = _parse_tail(toks, t.snd)
                toks.expect(")")
                return (first, second)
            except Unparsable:
                toks.pos = saved
        toks.next()
        inner = _parse(toks, t)
        toks.expect(")")
        return inner
    if isinstance(t, Scalar):
        return _parse_scalar(toks, t.name)
    if isinstance(t, (ListT, ArrayT)):
        return _parse_seq(toks, t)
    if isinstance(t, OptionT):
        _, word = toks.next()
        if word in ("none", "Option.none", ".none"):
            return None
        if word in ("some", "Option.some", ".some"):
            return Some(_parse(toks, t.elem))
        raise Unparsable(f"expected some/none, found {word!r} in {toks.text!r}")
    raise Unparsable(f"expected '(' for a pair in {toks.text!r}")


def _parse_tail(toks: _Tokens, t: ValueType) -> Any:
    # After `(a, ` the rest may be `b)` or, for nested products, `b, c)`.
    if isinstance(t, ProdT) and not toks.at("("):
        first = _parse(toks, t.fst)
        toks.expect(",")
        return (first, _parse_tail(toks, t.snd))
    if isinstance(t, ProdT):
        saved = toks.pos
        try:
            first = _parse(toks, t.fst)
            toks.expect(",")
            return (first, _parse_tail(toks, t.snd))
        except Unparsable:
            toks.pos = saved
    return _parse(toks, t)


def _parse_int(toks: _Tokens) -> int:
    kind, word = toks.next()
    if word == "-":
        return -_parse_int(toks)
    if word == "(":
        inner = _parse_int(toks)
        toks.expect(")")
        return inner
    if word in ("Int.ofNat", "Int.negSucc"):
        n = _parse_int(toks)
        return n if word == "Int.ofNat" else -n - 1
    if kind == "num" and re.fullmatch(r"-?\d+", word):
        return int(word)
    raise Unparsable(f"expected an integer, found {word!r} in {toks.text!r}")


def _parse_scalar(toks: _Tokens, name: str) -> Any:
    if name in ("Int", "Nat", "UInt8"):
        return _parse_int(toks)
    kind, word = toks.next()
    if name == "Bool":
        if word in ("true", "Bool.true"):
            return True
        if word in ("false", "Bool.false"):
            return False
        raise Unparsable(f"expected true/false, found {word!r}")
    if name == "Float":
        sign = 1.0
        if word == "-":
            sign = -1.0
            kind, word = toks.next()
        if kind == "num":
            num = sign * float(word)
            if toks.at("/"):  # our rendering of nan/inf: `(0.0 / 0.0)`
                toks.next()
                den = _parse_scalar(toks, "Float")
                if den:
                    return num / den
                return math.nan if num == 0 else math.copysign(math.inf, num)
            return num
        if word in ("inf", "NaN", "Float.inf", "Float.nan"):
            return sign * float(word.removeprefix("Float.").lower())

        raise Unparsable(f"expected a float, found {word!r}")
    if name == "Char":
        if kind != "chr":
            raise Unparsable(f"expected a char literal, found {word!r}")
        return _unescape(word[1:-1])
    if name == "String":
        if kind != "str":
            raise Unparsable(f"expected a string literal, found {word!r}")
        return _unescape(word[1:-1])
    raise Unparsable(f"unknown scalar {name}")  # pragma: no cover


def _parse_seq(toks: _Tokens, t: ListT | ArrayT) -> tuple[Any, ...]:
    _kind, word = toks.next()
    if word == "{":  # `#reduce` of an Array: `{ toList := [..] }`
        name = toks.next()[1]
        if name not in ("toList", "data"):
            raise Unparsable(f"unexpected field {name!r} in array literal")
        toks.expect(":=")
        inner = _parse_seq(toks, ListT(t.elem))
        toks.expect("}")
        return inner
    if word in ("Array.mk", "List.toArray"):
        return _parse_seq(toks, ListT(t.elem))
    if word not in ("[", "#["):
        raise Unparsable(f"expected a list literal, found {word!r} in {toks.text!r}")
    items: list[Any] = []
    if toks.at("]"):
        toks.next()
        return ()
    while True:
        items.append(_parse(toks, t.elem))
        _kind, word = toks.next()
        if word == "]":
            return tuple(items)
        if word != ",":
            raise Unparsable(f"expected ',' or ']' in list, found {word!r}")
