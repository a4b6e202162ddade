"""How much of each task's ground-truth code a suite's tests run (line and branch).

The paper claims its augmented suites keep the reference's full code coverage; this
measures it where the language allows (a backend that is a
:class:`~veriscale.backends.base.CoverageMeter`: Python, with coverage.py in the
sandbox), and says per task why not elsewhere. Used by ``veriscale coverage`` and by
``veriscale run`` (the report's coverage section).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.language import plugin_for
from veriscale.backends.registry import backend_class, make_backend


def _share(covered: int, total: int) -> float | None:
    return None if total == 0 else covered / total


def suite_coverage(suite: Path, ids: list[str] | None, backends: dict[str, Any]
                   ) -> dict[str, Any]:
    """One suite's coverage of its tasks' reference code: per task (lines and branches
    run by its tests' inputs, or why not available), and the totals over the tasks
    measured. ``backends`` (by name) are made on first use and reused."""
    tasks, issues = load_benchmark(suite, ids)
    per_task: dict[str, Any] = {}
    sums = {"lines_covered": 0, "lines_total": 0, "branches_covered": 0, "branches_total": 0}
    full = 0
    for task in tasks:
        name = plugin_for(task).backend
        cls = backend_class(name)
        if not callable(getattr(cls, "reference_coverage", None)):  # base.CoverageMeter
            why = getattr(cls, "coverage_unavailable", "") or \
                f"the {name} backend cannot measure code coverage"
            per_task[task.id] = {"available": False, "reason": why}
            continue
        if name not in backends:
            backends[name] = make_backend(name)
        got = backends[name].reference_coverage(task, [t.input for t in task.tests])
        row = {"available": True, "lines_covered": got.lines_covered,
               "lines_total": got.lines_total, "branches_covered": got.branches_covered,
               "branches_total": got.branches_total, "missing_lines": list(got.missing_lines)}
        per_task[task.id] = row
        for key in sums:
            sums[key] += row[key]
        full += got.lines_covered == got.lines_total \
            and got.branches_covered == got.branches_total
    measured = [r for r in per_task.values() if r["available"]]
    return {
        "suite": str(suite),
        "tasks": len(tasks),
        "tasks_measured": len(measured),
        "tasks_fully_covered": full,
        **sums,
        "line_coverage": _share(sums["lines_covered"], sums["lines_total"]),
        "branch_coverage": _share(sums["branches_covered"], sums["branches_total"]),
        "not_available": sorted({r["reason"] for r in per_task.values() if not r["available"]}),
        "load_issues": [str(i) for i in issues],
        "per_task": per_task,
    }
