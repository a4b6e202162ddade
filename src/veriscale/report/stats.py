"""Table 1 of the paper: suite volumes per task, for any dataset.

Per task: *pairs* = rows of ``test.json``; *unexpected outputs* = the sum of
``len(unexpected)`` over those rows; *unexpected inputs* = rows of
``reject_inputs.json``. Each is summarised by total, mean, min, median and max
over tasks. The functions are pure over :class:`TaskCounts` (or loaded
:class:`Task` objects), so the report module reuses them; only
:func:`dataset_counts` reads files.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veriscale.benchmark.model import Task

MEASURES = ("pairs", "unexpected_outputs", "unexpected_inputs")
LABELS = {
    "pairs": "pairs",
    "unexpected_outputs": "unexpected outputs",
    "unexpected_inputs": "unexpected inputs",
}


@dataclass(frozen=True)
class TaskCounts:
    task: str
    pairs: int
    unexpected_outputs: int
    unexpected_inputs: int


def counts_of(task: Task) -> TaskCounts:
    """Counts of a loaded task (values that failed to load are not counted)."""
    return TaskCounts(
        task.id,
        len(task.tests),
        sum(len(case.unexpected) for case in task.tests),
        len(task.reject_inputs),
    )


def raw_counts(name: str, tests: Any, rejects: Any) -> TaskCounts:
    """Counts straight from the JSON of ``test.json`` / ``reject_inputs.json``:
    every stored row counts, whether or not its values parse (as in the paper)."""
    rows = tests if isinstance(tests, list) else []
    unexpected = sum(
        len(row["unexpected"])
        for row in rows
        if isinstance(row, dict) and isinstance(row.get("unexpected"), list)
    )
    return TaskCounts(name, len(rows), unexpected, len(rejects) if isinstance(rejects, list) else 0)


def summarise(values: Sequence[int]) -> dict[str, float | int | None]:
    """total / mean / min / median / max of per-task counts (``None`` when empty)."""
    if not values:
        return {"total": 0, "mean": None, "min": None, "median": None, "max": None}
    return {
        "total": sum(values),
        "mean": sum(values) / len(values),
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
    }


def suite_stats(items: Iterable[Task | TaskCounts]) -> dict[str, Any]:
    """``{"tasks": n, "pairs": {...}, "unexpected_outputs": {...},
    "unexpected_inputs": {...}, "tasks_with_none": {...}}`` for a dataset."""
    counts = [c if isinstance(c, TaskCounts) else counts_of(c) for c in items]
    out: dict[str, Any] = {"tasks": len(counts)}
    for measure in MEASURES:
        out[measure] = summarise([getattr(c, measure) for c in counts])
    out["tasks_with_none"] = {
        measure: sum(1 for c in counts if getattr(c, measure) == 0) for measure in MEASURES
    }
    return out


def multipliers(base: dict[str, Any], other: dict[str, Any]) -> dict[str, float | None]:
    """How many times larger ``other``'s mean per-task volume is than ``base``'s
    (Table 1's ×62.8-style figures); ``None`` when the base mean is 0 or absent."""
    out: dict[str, float | None] = {}
    for measure in MEASURES:
        b, o = base[measure]["mean"], other[measure]["mean"]
        out[measure] = None if not b or o is None else o / b
    return out


def dataset_counts(root: Path) -> list[TaskCounts]:
    """Read every task folder of ``root`` (each in its language plug-in's format)."""
    from veriscale.backends.datasets import task_dirs
    from veriscale.backends.language import plugin_for_dir

    return [raw_counts(d.name, *plugin_for_dir(d).raw_suite(d)) for d in task_dirs(Path(root))]


def format_number(value: float | int | None, decimals: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{decimals}f}"


__all__ = [
    "LABELS", "MEASURES", "TaskCounts", "counts_of", "dataset_counts", "format_number",
    "multipliers", "raw_counts", "suite_stats", "summarise",
]
