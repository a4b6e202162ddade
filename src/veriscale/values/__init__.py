"""Language-neutral types and typed values: the vocabulary every other package speaks.

Literal codecs live with their language (``veriscale.backends.<language>.literal``;
VERINA's JSON rows: ``veriscale.backends.lean.verina_json``)."""

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
    leaves,
    to_native,
    values_equal,
)

__all__ = [
    "BOOL", "CHAR", "FLOAT", "INT", "NAT", "STRING", "UINT8",
    "ArrayT", "IllTyped", "LeanType", "ListT", "Opaque", "OpaqueValue", "OptionT",
    "ProdT", "Scalar", "Some", "TypeParseError", "Unparsable", "ValueError_",
    "check", "conform", "from_native", "is_modelled", "leaves",
    "parse_type",
    "to_native", "values_equal",
]
