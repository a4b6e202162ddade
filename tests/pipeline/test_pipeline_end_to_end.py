"""`veriscale run` end to end on bundled tasks with the Python backend and offline provider."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from veriscale.backends.datasets import load_benchmark

TASKS = "vs_argmax,vs_binary_search,vs_rotate_list,vs_most_frequent,vs_divmod"
CONFIG = """
seed = 7
[mutation]
max_mutations_per_input = 4
[seeds]
candidates_per_round = 12
"""


def run_cli(args: list[str], hashseed: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    return subprocess.run(
        [sys.executable, "-m", "veriscale.cli", *args],
        env=env, capture_output=True, text=True, timeout=timeout,
    )


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def config_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "run.toml"
    path.write_text(CONFIG)
    return path


@pytest.fixture(scope="module")
def first_run(bundled_dir: Path, config_file: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run") / "r1"
    proc = run_cli(["run", str(bundled_dir), "--out", str(out), "--config", str(config_file),
                    "--tasks", TASKS, "--log", str(out.parent / "logs" / "run.log")],
                   hashseed="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_the_log_option_keeps_each_stage_with_its_counts(first_run: Path):
    lines = (first_run.parent / "logs" / "run.log").read_text().splitlines()
    stages = [line for line in lines if " INFO stage " in line]
    for name in ("candidates", "classify", "outputs", "unexpected"):
        assert any(f"stage {name}: " in line for line in stages), (name, lines[:20])
    assert not (first_run / "run.log").exists()


def test_run_writes_every_output(first_run: Path):
    for name in ("plus", "lite", "original", "manifest.json", "report.md"):
        assert (first_run / name).exists(), name
    manifest = json.loads((first_run / "manifest.json").read_text())
    assert manifest["seed"] == 7 and manifest["errors"] == {} and manifest["degraded"] == {}
    assert set(manifest["tasks"]) == set(TASKS.split(","))
    assert manifest["backend_stats"]["name"] == "python"
    for task in TASKS.split(","):
        matrix = json.loads((first_run / "tasks" / task / "unexpected.json").read_text())
        assert matrix["data"]["kill_matrix"], task


def test_the_run_measures_the_reference_coverage_of_each_suite(first_run: Path):
    """The paper keeps 100 % code coverage; the run says how much each suite keeps."""
    from veriscale.evaluation.coverage import suite_coverage

    cov = json.loads((first_run / "manifest.json").read_text())["code_coverage"]
    assert cov["available"] and set(cov["suites"]) == {"original", "plus", "lite"}
    for name, got in cov["suites"].items():
        assert got["tasks"] == got["tasks_measured"] == len(TASKS.split(",")), name
        assert 0 < got["lines_covered"] <= got["lines_total"], name
    plus, lite = cov["suites"]["plus"], cov["suites"]["lite"]
    assert plus["lines_covered"] >= cov["suites"]["original"]["lines_covered"]
    alone = suite_coverage(first_run / "lite", None, {})  # what `veriscale coverage` says
    assert (alone["lines_covered"], alone["branches_covered"]) == (
        lite["lines_covered"], lite["branches_covered"])
    text = (first_run / "report.md").read_text()
    section = text.split("## Code coverage of the reference", 1)[1].split("\n## ", 1)[0]
    assert f"{plus['lines_covered']}/{plus['lines_total']}" in section


def test_same_bytes_under_another_hash_seed(first_run: Path, bundled_dir: Path,
                                            config_file: Path, tmp_path: Path):
    out = tmp_path / "r2"
    proc = run_cli(["run", str(bundled_dir), "--out", str(out), "--config", str(config_file),
                    "--tasks", TASKS], hashseed="12345")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert tree(out / "plus") == tree(first_run / "plus")
    assert tree(out / "lite") == tree(first_run / "lite")


def test_produced_suites_validate_and_verify(first_run: Path):
    for suite in ("plus", "lite"):
        proc = run_cli(["validate", str(first_run / suite), "--json"], hashseed="0")
        report = json.loads(proc.stdout)
        assert proc.returncode == 0, report
        assert sum(report["defects"].values()) == 0
        proc = run_cli(["verify", str(first_run / suite), "--backend", "python", "--json"],
                       hashseed="0")
        result = json.loads(proc.stdout)
        assert proc.returncode == 0, result.get("disagreements")
        for kind, counts in result["checks"].items():
            assert counts["disagree"] == 0, kind
        # every kept unexpected output is rejected by the GT postcondition
        assert result["checks"]["postcond_rejects_unexpected"]["agree"] > 0


def test_lite_is_smaller_and_keeps_kills(first_run: Path):
    for task in TASKS.split(","):
        plus = json.loads((first_run / "plus" / task / "test.json").read_text())
        lite = json.loads((first_run / "lite" / task / "test.json").read_text())
        assert len(lite) <= max(50, 0) or len(lite) <= len(plus)
        lite_inputs = {json.dumps(r["input"], sort_keys=True) for r in lite}
        plus_inputs = {json.dumps(r["input"], sort_keys=True) for r in plus}
        assert lite_inputs <= plus_inputs
        # the records hold values in their own neutral form: compared decoded
        (lite_task,), _ = load_benchmark(first_run / "lite", [task])
        sig, lite_values = lite_task.signature, {t.input for t in lite_task.tests}
        cells = json.loads((first_run / "tasks" / task / "unexpected.json").read_text())
        killed = {c["adversary"] for c in cells["data"]["kill_matrix"] if c.get("killed")}
        killed_by_lite = {
            c["adversary"] for c in cells["data"]["kill_matrix"]
            if c.get("killed") and sig.load_input(c["input"]) in lite_values
        }
        assert killed_by_lite == killed, task


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_result(first_run: Path, bundled_dir: Path,
                                               config_file: Path, tmp_path: Path):
    out = tmp_path / "r3"
    env = {**os.environ, "PYTHONHASHSEED": "99"}
    args = [sys.executable, "-m", "veriscale.cli", "run", str(bundled_dir), "--out", str(out),
            "--config", str(config_file), "--tasks", TASKS]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    # kill it once some stage artifacts exist, mid-run
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list((out / "tasks").glob("*/classify.json"))) >= 2:
            break
        time.sleep(0.05)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for path in out.rglob("*.json"):  # temporaries aside, every file is whole
        json.loads(path.read_text())
    done = run_cli(args[3:], hashseed="7")
    assert done.returncode == 0, done.stderr[-3000:]
    assert not list(out.rglob("*.tmp")) and not list(out.glob(".*staging"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert sum(manifest["resumed_tasks"].values()) > 0
    assert tree(out / "plus") == tree(first_run / "plus")
    assert tree(out / "lite") == tree(first_run / "lite")


def test_the_ground_truth_passes_every_suite_it_wrote(first_run: Path):
    from gt_suites import ground_truth_misses
    from veriscale.backends.python.backend import PythonBackend

    with PythonBackend(workers=2) as backend:
        for suite in ("original", "plus", "lite"):
            assert ground_truth_misses(backend, first_run / suite) == [], suite
    manifest = json.loads((first_run / "manifest.json").read_text())
    assert manifest["contradicted_rows"] == {}


def test_the_audit_flags_only_tasks_that_allow_several_answers(first_run: Path):
    """The bundled tasks' ground truths are sound: what the audit finds is an
    adversary's other valid answer (any index of the maximum, any most frequent
    element), on tasks whose descriptions say so."""
    data = json.loads((first_run / "audit.json").read_text())
    assert data["tasks"] == 5
    kinds = {(f["task"], f["kind"]) for f in data["findings"]}
    assert ("vs_argmax", "postcondition_accepts_other_output") in kinds
    assert all(f["several_answers"] for f in data["findings"]), data["findings"]
    assert "## Ground-truth audit" in (first_run / "report.md").read_text()
