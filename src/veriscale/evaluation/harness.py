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
    if answer is not None and FailureKind.of_error(str(answer), FailureKind.COMPILE).inconclusive:
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


def _groups(tasks: Sequence[Task], size: int) -> Iterator[list[Task]]:
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
    for group in _groups(tasks, tasks_per_batch):
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


# --------------------------------------------------------------------------- discriminative power


@dataclass(frozen=True)
class MutantVerdict:
    """How one suite scored one flawed candidate on the metric that should reject it."""

    mutant_id: str
    task_id: str
    kind: str
    operator: str
    score: Bounded

    @property
    def detected(self) -> bool:
        """Not PASS under the lower bound (unknown counts as not passing)."""
        return self.score.lower is not Score.PASS

    @property
    def detected_definitely(self) -> bool:
        """FAIL even under the upper bound: the suite has evidence against it. A code
        UNKNOWN (a timeout, say) keeps both bounds UNKNOWN and is no such evidence."""
        return self.score.upper is Score.FAIL


@dataclass
class SuitePower:
    """One suite's discriminative power over the shared pool of flawed candidates."""

    suite: str
    verdicts: list[MutantVerdict] = field(default_factory=list)
    gt_problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    code_seconds: float = 0.0
    spec_seconds: float = 0.0
    cut_by_timeouts: int = 0  # mutants whose remaining tests stayed UNKNOWN after timeouts

    def rates(self) -> dict[str, dict[str, float | int]]:
        """Per kind (and ``all``): total, detected (lower), detected (upper), shares."""
        out: dict[str, dict[str, float | int]] = {}
        kinds = sorted({v.kind for v in self.verdicts}, key=("code", "precond", "postcond").index)
        for kind in [*kinds, "all"]:
            vs = [v for v in self.verdicts if kind in ("all", v.kind)]
            n = len(vs)
            d = sum(v.detected for v in vs)
            dd = sum(v.detected_definitely for v in vs)
            out[kind] = {"mutants": n, "detected": d, "detected_definitely": dd,
                         "rate": d / n if n else 0.0, "rate_definite": dd / n if n else 0.0}
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "rates": self.rates(),
            "gt_problems": list(self.gt_problems),
            "seconds": round(self.seconds, 3),
            "code_seconds": round(self.code_seconds, 3),
            "spec_seconds": round(self.spec_seconds, 3),
            "cut_by_timeouts": self.cut_by_timeouts,
            "undetected": [v.mutant_id for v in self.verdicts if not v.detected],
            "not_definitely_detected": [v.mutant_id for v in self.verdicts
                                        if not v.detected_definitely],
        }


@dataclass
class PowerReport:
    suites: list[SuitePower]
    generated: int = 0
    discarded: list[str] = field(default_factory=list)  # mutant id: reason
    seed: int = 0
    max_per_kind: int = 0
    backend: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "seed": self.seed,
            "max_per_kind": self.max_per_kind,
            "mutants_generated": self.generated,
            "mutants_discarded": self.discarded,
            "suites": [s.to_json() for s in self.suites],
            "caveat": "equivalent mutants (indistinguishable from the ground truth) count as "
                      "not detected, so detection rates are lower bounds on true power",
        }


def usable_mutants(backend: Backend, tasks: Sequence[Task], max_per_kind: int, seed: int,
                   ) -> tuple[list[Any], list[str]]:
    """The mutant pool of ``tasks`` minus those the backend refuses to compile.

    A mutant that does not build would be "detected" by any suite, so it says
    nothing about the suite: it is discarded with its reason. One batched
    compile call checks the whole pool.
    """
    from veriscale.evaluation.mutants import task_mutants

    pool: list[tuple[Task, Any]] = []
    discarded: list[str] = []
    for task in tasks:
        try:
            pool.extend((task, m) for m in task_mutants(task, max_per_kind, seed))
        except Exception as exc:  # one bad task never stops the run
            discarded.append(f"{task.id}: generation failed: {exc}")
    answers = dispatch.compile_many(backend, [(t, m.candidate.impl, m.candidate.spec)
                                              for t, m in pool])
    keep = []
    for (_, m), err in zip(pool, answers, strict=True):
        if err is None:
            keep.append(m)
        else:
            discarded.append(f"{m.id}: {(str(err).splitlines() or [''])[0][:160]}")
    return keep, discarded


def _gt_problems(task: Task, gt: SampleResult) -> list[str]:
    out = []
    for metric in ("code", "precond_sound_complete", "postcond_sound_complete"):
        got = gt.metrics.get(metric)
        if got is None or got.lower is not Score.PASS:
            tallies = {k: v.to_json() for k, v in gt.tallies.items()}
            err = "; ".join(f"{k}: {v[:200]}" for k, v in gt.errors.items())
            out.append(f"{task.id}: ground truth scores {got.lower.value if got else 'nothing'}"
                       f" on {metric} (tests {tallies}{'; ' + err if err else ''})")
    return out


MUTANT_PROPERTIES = {
    "code": ("code",),
    "precond": ("precond_sound", "precond_complete"),
    "postcond": ("postcond_sound", "postcond_complete"),
}
EARLY_STOP_ROUNDS = (1, 4, 16, 64)
"""Tests per round when scoring mutants: a mutant leaves at its first definite FAIL,
so most mutants cost a test or a few; the last round takes every remaining test."""


def round_slices(n: int, sizes: Sequence[int] = EARLY_STOP_ROUNDS) -> list[tuple[int, int]]:
    """Consecutive ``(start, end)`` slices of ``n`` items: ``sizes``, then the rest."""
    out: list[tuple[int, int]] = []
    at = 0
    for size in sizes:
        if at >= n:
            break
        out.append((at, min(n, at + max(1, size))))
        at = out[-1][1]
    if at < n:
        out.append((at, n))
    return out


def _slice(task: Task, tests: tuple[int, int], rejects: tuple[int, int]) -> Task:
    return replace(task, tests=task.tests[tests[0]:tests[1]],
                   reject_inputs=task.reject_inputs[rejects[0]:rejects[1]])


DEFAULT_MUTANT_TIMEOUTS = 2
"""Timed-out tests after which a mutant's remaining tests are UNKNOWN instead of run.

A looping mutant would otherwise pay the per-test time limit on every test of
a large suite. A timeout is inconclusive (UNKNOWN, never the mutant's FAIL), so
the lower-bound verdict ("detected") is already settled by the first one; the
cut can only hide a later definite FAIL, so the definite share of a cut mutant
is a lower bound (the report counts cut mutants)."""


def score_mutants(
    backend: Backend,
    items: Sequence[tuple[Task, Any]],
    *,
    times: BatchTimes | None = None,
    early_stop: bool = True,
    rounds: Sequence[int] = EARLY_STOP_ROUNDS,
    max_timeouts: int = DEFAULT_MUTANT_TIMEOUTS,
    cut: list[int] | None = None,
) -> list[Bounded]:
    """Each mutant's score on the metric that must reject it, stopping at its first FAIL.

    One definite FAIL settles both bounds of the metric (FAIL is final under
    ``combine``), so the tests a mutant would still run cannot change its
    verdict; a mutant without a FAIL runs every test, so PASS and UNKNOWN are
    exactly what the whole suite gives. Tests run in rounds of growing size,
    each round one batched call for all mutants still undecided.

    With ``early_stop``, a mutant whose tests timed out ``max_timeouts`` times
    (0: never) stops too: its remaining tests count as UNKNOWN, which keeps its
    lower bound exact (:data:`DEFAULT_MUTANT_TIMEOUTS`). The indices of such
    mutants are appended to ``cut``.
    """
    sizes = rounds if early_stop else ()
    tallies: list[dict[str, Tally]] = [{} for _ in items]
    timeouts = [0] * len(items)
    schedules = [_schedule(len(t.tests), len(t.reject_inputs), sizes) for t, _ in items]
    live = list(range(len(items)))
    step = 0
    while live:
        batch: list[int] = [i for i in live if step < len(schedules[i])]
        if not batch:
            break
        sliced = [(_slice(items[i][0], *schedules[i][step]), items[i][1].candidate)
                  for i in batch]
        scored = evaluate_batch(backend, sliced, skip_compile=True, times=times)
        for i, r in zip(batch, scored, strict=True):
            timeouts[i] += sum(r.timeouts.values())
            for name in MUTANT_PROPERTIES[items[i][1].kind]:
                got = r.tallies.get(name)
                if got is not None:
                    tallies[i][name] = tallies[i].get(name, Tally()) + got
        live = []
        for i in batch:
            if any(t.failed for t in tallies[i].values()):
                continue
            if early_stop and max_timeouts > 0 and timeouts[i] >= max_timeouts \
                    and step + 1 < len(schedules[i]):
                _rest_unknown(items[i], tallies[i])
                if cut is not None:
                    cut.append(i)
                continue
            live.append(i)
        step += 1
    scores: list[Bounded] = []
    for (_, m), tally in zip(items, tallies, strict=True):
        metrics: dict[str, Bounded] = {}
        for name in MUTANT_PROPERTIES[m.kind]:
            t = tally.get(name, Tally())
            metrics[name] = code_property(t) if name == "code" else spec_property(t)
        scores.append(aggregate(metrics).get(m.metric, Bounded.exact(Score.UNKNOWN)))
    return scores


def _rest_unknown(item: tuple[Task, Any], tally: dict[str, Tally]) -> None:
    """Count the tests a cut mutant did not run as UNKNOWN (timeouts are code's only)."""
    task, m = item
    totals = {"code": len(task.tests), "precond_sound": len(task.tests),
              "precond_complete": len(task.reject_inputs), "postcond_complete": len(task.tests),
              "postcond_sound": sum(len(t.unexpected) for t in task.tests)}
    for name in MUTANT_PROPERTIES[m.kind]:
        have = tally.get(name, Tally())
        left = totals[name] - have.total
        if left > 0:
            tally[name] = have + Tally(unknown=left)


def _rounds_for(backend: Backend) -> Sequence[int]:
    """Fewer, larger rounds where each round costs process starts (Lean files)."""
    return (16,) if callable(getattr(backend, "evaluate_many", None)) else EARLY_STOP_ROUNDS


def _schedule(tests: int, rejects: int, sizes: Sequence[int]
              ) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Per round, the slice of tests and the slice of reject inputs (at least one round)."""
    a, b = round_slices(tests, sizes), round_slices(rejects, sizes)
    n = max(len(a), len(b), 1)
    a += [(tests, tests)] * (n - len(a))
    b += [(rejects, rejects)] * (n - len(b))
    return list(zip(a, b, strict=True))



def discriminative_power(
    backend: Backend,
    suites: Sequence[tuple[str, Sequence[Task]]],
    *,
    max_per_kind: int = 20,
    seed: int = 0,
    tasks_per_batch: int | None = None,
    progress: Callable[[str], None] | None = None,
    early_stop: bool = True,
    max_timeouts: int = DEFAULT_MUTANT_TIMEOUTS,
) -> PowerReport:
    """Score the same flawed candidates (from the first suite's GT) and the GT on each suite.

    Mutants are compile-checked once; on each suite they are scored without
    recompiling (stopping at each one's first definite FAIL, or after ``max_timeouts``
    timed-out tests, :func:`score_mutants`),
    the GT candidates (the control) with compiling and on every test.

    By default every task of a suite shares each round's backend calls: a
    round of a few tasks leaves a prover file or two, and the other cores idle.
    ``tasks_per_batch`` bounds a group where memory must be.
    """
    from veriscale.evaluation.mutants import gt_candidate

    if not suites:
        raise ValueError("no suites given")
    ids = [sorted(t.id for t in tasks) for _, tasks in suites]
    for (name, _), these in zip(suites[1:], ids[1:], strict=True):
        if these != ids[0]:
            a, b = set(ids[0]), set(these)
            raise ValueError(
                f"suite {name} has other task ids than {suites[0][0]}: "
                f"missing {sorted(a - b)[:5]}, extra {sorted(b - a)[:5]}")
    pool, discarded = usable_mutants(backend, list(suites[0][1]), max_per_kind, seed)
    report = PowerReport([], len(pool) + len(discarded), discarded, seed, max_per_kind,
                         getattr(backend, "name", "?"))
    by_task: dict[str, list[Any]] = {}
    for m in pool:
        by_task.setdefault(m.task_id, []).append(m)
    for name, tasks in suites:
        sp = SuitePower(name)
        times = BatchTimes()
        t0 = time.perf_counter()
        for group in _groups(tasks, tasks_per_batch or len(tasks)):
            gts = evaluate_batch(backend, [(t, gt_candidate(t)) for t in group], times=times)
            for task, gt in zip(group, gts, strict=True):
                sp.gt_problems.extend(_gt_problems(task, gt))
            ms = [(t, m) for t in group for m in by_task.get(t.id, [])]
            cut: list[int] = []
            scores = score_mutants(backend, ms, times=times, early_stop=early_stop,
                                   rounds=_rounds_for(backend), max_timeouts=max_timeouts,
                                   cut=cut)
            sp.cut_by_timeouts += len(cut)
            for (_, m), score in zip(ms, scores, strict=True):
                sp.verdicts.append(MutantVerdict(m.id, m.task_id, m.kind, m.operator, score))
        sp.seconds = time.perf_counter() - t0
        sp.code_seconds, sp.spec_seconds = times.code_seconds, times.spec_seconds
        report.suites.append(sp)
        if progress is not None:
            progress(name)
    return report
