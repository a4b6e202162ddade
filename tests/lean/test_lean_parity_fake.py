"""VERINA parity of candidate scoring, points 1-6 of issue 11, against a fake ``lean``.

Each test renders and runs the real files through the Lean backend and reads
what was written (``keep_files``) and what was scored.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from test_lean_backend_fake import _backend, _calls, _task, fake_lean  # noqa: F401

from veriscale.backends.base import Implementation, Spec
from veriscale.backends.lean import render
from veriscale.backends.lean.messages import plausible_verdict
from veriscale.backends.lean.sections import lean_sections
from veriscale.benchmark.model import ExpectedPair
from veriscale.evaluation.harness import evaluate
from veriscale.evaluation.scoring import Score, must_fail, must_hold
from veriscale.evaluation.solutions import Submission

P, F, U = Score.PASS, Score.FAIL, Score.UNKNOWN


def _written(log: Path) -> str:
    return "\n".join(Path(p).read_text() for p in log.read_text().split())


# 1. the Plausible stage -------------------------------------------------------------


@pytest.mark.parametrize(("pos", "neg", "hold", "fail"), [
    ("counterexample", "none", F, P), ("counterexample", "unknown", F, P),
    ("none", "counterexample", P, F), ("unknown", "counterexample", P, F),
    ("counterexample", "counterexample", F, F),
    ("none", "none", P, P),  # VERINA's use_plausible_pass: no counter-example passes
    ("none", "unknown", P, U), ("unknown", "none", U, P), ("unknown", "unknown", U, U),
])
def test_plausible_verdict_mapping_is_verinas(pos: str, neg: str, hold: Score,
                                               fail: Score) -> None:
    """VERINA: non-inverse counter-example FAIL, no counter-example PASS; inverse
    counter-example PASS, else UNKNOWN; FAIL before PASS."""
    v = plausible_verdict(pos, neg)
    assert must_hold(v) is hold and must_fail(v) is fail


def test_plausible_stage_runs_for_candidate_specs(fake_lean, tmp_path: Path) -> None:  # noqa: F811
    exe, log = fake_lean
    task = replace(_task(), tests=[ExpectedPair((13,), 26, [])])  # 13: no Decidable instance
    cand = Submission(task.id, 0, spec=Spec(precond="x > 0"))
    be = _backend(exe, tmp_path, plausible=True, keep_files=True)
    s = evaluate(be, [task], {task.id: [cand]}).tasks[0].samples[0]
    assert s.metrics["precond_sound"].lower is P and not s.notes
    text = _written(log)
    assert "numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42" in text
    assert "example : ¬ (F_precond 13)" in text and "simp_all!" in text
    # Without Plausible the test stays UNKNOWN and the report says why, per metric.
    be = _backend(exe, tmp_path)
    s = evaluate(be, [task], {task.id: [cand]}).tasks[0].samples[0]
    assert s.metrics["precond_sound"].lower is U
    assert "Plausible stage not run" in s.notes["precond_sound"]
    assert "notes" in s.to_json()


# 2. candidate aux definitions are @[reducible, simp] ---------------------------------


def test_candidate_aux_gets_reducible_simp(fake_lean, tmp_path: Path) -> None:  # noqa: F811
    assert render.testable_aux("def a := 1\n@[reducible, simp]\ndef b := 2\n  def c := 3") == (
        "@[reducible, simp] def a := 1\n@[reducible, simp]\ndef b := 2\n  def c := 3")
    exe, log = fake_lean
    be = _backend(exe, tmp_path, keep_files=True)
    spec = Spec(precond="pos x", precond_aux="def pos (x : Int) : Prop := x > 0")
    assert be.compile(_task(), spec=spec) is None
    assert "@[reducible, simp] def pos (x : Int)" in _written(log)


# 3. ground-truth solution_aux and imports are out of scope of candidate specs --------


def _task_with_solution_aux():
    lean = replace(lean_sections(_task()), solution_aux="def isEven (n : Int) : Bool := n % 2 == 0",
                   solution_imports="import Std.Data.HashMap")
    return replace(_task(), sections={"lean": lean})


def test_ground_truth_helpers_are_out_of_scope(fake_lean, tmp_path: Path) -> None:  # noqa: F811
    task = _task_with_solution_aux()
    spec = Spec(precond="isEven x", precond_aux="def isEven (n : Int) : Prop := n % 2 = 0")
    text = render.Variant(task, spec=spec).definitions()
    assert text.count("def isEven") == 1 and "Bool" not in text
    assert "import Std.Data.HashMap" not in "\n".join(render.Variant(task, spec=spec).imports())
    # code is still checked next to the ground truth's helpers (VERINA's CodeGen does)
    impl = Implementation("def F (x : Int) (h_precond : F_precond x) : Int := 2 * x")
    assert "Bool" in render.Variant(task, impl=impl).definitions()
    exe, log = fake_lean
    be = _backend(exe, tmp_path, keep_files=True)
    assert be.compile(task, spec=spec) is None
    assert "n % 2 == 0" not in _written(log)


# 4. CodeGen imports are merged ----------------------------------------------------------


def test_code_imports_are_merged_and_screened(fake_lean, tmp_path: Path) -> None:  # noqa: F811
    exe, log = fake_lean
    be = _backend(exe, tmp_path, keep_files=True)
    task = _task()
    code = "def F (x : Int) (h_precond : F_precond x) : Int := 2 * x"
    good = Submission(task.id, 0, Implementation(code, imports="import Std.Data.HashMap"))
    bad = Submission(task.id, 1, Implementation(code, imports="import Lean.Elab"))
    s0, s1 = evaluate(be, [task], {task.id: [good, bad]}).tasks[0].samples
    assert s0.metrics["code"].lower is P
    assert s1.metrics["code"].lower is F and "Lean.Elab" in s1.errors["code"]
    text = _written(log)
    assert "import Std.Data.HashMap" in text and "Lean.Elab" not in text


def test_solution_line_imports_reach_the_implementation() -> None:
    from veriscale.evaluation.solutions import SolutionLine, to_candidate

    sol = SolutionLine(task_id="toy_1", code="2 * x", imports="import Std")
    assert to_candidate(_task(), sol, 0).impl.imports == "import Std"


# 5. code tests compare in Lean with == ----------------------------------------------------


def test_code_tests_compare_in_lean(fake_lean, tmp_path: Path) -> None:  # noqa: F811
    exe, log = fake_lean
    be = _backend(exe, tmp_path, keep_files=True)
    task = replace(_task(), tests=[ExpectedPair((3,), 6, []), ExpectedPair((4,), 9, [])])
    impl = Implementation("def F (x : Int) (h_precond : F_precond x) : Int := 2 * x")
    s = evaluate(be, [task], {task.id: [Submission(task.id, 0, impl)]}).tasks[0].samples[0]
    assert s.tallies["code"].passed == 1 and s.tallies["code"].failed == 1
    written = _written(log)  # in a batched #eval!, through one helper of the batch
    assert "  (F (x) sorry) == vsOutput" in written and "«vs batch 0» 3 (6)" in written
    assert be.test_outputs(task, impl, [((3,), 6)])[0].value is True


# 6. an empty precondition does not compile ----------------------------------------------


def test_empty_precondition_fails_to_compile(fake_lean, tmp_path: Path) -> None:  # noqa: F811
    exe, log = fake_lean
    be = _backend(exe, tmp_path)
    task = _task()
    before = _calls(log)
    s = evaluate(be, [task], {task.id: [Submission(task.id, 0, spec=Spec(precond="  \n"))]}
                 ).tasks[0].samples[0]
    assert s.metrics["precond_sound"].lower is F and s.metrics["precond_complete"].upper is F
    assert "empty precondition" in s.errors["spec"] and _calls(log) == before
    # the ground truth's empty precondition is still VERINA's default `True`
    gt = task.with_section("lean", replace(lean_sections(task), precond=""))
    assert "True" in render.Variant(gt).definitions()
