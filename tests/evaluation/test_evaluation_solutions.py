"""Solutions JSONL: validation, bad lines, Lean bodies made into full definitions."""

from __future__ import annotations

import json
from pathlib import Path

from veriscale.backends.lean.render import code_definition as lean_code_definition
from veriscale.backends.lean.sections import LeanSections
from veriscale.backends.python.sections import PythonSections
from veriscale.benchmark.model import Signature, Task
from veriscale.evaluation.solutions import load_solutions, parse_lines

SIG = Signature.from_json({
    "name": "addOne",
    "parameters": [{"param_name": "xs", "param_type": "List Int"},
                   {"param_name": "k", "param_type": "Nat"}],
    "return_type": "List Int",
})


def lean_task() -> Task:
    return Task("t_lean", "", SIG, sections={"lean": LeanSections(code="  xs.map (· + k)")})


def py_task() -> Task:
    return Task("t_py", "", SIG,
                sections={"python": PythonSections(reference="def reference(xs, k): ...")})


def test_lean_code_definition() -> None:
    text = lean_code_definition(lean_task(), "xs.map (· + k)", code_aux="def helper := 1")
    assert text.startswith("def helper := 1\n\n")
    assert ("def addOne (xs : List Int) (k : Nat) (h_precond : addOne_precond (xs) (k)) "
            ": List Int :=\n  xs.map (· + k)") in text
    # an already indented body is kept as is
    assert "\n  xs.map" in lean_code_definition(lean_task(), "  xs.map (· + k)")


def test_lean_definition_without_parameters() -> None:
    sig = Signature.from_json({"name": "c", "parameters": [], "return_type": "Nat"})
    text = lean_code_definition(Task("t", "", sig, sections={"lean": LeanSections()}), "1")
    assert text.startswith("def c (h_precond : c_precond) : Nat :=")


def test_bad_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    lines = [
        json.dumps({"task_id": "t_lean", "code": "xs"}),
        "{not json",
        json.dumps({"code": "x"}),  # no task id
        json.dumps({"task_id": "t_lean", "sample": "two", "code": "x"}),
        json.dumps({"task_id": "t_lean", "precond": 3}),
        json.dumps({"task_id": "t_lean"}),  # nothing to score
        "",
        json.dumps(["a list"]),
        json.dumps({"task": "t_py", "code": "def addOne(xs, k): return xs", "model": "m"}),
        json.dumps({"task_id": "nope", "code": "x"}),
        json.dumps({"task_id": "t_lean", "sample": 0, "code": "dup"}),
        json.dumps({"task_id": "t_lean", "sample": 3, "precond": "k > 0", "postcond": "True"}),
    ]
    path = tmp_path / "sol.jsonl"
    path.write_text("\n".join(lines) + "\n")
    cands, issues = load_solutions(path, [lean_task(), py_task()])
    by_line = {i.line: i for i in issues}
    assert set(by_line) == {2, 3, 4, 5, 6, 8, 10, 11}
    assert by_line[2].field == "(json)"
    assert by_line[3].field == "task_id"
    assert by_line[4].field == "sample" and by_line[4].task_id == "t_lean"
    assert by_line[5].field == "precond"
    assert by_line[10].field == "task_id" and "no such task" in by_line[10].message
    assert by_line[11].field == "sample" and "duplicate" in by_line[11].message
    assert "line 4 (t_lean): sample:" in str(by_line[4])
    lean = cands["t_lean"]
    assert [c.sample for c in lean] == [0, 3]
    assert lean[0].impl is not None and lean[0].impl.code.startswith("def addOne (xs : List Int)")
    assert lean[0].spec is None
    assert lean[1].impl is None and lean[1].has_precond and lean[1].has_postcond
    py = cands["t_py"]
    assert py[0].impl is not None and py[0].impl.code == "def addOne(xs, k): return xs"


def test_parse_lines_accepts_aliases_and_aux() -> None:
    good, issues = parse_lines([
        json.dumps({"data_id": "a", "postcond": "result = 1", "postcond_aux": "def h := 1",
                    "imports": "import Mathlib"}),
    ])
    assert not issues
    (_, sol), = good
    assert sol.task_id == "a" and sol.postcond_aux == "def h := 1" and sol.precond is None


def test_a_definition_is_run_as_given(tmp_path: Path) -> None:
    full = "def addOne (xs : List Int) (k : Nat) : List Int :=\n  xs"
    path = tmp_path / "sol.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in [
        {"task_id": "t_lean", "definition": full, "code_aux": "def h := 1"},
        {"task_id": "t_lean", "definition": full, "code": "xs"},  # both: refused
    ]) + "\n")
    cands, issues = load_solutions(path, [lean_task()])
    (cand,) = cands["t_lean"]
    assert cand.impl is not None and cand.impl.code == "def h := 1\n\n" + full
    (issue,) = issues
    assert issue.line == 2 and issue.field == "code/definition"
