"""Coq literal text ⇄ typed values (the one Coq value codec).

Rendering (:func:`to_coq`) gives scope-explicit, self-delimiting Coq source
(``(-5)%Z``, ``3%nat``, ``"a""b"%string``, ``"010"%char``) that means the same
value whatever scope the surrounding file has open, and that no string, however
hostile, can break out of. Parsing (:func:`parse_coq`) is type-directed and
accepts VERINA's hand-written literals and what ``Compute`` prints
(``-10``, ``2%nat``, ``(1, 2, 3)``, ``String "010" (...)``, ``Some (-1)``).

Coq strings are byte strings: a neutral string is carried as its UTF-8
bytes; a Coq ``ascii`` is one byte, so a char holds a code point below 256.
``Compute`` prints a string's bytes as text where they are UTF-8 and as
``String "NNN"%char ...`` where they are not; such a string (e.g. the bytes of
"é" reversed) is no neutral string, so its parse is refused rather than read as
one code point per byte (which would render back as other bytes).
"""

from __future__ import annotations

import re
from typing import Any

from veriscale.values.brackets import balanced_end
from veriscale.values.types import ArrayT, ListT, Opaque, OptionT, ProdT, Scalar, ValueType
from veriscale.values.value import IllTyped, OpaqueValue, Some, Unparsable, check, leaves

# ---------------------------------------------------------------- rendering


def _printable(c: str) -> bool:
    return 32 <= ord(c) <= 126 or ord(c) >= 128


def coq_char(c: str) -> str:
    """A Coq ``ascii`` literal for the one-byte char ``c``."""
    code = ord(c)
    if code > 255:
        raise IllTyped(f"Coq ascii holds one byte; {c!r} is U+{code:04X}")
    if 32 <= code <= 126:
        return ('""""' if c == '"' else f'"{c}"') + "%char"
    return f'"{code:03d}"%char'


def coq_string(s: str) -> str:
    """A Coq string expression denoting the UTF-8 bytes of ``s``."""
    for i, c in enumerate(s):
        if not _printable(c):
            head = s[:i].replace('"', '""')
            rest = coq_string(s[i + 1:])
            return f'("{head}" ++ String {coq_char(c)} {rest})%string'
    return '"' + s.replace('"', '""') + '"%string'


NAT_DIGITS_KEY = "vsqdu"
NAT_DIGITS_SCOPE = f"Delimit Scope dec_uint_scope with {NAT_DIGITS_KEY}."
"""The line a check file needs before any ``to_coq(..., in_check=True)`` literal."""


def to_coq(t: ValueType, v: Any, *, arg: bool = True, in_check: bool = False) -> str:
    """Coq source for ``v : t``; with ``arg`` it is safe as a function argument.

    ``in_check``: the literal is for a check file (after :data:`NAT_DIGITS_SCOPE`),
    not for a task file. A ``nat`` is then written as its decimal digits that
    ``vm_compute`` turns into the number (``Coq.Init.Nat.of_num_uint 255%vsqdu``):
    the same value, but Coq elaborates ``255%nat`` into 255 nested ``S``, which
    made up about a third of the coqc time of a check file over lists of ``nat``.
    """
    why = check(t, v)
    if why:
        raise IllTyped(why)
    return _render(t, v, arg, in_check)


def _render(t: ValueType, v: Any, arg: bool, in_check: bool = False) -> str:
    if isinstance(t, Scalar):
        if t.name == "Bool":
            return "true" if v else "false"
        if t.name in ("Int", "UInt8"):
            return f"({v})%Z"
        if t.name == "Nat":
            if in_check:
                return f"(Coq.Init.Nat.of_num_uint {v}%{NAT_DIGITS_KEY})"
            return f"{v}%nat"
        if t.name == "String":
            return coq_string(v)
        if t.name == "Char":
            return coq_char(v)
        raise IllTyped(f"the Coq track has no {t.name} values")
    if isinstance(t, (ListT, ArrayT)):
        items = "[" + "; ".join(_render(t.elem, x, False, in_check) for x in v) + "]"
        # in a check, read as a list whatever scopes are open (inside `Some`, a pair)
        return items + "%list" if in_check else items
    if isinstance(t, ProdT):
        return (f"({_render(t.fst, v[0], False, in_check)}, "
                f"{_render(t.snd, v[1], False, in_check)})")
    if isinstance(t, OptionT):
        if v is None:
            return "None"
        text = f"Some {_render(t.elem, v.value, True, in_check)}"
        return f"({text})" if arg else text
    if isinstance(t, Opaque):
        text = v.text.strip()
        return text if _self_delimiting(text) or not arg else f"({text})"
    raise IllTyped(f"no Coq literal for type {t}")  # pragma: no cover


def _self_delimiting(text: str) -> bool:
    if re.fullmatch(r"[\w.']+(%\w+)?", text):
        return True
    if text[:1] in "([" and balanced_end(text, 0, quotes='"', doubled=True) == len(text):
        return True
    return bool(re.fullmatch(r"\([^()]*\)%\w+", text))


# ---------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>"(?:[^"]|"")*")
    | (?P<num>-?\d+(?:\.\d+)?)
    | (?P<scope>%[A-Za-z_]\w*)
    | (?P<op>::|\+\+|[()\[\];,@/])
    | (?P<id>[A-Za-z_][\w.']*)
    | (?P<other>\S)
    )""",
    re.VERBOSE,
)


class _Toks:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str, int]] = []  # (kind, text, offset)
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                break
            kind = m.lastgroup or "other"
            self.items.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        if text[pos:].strip():
            raise Unparsable(f"cannot read Coq literal {text!r}")
        self.pos = 0

    def peek(self, k: int = 0) -> tuple[str, str, int] | None:
        i = self.pos + k
        return self.items[i] if i < len(self.items) else None

    def text_of(self, k: int = 0) -> str | None:
        tok = self.peek(k)
        return tok[1] if tok else None

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise Unparsable(f"unexpected end of Coq literal {self.text!r}")
        self.pos += 1
        return tok

    def expect(self, text: str) -> None:
        tok = self.take()
        if tok[1] != text:
            raise Unparsable(f"expected {text!r}, found {tok[1]!r} in {self.text!r}")

    def scope(self) -> str | None:
        tok = self.peek()
        if tok and tok[0] == "scope":
            self.pos += 1
            return tok[1][1:]
        return None


def parse_coq(t: ValueType, text: str) -> Any:
    """The value of type ``t`` that Coq text ``text`` denotes.

    Raises :class:`Unparsable` for text that is not a complete literal and
    :class:`IllTyped` for a literal of the wrong range (a negative ``nat``).
    """
    if not isinstance(text, str):
        raise Unparsable(f"a Coq literal must be text, got {type(text).__name__}")
    if isinstance(t, Opaque):
        if not text.strip():
            raise Unparsable("empty literal")
        return OpaqueValue(" ".join(text.split()))
    toks = _Toks(text)
    value = _parse(toks, t, top=True)
    if toks.peek() is not None:
        raise Unparsable(f"unexpected {toks.text_of()!r} after the value in {text!r}")
    why = check(t, value)
    if why:
        raise IllTyped(why)
    return value


def _parse(toks: _Toks, t: ValueType, top: bool = False) -> Any:
    """One value; ``top`` allows an unparenthesised application (``Some 1``)."""
    if isinstance(t, Opaque):
        return _opaque(toks)
    if toks.text_of() == "(" and not _is_tuple_here(toks, t):
        toks.take()
        inner_scope_ok = isinstance(t, Scalar) and t.name == "String"
        value = _parse_infix(toks, t) if inner_scope_ok else _parse(toks, t, top=True)
        toks.expect(")")
        toks.scope()
        return value
    if isinstance(t, ProdT):
        value = _tuple(toks, t)
        toks.scope()
        return value
    if isinstance(t, (ListT, ArrayT)):
        value = _list(toks, t)
        toks.scope()
        return value
    if isinstance(t, OptionT):
        head = toks.take()[1]
        if head == "@" and toks.text_of() == "None":
            toks.take()
            _skip_type_arg(toks)
            return None
        if head == "None":
            return None
        if head == "Some" and top:
            return Some(_parse(toks, t.elem))
        raise Unparsable(f"expected None or Some, found {head!r} in {toks.text!r}")
    if isinstance(t, Scalar):
        return _scalar(toks, t.name, top)
    raise Unparsable(f"cannot parse values of type {t}")  # pragma: no cover


def _is_tuple_here(toks: _Toks, t: ValueType) -> bool:
    """Is the ``(`` at point the opening of ``t``'s own tuple (not a wrapper)?"""
    if not isinstance(t, ProdT):
        return False
    depth = 0
    k = 0
    while (tok := toks.peek(k)) is not None:
        if tok[1] in ("(", "["):
            depth += 1
        elif tok[1] in (")", "]"):
            depth -= 1
            if depth == 0:
                return False
        elif tok[1] == "," and depth == 1:
            return True
        k += 1
    return False


def _spine(t: ValueType) -> list[ValueType]:
    if isinstance(t, ProdT):
        return (_spine(t.fst) if isinstance(t.fst, ProdT) else [t.fst]) + [t.snd]
    return [t]


def _left_product(types: list[ValueType]) -> ValueType:
    out = types[0]
    for nxt in types[1:]:
        out = ProdT(out, nxt)
    return out


def _tuple(toks: _Toks, t: ProdT) -> Any:
    """``(x, y, z)`` with Coq's left-nested commas, or any nesting of them."""
    toks.expect("(")
    spine = _spine(t)
    n = len(spine)
    start = toks.pos
    last: Exception | None = None
    for k in range(n, 1, -1):
        toks.pos = start
        types = [_left_product(spine[: n - k + 1]), *spine[n - k + 1:]]
        try:
            items = [_parse(toks, types[0], top=True)]
            for ty in types[1:]:
                toks.expect(",")
                items.append(_parse(toks, ty, top=True))
            toks.expect(")")
        except (Unparsable, IllTyped) as exc:
            last = exc
            continue
        value = items[0]
        for item in items[1:]:
            value = (value, item)
        return value
    raise Unparsable(str(last) if last else f"bad tuple in {toks.text!r}")


def _list(toks: _Toks, t: ListT | ArrayT) -> tuple[Any, ...]:
    head = toks.take()[1]
    if head == "nil":
        return ()
    if head == "@" and toks.text_of() == "nil":
        toks.take()
        _skip_type_arg(toks)
        return ()
    if head != "[":
        raise Unparsable(f"expected a list, found {head!r} in {toks.text!r}")
    items: list[Any] = []
    if toks.text_of() == "]":
        toks.take()
        return ()
    while True:
        items.append(_parse(toks, t.elem, top=True))
        sep = toks.take()[1]
        if sep == "]":
            return tuple(items)
        if sep != ";":
            raise Unparsable(f"expected ';' or ']', found {sep!r} in {toks.text!r}")


def _skip_type_arg(toks: _Toks) -> None:
    tok = toks.take()
    if tok[1] == "(":
        depth = 1
        while depth:
            text = toks.take()[1]
            depth += {"(": 1, ")": -1}.get(text, 0)


def _parse_infix(toks: _Toks, t: Scalar) -> Any:
    """Inside parentheses a string may be ``a ++ b ++ ...``."""
    value = _parse(toks, t, top=True)
    while toks.text_of() == "++":
        toks.take()
        value += _parse(toks, t, top=True)
    return value


def _unquote(lit: str) -> str:
    return lit[1:-1].replace('""', '"')


def _char_of(body: str) -> str:
    if re.fullmatch(r"\d{3}", body):
        code = int(body)
        if code > 255:
            raise IllTyped(f"ascii code {code} is above 255")
        return chr(code)
    if len(body) != 1:
        raise IllTyped(f"Coq ascii literal {body!r} is not one character")
    return body


def _scalar(toks: _Toks, name: str, top: bool) -> Any:
    kind, text, _ = toks.take()
    if name == "Bool":
        if text in ("true", "false"):
            toks.scope()
            return text == "true"
        raise Unparsable(f"expected true or false, found {text!r}")
    if name in ("Int", "Nat", "UInt8"):
        if kind != "num" or "." in text:
            raise Unparsable(f"expected an integer, found {text!r} in {toks.text!r}")
        scope = toks.scope()
        want = "nat" if name == "Nat" else "Z"
        if scope is not None and scope != want:
            raise Unparsable(f"{text}%{scope} is not a {want} literal")
        return int(text)
    if name == "Char":
        if kind != "str":
            raise Unparsable(f"expected an ascii literal, found {text!r}")
        toks.scope()
        return _char_of(_unquote(text))
    if name == "String":
        if text == "EmptyString":
            return ""
        if text == "String" and top:
            head = _parse(toks, Scalar("Char"))
            if ord(head) >= 128:
                raise Unparsable(f"the Coq string holds the byte {ord(head)} outside UTF-8 "
                                 "text: not a string value of the benchmark's")
            return head + _parse(toks, Scalar("String"))
        if kind != "str":
            raise Unparsable(f"expected a string literal, found {text!r}")
        toks.scope()
        return _unquote(text)
    raise Unparsable(f"the Coq track has no {name} values")


def _opaque(toks: _Toks) -> OpaqueValue:
    """Opaque text inside a structure: a balanced run up to ``,`` ``;`` or a closer."""
    start = toks.peek()
    if start is None:
        raise Unparsable("missing value")
    depth = 0
    end_off = start[2]
    while (tok := toks.peek()) is not None:
        if depth == 0 and tok[1] in (",", ";", ")", "]"):
            break
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(tok[1], 0)
        end_off = tok[2] + len(tok[1])
        toks.take()
    text = toks.text[start[2]:end_off]
    if not text.strip():
        raise Unparsable("missing value")
    return OpaqueValue(" ".join(text.split()))


def is_ascii(t: ValueType, v: Any) -> bool:
    """Are all the strings and chars inside ``v`` ASCII? Coq's ``string`` is a list
    of 8-bit ``ascii``: a code point above 127 would become several of them, and
    byte-wise code (a reversal) would then split it into text no codec can read."""
    return all(x.isascii() for s, x in leaves(t, v)
               if isinstance(s, Scalar) and isinstance(x, str))


def nat_magnitude(t: ValueType, v: Any) -> int:
    """The largest ``nat`` inside ``v`` (0 when there is none): what unary
    evaluation will cost, so the backend can refuse values above its bound."""
    most = 0
    for s, x in leaves(t, v):
        if isinstance(s, Scalar) and s.name == "Nat":
            most = max(most, x)
        elif isinstance(s, Opaque):
            most = max([most, *(int(m) for m in re.findall(r"(\d+)\s*%nat", x.text))])
    return most
