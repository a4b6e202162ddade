"""Mutant generation: deterministic, bounded, distinct from the GT, comments untouched."""

from __future__ import annotations

import ast

from veriscale.backends.lean.conjuncts import split_conjuncts
from veriscale.backends.lean.mutants import lean_code_mutants, lean_spec_mutants
from veriscale.backends.lean.sections import LeanSections
from veriscale.backends.python.mutants import python_code_mutants, python_spec_mutants
from veriscale.backends.python.sections import PythonSections
from veriscale.benchmark.model import Signature, Task
from veriscale.evaluation.mutants import gt_candidate, task_mutants

SIG = Signature.from_json({
    "name": "clampSum",
    "parameters": [{"param_name": "xs", "param_type": "List Int"},
                   {"param_name": "hi", "param_type": "Int"}],
    "return_type": "Int"})

PY = PythonSections(
    aux="def total(xs):\n    return sum(xs)\n",
    precondition="def precondition(xs, hi):\n    return hi >= 0 and len(xs) < 10\n",
    reference=("def reference(xs, hi):\n    s = 0\n    for x in xs:\n        s += x\n"
               "    if s > hi:\n        return hi\n    return s\n"),
    postcondition=("def postcondition(xs, hi, result):\n    if result > hi:\n"
                   "        return False\n    return result == min(total(xs), hi)\n"))

LEAN = LeanSections(
    code=("  -- keep < 1 here\n  let s := xs.foldl (· + ·) 0\n"
          "  if s > hi then hi else s\n"),
    precond="  hi ≥ 0 ∧ xs.length < 10",
    postcond="  result ≤ hi ∧\n  (result = hi ∨ result = xs.foldl (· + ·) 0)")


def py_task() -> Task:
    return Task("p", "", SIG, sections={"python": PY})


def lean_task() -> Task:
    return Task("l", "", SIG, sections={"lean": LEAN})


def test_python_code_mutants_are_valid_and_distinct() -> None:
    ms = python_code_mutants(py_task(), limit=100)
    ops = {op.split(":")[0] for op, _ in ms}
    assert {"arith", "cmp", "const+1", "const-1", "negate-cond", "drop-stmt",
            "return-perturb"} <= ops
    gt = ast.unparse(ast.parse(PY.reference))
    texts = [t for _, t in ms]
    assert len(set(texts)) == len(texts) and gt not in texts
    for t in texts:
        tree = ast.parse(t)
        assert [f.name for f in tree.body if isinstance(f, ast.FunctionDef)] == ["reference"]


def test_mutants_deterministic_and_bounded() -> None:
    a = python_code_mutants(py_task(), limit=5, seed=1)
    assert a == python_code_mutants(py_task(), limit=5, seed=1)
    assert len(a) == 5
    assert a != python_code_mutants(py_task(), limit=5, seed=2)
    ms = task_mutants(py_task(), max_per_kind=3, seed=0)
    assert sum(m.kind == "code" for m in ms) == 3
    assert len({m.id for m in ms}) == len(ms)


def test_python_spec_mutants() -> None:
    pre = python_spec_mutants(py_task(), "precond", limit=100)
    assert ("drop-conjunct", "def precondition(xs, hi):\n    return len(xs) < 10") in pre
    assert ("true", "def precondition(xs, hi):\n    return True") in pre
    assert any(op.startswith("weaken:Lt->LtE") for op, _ in pre)
    assert any(op.startswith("flip:") for op, _ in pre)
    post = python_spec_mutants(py_task(), "postcond", limit=100)
    assert ("drop-guard", "def postcondition(xs, hi, result):\n"
            "    return result == min(total(xs), hi)") in post


def test_lean_code_mutants_skip_comments() -> None:
    from veriscale.backends.lean.plugin import LEAN

    ms = LEAN.code_mutants(lean_task(), limit=100)
    ops = {op for op, _ in ms}
    assert {"gt->ge", "plus->minus", "0->1", "if->true (drop else)",
            "if->false (drop then)"} <= ops
    for _, text in ms:
        assert "-- keep < 1 here" in text  # the comment is never mutated
        assert text.startswith("def clampSum (xs : List Int) (hi : Int) "
                               "(h_precond : clampSum_precond (xs) (hi)) : Int :=")
        assert ":=" in text and "let s :=" in text  # `:=` and `←`-style tokens survive


def test_lean_operators_do_not_break_arrows() -> None:
    task = Task("l", "", SIG,
                sections={"lean": LeanSections(code="  xs.map (fun x => x + 1) |>.length <;> 0")})
    for _, text in lean_code_mutants(task, limit=100):
        assert "=>" in text and "|>." in text


def test_lean_spec_mutants() -> None:
    assert split_conjuncts("a ∧ (b ∧ c) ∧ ∀ i, i < n -- x ∧ y") == \
        ["a", "(b ∧ c)", "∀ i, i < n"]  # comments are dropped
    pre = lean_spec_mutants(lean_task(), "precond", limit=100)
    texts = [t for _, t in pre]
    assert "  (xs.length < 10)" in texts and "  (hi ≥ 0)" in texts
    assert "  True" in texts
    assert "  hi ≥ 0 ∧ xs.length ≤ 10" in texts
    assert "  hi ≤ 0 ∧ xs.length < 10" in texts
    post = lean_spec_mutants(lean_task(), "postcond", limit=100)
    assert ("drop-conjunct", "  ((result = hi ∨ result = xs.foldl (· + ·) 0))") in post


def test_gt_candidates() -> None:
    g = gt_candidate(lean_task())
    assert g.impl is not None and "if s > hi then hi else s" in g.impl.code
    assert g.spec is not None and g.spec.precond == LEAN.precond
    p = gt_candidate(py_task())
    assert p.impl is not None and p.impl.code == PY.reference
    assert p.spec is not None and p.spec.postcond == PY.postcondition


def test_mutants_as_a_solutions_file(tmp_path) -> None:
    """Every built-in mutant becomes one solutions line that loads back into the same
    candidate (a code mutant as a complete definition, a spec mutant with its aux)."""
    import json

    from veriscale.evaluation.mutants import solution_lines
    from veriscale.evaluation.solutions import load_solutions

    for task in (py_task(), lean_task()):
        mutants = task_mutants(task, 5, seed=1)
        lines = solution_lines(mutants)
        assert [line["sample"] for line in lines] == list(range(len(mutants)))
        path = tmp_path / f"{task.id}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        cands, issues = load_solutions(path, [task])
        assert not issues
        for m, c in zip(mutants, cands[task.id], strict=True):
            assert (c.impl.code if c.impl else None) == (
                m.candidate.impl.code if m.candidate.impl else None)
            want, got = m.candidate.spec, c.spec
            assert (want is None) == (got is None)
            if want is not None and got is not None:
                assert (got.precond, got.postcond, got.precond_aux, got.postcond_aux) == (
                    want.precond, want.postcond,
                    want.precond_aux if want.precond is not None else "",
                    want.postcond_aux if want.postcond is not None else "")


def test_mutants_command_writes_a_weak_model(tmp_path) -> None:
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from veriscale.cli import main

    bundled = Path(__file__).resolve().parents[2] / "src/veriscale/examples/bundled"
    out = tmp_path / "weak.jsonl"
    result = CliRunner().invoke(main, ["mutants", str(bundled), "--out", str(out), "--task",
                                       "vs_argmax", "--kind", "code", "--max-mutants", "2"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2 and {line["task_id"] for line in lines} == {"vs_argmax"}
    assert all(line["mutant"].startswith("vs_argmax:code:") and "definition" in line
               and "postcond" not in line for line in lines)
