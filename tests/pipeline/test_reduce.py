"""`veriscale reduce` and `reduce_suite`: the stand-alone reduction is the run's own.

The bug these pin down: the VERINA writer dropped each row's provenance, so a
reloaded Plus looked all-original and ``keep_original`` kept every pair.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from twin_backend import twin_run

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean import format as verina
from veriscale.backends.lean.sections import lean_sections
from veriscale.backends.python import format as python_format
from veriscale.benchmark.model import ExpectedPair
from veriscale.pipeline.config import ReductionSettings
from veriscale.pipeline.reduce import reduce_suite
from veriscale.rundir import RunDir

TASKS = ["vs_argmax", "vs_divmod", "vs_min_max"]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def one_task(folder: Path, task_id: str):
    tasks, issues = load_benchmark(folder, [task_id])
    assert not issues, issues
    return tasks[0]


@pytest.mark.parametrize("fmt", ["verina", "python"])
def test_provenance_survives_a_write_read_round_trip(fmt, bundled_dir, bundled_lean_dir,
                                                     tmp_path):
    task = one_task(bundled_lean_dir if fmt == "verina" else bundled_dir, "vs_argmax")
    writer = verina if fmt == "verina" else python_format
    first = task.tests[0]
    task.tests = [first, ExpectedPair(first.input, first.expected, [], "llm:some-model"),
                  ExpectedPair(first.input, first.expected, [], "mutation")]
    writer.write_task_dir(task, tmp_path / task.id)
    again = one_task(tmp_path, task.id)
    assert [t.provenance for t in again.tests] == ["original", "llm:some-model", "mutation"]
    # original rows are written as the benchmark has them: no provenance key
    rows = json.loads((tmp_path / task.id / "test.json").read_text())
    assert "provenance" not in rows[0] and rows[1]["provenance"] == "llm:some-model"


@pytest.fixture(scope="module")
def lean_format_run(bundled_lean_dir, bundled_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("twin") / "run"
    result = twin_run(bundled_lean_dir, bundled_dir, out, TASKS,
                      reduction={"max_pairs": 4, "max_reject_inputs": 3})
    assert result.errors == {}, result.errors
    return out


def test_reduce_command_on_a_verina_plus_is_the_runs_lite(lean_format_run: Path, tmp_path):
    plus = load_benchmark(lean_format_run / "plus")[0]
    lite = load_benchmark(lean_format_run / "lite")[0]
    assert [t.id for t in plus] == TASKS and all(lean_sections(t) is not None for t in plus)
    # the reduction did something, so equality below is not equality of copies
    assert sum(len(t.tests) for t in lite) < sum(len(t.tests) for t in plus)
    out = tmp_path / "lite"
    proc = subprocess.run(
        [sys.executable, "-m", "veriscale.cli", "reduce", str(lean_format_run / "plus"),
         "--out", str(out), "--run-dir", str(lean_format_run), "--json"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert tree(out) == tree(lean_format_run / "lite")
    summary = json.loads(proc.stdout)
    assert summary["settings"]["max_pairs"] == 4  # the run's, from its manifest
    assert all(row["kill_matrix"] for row in summary["per_task"].values())


def test_reduce_suite_keeps_originals_and_every_kill(lean_format_run: Path, tmp_path):
    plus = load_benchmark(lean_format_run / "plus")[0]
    settings = ReductionSettings(max_pairs=2, max_reject_inputs=1, keep_original=True)
    reduce_suite(plus, tmp_path / "lite", run_dir=lean_format_run, settings=settings)
    lite = {t.id: t for t in load_benchmark(tmp_path / "lite")[0]}
    for task in plus:
        kills = _kills_by_input(lean_format_run, task)
        kept = [t.input for t in lite[task.id].tests]
        assert all(t.input in kept for t in task.tests if t.provenance == "original")
        every = set().union(*kills.values()) if kills else set()
        assert set().union(*(kills.get(i, set()) for i in kept)) == every
        assert len(lite[task.id].reject_inputs) <= 1


def _kills_by_input(run: Path, task) -> dict:
    from veriscale.pipeline.suites import kill_data

    record = RunDir(run).read_artifact(task.id, "unexpected")
    return kill_data(task.signature, record).kills


def test_reduce_suite_without_a_kill_matrix_keeps_every_pair(bundled_lean_dir, tmp_path):
    tasks = load_benchmark(bundled_lean_dir, TASKS)[0]
    summary = reduce_suite(tasks, tmp_path / "lite", settings=ReductionSettings(max_pairs=1))
    lite = {t.id: t for t in load_benchmark(tmp_path / "lite")[0]}
    for task in tasks:
        assert len(lite[task.id].tests) == len(task.tests)
        assert summary["per_task"][task.id]["kill_matrix"] is False


def test_a_failed_reduce_leaves_the_previous_lite(bundled_lean_dir, tmp_path):
    tasks = load_benchmark(bundled_lean_dir, TASKS)[0]
    out = tmp_path / "lite"
    reduce_suite(tasks, out)
    before = tree(out)
    tasks[1].tests[0].expected = object()  # cannot be encoded
    with pytest.raises(ValueError, match=rf"{tasks[1].id}: test.json\[0\]"):
        reduce_suite(tasks, out)
    assert tree(out) == before
    assert not list(tmp_path.glob(".*staging*"))
