"""Hypothesis strategies for Lean types and their canonical values.

Shared by every area's property tests (values, mutation, reduction, formats):

* :func:`types_strategy` draws modelled :class:`ValueType` trees (scalars,
  ``List``/``Array``/``Option`` of anything, products, nested);
* :func:`values_of` draws canonical values of a given type, biased towards
  the nasty cases a suite must survive: strings with quotes, backslashes,
  newlines, control and astral characters; integers far beyond 64 bits;
  NaN/inf/-0.0 floats (unless ``allow_nan=False``).

Hypothesis is a test dependency; import this module from tests only.
Use :func:`same_value` to compare values that may hold NaN.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from veriscale.values.types import (
    BOOL,
    CHAR,
    FLOAT,
    INT,
    NAT,
    STRING,
    UINT8,
    ArrayT,
    ListT,
    Opaque,
    OptionT,
    ProdT,
    Scalar,
    ValueType,
)
from veriscale.values.value import OpaqueValue, Some

SCALAR_TYPES: tuple[Scalar, ...] = (NAT, INT, BOOL, CHAR, STRING, FLOAT, UINT8)

# Characters that break naive renderers, mixed into the general alphabet.
NASTY_CHARS = '"\\\'\n\t\r\x00\x07\x1b\x7f\x85\u00e9\u2028\u00d7\U0001f600\U00010348'


def chars() -> st.SearchStrategy[str]:
    """One Unicode scalar value (no lone surrogates), often a nasty one."""
    return st.one_of(
        st.sampled_from(NASTY_CHARS),
        st.characters(exclude_categories=("Cs",)),
    )


def big_ints(min_value: int | None = None) -> st.SearchStrategy[int]:
    """Small ints, 64-bit edges and integers up to about 10**60."""
    edges = [0, 1, -1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), 2**64, 10**54, -(10**54)]
    small = st.integers(min_value=-1000, max_value=1000)
    huge = st.integers(min_value=-(10**60), max_value=10**60)
    out = st.one_of(small, st.sampled_from(edges), huge)
    if min_value is not None:
        out = out.filter(lambda n: n >= min_value)
    return out


def types_strategy(max_leaves: int = 4) -> st.SearchStrategy[ValueType]:
    """Modelled Lean types, nested up to about ``max_leaves`` constructors."""
    scalars = st.sampled_from(SCALAR_TYPES)

    def extend(inner: st.SearchStrategy[ValueType]) -> st.SearchStrategy[ValueType]:
        return st.one_of(
            inner.map(ListT),
            inner.map(ArrayT),
            inner.map(OptionT),
            st.builds(ProdT, inner, inner),
        )

    return st.recursive(scalars, extend, max_leaves=max_leaves)


def values_of(
    t: ValueType, *, allow_nan: bool = True, max_size: int = 4
) -> st.SearchStrategy[Any]:
    """Canonical values of ``t`` (see :mod:`veriscale.values.value`)."""
    if isinstance(t, Scalar):
        return _scalar_values(t.name, allow_nan)
    if isinstance(t, (ListT, ArrayT)):
        elem = values_of(t.elem, allow_nan=allow_nan, max_size=max_size)
        return st.lists(elem, max_size=max_size).map(tuple)
    if isinstance(t, OptionT):
        elem = values_of(t.elem, allow_nan=allow_nan, max_size=max_size)
        return st.one_of(st.none(), elem.map(Some))
    if isinstance(t, ProdT):
        return st.tuples(
            values_of(t.fst, allow_nan=allow_nan, max_size=max_size),
            values_of(t.snd, allow_nan=allow_nan, max_size=max_size),
        )
    if isinstance(t, Opaque):
        return st.sampled_from(["fun x => x > 0", "Map.empty", "⟨[]⟩"]).map(OpaqueValue)
    raise TypeError(f"no strategy for {t!r}")


def _scalar_values(name: str, allow_nan: bool) -> st.SearchStrategy[Any]:
    if name == "Nat":
        return big_ints(min_value=0)
    if name == "Int":
        return big_ints()
    if name == "UInt8":
        return st.integers(min_value=0, max_value=255)
    if name == "Bool":
        return st.booleans()
    if name == "Char":
        return chars()
    if name == "String":
        return st.text(alphabet=chars(), max_size=12)
    if name == "Float":
        return st.floats(allow_nan=allow_nan, allow_infinity=allow_nan)
    raise TypeError(f"unknown scalar {name}")


def typed_values(max_leaves: int = 4) -> st.SearchStrategy[tuple[ValueType, Any]]:
    """``(type, value)`` pairs: a type from :func:`types_strategy` and a value of it."""
    return types_strategy(max_leaves).flatmap(lambda t: st.tuples(st.just(t), values_of(t)))


def same_value(a: Any, b: Any) -> bool:
    """Structural equality that treats NaN as equal to NaN (for round-trip tests)."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Some) and isinstance(b, Some):
        return same_value(a.value, b.value)
    return type(a) is type(b) and a == b


__all__ = [
    "NASTY_CHARS", "SCALAR_TYPES", "big_ints", "chars", "same_value", "typed_values",
    "types_strategy", "values_of",
]
