"""Conformance: hostile Lean candidates and the verdict each must get.

Every case is something a model (or an adversary) could submit as an
implementation, spec aux or spec body. Screen level: each must be refused with
the named reason before any Lean process starts; the ordinary cases next to
them must pass (a screen that refuses everything would be useless). The last
tests run candidates through the Lean backend with a fake ``lean`` to show the
refusal is what scoring sees (FAIL at compile, Lean never called for it, the
other candidates of the batch unaffected).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_lean_backend_fake import _backend, _calls, _task, fake_lean  # noqa: F401

from veriscale.backends.base import Implementation, Spec
from veriscale.backends.lean.safety import check_imports, check_untrusted_lean
from veriscale.evaluation.harness import evaluate
from veriscale.evaluation.scoring import Score
from veriscale.evaluation.solutions import Submission

# (name, source, kind, a word the reason must contain)
HOSTILE = [
    ("raw-string desync hides an axiom",
     'def s := r"\\"\naxiom cheat : False\n#exit\ninstance : Decidable False := isTrue sorry\n'
     'def t := "\\""', "commands", "axiom"),
    ("raw string with hashes", 'def s := r#"x"#\naxiom cheat : False', "commands", "axiom"),
    ("sorry inside interpolation", 'def f (n : Nat) : Nat := (s!"{(sorry : Nat)}").length',
     "commands", "sorry"),
    ("sorry inside nested interpolation", 'def f : String := s!"{s!"{(sorry : String)}"}"',
     "commands", "sorry"),
    ("m! strings need Lean", 'def f : Nat := 1\ndef g := m!"{sorry}"', "commands", "m!"),
    ("_root_ injection into another unit",
     "def _root_.VS_toy_1_1.decide (p : Prop) : Bool := true", "commands", "_root_"),
    ("_root_ reference in a term", "_root_.decide (x > 0)", "term", "_root_"),
    ("command_elab attribute", "@[command_elab] def x := 1", "commands", "command_elab"),
    ("term_elab attribute", "@[term_elab] def x := 1", "commands", "term_elab"),
    ("tactic attribute", "@[tactic] def x := 1", "commands", "tactic"),
    ("simp plus instance attribute", "@[simp, instance] def i : Inhabited Nat := ⟨0⟩",
     "commands", "instance"),
    ("import Lean in code", "import Lean\ndef f := 1", "commands", "import"),
    ("#exit hides the rest", "def f (x : Int) : Int := x\n#exit", "commands", "#exit"),
    ("#eval runs code", '#eval IO.println "hi"', "commands", "#eval"),
    ("bogus Decidable instance", "instance : Decidable (1 = 2) := isTrue sorry", "commands",
     "instance"),
    ("deriving instance", "deriving instance BEq for Nat", "commands", "instance"),
    ("capture decide in the unit", "def decide (p : Prop) : Bool := true", "commands", "decide"),
    ("capture a signature type", "def Int : Type := Nat", "commands", "Int"),
    ("capture the sentinel", "def Nat.zero : Nat := 5", "commands", "Nat.zero"),
    ("leave the namespace", "end VS_toy_1_0\naxiom cheat : False", "commands", "end"),
    ("comment opener glued to a symbol", "def f := 1 <--\n#exit", "commands", "glued"),
    ("braces a keyword could interpolate", 'throwError "{" axiom c : False "}"', "commands",
     "interpolation"),
    ("unknown escape", 'def s := "\\q"\naxiom c : False', "commands", "escape"),
    ("quoted keyword name", "def «axiom» := 1", "commands", "quoted"),
    ("a theorem inside a spec body", "x > 0\ntheorem t : False := by simp", "term", "theorem"),
    ("an unknown command at column 0", "def f := 1\nfoo_command bar", "commands", "column 0"),
    ("a Mathlib command mid-line", "def f := 1 notation3 \"x\" => f", "commands", "notation3"),
    ("syntax quotation", "def f := `(1)", "commands", "quotes"),
    ("open Classical", "open Classical\ndef f (p : Prop) : Bool := decide p", "commands",
     "open"),
    ("attribute command", "attribute [simp] Nat.add_comm", "commands", "attribute"),
    ("set_option in a term", "set_option maxHeartbeats 0 in x > 0", "term", "set_option"),
    ("native_decide trusts the compiler", "theorem t : 2 + 2 = 4 := by native_decide",
     "commands", "native_decide"),
    ("meta code by name", "def f := Lean.Elab.Command.elabCommand", "commands", "Lean"),
    ("unterminated comment swallows the file", "def f := 1 /- ", "commands", "unterminated"),
    ("attributes in a term", "@[simp] x > 0", "term", "attribute"),
]

ORDINARY = [
    ("interpolation of a value", 'def f (s : String) : String := s!"<{s}>"', "commands"),
    ("raw string with a backslash", 'def p : String := r"C:\\dir"', "commands"),
    ("array literal", "def f (a : Array Int) : Array Int := #[1, 2] ++ a", "commands"),
    ("allowed attributes", "@[reducible, simp]\ndef isEven (n : Nat) : Bool := n % 2 == 0",
     "commands"),
    ("doc comment mentioning axiom", "/-- no axiom /- or sorry -/ here -/\ndef f := 1",
     "commands"),
    ("match arms at column 0", "def f : Nat → Nat\n| 0 => 1\n| n + 1 => n", "commands"),
    ("spec body with quantifiers", "∀ i, i < xs.size → xs[i]! ≥ 0 ∧ result ≠ '}'", "term"),
    ("structure with deriving", "structure P where\n  a : Nat\nderiving Repr, BEq",
     "commands"),
    ("open Std", "open Std\ndef f (m : HashMap Nat Nat) : Nat := m.size", "commands"),
    ("bracket strings", 'def f (c : String) : Bool := c == "{" || c == "}"', "commands"),
]


@pytest.mark.parametrize(("name", "src", "kind", "word"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_candidate_is_refused(name: str, src: str, kind: str, word: str) -> None:
    why = check_untrusted_lean(src, kind)
    assert why is not None and why.startswith("rejected"), name
    assert word in why, why


@pytest.mark.parametrize(("name", "src", "kind"), ORDINARY, ids=[o[0] for o in ORDINARY])
def test_ordinary_candidate_passes(name: str, src: str, kind: str) -> None:
    assert check_untrusted_lean(src, kind) is None


def test_imports_allow_list() -> None:
    assert check_imports("import Mathlib\nimport Std.Data.HashMap -- fine") is None
    assert check_imports("import Plausible Batteries.Data.List") is None
    assert check_imports("import Lean") is not None
    assert check_imports("import Lean.Elab.Command") is not None
    assert check_imports("import Init.Prelude") is not None
    assert check_imports("import MyTask.Helpers", ["MyTask.Helpers"]) is None
    assert "only" in (check_imports("import Mathlib\n#exit") or "")
    assert check_imports("import «Lean»") is not None


def test_refused_candidates_fail_without_reaching_lean(fake_lean, tmp_path: Path) -> None:  # noqa: F811
    exe, log = fake_lean
    be = _backend(exe, tmp_path, keep_files=True)
    task = _task()
    good = Implementation("def F (x : Int) (h_precond : F_precond x) : Int := 2 * x")
    evil = Implementation("def F (x : Int) (h_precond : F_precond x) : Int := 2 * x\n"
                          "def _root_.VS_toy_1_1.decide (p : Prop) : Bool := true")
    spec_lean = Spec(precond="x > 0", imports="import Lean")
    cands = [Submission(task.id, 0, good), Submission(task.id, 1, evil),
             Submission(task.id, 2, spec=spec_lean)]
    rep = evaluate(be, [task], {task.id: cands})
    s0, s1, s2 = rep.tasks[0].samples
    assert s0.metrics["code"].lower is Score.PASS
    assert s1.metrics["code"].lower is Score.FAIL and "_root_" in s1.errors["code"]
    assert s2.metrics["precond_sound"].lower is Score.FAIL and "Lean" in s2.errors["spec"]
    written = [Path(p).read_text() for p in log.read_text().split()]
    assert written and not any("_root_" in w for w in written)
    own = [f"import {m}" for m in be.runner.compiled_imports]  # the runner's, not the spec's
    assert all([x for x in w.splitlines() if x.startswith("import")] == own for w in written)


def test_a_definition_that_elaborates_to_sorry_fails_to_compile(fake_lean, tmp_path: Path) -> None:  # noqa: F811
    """``stop`` (``repeat sorry``) passes the screen: a tactic's name says nothing of
    what it expands to. Lean's own warning on the declaration is what refuses it."""
    exe, _ = fake_lean
    be = _backend(exe, tmp_path)
    task = _task()
    holey = Implementation("def F (x : Int) (h_precond : F_precond x) : Int := 2 * x\n"
                           "theorem cheat : (1 : Nat) = 2 := by\n  stop")
    assert check_untrusted_lean(holey.code, kind="commands") is None
    honest = Implementation("def F (x : Int) (h_precond : F_precond x) : Int := 2 * x")
    rep = evaluate(be, [task], {task.id: [Submission(task.id, 0, holey),
                                          Submission(task.id, 1, honest)]})
    s0, s1 = rep.tasks[0].samples
    assert s0.metrics["code"].lower is Score.FAIL and "sorry" in s0.errors["code"], s0.errors
    assert s1.metrics["code"].lower is Score.PASS
