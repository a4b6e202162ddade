"""Property tests: every supported value survives Lean text and VERINA JSON."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veriscale.benchmark.verina import notation
from veriscale.benchmark.verina.codec import decode, encode, json_render_hazard
from veriscale.values import CHAR, STRING, ListT, OptionT, ProdT, check
from veriscale.values.strategies import (
    big_ints,
    chars,
    same_value,
    typed_values,
    types_strategy,
    values_of,
)

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(typed_values())
def test_strategy_values_are_canonical(tv):
    t, v = tv
    assert check(t, v) is None


@SETTINGS
@given(typed_values(), st.booleans())
def test_to_lean_then_parse_is_identity(tv, arg):
    t, v = tv
    text = notation.render(t, v, arg=arg)
    assert same_value(notation.parse(t, text), v), text


@SETTINGS
@given(typed_values())
def test_lean_text_survives_redundant_parentheses(tv):
    t, v = tv
    text = notation.render(t, v, arg=True)
    assert same_value(notation.parse(t, f"(({text}))"), v)
    assert same_value(notation.parse(t, f"  {text}\n"), v)


@SETTINGS
@given(typed_values())
def test_encode_then_decode_is_identity_through_json(tv):
    t, v = tv
    raw = json.loads(json.dumps(encode(t, v), ensure_ascii=False))
    assert same_value(decode(t, raw), v), raw


@SETTINGS
@given(typed_values())
def test_encoded_values_are_safe_for_the_verina_renderer(tv):
    t, v = tv
    assert json_render_hazard(t, encode(t, v)) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=chars(), max_size=30))
def test_nasty_strings_round_trip_and_encode_safely(s):
    assert notation.parse(STRING, notation.render(STRING, s)) == s
    body = encode(STRING, s)
    assert decode(STRING, body) == s
    # VERINA's renderer pastes the body between quotes: that must be our literal.
    assert '"' + body + '"' == notation.render(STRING, s)


@settings(max_examples=300, deadline=None)
@given(chars())
def test_every_char_round_trips(c):
    assert notation.parse(CHAR, notation.render(CHAR, c)) == c
    assert decode(CHAR, encode(CHAR, c)) == c
    assert "'" + encode(CHAR, c) + "'" == notation.render(CHAR, c)


@settings(max_examples=200, deadline=None)
@given(big_ints())
def test_big_ints_are_exact(n):
    from veriscale.values import INT

    assert notation.parse(INT, notation.render(INT, n)) == n
    assert decode(INT, encode(INT, n)) == n
    assert notation.parse(ListT(INT), notation.render(ListT(INT), (n, -n))) == (n, -n)


@settings(max_examples=100, deadline=None)
@given(types_strategy())
def test_type_text_round_trips(t):
    from veriscale.values import parse_type

    assert parse_type(str(t)) == t


@settings(max_examples=100, deadline=None)
@given(values_of(OptionT(ProdT(ListT(STRING), OptionT(CHAR)))))
def test_nested_option_product_values(v):
    t = OptionT(ProdT(ListT(STRING), OptionT(CHAR)))
    assert same_value(notation.parse(t, notation.render(t, v)), v)
