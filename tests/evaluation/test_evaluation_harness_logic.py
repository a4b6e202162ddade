"""Harness logic against a scripted backend: batching, failures, bounds, pass@k."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from veriscale.backends.base import BackendStats, Implementation, Outcome, Spec, Verdict
from veriscale.benchmark.model import ExpectedPair, Input, Signature, Task
from veriscale.evaluation.harness import evaluate, evaluate_candidate
from veriscale.evaluation.scoring import Bounded, Score
from veriscale.evaluation.solutions import Submission

P, F, U = Score.PASS, Score.FAIL, Score.UNKNOWN
SIG = Signature.from_json({"name": "f", "parameters": [{"param_name": "x", "param_type": "Int"}],
                           "return_type": "Int"})


def make_task(rejects: bool = True) -> Task:
    tests = [ExpectedPair((1,), 2, [3, 4]), ExpectedPair((5,), 6, [0])]
    return Task("t", "", SIG, tests=tests, reject_inputs=[(-1,)] if rejects else [])


class Scripted:
    """Answers from Python callables; counts calls so batching is checkable."""

    name = "scripted"

    def __init__(self, fn: Any = None, pre: Any = None, post: Any = None,
                 compile_error: Any = None, raise_on: str = "") -> None:
        self.fn, self.pre, self.post = fn, pre, post
        self.compile_error = compile_error or (lambda impl, spec: None)
        self.raise_on = raise_on
        self.calls: list[str] = []
        self.stats = BackendStats()

    def _maybe_raise(self, op: str) -> None:
        self.calls.append(op)
        if op == self.raise_on:
            raise RuntimeError(f"{op} exploded")

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        self._maybe_raise("compile")
        return self.compile_error(impl, spec)

    def run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]) -> list[Outcome]:
        self._maybe_raise("run")
        return [self.fn(*i) for i in inputs]

    def precondition_holds(self, task: Task, spec: Spec | None,
                           inputs: Sequence[Input]) -> list[Verdict]:
        self._maybe_raise("pre")
        return [self.pre(*i) for i in inputs]

    def postcondition_holds(self, task: Task, spec: Spec | None,
                            pairs: Sequence[tuple[Input, Any]]) -> list[Verdict]:
        self._maybe_raise("post")
        return [self.post(i, o) for i, o in pairs]

    def close(self) -> None:
        pass


def cand(code: bool = True, pre: bool = True, post: bool = True, sample: int = 0) -> Submission:
    impl = Implementation("def f(x): ...") if code else None
    spec = Spec(precond="p" if pre else None, postcond="q" if post else None) \
        if (pre or post) else None
    return Submission("t", sample, impl, spec)


def good_backend(**kw: Any) -> Scripted:
    return Scripted(fn=lambda x: Outcome(True, x + 1),
                    pre=lambda x: Verdict.of(x >= 0),
                    post=lambda i, o: Verdict.of(o == i[0] + 1), **kw)


def test_gt_like_candidate_passes_in_few_calls() -> None:
    be = good_backend()
    r = evaluate_candidate(be, make_task(), cand())
    assert all(v == Bounded(P, P) for v in r.metrics.values())
    assert set(r.metrics) >= {"code", "precond_sound_complete", "postcond_sound_complete",
                              "precond_postcond", "code_spec"}
    assert r.tallies["postcond_sound"].passed == 3
    assert be.calls == ["compile", "run", "compile", "pre", "post"]


def test_timeouts_are_unknown_not_pass() -> None:
    be = good_backend()
    be.fn = lambda x: Outcome(False, error="timeout")
    r = evaluate_candidate(be, make_task(), cand(pre=False, post=False))
    assert r.metrics["code"] == Bounded(U, U)


def test_wrong_code_fails() -> None:
    be = good_backend()
    be.fn = lambda x: Outcome(True, 2)  # right on the first test only
    r = evaluate_candidate(be, make_task(), cand(pre=False, post=False))
    assert r.metrics["code"] == Bounded(F, F)
    assert r.tallies["code"].passed == 1 and r.tallies["code"].failed == 1


def test_backend_exception_is_unknown_and_recorded() -> None:
    r = evaluate_candidate(good_backend(raise_on="run"), make_task(), cand(pre=False, post=False))
    assert r.metrics["code"].upper is U
    assert "run exploded" in r.errors["code"]
    r = evaluate_candidate(good_backend(raise_on="post"), make_task(), cand(code=False))
    assert r.metrics["postcond_sound"] == Bounded(U, U)
    assert r.metrics["precond_sound_complete"] == Bounded(P, P)


def test_compile_errors_fail() -> None:
    be = good_backend(compile_error=lambda impl, spec: "boom" if impl else None)
    r = evaluate_candidate(be, make_task(), cand())
    assert r.metrics["code"] == Bounded(F, F) and r.errors["code"] == "compile: boom"
    assert r.metrics["precond_sound_complete"] == Bounded(P, P)


def test_broken_postcondition_still_scores_precondition() -> None:
    be = good_backend(compile_error=lambda impl, spec: "bad post" if spec and spec.postcond
                      else None)
    r = evaluate_candidate(be, make_task(), cand(code=False))
    assert r.metrics["precond_sound_complete"] == Bounded(P, P)
    assert r.metrics["postcond_sound_complete"] == Bounded(F, F)
    assert r.metrics["precond_postcond"] == Bounded(F, F)


def test_weak_precondition_passes_without_reject_inputs() -> None:
    """VERINA's zero-tests rule: a trivial precondition is 'complete' with no reject inputs."""
    be = good_backend()
    be.pre = lambda x: Verdict.TRUE
    assert evaluate_candidate(be, make_task(rejects=False), cand(code=False)).metrics[
        "precond_complete"] == Bounded(P, P)
    assert evaluate_candidate(be, make_task(rejects=True), cand(code=False)).metrics[
        "precond_complete"] == Bounded(F, F)


def test_unknown_spec_verdicts_give_bounds() -> None:
    be = good_backend()
    be.post = lambda i, o: Verdict.UNKNOWN if o in (3, 4) else Verdict.of(o == i[0] + 1)
    r = evaluate_candidate(be, make_task(), cand(code=False))
    assert r.metrics["postcond_sound"] == Bounded(U, P)
    assert r.metrics["postcond_sound_complete"] == Bounded(U, P)


def test_report_pass_at_k_over_samples() -> None:
    be = good_backend()
    task = make_task()
    samples = [cand(pre=False, post=False, sample=i) for i in range(4)]
    bad = Scripted(fn=lambda x: Outcome(True, 0))
    results = evaluate(be, [task], {"t": samples}, ks=(1, 2))
    assert results.score("code", "lower", 1) == pytest.approx(1.0)
    # mix: 1 of 4 samples pass
    from veriscale.evaluation.harness import TaskResult
    tr = results.tasks[0]
    tr.samples[1:] = [evaluate_candidate(bad, task, c) for c in samples[1:]]
    assert isinstance(tr, TaskResult) and tr.counts("code", "lower") == (4, 1)
    assert results.score("code", "lower", 1) == pytest.approx(0.25)
    assert results.score("code", "lower", 2) == pytest.approx(0.5)
    assert results.metrics == ["code"]
    assert tr.verdict("code", "lower") == "1/4"
    js = results.to_json()
    assert js["scores"]["code"]["lower"]["pass@2"] == pytest.approx(0.5)


def test_task_without_candidates_counts_zero() -> None:
    be = good_backend()
    other = make_task()
    other.id = "u"
    rep = evaluate(be, [make_task(), other], {"t": [cand()]})
    assert rep.score("code") == pytest.approx(0.5)
    assert rep.tasks[1].verdict("code", "lower") == "-"


class Batching(Scripted):
    """A backend with the batch capability: the harness must use it for several candidates."""

    def evaluate_many(self, requests: list[tuple[str, tuple[Any, ...]]]) -> list[list[Any]]:
        ops = sorted({op for op, _ in requests})
        self.calls.append(f"evaluate_many:{'+'.join(ops)}:{len(requests)}")
        if "compile" in ops and len(requests) > 1:
            raise RuntimeError("whole batch lost")
        return [[self.compile(*args)] if op == "compile" else getattr(self, op)(*args)
                for op, args in requests]


def test_batched_calls_and_isolation() -> None:
    be = Batching(fn=lambda x: Outcome(True, x + 1))
    be.compile_error = lambda impl, spec: "bad" if impl.code == "broken" else None
    task = make_task()
    cands = [cand(pre=False, post=False, sample=i) for i in range(3)]
    cands.append(Submission("t", 3, Implementation("broken")))
    rep = evaluate(be, [task], {"t": cands})
    # the compile batch raised: retried request by request; the broken one fails alone
    assert be.calls.count("evaluate_many:compile:4") == 1
    assert be.calls.count("evaluate_many:compile:1") == 4
    assert "evaluate_many:run:3" in be.calls
    verdicts = [s.metrics["code"].lower for s in rep.tasks[0].samples]
    assert verdicts == [P, P, P, F]


def test_dispatch_turns_a_raising_backend_into_unknowns() -> None:
    from veriscale.backends import dispatch

    be = good_backend(raise_on="pre")
    out = dispatch.many(be, "precondition_holds", [(make_task(), None, [(1,), (2,)])] * 2)
    assert out == [[Verdict.UNKNOWN] * 2] * 2
    assert dispatch.many(be, "run", []) == []
