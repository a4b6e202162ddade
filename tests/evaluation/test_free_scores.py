"""No free scores: what nobody could read is never a PASS, and it is reported."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner
from test_evaluation_harness_logic import cand, good_backend, make_task
from test_evaluation_python import GT_CODE, GT_POST, GT_PRE, write_suite

from veriscale.evaluation.harness import evaluate, unscorable
from veriscale.evaluation.scoring import Score
from veriscale.evaluation.solutions import load_solutions

P, U = Score.PASS, Score.UNKNOWN


def test_unreadable_tests_are_never_pass() -> None:
    task = replace(make_task(), tests=[], unreadable={"test.json": "expected a list"})
    assert set(unscorable(task)) == {"code", "precond_sound", "postcond_complete",
                                     "postcond_sound"}
    rep = evaluate(good_backend(), [task], {"t": [cand()]})
    s = rep.tasks[0].samples[0]
    for m in ("code", "precond_sound", "postcond_sound_complete", "code_spec"):
        assert s.metrics[m].lower is not P and s.metrics[m].upper is not P, m
    assert "test.json unreadable" in s.errors["suite"]
    assert any(i.startswith("t: not scored") and "test.json" in i for i in rep.issues)
    assert rep.score("code") == 0.0


def test_zero_tests_is_an_issue_not_a_pass() -> None:
    task = replace(make_task(), tests=[])
    rep = evaluate(good_backend(), [task], {"t": [cand()]})
    assert rep.tasks[0].samples[0].metrics["code"].upper is U
    assert any("no tests" in i for i in rep.issues)


def test_unreadable_reject_inputs_only_withhold_completeness() -> None:
    task = replace(make_task(rejects=False), unreadable={"reject_inputs.json": "bad JSON"})
    s = evaluate(good_backend(), [task], {"t": [cand()]}).tasks[0].samples[0]
    assert s.metrics["precond_complete"].upper is U
    assert s.metrics["precond_sound"].lower is P and s.metrics["code"].lower is P
    # readable and empty stays VERINA's zero-tests PASS
    s = evaluate(good_backend(), [make_task(rejects=False)], {"t": [cand()]}).tasks[0].samples[0]
    assert s.metrics["precond_complete"].lower is P


def test_a_line_that_is_not_utf8_is_reported_and_skipped(tmp_path: Path) -> None:
    from veriscale.backends.datasets import load_benchmark

    tasks, _ = load_benchmark(write_suite(tmp_path / "suite"))
    path = tmp_path / "sol.jsonl"
    path.write_bytes(json.dumps({"task_id": "t_div", "code": GT_CODE}).encode() + b"\n"
                     + b'{"task_id": "t_div", "code": "\xff\xfe"}\n'
                     + json.dumps({"task_id": "t_div", "code": GT_CODE}).encode() + b"\n")
    cands, issues = load_solutions(path, tasks)
    assert [(i.line, i.field) for i in issues] == [(2, "(encoding)")]
    assert "not UTF-8" in issues[0].message
    assert [c.line for c in cands["t_div"]] == [1, 3]


def test_cli_reports_unreadable_tests_and_scores_zero(tmp_path: Path) -> None:
    from veriscale.cli import main

    suite = write_suite(tmp_path / "suite")
    (tmp_path / "suite" / "t_div" / "test.json").write_text('{"not": "a list"}')
    sol = tmp_path / "sol.jsonl"
    sol.write_text(json.dumps({"task_id": "t_div", "code": "def floorDiv(a, b):\n    return 0\n",
                               "precond": GT_PRE, "postcond": GT_POST}) + "\n")
    res = CliRunner().invoke(main, ["evaluate", str(suite), "--solutions", str(sol), "--json",
                                    "-o", "timeout=0.5"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["scores"]["code"]["lower"]["pass@1"] == 0.0
    assert data["scores"]["code"]["upper"]["pass@1"] == 0.0
    assert any("t_div" in i and "test.json" in i for i in data["issues"]), data["issues"]
    res = CliRunner().invoke(main, ["evaluate", str(suite), "--solutions", str(sol)])
    assert res.exit_code == 0 and "not scored" in res.output
