"""Adding a language is one folder plus one registration (issue 33): a toy expression
language (``toy_language/``, beside this test, outside the package) is registered and a
one-task benchmark of it goes through the whole pipeline (classify, outputs,
adversaries, Plus and Lite, report) with no other change to VeriScale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from veriscale.backends import language
from veriscale.backends.datasets import load_benchmark, validate_dataset
from veriscale.backends.registry import backend_names
from veriscale.pipeline.config import RunConfig
from veriscale.pipeline.run import run_pipeline
from veriscale.rundir import RunDir


@pytest.fixture
def toy_language(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(language, "_PLUGINS", dict(language._PLUGINS))  # undone after
    language.register_language("expr", "toy_language.plugin", "PLUGIN")
    return "expr"


def write_task(root: Path) -> Path:
    task = root / "bench" / "double"
    task.mkdir(parents=True)
    signature = {"name": "double", "parameters": [{"param_name": "x", "param_type": "Int"}],
                 "return_type": "Int"}
    (task / "task.json").write_text(json.dumps({"id": "double", "signature": signature}))
    (task / "description.txt").write_text("Twice a natural number.\n")
    (task / "task.expr").write_text("@precond\nx >= 0\n@code\nx * 2\n@postcond\n"
                                    "result == x * 2\n")
    (task / "test.json").write_text(json.dumps(
        [{"input": {"x": 3}, "expected": 6, "unexpected": [5]}]))
    (task / "reject_inputs.json").write_text(json.dumps([{"input": {"x": -2}}]))
    return task.parent


def test_a_registered_language_is_found_everywhere(toy_language: str, tmp_path: Path) -> None:
    bench = write_task(tmp_path)
    assert toy_language in language.languages() and "expr" in backend_names()
    assert language.plugin_for_dir(bench / "double").name == toy_language
    (task,), issues = load_benchmark(bench)
    assert not issues and language.language_of(task) == toy_language


def test_validate_judges_a_registered_language(toy_language: str, tmp_path: Path) -> None:
    bench = write_task(tmp_path)
    assert validate_dataset(bench).ok
    rows = json.loads((bench / "double" / "test.json").read_text())
    rows.append(dict(rows[0], unexpected=[6]))  # a duplicate input; its expected is unexpected
    (bench / "double" / "test.json").write_text(json.dumps(rows))
    (task,) = validate_dataset(bench).tasks
    assert sorted((d.kind, d.where) for d in task.defects) == [
        ("duplicate_input", "test.json[1].input"),
        ("expected_in_unexpected", "test.json[1].unexpected[0]")]


def test_the_pipeline_runs_a_registered_language(toy_language: str, tmp_path: Path) -> None:
    bench = write_task(tmp_path)
    out = tmp_path / "run"
    summary = run_pipeline(bench, out, RunConfig(), console=Console(quiet=True))
    assert not summary.errors, summary.errors
    rd = RunDir(out)
    classify = rd.read_artifact("double", "classify")
    outputs = rd.read_artifact("double", "outputs")
    assert classify.expected_inputs and classify.unexpected_inputs  # x >= 0 split them
    assert len(outputs.pairs) == len(classify.expected_inputs) and not outputs.failures
    adversaries = rd.read_artifact("double", "adversaries").adversaries
    assert len(adversaries) == 5  # the plug-in's offline red team, all screened in

    (plus,), _ = load_benchmark(out / "plus")
    (lite,), _ = load_benchmark(out / "lite")
    assert language.language_of(plus) == toy_language
    assert len(plus.tests) == len(outputs.pairs) > 1 and len(plus.reject_inputs) > 1
    assert all(case.expected == 2 * case.input[0] >= 0 for case in plus.tests)
    assert all(x < 0 for (x,) in plus.reject_inputs)
    unexpected = [(case, u) for case in plus.tests for u in case.unexpected]
    assert len(unexpected) > len(plus.tests)  # the near misses, the constants, the echo
    assert all(u != case.expected for case, u in unexpected)
    assert 0 < len(lite.tests) < len(plus.tests)
    assert {c.input for c in lite.tests} <= {c.input for c in plus.tests}
    assert (3,) in {c.input for c in lite.tests}  # the original test is kept
    assert (out / "plus" / "double" / "task.expr").read_text().startswith("@precond\nx >= 0")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["backend"] == "expr"
    assert (out / "report.md").is_file()
