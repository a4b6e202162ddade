"""The Coq parts of the LLM layer: prompts, answer parsers, offline red team, weakenings."""

from __future__ import annotations

from test_coq_backend import make_task

from veriscale.backends.coq.answers import parse_adversary_answer, parse_spec_answer
from veriscale.backends.coq.lexer import split_conjuncts
from veriscale.backends.coq.plugin import COQ
from veriscale.backends.coq.templates import adversary_templates
from veriscale.backends.coq.weaken import weakened_postconditions
from veriscale.backends.language import plugin_for
from veriscale.llm import prompts
from veriscale.llm.offline import flawed_specs, offline_adversaries


def test_conjuncts_split_only_at_top_level():
    assert split_conjuncts("(a && b) && c") == ["(a && b)", "c"]
    assert split_conjuncts("a && b || c") == ["a && b || c"]
    assert split_conjuncts("a && if c then x && y else z") == ["a", "if c then x && y else z"]
    assert split_conjuncts('(* && *) a && (String.eqb "&&" s)') == ["a", '(String.eqb "&&" s)']


def test_offline_red_team_and_weakenings_for_coq():
    task = make_task(postcond="(result =? x + 1) && (0 <? result)")
    assert plugin_for(task) is COQ
    strategies = {t.strategy for t in adversary_templates(task)}
    assert {"constant-return", "input-echo", "edge-case", "near-miss"} <= strategies
    assert all(COQ.screen(t.code) is None for t in adversary_templates(task))
    assert [w.label for w in weakened_postconditions(task)] == ["drop:1", "drop:2", "drop-all"]
    assert len(flawed_specs(task)) == 3
    result = offline_adversaries(task)
    assert result.implementations and not result.rejected


def test_prompts_speak_coq_with_its_forbidden_constructs():
    task = make_task()
    system = prompts.spec_messages(task, "a. x : Z", "a. res : Z")[0]["content"]
    assert "Coq" in system and "```coq" in system and "Admitted" in system
    assert "(* Precondition Implementation *)" in system
    [sys_msg, user] = prompts.adversary_messages(task, flawed_specs(task)[0], 2)
    assert "(* Adversarial Implementation 1 *)" in sys_msg["content"]
    assert "Definition inc (x : Z) : Z :=" in user["content"]


def test_answers_are_parsed():
    task = make_task()
    answer = """```coq
(* Precondition Implementation *)
Definition inc_precond (x : Z) : bool := 0 <=? x.
(* Postcondition Implementation *)
Definition helper (x : Z) : Z := x + 1.
Definition inc_postcond (x : Z) (result : Z) : bool := result =? helper x.
```"""
    spec = parse_spec_answer(answer, task, "llm:m")
    assert spec.precond == "0 <=? x" and spec.postcond == "result =? helper x"
    assert "helper" in spec.postcond_aux and spec.id
    impls, bad = parse_adversary_answer(
        "```coq\n(* Adversarial Implementation 1 *)\nDefinition inc1 (x : Z) : Z := 0.\n"
        "(* Adversarial Implementation 2 *)\nno code here\n```", task, "llm:m", "s")
    assert [i.code for i in impls] == ["Definition inc (x : Z) : Z := 0."] and len(bad) == 1


def test_seeds_and_mutants_stay_inside_the_nat_bound():
    from veriscale.backends.coq.plugin import NAT_BOUND
    from veriscale.expansion.mutation import MutationConfig, mutate_inputs
    from veriscale.pipeline.stages import _language_filter

    task = make_task(name="idn", params=(("n", "nat"), ("z", "Z")), ret="nat", precond="true",
                     code="n", postcond="Nat.eqb result n")
    accept = _language_filter(task)
    assert accept((NAT_BOUND, 10**30)) and not accept((NAT_BOUND + 1, 0))
    out = mutate_inputs(task.signature, [(900, 5), (3, 10**20)],
                        MutationConfig(max_mutations_per_input=30, seed=1), accept)
    assert out and all(n <= NAT_BOUND for n, _ in out)
    assert any(abs(z) > 10**6 for _, z in out)  # Z keeps its large magnitudes


def test_seeds_and_mutants_stay_ascii():
    from veriscale.expansion.mutation import MutationConfig, mutate_inputs
    from veriscale.pipeline.stages import _language_filter

    task = make_task(name="rev", params=(("s", "string"), ("c", "ascii")), ret="string",
                     precond="true", code="s", postcond="String.eqb result s")
    accept = _language_filter(task)
    assert accept(("abc", "a")) and not accept(("é", "a")) and not accept(("a", "é"))
    out = mutate_inputs(task.signature, [("hello", "x"), ("", "q")],
                        MutationConfig(max_mutations_per_input=60, seed=3), accept)
    assert len(out) > 20 and all(s.isascii() and c.isascii() for s, c in out)


def test_code_mutants_reach_the_helpers_with_the_lean_families():
    """Most VERINA-Coq code lives in its helpers: the body `only_once_loop a key 0%nat`
    has one site, the helper many; every mutant is a complete, distinct definition."""
    aux = ("Fixpoint loop (a : list Z) (key : Z) (n : nat) : bool :=\n"
           "  match a with\n  | [] => (n =? 1)%nat\n"
           "  | x :: xs => let m := if (x =? key)%Z then (n + 1)%nat else n in loop xs key m\n"
           "  end.")
    task = make_task(name="once", params=(("a", "(list Z)"), ("key", "Z")), ret="bool",
                     precond="true", code="loop a key 0%nat", postcond="true", code_aux=aux)
    got = COQ.code_mutants(task, 100, seed=0)
    ops = {op for op, _ in got}
    assert {"0->1", "1->0", "plus->minus", "if->true (drop else)", "if->false (drop then)",
            "eq->le"} <= ops
    assert len({text for _, text in got}) == len(got)
    assert all(text.rstrip().endswith(".") and "Definition once" in text for _, text in got)
    assert any("loop a key 1%nat" in text for _, text in got)  # the body's own site
    assert any("(n - 1)%nat" in text for _, text in got)  # a helper's site
    few = COQ.code_mutants(task, 3, seed=1)
    assert len(few) == 3 and few == COQ.code_mutants(task, 3, seed=1)
    assert set(few) <= set(got)
