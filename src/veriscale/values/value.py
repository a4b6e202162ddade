"""Typed values: one canonical, hashable Python form per Lean value.

Canonical forms (checked by :func:`check`):

==============  =============================================
Lean type       Python value
==============  =============================================
Nat, Int, UInt8 ``int`` (arbitrary precision, never ``bool``)
Bool            ``bool``
Char            ``str`` of exactly one Unicode scalar value
String          ``str`` (no lone surrogates)
Float           ``float``
List τ, Array τ ``tuple`` (the type keeps List and Array apart)
τ × σ           ``tuple`` of two
Option τ        ``None`` or :class:`Some`
opaque          :class:`OpaqueValue` (Lean source text)
==============  =============================================

Because the forms are canonical and hashable, equal Lean values are equal
Python values, which is what duplicate detection and set cover rely on.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from veriscale.values.types import (
    ArrayT,
    ListT,
    Opaque,
    OptionT,
    ProdT,
    Scalar,
    ValueType,
)


class ValueError_(ValueError):  # a family name, not a shadow of the builtin
    """Base class: a value that cannot be used as a value of its declared type."""


class IllTyped(ValueError_):
    """A complete value of the wrong shape or range (negative Nat, two-char Char)."""


class Unparsable(ValueError_):
    """Text that is not a complete literal of the type (e.g. truncated ``"71]"``)."""


@dataclass(frozen=True)
class Some:
    """``some v``; a wrapper so that ``Option (Option τ)`` stays exact."""

    value: Any


@dataclass(frozen=True)
class OpaqueValue:
    """A value of an opaque type, kept as the Lean text it was given as."""

    text: str


def _scalar_ok(c: str) -> bool:
    return not (0xD800 <= ord(c) <= 0xDFFF)


def check(t: ValueType, v: Any) -> str | None:
    """Why ``v`` is not a canonical value of ``t``, or ``None`` when it is."""
    if isinstance(t, Scalar):
        name = t.name
        if name in ("Nat", "Int", "UInt8"):
            if not isinstance(v, int) or isinstance(v, bool):
                return f"{name} value must be an integer, got {type(v).__name__}"
            if name == "Nat" and v < 0:
                return f"Nat value {v} is negative"
            if name == "UInt8" and not 0 <= v <= 255:
                return f"UInt8 value {v} is outside 0..255"
            return None
        if name == "Bool":
            return None if isinstance(v, bool) else f"Bool value must be a bool, got {v!r}"
        if name == "Float":
            if isinstance(v, float):
                return None
            return f"Float value must be a float, got {type(v).__name__}"
        if name == "Char":
            if not isinstance(v, str):
                return f"Char value must be a string, got {type(v).__name__}"
            if len(v) != 1:
                return f"Char value {v!r} has {len(v)} characters, not 1"
            return None if _scalar_ok(v) else f"Char value {v!r} is a lone surrogate"
        if name == "String":
            if not isinstance(v, str):
                return f"String value must be a string, got {type(v).__name__}"
            return None if all(map(_scalar_ok, v)) else "String holds a lone surrogate"
        return f"unknown scalar type {name}"  # pragma: no cover - Scalar names are fixed
    if isinstance(t, (ListT, ArrayT)):
        if not isinstance(v, tuple):
            return f"{t} value must be a tuple, got {type(v).__name__}"
        for i, item in enumerate(v):
            why = check(t.elem, item)
            if why:
                return f"element {i}: {why}"
        return None
    if isinstance(t, ProdT):
        if not isinstance(v, tuple) or len(v) != 2:
            return f"{t} value must be a pair"
        return check(t.fst, v[0]) or check(t.snd, v[1])
    if isinstance(t, OptionT):
        if v is None:
            return None
        if not isinstance(v, Some):
            return f"{t} value must be None or Some, got {type(v).__name__}"
        return check(t.elem, v.value)
    if isinstance(t, Opaque):
        return None if isinstance(v, OpaqueValue) else f"{t} value must be OpaqueValue"
    return f"unknown type {t!r}"  # pragma: no cover


def conform(t: ValueType, v: Any) -> Any:
    """Turn a loosely shaped Python value (lists, plain ints for Float, ...) into
    the canonical value of ``t``; raise :class:`IllTyped` when it does not fit.

    This is the gate for values produced by untrusted code (Python backend
    results, LLM-proposed inputs).
    """
    out = _conform(t, v)
    why = check(t, out)
    if why:
        raise IllTyped(why)
    return out


def _conform(t: ValueType, v: Any) -> Any:
    if isinstance(t, Scalar):
        if t.name == "Float" and isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        return v
    if isinstance(t, (ListT, ArrayT)):
        if isinstance(v, (list, tuple)):
            return tuple(_conform(t.elem, x) for x in v)
        return v
    if isinstance(t, ProdT):
        if isinstance(v, (list, tuple)) and len(v) == 2:
            return (_conform(t.fst, v[0]), _conform(t.snd, v[1]))
        return v
    if isinstance(t, OptionT):
        if isinstance(v, Some):
            return Some(_conform(t.elem, v.value))
        return v
    return v


def to_native(t: ValueType, v: Any) -> Any:
    """The plain Python value user code sees (lists, tuples, ``None``/value)."""
    if isinstance(t, (ListT, ArrayT)):
        return [to_native(t.elem, x) for x in v]
    if isinstance(t, ProdT):
        return (to_native(t.fst, v[0]), to_native(t.snd, v[1]))
    if isinstance(t, OptionT):
        return None if v is None else to_native(t.elem, v.value)
    if isinstance(t, Opaque):
        return v.text
    return v


def from_native(t: ValueType, v: Any) -> Any:
    """Inverse of :func:`to_native`; raises :class:`IllTyped` on a bad shape."""
    if isinstance(t, OptionT):
        return None if v is None else Some(from_native(t.elem, v))
    if isinstance(t, (ListT, ArrayT)):
        if not isinstance(v, (list, tuple)):
            raise IllTyped(f"{t} value must be a list, got {type(v).__name__}")
        return tuple(from_native(t.elem, x) for x in v)
    if isinstance(t, ProdT):
        if not isinstance(v, (list, tuple)) or len(v) != 2:
            raise IllTyped(f"{t} value must be a pair")
        return (from_native(t.fst, v[0]), from_native(t.snd, v[1]))
    if isinstance(t, Opaque):
        return OpaqueValue(str(v))
    return conform(t, v)


def values_equal(t: ValueType, a: Any, b: Any) -> bool:
    """Equality as Lean's ``==`` sees it (NaN is never equal, as in Lean)."""
    if isinstance(t, Scalar) and t.name == "Float":
        return a == b and not (isinstance(a, float) and math.isnan(a))
    return a == b


def leaves(t: ValueType, v: Any) -> Iterator[tuple[ValueType, Any]]:
    """Each scalar or opaque value inside ``v`` (a canonical value of ``t``), with its type."""
    if isinstance(t, (ListT, ArrayT)):
        for x in v:
            yield from leaves(t.elem, x)
    elif isinstance(t, ProdT):
        yield from leaves(t.fst, v[0])
        yield from leaves(t.snd, v[1])
    elif isinstance(t, OptionT):
        if v is not None:
            yield from leaves(t.elem, v.value)
    else:
        yield t, v
