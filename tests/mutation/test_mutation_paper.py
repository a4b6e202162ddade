"""The Appendix-A schemas: each one reachable, p and q uniform, domains kept."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from veriscale.expansion.mutation import (
    SIGMA_CHAR,
    SIGMA_SP,
    IngredientPool,
    Mutator,
    Step,
    fresh_value,
    schema_set,
)
from veriscale.values import (
    BOOL,
    CHAR,
    FLOAT,
    INT,
    NAT,
    STRING,
    UINT8,
    ArrayT,
    ListT,
    OpaqueValue,
    OptionT,
    ProdT,
    Some,
    check,
    parse_type,
)

# chi-square critical values at p = 0.001 by degrees of freedom
CHI2_001 = {1: 10.83, 2: 13.82, 3: 16.27, 4: 18.47, 9: 27.88, 10: 29.59}


def _draws(t, value, n, seed=0):
    rng = random.Random(seed)
    m = Mutator(t, ingredient_prob=0.0)
    return [m.mutate_traced(value, rng) for _ in range(n)]


def _chi2(counts: Counter, categories: list) -> float:
    total = sum(counts[c] for c in categories)
    expected = total / len(categories)
    return sum((counts[c] - expected) ** 2 / expected for c in categories)


def test_sigma_sets_are_explicit_and_special() -> None:
    for c in (" ", '"', "'", "\\", "\n", "\t"):
        assert c in SIGMA_SP
    assert any(ord(c) > 127 for c in SIGMA_SP)
    assert all(len(c) == 1 for c in SIGMA_CHAR)
    assert set(SIGMA_SP) <= set(SIGMA_CHAR)
    assert len(set(SIGMA_CHAR)) == len(SIGMA_CHAR)


def test_paper_schema_names() -> None:
    assert schema_set(INT).names == ("add", "mul")
    assert schema_set(NAT).names == ("add", "mul")
    assert schema_set(STRING).names == ("empty", "reverse", "append_special")
    for text in ("List Int", "Array Int", "List Nat", "Array Nat", "List Char"):
        assert schema_set(parse_type(text)).names == ("replace", "append", "delete", "reverse")


def test_int_every_schema_and_delta_reachable() -> None:
    results = {v for v, _ in _draws(INT, 7, 2000)}
    for d in range(-2, 3):
        assert 7 + d in results
        assert d * 7 in results


def test_nat_clips_at_zero() -> None:
    results = {v for v, _ in _draws(NAT, 1, 2000)}
    assert results == {0, 1, 2, 3}  # clip(1+δ) and clip(δ·1)
    assert min(v for v, _ in _draws(NAT, 0, 500)) == 0


def test_uint8_wraps_into_range() -> None:
    m = schema_set(UINT8)
    assert m.apply(255, Step("add", (2,))) == 1
    assert m.apply(0, Step("add", (-1,))) == 255
    assert m.apply(200, Step("mul", (2,))) == 144
    assert m.apply(3, Step("mul", (-1,))) == 253
    assert all(0 <= v <= 255 for v, _ in _draws(UINT8, 255, 500))


def test_int_schema_and_parameter_frequencies_uniform() -> None:
    draws = _draws(INT, 10, 10_000, seed=1)
    by_schema = Counter(s.schema for _, s in draws)
    assert _chi2(by_schema, ["add", "mul"]) < CHI2_001[1]
    by_param = Counter((s.schema, s.params[0]) for _, s in draws)
    cats = [(n, d) for n in ("add", "mul") for d in range(-2, 3)]
    assert set(by_param) == set(cats)
    assert _chi2(by_param, cats) < CHI2_001[9]


@pytest.mark.parametrize("text", ["List Int", "Array Nat"])
def test_sequence_schema_frequencies_uniform(text: str) -> None:
    t = parse_type(text)
    draws = _draws(t, (4, 5, 6), 8000, seed=2)
    by_schema = Counter(s.schema for _, s in draws)
    assert _chi2(by_schema, ["replace", "append", "delete", "reverse"]) < CHI2_001[3]
    appends = Counter(s.params[0] for _, s in draws if s.schema == "append")
    if text == "List Int":  # q_2: v uniform on -5..5
        assert _chi2(appends, list(range(-5, 6))) < CHI2_001[10]
    replaces = [s.params for _, s in draws if s.schema == "replace"]
    by_index = Counter(j for j, _ in replaces)
    assert _chi2(by_index, [0, 1, 2]) < CHI2_001[2]
    inner = Counter((st.schema, st.params[0]) for _, st in replaces)
    assert _chi2(inner, [(n, d) for n in ("add", "mul") for d in range(-2, 3)]) < CHI2_001[9]


def test_string_schema_frequencies_uniform() -> None:
    draws = _draws(STRING, "abc", 6000, seed=3)
    by_schema = Counter(s.schema for _, s in draws)
    assert _chi2(by_schema, ["empty", "reverse", "append_special"]) < CHI2_001[2]
    outcomes = {v for v, _ in draws}
    assert {"", "cba"} | {"abc" + c for c in SIGMA_SP} == outcomes


def test_int_list_all_schemas_reachable() -> None:
    seed_value = (1, 2, 3)
    results = {v for v, _ in _draws(ListT(INT), seed_value, 6000)}
    assert (3, 2, 1) in results  # reversal
    for j in range(3):  # deletion of each index
        assert seed_value[:j] + seed_value[j + 1 :] in results
    for v in range(-5, 6):  # append of each v
        assert (*seed_value, v) in results
    for j in range(3):  # element modification by each Int schema and δ
        for d in range(-2, 3):
            for new in (seed_value[j] + d, d * seed_value[j]):
                assert (*seed_value[:j], new, *seed_value[j + 1:]) in results


def test_nat_list_append_clips() -> None:
    draws = _draws(ListT(NAT), (2,), 4000)
    appends = {s.params[0] for _, s in draws if s.schema == "append"}
    assert appends == set(range(6))  # v ∈ [-5, 5] clipped: negatives become 0
    assert all(min(v, default=0) >= 0 for v, _ in draws)


@pytest.mark.parametrize("t", [ListT(CHAR), ArrayT(CHAR)])
def test_char_sequence_writes_sigma_char(t) -> None:
    draws = _draws(t, ("a", "b"), 6000)
    appended = {v[-1] for v, s in draws if s.schema == "append"}
    assert appended == set(SIGMA_CHAR)
    replaced = {s.params[1].params[0] for _, s in draws if s.schema == "replace"}
    assert replaced == set(SIGMA_CHAR)
    assert {("b", "a"), ("a",), ("b",)} <= {v for v, _ in draws}


@pytest.mark.parametrize("text", ["List Int", "Array Nat", "List Char", "List (List Nat)"])
def test_index_schemas_are_identity_on_empty(text: str) -> None:
    t = parse_type(text)
    for value, step in _draws(t, (), 400):
        if step.schema in ("replace", "delete", "reverse", "duplicate"):
            assert value == ()
            assert step.params == ()


def test_char_is_always_one_character() -> None:
    for start in ("a", "ß", "\x00", "\U0010ffff", "\ud7ff"[0], "😀"):
        for value, _ in _draws(CHAR, start, 300):
            assert check(CHAR, value) is None
    m = schema_set(CHAR)
    assert m.apply("ß", Step("swapcase")) == "ß"  # 'SS' would be two characters
    assert m.apply("\ud7ff", Step("shift", (1,))) == "\ue000"  # skips the surrogates
    assert m.apply("\x00", Step("shift", (-1,))) == "\x00"


def test_bool_negates() -> None:
    assert {v for v, _ in _draws(BOOL, True, 20)} == {False}


def test_float_schemas_and_specials() -> None:
    draws = _draws(FLOAT, 1.5, 3000)
    values = [v for v, _ in draws]
    assert all(isinstance(v, float) and not math.isnan(v) for v in values)
    assert {3.5, 3.0, -3.0, 0.0, math.inf, -math.inf} <= set(values)
    assert any(v == 0.0 and math.copysign(1.0, v) < 0 for v in values)  # -0.0
    assert math.nextafter(1.5, math.inf) in values
    # 0·inf is NaN in IEEE: excluded unless allowed
    assert schema_set(FLOAT).apply(math.inf, Step("mul", (0.0,))) == 0.0
    nan_ok = [v for v, _ in (Mutator(FLOAT, ingredient_prob=0, allow_nan=True).mutate_traced(
        1.0, random.Random(i)) for i in range(400))]
    assert any(math.isnan(v) for v in nan_ok)


def test_option_product_nested_and_opaque() -> None:
    opt = OptionT(NAT)
    outcomes = {v for v, _ in _draws(opt, Some(4), 1000)}
    assert None in outcomes and Some(5) in outcomes and Some(8) in outcomes
    assert any(isinstance(v, Some) for v, _ in _draws(opt, None, 100))
    pair = ProdT(INT, INT)
    steps = Counter(s.schema for _, s in _draws(pair, (1, 2), 600))
    assert set(steps) == {"fst", "snd", "swap"}
    nested = ListT(ListT(NAT))
    results = {v for v, _ in _draws(nested, ((1, 2), (3,)), 3000)}
    assert ((1, 2, 0), (3,)) in results  # inside an element
    assert ((3,), (1, 2)) in results  # the outer sequence
    opaque = parse_type("Int -> Bool")
    value = OpaqueValue("fun x => x > 0")
    assert {v for v, _ in _draws(opaque, value, 50)} == {value}
    pool = IngredientPool()
    pool.add(opaque, OpaqueValue("fun _ => true"))
    rng = random.Random(0)
    got = {Mutator(opaque, ingredient_prob=1.0).mutate(value, rng, pool) for _ in range(5)}
    assert got == {OpaqueValue("fun _ => true")}


def test_fresh_values_are_well_typed() -> None:
    rng = random.Random(5)
    for text in ("Int", "Nat", "UInt8", "Bool", "Char", "String", "Float", "List (Nat × Int)",
                 "Option (List Char)", "Array (Array Int)"):
        t = parse_type(text)
        for _ in range(50):
            assert check(t, fresh_value(t, rng)) is None
