"""The LLM layer's side of the language seam: every plug-in gives the prompt parts and
answer parsers, the one Lean header renderer, comments removed by the one Lean lexer."""

from __future__ import annotations

import pytest

from veriscale.backends.answers import ParseError
from veriscale.backends.base import Spec
from veriscale.backends.language import LanguagePlugin, PromptParts, plugin_for, plugins
from veriscale.backends.lean import render
from veriscale.backends.lean.lexer import LexError, strip_comments, strip_comments_or_keep
from veriscale.backends.lean.sections import LeanSections
from veriscale.backends.python.sections import PythonSections
from veriscale.benchmark.model import Signature, Task
from veriscale.llm import prompts
from veriscale.llm.parsers import parse_adversaries
from veriscale.llm.prompts import ADVERSARY_MARKER

SIG = Signature.from_json({
    "name": "addOne",
    "parameters": [{"param_name": "xs", "param_type": "List Int"},
                   {"param_name": "k", "param_type": "Nat"}],
    "return_type": "List Int",
})
NO_PARAMS = Signature.from_json({"name": "c", "parameters": [], "return_type": "Nat"})


def lean_task() -> Task:
    return Task("t_lean", "d", SIG,
                sections={"lean": LeanSections(precond="k > 0", postcond="result = xs")})


def python_task() -> Task:
    return Task("t_py", "d", SIG, sections={"python": PythonSections(
        precondition="def precondition(xs, k):\n    return k > 0",
        reference="def reference(xs, k):\n    return xs",
        postcondition="def postcondition(xs, k, result):\n    return result == xs")})


def test_every_plugin_serves_the_llm_layer() -> None:
    for plugin in plugins():
        assert isinstance(plugin, LanguagePlugin), plugin.name


@pytest.mark.parametrize("make", [lean_task, python_task])
def test_prompt_parts_come_from_the_plugin(make) -> None:
    task = make()
    plugin = plugin_for(task)
    parts = plugin.prompt_parts(task)
    assert isinstance(parts, PromptParts)
    assert ADVERSARY_MARKER in parts.adversary_marker and "{i}" in parts.adversary_marker
    system = prompts.spec_messages(task, "a. xs", "a. res")[0]["content"]
    assert f"```{plugin.code_fence()}\n{parts.pre_marker}\n" in system
    user = prompts.adversary_messages(task, Spec(postcond="True"), 2)[1]["content"]
    pre, post = plugin.spec_texts(task, Spec(postcond="True"))
    assert pre in user and post in user and parts.impl_sig in user


def test_lean_headers_have_one_renderer() -> None:
    assert render.code_header(SIG) == (
        "def addOne (xs : List Int) (k : Nat) (h_precond : addOne_precond (xs) (k)) : List Int")
    assert render.postcond_header(SIG, result_colon=": ").endswith(
        "(result: List Int) (h_precond : addOne_precond (xs) (k)) : Prop")
    assert render.precond_header(NO_PARAMS) == "def c_precond : Prop"
    assert render.code_header(NO_PARAMS, "c_ref") == "def c_ref (h_precond : c_precond) : Nat"
    task = lean_task()
    assert plugin_for(task).code_header(task) == render.code_header(SIG)


def test_lean_comments_are_removed_by_the_lexer() -> None:
    code = 'def f := "-- kept" -- gone\n/- a\n /- nested -/ b -/def g := \'-\''
    assert strip_comments(code) == 'def f := "-- kept" \n\ndef g := \'-\''
    with pytest.raises(LexError):
        strip_comments('def f := "open')
    assert strip_comments_or_keep('def f := "open') == 'def f := "open'


def test_coq_seed_prompt_shows_the_coq_precondition() -> None:
    from veriscale.backends.coq import format as F

    sig = F.coq_signature({"name": "inc", "return_type": "Z",
                           "parameters": [{"param_name": "x", "param_type": "Z"}]})
    sections = F.CoqSections(precond="0 <=? x", code="x + 1", postcond="result =? x + 1")
    task = Task(id="inc", description="", signature=sig, sections={"coq": sections})
    user = prompts.seed_messages(task, 4)[1]["content"]
    assert "Definition inc_precond (x : Z) : bool :=\n  0 <=? x." in user
    assert "def inc_precond" not in user


def test_red_team_answers_of_a_plugin_without_answer_syntax_are_its_own() -> None:
    with pytest.raises(LookupError):
        parse_adversaries("```coq\nDefinition f := 1.\n```", SIG, "coq")
    with pytest.raises(ParseError):
        parse_adversaries("no code", SIG, "lean")


def test_a_helper_the_adversary_defines_itself_is_not_added_again() -> None:
    """The language's own reading of what code defines (here Lean's, an attribute on the
    header's line) decides which shared helpers an adversary still needs."""
    sig = Signature.from_json({"name": "f", "parameters": [
        {"param_name": "x", "param_type": "Nat"}], "return_type": "Nat"})
    answer = """```lean
-- Adversarial Implementation 1
def helper (n : Nat) : Nat := 0
def f1 (x : Nat) (h_precond : f_precond (x)) : Nat := helper x
-- Adversarial Implementation 2
@[simp] def helper (n : Nat) : Nat := 1
def f2 (x : Nat) (h_precond : f_precond (x)) : Nat := helper x
```"""
    impls = parse_adversaries(answer, sig, "lean").implementations
    assert [i.code.count("def helper") for i in impls] == [1, 1]
    assert "@[simp] def helper (n : Nat) : Nat := 1" in impls[1].code
