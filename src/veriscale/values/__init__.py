"""Lean types and typed values: the vocabulary every other package speaks."""

from veriscale.values.literal import lean_char, lean_string, parse_lean, to_lean
from veriscale.values.types import (
    BOOL,
    CHAR,
    FLOAT,
    INT,
    NAT,
    STRING,
    UINT8,
    ArrayT,
    LeanType,
    ListT,
    Opaque,
    OptionT,
    ProdT,
    Scalar,
    TypeParseError,
    is_modelled,
    parse_type,
)
from veriscale.values.value import (
    IllTyped,
    OpaqueValue,
    Some,
    Unparsable,
    ValueError_,
    check,
    conform,
    from_native,
    to_native,
    values_equal,
)
from veriscale.values.verina_json import decode, encode, json_render_hazard, render_hazard

__all__ = [
    "BOOL", "CHAR", "FLOAT", "INT", "NAT", "STRING", "UINT8",
    "ArrayT", "IllTyped", "LeanType", "ListT", "Opaque", "OpaqueValue", "OptionT",
    "ProdT", "Scalar", "Some", "TypeParseError", "Unparsable", "ValueError_",
    "check", "conform", "decode", "encode", "from_native", "is_modelled", "json_render_hazard",
    "lean_char", "lean_string", "parse_lean", "parse_type", "render_hazard",
    "to_lean", "to_native", "values_equal",
]
