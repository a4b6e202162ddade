"""Stand-alone reduction of an existing suite (``veriscale reduce``).

Given the run directory that produced a Plus suite, the reduction is the
run's own: the same kill matrix and, unless overridden, the same
``[reduction]`` settings from the run's manifest, so ``veriscale reduce
RUN/plus --run-dir RUN`` writes ``RUN/lite`` again byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veriscale.artifacts import UnexpectedArtifact
from veriscale.benchmark.model import Task
from veriscale.pipeline.config import ReductionSettings
from veriscale.pipeline.suites import KillData, kill_data, reduce_to_lite
from veriscale.rundir import RunDir


def load_kill_data(task: Task, run_dir: Path | None) -> KillData | None:
    """Kill data for ``task`` from a run directory's persisted kill matrix, if any."""
    if run_dir is None:
        return None
    record = RunDir(run_dir).read_artifact(task.id, "unexpected", task.signature)
    if not isinstance(record, UnexpectedArtifact):
        return None
    return kill_data(task.signature, record)


def run_reduction_settings(run_dir: Path | None) -> ReductionSettings:
    """The ``[reduction]`` settings a run used (the defaults without a run directory)."""
    if run_dir is None:
        return ReductionSettings()
    config = RunDir(run_dir).load_manifest().get("config")
    section = config.get("reduction") if isinstance(config, dict) else None
    if not isinstance(section, dict):
        return ReductionSettings()
    return ReductionSettings.model_validate(section)


def reduce_suite(
    tasks: list[Task],
    out: Path,
    *,
    run_dir: Path | None = None,
    settings: ReductionSettings | None = None,
) -> dict[str, Any]:
    """Write the Lite suite of ``tasks`` to ``out`` (replaced only once complete).

    Without a kill matrix for a task, every pair is kept (set cover needs it)
    and only the reject inputs are reduced.
    """
    from veriscale.pipeline.suites import write_suite

    settings = settings or run_reduction_settings(run_dir)
    per_task: dict[str, Any] = {}
    lite_tasks: list[Task] = []
    for task in tasks:
        kill = load_kill_data(task, run_dir)
        lite, _ = reduce_to_lite(task, kill or KillData(), settings)
        if kill is None:
            lite.tests = list(task.tests)
        lite_tasks.append(lite)
        per_task[task.id] = {
            "pairs": len(task.tests),
            "lite_pairs": len(lite.tests),
            "reject_inputs": len(task.reject_inputs),
            "lite_reject_inputs": len(lite.reject_inputs),
            "kill_matrix": kill is not None,
        }
    write_suite(Path(out), lite_tasks)
    return {"tasks": len(tasks), "out": str(out), "settings": settings.model_dump(mode="json"),
            "per_task": per_task}


__all__ = ["load_kill_data", "reduce_suite", "run_reduction_settings"]
