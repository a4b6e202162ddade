"""Unit tests of the Lean text forms met in VERINA data and in Lean output."""

from __future__ import annotations

import json
import math

import pytest

from veriscale.benchmark.verina import notation
from veriscale.benchmark.verina.codec import decode, encode, json_render_hazard, render_hazard
from veriscale.values import (
    BOOL,
    CHAR,
    FLOAT,
    INT,
    NAT,
    STRING,
    UINT8,
    ArrayT,
    IllTyped,
    ListT,
    Opaque,
    OpaqueValue,
    OptionT,
    ProdT,
    Some,
    TypeParseError,
    Unparsable,
    ValueError_,
    parse_type,
)


@pytest.mark.parametrize(
    ("t", "text", "value"),
    [
        (OptionT(NAT), "some 1", Some(1)),
        (OptionT(NAT), "some (1)", Some(1)),
        (OptionT(NAT), "none", None),
        (OptionT(NAT), "Option.some 1", Some(1)),
        (OptionT(INT), "some (-3)", Some(-3)),
        (ProdT(INT, FLOAT), "(15, 3.000000)", (15, 3.0)),
        (ProdT(INT, FLOAT), "(15, 3.0)", (15, 3.0)),
        (ArrayT(NAT), "#[1, 2]", (1, 2)),
        (ArrayT(NAT), "#[]", ()),
        (ArrayT(INT), "#[-1, (-2), 3]", (-1, -2, 3)),
        (STRING, '"a\\"b"', 'a"b'),
        (STRING, '"tab\\there\\n"', "tab\there\n"),
        (STRING, '"\\x01\\u00e9"', "\x01é"),
        (CHAR, "'\\''", "'"),
        (CHAR, "'x'", "x"),
        (INT, "Int.ofNat 3", 3),
        (INT, "Int.negSucc 1", -2),
        (INT, "(Int.negSucc 0)", -1),
        (ArrayT(INT), "{ toList := [1, 2] }", (1, 2)),
        (ArrayT(NAT), "{ toList := [] }", ()),
        (ArrayT(ArrayT(NAT)), "#[#[1], #[]]", ((1,), ())),
        (ListT(ProdT(NAT, NAT)), "[(2, 1), (3, 1)]", ((2, 1), (3, 1))),
        (ProdT(ListT(NAT), ListT(NAT)), "([1], [])", ((1,), ())),
        (ProdT(NAT, ProdT(NAT, NAT)), "(1, 2, 3)", (1, (2, 3))),
        (ProdT(ArrayT(INT), BOOL), "(#[1], true)", ((1,), True)),
        (OptionT(ProdT(NAT, NAT)), "some (1, 2)", Some((1, 2))),
        (OptionT(CHAR), "some 'a'", Some("a")),
        (INT, "((((7))))", 7),
        (ListT(INT), "([1, 2])", (1, 2)),
        (ProdT(INT, INT), "((1, 2))", (1, 2)),
        (NAT, str(10**54), 10**54),
        (BOOL, "true", True),
        (UINT8, "255", 255),
        (FLOAT, "-2.5", -2.5),
        (FLOAT, "1e16", 1e16),
        (FLOAT, "inf", math.inf),
        (Opaque("Int -> Bool"), "(fun x => x > 0)", OpaqueValue("fun x => x > 0")),
    ],
)
def test_parse_forms(t, text, value):
    assert notation.parse(t, text) == value


def test_nan_forms():
    assert math.isnan(notation.parse(FLOAT, "NaN"))
    assert math.isnan(notation.parse(FLOAT, notation.render(FLOAT, math.nan)))


@pytest.mark.parametrize(
    ("t", "text"),
    [
        (ListT(NAT), "71]"),
        (BOOL, "true)"),
        (ListT(STRING), '"bcc", "caa", "ccc"]'),
        (ListT(NAT), "[1, 2"),
        (ProdT(NAT, NAT), "(1, 2"),
        (NAT, "1 2"),
        (STRING, '"abc'),
        (STRING, '"bad \\q escape"'),
        (STRING, '"\\u{110000}"'),
        (STRING, '"\\u{12"'),
        (OptionT(NAT), "maybe 3"),
        (INT, "3.5"),
        (NAT, ""),
    ],
)
def test_truncated_or_foreign_text_is_unparsable(t, text):
    with pytest.raises(Unparsable):
        notation.parse(t, text)


@pytest.mark.parametrize(
    ("t", "text"),
    [
        (NAT, "-1"),
        (NAT, "Int.negSucc 0"),
        (UINT8, "300"),
        (ProdT(NAT, NAT), "(1, -1)"),
        (ListT(UINT8), "[1, 256]"),
    ],
)
def test_complete_but_wrong_values_are_ill_typed(t, text):
    with pytest.raises(IllTyped):
        notation.parse(t, text)


def test_two_char_char_is_rejected():
    with pytest.raises(IllTyped):
        decode(CHAR, "ab")
    with pytest.raises(ValueError_):  # `'ab'` is not even a Lean char literal
        notation.parse(CHAR, "'ab'")


@pytest.mark.parametrize(
    ("t", "raw"),
    [(CHAR, "ab"), (NAT, -1), (UINT8, 300), (NAT, "-4"), (INT, 3.5), (BOOL, 1), (STRING, 5),
     (ListT(NAT), [1, -1]), (ListT(NAT), None)],
)
def test_decode_ill_typed_json(t, raw):
    with pytest.raises(IllTyped):
        decode(t, raw)


def test_decode_verina_json_forms():
    assert decode(ListT(INT), [1, -2]) == (1, -2)
    assert decode(ListT(INT), "[1, -2]") == (1, -2)
    assert decode(NAT, "0") == 0
    assert decode(BOOL, "true") is True
    assert decode(CHAR, "'a'") == "a"
    assert decode(CHAR, "\\n") == "\n"
    assert decode(STRING, "plain text, it's fine") == "plain text, it's fine"
    assert decode(STRING, 'a\\"b') == 'a"b'
    # Not a valid Lean body: kept as written (and flagged as a hazard by validate).
    assert decode(STRING, 'say "hi"') == 'say "hi"'
    assert decode(STRING, "C:\\path") == "C:\\path"
    assert decode(ListT(ListT(NAT)), [[1], []]) == ((1,), ())
    assert decode(Opaque("Int -> Bool"), "fun x => x > 0") == OpaqueValue("fun x => x > 0")


def test_encode_forms_verina_can_render():
    assert encode(ArrayT(INT), (1, -2)) == "#[1, -2]"
    assert encode(ListT(INT), (1, -2)) == "[1, -2]"
    assert encode(OptionT(NAT), Some(1)) == "some 1"
    assert encode(ProdT(INT, FLOAT), (15, 3.0)) == "(15, 3.0)"
    assert encode(INT, -5) == -5
    assert encode(STRING, 'a"b\\') == 'a\\"b\\\\'
    assert encode(CHAR, "'") == "\\'"
    assert encode(FLOAT, 1e16) == "1e16"
    assert json.dumps(encode(FLOAT, math.nan)) == '"(0.0 / 0.0)"'


def test_to_lean_forms():
    assert notation.render(INT, -3) == "(-3)"
    assert notation.render(INT, -3, arg=False) == "-3"
    assert notation.render(OptionT(INT), Some(-3)) == "(some (-3))"
    assert notation.render(ListT(INT), (-1, 2)) == "[-1, 2]"
    assert notation.render(STRING, 'a"b\n') == '"a\\"b\\n"'
    assert notation.render(CHAR, "\\") == "'\\\\'"
    assert notation.render(ProdT(NAT, ProdT(NAT, NAT)), (1, (2, 3))) == "(1, 2, 3)"
    with pytest.raises(IllTyped):
        notation.render(NAT, -1)
    with pytest.raises(IllTyped):
        notation.render(CHAR, "ab")


def test_render_hazards():
    assert render_hazard(STRING, 'a"b')
    assert render_hazard(STRING, "it's") is None
    assert json_render_hazard(STRING, 'a"b')
    # Lean's lexer takes raw newlines and tabs inside a string literal
    assert json_render_hazard(STRING, "x\ny") is None
    assert json_render_hazard(STRING, "x\ty") is None
    assert json_render_hazard(STRING, "x\x01y")
    # e-notation is a Lean scientific literal; only nan/inf have no literal
    assert json_render_hazard(parse_type("Float"), 1e-05) is None
    assert json_render_hazard(ListT(parse_type("Float")), [2.5e20]) is None
    assert json_render_hazard(parse_type("Float"), math.inf)
    assert json_render_hazard(STRING, "C:\\path")
    assert json_render_hazard(STRING, 'a\\"b') is None
    assert json_render_hazard(CHAR, "ab")
    assert json_render_hazard(CHAR, "'")
    assert json_render_hazard(CHAR, "'a'")
    assert json_render_hazard(CHAR, "\\n") is None
    assert json_render_hazard(ListT(STRING), ["a"])
    assert json_render_hazard(ListT(BOOL), [True])
    assert json_render_hazard(ListT(INT), [1, -2]) is None
    assert json_render_hazard(ListT(ListT(NAT)), [[1], []]) is None
    assert json_render_hazard(ListT(CHAR), ["a", "b"]) is None
    assert json_render_hazard(ListT(CHAR), ["'"])
    assert json_render_hazard(ArrayT(INT), [1, 2])
    assert json_render_hazard(ProdT(INT, INT), [1, 2])
    assert json_render_hazard(ListT(ProdT(NAT, NAT)), [[1, 2]])
    assert json_render_hazard(ListT(FLOAT), [1.5, 2.0]) is None
    assert json_render_hazard(FLOAT, math.nan)
    assert json_render_hazard(INT, None)


VERINA_TYPE_STRINGS = {
    "Array Int": ArrayT(INT), "Int": INT, "List Int": ListT(INT), "Nat": NAT,
    "String": STRING, "List Nat": ListT(NAT), "Array Nat": ArrayT(NAT),
    "List Char": ListT(CHAR), "Char": CHAR, "Array Char": ArrayT(CHAR), "UInt8": UINT8,
    "Map Int Int": Opaque("Map Int Int"), "List (List Nat)": ListT(ListT(NAT)),
    "List (Prod Nat Nat)": ListT(ProdT(NAT, NAT)), "List (Prod Int Int)": ListT(ProdT(INT, INT)),
    "List (Int)": ListT(INT), "List Float": ListT(FLOAT), "Float": FLOAT,
    "Int -> Bool": Opaque("Int -> Bool"), "Array (Array Nat)": ArrayT(ArrayT(NAT)),
    "Array (Array Int)": ArrayT(ArrayT(INT)), "Bool": BOOL, "(Int × Int)": ProdT(INT, INT),
    "Int × Int": ProdT(INT, INT), "Option Nat": OptionT(NAT),
    "List (Nat × Nat)": ListT(ProdT(NAT, NAT)), "Option Int": OptionT(INT),
    "List String": ListT(STRING), "(List Nat × List Nat)": ProdT(ListT(NAT), ListT(NAT)),
    "List (Char × Nat)": ListT(ProdT(CHAR, NAT)), "Prod Nat Nat": ProdT(NAT, NAT),
    "Option (Nat × Nat)": OptionT(ProdT(NAT, NAT)), "Int × Float": ProdT(INT, FLOAT),
    "Option Char": OptionT(CHAR), "Array (Array Nat)\n": ArrayT(ArrayT(NAT)),
    "Int × Nat": ProdT(INT, NAT), "UInt8 × UInt8": ProdT(UINT8, UINT8),
    "(Nat × Nat)": ProdT(NAT, NAT), "(Array Int × Bool)": ProdT(ArrayT(INT), BOOL),
}


@pytest.mark.parametrize(("text", "t"), list(VERINA_TYPE_STRINGS.items()))
def test_every_verina_type_string_parses(text, t):
    assert parse_type(text) == t


def test_every_type_string_in_the_verina_data_parses(verina_dir):
    seen = set()
    for task_json in verina_dir.glob("*/task.json"):
        sig = json.loads(task_json.read_text(encoding="utf-8"))["signature"]
        seen.update(p["param_type"] for p in sig["parameters"])
        seen.add(sig["return_type"])
    assert seen <= set(VERINA_TYPE_STRINGS), seen - set(VERINA_TYPE_STRINGS)
    for text in seen:
        parse_type(text)


@pytest.mark.parametrize("text", ["", "   ", "List (Int", "Int)", "× Int", "List ()"])
def test_bad_type_strings_raise(text):
    with pytest.raises(TypeParseError):
        parse_type(text)


def test_compounds_of_foreign_opaque_text_round_trip_as_json_lists() -> None:
    """Coq reals (`1%R`) inside a list or pair cannot be read back by the Lean
    literal parser: they are written element by element instead."""
    from veriscale.benchmark.verina.codec import decode, encode
    from veriscale.values.types import ListT, Opaque, ProdT, Scalar
    from veriscale.values.value import OpaqueValue

    reals = ListT(Opaque("R"))
    value = (OpaqueValue("1%R"), OpaqueValue("(3/2)%R"))
    assert encode(reals, value) == ["1%R", "(3/2)%R"]
    assert decode(reals, encode(reals, value)) == value
    pair = ProdT(Scalar("Int"), Opaque("R"))
    assert decode(pair, encode(pair, (2, OpaqueValue("2%R")))) == (2, OpaqueValue("2%R"))
    assert encode(ListT(Scalar("Int")), (1, 2)) == "[1, 2]"  # readable text stays text
