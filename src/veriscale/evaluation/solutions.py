"""Model outputs to score: a JSONL file, one line per (task id, sample).

Each line is an object with a task id (``task_id``; also accepted: ``task``,
``id``, ``data_id``), an optional ``sample`` number (default: the lowest
number not yet used by that task) and any of ``code``, ``precond``, ``postcond`` plus
the aux fields ``code_aux``, ``precond_aux``, ``postcond_aux``, ``imports``.
Other keys (model name, cost, ...) are ignored. A bad line is reported with its
line number and field and skipped; it never stops the run.

``code`` becomes the complete definition the backend runs through the task's
language plug-in (``code_definition``): for Lean and Coq tasks ``code`` is a body,
as VERINA stores it, under the ground-truth signature; for Python tasks it is
complete source defining the task function. ``definition`` instead gives the
complete definition itself, run as it is (with ``code_aux`` before it): what a
model that rewrites the header, or a tool that mutates whole definitions
(``veriscale mutants``), writes. A line gives at most one of the two.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from veriscale.backends.base import Implementation, Spec
from veriscale.backends.language import plugin_for
from veriscale.benchmark.model import Task


class SolutionLine(BaseModel):
    """One line of a solutions file."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    task_id: str = Field(validation_alias=AliasChoices("task_id", "task", "id", "data_id"))
    sample: int | None = Field(default=None, ge=0)
    code: str | None = None
    definition: str | None = None
    precond: str | None = None
    postcond: str | None = None
    code_aux: str = ""
    precond_aux: str = ""
    postcond_aux: str = ""
    imports: str = ""


@dataclass(frozen=True)
class SolutionIssue:
    """A skipped or suspicious line: where, which field, and why."""

    line: int
    field: str
    message: str
    task_id: str = ""

    def __str__(self) -> str:
        where = f"line {self.line}" + (f" ({self.task_id})" if self.task_id else "")
        return f"{where}: {self.field}: {self.message}"


@dataclass(frozen=True)
class Submission:
    """One sample for one task, ready for the backend.

    ``spec`` carries the candidate pre/postconditions; a ``None`` half means the
    sample did not provide it (that half is then not scored).
    """

    task_id: str
    sample: int
    impl: Implementation | None = None
    spec: Spec | None = None
    line: int = 0

    @property
    def has_precond(self) -> bool:
        return self.spec is not None and self.spec.precond is not None

    @property
    def has_postcond(self) -> bool:
        return self.spec is not None and self.spec.postcond is not None


def _field_of(err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ".".join(str(x) for x in first.get("loc", ())) or "(line)"
    return loc


def _message_of(err: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e['msg']}" for e in err.errors())


def parse_lines(lines: Iterable[str | bytes]
                ) -> tuple[list[tuple[int, SolutionLine]], list[SolutionIssue]]:
    """Validate JSONL lines (text, or bytes decoded here line by line, so one line
    that is not UTF-8 is reported and skipped, not the file); blank lines are
    skipped silently."""
    good: list[tuple[int, SolutionLine]] = []
    issues: list[SolutionIssue] = []
    for no, item in enumerate(lines, start=1):
        if isinstance(item, bytes):
            try:
                raw = item.decode("utf-8")
            except UnicodeDecodeError as exc:
                issues.append(SolutionIssue(no, "(encoding)", f"not UTF-8 (byte {exc.start + 1} "
                                                              f"of the line)"))
                continue
        else:
            raw = item
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            issues.append(SolutionIssue(no, "(json)", f"not JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(obj, dict):
            issues.append(SolutionIssue(no, "(line)", f"expected an object, got {type(obj).__name__}"))
            continue
        try:
            sol = SolutionLine.model_validate(obj)
        except ValidationError as exc:
            tid = next((str(obj[k]) for k in ("task_id", "task", "id", "data_id") if k in obj), "")
            issues.append(SolutionIssue(no, _field_of(exc), _message_of(exc), tid))
            continue
        if sol.code is not None and sol.definition is not None:
            issues.append(SolutionIssue(no, "code/definition",
                                        "give code (a body) or definition, not both", sol.task_id))
            continue
        if (sol.code is None and sol.definition is None and sol.precond is None
                and sol.postcond is None):
            issues.append(SolutionIssue(no, "code/definition/precond/postcond",
                                        "none of code, definition, precond, postcond given",
                                        sol.task_id))
            continue
        good.append((no, sol))
    return good, issues


def to_candidate(task: Task, sol: SolutionLine, sample: int, line: int = 0) -> Submission:
    """Turn a validated line into backend objects for ``task``."""
    impl = None
    if sol.code is not None or sol.definition is not None:
        plugin = plugin_for(task)
        if sol.code is not None:
            code = plugin.code_definition(task, sol.code, sol.code_aux)
        else:
            assert sol.definition is not None
            aux = sol.code_aux.strip()
            code = f"{aux}\n\n{sol.definition}" if aux else sol.definition
        impl = Implementation(code=code, id=f"{task.id}#{sample}", origin="solution",
                              imports=plugin.solution_imports(sol.imports))
    spec = None
    if sol.precond is not None or sol.postcond is not None:
        spec = Spec(
            precond=sol.precond,
            postcond=sol.postcond,
            precond_aux=sol.precond_aux,
            postcond_aux=sol.postcond_aux,
            imports=sol.imports,
            id=f"{task.id}#{sample}",
            origin="solution",
        )
    return Submission(task.id, sample, impl, spec, line)


def load_solutions(
    path: Path, tasks: Iterable[Task]
) -> tuple[dict[str, list[Submission]], list[SolutionIssue]]:
    """Candidates per task id (in sample order) and the issues found.

    Lines for tasks not in ``tasks`` and duplicate (task, sample) lines are
    reported and skipped.
    """
    by_id = {t.id: t for t in tasks}
    with open(path, "rb") as fh:
        good, issues = parse_lines(fh)
    out: dict[str, list[Submission]] = {}
    used: dict[str, set[int]] = {}
    for no, sol in good:
        task = by_id.get(sol.task_id)
        if task is None:
            issues.append(SolutionIssue(no, "task_id", "no such task in the suite", sol.task_id))
            continue
        taken = used.setdefault(sol.task_id, set())
        sample = sol.sample if sol.sample is not None else _next_free(taken)
        if sample in taken:
            issues.append(SolutionIssue(no, "sample", f"duplicate sample {sample}", sol.task_id))
            continue
        taken.add(sample)
        out.setdefault(sol.task_id, []).append(to_candidate(task, sol, sample, no))
    for cands in out.values():
        cands.sort(key=lambda c: c.sample)
    return out, issues


def _next_free(taken: set[int]) -> int:
    i = 0
    while i in taken:
        i += 1
    return i
