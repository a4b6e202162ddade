"""`veriscale run` with the Lean backend on real (WASM) Lean: the bundled Lean tasks.

Slow: every oracle round is one Lean file shared by all tasks (about two
minutes each on WASM); a run is seven rounds (classify, the reference's outputs and
the GT postcondition on them, flawed-spec and adversary compiles, adversary runs,
the GT postcondition on their outputs).
Kept to one run, started in the background with the other Lean modules.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from rich.console import Console

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.registry import make_backend
from veriscale.pipeline.config import RunConfig
from veriscale.pipeline.run import run_pipeline

pytestmark = pytest.mark.lean

TASKS = ["vs_argmax", "vs_divmod"]
BUNDLED_LEAN = Path(__file__).resolve().parents[2] / "src/veriscale/examples/bundled_lean"
LEAN_JOB_WEIGHT = 10  # the longest Lean job: started first (see conftest)


def background_lean_job() -> Path:
    """The Lean run of this module (started with the other Lean modules, see conftest)."""
    out = Path(tempfile.mkdtemp(prefix="veriscale-leanrun-")) / "run"
    config = RunConfig.model_validate({
        "seed": 5,
        "backend": "lean",
        "backend_options": {"runner": "wasm", "workers": 1},  # other modules use the other core
        "tasks": TASKS,
        "seeds": {"candidates_per_round": 4},
        "mutation": {"max_mutations_per_input": 1, "max_candidates_per_task": 20},
    })
    result = run_pipeline(BUNDLED_LEAN, out, config, console=Console(quiet=True))
    assert result.errors == {}, result.errors
    return out


@pytest.fixture(scope="module")
def lean_run(lean_job: Path) -> Path:
    return lean_job


def test_lean_run_produces_suites(lean_run: Path, bundled_lean_dir: Path):
    manifest = json.loads((lean_run / "manifest.json").read_text())
    stats = manifest["backend_stats"]
    assert stats["name"] == "lean" and stats["runner"] == "wasm"
    # One Lean file per oracle round for both tasks, not one process per check:
    # classify is one file (syntax filter + decide) plus the kernel-decide round for
    # stuck reductions; outputs is the reference run and the GT postcondition on its
    # outputs, each with its kernel round; every other stage is at most two rounds.
    by_stage = manifest["backend_stats_by_stage"]
    assert all(s["processes"] <= (4 if name == "outputs" else 2)
               for name, s in by_stage.items()), by_stage
    assert 0 < stats["processes"] <= 10 < stats["checks"]
    plus, issues = load_benchmark(lean_run / "plus")
    assert not issues and [t.id for t in plus] == TASKS
    lite, issues = load_benchmark(lean_run / "lite")
    assert not issues and all(len(t.tests) <= 50 for t in lite)
    for task in plus:
        original = len(next(t for t in load_benchmark(bundled_lean_dir, [task.id])[0]).tests)
        assert len(task.tests) > original
        assert any(t.unexpected for t in task.tests)


def test_lean_unexpected_outputs_are_wrong_by_the_python_twin(lean_run: Path,
                                                              bundled_dir: Path):
    """Every unexpected output Lean kept is rejected by the Python twin's postcondition."""
    plus, _ = load_benchmark(lean_run / "plus")
    twins, _ = load_benchmark(bundled_dir, TASKS)
    backend = make_backend("python")
    try:
        for task in plus:
            twin = next(t for t in twins if t.id == task.id)
            pairs = [(t.input, u) for t in task.tests for u in t.unexpected]
            verdicts = backend.postcondition_holds(twin, None, pairs)
            assert all(v.value == "false" for v in verdicts), task.id
            expected = backend.postcondition_holds(twin, None,
                                                   [(t.input, t.expected) for t in task.tests])
            assert all(v.value == "true" for v in expected), task.id
    finally:
        backend.close()


def test_the_ground_truth_passes_every_suite_it_wrote(lean_run: Path):
    from gt_suites import ground_truth_misses

    backend = make_backend("lean", runner="wasm", workers=1)
    try:
        for suite in ("plus", "lite"):
            assert ground_truth_misses(backend, lean_run / suite) == [], suite
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
