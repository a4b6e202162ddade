"""Boundary-preserving reduction of reject inputs: the released algorithm, exactly."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veriscale.benchmark.model import Signature
from veriscale.reduction.reject_inputs import (
    STAGE_CRITICAL,
    STAGE_DIVERSITY,
    STAGE_FALLBACK,
    STAGE_KEEP_ALL,
    canonical_json,
    critical_buckets,
    input_features,
    input_shape,
    input_signature,
    input_size,
    is_index_like,
    length_bucket,
    parse_numeric,
    parse_numeric_sequence,
    parse_sequence_literal,
    reduce_canonical_inputs,
    reduce_reject_inputs,
    row_priority,
    value_kind_and_length,
)

DATA = Path(__file__).parent / "data" / "released_reject_replay.json"


def wrap(inputs):
    return [{"input": inp} for inp in inputs]


def reduce_inputs(inputs, **kw):
    """Reduce plain input dicts; return (kept inputs, result)."""
    res = reduce_reject_inputs(wrap(inputs), **kw)
    return [r["input"] for r in res.selected], res


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), (-7, -7), (True, None), (False, None), (" -12 ", -12), ("+5", 5),
     ("3.0", None), (1.5, None), ("abc", None), (None, None), (10**30, 10**30)],
)
def test_parse_numeric(value, expected):
    assert parse_numeric(value) == expected


def test_parse_sequence_literal_is_naive():
    assert parse_sequence_literal("#[1, 2]") == ["1", "2"]
    assert parse_sequence_literal(" [ ] ") == []
    assert parse_sequence_literal("#[]") == []
    assert parse_sequence_literal([1, [2]]) == [1, [2]]
    # Nested lists split on every comma, as released.
    assert parse_sequence_literal("[[1, 2], [3]]") == ["[1", "2]", "[3]"]
    assert parse_sequence_literal("abc") is None
    assert parse_sequence_literal(5) is None


def test_value_kinds_and_lengths():
    assert value_kind_and_length(True) == ("bool", None)
    assert value_kind_and_length("42") == ("scalar:int", None)
    assert value_kind_and_length(-1) == ("scalar:int", None)
    assert value_kind_and_length("#[1, -2, 3]") == ("seq:int", 3)
    assert value_kind_and_length([1, 2]) == ("seq:int", 2)
    assert value_kind_and_length("[[1, 2], [3]]") == ("seq:mixed", 3)
    assert value_kind_and_length("['a', 'b']") == ("seq:mixed", 2)
    assert value_kind_and_length([[1], [2]]) == ("seq:mixed", 2)
    assert value_kind_and_length("hello") == ("string", 5)
    assert value_kind_and_length(2.5) == ("unknown", None)
    assert value_kind_and_length(None) == ("unknown", None)
    assert parse_numeric_sequence("[1, x]") is None


@pytest.mark.parametrize(
    ("n", "bucket"),
    [(None, "len=NA"), (0, "len=0"), (3, "len=3"), (4, "len=4-5"), (5, "len=4-5"),
     (6, "len=6-10"), (10, "len=6-10"), (11, "len=>10")],
)
def test_length_bucket(n, bucket):
    assert length_bucket(n) == bucket


def test_index_like_names():
    for name in ["i", "J", "idx", "Index", "pos", "position", "left", "right", "start", "END",
                 "startIdx", "myindex"]:
        assert is_index_like(name), name
    for name in ["n", "x", "indices", "idxs", "len", "key"]:
        assert not is_index_like(name), name


# --------------------------------------------------------------------------- buckets


def test_every_critical_bucket_kind():
    assert critical_buckets({"a": "[]"}) == ("empty_seq:a",)
    assert critical_buckets({"a": [7]}) == ("singleton_seq:a",)
    assert critical_buckets({"a": "[0, 5]"}) == ("seq_contains_zero:a",)
    assert critical_buckets({"a": [3, -1]}) == ("seq_contains_negative:a", "seq_unsorted:a")
    assert critical_buckets({"a": [2, 2]}) == ("seq_has_duplicate:a",)
    assert critical_buckets({"a": [3, 1]}) == ("seq_unsorted:a",)
    assert critical_buckets({"i": -1}) == ("index_negative:i",)
    assert critical_buckets({"start": "0"}) == ("index_zero:start",)
    assert critical_buckets({"n": -4}) == ("scalar_negative:n",)
    assert critical_buckets({"n": 0}) == ("scalar_zero:n",)
    assert critical_buckets({"a": [1], "b": [1, 2]}) == (
        "seq_lengths_mismatch", "singleton_seq:a",
    )
    # strings, chars, bools, floats and mixed sequences have no buckets
    assert critical_buckets({"s": "", "c": "x", "b": True, "f": 0.0, "m": "[[1], []]"}) == ()


def test_buckets_sorted_by_kind_priority_then_name():
    inp = {"b": [], "a": [], "k": 0, "x": [5, 0, 0, -1], "n": -1}
    assert critical_buckets(inp) == (
        "empty_seq:a", "empty_seq:b", "seq_lengths_mismatch", "index_zero:k",
        "scalar_negative:n", "seq_contains_zero:x", "seq_contains_negative:x",
        "seq_has_duplicate:x", "seq_unsorted:x",
    )


def test_shape_and_features():
    inp = {"b": "#[3, 2, 1]", "a": [1, 1], "s": "hey", "n": -1000000}
    assert input_shape(inp) == (
        "a=seq:int:len=2|b=seq:int:len=3|n=scalar:int:len=NA|s=string:len=3"
    )
    assert input_features(inp) == (
        "a:all_same", "a:has_duplicate", "a:sorted_asc", "a:sorted_desc",
        "b:sorted_desc", "has_large_abs", "has_negative", "has_one", "seq_lengths_mismatch",
    )
    assert input_features({"a": [], "b": "[]"}) == (
        "a:empty_seq", "b:empty_seq", "seq_lengths_match",
    )
    # numbers are collected recursively through JSON lists, not through strings
    assert "has_zero" in input_features({"m": [[0, 1], [2]]})
    assert "has_zero" not in input_features({"m": "[[0, 1], [2]]"})
    assert input_size(inp) == 2 + 3 + 1 + 3


def test_priority_prefers_critical_then_small_then_feature_rich():
    empty = {"a": []}
    zero_small = {"a": [0]}
    zero_big = {"a": [0, 5, 9]}
    plain = {"a": [1]}
    ordered = sorted([plain, zero_big, zero_small, empty], key=row_priority)
    # singleton [1] has critical rank 10 (singleton_seq) vs [0] rank 6
    assert ordered == [empty, zero_small, zero_big, plain]
    # same rank and size: more features wins
    rich = {"a": [-1, 0]}  # has_minus_one, has_negative, has_zero, sorted_asc + 2 buckets
    poor = {"a": [7, 0]}
    assert row_priority(rich) < row_priority(poor)


def test_canonical_json_keeps_non_ascii_and_sorts_keys():
    assert canonical_json({"b": "é", "a": 1}) == '{"a":1,"b":"é"}'


# --------------------------------------------------------------------------- stages


def test_keep_all_sorts_by_priority_and_dedups():
    rows = [{"a": [1, 2]}, {"a": []}, {"a": [1, 2]}, {"a": "[1, 2]"}]
    kept, res = reduce_inputs(rows)
    # equal rank/size/features: canonical JSON decides, and '"' sorts before '['
    assert kept == [{"a": []}, {"a": "[1, 2]"}, {"a": [1, 2]}]
    assert [e.stage for e in res.log] == [STAGE_KEEP_ALL] * 3
    assert res.indices == [1, 3, 0]
    assert res.unique_count == 3 and res.raw_count == 4


def test_empty_and_bad_rows():
    assert reduce_reject_inputs([]).selected == []
    res = reduce_reject_inputs([{"input": {"a": 1}}, "oops", None, {"input": "x"}, {"a": 1}])
    assert res.selected == [{"input": {"a": 1}}]
    assert res.skipped == [1, 2, 3, 4]
    with pytest.raises(ValueError):
        reduce_reject_inputs(wrap([{"a": 1}]), budget=-1)
    with pytest.raises(ValueError):
        reduce_reject_inputs(wrap([{"a": 1}]), keep_per_bucket=0)


def test_rows_keep_extra_keys_which_never_change_the_selection():
    inputs = [{"n": k} for k in range(-3, 60)]
    plain = reduce_reject_inputs(wrap(inputs), budget=7)
    tagged = reduce_reject_inputs(
        [{"zz": -k, "input": inp, "a": "meta"} for k, inp in enumerate(inputs)], budget=7
    )
    assert [r["input"] for r in tagged.selected] == [r["input"] for r in plain.selected]
    assert all(set(r) == {"zz", "input", "a"} for r in tagged.selected)
    doc = tagged.log_dict()
    assert doc["kept_count"] == 7 and len(doc["selection"]) == 7
    assert doc["selection"][0]["input"] == tagged.selected[0]["input"]
    json.dumps(doc)


def test_critical_stage_one_per_bucket_in_priority_order():
    rows = [
        {"a": [5, 3], "n": 4},  # seq_unsorted
        {"a": [], "n": 4},  # empty_seq
        {"a": [1, 2], "n": 0},  # scalar_zero
        {"a": [1, 2], "n": 5},  # no bucket
        {"a": [1, 2, 3], "n": 5},  # no bucket
        {"a": [4, 5], "n": 6},  # no bucket
    ]
    kept, res = reduce_inputs(rows, budget=4)
    stages = [(e.stage, e.bucket) for e in res.log]
    assert stages[:3] == [
        (STAGE_CRITICAL, "empty_seq:a"),
        (STAGE_CRITICAL, "scalar_zero:n"),
        (STAGE_CRITICAL, "seq_unsorted:a"),
    ]
    assert kept[:3] == [rows[1], rows[2], rows[0]]
    assert stages[3][0] == STAGE_DIVERSITY
    assert len(kept) == 4


def test_critical_bucket_does_not_fall_through_to_second_best():
    # [0, 0] is the best row of seq_contains_zero AND seq_has_duplicate; the
    # duplicate bucket gets nothing more, even though [3, 3] is also in it.
    rows = [{"a": [0, 0]}, {"a": [3, 3]}, {"a": [1, 2]}, {"a": [2, 4]}]
    _, res = reduce_inputs(rows, budget=2)
    crit = [e for e in res.log if e.stage == STAGE_CRITICAL]
    assert [(e.bucket) for e in crit] == ["seq_contains_zero:a"]
    # the second slot comes from diversity, not from the duplicate bucket
    assert res.log[1].stage == STAGE_DIVERSITY


def test_critical_truncated_to_budget():
    rows = [{"a": []}, {"a": [0, 1]}, {"a": [-1, 2]}, {"a": [2, 1]}, {"n": 0}, {"n": -1}]
    kept, res = reduce_inputs(rows, budget=3)
    assert [e.stage for e in res.log] == [STAGE_CRITICAL] * 3
    assert kept == [{"a": []}, {"n": -1}, {"n": 0}]


def test_keep_per_bucket_two():
    rows = [{"n": 0, "m": m} for m in range(5, 10)] + [{"n": 1, "m": 7}]
    _, res = reduce_inputs(rows, budget=3, keep_per_bucket=2)
    crit = [e for e in res.log if e.stage == STAGE_CRITICAL]
    assert len(crit) == 2 and {e.bucket for e in crit} == {"scalar_zero:n"}


def test_diversity_then_fallback_fill():
    # One critical row; two diversity groups; the rest only via fallback.
    rows = [{"n": 0}] + [{"n": k} for k in (5, 6, 7, 8)] + [{"n": 3_000_000}]
    kept, res = reduce_inputs(rows, budget=5)
    assert [e.stage for e in res.log] == [
        STAGE_CRITICAL, STAGE_DIVERSITY, STAGE_DIVERSITY, STAGE_FALLBACK, STAGE_FALLBACK,
    ]
    assert kept == [{"n": 0}, {"n": 3_000_000}, {"n": 5}, {"n": 6}, {"n": 7}]
    assert json.loads(res.log[1].bucket) == ["n=scalar:int:len=NA", ["has_large_abs"]]
    assert res.stage_counts == {STAGE_CRITICAL: 1, STAGE_DIVERSITY: 2, STAGE_FALLBACK: 2}


def test_reproduces_released_verinalite_exactly():
    """Two released VerinaPlus tasks reduce to the released VerinaLite, same order."""
    doc = json.loads(DATA.read_text(encoding="utf-8"))
    for task, sets in doc["tasks"].items():
        kept, res = reduce_inputs(sets["plus"])
        assert kept == sets["lite"], task
        assert res.unique_count == len(sets["plus"]) > 50
        # input order does not matter
        shuffled = list(sets["plus"])
        random.Random(7).shuffle(shuffled)
        assert reduce_inputs(shuffled)[0] == sets["lite"], task


def test_canonical_wrapper_uses_verina_encoding():
    sig = Signature.from_json(
        {"name": "f", "parameters": [{"param_name": "a", "param_type": "Array Int"},
                                     {"param_name": "j", "param_type": "Nat"}],
         "return_type": "Int"}
    )
    inputs = [((1, 2), 5), ((), 3), ((0,), 1), ((), 3)]
    kept, res = reduce_canonical_inputs(sig, inputs, budget=2)
    assert kept[0] == ((), 3)
    assert len(kept) == 2 and res.unique_count == 3
    assert all(inp in inputs for inp in kept)
    assert res.log[0].signature == input_signature(sig.encode_input(((), 3)))


# --------------------------------------------------------------------------- properties

_scalar = st.one_of(st.integers(-3, 3), st.integers(-(10**7), 10**7), st.booleans())
_int_list = st.lists(st.integers(-3, 3), max_size=4)
_value = st.one_of(
    _scalar,
    _int_list,
    _int_list.map(lambda xs: "[" + ", ".join(map(str, xs)) + "]"),
    _int_list.map(lambda xs: "#[" + ", ".join(map(str, xs)) + "]"),
    st.text(alphabet="ab0,[]", max_size=4),
    st.lists(_int_list, max_size=2),
)
_row = st.fixed_dictionaries({"a": _value}, optional={"i": _value, "b": _value})
_rows = st.lists(_row, max_size=70)


@settings(max_examples=120, deadline=None)
@given(_rows, st.integers(0, 60), st.randoms(use_true_random=False))
def test_reject_reduction_properties(rows, budget, rnd):
    kept, res = reduce_inputs(rows, budget=budget)
    keys = [canonical_json(r) for r in kept]
    unique = {canonical_json(r) for r in rows}
    # budget respected, no duplicates, a subset of the input
    assert len(res.selected) == min(budget, len(unique))
    assert len(set(keys)) == len(keys)
    assert set(keys) <= unique
    assert len(res.log) == len(res.selected)
    # keep_all exactly when everything fits
    if len(unique) <= budget:
        assert all(e.stage == STAGE_KEEP_ALL for e in res.log)
    # deterministic and independent of input order
    assert reduce_inputs(rows, budget=budget)[0] == kept
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert reduce_inputs(shuffled, budget=budget)[0] == kept
    # every critical bucket is represented when the budget allows it
    all_buckets = {b for r in rows for b in critical_buckets(r)}
    if len(all_buckets) <= budget:
        kept_buckets = {b for r in kept for b in critical_buckets(r)}
        assert all_buckets <= kept_buckets
