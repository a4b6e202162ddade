"""Static lint of a dataset in the VERINA directory format.

The checks are the data defects found in the authors' released suites
(upstream-facts §3.4): values that do not parse or do not fit their type,
duplicate inputs, inputs that are both expected and rejected, expected
outputs listed as unexpected, and values VERINA's own unescaped renderer
would break. Everything here is pure over a built task and its :class:`SuiteRows`;
:func:`veriscale.backends.datasets.validate_dataset` reads the folders, each with
its language plug-in (a plug-in says what its rows are, never how they are judged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from veriscale.benchmark.model import Input, LoadIssue, Signature, Task
from veriscale.benchmark.verina.codec import json_render_hazard
from veriscale.benchmark.verina.folder import REJECT_JSON, TASK_JSON, TEST_JSON, SuiteRows
from veriscale.values import ValueError_, values_equal
from veriscale.values.inputs import input_key, param_types

DEFECT_KINDS = (
    "ill_typed",
    "unparsable",
    "duplicate_input",
    "input_in_both",
    "expected_in_unexpected",
    "render_hazard",
)
"""Defects in the suite itself; load issues of these kinds count as defects."""

WARNING_KINDS = ("signature_mismatch", "id_mismatch")
"""Load issues that do not affect what VERINA or VeriScale read (a format may
name more of its own: ``TaskFormat.load_warnings``)."""


@dataclass(frozen=True)
class Defect:
    """One defect, located by task, file and field (e.g. ``[3].unexpected[1]``)."""

    task: str
    file: str
    field: str
    kind: str
    message: str

    @property
    def where(self) -> str:
        return f"{self.file}{self.field}"


@dataclass
class TaskReport:
    """What linting one task folder found. ``loaded`` is false when the task
    could not be built at all (its problems are then in ``errors``)."""

    task: str
    loaded: bool
    defects: list[Defect] = field(default_factory=list)
    errors: list[LoadIssue] = field(default_factory=list)
    warnings: list[LoadIssue] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        found = Counter(d.kind for d in self.defects)
        return {kind: found[kind] for kind in DEFECT_KINDS if found[kind]}


@dataclass
class ValidationReport:
    """The lint of a whole dataset, in folder order."""

    tasks: list[TaskReport]

    @property
    def defect_count(self) -> int:
        return sum(len(t.defects) for t in self.tasks)

    @property
    def errors(self) -> list[LoadIssue]:
        return [e for t in self.tasks for e in t.errors]

    @property
    def warnings(self) -> list[LoadIssue]:
        return [w for t in self.tasks for w in t.warnings]

    @property
    def ok(self) -> bool:
        """No defect and no error (warnings do not count)."""
        return self.defect_count == 0 and not self.errors

    def totals(self) -> dict[str, int]:
        found = Counter(d.kind for t in self.tasks for d in t.defects)
        return {kind: found[kind] for kind in DEFECT_KINDS}

    def per_task(self) -> dict[str, dict[str, int]]:
        return {t.task: t.counts() for t in self.tasks if t.defects}

    def to_json(self, *, details: bool = False) -> dict[str, Any]:
        """``{"tasks", "defects", "per_task", "errors", "warnings"[, "details"]}``."""
        out: dict[str, Any] = {
            "tasks": len(self.tasks),
            "defects": self.totals(),
            "per_task": self.per_task(),
            "errors": [asdict(e) for e in self.errors],
            "warnings": [asdict(w) for w in self.warnings],
        }
        if details:
            out["details"] = [asdict(d) for t in self.tasks for d in t.defects]
        return out


# ---------------------------------------------------------------- checks

_MISSING = object()


def _try_decode(fn: Callable[[Any], Any], raw: Any) -> Any:
    try:
        return fn(raw)
    except (ValueError_, ValueError, TypeError):
        return _MISSING


def _rows(data: Any) -> list[tuple[int, dict[str, Any]]]:
    if not isinstance(data, list):
        return []
    return [(i, row) for i, row in enumerate(data) if isinstance(row, dict)]


def hazard_defects(task: str, signature: Signature, tests: Any, rejects: Any,
                   files: tuple[str, str] = (TEST_JSON, REJECT_JSON)) -> list[Defect]:
    """Values that VERINA's renderer would paste into Lean as broken or different text."""
    tests_file, rejects_file = files
    out: list[Defect] = []
    types = {p.name: p.type for p in signature.params}

    def look_input(file: str, where: str, inp: Any) -> None:
        if isinstance(inp, dict):
            for name, value in inp.items():
                if name in types:
                    check(file, f"{where}.input.{name}", types[name], value)

    def check(file: str, where: str, t: Any, value: Any) -> None:
        why = json_render_hazard(t, value)
        if why:
            out.append(Defect(task, file, where, "render_hazard", why))

    for i, row in _rows(tests):
        look_input(tests_file, f"[{i}]", row.get("input"))
        if "expected" in row:
            check(tests_file, f"[{i}].expected", signature.return_type, row["expected"])
        unexpected = row.get("unexpected")
        for j, value in enumerate(unexpected if isinstance(unexpected, list) else []):
            check(tests_file, f"[{i}].unexpected[{j}]", signature.return_type, value)
    for i, row in _rows(rejects):
        look_input(rejects_file, f"[{i}]", row.get("input"))
    return out


def _decoded_inputs(signature: Signature, data: Any) -> list[tuple[int, Input]]:
    out = []
    for i, row in _rows(data):
        inp = _try_decode(signature.decode_input, row.get("input"))
        if inp is not _MISSING:
            out.append((i, inp))
    return out


def _duplicates(task: str, file: str, inputs: list[tuple[int, Input]],
                key: Callable[[Input], Any]) -> list[Defect]:
    first: dict[Any, int] = {}
    out: list[Defect] = []
    for i, inp in inputs:
        k = key(inp)
        if k in first:
            out.append(Defect(task, file, f"[{i}].input", "duplicate_input",
                              f"same input as {file}[{first[k]}]"))
        else:
            first[k] = i
    return out


def suite_defects(task: str, signature: Signature, tests: Any, rejects: Any,
                  files: tuple[str, str] = (TEST_JSON, REJECT_JSON)) -> list[Defect]:
    """Duplicates, inputs both expected and rejected, expected values listed as
    unexpected; values are compared canonically (``[1, 2]`` == ``"[1, 2]"``), inputs by
    the pipeline's duplicate key (one NaN is one input; 0.0 and -0.0 are two, as a
    program that divides by them tells)."""
    tests_file, rejects_file = files
    key = input_key(param_types(signature))
    test_inputs = _decoded_inputs(signature, tests)
    reject_inputs = _decoded_inputs(signature, rejects)
    out = (_duplicates(task, tests_file, test_inputs, key)
           + _duplicates(task, rejects_file, reject_inputs, key))
    expected_at = {key(inp): i for i, inp in reversed(test_inputs)}
    for i, inp in reject_inputs:
        at = expected_at.get(key(inp))
        if at is not None:
            out.append(Defect(task, rejects_file, f"[{i}].input", "input_in_both",
                              f"also a test input ({tests_file}[{at}])"))
    rt = signature.return_type
    for i, row in _rows(tests):
        expected = _try_decode(signature.decode_output, row.get("expected", _MISSING))
        unexpected = row.get("unexpected")
        if expected is _MISSING or not isinstance(unexpected, list):
            continue
        for j, raw in enumerate(unexpected):
            value = _try_decode(signature.decode_output, raw)
            if value is not _MISSING and values_equal(rt, expected, value):
                out.append(Defect(task, tests_file, f"[{i}].unexpected[{j}]",
                                  "expected_in_unexpected", f"equals the expected value {raw!r}"))
    return out


def load_report(name: str, task: Task | None, issues: Iterable[LoadIssue],
                warnings: Iterable[str] = ()) -> TaskReport:
    """A task folder's report as far as loading it tells: each load issue a defect, a
    warning or an error by its kind (``warnings``: the format's own warning kinds)."""
    warning_kinds = {*WARNING_KINDS, *warnings}
    report = TaskReport(name, loaded=task is not None)
    for issue in issues:
        if issue.kind in DEFECT_KINDS:
            report.defects.append(
                Defect(issue.task, issue.file, issue.field, issue.kind, issue.message)
            )
        elif issue.kind in warning_kinds:
            report.warnings.append(issue)
        else:
            report.errors.append(issue)
    if task is None and not report.errors:
        report.errors.append(LoadIssue(name, TASK_JSON, "", "bad_task",
                                       "the task could not be built"))
    return report


def lint(name: str, task: Task | None, issues: Iterable[LoadIssue],
         rows: SuiteRows | None, warnings: Iterable[str] = ()) -> TaskReport:
    """Pure: lint one task folder from what its loader built and its rows (the rows
    are judged only when the task was built: its signature types them)."""
    report = load_report(name, task, issues, warnings)
    if task is None or rows is None:
        return report
    files = (rows.tests_file, rows.rejects_file)
    if rows.render_hazards:
        report.defects += hazard_defects(name, task.signature, rows.tests, rows.rejects, files)
    report.defects += suite_defects(name, task.signature, rows.tests, rows.rejects, files)
    return report


__all__ = [
    "DEFECT_KINDS", "WARNING_KINDS", "Defect", "TaskReport", "ValidationReport",
    "hazard_defects", "lint", "load_report", "suite_defects",
]
