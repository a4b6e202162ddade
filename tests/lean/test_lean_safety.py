"""The untrusted-Lean filter: what must never reach Lean, and what must pass."""

from __future__ import annotations

import pytest

from veriscale.backends.lean.safety import check_untrusted_lean, strip_comments_and_literals

GOOD = [
    "def f (xs : List Int) : Int :=\n  xs.foldl (· + ·) 0",
    "def f (s : String) : Bool := s.contains 'a' && s != \"sorry\"",
    "-- we do not use sorry here\ndef f (n : Nat) : Nat := n + 1",
    "/- axiom in a comment /- nested -/ still comment -/\ndef f (n : Nat) : Nat := n",
    "def f (a : Array Int) : Array Int := #[1, 2] ++ a",
    "mutual\ndef ev : Nat → Bool\n  | 0 => true\n  | n+1 => od n\ndef od : Nat → Bool\n  | 0 => false\n  | n+1 => ev n\nend",
    "def f (x : Nat) (h_precond : f_precond x) : Nat :=\n  let x' := x + 1\n  x'",
    "structure P where\n  a : Nat\nderiving Repr, BEq",
    "def f (c : Char) : Bool := c = '\\'' || c = '\"'",
]

BAD = [
    ("axiom magic : False", "axiom"),
    ("theorem t : 1 = 2 := by sorry", "sorry"),
    ("theorem t : 1 = 2 := by admit", "admit"),
    ("opaque f : Nat → Nat", "opaque"),
    ("unsafe def f : Nat := 0", "unsafe"),
    ("partial def f (n : Nat) : Nat := f n", "partial"),
    ("@[implemented_by g] def f (n : Nat) : Nat := n", "implemented_by"),
    ("@[extern \"c_f\"] def f (n : Nat) : Nat := n", "extern"),
    ("def f : IO Unit := pure ()", "IO"),
    ("instance : Decidable (1 = 2) := isTrue sorry", "instance"),
    ("@[instance] def i : Inhabited Nat := ⟨0⟩", "instance"),
    ("#eval IO.println \"hi\"", "#eval"),
    ("def f := 1\n#exit", "#exit"),
    ("run_cmd pure ()", "run_cmd"),
    ("macro \"x\" : term => `(1)", "macro"),
    ("elab \"x\" : term => return default", "elab"),
    ("open Classical in\ndef f (p : Prop) : Bool := decide p", "open"),
    ("end VS_task_0\ndef evil := 1", "end"),
    ("namespace Foo\ndef f := 1", "namespace"),
    ("set_option maxHeartbeats 0 in\ndef f := 1", "set_option"),
    ("def f (n : Nat) : Bool := unsafeCast n", "unsafe"),
    ("theorem t : 2 + 2 = 4 := by native_decide", "native_decide"),
    ("attribute [simp] Nat.add_comm", "attribute"),
    ("noncomputable def f : Nat := Classical.choice ⟨0⟩", "noncomputable"),
    ("def f := 1 /- unterminated", "unterminated"),
    ("def f := \"unterminated", "unterminated"),
    ("def «sorry» := 1", "quoted"),
    ("import Mathlib", "import"),
    ("initialize foo : IO.Ref Nat ← IO.mkRef 0", "initialize"),
    ("builtin_initialize x : Nat ← pure 1", "initialize"),
    ("def f (n : Nat) : Nat := f (n - 1)\ndecreasing_by sorry", "sorry"),
    ("section Foo\ndef f := 1\nend Foo", "section"),
    ("/- /- nested -/ def evil := 1", "unterminated"),
    ("macro_rules | `(x) => `(1)", "macro_rules"),
    ("syntax \"x\" : term", "syntax"),
    ("@[csimp] theorem t : @f = @g := rfl", "csimp"),
    ("deriving instance Repr for Nat", "instance"),
    # another unit's code (a candidate's, the ground truth's) in the same file
    ("def f (x : Nat) : Nat := VS_verina_basic_1_0.f x", "checker's own namespaces"),
    ("def f (x : Nat) : Nat := _root_.VS_t_3.f x", "_root_"),
    ("def f (x : Nat) : Nat := VeriScaleCompiledEval.g x", "checker's own namespaces"),
]


@pytest.mark.parametrize("src", GOOD)
def test_accepts_ordinary_code(src: str) -> None:
    assert check_untrusted_lean(src) is None


@pytest.mark.parametrize(("src", "word"), BAD)
def test_rejects_tricks(src: str, word: str) -> None:
    why = check_untrusted_lean(src)
    assert why is not None and why.startswith("rejected")
    assert word in why


def test_strip_keeps_line_numbers() -> None:
    src = "a /- x\ny -/ b\n\"s\\\"t\" -- c\nd"
    out = strip_comments_and_literals(src)
    assert out.count("\n") == src.count("\n")
    assert out == 'a  \n b\n"" \nd'
