"""Score candidates (model samples, mutants, the ground truth) on a suite.

Everything goes through the :class:`~veriscale.backends.base.Backend` protocol.
Per candidate: one compile and one ``run`` job for code; one or two compiles, one
``precondition_holds`` job (test and reject inputs together) and one
``postcondition_holds`` job (expected and unexpected outputs together) for a
specification. Jobs of many candidates (a group of tasks) go to the backend
together through ``<op>_many`` where it exists (the Lean backend: a few files for
the whole group), else one protocol call per job. Scoring rules live in
:mod:`veriscale.evaluation.scoring`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from veriscale.backends import dispatch
from veriscale.backends.base import (
    Backend,
    FailureKind,
    OutputTester,
    Verdict,
    hint,
    reasons_of,
    settled,
)
from veriscale.backends.causes import spent_its_budget, tally_causes
from veriscale.benchmark.model import Task
from veriscale.evaluation.passk import mean_pass_at_k
from veriscale.evaluation.scoring import (
    ALL_METRICS,
    FAILED,
    Bounded,
    Score,
    Tally,
    aggregate,
    code_property,
    code_tests,
    must_fail,
    must_hold,
    report_text,
    spec_property,
)
from veriscale.evaluation.solutions import Submission

BOUNDS = ("lower", "upper")


@dataclass
class SampleResult:
    """Verdicts of one sample of one task."""

    task_id: str
    sample: int
    metrics: dict[str, Bounded] = field(default_factory=dict)
    tallies: dict[str, Tally] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # part -> compile / backend error
    notes: dict[str, str] = field(default_factory=dict)  # metric -> what limited its check
    timeouts: dict[str, int] = field(default_factory=dict)  # part -> tests that timed out
    # part -> cause -> tests left UNKNOWN for it (backends.causes): what stood between
    # this candidate and a verdict, so a candidate that lives on UNKNOWN shows
    unknown_causes: dict[str, dict[str, int]] = field(default_factory=dict)
    # metric -> every test that failed this candidate, smallest first: input, the
    # output or verdict wanted, what the candidate gave (JSON shows COUNTEREXAMPLES;
    # ``counterexample_lines`` all of them)
    counterexamples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def mostly_unknown(self) -> list[str]:
        """The metrics on which more than half of this candidate's tests were UNKNOWN:
        its upper bound there says little (flagged in the report)."""
        return sorted(m for m, t in self.tallies.items() if t.total and 2 * t.unknown > t.total)

    def passed(self, metric: str, bound: str = "lower") -> bool:
        m = self.metrics.get(metric)
        return m is not None and m.get(bound) is Score.PASS

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "sample": self.sample,
            "metrics": {k: v.to_json() for k, v in self.metrics.items()},
            "tests": {k: v.to_json() for k, v in self.tallies.items()},
            "errors": dict(self.errors),
            **({"notes": dict(self.notes)} if self.notes else {}),
            **({"unknown_causes": {p: dict(c) for p, c in self.unknown_causes.items()}}
               if self.unknown_causes else {}),
            **({"mostly_unknown": self.mostly_unknown()} if self.mostly_unknown() else {}),
            **({"counterexamples": {m: c[:COUNTEREXAMPLES]
                                    for m, c in self.counterexamples.items()},
                "counterexamples_total": {m: len(c) for m, c in self.counterexamples.items()}}
               if self.counterexamples else {}),
        }

    def counterexample_lines(self, suite: str) -> Iterator[dict[str, Any]]:
        """Every deciding test of this candidate as one flat record per test (the
        ``--counterexamples`` JSONL schema, ``COUNTEREXAMPLE_SCHEMA``)."""
        for metric in sorted(self.counterexamples):
            for rank, case in enumerate(self.counterexamples[metric]):
                yield {"schema": COUNTEREXAMPLE_SCHEMA, "suite": suite,
                       "task_id": self.task_id, "sample": self.sample, "metric": metric,
                       "rank": rank, **case}


COUNTEREXAMPLES = 3
"""Failing tests shown per metric of a candidate in JSON (the smallest: what a person
reads first); the JSONL export holds them all."""

COUNTEREXAMPLE_SCHEMA = "veriscale.counterexample/1"
"""One line of ``evaluate --counterexamples``: suite, task_id, sample, metric, rank
(0 = smallest input), input, and either expected/got (code) or output/wanted/got (specs)."""


def _keep_counterexamples(res: SampleResult, metric: str, failed: list[dict[str, Any]]) -> None:
    """The smallest of ``failed`` (by their JSON text) as ``metric``'s counterexamples."""
    if failed:
        failed.sort(key=lambda c: len(json.dumps(c.get("input"), sort_keys=True, default=str)))
        res.counterexamples[metric] = failed


def _unobservable(n: int) -> Bounded:
    """A property the backend could not check at all: UNKNOWN, never PASS."""
    return spec_property(Tally(unknown=max(n, 1)))


def _finish_code(task: Task, outcomes: Any, res: SampleResult, compared: bool = False) -> None:
    n = len(task.tests)  # the dispatcher gives one outcome per test, failures included
    sig = task.signature
    scores = code_tests(outcomes, [t.expected for t in task.tests], sig.return_type, compared)
    tally = Tally.of(scores)
    failed = [(i, o) for i, o in enumerate(outcomes) if not o.ok]
    _keep_counterexamples(res, "code", [
        {"input": sig.encode_input(task.tests[i].input),
         "expected": sig.encode_output(task.tests[i].expected),
         "got": (report_text(o.error) if not o.ok else "a different output" if compared
                 else _encoded(sig, o.value))}
        for i, (o, sc) in enumerate(zip(outcomes, scores, strict=True)) if sc is Score.FAIL])
    timed_out = sum(o.kind is FailureKind.TIMEOUT for _, o in failed)
    if timed_out:
        res.timeouts["code"] = timed_out
    if failed:  # what the candidate (or the checker) said, shortened and host-free
        i, o = next(((i, o) for i, o in failed if not o.inconclusive), failed[0])
        res.errors.setdefault("code", f"test {i} ({len(failed)} of {n} tests failed to "
                                      f"give a value): {report_text(o.error)}")
    _count_causes(res, "code", [o.error for _, o in failed if o.inconclusive])
    res.tallies["code"] = tally
    res.metrics["code"] = code_property(tally)


def _encoded(sig: Any, value: Any) -> Any:
    """A candidate's output as the suite's JSON writes it (its repr when it has none)."""
    try:
        return sig.encode_output(value)
    except Exception:  # an ill-typed output has no encoding: shown as it came
        return report_text(repr(value))


def _count_causes(res: SampleResult, part: str, reasons: Iterable[str]) -> None:
    counts = res.unknown_causes.setdefault(part, {})
    tally_causes(counts, reasons)
    if not counts:
        del res.unknown_causes[part]


def _finish_spec(props: tuple[tuple[str, int, Callable[[Verdict], Score]], ...],
                 verdicts: Any, res: SampleResult, part: str,
                 explain: Callable[[], str | None] = lambda: None,
                 missing_stage: str = "",
                 describe: Callable[[int], dict[str, Any]] | None = None) -> None:
    """Split one verdict list over consecutive properties (e.g. sound tests, then complete).

    ERROR verdicts (the spec raised) are FAIL and recorded in ``res.errors`` with the
    backend's message (``explain``) when it has one.
    """
    total = sum(n for _, n, _ in props)  # the dispatcher gives one verdict per test
    raised = sum(v is Verdict.ERROR for v in verdicts)
    _count_causes(res, part, [why for v, why in zip(verdicts, reasons_of(verdicts), strict=True)
                              if v is Verdict.UNKNOWN])
    if raised:
        why = explain()
        res.errors.setdefault(part, f"error: the specification raised, answered a non-boolean "
                                    f"or was refuted both ways on {raised} of {total} tests"
                                    + (f": {report_text(why)}" if why else ""))
    spent = [v is Verdict.UNKNOWN and spent_its_budget(why)
             for v, why in zip(verdicts, reasons_of(verdicts), strict=True)]
    at = 0
    for name, n, expect in props:
        scores = [expect(v) for v in verdicts[at: at + n]]
        tally = Tally.of(scores, spent[at: at + n])
        if describe is not None:
            _keep_counterexamples(res, name, [
                {**describe(at + j), "got": verdicts[at + j].value}
                for j, sc in enumerate(scores) if sc is Score.FAIL])
        at += n
        res.tallies[name] = tally
        res.metrics[name] = spec_property(tally)
        if tally.unknown and missing_stage:  # say per metric what VERINA would have run
            res.notes[name] = (f"{tally.unknown} of {n} tests undecided by decide; "
                               f"Plausible stage not run: {missing_stage}")


def _not_compiled(res: SampleResult, names: tuple[str, ...], state: bool | None) -> None:
    for name in names:
        res.tallies[name] = Tally()
        res.metrics[name] = FAILED if state is False else _unobservable(0)


def _compile_state(answer: Any, res: SampleResult, part: str) -> bool | None:
    """True: accepted; False: rejected (error recorded); None: the backend failed or
    could not tell (an inconclusive answer such as a timeout: never the candidate's FAIL)."""
    if not settled(answer, FailureKind.COMPILE):
        res.errors[part] = report_text(answer, 500)
        return None
    if answer is not None:
        res.errors[part] = answer if str(answer).startswith("compile") else f"compile: {answer}"
        return False
    return True


def _missing_stage(backend: Backend) -> str:
    """Why the backend's Plausible stage cannot run ("" when it can or has none)."""
    why = hint(backend, "plausible_unavailable")
    return why if isinstance(why, str) else ""


def _explainer(backend: Backend, task: Task, cand: Submission, which: str
               ) -> Callable[[], str | None]:
    """The backend's message for a spec that raised, if it keeps one (``spec_error``)."""
    def explain() -> str | None:
        ask = getattr(backend, "spec_error", None)
        if not callable(ask) or cand.spec is None:
            return None
        try:
            got = ask(task, cand.spec, which)
        except Exception:  # a missing explanation never changes a verdict
            return None
        return got if isinstance(got, str) and got else None
    return explain


def _precond_test(task: Task) -> Callable[[int], dict[str, Any]]:
    """Precondition test ``i`` (test inputs, then reject inputs) as a report shows it."""
    sig, n = task.signature, len(task.tests)

    def describe(i: int) -> dict[str, Any]:
        if i < n:
            return {"input": sig.encode_input(task.tests[i].input), "wanted": "holds"}
        return {"input": sig.encode_input(task.reject_inputs[i - n]), "wanted": "fails"}
    return describe


def _postcond_test(task: Task) -> Callable[[int], dict[str, Any]]:
    """Postcondition test ``i`` (expected pairs, then unexpected outputs)."""
    sig, n = task.signature, len(task.tests)
    wrong = [(t.input, u) for t in task.tests for u in t.unexpected]

    def describe(i: int) -> dict[str, Any]:
        inp, out, wanted = ((task.tests[i].input, task.tests[i].expected, "accepted") if i < n
                            else (*wrong[i - n], "rejected"))
        return {"input": sig.encode_input(inp), "output": sig.encode_output(out),
                "wanted": wanted}
    return describe


@dataclass
class BatchTimes:
    code_seconds: float = 0.0
    spec_seconds: float = 0.0


def evaluate_batch(
    backend: Backend,
    items: Sequence[tuple[Task, Submission]],
    *,
    skip_compile: bool = False,
    times: BatchTimes | None = None,
) -> list[SampleResult]:
    """Score many (task, candidate) pairs in a few batched backend calls.

    Code: compile every implementation (with the GT precondition), then run the
    compiled ones on their task's expected inputs. Specs: compile each whole
    spec; where that fails and both halves are present, compile the
    precondition alone (VERINA scores it without the postcondition); then one
    ``precondition_holds`` job per spec over test + reject inputs and one
    ``postcondition_holds`` job over expected + unexpected outputs.
    ``skip_compile`` trusts that every candidate was compile-checked already.
    """
    results = [SampleResult(c.task_id, c.sample) for _, c in items]
    times = times if times is not None else BatchTimes()

    t0 = time.perf_counter()
    code_ix = [i for i, (_, c) in enumerate(items) if c.impl is not None]
    if skip_compile:
        compiled = [None] * len(code_ix)
    else:
        compiled = dispatch.compile_many(backend, [(items[i][0], items[i][1].impl, None)
                                                   for i in code_ix])
    run_ix: list[int] = []
    for i, answer in zip(code_ix, compiled, strict=True):
        state = _compile_state(answer, results[i], "code")
        if state is True:
            run_ix.append(i)
        else:
            results[i].tallies["code"] = Tally()
            results[i].metrics["code"] = FAILED if state is False else _unobservable(0)
    with_tests = [i for i in run_ix if items[i][0].tests]
    # A backend that compares in its own language (Lean's `==`, as VERINA) is asked
    # for that; otherwise outputs come back as values compared here.
    compared = isinstance(backend, OutputTester)
    if compared:
        outs = dispatch.many(backend, "test_outputs", [
            (items[i][0], items[i][1].impl, [(t.input, t.expected) for t in items[i][0].tests])
            for i in with_tests])
    else:
        outs = dispatch.many(backend, "run", [(items[i][0], items[i][1].impl,
                                               [t.input for t in items[i][0].tests])
                                              for i in with_tests])
    got = dict(zip(with_tests, outs, strict=True))
    for i in run_ix:
        _finish_code(items[i][0], got.get(i, []), results[i], compared)
    times.code_seconds += time.perf_counter() - t0

    t0 = time.perf_counter()
    spec_ix = [i for i, (_, c) in enumerate(items) if c.has_precond or c.has_postcond]
    full_state: dict[int, bool | None] = {}
    pre_state: dict[int, bool | None] = {}
    if skip_compile:
        full_state = dict.fromkeys(spec_ix, True)
    else:
        answers = dispatch.compile_many(backend, [(items[i][0], None, items[i][1].spec)
                                                  for i in spec_ix])
        full_state = {i: _compile_state(a, results[i], "spec")
                      for i, a in zip(spec_ix, answers, strict=True)}
    retry = [i for i in spec_ix if full_state[i] is not True
             and items[i][1].has_precond and items[i][1].has_postcond]
    answers = dispatch.compile_many(backend, [
        (items[i][0], None, replace(items[i][1].spec, postcond=None, postcond_aux=""))
        for i in retry])
    for i, a in zip(retry, answers, strict=True):
        pre_state[i] = _compile_state(a, results[i], "precond_compile")

    pre_jobs: list[int] = []
    post_jobs: list[int] = []
    for i in spec_ix:
        task, cand = items[i]
        if cand.has_precond:
            state = pre_state.get(i, full_state[i])
            if state is True:
                pre_jobs.append(i)
            else:
                _not_compiled(results[i], ("precond_sound", "precond_complete"), state)
        if cand.has_postcond:
            if full_state[i] is True:
                post_jobs.append(i)
            else:
                _not_compiled(results[i], ("postcond_sound", "postcond_complete"),
                              full_state[i])
    pre_verdicts = dispatch.many(backend, "precondition_holds", [
        (items[i][0], items[i][1].spec,
         [t.input for t in items[i][0].tests] + list(items[i][0].reject_inputs))
        for i in pre_jobs])
    for i, vs in zip(pre_jobs, pre_verdicts, strict=True):
        task = items[i][0]
        _finish_spec((("precond_sound", len(task.tests), must_hold),
                      ("precond_complete", len(task.reject_inputs), must_fail)),
                     vs, results[i], "precond", _explainer(backend, task, items[i][1], "pre"),
                     _missing_stage(backend), _precond_test(task))
    post_verdicts = dispatch.many(backend, "postcondition_holds", [
        (items[i][0], items[i][1].spec,
         [(t.input, t.expected) for t in items[i][0].tests]
         + [(t.input, u) for t in items[i][0].tests for u in t.unexpected])
        for i in post_jobs])
    for i, vs in zip(post_jobs, post_verdicts, strict=True):
        task = items[i][0]
        _finish_spec((("postcond_complete", len(task.tests), must_hold),
                      ("postcond_sound", sum(len(t.unexpected) for t in task.tests), must_fail)),
                     vs, results[i], "postcond", _explainer(backend, task, items[i][1], "post"),
                     _missing_stage(backend), _postcond_test(task))
    times.spec_seconds += time.perf_counter() - t0

    for (task, _), r in zip(items, results, strict=True):
        _withhold(task, r)
        r.metrics = aggregate(r.metrics)
    return results


TEST_METRICS = ("code", "precond_sound", "postcond_complete", "postcond_sound")


def unscorable(task: Task) -> dict[str, str]:
    """Metrics of ``task`` that must not be scored as passing, and why: their rows
    are unknown (an unreadable rows file) or absent (no tests at all). Zero reject
    inputs in a readable file stay VERINA's PASS for precondition completeness."""
    out: dict[str, str] = {}
    tests_why = next((f"{f} unreadable: {why}" for f, why in sorted(task.unreadable.items())
                      if "reject" not in f), "")
    if not tests_why and not task.tests:
        tests_why = "the task has no tests"
    for m in TEST_METRICS if tests_why else ():
        out[m] = tests_why
    reject_why = next((f"{f} unreadable: {why}" for f, why in sorted(task.unreadable.items())
                       if "reject" in f), "")
    if reject_why:
        out["precond_complete"] = reject_why
    return out


def _withhold(task: Task, res: SampleResult) -> None:
    """No free PASS from rows nobody could read: such a metric is at best UNKNOWN."""
    for metric, why in unscorable(task).items():
        got = res.metrics.get(metric)
        if got is None:
            continue
        res.metrics[metric] = Bounded(
            Score.UNKNOWN if got.lower is Score.PASS else got.lower,
            Score.UNKNOWN if got.upper is Score.PASS else got.upper)
        res.errors.setdefault("suite", f"not scored: {why}")


def evaluate_candidate(backend: Backend, task: Task, cand: Submission) -> SampleResult:
    """All metrics this candidate provides the parts for, with both bounds."""
    return evaluate_batch(backend, [(task, cand)])[0]


@dataclass
class TaskResult:
    task_id: str
    samples: list[SampleResult] = field(default_factory=list)

    def counts(self, metric: str, bound: str) -> tuple[int, int]:
        """(n, c) for pass@k: samples that provide the metric, and those that pass."""
        have = [s for s in self.samples if metric in s.metrics]
        return len(have), sum(s.passed(metric, bound) for s in have)

    def verdict(self, metric: str, bound: str) -> str:
        """A compact per-task verdict: the sample-0 score, or ``c/n`` over several samples."""
        n, c = self.counts(metric, bound)
        if n == 0:
            return "-"
        if n == 1:
            return next(s for s in self.samples if metric in s.metrics).metrics[metric].get(
                bound).value
        return f"{c}/{n}"

    def to_json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "samples": [s.to_json() for s in self.samples]}


@dataclass
class EvaluationReport:
    """Everything one evaluation of one solutions set on one suite produced."""

    suite: str
    backend: str
    tasks: list[TaskResult]
    ks: tuple[int, ...] = (1,)
    wall_seconds: float = 0.0
    code_seconds: float = 0.0  # compiling and running candidate code (CodeGen)
    spec_seconds: float = 0.0  # compiling and checking candidate specs (SpecGen)
    issues: list[str] = field(default_factory=list)

    @property
    def metrics(self) -> list[str]:
        """Metrics that at least one sample was scored on, in VERINA's order."""
        seen = {m for t in self.tasks for s in t.samples for m in s.metrics}
        return [m for m in ALL_METRICS if m in seen]

    def score(self, metric: str, bound: str = "lower", k: int = 1) -> float | None:
        """Mean pass@k over the suite's tasks (a task with no sample for it counts 0)."""
        return mean_pass_at_k((t.counts(metric, bound) for t in self.tasks), k)

    def scores(self) -> dict[str, dict[str, dict[str, float | None]]]:
        return {
            m: {b: {f"pass@{k}": self.score(m, b, k) for k in self.ks} for b in BOUNDS}
            for m in self.metrics
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "backend": self.backend,
            "ks": list(self.ks),
            "scores": self.scores(),
            "wall_seconds": round(self.wall_seconds, 3),
            "code_seconds": round(self.code_seconds, 3),
            "spec_seconds": round(self.spec_seconds, 3),
            "tasks": [t.to_json() for t in self.tasks],
            "issues": list(self.issues),
        }


def task_groups(tasks: Sequence[Task], size: int) -> Iterator[list[Task]]:
    for at in range(0, len(tasks), max(1, size)):
        yield list(tasks[at: at + max(1, size)])


def evaluate(
    backend: Backend,
    tasks: Sequence[Task],
    candidates: Mapping[str, Sequence[Submission]],
    *,
    suite: str = "",
    ks: Iterable[int] = (1,),
    tasks_per_batch: int = 16,
    progress: Callable[[int], None] | None = None,
) -> EvaluationReport:
    """Score every candidate of every task; tasks without candidates score 0.

    Candidates of ``tasks_per_batch`` tasks share backend calls (a batching
    backend such as Lean then needs a few files per group, not per candidate);
    ``progress`` gets the number of tasks done after each group.
    """
    t0 = time.perf_counter()
    times = BatchTimes()
    results: list[TaskResult] = []
    for group in task_groups(tasks, tasks_per_batch):
        items = [(t, c) for t in group for c in candidates.get(t.id, ())]
        scored = evaluate_batch(backend, items, times=times)
        by_task: dict[str, list[SampleResult]] = {}
        for r in scored:
            by_task.setdefault(r.task_id, []).append(r)
        results.extend(TaskResult(t.id, by_task.get(t.id, [])) for t in group)
        if progress is not None:
            progress(len(group))
    report = EvaluationReport(suite, getattr(backend, "name", "?"), results,
                              tuple(sorted(set(ks))))
    for task in tasks:  # a task whose rows cannot be read is an issue of that task
        for metric_why in sorted(set(unscorable(task).values())):
            report.issues.append(f"{task.id}: not scored as passing: {metric_why}")
    report.wall_seconds = time.perf_counter() - t0
    report.code_seconds, report.spec_seconds = times.code_seconds, times.spec_seconds
    return report
