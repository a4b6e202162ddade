"""The Python-spec task format: loading, issues, writing."""

from __future__ import annotations

import json
from pathlib import Path

from pyb_helpers import TASK_PY, write_task

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.python.format import (
    FORMAT,
    SectionError,
    load_task_dir,
    render_sections,
    split_sections,
    write_task_dir,
)
from veriscale.backends.python.sections import python_sections


def test_load_task(task_dir: Path) -> None:
    task, issues = load_task_dir(task_dir)
    assert issues == []
    assert task is not None
    assert task.id == "max_plus_k"
    assert task.signature.names == ("xs", "k")
    assert [t.input for t in task.tests] == [((1, 5, 3), 2), ((-4,), 0), ((0, 0), 10)]
    assert task.tests[0].expected == 7 and task.tests[0].unexpected == [5, 8]
    assert task.reject_inputs == [((), 3)]
    assert python_sections(task) is not None
    assert python_sections(task).precondition.startswith("def precondition(xs, k):")
    assert "def shift" in python_sections(task).aux
    assert "Description" in task.description


def test_sections_round_trip() -> None:
    s = split_sections(TASK_PY)
    again = split_sections(render_sections(s))
    for name in ("aux", "precondition", "reference", "postcondition"):
        assert getattr(again, name) == getattr(s, name)


def test_section_errors() -> None:
    for bad in (
        "# veriscale: precondition\ndef precondition(): pass\n",  # missing sections
        TASK_PY.replace("# veriscale: reference", "# veriscale: postcondition", 1),
        TASK_PY.replace("# veriscale: aux", "# veriscale: helpers"),
        TASK_PY.replace("# veriscale: reference", "# veriscale: zzz\n# veriscale: reference"),
    ):
        try:
            split_sections(bad)
        except SectionError:
            continue
        raise AssertionError(f"accepted {bad!r}")
    # order violation: postcondition before reference
    swapped = ("# veriscale: precondition\ndef precondition(x): return True\n"
               "# veriscale: postcondition\ndef postcondition(x, result): return True\n"
               "# veriscale: reference\ndef reference(x): return x\n")
    try:
        split_sections(swapped)
    except SectionError as exc:
        assert "after" in str(exc)
    else:
        raise AssertionError("order not checked")


def test_bad_items_are_reported_and_skipped(tmp_path: Path) -> None:
    tests = [
        {"input": {"xs": "[1, 2]", "k": -1}, "expected": 1},  # Nat k negative
        {"input": {"xs": "[1, 2", "k": 1}, "expected": 3},  # truncated
        {"input": {"xs": "[1, 2]", "k": 1}, "expected": "3", "unexpected": ["x", 4]},
        {"input": {"xs": "[1, 2]"}, "expected": 3},  # missing key
    ]
    d = write_task(tmp_path, "t1", tests=tests, rejects=[{"input": {"xs": "[a]", "k": 0}}])
    task, issues = load_task_dir(d)
    assert task is not None
    assert [t.input for t in task.tests] == [((1, 2), 1)]
    assert task.tests[0].unexpected == [4]
    fields = {(i.task, i.file, i.field) for i in issues}
    assert ("t1", "test.json", "[0].input.k") in fields
    assert ("t1", "test.json", "[1].input.xs") in fields
    assert ("t1", "test.json", "[2].unexpected[0]") in fields
    assert ("t1", "test.json", "[3].input") in fields
    assert ("t1", "reject_inputs.json", "[0].input.xs") in fields
    assert task.reject_inputs == []


def test_format_version_checked(tmp_path: Path) -> None:
    d = write_task(tmp_path, "t2")
    meta = json.loads((d / "task.json").read_text())
    meta["format"] = "veriscale-python/9"
    (d / "task.json").write_text(json.dumps(meta))
    task, issues = load_task_dir(d)
    assert task is None
    assert issues[0].field == "format" and issues[0].kind == "bad_format"


def test_broken_tasks_do_not_stop_others(tmp_path: Path) -> None:
    write_task(tmp_path, "good")
    write_task(tmp_path, "no_ref", task_py=TASK_PY.replace("def reference", "def ref"))
    write_task(tmp_path, "syntax", task_py=TASK_PY.replace("return len(xs) > 0", "return ("))
    bad_json = write_task(tmp_path, "bad_json")
    (bad_json / "task.json").write_text("{")
    tasks, issues = load_benchmark(tmp_path)
    assert [t.id for t in tasks] == ["good"]
    by_task = {i.task: i for i in issues}
    assert by_task["no_ref"].field == "reference" and by_task["no_ref"].file == "task.py"
    assert by_task["syntax"].kind == "bad_section"
    assert by_task["bad_json"].file == "task.json" and by_task["bad_json"].kind == "bad_json"


def test_write_round_trip(task_dir: Path, tmp_path: Path) -> None:
    task, _ = load_task_dir(task_dir)
    assert task is not None
    out = write_task_dir(task, tmp_path / "out" / task.id)
    again, issues = load_task_dir(out)
    assert issues == [] and again is not None
    assert json.loads((out / "task.json").read_text())["format"] == FORMAT
    assert (out / "task.py").read_text() == TASK_PY
    assert [(t.input, t.expected, t.unexpected) for t in again.tests] == [
        (t.input, t.expected, t.unexpected) for t in task.tests]
    assert again.reject_inputs == task.reject_inputs
    assert again.meta["metadata"] == {"difficulty": "easy"}
