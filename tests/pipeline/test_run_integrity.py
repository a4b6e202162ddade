"""Run-directory integrity: lock, exit status, suites only replaced when complete,
backend detection, one default per knob."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from veriscale.pipeline.config import RunConfig, detect_backend, load_config
from veriscale.pipeline.run import Pipeline, run_pipeline
from veriscale.rundir import RunDir, RunDirLocked

TASKS = ["vs_argmax", "vs_divmod"]
SMALL = {
    "seed": 1, "tasks": TASKS,
    "seeds": {"candidates_per_round": 3},
    "mutation": {"max_mutations_per_input": 1, "max_candidates_per_task": 15},
    "adversaries": {"max_specs": 2, "max_adver_impl": 1},
    "report": {"time_evaluation": "off"},
}


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "veriscale.cli", *args], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})


def test_backend_is_detected_when_the_config_names_none(bundled_dir, bundled_lean_dir,
                                                        tmp_path):
    config = load_config(None)
    assert config.backend is None
    assert Pipeline(bundled_lean_dir, tmp_path / "a", config).config.backend == "lean"
    assert Pipeline(bundled_dir, tmp_path / "b", config).config.backend == "python"
    named = RunConfig(backend="python")
    assert Pipeline(bundled_lean_dir, tmp_path / "c", named).config.backend == "python"
    assert detect_backend(bundled_lean_dir, ["vs_argmax"]) == "lean"


def test_a_config_file_without_backend_still_detects(bundled_lean_dir, tmp_path):
    path = tmp_path / "run.toml"
    path.write_text("seed = 3\n[mutation]\nmax_mutations_per_input = 1\n")
    config = load_config(path)
    assert Pipeline(bundled_lean_dir, tmp_path / "r", config).config.backend == "lean"


def test_second_run_on_a_locked_directory_is_refused(bundled_dir, tmp_path):
    out = tmp_path / "run"
    holder = RunDir(out)
    holder.lock()
    (out / ".candidates.json.123.tmp").write_text("live temporary of the other run")
    try:
        proc = cli("run", str(bundled_dir), "--out", str(out), "--tasks", "vs_argmax")
    finally:
        holder.unlock()
    assert proc.returncode == 3, proc.stderr
    assert f"process {os.getpid()}" in proc.stderr.replace("\n", " ")
    assert (out / ".candidates.json.123.tmp").exists()  # the other run's file is untouched
    with pytest.raises(RunDirLocked):
        RunDir(out).remove_stale_temporaries()


@pytest.fixture(scope="module")
def good_run(bundled_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("good") / "run"
    result = run_pipeline(bundled_dir, out, RunConfig.model_validate(SMALL),
                          console=Console(quiet=True))
    assert result.errors == {}
    return out


def test_failed_rebuild_keeps_the_previous_suites(good_run: Path, bundled_dir, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    before = {n: tree(run / n) for n in ("plus", "lite")}
    # an artifact of the right fingerprint and shape holding a value that does not decode
    path = run / "tasks" / "vs_divmod" / "outputs.json"
    doc = json.loads(path.read_text())
    pair = doc["data"]["pairs"][0]
    doc["data"]["pairs"][0] = {**pair, "input": {k: "not a value" for k in pair["input"]}}
    path.write_text(json.dumps(doc))
    result = run_pipeline(bundled_dir, run, RunConfig.model_validate(SMALL),
                          console=Console(quiet=True))
    assert set(result.errors) == {"vs_divmod"}
    assert {n: tree(run / n) for n in ("plus", "lite")} == before
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["suites_kept_from_previous_run"] == ["plus", "lite"]


def test_a_failed_task_exits_nonzero_naming_task_and_stage(bundled_dir, tmp_path):
    bench = tmp_path / "bench"
    for t in TASKS:
        shutil.copytree(bundled_dir / t, bench / t)
    (bench / "vs_divmod" / "test.json").write_text('{"not": "a list"}')
    config = tmp_path / "c.json"
    config.write_text(json.dumps({k: v for k, v in SMALL.items() if k != "tasks"}))
    proc = cli("run", str(bench), "--out", str(tmp_path / "run"), "--config", str(config))
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "vs_divmod: stage load" in proc.stderr
    plus = {p.name for p in (tmp_path / "run" / "plus").iterdir()}
    assert plus == {"vs_argmax"}  # no previous suite: the partial one is written, and said so


def test_one_default_per_reduction_knob():
    from veriscale.pipeline.config import ReductionSettings
    from veriscale.reduction.pairs import KEEP_ORIGINAL, reduce_pairs

    assert ReductionSettings().keep_original is KEEP_ORIGINAL
    rows = [(0, {"a"}, 1, None, True), (1, {"a"}, 5, None, False)]
    assert reduce_pairs(rows, budget=1).selected == [0]  # the default keeps the original


def rerun_resumed(good_run: Path, bundled_dir: Path, tmp_path: Path, **change) -> dict:
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    settings = json.loads(json.dumps(SMALL))
    for section, knobs in change.items():
        settings.setdefault(section, {}).update(knobs)
    result = run_pipeline(bundled_dir, run, RunConfig.model_validate(settings),
                          console=Console(quiet=True))
    assert result.errors == {}
    return json.loads((run / "manifest.json").read_text())["resumed_tasks"]


def test_a_changed_knob_redoes_only_the_stages_that_read_it(good_run, bundled_dir, tmp_path):
    resumed = rerun_resumed(good_run, bundled_dir, tmp_path,
                            adversaries={"require_flawed_acceptance": True})
    n = len(TASKS)
    assert resumed == {"candidates": n, "classify": n, "outputs": n, "adversaries": n,
                       "unexpected": 0}


def test_backend_options_are_in_the_adversaries_fingerprint(good_run, bundled_dir, tmp_path):
    resumed = rerun_resumed(good_run, bundled_dir, tmp_path, backend_options={"timeout": 3.0})
    assert resumed["candidates"] == len(TASKS)
    assert resumed["classify"] == resumed["adversaries"] == resumed["unexpected"] == 0


def test_oracle_cache_serves_a_rerun_and_counts(good_run, bundled_dir, tmp_path):
    first = json.loads((good_run / "manifest.json").read_text())["oracle_cache"]
    assert first["enabled"] and first["misses"] > 0
    # a fresh run directory with the first run's cache: every oracle item is a hit
    run = tmp_path / "again"
    run.mkdir()
    shutil.copy(good_run / "oracle_cache.sqlite", run / "oracle_cache.sqlite")
    result = run_pipeline(bundled_dir, run, RunConfig.model_validate(SMALL),
                          console=Console(quiet=True))
    assert result.oracle_cache["misses"] == 0 and result.oracle_cache["hits"] > 0
    assert tree(run / "plus") == tree(good_run / "plus")
    # one knob changed: only the new candidates are asked
    changed = json.loads(json.dumps(SMALL))
    changed["mutation"]["max_candidates_per_task"] = 25
    result = run_pipeline(bundled_dir, run, RunConfig.model_validate(changed),
                          console=Console(quiet=True))
    stats = result.oracle_cache
    assert 0 < stats["misses"] < stats["hits"]


def test_no_cache_asks_the_oracle(bundled_dir, tmp_path):
    result = run_pipeline(bundled_dir, tmp_path / "r", RunConfig.model_validate(
        {**SMALL, "tasks": ["vs_argmax"]}), console=Console(quiet=True), cache=False)
    assert result.oracle_cache == {"enabled": False}
    assert not (tmp_path / "r" / "oracle_cache.sqlite").exists()


def test_a_read_only_run_directory_is_one_clear_error(good_run, bundled_dir, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    shutil.rmtree(run / "tasks" / "vs_divmod")  # something must be redone
    if subprocess.run(["chattr", "+i", str(run)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i needs CAP_LINUX_IMMUTABLE")
    try:
        config = tmp_path / "c.json"
        config.write_text(json.dumps(SMALL))
        proc = cli("run", str(bundled_dir), "--out", str(run), "--config", str(config))
    finally:
        subprocess.run(["chattr", "-i", str(run)], check=True)
    assert proc.returncode == 5, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert f"cannot write the run directory {run}" in proc.stderr.replace("\n", "")


def test_a_stopped_run_keeps_what_its_finished_stages_cost(bundled_dir, tmp_path, monkeypatch):
    """A run stopped after its expansion (a kill, a session's end) has written, stage by
    stage, what each finished stage cost; the resumed run reports those costs as the
    stages' computed time, not its own few milliseconds of reading records."""
    run = tmp_path / "run"

    def stop(self, lite=True):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(Pipeline, "build_suites", stop)
        with pytest.raises(KeyboardInterrupt):
            run_pipeline(bundled_dir, run, RunConfig.model_validate(SMALL),
                         console=Console(quiet=True), report=False)
    first = json.loads((run / "manifest.json").read_text())["timings_computed"]
    stages = ("candidates", "classify", "outputs", "adversaries", "unexpected")
    assert set(stages) <= set(first)
    # the cost of the records as computed: the stages' sum, not this run's total
    assert first["total"] == pytest.approx(sum(v for k, v in first.items() if k != "total"),
                                           abs=0.01)
    run_pipeline(bundled_dir, run, RunConfig.model_validate(SMALL), console=Console(quiet=True),
                 report=False)
    manifest = json.loads((run / "manifest.json").read_text())
    assert all(manifest["resumed_tasks"][s] == len(TASKS) for s in stages)
    assert {s: manifest["timings_computed"][s] for s in stages} == {s: first[s] for s in stages}
    computed = manifest["timings_computed"]
    assert computed["total"] == pytest.approx(
        sum(v for k, v in computed.items() if k != "total"), abs=0.01)
    assert computed["total"] > manifest["timings"]["total"]  # this run resumed all of it
