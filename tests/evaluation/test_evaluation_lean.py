"""CodeGen scoring through real Lean (WASM): two Lean files (compile, then run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean.sections import lean_sections
from veriscale.evaluation.harness import evaluate_batch
from veriscale.evaluation.scoring import Bounded, Score
from veriscale.evaluation.solutions import SolutionLine, Submission, to_candidate

pytestmark = pytest.mark.lean

VERINA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "verina"


def background_lean_job() -> dict[str, Any]:
    """The Lean work of this module (started with the other Lean modules, see conftest)."""
    from veriscale.backends.registry import make_backend

    if not VERINA.is_dir():
        pytest.skip("../shared/data/verina is not present")
    (task,), issues = load_benchmark(VERINA, ["verina_basic_1"])
    assert not issues and lean_sections(task) is not None
    gt = to_candidate(task, SolutionLine(task_id=task.id, code=lean_sections(task).code), 0)
    wrong = to_candidate(task, SolutionLine(task_id=task.id, code="a * b ≤ 0"), 1)
    broken = to_candidate(task, SolutionLine(task_id=task.id, code="a *"), 2)
    be = make_backend("lean", runner="wasm")
    try:
        items: list[tuple[object, Submission]] = [(task, gt), (task, wrong), (task, broken)]
        res = evaluate_batch(be, items)  # type: ignore[arg-type]
    finally:
        be.close()
    return {"task": task, "results": res}


def test_lean_code_scoring(lean_job: dict[str, Any]) -> None:
    task, res = lean_job["task"], lean_job["results"]
    assert res[0].metrics["code"] == Bounded(Score.PASS, Score.PASS), res[0].errors
    assert res[0].tallies["code"].passed == len(task.tests)
    assert res[1].metrics["code"] == Bounded(Score.FAIL, Score.FAIL)
    assert res[1].tallies["code"].failed > 0
    assert res[2].metrics["code"] == Bounded(Score.FAIL, Score.FAIL)
    assert res[2].errors["code"].startswith("compile")
