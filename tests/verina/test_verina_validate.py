"""`validate`: planted defects of every kind, the JSON shape and exit codes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from verina_helpers import edit_json, write_dataset

from veriscale.backends.datasets import lint_task_dir, validate_dataset
from veriscale.benchmark.validate import DEFECT_KINDS, ValidationReport
from veriscale.cli import main


def _plant_all(root):
    """toy_2 gets one defect of every kind; toy_1 and toy_3 stay clean."""
    path = root / "toy_2"

    def tests(rows):
        rows[0]["unexpected"].append("71]")              # unparsable: truncated Nat text
        rows[1]["unexpected"].append(-3)                 # ill_typed: negative Nat
        rows[1]["unexpected"].append(0)                  # expected_in_unexpected
        rows.append({"input": {"s": "ab", "xs": [1, 2]}, "expected": 4, "unexpected": []})
        rows.append({"input": {"s": 'say "hi"', "xs": "[]"}, "expected": 8, "unexpected": []})
    edit_json(path / "test.json", tests)

    def rejects(rows):
        rows.append({"input": {"s": "", "xs": "[]"}})    # input_in_both (test row 1)
        rows.append({"input": {"s": "x", "xs": "[0]"}})  # duplicate of reject 0
    edit_json(path / "reject_inputs.json", rejects)


def test_clean_dataset_has_no_defects(tmp_path):
    write_dataset(tmp_path, 3)
    report = validate_dataset(tmp_path)
    assert report.ok
    assert report.to_json() == {
        "tasks": 3, "defects": dict.fromkeys(DEFECT_KINDS, 0), "per_task": {},
        "errors": [], "warnings": [],
    }


def test_every_planted_defect_is_found(tmp_path):
    write_dataset(tmp_path, 3)
    _plant_all(tmp_path)
    report = validate_dataset(tmp_path)
    found = {(d.kind, d.file, d.field) for t in report.tasks for d in t.defects}
    assert found == {
        ("unparsable", "test.json", "[0].unexpected[2]"),
        ("ill_typed", "test.json", "[1].unexpected[1]"),
        ("expected_in_unexpected", "test.json", "[1].unexpected[2]"),
        ("duplicate_input", "test.json", "[3].input"),
        ("render_hazard", "test.json", "[4].input.s"),
        ("input_in_both", "reject_inputs.json", "[1].input"),
        ("duplicate_input", "reject_inputs.json", "[2].input"),
    }
    assert report.per_task() == {"toy_2": {
        "ill_typed": 1, "unparsable": 1, "duplicate_input": 2, "input_in_both": 1,
        "expected_in_unexpected": 1, "render_hazard": 1}}
    assert all(d.task == "toy_2" for t in report.tasks for d in t.defects)
    assert not report.ok


def test_duplicates_are_found_after_canonicalisation(tmp_path):
    write_dataset(tmp_path, 1)

    def dup(rows):  # `[1, 2]` as JSON list, as Lean text with spaces and parentheses
        rows.append({"input": {"s": "ab", "xs": "( [1,  2] )"}, "expected": 4})
    edit_json(tmp_path / "toy_1" / "test.json", dup)
    (task,) = validate_dataset(tmp_path).tasks
    assert [(d.kind, d.field) for d in task.defects] == [("duplicate_input", "[3].input")]


@pytest.mark.parametrize(
    ("t", "raw"),
    [("String", "a\\qb"), ("String", "bell\x07"), ("Char", "ab"), ("Char", "'"),
     ("List String", ["a"])],
)
def test_render_hazards_are_found(tmp_path, t, raw):
    write_dataset(tmp_path, 1)
    path = tmp_path / "toy_1"

    def retype(meta):
        meta["signature"]["parameters"][0]["param_type"] = t
    edit_json(path / "task.json", retype)
    edit_json(path / "test.json", lambda rows: [
        {"input": {"s": raw, "xs": "[]"}, "expected": 0, "unexpected": []}])
    edit_json(path / "reject_inputs.json", lambda rows: [])
    (task,) = validate_dataset(tmp_path).tasks
    assert "render_hazard" in {d.kind for d in task.defects}


@pytest.mark.parametrize(("t", "raw"), [("String", "line\nbreak"), ("String", "tab\there"),
                                        ("List Float", [1e-05, 2.5e20])])
def test_what_leans_lexer_accepts_is_no_hazard(tmp_path, t, raw):
    """Raw newlines/tabs in a string and e-notation floats are Lean literals as they are."""
    write_dataset(tmp_path, 1)
    path = tmp_path / "toy_1"

    def retype(meta):
        meta["signature"]["parameters"][0]["param_type"] = t
    edit_json(path / "task.json", retype)
    edit_json(path / "test.json", lambda rows: [
        {"input": {"s": raw, "xs": "[]"}, "expected": 0, "unexpected": []}])
    edit_json(path / "reject_inputs.json", lambda rows: [])
    (task,) = validate_dataset(tmp_path).tasks
    assert "render_hazard" not in {d.kind for d in task.defects}, task.defects


def test_unloadable_task_is_an_error_not_a_crash(tmp_path):
    write_dataset(tmp_path, 2)
    (tmp_path / "toy_1" / "task.json").write_text("{", encoding="utf-8")
    report = ValidationReport([lint_task_dir(d) for d in sorted(tmp_path.iterdir())])
    assert [e.kind for e in report.errors] == ["bad_json"]
    assert report.errors[0].task == "toy_1"
    assert [t.loaded for t in report.tasks] == [False, True]
    assert not report.ok


def test_cli_json_shape_and_exit_codes(tmp_path):
    runner = CliRunner()
    write_dataset(tmp_path, 2)
    clean = runner.invoke(main, ["validate", str(tmp_path), "--json"])
    assert clean.exit_code == 0, clean.output
    assert json.loads(clean.output)["defects"] == dict.fromkeys(DEFECT_KINDS, 0)

    _plant_all(tmp_path)
    dirty = runner.invoke(main, ["validate", str(tmp_path), "--json"])
    assert dirty.exit_code == 1
    data = json.loads(dirty.output)
    assert set(data) == {"tasks", "defects", "per_task", "errors", "warnings"}
    assert data["tasks"] == 2
    assert data["defects"]["duplicate_input"] == 2
    assert data["per_task"]["toy_2"]["render_hazard"] == 1
    detailed = json.loads(runner.invoke(main, ["validate", str(tmp_path), "--json",
                                               "--details"]).output)
    assert len(detailed["details"]) == 7
    assert {"task", "file", "field", "kind", "message"} == set(detailed["details"][0])

    text = runner.invoke(main, ["validate", str(tmp_path)])
    assert text.exit_code == 1
    assert "toy_2" in text.output and "total" in text.output

    (tmp_path / "empty").mkdir()
    not_a_dataset = runner.invoke(main, ["validate", str(tmp_path / "empty")])
    assert not_a_dataset.exit_code == 2
    assert runner.invoke(main, ["validate", str(tmp_path / "nowhere")]).exit_code == 2


def test_verina_lint(verina_dir):
    report = validate_dataset(verina_dir)
    assert len(report.tasks) == 189 and all(t.loaded for t in report.tasks)
    assert not report.errors
    assert report.totals() == {**dict.fromkeys(DEFECT_KINDS, 0), "duplicate_input": 1}
    assert report.per_task() == {"verina_advanced_72": {"duplicate_input": 1}}
    assert {w.task for w in report.warnings} == {"verina_advanced_31", "verina_advanced_74"}


def test_id_differing_from_folder_is_a_warning(tmp_path):
    from verina_helpers import make_task

    from veriscale.backends.lean.format import write_task_dir

    write_task_dir(make_task("toy_1"), tmp_path / "renamed")
    report = validate_dataset(tmp_path)
    assert report.ok
    assert [(w.task, w.kind) for w in report.warnings] == [("renamed", "id_mismatch")]


def test_duplicates_are_judged_by_the_pipelines_input_key():
    """One NaN is one input however it is written; 0.0 and -0.0 are two inputs (a
    program that divides by them tells them apart), as the pipeline dedupes them: the
    full Lean run's Plus of verina_basic_63 holds both thresholds 0.0 and -0.0."""
    from veriscale.benchmark.model import Signature
    from veriscale.benchmark.validate import suite_defects

    sig = Signature.from_json({"name": "f", "return_type": "Bool", "parameters": [
        {"param_name": "xs", "param_type": "List Float"},
        {"param_name": "t", "param_type": "Float"}]})
    rejects = [{"input": {"xs": "[(0.0 / 0.0), 1.0]", "t": 0.0}},
               {"input": {"xs": "[(0.0 / 0.0), 1.0]", "t": -0.0}},
               {"input": {"xs": "[Float.nan, 1.0]", "t": 0.0}}]
    got = suite_defects("fl", sig, [], rejects)
    assert [(d.kind, d.field, d.message) for d in got] == [
        ("duplicate_input", "[2].input", "same input as reject_inputs.json[0]")]
