"""Stand-alone reduction of an existing suite (``veriscale reduce``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from veriscale.benchmark.model import Task
from veriscale.pipeline.rundir import replace_dir_atomic
from veriscale.pipeline.suites import KillData, kill_data, reduce_to_lite


def load_kill_data(task: Task, run_dir: Path | None) -> KillData | None:
    """Kill data for ``task`` from a run directory's persisted kill matrix, if any."""
    if run_dir is None:
        return None
    path = Path(run_dir) / "tasks" / task.id / "unexpected.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return kill_data(task.signature, (doc.get("data") or {}).get("kill_matrix", []))


def reduce_suite(
    tasks: list[Task],
    out: Path,
    *,
    run_dir: Path | None = None,
    max_pairs: int = 50,
    max_reject_inputs: int = 50,
    keep_original: bool = True,
) -> dict[str, Any]:
    from veriscale.benchmark import python_format, verina

    out = Path(out)
    staging = out.with_name(f".{out.name}.staging")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    per_task: dict[str, Any] = {}
    for task in tasks:
        kill = load_kill_data(task, run_dir)
        pairs_budget = max_pairs if kill is not None else len(task.tests)
        lite, _ = reduce_to_lite(
            task, kill or KillData(), max_pairs=pairs_budget,
            max_reject_inputs=max_reject_inputs, keep_original=keep_original,
        )
        if kill is None:
            lite.tests = list(task.tests)
        writer = python_format if task.python is not None else verina
        writer.write_task_dir(lite, staging / task.id)
        per_task[task.id] = {
            "pairs": len(task.tests),
            "lite_pairs": len(lite.tests),
            "reject_inputs": len(task.reject_inputs),
            "lite_reject_inputs": len(lite.reject_inputs),
            "kill_matrix": kill is not None,
        }
    out.parent.mkdir(parents=True, exist_ok=True)
    replace_dir_atomic(staging, out)
    return {"tasks": len(tasks), "out": str(out), "per_task": per_task}
