"""Score candidates (model samples, mutants, the ground truth) on a suite.

Everything goes through the :class:`~veriscale.backends.base.Backend` protocol,
batched per candidate: one compile and one ``run`` call for code; one or two
compiles, one ``precondition_holds`` call (test and reject inputs together) and
one ``postcondition_holds`` call (expected and unexpected outputs together) for a
specification. Scoring rules live in :mod:`veriscale.evaluation.scoring`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from veriscale.backends.base import Backend, Implementation, Spec
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
    spec_property,
)
from veriscale.evaluation.solutions import Candidate

BOUNDS = ("lower", "upper")


@dataclass
class SampleResult:
    """Verdicts of one sample of one task."""

    task_id: str
    sample: int
    metrics: dict[str, Bounded] = field(default_factory=dict)
    tallies: dict[str, Tally] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # part -> compile / backend error
    code_seconds: float = 0.0
    spec_seconds: float = 0.0

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
            "code_seconds": round(self.code_seconds, 4),
            "spec_seconds": round(self.spec_seconds, 4),
        }


def _guard(errors: dict[str, str], part: str, fn: Callable[[], Any]) -> Any:
    """Call the backend; a raising backend makes this part unobservable, not fatal."""
    try:
        return fn()
    except Exception as exc:
        errors[part] = f"backend: {type(exc).__name__}: {exc}"
        return None


def score_code(backend: Backend, task: Task, impl: Implementation,
               result: SampleResult) -> None:
    """CodeGen: compile with the GT precondition, then every expected pair must hold."""
    n = len(task.tests)
    err = _guard(result.errors, "code", lambda: backend.compile(task, impl=impl))
    if "code" in result.errors:  # the backend itself failed: we know nothing
        result.tallies["code"] = Tally(unknown=n)
        result.metrics["code"] = code_property(Tally(unknown=max(n, 1)))
        return
    if err is not None:
        result.errors["code"] = f"compile: {err}"
        result.tallies["code"] = Tally()
        result.metrics["code"] = FAILED
        return
    outcomes = []
    if n:
        outcomes = _guard(result.errors, "code",
                          lambda: backend.run(task, impl, [t.input for t in task.tests]))
    if outcomes is None or len(outcomes) != n:
        result.errors.setdefault("code", f"backend returned {len(outcomes or [])} of {n} outcomes")
        tally = Tally(unknown=n)
    else:
        tally = Tally.of(code_tests(outcomes, [t.expected for t in task.tests],
                                    task.signature.return_type))
    result.tallies["code"] = tally
    result.metrics["code"] = code_property(tally)


def _compile_spec(backend: Backend, task: Task, spec: Spec,
                  errors: dict[str, str], part: str) -> bool | None:
    """True when accepted, False when rejected (error recorded), None when the backend failed."""
    err = _guard(errors, part, lambda: backend.compile(task, spec=spec))
    if part in errors:
        return None
    if err is not None:
        errors[part] = f"compile: {err}"
        return False
    return True


def _unobservable(n: int) -> Bounded:
    return spec_property(Tally(unknown=max(n, 1)))


def score_precond(backend: Backend, task: Task, spec: Spec, compiled: bool | None,
                  result: SampleResult) -> None:
    """Soundness on test inputs (must hold), completeness on reject inputs (must not)."""
    tests = [t.input for t in task.tests]
    rejects = list(task.reject_inputs)
    if compiled is not True:
        for prop, n in (("precond_sound", len(tests)), ("precond_complete", len(rejects))):
            result.tallies[prop] = Tally()
            result.metrics[prop] = FAILED if compiled is False else _unobservable(n)
        return
    verdicts = []
    if tests or rejects:
        verdicts = _guard(result.errors, "precond",
                          lambda: backend.precondition_holds(task, spec, tests + rejects))
    if verdicts is None or len(verdicts) != len(tests) + len(rejects):
        result.errors.setdefault("precond", "backend returned a wrong number of verdicts")
        for prop, n in (("precond_sound", len(tests)), ("precond_complete", len(rejects))):
            result.tallies[prop] = Tally(unknown=n)
            result.metrics[prop] = _unobservable(n)
        return
    sound = Tally.of(must_hold(v) for v in verdicts[: len(tests)])
    complete = Tally.of(must_fail(v) for v in verdicts[len(tests):])
    result.tallies["precond_sound"], result.tallies["precond_complete"] = sound, complete
    result.metrics["precond_sound"] = spec_property(sound)
    result.metrics["precond_complete"] = spec_property(complete)


def score_postcond(backend: Backend, task: Task, spec: Spec, compiled: bool | None,
                   result: SampleResult) -> None:
    """Completeness on expected outputs (must accept), soundness on unexpected ones (must reject)."""
    accept = [(t.input, t.expected) for t in task.tests]
    reject = [(t.input, u) for t in task.tests for u in t.unexpected]
    if compiled is not True:
        for prop, n in (("postcond_complete", len(accept)), ("postcond_sound", len(reject))):
            result.tallies[prop] = Tally()
            result.metrics[prop] = FAILED if compiled is False else _unobservable(n)
        return
    verdicts = []
    if accept or reject:
        verdicts = _guard(result.errors, "postcond",
                          lambda: backend.postcondition_holds(task, spec, accept + reject))
    if verdicts is None or len(verdicts) != len(accept) + len(reject):
        result.errors.setdefault("postcond", "backend returned a wrong number of verdicts")
        for prop, n in (("postcond_complete", len(accept)), ("postcond_sound", len(reject))):
            result.tallies[prop] = Tally(unknown=n)
            result.metrics[prop] = _unobservable(n)
        return
    complete = Tally.of(must_hold(v) for v in verdicts[: len(accept)])
    sound = Tally.of(must_fail(v) for v in verdicts[len(accept):])
    result.tallies["postcond_complete"], result.tallies["postcond_sound"] = complete, sound
    result.metrics["postcond_complete"] = spec_property(complete)
    result.metrics["postcond_sound"] = spec_property(sound)


def evaluate_candidate(backend: Backend, task: Task, cand: Candidate) -> SampleResult:
    """All metrics this candidate provides the parts for, with both bounds."""
    result = SampleResult(cand.task_id, cand.sample)
    if cand.impl is not None:
        t0 = time.perf_counter()
        score_code(backend, task, cand.impl, result)
        result.code_seconds = time.perf_counter() - t0
    spec = cand.spec
    if spec is not None and (spec.precond is not None or spec.postcond is not None):
        t0 = time.perf_counter()
        # The whole spec first (one compile in the common case); when it fails and both
        # halves are present, the precondition alone may still be scorable (VERINA
        # evaluates the precondition without the postcondition).
        full = _compile_spec(backend, task, spec, result.errors, "spec")
        if spec.precond is not None:
            pre_ok = full
            if full is not True and spec.postcond is not None:
                pre_ok = _compile_spec(backend, task, replace(spec, postcond=None, postcond_aux=""),
                                       result.errors, "precond_compile")
            score_precond(backend, task, spec, pre_ok, result)
        if spec.postcond is not None:
            score_postcond(backend, task, spec, full, result)
        result.spec_seconds = time.perf_counter() - t0
    result.metrics = aggregate(result.metrics)
    return result


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
    issues: list[str] = field(default_factory=list)

    @property
    def metrics(self) -> list[str]:
        """Metrics that at least one sample was scored on, in VERINA's order."""
        seen = {m for t in self.tasks for s in t.samples for m in s.metrics}
        return [m for m in ALL_METRICS if m in seen]

    @property
    def code_seconds(self) -> float:
        return sum(s.code_seconds for t in self.tasks for s in t.samples)

    @property
    def spec_seconds(self) -> float:
        return sum(s.spec_seconds for t in self.tasks for s in t.samples)

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


def evaluate(
    backend: Backend,
    tasks: Sequence[Task],
    candidates: Mapping[str, Sequence[Candidate]],
    *,
    suite: str = "",
    ks: Iterable[int] = (1,),
    progress: Callable[[str], None] | None = None,
) -> EvaluationReport:
    """Score every candidate of every task; tasks without candidates score 0."""
    t0 = time.perf_counter()
    results: list[TaskResult] = []
    for task in tasks:
        tr = TaskResult(task.id)
        for cand in candidates.get(task.id, ()):
            tr.samples.append(evaluate_candidate(backend, task, cand))
        results.append(tr)
        if progress is not None:
            progress(task.id)
    report = EvaluationReport(suite, getattr(backend, "name", "?"), results,
                              tuple(sorted(set(ks))))
    report.wall_seconds = time.perf_counter() - t0
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
        """Not PASS even under the upper bound: the suite has evidence against it."""
        return self.score.upper is not Score.PASS


@dataclass
class SuitePower:
    """One suite's discriminative power over the shared pool of flawed candidates."""

    suite: str
    verdicts: list[MutantVerdict] = field(default_factory=list)
    gt_problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    code_seconds: float = 0.0
    spec_seconds: float = 0.0

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
            "undetected": [v.mutant_id for v in self.verdicts if not v.detected],
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
    nothing about the suite: it is discarded with its reason.
    """
    from veriscale.evaluation.mutants import task_mutants

    keep: list[Any] = []
    discarded: list[str] = []
    for task in tasks:
        try:
            pool = task_mutants(task, max_per_kind, seed)
        except Exception as exc:  # one bad task never stops the run
            discarded.append(f"{task.id}: generation failed: {exc}")
            continue
        for m in pool:
            c = m.candidate
            try:
                err = backend.compile(task, impl=c.impl) if c.impl is not None else \
                    backend.compile(task, spec=c.spec)
            except Exception as exc:
                err = f"backend: {exc}"
            if err is None:
                keep.append(m)
            else:
                discarded.append(f"{m.id}: {str(err).splitlines()[0][:160] if err else err}")
    return keep, discarded


def discriminative_power(
    backend: Backend,
    suites: Sequence[tuple[str, Sequence[Task]]],
    *,
    max_per_kind: int = 20,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> PowerReport:
    """Score the same flawed candidates (from the first suite's GT) and the GT on each suite."""
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
    first = list(suites[0][1])
    pool, discarded = usable_mutants(backend, first, max_per_kind, seed)
    report = PowerReport([], len(pool) + len(discarded), discarded, seed, max_per_kind,
                         getattr(backend, "name", "?"))
    for name, tasks in suites:
        sp = SuitePower(name)
        t0 = time.perf_counter()
        by_id = {t.id: t for t in tasks}
        for task in tasks:
            gt = evaluate_candidate(backend, task, gt_candidate(task))
            sp.code_seconds += gt.code_seconds
            sp.spec_seconds += gt.spec_seconds
            for metric in ("code", "precond_sound_complete", "postcond_sound_complete"):
                got = gt.metrics.get(metric)
                if got is None or got.lower is not Score.PASS:
                    tallies = {k: v.to_json() for k, v in gt.tallies.items()}
                    err = "; ".join(f"{k}: {v[:200]}" for k, v in gt.errors.items())
                    sp.gt_problems.append(
                        f"{task.id}: ground truth scores {got.lower.value if got else 'nothing'}"
                        f" on {metric} (tests {tallies}{'; ' + err if err else ''})")
        for m in pool:
            r = evaluate_candidate(backend, by_id[m.task_id], m.candidate)
            sp.code_seconds += r.code_seconds
            sp.spec_seconds += r.spec_seconds
            score = r.metrics.get(m.metric, Bounded.exact(Score.UNKNOWN))
            sp.verdicts.append(MutantVerdict(m.id, m.task_id, m.kind, m.operator, score))
        sp.seconds = time.perf_counter() - t0
        report.suites.append(sp)
        if progress is not None:
            progress(name)
    return report
