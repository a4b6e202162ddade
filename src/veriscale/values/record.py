"""The neutral JSON form of values in VeriScale's own records (stage artifacts).

A benchmark's files keep their format's encoding (VERINA writes compound values as
Lean literal text, ``"#[1, 2]"``; the Coq track its own); the records a run writes
between stages name no language. Each value is plain JSON, read with its type:

==============  =============================================
type            JSON
==============  =============================================
Nat, Int, UInt8 number (integer)
Bool            ``true`` / ``false``
Char, String    string
Float           number; ``{"float": "nan" | "inf" | "-inf"}`` where JSON has none
List, Array     array
τ × σ           array of two
Option τ        ``null`` (none) or ``{"some": v}`` (so ``Option (Option τ)`` is exact)
opaque          ``{"opaque": text}`` (the source text it was given as)
==============  =============================================

:func:`load` checks the value against its type, so a hand-edited or foreign record
fails with :class:`~veriscale.values.value.IllTyped` naming what is wrong.
"""

from __future__ import annotations

import math
from typing import Any

from veriscale.values.types import ArrayT, ListT, Opaque, OptionT, ProdT, Scalar, ValueType
from veriscale.values.value import IllTyped, OpaqueValue, Some, check

_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def dump(t: ValueType, v: Any) -> Any:
    """The neutral JSON form of canonical value ``v`` of ``t``."""
    why = check(t, v)
    if why:
        raise IllTyped(why)
    return _dump(t, v)


def _dump(t: ValueType, v: Any) -> Any:
    if isinstance(t, Scalar):
        if t.name == "Float" and not math.isfinite(v):
            return {"float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
        return v
    if isinstance(t, (ListT, ArrayT)):
        return [_dump(t.elem, x) for x in v]
    if isinstance(t, ProdT):
        return [_dump(t.fst, v[0]), _dump(t.snd, v[1])]
    if isinstance(t, OptionT):
        return None if v is None else {"some": _dump(t.elem, v.value)}
    return {"opaque": v.text}


def load(t: ValueType, raw: Any) -> Any:
    """The canonical value of ``t`` that neutral JSON ``raw`` denotes."""
    v = _load(t, raw)
    why = check(t, v)
    if why:
        raise IllTyped(why)
    return v


def _load(t: ValueType, raw: Any) -> Any:
    if isinstance(t, Scalar):
        if t.name == "Float":
            if isinstance(raw, dict) and set(raw) == {"float"} and raw["float"] in _SPECIAL_FLOATS:
                return _SPECIAL_FLOATS[raw["float"]]
            if isinstance(raw, int) and not isinstance(raw, bool):
                return float(raw)  # JSON writes 2.0 as 2.0, but a hand-written 2 is a Float too
        return raw
    if isinstance(t, (ListT, ArrayT)):
        if not isinstance(raw, list):
            raise IllTyped(f"{t} value must be a JSON array, got {type(raw).__name__}")
        return tuple(_load(t.elem, x) for x in raw)
    if isinstance(t, ProdT):
        if not isinstance(raw, list) or len(raw) != 2:
            raise IllTyped(f"{t} value must be a JSON array of two")
        return (_load(t.fst, raw[0]), _load(t.snd, raw[1]))
    if isinstance(t, OptionT):
        if raw is None:
            return None
        if not isinstance(raw, dict) or set(raw) != {"some"}:
            raise IllTyped(f"{t} value must be null or {{\"some\": value}}")
        return Some(_load(t.elem, raw["some"]))
    if isinstance(t, Opaque):
        if not isinstance(raw, dict) or not isinstance(raw.get("opaque"), str):
            raise IllTyped(f"{t} value must be {{\"opaque\": text}}")
        return OpaqueValue(raw["opaque"])
    raise IllTyped(f"unknown type {t!r}")  # pragma: no cover - the types are fixed


__all__ = ["dump", "load"]
