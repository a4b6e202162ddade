"""Parsers: seeds, decomposition, specs and adversaries, on clean, fenced, partial and garbage text."""

from __future__ import annotations

import ast
import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veriscale.backends.answers import ParseError, code_blocks, rejection_kind
from veriscale.backends.lean.answers import (
    lean_binders,
    lean_decls,
    parse_lean_spec,
    strip_lean_comments,
)
from veriscale.backends.python.answers import parse_python_spec
from veriscale.benchmark.model import Signature
from veriscale.llm.parsers import parse_adversaries, parse_decomposition, parse_inputs

SIG = Signature.from_json({
    "name": "rotate",
    "parameters": [{"param_name": "l", "param_type": "List Int"},
                   {"param_name": "n", "param_type": "Nat"}],
    "return_type": "List Int",
})


# ---------------------------------------------------------------------- fences


def test_code_blocks_tagged_untagged_and_unterminated() -> None:
    text = "intro\n```lean\na\n```\nmid\n```python\nb\n```\n```\nc\n```\n```lean\nd (cut"
    assert code_blocks(text) == ["a\n", "b\n", "c\n", "d (cut"]
    assert code_blocks(text, ("lean",)) == ["a\n", "c\n", "d (cut"]
    assert code_blocks("no fences") == ["no fences"]


# ---------------------------------------------------------------------- seeds


def test_seeds_clean_fenced_and_with_prose() -> None:
    clean = '[{"input": {"l": [1, 2], "n": 1}}, {"input": {"l": [], "n": 0}}]'
    assert parse_inputs(clean, SIG).inputs == [((1, 2), 1), ((), 0)]
    fenced = f"Sure! Here you go:\n```json\n{clean}\n```\nHope this helps."
    assert parse_inputs(fenced, SIG).inputs == [((1, 2), 1), ((), 0)]
    bare = '[{"l": "[3, -4]", "n": 2}]'  # bare object, Lean-literal list
    assert parse_inputs(bare, SIG).inputs == [((3, -4), 2)]


def test_seeds_ill_typed_dropped_and_counted() -> None:
    text = ('[{"input": {"l": [1], "n": -1}}, {"input": {"l": [1], "n": 2}},'
            ' {"input": {"l": [1]}}, {"input": {"l": ["x"], "n": 1}},'
            ' {"input": {"l": [1], "n": 2}}]')
    parsed = parse_inputs(text, SIG)
    assert parsed.inputs == [((1,), 2)]
    assert parsed.ill_typed == 3 and parsed.duplicates == 1
    assert len(parsed.reasons) == 4  # every dropped item, duplicates included
    assert parsed.dropped == {"ill_typed": 2, "wrong_keys": 1, "duplicate": 1}


def test_seeds_truncated_answer_keeps_complete_objects() -> None:
    text = '[{"input": {"l": [1], "n": 1}}, {"input": {"l": [2], "n": 2}}, {"input": {"l": [3'
    assert parse_inputs(text, SIG).inputs == [((1,), 1), ((2,), 2)]


@pytest.mark.parametrize("text", ["", "I cannot help with that.", "[]", "[1, 2, 3]", "{}"])
def test_seeds_nothing_usable_raises_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_inputs(text, SIG)


# ---------------------------------------------------------------------- decomposition


def test_decomposition() -> None:
    d = parse_decomposition("Input:\na. l, n\nb. - n ≥ 0 (E)\n**Output:**\na. res1\nb. - rotated")
    assert "n ≥ 0" in d.input_model and "rotated" in d.output_model
    with pytest.raises(ParseError):
        parse_decomposition("Output: x\nInput: y")
    with pytest.raises(ParseError):
        parse_decomposition("nothing here")


# ---------------------------------------------------------------------- Lean specs

LEAN_SPEC = """Here is my answer.
```lean
-- Precondition Implementation
@[reducible]
def rotate_precond (l : List Int) (n : Nat) : Prop :=
  True

-- Postcondition Implementation
def isRot (a b : List Int) : Bool :=
  a.length == b.length
@[reducible]
def rotate_postcond (l : List Int) (n : Nat) (result: List Int) (h_precond : rotate_precond (l) (n)) : Prop :=
  -- lengths agree
  result.length = l.length ∧
  isRot l result
```"""


def test_lean_spec_bodies_and_aux() -> None:
    spec = parse_lean_spec(LEAN_SPEC, SIG, origin="llm:m")
    assert spec.precond == "True"
    assert spec.postcond == "result.length = l.length ∧\nisRot l result"
    assert spec.precond_aux == ""
    assert spec.postcond_aux.startswith("def isRot")
    assert spec.origin == "llm:m" and spec.id.startswith("spec-")
    assert parse_lean_spec(LEAN_SPEC, SIG).id == spec.id  # id depends on the code only


def test_lean_spec_other_parameter_names_are_bound_with_let() -> None:
    text = ("def rotate_postcond (xs : List Int) (k : Nat) (res : List Int) : Prop :=\n"
            "  res.length = xs.length")
    spec = parse_lean_spec(text, SIG)
    assert spec.precond is None  # no precondition given: the GT one is used
    assert spec.postcond == "let xs := l\nlet k := n\nlet res := result\nres.length = xs.length"


def test_lean_spec_rejects_missing_or_swapped() -> None:
    with pytest.raises(ParseError):
        parse_lean_spec("def something (x : Nat) : Prop := True", SIG)
    swapped = "def rotate_postcond (n : Nat) (l : List Int) (result : List Int) : Prop := True"
    with pytest.raises(ParseError):
        parse_lean_spec(swapped, SIG)


def test_lean_scanning_helpers() -> None:
    code = 'def a := "-- not a comment" -- real\n/- block /- nested -/ -/def b := 1'
    stripped = strip_lean_comments(code)
    assert '"-- not a comment"' in stripped and "real" not in stripped and "nested" not in stripped
    decls = lean_decls("def f (x : Nat) : Nat :=\nx + 1\ntheorem t : True := trivial")
    assert [(d.kind, d.name) for d in decls] == [("def", "f"), ("theorem", "t")]
    assert "x + 1" in decls[0].text  # a flush-left body continues the definition
    assert lean_binders("def f (a b : List (Nat × Nat)) {α : Type} (h : P (a) (b)) : Nat") == [
        ("a", "List (Nat × Nat)"), ("b", "List (Nat × Nat)"), ("h", "P (a) (b)")]


# ---------------------------------------------------------------------- Python specs


def test_python_spec_with_helpers_and_renamed_result() -> None:
    text = """```python
# Precondition Implementation
def precondition(l, n):
    return n >= 0

# Postcondition Implementation
def same_len(a, b):
    return len(a) == len(b)

def postcondition(l, n, res):
    return same_len(l, res)
```"""
    spec = parse_python_spec(text, SIG, origin="llm:m")
    assert spec.precond is not None and spec.postcond is not None
    assert "def same_len" in spec.postcond and "def precondition" in spec.precond
    fn = next(n for n in ast.parse(spec.postcond).body
              if isinstance(n, ast.FunctionDef) and n.name == "postcondition")
    assert [a.arg for a in fn.args.args] == ["l", "n", "result"]
    assert "same_len(l, result)" in spec.postcond


def test_python_spec_rejects_bad_answers() -> None:
    for bad in ("def postcondition(l, result):\n    return True",  # wrong arity
                "def precondition(l, n):\n    return True",  # no postcondition
                "```python\ndef postcondition(l, n, result)\n    return\n```"):  # syntax
        with pytest.raises(ParseError):
            parse_python_spec(bad, SIG)


# ---------------------------------------------------------------------- adversaries

LEAN_ADV = """```lean
-- Adversarial Implementation 1
def helper (l : List Int) : List Int := l
def rotate1 (l : List Int) (n : Nat) (h_precond : rotate_precond (l) (n)) : List Int :=
  helper l
-- Adversarial Implementation 2
def rotate2 (l : List Int) (n : Nat) (h_precond : rotate_precond (l) (n)) : List Int :=
  match n with
  | 0 => []
  | k + 1 => rotate2 l k h_precond
-- Adversarial Implementation 3
def rotate3 (l : List Int) (n : Nat) : List Int := []
-- Adversarial Implementation 4
def rotate4 (l : List Int) (n : Nat) (h_precond : rotate_precond (l) (n)) : List Int :=
  helper l.reverse
```"""


def test_lean_adversaries_rename_the_main_function_not_the_helper() -> None:
    parsed = parse_adversaries(LEAN_ADV, SIG, "lean", origin="llm:m", target_spec="spec-x")
    codes = [i.code for i in parsed.implementations]
    assert len(codes) == 3  # #3 lacks h_precond
    assert "def helper (l : List Int)" in codes[0]  # the helper keeps its name
    assert "def rotate (l : List Int)" in codes[0]
    assert "rotate1" not in codes[0]
    assert "| k + 1 => rotate l k h_precond" in codes[1]  # recursion follows the rename
    # a helper reused in a later chunk goes with that adversary too
    assert "def helper (l : List Int)" in codes[2] and "def rotate (" in codes[2]
    assert "def helper" not in codes[1]  # ... but only with those that use it
    assert any("h_precond" in r for r in parsed.rejected)
    assert [rejection_kind(r) for r in parsed.rejected] == ["wrong_signature"]
    assert all(i.origin == "llm:m" and i.target_spec == "spec-x" for i in parsed.implementations)
    assert len({i.id for i in parsed.implementations}) == 3


def test_python_adversaries_numbered_and_deduplicated() -> None:
    text = """```python
# Adversarial Implementation 1
def rotate1(l, n):
    return []
# Adversarial Implementation 2
def _pad(l):
    return l
def rotate2(l, n):
    return _pad(l)
# Adversarial Implementation 3
def rotate3(l):
    return l
# Adversarial Implementation 4
def rotate4(l, n):
    return []
```"""
    parsed = parse_adversaries(text, SIG, "python")
    assert parsed.implementations[0].code.splitlines()[-2:] == [
        "def rotate(l, n):", "    return []"]
    assert len(parsed.implementations) == 2  # #3 wrong parameters, #4 duplicate of #1
    assert "def _pad(l):" in parsed.implementations[1].code
    assert any("parameters" in r for r in parsed.rejected)
    assert [rejection_kind(r) for r in parsed.rejected] == ["wrong_signature"]


def test_adversaries_without_markers_are_split_by_definition() -> None:
    text = ("def rotate1(l, n):\n    return [0]\n\n"
            "def rotate2(l, n):\n    return l[1:]\n")
    assert len(parse_adversaries(text, SIG, "python").implementations) == 2


@pytest.mark.parametrize("text", ["", "no code", "```lean\ndef other := 1\n```"])
def test_adversaries_nothing_usable_raises(text: str) -> None:
    with pytest.raises(ParseError):
        parse_adversaries(text, SIG, "lean")


# ---------------------------------------------------------------------- never raise

PIECES = ["def ", "rotate1", "```", '"input"', "l", "n", "1", "Input:", "Output:",
          "-- Adversarial Implementation 1", "rotate_postcond", ":=", "(h_precond : P)"]
ALPHABET = st.sampled_from([*'[]{}()":,`\n -#=_|λ∀∧→\'\\', *PIECES])
TEXT = st.one_of(st.text(max_size=200), st.lists(ALPHABET, max_size=60).map("".join))


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_parsers_never_raise_anything_but_parse_error(text: str) -> None:
    for parse in (
        lambda t: parse_inputs(t, SIG),
        parse_decomposition,
        lambda t: parse_lean_spec(t, SIG),
        lambda t: parse_python_spec(t, SIG),
        lambda t: parse_adversaries(t, SIG, "lean"),
        lambda t: parse_adversaries(t, SIG, "python"),
    ):
        with contextlib.suppress(ParseError):
            parse(text)


def test_lean_spec_without_fences_after_prose() -> None:
    text = ("Sure, here it is:\n"
            "def rotate_postcond (l : List Int) (n : Nat) (result : List Int) : Prop :=\n"
            "  result.length = l.length\n")
    assert parse_lean_spec(text, SIG).postcond == "result.length = l.length"


def test_a_rejection_keeps_its_kind_and_reads_as_its_reason() -> None:
    from veriscale.backends.answers import Rejection

    r = Rejection("f: no (h_precond : P) argument", "wrong_signature").within("chunk 2: ")
    assert r == "chunk 2: f: no (h_precond : P) argument" and r.kind == "wrong_signature"
    assert rejection_kind("a parameter-less plain string") == "malformed"
    with pytest.raises(ValueError):
        Rejection("x", "no-such-kind")


def test_small_defects_of_answers_stay_fixed() -> None:
    """An import before an adversary goes in once; ``**Input:**`` leaves no stray
    ``**`` in its section."""
    from veriscale.llm.parsers import parse_adversaries, parse_decomposition

    py_sig = Signature.from_json({"name": "pick", "parameters": [
        {"param_name": "xs", "param_type": "List Int"}], "return_type": "Int"})
    answer = ("```python\nimport random\n\n# Adversary 1\ndef pick1(xs):\n"
              "    return random.choice(xs)\n\n# Adversary 2\ndef pick2(xs):\n"
              "    return random.choice(xs) + 1\n```")
    got = parse_adversaries(answer, py_sig, "python")
    assert got.implementations
    for impl in got.implementations:
        assert impl.code.count("import random") == 1, impl.code
    d = parse_decomposition("**Input:**\na. xs\n**Output:**\na. res1")
    assert d.input_model == "a. xs" and d.output_model == "a. res1"
