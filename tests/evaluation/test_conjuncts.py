"""One conjunct splitter per language, shared by the offline weakenings and the spec
mutants. The Lean one used by the mutants once split inside ``∀`` bodies and split
``a ∨ b ∧ c`` as ``['a ∨ b', 'c']`` (issue 12 §1); these pin the fix."""

from __future__ import annotations

import ast

from veriscale.backends.language import plugin_for
from veriscale.backends.lean.conjuncts import split_conjuncts as lean_split
from veriscale.backends.lean.mutants import lean_spec_mutants
from veriscale.backends.lean.sections import LeanSections
from veriscale.backends.python.conjuncts import conjuncts
from veriscale.backends.python.conjuncts import split_conjuncts as py_split
from veriscale.backends.python.mutants import python_spec_mutants
from veriscale.backends.python.sections import PythonSections
from veriscale.benchmark.model import Signature, Task

SIG = Signature.from_json({"name": "f", "parameters": [{"param_name": "n", "param_type": "Nat"}],
                           "return_type": "Nat"})


def test_lean_looser_operator_is_not_split() -> None:
    assert lean_split("a ∨ b ∧ c") == ["a ∨ b ∧ c"]
    assert lean_split("a ∧ b → c") == ["a ∧ b → c"]


def test_lean_binder_body_is_not_split() -> None:
    assert lean_split("∀ x, p x ∧ q x") == ["∀ x, p x ∧ q x"]
    assert lean_split("a ∧ ∀ x, p x ∧ q x") == ["a", "∀ x, p x ∧ q x"]


def test_lean_splits_top_level_and_drops_comments() -> None:
    assert lean_split("a ∧ (b ∧ c) ∧ d -- e ∧ f") == ["a", "(b ∧ c)", "d"]
    assert lean_split('s = "x ∧ y" ∧ t') == ['s = "x ∧ y"', "t"]


def _lean(post: str) -> Task:
    return Task("t", "", SIG,
                sections={"lean": LeanSections(precond="True", code="n", postcond=post)})


def test_lean_spec_mutants_use_the_correct_splitter() -> None:
    for post in ("a ∨ b ∧ c", "∀ x, p x ∧ q x"):
        ops = [op for op, _ in lean_spec_mutants(_lean(post), "postcond", limit=100)]
        assert "drop-conjunct" not in ops, post
    drops = [t for op, t in lean_spec_mutants(_lean("a ∧ b ∨ c ∧ d ∧ e"), "postcond", 100)
             if op == "drop-conjunct"]
    assert drops == []
    drops = [t for op, t in lean_spec_mutants(_lean("a ∧ (b ∨ c) ∧ d"), "postcond", 100)
             if op == "drop-conjunct"]
    assert "  ((b ∨ c)) ∧\n  (d)" in drops and len(drops) == 3


def test_plugins_expose_their_splitter() -> None:
    assert plugin_for("lean").split_conjuncts("a ∨ b ∧ c") == ["a ∨ b ∧ c"]
    assert plugin_for("python").split_conjuncts("a or b and c") == ["a or (b and c)"]


def test_python_splitter() -> None:
    assert py_split("a and (b or c) and d") == ["a", "b or c", "d"]
    assert py_split("def postcondition(n, result):\n    x = 1\n    return x > 0 and n < 3\n") \
        == ["x > 0", "n < 3"]
    assert [ast.unparse(c) for c in conjuncts(ast.parse("a or b", mode="eval").body)] == ["a or b"]


def test_python_spec_mutants_drop_each_conjunct() -> None:
    py = PythonSections(precondition="def precondition(n):\n    return n > 0 and n < 9\n",
                        reference="def reference(n):\n    return n\n",
                        postcondition="def postcondition(n, result):\n    return result == n\n")
    task = Task("p", "", SIG, sections={"python": py})
    drops = [t for op, t in python_spec_mutants(task, "precond", 100) if op == "drop-conjunct"]
    assert len(drops) == 2 and any("return n > 0" in t for t in drops)


def test_lean_spec_mutants_drop_conjuncts_under_leading_lets() -> None:
    post = "  let m := n + 1\n  m > 0 ∧ m < 9\n"
    drops = [t for op, t in lean_spec_mutants(_lean(post), "postcond", 100)
             if op == "drop-conjunct"]
    assert drops == ["  let m := n + 1\n  (m < 9)", "  let m := n + 1\n  (m > 0)"]
