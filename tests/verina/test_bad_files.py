"""Bad files give one clear issue naming task, file and field; other tasks still load.

And a task whose rows cannot be read is never a task with zero rows: its
``unreadable`` names the file (evaluation must not score it as passing).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from veriscale.backends.datasets import load_benchmark, validate_dataset

TASKS = ("vs_argmax", "vs_divmod")


@pytest.fixture(params=["verina", "python"])
def suite(request, bundled_dir, bundled_lean_dir, tmp_path) -> Path:
    source = bundled_lean_dir if request.param == "verina" else bundled_dir
    for t in TASKS:
        shutil.copytree(source / t, tmp_path / t)
    return tmp_path


def load(suite: Path):
    tasks, issues = load_benchmark(suite)
    return {t.id: t for t in tasks}, issues


def only_issue(issues, file: str):
    found = [i for i in issues if i.file == file]
    assert found, issues
    assert all(i.task == "vs_divmod" for i in found)
    return found[0]


def test_non_utf8_description(suite: Path):
    (suite / "vs_divmod" / "description.txt").write_bytes(b"caf\xe9\n")
    tasks, issues = load(suite)
    assert "vs_argmax" in tasks
    issue = only_issue(issues, "description.txt")
    assert "utf-8" in issue.message.lower()


def test_non_utf8_code_file(suite: Path):
    name = "task.py" if (suite / "vs_divmod" / "task.py").exists() else "task.lean"
    (suite / "vs_divmod" / name).write_bytes(b"\xff\xfe junk")
    tasks, issues = load(suite)
    assert set(tasks) == {"vs_argmax"}
    only_issue(issues, name)


def test_deeply_nested_test_json(suite: Path):
    (suite / "vs_divmod" / "test.json").write_text("[" * 100_000 + "]" * 100_000)
    tasks, issues = load(suite)
    assert "vs_argmax" in tasks
    issue = only_issue(issues, "test.json")
    assert "nested too deeply" in issue.message
    assert "test.json" in tasks["vs_divmod"].unreadable


@pytest.mark.parametrize("content", [None, '{"input": {}}', "not json"])
def test_unreadable_tests_are_never_zero_tests(suite: Path, content):
    path = suite / "vs_divmod" / "test.json"
    if content is None:
        path.unlink()
    else:
        path.write_text(content)
    tasks, issues = load(suite)
    only_issue(issues, "test.json")
    assert tasks["vs_divmod"].tests == []
    assert "test.json" in tasks["vs_divmod"].unreadable
    assert tasks["vs_argmax"].unreadable == {}


def test_deep_value_inside_a_row(suite: Path):
    path = suite / "vs_divmod" / "test.json"
    rows = json.loads(path.read_text())
    text = json.dumps(rows)
    first = json.dumps(rows[0]["input"]["a"])
    path.write_text(text.replace(first, "[" * 900 + "]" * 900, 1))
    tasks, issues = load(suite)
    issue = only_issue(issues, "test.json")
    assert issue.field == "[0].input.a"
    assert len(tasks["vs_divmod"].tests) == len(rows) - 1


def test_huge_integer_in_validate(suite: Path):
    path = suite / "vs_divmod" / "test.json"
    rows = json.loads(path.read_text())
    text = json.dumps(rows)
    path.write_text(text.replace(json.dumps(rows[0]["input"]), '{"a": 1%s, "b": 5}'
                                 % ("0" * 6000), 1))
    report = validate_dataset(suite)
    errors = [e for e in report.errors if e.task == "vs_divmod"]
    assert errors and errors[0].file == "test.json"
    assert "digits" in errors[0].message
    assert any(t.task == "vs_argmax" and t.loaded for t in report.tasks)
