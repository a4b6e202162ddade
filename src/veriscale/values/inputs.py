"""Inputs: tuples of canonical values in parameter order, and what every stage asks of
them (are they well-typed; when are two the same input)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from veriscale.values.types import ArrayT, ListT, OptionT, ProdT, Scalar, ValueType
from veriscale.values.value import check

Input = tuple[Any, ...]
"""One input: canonical values in parameter order."""


def param_types(signature: Any) -> tuple[ValueType, ...]:
    """Parameter types of a :class:`Signature` or of a plain sequence of types."""
    params = getattr(signature, "params", None)
    if params is not None:
        return tuple(p.type for p in params)
    return tuple(signature)


def _has_float(t: ValueType) -> bool:
    if isinstance(t, Scalar):
        return t.name == "Float"
    if isinstance(t, (ListT, ArrayT, OptionT)):
        return _has_float(t.elem)
    if isinstance(t, ProdT):
        return _has_float(t.fst) or _has_float(t.snd)
    return False


def _float_key(t: ValueType, v: Any) -> Any:
    # Python says 0.0 == -0.0 and nan != nan; Lean programs can tell the former
    # apart (1/x) and a NaN should count once, so floats get an exact key.
    if isinstance(t, Scalar):
        if t.name == "Float":
            return ("nan",) if math.isnan(v) else (v, math.copysign(1.0, v))
        return v
    if isinstance(t, (ListT, ArrayT)):
        return tuple(_float_key(t.elem, x) for x in v)
    if isinstance(t, ProdT):
        return (_float_key(t.fst, v[0]), _float_key(t.snd, v[1]))
    if isinstance(t, OptionT):
        return None if v is None else ("some", _float_key(t.elem, v.value))
    return v


def input_key(types: Sequence[ValueType]) -> Callable[[Input], Any]:
    """The duplicate-detection key of inputs of ``types`` (identity unless a
    Float is involved)."""
    if not any(_has_float(t) for t in types):
        return lambda inp: inp
    return lambda inp: tuple(_float_key(t, v) for t, v in zip(types, inp, strict=True))


def value_key(t: ValueType) -> Callable[[Any], Any]:
    """The duplicate-detection key of one value of ``t`` (as :func:`input_key`)."""
    one = input_key((t,))
    return lambda v: one((v,))


def check_input(types: Sequence[ValueType], inp: Any) -> str | None:
    """Why ``inp`` is not a well-typed input of ``types``, or ``None``."""
    if not isinstance(inp, tuple) or len(inp) != len(types):
        return f"input must be a tuple of {len(types)} values"
    for i, (t, v) in enumerate(zip(types, inp, strict=True)):
        why = check(t, v)
        if why:
            return f"parameter {i}: {why}"
    return None
