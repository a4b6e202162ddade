"""The one outcome model: failure kinds, what is inconclusive, and who asks.

Scoring, ``verify`` and the oracle cache must agree on which failures are the
candidate's fault; these tests pin that they all ask ``FailureKind.inconclusive``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from test_evaluation_harness_logic import cand, good_backend, make_task

from veriscale.backends.base import FailureKind, Implementation, Outcome, Verdict
from veriscale.backends.cache import CachingBackend, OracleCache
from veriscale.backends.python.backend import outcome_error
from veriscale.benchmark.model import Input, Task
from veriscale.evaluation.harness import evaluate_candidate
from veriscale.evaluation.scoring import Score, code_test_score, must_fail, must_hold, report_text
from veriscale.evaluation.verify import AGREE, DISAGREE, UNKNOWN, reference_verdict
from veriscale.values import INT

P, F, U = Score.PASS, Score.FAIL, Score.UNKNOWN

CONCLUSIVE = ["crash: recursion", "error: ValueError: x", "exit: sys.exit(1)",
              "ill_typed: str", "compile: boom", "output_limit: 9 bytes"]
INCONCLUSIVE = ["timeout", "memory", "infrastructure: Lean stopped",
                "unsupported: no Mathlib", "unknown: stuck reduction", "backend: whatever",
                "not a kind at all"]


@pytest.mark.parametrize("error", CONCLUSIVE + INCONCLUSIVE)
def test_one_property_decides_score_and_verify(error: str) -> None:
    o = Outcome(False, error=error)
    inconclusive = error in INCONCLUSIVE
    assert o.inconclusive is inconclusive and o.kind is not None
    assert code_test_score(o, 1, INT) is (U if inconclusive else F)
    # the reference's compile error is the checker's: unknown, with that cause
    reference_unknown = inconclusive or error.startswith("compile")
    assert reference_verdict(INT, o, 1)[0] == (UNKNOWN if reference_unknown else DISAGREE)
    if error.startswith("compile"):
        assert "does not compile here" in reference_verdict(INT, o, 1)[1]
    assert reference_verdict(INT, Outcome(True, 1), 1)[0] == AGREE


def test_every_kind_has_a_reading_and_unknown_prefixes_are_not_the_candidates() -> None:
    assert {k for k in FailureKind if k.inconclusive} == {
        FailureKind.TIMEOUT, FailureKind.MEMORY,
        FailureKind.INFRASTRUCTURE, FailureKind.UNSUPPORTED, FailureKind.UNKNOWN}
    for k in FailureKind:
        assert FailureKind.of_error(f"{k.value}: detail") is k
    assert FailureKind.of_error("weird") is FailureKind.INFRASTRUCTURE
    assert FailureKind.of_error("weird", FailureKind.COMPILE) is FailureKind.COMPILE
    assert Outcome(True, 1).kind is None and not Outcome(True, 1).inconclusive


def test_lost_sandbox_worker_is_infrastructure() -> None:
    for lost in ("crash: no result", "crash: worker keeps losing the module",
                 "crash: sandbox worker failed to start: bad handshake"):
        assert outcome_error(lost).startswith("infrastructure: sandbox")
        assert Outcome(False, error=outcome_error(lost)).inconclusive
    assert outcome_error("crash: killed by signal SIGSEGV") == "crash: killed by signal SIGSEGV"


def test_spec_error_verdict_is_fail_both_ways() -> None:
    assert must_hold(Verdict.ERROR) is F and must_fail(Verdict.ERROR) is F
    assert must_hold(Verdict.UNKNOWN) is U and must_fail(Verdict.UNKNOWN) is U


def test_report_text_is_short_one_line_and_host_free(tmp_path: Path) -> None:
    home = str(Path("~").expanduser())
    text = report_text(f"error: OSError: {home}/secret\n\x1b[31mred" + "x" * 500)
    assert "\n" not in text and "\x1b" not in text and home not in text and len(text) <= 200
    assert "<host>/secret" in text


class _Counting:
    """A backend whose run outcomes are scripted; counts what reached it."""

    name = "counting"

    def __init__(self, outcomes: list[Outcome]) -> None:
        self.outcomes = outcomes
        self.asked = 0
        from veriscale.backends.base import BackendStats

        self.stats = BackendStats()

    def run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]
            ) -> list[Outcome]:
        self.asked += len(inputs)
        return self.outcomes[: len(inputs)]

    def close(self) -> None:
        pass


def test_cache_never_stores_inconclusive_outcomes(tmp_path: Path) -> None:
    task = make_task()
    outs = [Outcome(False, error=e) for e in CONCLUSIVE + INCONCLUSIVE]
    inner = _Counting(outs)
    cache = OracleCache(tmp_path / "oracle.sqlite")
    be = CachingBackend(inner, cache)  # type: ignore[arg-type]
    inputs = [(i,) for i in range(len(outs))]
    assert be.run(task, None, inputs) == outs
    inner.asked = 0
    be.run(task, None, inputs)
    assert inner.asked == len(INCONCLUSIVE)  # only the inconclusive ones are asked again
    cache.close()


# ----------------------------------------------------------------- harness


def test_checker_failure_is_unknown_never_fail() -> None:
    be = good_backend()
    be.fn = lambda x: Outcome(False, error="infrastructure: Lean stopped after line 9")
    r = evaluate_candidate(be, make_task(), cand(pre=False, post=False))
    assert r.metrics["code"].lower is U and r.metrics["code"].upper is U
    be.fn = lambda x: Outcome(False, error="unsupported: no Lean sections")
    assert evaluate_candidate(be, make_task(), cand(pre=False, post=False)).metrics[
        "code"].lower is U


def test_inconclusive_compile_answer_is_unknown() -> None:
    """A batched compile file that timed out must not make its candidates FAIL."""
    be = good_backend(compile_error=lambda impl, spec: "unknown: timeout" if impl else None)
    r = evaluate_candidate(be, make_task(), cand(pre=False, post=False))
    assert r.metrics["code"].lower is U and "timeout" in r.errors["code"]
    be = good_backend(compile_error=lambda impl, spec: "infrastructure: Lean died" if spec
                      else None)
    r = evaluate_candidate(be, make_task(), cand(code=False))
    assert r.metrics["precond_sound"].lower is U and r.metrics["postcond_sound"].lower is U


def test_candidate_exception_message_is_recorded_short() -> None:
    be = good_backend()
    be.fn = lambda x: Outcome(False, error="error: ValueError: " + "no " * 200)
    r = evaluate_candidate(be, make_task(), cand(pre=False, post=False))
    assert r.metrics["code"].lower is F
    assert r.errors["code"].startswith("test 0") and "ValueError" in r.errors["code"]
    assert len(r.errors["code"]) < 300


def test_abstaining_spec_is_fail_not_upper_bound_pass() -> None:
    """A postcondition that raises after its first True must not reach the upper bound."""
    be = good_backend()
    seen: list[int] = []

    def post(i: Any, o: Any) -> Verdict:
        seen.append(o)
        return Verdict.TRUE if len(seen) == 1 else Verdict.ERROR

    be.post = post
    r = evaluate_candidate(be, make_task(), cand(code=False))
    assert r.metrics["postcond_sound"].upper is F
    assert r.metrics["postcond_sound_complete"].upper is F
    assert r.errors["postcond"].startswith("error: the specification raised")
    be.post = lambda i, o: Verdict.ERROR
    r = evaluate_candidate(be, make_task(), cand(code=False))
    assert r.metrics["postcond_complete"].lower is F and r.metrics["postcond_sound"].upper is F


def test_python_spec_raising_is_fail_with_message(tmp_path: Path) -> None:
    from test_evaluation_python import write_suite

    from veriscale.backends.datasets import load_benchmark
    from veriscale.backends.registry import make_backend
    from veriscale.evaluation.harness import evaluate
    from veriscale.evaluation.solutions import load_solutions

    suite = write_suite(tmp_path / "suite")
    tasks, _ = load_benchmark(suite)
    lines = [
        # answers True once, then raises: VERINA-style upper bound must not turn it into PASS
        {"task_id": "t_div", "sample": 0, "postcond":
            "def postcondition(a, b, result):\n"
            "    if result != a // b:\n"
            "        raise ValueError('abstain')\n"
            "    return True\n"},
        {"task_id": "t_div", "sample": 1, "precond":
            "def precondition(a, b):\n    raise RuntimeError('never answers')\n"},
    ]
    path = tmp_path / "sol.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    cands, issues = load_solutions(path, tasks)
    assert not issues
    be = make_backend("python", timeout=0.5)
    try:
        rep = evaluate(be, tasks, cands)
    finally:
        be.close()
    abstain, never = rep.tasks[0].samples
    assert abstain.metrics["postcond_sound_complete"].upper is F, abstain.metrics
    assert "abstain" in abstain.errors["postcond"]
    assert never.metrics["precond_sound"].lower is F
    assert never.metrics["precond_sound_complete"].upper is F
    assert "never answers" in never.errors["precond"]
