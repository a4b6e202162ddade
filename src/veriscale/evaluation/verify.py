"""Re-check a dataset's own suite against its own ground truth.

A suite is only as good as its agreement with the GT specification: every test
input must satisfy the GT precondition, every reject input violate it, every
expected output satisfy the GT postcondition, every unexpected output violate
it, and the reference implementation must reproduce every expected output.
Everything goes through one dispatched batch (``backends.dispatch``), so a Lean
backend can answer all checks of many tasks from one Lean file; no backend is
named here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriscale.backends import dispatch
from veriscale.backends.base import (
    Backend,
    Classification,
    FailureKind,
    Label,
    Outcome,
    OutputTester,
    Verdict,
    reasons_of,
)
from veriscale.backends.causes import tally_causes
from veriscale.backends.language import show_value
from veriscale.benchmark.model import LoadIssue, Task
from veriscale.values import ValueType, values_equal

KINDS = (
    "precond_accepts_test_input",
    "precond_rejects_reject_input",
    "postcond_accepts_expected",
    "postcond_rejects_unexpected",
    "reference_reproduces_expected",
)

AGREE, DISAGREE, UNKNOWN = "agree", "disagree", "unknown"


@dataclass
class Counts:
    agree: int = 0
    disagree: int = 0
    unknown: int = 0

    def add(self, verdict: str) -> None:
        setattr(self, verdict, getattr(self, verdict) + 1)

    def merge(self, other: Counts) -> None:
        self.agree += other.agree
        self.disagree += other.disagree
        self.unknown += other.unknown

    def to_json(self) -> dict[str, int]:
        return {"agree": self.agree, "disagree": self.disagree, "unknown": self.unknown}


@dataclass(frozen=True)
class Finding:
    """One disagreement: which task, check, item (``test.json[3]``...) and why."""

    task: str
    kind: str
    item: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"task": self.task, "kind": self.kind, "item": self.item, "detail": self.detail}


@dataclass
class VerifyReport:
    tasks: int = 0
    checks: dict[str, Counts] = field(default_factory=lambda: {k: Counts() for k in KINDS})
    per_task: dict[str, dict[str, Counts]] = field(default_factory=dict)
    processes: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    load_issues: list[LoadIssue] = field(default_factory=list)
    # per check kind: why its unknowns stayed unknown (backends.causes), with counts
    unknown_causes: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def disagreements(self) -> int:
        return sum(c.disagree for c in self.checks.values())

    def record(self, task: str, kind: str, verdict: str, item: str = "", detail: str = "") -> None:
        self.checks[kind].add(verdict)
        self.per_task.setdefault(task, {k: Counts() for k in KINDS})[kind].add(verdict)
        if verdict == DISAGREE:
            self.findings.append(Finding(task, kind, item, detail))
        elif verdict == UNKNOWN:
            tally_causes(self.unknown_causes.setdefault(kind, {}), [detail])

    def causes_by_kind(self) -> dict[str, dict[str, int]]:
        """Each kind's unknown causes, the most frequent first."""
        return {k: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
                for k, c in self.unknown_causes.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "checks": {k: c.to_json() for k, c in self.checks.items()},
            "per_task": {t: {k: c.to_json() for k, c in kinds.items()}
                         for t, kinds in self.per_task.items()},
            "oracle_processes": self.processes,  # Lean files, coqc runs, sandbox workers
            "seconds": round(self.seconds, 3),
            "unknown_causes": self.causes_by_kind(),
            "disagreements": [f.to_json() for f in self.findings],
            "load_issues": [str(i) for i in self.load_issues],
        }


# ---------------------------------------------------------------------------
# verdict rules (pure)


def precond_verdict(c: Classification, want: Label) -> tuple[str, str]:
    if c.label == Label.UNKNOWN:
        return UNKNOWN, c.detail
    if c.label == want:
        return AGREE, ""
    return DISAGREE, f"GT precondition says {c.label.value} ({c.stage}) {c.detail}".strip()


def postcond_verdict(v: Verdict, want: bool, reason: str = "") -> tuple[str, str]:
    """``reason``: why an UNKNOWN is unknown, as the backend read it (:class:`Verdicts`)."""
    if v in (Verdict.UNKNOWN, Verdict.PLAUSIBLY_TRUE, Verdict.PLAUSIBLY_FALSE,
             Verdict.UNREFUTED):  # no proof either way
        return UNKNOWN, v.value if v != Verdict.UNKNOWN else reason
    if v == Verdict.ERROR:
        return DISAGREE, "GT postcondition raised or answered a non-boolean"
    if (v == Verdict.TRUE) == want:
        return AGREE, ""
    return DISAGREE, f"GT postcondition says {v.value}"


def _same(t: ValueType, a: Any, b: Any) -> bool:
    if values_equal(t, a, b):
        return True
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def reference_verdict(t: ValueType, o: Outcome, expected: Any, compared: bool = False,
                      show: Callable[[Any], str] = repr) -> tuple[str, str]:
    """``compared``: ``o`` is the backend's own comparison (``test_outputs``: Lean's
    ``==``, as VERINA's code tests), its value whether the output equals ``expected``.
    ``show`` writes a value in the suite's language."""
    if o.ok and compared:
        if o.value is True:
            return AGREE, ""
        return DISAGREE, f"reference output is not == {show(expected)} (compared in the backend)"
    if o.ok:
        if _same(t, o.value, expected):
            return AGREE, ""
        return DISAGREE, f"reference returned {show(o.value)}, suite expects {show(expected)}"
    if o.inconclusive:  # the backend could not run it: says nothing about the suite
        return UNKNOWN, o.error
    if o.kind is FailureKind.COMPILE:
        # The ground truth's own code did not build with this prover (on the full VERINA
        # Lean run: references written for an older Lean's API): the checker cannot run
        # it, which says nothing about the suite's row. A candidate's compile error is
        # its FAIL; the reference's is the checker's UNKNOWN.
        return UNKNOWN, f"the reference does not compile here: {o.error}"
    return DISAGREE, f"reference failed: {o.error}"


# ---------------------------------------------------------------------------
# driver


def _answer(backend: Backend, cls_jobs: list[tuple[Any, ...]], post_jobs: list[tuple[Any, ...]],
            run_jobs: list[tuple[Any, ...]]) -> tuple[list[Any], list[Any], list[Any]]:
    """All three operations for all tasks in one dispatched batch (one Lean file for
    everything when the backend batches)."""
    # A backend that compares in its own language (Lean's `==`, VERINA's code test)
    # is asked that: on WASM a stuck `==` still has the kernel round, a stuck value not.
    run_op = "test_outputs" if isinstance(backend, OutputTester) else "run"
    requests = ([("classify", j) for j in cls_jobs]
                + [("postcondition_holds", j) for j in post_jobs]
                + [(run_op, j) for j in run_jobs])
    answers = dispatch.answer(backend, requests)
    n1, n2 = len(cls_jobs), len(cls_jobs) + len(post_jobs)
    return answers[:n1], answers[n1:n2], answers[n2:]


def verify_tasks(backend: Backend, tasks: Sequence[Task]) -> VerifyReport:
    """Run all five checks for every task, batched across tasks."""
    start = time.perf_counter()
    report = VerifyReport(tasks=len(tasks))
    for task in tasks:
        report.per_task.setdefault(task.id, {k: Counts() for k in KINDS})

    cls_jobs: list[tuple[Any, ...]] = [
        (task, [t.input for t in task.tests] + list(task.reject_inputs)) for task in tasks]
    post_jobs: list[tuple[Any, ...]] = []
    pair_labels: list[list[tuple[str, str, bool]]] = []
    for task in tasks:
        pairs, labels = [], []
        for i, t in enumerate(task.tests):
            pairs.append((t.input, t.expected))
            labels.append((KINDS[2], f"test.json[{i}].expected", True))
            for j, u in enumerate(t.unexpected):
                pairs.append((t.input, u))
                labels.append((KINDS[3], f"test.json[{i}].unexpected[{j}]", False))
        post_jobs.append((task, None, pairs))
        pair_labels.append(labels)
    compared = isinstance(backend, OutputTester)
    run_jobs: list[tuple[Any, ...]] = [
        (task, None, [(t.input, t.expected) if compared else t.input for t in task.tests])
        for task in tasks]
    classified, verdicts, outcomes = _answer(backend, cls_jobs, post_jobs, run_jobs)

    for task, labels in zip(tasks, classified, strict=True):
        n = len(task.tests)
        for i, c in enumerate(labels):
            if i < n:
                verdict, why = precond_verdict(c, Label.EXPECTED)
                report.record(task.id, KINDS[0], verdict, f"test.json[{i}].input", why)
            else:
                verdict, why = precond_verdict(c, Label.UNEXPECTED)
                report.record(task.id, KINDS[1], verdict, f"reject_inputs.json[{i - n}]", why)
    for task, vs, labels in zip(tasks, verdicts, pair_labels, strict=True):
        for v, reason, (kind, item, want) in zip(vs, reasons_of(vs), labels, strict=True):
            verdict, why = postcond_verdict(v, want, reason)
            report.record(task.id, kind, verdict, item, why)
    for task, outs in zip(tasks, outcomes, strict=True):
        for i, (t, o) in enumerate(zip(task.tests, outs, strict=True)):
            verdict, why = reference_verdict(
                task.signature.return_type, o, t.expected, compared,
                show=lambda v, task=task: show_value(task, task.signature.return_type, v))
            report.record(task.id, KINDS[4], verdict, f"test.json[{i}].expected", why)

    report.processes = backend.stats.processes
    report.seconds = time.perf_counter() - start
    return report


def verify_dataset(root: Path, backend_name: str, task_ids: Sequence[str] | None = None,
                   cache: Any = None, **backend_options: Any) -> VerifyReport:
    """Load ``root`` (issues are kept, not fatal) and verify it with the named backend.

    Raises :class:`veriscale.backends.datasets.NotADataset` for a folder with no tasks.
    """
    from veriscale.backends.datasets import load_benchmark
    from veriscale.backends.registry import make_backend

    tasks, issues = load_benchmark(Path(root), list(task_ids) if task_ids else None)
    backend = make_backend(backend_name, **backend_options)
    try:
        if cache is not None:  # an OracleCache: answers reused across invocations
            from veriscale.backends.cache import with_cache

            report = verify_tasks(with_cache(backend, cache), tasks)
        else:
            report = verify_tasks(backend, tasks)
    finally:
        backend.close()
    report.load_issues = list(issues)
    return report
