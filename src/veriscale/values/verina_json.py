"""The VERINA JSON encoding of values.

VERINA stores scalars as JSON scalars, ``String``/``Char`` as raw (unquoted)
JSON strings and every compound value as a Lean literal *string*
(``"#[1, 2]"``, ``"some (1)"``); VerinaPlus adds JSON lists for some ``List``
parameters. :func:`decode` accepts all of these; :func:`encode` writes the one
form the VERINA harness renders correctly (it pastes ``str(value)`` into Lean).
"""

from __future__ import annotations

import math
import re
from typing import Any

from veriscale.values.literal import parse_lean, to_lean
from veriscale.values.types import ArrayT, LeanType, ListT, Opaque, ProdT, Scalar
from veriscale.values.value import IllTyped, OpaqueValue, Unparsable, check, conform


def decode(t: LeanType, raw: Any) -> Any:
    """The canonical value of ``t`` that VERINA JSON ``raw`` denotes."""
    if isinstance(t, Opaque):
        if isinstance(raw, str):
            return parse_lean(t, raw)
        return OpaqueValue(_json_as_lean(raw))
    if isinstance(t, Scalar):
        return _decode_scalar(t.name, raw)
    if isinstance(raw, str):
        return parse_lean(t, raw)
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
            return parse_lean(Scalar(name), raw)
        return conform(Scalar(name), raw)
    if name == "Char":
        if isinstance(raw, str) and len(raw) >= 3 and raw[0] == raw[-1] == "'":
            return parse_lean(Scalar(name), raw)
        return conform(Scalar(name), raw)
    return conform(Scalar(name), raw)  # String: the raw JSON string


def encode(t: LeanType, v: Any) -> Any:
    """The VERINA JSON form of canonical value ``v``."""
    why = check(t, v)
    if why:
        raise IllTyped(why)
    if isinstance(t, Scalar):
        if t.name == "Float" and (math.isnan(v) or math.isinf(v)):
            return to_lean(t, v, arg=False)
        return v
    if isinstance(t, Opaque):
        return v.text
    return to_lean(t, v, arg=False)


def render_hazard(t: LeanType, v: Any) -> str | None:
    """Why VERINA's own renderer (``'"' + v + '"'``, no escaping) would break ``v``."""
    if isinstance(t, Scalar) and t.name in ("String", "Char"):
        bad = [c for c in v if c in "\"\\\n\r\t'" or ord(c) < 0x20]
        if t.name == "String":
            bad = [c for c in bad if c != "'"]
        if bad:
            return f"{t.name} value {v!r} holds {bad[0]!r}, which VERINA pastes into Lean unescaped"
    return None


__all__ = ["decode", "encode", "render_hazard"]
