"""The VERINA JSON encoding of values.

VERINA stores scalars as JSON scalars, ``String``/``Char`` as raw (unquoted)
JSON strings and every compound value as a Lean literal *string*
(``"#[1, 2]"``, ``"some (1)"``); VerinaPlus adds JSON lists for some ``List``
parameters. :func:`decode` accepts all of these; :func:`encode` writes the one
form the VERINA harness renders correctly (it pastes ``str(value)`` into Lean).

Because VERINA pastes a ``String`` as ``'"' + v + '"'`` and a ``Char`` as
``"'" + v + "'"``, the JSON text of those two types is read by Lean as the
*body* of a literal. :func:`encode` therefore writes the escaped body
(``a\\"b`` for ``a"b``), which the harness turns into the right Lean literal,
and :func:`decode` reads escapes back. Plain text without a backslash (all of
VERINA's own strings) decodes to itself. :func:`json_render_hazard` says when
a stored JSON value would still break or be misread by that renderer.
"""

from __future__ import annotations

import math
import re
from typing import Any

from veriscale.benchmark.verina import notation
from veriscale.values.types import ArrayT, ListT, Opaque, ProdT, Scalar, ValueType
from veriscale.values.value import IllTyped, OpaqueValue, Unparsable, check, conform


def decode(t: ValueType, raw: Any) -> Any:
    """The canonical value of ``t`` that VERINA JSON ``raw`` denotes."""
    if isinstance(t, Opaque):
        if isinstance(raw, str):
            return notation.parse(t, raw)
        return OpaqueValue(_json_as_lean(raw))
    if isinstance(t, Scalar):
        return _decode_scalar(t.name, raw)
    if isinstance(raw, str):
        return notation.parse(t, raw)
    if isinstance(t, (ListT, ArrayT)) and isinstance(raw, list):
        return tuple(decode(t.elem, x) for x in raw)
    if isinstance(t, ProdT) and isinstance(raw, list) and len(raw) == 2:
        return (decode(t.fst, raw[0]), decode(t.snd, raw[1]))
    if raw is None:
        raise IllTyped(f"null is not a value of {t}")
    raise IllTyped(f"JSON {type(raw).__name__} is not a value of {t}")


def _json_as_lean(raw: Any) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, list):
        return "[" + ", ".join(_json_as_lean(x) for x in raw) + "]"
    return str(raw)


def _decode_scalar(name: str, raw: Any) -> Any:
    if name in ("Int", "Nat", "UInt8"):
        if isinstance(raw, str):
            if not re.fullmatch(r"\s*\(?\s*-?\d+\s*\)?\s*", raw):
                raise Unparsable(f"{raw!r} is not an integer literal")
            raw = int(raw.strip().strip("()").strip())
        elif isinstance(raw, float) and raw.is_integer():
            raise IllTyped(f"{name} value {raw!r} is a float")
        return conform(Scalar(name), raw)
    if name == "Bool":
        if isinstance(raw, str):
            if raw.strip() in ("true", "false"):
                return raw.strip() == "true"
            raise Unparsable(f"{raw!r} is not a Bool literal")
        return conform(Scalar(name), raw)
    if name == "Float":
        if isinstance(raw, str):
            return notation.parse(Scalar(name), raw)
        return conform(Scalar(name), raw)
    if name == "Char":
        if isinstance(raw, str) and len(raw) >= 3 and raw[0] == raw[-1] == "'":
            return notation.parse(Scalar(name), raw)
        if isinstance(raw, str) and len(raw) > 1 and raw.startswith("\\"):
            try:  # an escaped body such as `\n`, which VERINA pastes between quotes
                return notation.parse(Scalar(name), "'" + raw + "'")
            except Unparsable:
                pass
        return conform(Scalar(name), raw)
    if name == "String" and isinstance(raw, str):
        return _decode_string_body(raw)
    return conform(Scalar(name), raw)


def _decode_string_body(raw: str) -> str:
    """VERINA pastes a String between quotes without escaping, so Lean reads the
    JSON text as the *body* of a string literal: ``a\\nb`` means a newline.
    Text that is not a valid body (a bare ``"``, an unknown escape) cannot mean
    anything to Lean; it is kept as is and reported as a render hazard."""
    if "\\" not in raw:
        return raw
    try:
        return notation.parse(Scalar("String"), '"' + raw + '"')
    except (Unparsable, IllTyped):
        return raw


def encode(t: ValueType, v: Any) -> Any:
    """The VERINA JSON form of canonical value ``v``."""
    why = check(t, v)
    if why:
        raise IllTyped(why)
    if isinstance(t, Scalar):
        if t.name == "Float" and (math.isnan(v) or math.isinf(v) or "e" in repr(v)):
            # `str(v)` would paste `nan`, `inf` or `1e+16` into Lean.
            return notation.render(t, v, arg=False)
        if t.name == "String":
            return notation.string_literal(v)[1:-1]
        if t.name == "Char":
            return notation.char_literal(v)[1:-1]
        return v
    if isinstance(t, Opaque):
        return v.text
    text = notation.render(t, v, arg=False)
    if isinstance(t, (ListT, ArrayT, ProdT)) and _holds_opaque(t):
        try:
            notation.parse(t, text)
        except (Unparsable, IllTyped):
            # Opaque text of another language (Coq's `1%R`) inside a compound: the
            # structural JSON form, which :func:`decode` reads element by element.
            if isinstance(t, ProdT):
                return [encode(t.fst, v[0]), encode(t.snd, v[1])]
            return [encode(t.elem, x) for x in v]
    return text


def _holds_opaque(t: ValueType) -> bool:
    if isinstance(t, Opaque):
        return True
    if isinstance(t, (ListT, ArrayT)):
        return _holds_opaque(t.elem)
    if isinstance(t, ProdT):
        return _holds_opaque(t.fst) or _holds_opaque(t.snd)
    return False


def render_hazard(t: ValueType, v: Any) -> str | None:
    """Why VERINA's own renderer (``'"' + v + '"'``, no escaping) would break ``v``."""
    if isinstance(t, Scalar) and t.name in ("String", "Char"):
        bad = [c for c in v if c in "\"\\\n\r\t'" or ord(c) < 0x20]
        if t.name == "String":
            bad = [c for c in bad if c != "'"]
        if bad:
            return f"{t.name} value {v!r} holds {bad[0]!r}, which VERINA pastes into Lean unescaped"
    return None


_VALID_ESCAPE = re.compile(r"""\\(?:[nrt\\"']|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})""")


LEAN_STRING_RAW_OK = frozenset("\n\t")
"""Control characters Lean's lexer takes raw inside a string literal (multi-line strings)."""


def _body_units(text: str, quote: str, raw_ok: frozenset[str] = frozenset()) -> tuple[int, str | None]:
    """Scan ``text`` as the body of a Lean literal delimited by ``quote``:
    the number of characters it denotes, and why it is not a valid body."""
    count = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            m = _VALID_ESCAPE.match(text, i)
            if m is None:
                return count, "a backslash that is not a Lean escape"
            i = m.end()
        elif c == quote:
            return count, f"an unescaped {quote}"
        elif (ord(c) < 0x20 or ord(c) == 0x7F) and c not in raw_ok:
            return count, f"a raw control character {c!r}"
        else:
            i += 1
        count += 1
    return count, None


def json_render_hazard(t: ValueType, raw: Any) -> str | None:
    """Why VERINA's renderer (``str(raw)``, quotes pasted around String/Char,
    no escaping) would turn this *stored JSON value* into broken or different
    Lean; ``None`` when it renders faithfully."""
    if isinstance(t, Scalar) and t.name in ("String", "Char") and isinstance(raw, str):
        quote = '"' if t.name == "String" else "'"
        count, why = _body_units(raw, quote, LEAN_STRING_RAW_OK if t.name == "String" else frozenset())
        if why:
            return f"{t.name} {raw!r} holds {why}, which VERINA pastes into Lean unescaped"
        if t.name == "Char" and count != 1:
            return f"Char {raw!r} is not one character; VERINA renders '{raw}'"
        return None
    if isinstance(t, Scalar) and t.name == "Float" and isinstance(raw, float):
        if math.isnan(raw) or math.isinf(raw):  # e-notation (1e-05) is a Lean literal
            return f"Float {raw!r} renders as {str(raw)!r}, which is not a Lean float literal"
        return None
    if isinstance(raw, list):
        why = _json_list_hazard(t, raw)
        if why:
            return f"JSON list {str(raw)[:60]!r}: {why}; VERINA pastes Python's str() into Lean"
    if raw is None:
        return f"null renders as 'None', which is not a Lean value of {t}"
    return None


def _json_list_hazard(t: ValueType, raw: Any) -> str | None:
    """Why Python's ``str(raw)`` is not the Lean literal of ``t`` that ``raw`` encodes."""
    if isinstance(raw, list):
        if isinstance(t, ArrayT):
            return f"a list literal is not an {t}"
        if isinstance(t, ProdT):
            return f"a list literal is not a pair of {t}"
        if isinstance(t, ListT):
            for item in raw:
                why = _json_list_hazard(t.elem, item)
                if why:
                    return why
        return None
    if isinstance(raw, bool) or raw is None:
        return f"{raw!r} is not Lean"
    if isinstance(raw, str):
        if isinstance(t, Scalar) and t.name == "Char" and len(raw) == 1:
            return None if repr(raw) == notation.char_literal(raw) else f"{raw!r} is not a Lean char literal"
        return f"{raw!r} uses Python's quotes"
    if isinstance(raw, float) and (math.isnan(raw) or math.isinf(raw)):
        return f"{raw!r} is not a Lean float literal"
    return None


__all__ = ["decode", "encode", "json_render_hazard", "render_hazard"]
