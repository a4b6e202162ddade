"""Carry a suite onto the twin tasks of another language, and audit the carry.

Values are language-neutral, so the rows of a suite built for one language's
tasks mean the same on the twin tasks of another (same ids, signatures equal
modulo the type mapping: ``Array`` is a list, ``UInt8`` an integer). Each
carried row is re-checked against the *target's* ground truth; a row where
the two ground truths disagree is reported (task, row, check, why) and left
out, never silently kept. On VERINA this audits the Coq track, which was
translated from the Lean one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from veriscale.backends.base import Backend, Label
from veriscale.benchmark.model import ExpectedPair, Input, Task
from veriscale.evaluation.verify import (
    AGREE,
    DISAGREE,
    _answer,
    postcond_verdict,
    precond_verdict,
    reference_verdict,
)
from veriscale.values import ArrayT, ListT, OptionT, ProdT, Scalar, ValueType, check


def carrier(t: ValueType) -> ValueType:
    """The type with the distinctions a port ignores erased."""
    if isinstance(t, (ListT, ArrayT)):
        return ListT(carrier(t.elem))
    if isinstance(t, OptionT):
        return OptionT(carrier(t.elem))
    if isinstance(t, ProdT):
        return ProdT(carrier(t.fst), carrier(t.snd))
    if isinstance(t, Scalar) and t.name == "UInt8":
        return Scalar("Int")
    return t


def signature_difference(source: Task, target: Task) -> str | None:
    """Why the two signatures cannot carry values, or ``None`` when they can."""
    a, b = source.signature, target.signature
    if len(a.params) != len(b.params):
        return f"{len(a.params)} parameters vs {len(b.params)}"
    for p, q in zip(a.params, b.params, strict=True):
        if carrier(p.type) != carrier(q.type):
            return f"parameter {p.name}: {p.type_text} vs {q.name}: {q.type_text}"
    if carrier(a.return_type) != carrier(b.return_type):
        return f"return type {a.return_text} vs {b.return_text}"
    return None


@dataclass(frozen=True)
class PortFinding:
    task: str
    row: str  # e.g. "test[3]", "test[3].unexpected[1]", "reject[0]"
    check: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"task": self.task, "row": self.row, "check": self.check, "detail": self.detail}


@dataclass
class PortReport:
    tasks: int = 0
    ported_tasks: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    carried: dict[str, int] = field(default_factory=lambda: {"pairs": 0, "unexpected": 0,
                                                             "rejects": 0})
    kept: dict[str, int] = field(default_factory=lambda: {"pairs": 0, "unexpected": 0,
                                                          "rejects": 0})
    undecided: int = 0
    # task -> cause -> rows (pairs, unexpected outputs, reject inputs) left out because
    # the target's ground truth could not decide them (they would decide nothing)
    dropped_undecided: dict[str, dict[str, int]] = field(default_factory=dict)
    findings: list[PortFinding] = field(default_factory=list)
    unrepresentable: list[PortFinding] = field(default_factory=list)
    processes: int = 0
    seconds: float = 0.0
    source_language: str = ""
    target_language: str = ""

    def disagreeing_tasks(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.task] = out.get(f.task, 0) + 1
        return out

    def audit_findings(self, source: str = "", target: str = "") -> list[dict[str, Any]]:
        """The disagreements as ground-truth audit findings (``twin_specs_disagree``), one
        per task and language: the twin tasks' ground truths disagree on a carried row,
        so one of the two (at least) is wrong there."""
        by_task: dict[str, list[PortFinding]] = {}
        for f in self.findings:
            by_task.setdefault(f.task, []).append(f)
        out = []
        for task, found in sorted(by_task.items()):
            first = found[0]
            for side in (source, target):
                out.append({"task": task, "language": side, "kind": "twin_specs_disagree",
                            "count": len(found),
                            "witness": {"row": first.row, "check": first.check,
                                        "detail": first.detail},
                            "verdict_source": target})
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks, "ported_tasks": self.ported_tasks, "skipped": self.skipped,
            "carried": self.carried, "kept": self.kept, "undecided_checks": self.undecided,
            "dropped_undecided": self.dropped_undecided,
            "disagreeing_tasks": self.disagreeing_tasks(),
            "disagreements": [f.to_json() for f in self.findings],
            "audit_findings": self.audit_findings(self.source_language, self.target_language),
            "unrepresentable": [f.to_json() for f in self.unrepresentable],
            "backend_processes": self.processes, "seconds": round(self.seconds, 3),
        }


def _representable(target: Task, value: Any, t: ValueType) -> bool:
    from veriscale.backends.language import plugin_for

    if check(t, value) is not None:
        return False
    try:
        plugin_for(target).render_value(t, value)
    except ValueError:
        return False
    return True


def carry(source: Task, target: Task) -> tuple[Task, list[PortFinding]]:
    """``target`` with ``source``'s rows (only values the target language can hold)."""
    sig = target.signature
    lost: list[PortFinding] = []

    def fits(inp: Input) -> bool:
        return all(_representable(target, v, p.type) for p, v in zip(sig.params, inp,
                                                                        strict=True))

    tests: list[ExpectedPair] = []
    for i, case in enumerate(source.tests):
        if not fits(case.input) or not _representable(target, case.expected, sig.return_type):
            lost.append(PortFinding(source.id, f"test[{i}]", "representable",
                                    "a value has no literal in the target language"))
            continue
        unexpected = [u for u in case.unexpected if _representable(target, u, sig.return_type)]
        tests.append(ExpectedPair(case.input, case.expected, unexpected, case.provenance))
    rejects = [r for r in source.reject_inputs if fits(r)]
    return replace(target, tests=tests, reject_inputs=rejects), lost


def audit(backend: Backend, tasks: Sequence[Task], report: PortReport) -> list[Task]:
    """Re-check carried rows against each target's ground truth; keep the rows it
    decides and agrees with. A row the target cannot decide (an UNKNOWN check) is
    left out too, and counted by cause: it would decide nothing for any candidate,
    and a suite that carried it would earn detections it never made."""
    from veriscale.backends.causes import unknown_cause
    from veriscale.backends.language import show_value
    cls_jobs = [(t, [c.input for c in t.tests] + list(t.reject_inputs)) for t in tasks]
    post_jobs = [(t, None, [(c.input, o) for c in t.tests for o in (c.expected, *c.unexpected)])
                 for t in tasks]
    run_jobs = [(t, None, [c.input for c in t.tests]) for t in tasks]
    classified, verdicts, outcomes = _answer(backend, cls_jobs, post_jobs, run_jobs)
    out: list[Task] = []
    for task, labels, posts, outs in zip(tasks, classified, verdicts, outcomes, strict=True):
        n = len(task.tests)
        kept_tests: list[ExpectedPair] = []
        k = 0
        rt = task.signature.return_type

        def show(v: Any, task: Task = task, rt: ValueType = rt) -> str:
            return show_value(task, rt, v)

        def undecided(why: str, task_id: str = task.id) -> None:
            report.undecided += 1
            causes = report.dropped_undecided.setdefault(task_id, {})
            cause = unknown_cause(why) if why else "undecided"
            causes[cause] = causes.get(cause, 0) + 1

        for i, case in enumerate(task.tests):
            row_ok, row_open = True, ""
            checks = [("precondition accepts the input", precond_verdict(labels[i], Label.EXPECTED)),
                      ("postcondition accepts the expected output", postcond_verdict(posts[k], True)),
                      ("reference reproduces the expected output",
                       reference_verdict(rt, outs[i], case.expected, show=show))]
            for name, (verdict, why) in checks:
                if verdict not in (AGREE, DISAGREE):
                    row_open = row_open or why or name
                if verdict == DISAGREE:
                    row_ok = False
                    report.findings.append(PortFinding(task.id, f"test[{i}]", name, why))
            if row_ok and row_open:
                undecided(row_open)
            kept_unexpected = []
            for j, u in enumerate(case.unexpected):
                verdict, why = postcond_verdict(posts[k + 1 + j], False)
                if verdict == DISAGREE:
                    report.findings.append(PortFinding(
                        task.id, f"test[{i}].unexpected[{j}]",
                        "postcondition rejects the unexpected output", f"{why}: {show(u)}"))
                elif verdict != AGREE:
                    undecided(why)
                else:
                    kept_unexpected.append(u)
            k += 1 + len(case.unexpected)
            if row_ok and not row_open:
                kept_tests.append(ExpectedPair(case.input, case.expected, kept_unexpected,
                                           case.provenance))
        kept_rejects = []
        for j, inp in enumerate(task.reject_inputs):
            verdict, why = precond_verdict(labels[n + j], Label.UNEXPECTED)
            if verdict == DISAGREE:
                report.findings.append(PortFinding(task.id, f"reject[{j}]",
                                                   "precondition rejects the input", why))
            elif verdict != AGREE:
                undecided(why)
            else:
                kept_rejects.append(inp)
        report.kept["pairs"] += len(kept_tests)
        report.kept["unexpected"] += sum(len(c.unexpected) for c in kept_tests)
        report.kept["rejects"] += len(kept_rejects)
        out.append(replace(task, tests=kept_tests, reject_inputs=kept_rejects))
    return out


def write_task(task: Task, path: Path) -> None:
    from veriscale.backends.language import plugin_for

    plugin_for(task).write_task_dir(task, path)


def port_suite(suite_dir: Path, tasks_dir: Path, out_dir: Path | None, backend_name: str,
               tasks: Sequence[str] | None = None,
               on_backend: Callable[[Backend], Any] | None = None,
               **backend_options: Any) -> PortReport:
    """Carry ``suite_dir`` onto ``tasks_dir`` (only ``tasks``, when given) and audit
    it; ``on_backend`` is told the backend before the audit (to follow its files)."""
    from veriscale.backends.datasets import load_benchmark
    from veriscale.backends.registry import make_backend
    from veriscale.pipeline.suites import write_suite

    start = time.perf_counter()
    sources, _ = load_benchmark(Path(suite_dir))
    targets, _ = load_benchmark(Path(tasks_dir))
    if tasks is not None:
        wanted = set(tasks)
        unknown = sorted(wanted - {t.id for t in targets})
        if unknown:
            raise ValueError(f"{tasks_dir}: no task {', '.join(unknown)}")
        targets = [t for t in targets if t.id in wanted]
    by_id = {t.id: t for t in sources}
    report = PortReport(tasks=len(targets))
    carried: list[Task] = []
    for target in targets:
        source = by_id.get(target.id)
        if source is None:
            report.skipped[target.id] = "no task with this id in the suite"
            continue
        why = signature_difference(source, target)
        if why:
            report.skipped[target.id] = f"signatures differ: {why}"
            continue
        task, lost = carry(source, target)
        report.unrepresentable.extend(lost)
        report.carried["pairs"] += len(task.tests)
        report.carried["unexpected"] += sum(len(c.unexpected) for c in task.tests)
        report.carried["rejects"] += len(task.reject_inputs)
        carried.append(task)
    report.ported_tasks = len(carried)
    from veriscale.backends.language import language_of

    report.source_language = language_of(sources[0]) if sources else ""
    report.target_language = language_of(targets[0]) if targets else ""
    backend = make_backend(backend_name, **backend_options)
    if on_backend is not None:
        on_backend(backend)
    try:
        kept = audit(backend, carried, report)
        report.processes = backend.stats.processes
    finally:
        backend.close()
    if out_dir is not None:
        write_suite(Path(out_dir), kept)
    report.seconds = time.perf_counter() - start
    return report
