"""The run report: Table 1, per-task kill figures, timings, robustness to missing pieces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from veriscale.artifacts import AdversariesArtifact, ReductionArtifact, UnexpectedArtifact
from veriscale.backends.lean import format as verina
from veriscale.backends.lean.sections import LeanSections
from veriscale.benchmark.model import ExpectedPair, Signature, Task
from veriscale.report.build import build_report, write_report
from veriscale.report.report import NOT_AVAILABLE, collect, render_markdown

SIG = Signature.from_json({
    "name": "f",
    "parameters": [{"param_name": "xs", "param_type": "List Int"},
                   {"param_name": "k", "param_type": "Nat"}],
    "return_type": "Int",
})
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def make_task(task_id: str, n_tests: int, n_unexp: int, n_rejects: int, start: int = 0) -> Task:
    tests = [ExpectedPair(((i,), i), i, [i + 100 + j for j in range(n_unexp)],
                      "original" if i < 2 else "mutation")
             for i in range(start, start + n_tests)]
    rejects = [((-j, j), j) for j in range(1, n_rejects + 1)]
    lean = LeanSections(code="xs.length + k", postcond="True", precond="k > 0")
    return Task(task_id, "A test task.\n", SIG, tests, rejects, sections={"lean": lean})


def write_suite(root: Path, tasks: list[Task]) -> None:
    for task in tasks:
        verina.write_task_dir(task, root / task.id)


def save(run: Path, task: str, record) -> None:
    """Stage records written as the pipeline writes them (the report reads only those)."""
    from veriscale.rundir import RunDir

    RunDir(run).save_artifact(task, record.STAGE, "x", record)


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    # original: t1 (2 pairs, 1 unexp each, 1 reject), t2 (4 pairs, 2 each, 0 rejects)
    write_suite(run / "original", [make_task("t1", 2, 1, 1), make_task("t2", 4, 2, 0)])
    # plus: t1 10 pairs x 3, 8 rejects; t2 20 pairs x 2, 2 rejects
    write_suite(run / "plus", [make_task("t1", 10, 3, 8), make_task("t2", 20, 2, 2)])
    # lite: t1 keeps inputs 0..3, t2 keeps 5 pairs
    write_suite(run / "lite", [make_task("t1", 4, 3, 4), make_task("t2", 5, 2, 2)])
    t1 = run / "tasks" / "t1"
    t1.mkdir(parents=True)
    # the adversaries stage records compile errors (None = compiled)
    adversaries = [
        {"id": "a1", "strategy": "constant", "origin": "offline", "compile_error": None},
        {"id": "a2", "strategy": "echo", "origin": "offline", "compile_error": None},
        {"id": "a3", "strategy": "near_miss", "origin": "offline", "compile_error": None},
        {"id": "a4", "strategy": "broken", "origin": "llm", "compile_error": "bad syntax"},
    ]
    save(run, "t1", AdversariesArtifact(adversaries=adversaries))
    kill_matrix = [
        {"input": SIG.dump_input(((0,), 0)), "adversary": "a1", "killed": True},
        {"input": SIG.dump_input(((1,), 1)), "adversary": "a1", "killed": True},
        {"input": SIG.dump_input(((2,), 2)), "adversary": "a2", "killed": True},
        {"input": SIG.dump_input(((8,), 8)), "adversary": "a3", "killed": True},
        {"input": SIG.dump_input(((9,), 9)), "adversary": "a2", "killed": False},
    ]
    save(run, "t1", UnexpectedArtifact(rows=[], kill_matrix=kill_matrix))
    save(run, "t1", ReductionArtifact(
        pairs={"set_cover_count": 3, "set_cover_exceeds_budget": False,
               "covered_count": 3, "universe_size": 3},
        reject_inputs={"stage_counts": {"critical_boundary": 2, "diversity_fill": 2}},
    ))
    manifest = {
        "benchmark": "/data/bench", "seed": 7, "config": {"backend": "python", "seed": 7},
        "versions": {"python": "3.11", "veriscale": "0.1.0"},
        "tasks": ["t1", "t2", "t3"],
        "errors": {"t3": {"stage": "classify", "error": "ValueError: boom | bad"}},
        "timings": {"candidates": 1.5, "classify": 3.0, "suites": 0.5, "total": 5.0},
        "counts": {"classify": {"expected": 30, "unexpected": 10}},
        "backend_stats": {"name": "python", "processes": 4, "checks": 120, "seconds": 2.5},
        "llm_usage": {"calls": 0, "by_role": {"seeds": {"prompt_tokens": 12}}},
        "evaluation_time": {
            "original": {"tasks": 2, "seconds": 0.5, "code_seconds": 0.2, "spec_seconds": 0.3,
                         "gt_pass_rate": {"code": 1.0}},
            "plus": {"tasks": 2, "seconds": 4.0, "code_seconds": 1.0, "spec_seconds": 3.0,
                     "gt_pass_rate": {"code": 1.0}},
        },
        "code_coverage": {"available": True, "suites": {"plus": {
            "tasks": 2, "tasks_measured": 2, "lines_covered": 10, "lines_total": 10,
            "line_coverage": 1.0, "branches_covered": 4, "branches_total": 4,
            "branch_coverage": 1.0, "tasks_fully_covered": 2, "not_available": []}}},
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_table1_numbers_and_multipliers(run_dir: Path):
    report = collect(run_dir)
    t1 = report.table1
    assert t1["original"]["pairs"]["mean"] == 3.0
    assert (t1["original"]["pairs"]["min"], t1["original"]["pairs"]["max"]) == (2, 4)
    assert t1["plus"]["pairs"]["mean"] == 15.0
    assert t1["plus"]["unexpected_outputs"]["total"] == 10 * 3 + 20 * 2
    assert t1["lite"]["unexpected_inputs"]["mean"] == 3.0
    assert report.multipliers("plus")["unexpected_inputs"] == pytest.approx(10.0)
    text = render_markdown(report)
    assert "| Plus (2 tasks) | 15.00 (10–20) (×5.00) |" in text
    assert "3.00 (2–4) |" in text  # original pairs, no multiplier
    # original unexpected inputs: mean 0.5; Plus 5.0 -> ×10.00
    assert "5.00 (2–8) (×10.00)" in text


def test_per_task_kill_figures(run_dir: Path):
    report = collect(run_dir)
    figs = {f.task_id: f for f in report.tasks}
    assert list(figs) == ["t1", "t2", "t3"]
    t1 = figs["t1"]
    assert (t1.adversaries_tried, t1.adversaries_compiled, t1.adversaries_killing) == (4, 3, 3)
    # Lite keeps inputs 0..3: kills a1 (0, 1) and a2 (2), not a3 (8)
    assert t1.adversaries_killed_by_lite == 2
    assert t1.lite_kill_coverage == pytest.approx(2 / 3)
    assert t1.reject_stages == {"critical_boundary": 2, "diversity_fill": 2}
    assert figs["t2"].adversaries_tried is None and figs["t2"].lite_kill_coverage is None
    assert figs["t3"].volumes == {}
    text = render_markdown(report)
    assert "| t1 | 2 / 10 / 4 | 2 / 30 / 12 | 1 / 8 / 4 | 4 / 3 / 3 | 66.7% (2/3) |" in text
    assert "| t3 | — / — / — |" in text


def test_report_file_plots_and_sections(run_dir: Path):
    path = write_report(run_dir)
    assert path == run_dir / "report.md"
    text = path.read_text(encoding="utf-8")
    for png in ("volumes.png", "kill_coverage.png", "timings.png"):
        assert (run_dir / png).read_bytes()[:8] == PNG_MAGIC
        assert f"]({png})" in text
    assert "| classify | 3.00 | 60.0% |" in text
    assert "| processes | 4 |" in text
    assert "| by_role.seeds.prompt_tokens | 12 |" in text
    assert "ValueError: boom \\| bad" in text  # table cells are escaped
    assert "expected=30, unexpected=10" in text
    assert "| plus | 2 | 4.00 | ×8.00 | 1.00 | 3.00 | yes |" in text
    assert "| plus | 2/2 | 10/10 (100.0%) | 4/4 (100.0%) | 2 |" in text
    assert NOT_AVAILABLE not in text


def test_adversaries_from_unexpected_stage_when_adversaries_json_is_missing(run_dir: Path):
    (run_dir / "tasks" / "t1" / "adversaries.json").unlink()
    save(run_dir, "t2", UnexpectedArtifact(
        adversaries=[{"id": "b1", "compiled": True, "kills": 2},
                     {"id": "b2", "compiled": True, "kills": 0},
                     {"id": "b3", "compiled": False, "kills": 0}],
        kill_matrix=[{"input": SIG.dump_input(((0,), 0)), "adversary": "b1", "killed": True},
                     {"input": SIG.dump_input(((1,), 1)), "adversary": "b2",
                      "killed": False}],
    ))
    figs = {f.task_id: f for f in collect(run_dir).tasks}
    assert figs["t1"].adversaries_tried is None and figs["t1"].adversaries_killing == 3
    t2 = figs["t2"]
    assert (t2.adversaries_tried, t2.adversaries_compiled, t2.adversaries_killing) == (3, 2, 1)


def test_missing_pieces_say_not_available(tmp_path: Path):
    run = tmp_path / "empty_run"
    run.mkdir()
    path, report = build_report(run)
    text = path.read_text(encoding="utf-8")
    assert report.tasks == [] and report.plots == []
    assert text.count(NOT_AVAILABLE) >= 6
    assert "Manifest: _not available_" in text

    # only a plus suite and a corrupt manifest: Table 1 shows plus, others n/a
    write_suite(run / "plus", [make_task("t1", 3, 1, 0)])
    (run / "manifest.json").write_text("{not json")
    (run / "tasks" / "t1").mkdir(parents=True)
    (run / "tasks" / "t1" / "adversaries.json").write_text("garbage")
    text = write_report(run, plots=False).read_text(encoding="utf-8")
    assert "| Original | not available |" in text
    assert "| Plus (1 tasks) | 3.00 (3–3) (×—)" not in text  # no original: no multiplier
    assert "| Plus (1 tasks) | 3.00 (3–3) |" in text
    assert not (run / "volumes.png").exists()


def test_report_command(run_dir: Path):
    from veriscale.cli import main

    result = CliRunner().invoke(main, ["report", str(run_dir), "--no-plots"])
    assert result.exit_code == 0, result.output
    assert str(run_dir / "report.md") in result.output
    assert "Table 1" in result.output
    assert "Lite kill coverage: mean 66.7%" in result.output
    assert not (run_dir / "volumes.png").exists()


def test_volumes_count_stored_rows_even_when_a_value_does_not_decode(run_dir: Path):
    test_json = run_dir / "plus" / "t2" / "test.json"
    rows = json.loads(test_json.read_text(encoding="utf-8"))
    rows.append({"input": {"xs": "not a list", "k": -1}, "expected": 0, "unexpected": [1]})
    test_json.write_text(json.dumps(rows), encoding="utf-8")
    report = collect(run_dir)
    assert report.load_issue_counts["plus"] >= 1
    figs = {f.task_id: f for f in report.tasks}
    assert figs["t2"].volumes["plus"]["pairs"] == 21
    assert report.table1["plus"]["pairs"]["max"] == 21


def test_timings_show_oracle_processes_per_stage_and_task(tmp_path) -> None:
    from veriscale.report.report import RunReport, render_timings

    manifest = {"tasks": ["a", "b"], "timings": {"classify": 10.0, "outputs": 5.0, "total": 15.0},
                "backend_stats_by_stage": {"classify": {"processes": 3.0, "checks": 4000.0},
                                           "outputs": {"processes": 1.0, "checks": 900.0}}}
    lines = render_timings(RunReport(tmp_path, manifest, {}, {}, [], {}))
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in lines if line.startswith("| ") and "---" not in line}
    assert rows["classify"] == ["10.00", "66.7%", "3", "1.50", "4000"]
    assert rows["total"][2:] == ["4", "2.00", "4900"]


def test_stage_counts_show_the_oracles_unknown_verdicts_by_cause(tmp_path) -> None:
    from veriscale.report.report import RunReport, render_counts

    manifest = {"counts": {"outputs": {"pairs": 5, "gt_postcondition_unknown": 2}},
                "backend_stats_by_stage": {"outputs": {
                    "processes": 1.0, "checks": 9.0,
                    "unknown gt postcondition: stuck reduction": 2.0}}}
    (row,) = [line for line in render_counts(RunReport(tmp_path, manifest, {}, {}, [], {}))
              if line.startswith("| outputs")]
    assert "gt_postcondition_unknown=2" in row
    assert "unknown gt postcondition: stuck reduction=2" in row and "processes" not in row


def test_the_coverage_section_says_why_when_a_language_cannot_measure(tmp_path: Path) -> None:
    from veriscale.report.report import RunReport, render_coverage

    def section(manifest: dict) -> str:
        return "\n".join(render_coverage(RunReport(tmp_path, manifest, {}, {}, [], {})))

    assert NOT_AVAILABLE in section({})
    why = "Coq runs the reference by reduction (Compute), which reports no per-line execution"
    assert why in section({"code_coverage": {"available": False, "reason": why}})
    text = section({"code_coverage": {"available": True, "suites": {
        "plus": {"tasks": 2, "tasks_measured": 2, "lines_covered": 9, "lines_total": 10,
                 "line_coverage": 0.9, "branches_covered": 3, "branches_total": 4,
                 "branch_coverage": 0.75, "tasks_fully_covered": 1, "not_available": []},
        "lite": {"error": "sandbox gone"}}}})
    assert "| plus | 2/2 | 9/10 (90.0%) | 3/4 (75.0%) | 1 |" in text
    assert "not measured: sandbox gone" in text
