"""Pure scoring: per-test verdicts, bounds, the zero-tests rule, aggregates."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veriscale.backends.base import Outcome, Verdict
from veriscale.evaluation.scoring import (
    FAILED,
    Bounded,
    Score,
    Tally,
    aggregate,
    code_property,
    code_test_score,
    code_tests,
    combine,
    lower_bound,
    must_fail,
    must_hold,
    spec_property,
    upper_bound,
)
from veriscale.values import INT, ListT

P, F, U = Score.PASS, Score.FAIL, Score.UNKNOWN


def test_combine_order() -> None:
    assert combine([]) is P
    assert combine([P, P]) is P
    assert combine([P, U]) is U
    assert combine([U, F, P]) is F


def test_code_test_outcomes() -> None:
    assert code_test_score(Outcome(True, 3), 3, INT) is P
    assert code_test_score(Outcome(True, 4), 3, INT) is F
    assert code_test_score(Outcome(True, (1, 2)), (1, 2), ListT(INT)) is P
    # a timeout is never a pass (VERINA scores a timed-out test file as all PASS)
    assert code_test_score(Outcome(False, error="timeout"), 3, INT) is U
    assert code_test_score(Outcome(False, error="memory"), 3, INT) is U
    # runtime errors and ill-typed results are wrong answers
    assert code_test_score(Outcome(False, error="error: ZeroDivisionError: x"), 3, INT) is F
    assert code_test_score(Outcome(False, error="crash: recursion: deep"), 3, INT) is F
    assert code_test_score(Outcome(False, error="ill_typed: str"), 3, INT) is F
    assert code_test_score(Outcome(False, error="compile: boom"), 3, INT) is F


def test_timed_out_code_task_is_not_pass() -> None:
    outs = [Outcome(True, 1), Outcome(False, error="timeout")]
    tally = Tally.of(code_tests(outs, [1, 2], INT))
    assert code_property(tally) == Bounded(U, U)  # code is never upgraded
    outs = [Outcome(False, error="timeout")] * 2
    assert code_property(Tally.of(code_tests(outs, [1, 2], INT))).upper is not P


def test_code_fail_dominates() -> None:
    outs = [Outcome(True, 9), Outcome(False, error="timeout"), Outcome(True, 3)]
    assert code_property(Tally.of(code_tests(outs, [1, 2, 3], INT))) == FAILED
    assert code_property(Tally(passed=3), compiled=False) == FAILED


def test_must_hold_and_must_fail() -> None:
    assert [must_hold(v) for v in (Verdict.TRUE, Verdict.FALSE, Verdict.UNKNOWN)] == [P, F, U]
    assert [must_fail(v) for v in (Verdict.TRUE, Verdict.FALSE, Verdict.UNKNOWN)] == [F, P, U]


def test_bounds_rule() -> None:
    # zero tests = PASS in both bounds (VERINA)
    assert spec_property(Tally()) == Bounded(P, P)
    # all pass
    assert spec_property(Tally(passed=3)) == Bounded(P, P)
    # something passed, nothing failed, some unknown: lower UNKNOWN, upper PASS
    assert spec_property(Tally(passed=1, unknown=4)) == Bounded(U, P)
    # only unknowns: no evidence either way, stays UNKNOWN even in the upper bound
    assert spec_property(Tally(unknown=2)) == Bounded(U, U)
    # any failure is FAIL in both bounds
    assert spec_property(Tally(passed=5, failed=1, unknown=1)) == Bounded(F, F)
    # a spec that does not compile is FAIL
    assert spec_property(Tally(passed=5), compiled=False) == FAILED
    assert lower_bound(Tally(passed=2, unknown=1)) is U
    assert upper_bound(Tally(passed=2, unknown=1)) is P
    # an unknown that ran out of its budget is the candidate's cost: never lifted
    assert spec_property(Tally(passed=1, unknown=4, spent=1)) == Bounded(U, U)
    assert spec_property(Tally(passed=1, failed=1, unknown=4, spent=4)) == Bounded(F, F)


@given(st.lists(st.sampled_from([P, F, U])), st.data())
def test_tally_counts_budget_unknowns_only_among_unknowns(scores, data) -> None:
    spent = data.draw(st.lists(st.booleans(), min_size=len(scores), max_size=len(scores)))
    t = Tally.of(scores, spent)
    assert (t.passed, t.failed, t.unknown) == (scores.count(P), scores.count(F), scores.count(U))
    assert t.spent == sum(s is U and b for s, b in zip(scores, spent, strict=True))
    assert Tally.of(scores) + t == Tally(2 * t.passed, 2 * t.failed, 2 * t.unknown, t.spent)
    if t.spent:
        assert upper_bound(t) is not P or t.unknown == 0


def test_aggregates() -> None:
    base = {
        "code": Bounded(P, P),
        "precond_sound": Bounded(P, P),
        "precond_complete": Bounded(U, P),
        "postcond_sound": Bounded(P, P),
        "postcond_complete": Bounded(P, P),
    }
    agg = aggregate(base)
    assert agg["precond_sound_complete"] == Bounded(U, P)
    assert agg["postcond_sound_complete"] == Bounded(P, P)
    assert agg["precond_postcond"] == Bounded(U, P)
    assert agg["code_spec"] == Bounded(U, P)
    assert next(iter(agg)) == "code"
    # only code: no spec aggregates invented
    assert set(aggregate({"code": Bounded(P, P)})) == {"code"}
    # only postcondition: no precond_postcond
    only_post = aggregate({"postcond_sound": Bounded(F, F), "postcond_complete": Bounded(P, P)})
    assert only_post["postcond_sound_complete"] == FAILED
    assert "precond_postcond" not in only_post
