"""Whether a suite a run wrote is passed by its own ground truth on every row."""

from __future__ import annotations

from pathlib import Path

from veriscale.backends.base import Backend
from veriscale.backends.datasets import load_benchmark
from veriscale.evaluation.harness import evaluate
from veriscale.evaluation.mutants import gt_candidate
from veriscale.evaluation.scoring import Score


def ground_truth_misses(backend: Backend, suite_dir: Path) -> list[str]:
    """Each metric of each task the ground truth does not PASS (lower bound) on the
    suite in ``suite_dir``, with its errors; empty when every row passes."""
    tasks, issues = load_benchmark(suite_dir)
    out = [f"load: {i}" for i in issues]
    report = evaluate(backend, tasks, {t.id: [gt_candidate(t)] for t in tasks},
                      suite=suite_dir.name)
    for t in report.tasks:
        for s in t.samples:
            for metric, score in s.metrics.items():
                if score.lower is not Score.PASS:
                    out.append(f"{suite_dir.name}/{t.task_id} {metric}: {score.lower.value} "
                               f"{s.errors} {s.unknown_causes}")
    return out
