"""Adversary-killing reduction of expected pairs."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veriscale.benchmark.model import ExpectedPair
from veriscale.reduction.pairs import (
    REASON_FILL,
    REASON_ORIGINAL,
    REASON_SET_COVER,
    PairRow,
    fill_order_key,
    greedy_set_cover,
    pair_rows,
    reduce_pairs,
)


def row(i: int, kills: str, records: int = 0, prov: str = "") -> PairRow:
    return PairRow(i, frozenset(kills), records, f"payload{i}", prov == "original")


def test_greedy_takes_largest_new_cover_first():
    rows = [row(0, "a"), row(1, "abc"), row(2, "cd"), row(3, "d")]
    picked = greedy_set_cover(rows)
    assert [(r.case_index, sorted(new)) for r, new in picked] == [
        (1, ["a", "b", "c"]), (2, ["d"]),
    ]


def test_tie_on_new_cover_goes_to_more_kills():
    # after {a,b,c,d} is taken by case 0, cases 1 and 2 both add one new id (e);
    # case 2 kills more adversaries in total, so it wins despite its higher index
    rows = [row(0, "abcd"), row(1, "e"), row(2, "aef")]
    picked = greedy_set_cover(rows)
    assert [r.case_index for r, _ in picked] == [0, 2]


def test_full_tie_goes_to_lowest_case_index():
    rows = [row(5, "xy"), row(3, "yx"), row(9, "xy")]
    assert [r.case_index for r, _ in greedy_set_cover(rows)] == [3]
    assert [r.case_index for r, _ in greedy_set_cover(list(reversed(rows)))] == [3]


def test_fill_order_kills_then_records_then_index():
    rows = [row(0, "a", 9), row(1, "ab", 1), row(2, "ab", 5), row(3, "ba", 5), row(4, "", 50)]
    assert [r.case_index for r in sorted(rows, key=fill_order_key)] == [2, 3, 1, 0, 4]


def test_reduce_cover_then_fill_sorted_output():
    rows = [row(0, "", 0), row(1, "a", 3), row(2, "ab", 1), row(3, "c", 1), row(4, "", 7)]
    res = reduce_pairs(rows, budget=3)
    assert res.selected == [1, 2, 3]
    assert [(e.case_index, e.reason) for e in res.log] == [
        (2, REASON_SET_COVER), (3, REASON_SET_COVER), (1, REASON_FILL),
    ]
    assert [e.selection_order for e in res.log] == [1, 2, 3]
    assert res.log[0].newly_covered == ("a", "b")
    doc = res.log_dict()
    assert doc["selected"] == [1, 2, 3] and doc["covered_count"] == 3
    assert [e["reason"] for e in doc["selection"]] == ["set_cover", "set_cover", REASON_FILL]
    json.dumps(doc)
    assert res.rows[0].payload == "payload1"
    assert not res.set_cover_exceeds_budget
    assert res.universe_size == 3 and res.uncovered == ()


def test_cover_beyond_budget_is_kept_and_flagged():
    rows = [row(i, f"{i}") for i in range(6)] + [row(10, "")]
    res = reduce_pairs(rows, budget=4)
    assert res.selected == [0, 1, 2, 3, 4, 5]
    assert res.set_cover_exceeds_budget
    assert res.summary()["supplemental_count"] == 0


def test_keep_all_when_within_budget():
    rows = [row(i, "a" if i == 2 else "") for i in range(5)]
    assert reduce_pairs(rows, budget=5).selected == [0, 1, 2, 3, 4]
    assert reduce_pairs(rows, budget=50).selected == [0, 1, 2, 3, 4]
    assert reduce_pairs([], budget=5).selected == []


def test_budget_zero_keeps_only_the_cover():
    rows = [row(0, "a"), row(1, "")]
    res = reduce_pairs(rows, budget=0)
    assert res.selected == [0] and res.set_cover_exceeds_budget


def test_keep_original_first_then_cover_then_fill():
    rows = [
        row(0, "a", prov="original"),
        row(1, "", prov="original"),
        row(2, "ab", 4),
        row(3, "c", 1),
        row(4, "abc", 2),
        row(5, "", 9),
    ]
    plain = reduce_pairs(rows, budget=3, keep_original=False)
    # without originals: cover = case 4, then case 2 (2 kills), then case 3 (more records)
    assert plain.selected == [2, 3, 4]
    assert REASON_ORIGINAL not in plain.reasons.values()
    res = reduce_pairs(rows, budget=4, keep_original=True)
    reasons = res.reasons
    assert reasons[0] == REASON_ORIGINAL and reasons[1] == REASON_ORIGINAL
    # originals already kill a; the cover needs b and c: case 4 ({a,b,c}) covers both
    assert [e.case_index for e in res.log if e.reason == REASON_SET_COVER] == [4]
    # one slot left: strongest remaining is case 2 (2 kills)
    assert res.selected == [0, 1, 2, 4]
    assert res.original_count == 2 and not res.original_exceeds_budget


def test_keep_original_beyond_budget():
    rows = [row(i, "", prov="original") for i in range(4)] + [row(9, "z")]
    res = reduce_pairs(rows, budget=2, keep_original=True)
    assert res.selected == [0, 1, 2, 3, 9]
    assert res.original_exceeds_budget and res.set_cover_exceeds_budget


def test_plain_tuples_and_validation():
    res = reduce_pairs([(1, {"a"}, 2, None), (0, frozenset(), 0, None)], budget=1)
    assert res.selected == [1]
    with pytest.raises(ValueError):
        reduce_pairs([row(1, "a"), row(1, "b")])
    with pytest.raises(ValueError):
        reduce_pairs([row(1, "a")], budget=-1)
    with pytest.raises(TypeError):
        reduce_pairs([("x", frozenset(), 0, None)])


def test_pair_rows_from_test_cases():
    tests = [ExpectedPair((1,), 2, [3, 4]), ExpectedPair((5,), 6, [], provenance="mutation")]
    rows = pair_rows(tests, [{"m1"}, set()])
    assert rows[0] == PairRow(0, frozenset({"m1"}), 2, tests[0], True)
    assert not rows[1].original and rows[1].record_count == 0
    with pytest.raises(ValueError):
        pair_rows(tests, [set()])


# --------------------------------------------------------------------------- properties

_adversaries = st.sampled_from([f"m{i}" for i in range(12)])
_rows = st.lists(
    st.tuples(
        st.frozensets(_adversaries, max_size=5),
        st.integers(0, 6),
        st.booleans(),
    ),
    max_size=40,
).map(
    lambda items: [
        PairRow(i * 3 + 1, kills, recs, ("p", i), orig)
        for i, (kills, recs, orig) in enumerate(items)
    ]
)


@settings(max_examples=150, deadline=None)
@given(_rows, st.integers(0, 30), st.booleans(), st.randoms(use_true_random=False))
def test_pair_reduction_properties(rows, budget, keep_original, rnd):
    res = reduce_pairs(rows, budget=budget, keep_original=keep_original)
    by_index = {r.case_index: r for r in rows}
    full_kills = frozenset().union(*(r.kills for r in rows)) if rows else frozenset()
    # a subset, sorted by case index, payloads intact
    assert set(res.selected) <= set(by_index)
    assert res.selected == sorted(res.selected)
    assert all(r == by_index[r.case_index] for r in res.rows)
    # every adversary killed by the full suite is killed by the reduced one
    assert res.killed == full_kills and res.uncovered == ()
    # budget respected, except the documented overflow of the cover (and originals)
    forced = res.set_cover_count + res.original_count
    assert len(res.rows) == max(forced, min(budget, len(rows)))
    assert res.set_cover_exceeds_budget == (forced > budget)
    # keep_all when everything fits
    if len(rows) <= budget:
        assert res.selected == sorted(by_index)
    if keep_original:
        assert {r.case_index for r in rows if r.original} <= set(res.selected)
    # each greedy pick covered the most new adversaries available at its step
    covered = set().union(*(r.kills for r in rows if r.original)) if keep_original else set()
    for entry in (e for e in res.log if e.reason == REASON_SET_COVER):
        best = max(len(r.kills - covered) for r in rows)
        assert len(entry.newly_covered) == best > 0
        covered |= set(entry.newly_covered)
    # deterministic, and independent of row order
    again = reduce_pairs(rows, budget=budget, keep_original=keep_original)
    assert again.selected == res.selected and again.log == res.log
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    other = reduce_pairs(shuffled, budget=budget, keep_original=keep_original)
    assert other.selected == res.selected and other.log == res.log
