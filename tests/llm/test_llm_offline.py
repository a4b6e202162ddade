"""The offline provider: weakened GT specs, red-team templates, determinism, safety screening."""

from __future__ import annotations

import ast
import re

import pytest

from veriscale.backends.base import Spec
from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean.conjuncts import split_conjuncts
from veriscale.backends.lean.sections import LeanSections
from veriscale.backends.lean.templates import lean_templates
from veriscale.backends.lean.weaken import lean_weakenings
from veriscale.backends.python.templates import py_perturbations
from veriscale.backends.python.weaken import python_weakenings
from veriscale.backends.screen import untrusted_problem
from veriscale.benchmark.model import Signature, Task
from veriscale.llm.offline import OfflineProvider, flawed_specs, offline_decomposition
from veriscale.values import parse_type

# ---------------------------------------------------------------------- Lean weakening


def labels_bodies(body: str, ret: str = "Bool") -> dict[str, str]:
    return {w.label: w.body for w in lean_weakenings(body, parse_type(ret))}


def test_split_respects_parentheses_binders_and_loose_operators() -> None:
    assert split_conjuncts("(a ∧ b) ∧ c") == ["(a ∧ b)", "c"]
    assert split_conjuncts("(a ∧ b ∧ c)") == ["a", "b", "c"]
    assert split_conjuncts("a = 1 ∧ ∀ i, P i ∧ Q i") == ["a = 1", "∀ i, P i ∧ Q i"]
    assert split_conjuncts("a ∧ b ∨ c") == ["a ∧ b ∨ c"]  # ∨ binds looser: no split
    assert split_conjuncts("a ∧ b → c") == ["a ∧ b → c"]
    assert split_conjuncts('s = "x ∧ y" ∧ t') == ['s = "x ∧ y"', "t"]
    assert split_conjuncts("xs.all (fun x => x > 0 ∧ x < 5) ∧ r") == [
        "xs.all (fun x => x > 0 ∧ x < 5)", "r"]


def test_lean_weakenings_drop_each_conjunct_and_all() -> None:
    got = labels_bodies("(result → P n) ∧ (¬ result → Q n)")
    assert got == {"drop:1": "(¬ result → Q n)", "drop:2": "(result → P n)", "drop-all": "True"}


def test_lean_weakenings_keep_let_lines() -> None:
    body = "let s := xs.sum\n-- a comment\nresult ≤ s ∧\n  s ≤ result + 1"
    got = labels_bodies(body, "Int")
    assert got["drop:1"] == "let s := xs.sum\ns ≤ result + 1"
    assert got["drop:2"] == "let s := xs.sum\nresult ≤ s"
    assert got["drop-all"] == "True"


def test_lean_weakenings_inside_binder_and_consequent() -> None:
    got = labels_bodies("∀ i < n, result[i]! = 0 ∧ P i", "List Nat")
    assert got["under-binder/drop:1"] == "∀ i < n, P i"
    got = labels_bodies("xs ≠ [] → result ∈ xs ∧ ∀ y ∈ xs, y ≤ result", "Int")
    assert got["consequent/drop:2"] == "xs ≠ [] → (result ∈ xs)"


def test_lean_equality_on_result_is_weakened_by_type() -> None:
    assert labels_bodies("result = xs.length ∧ ok", "Nat")["weaken:1:le"] == (
        "(result ≤ xs.length) ∧ ok")
    assert labels_bodies("xs.reverse = result", "List Int")["weaken:1:length"] == (
        "result.length = xs.reverse.length")
    assert labels_bodies("result = a.map f", "Array Int")["weaken:1:size"] == (
        "result.size = (a.map f).size")
    assert not any(k.startswith("weaken") for k in labels_bodies("result = true"))


# ---------------------------------------------------------------------- Python weakening

PY_POST = '''def postcondition(xs, result):
    if len(result) != len(xs):
        return False
    if any(x not in xs for x in result):
        return False
    total = sum(x for x in xs)
    if result and result[0] is None:
        return total > 0
    return sorted(result) == result and result == sorted(xs)
'''


def test_python_weakenings() -> None:
    got = {w.label: w.body for w in python_weakenings(PY_POST, parse_type("List Int"))}
    assert set(got) == {"drop-check:1", "drop-check:2", "drop:1", "drop:2", "weaken:1:length", "weaken:2:length",
                        "relax-branch:1", "drop-all"}
    assert "len(result) != len(xs)" not in got["drop-check:1"]
    assert "any(" not in got["drop-check:2"]  # the comprehension's `x` is not a later name
    assert got["drop:1"].endswith("return result == sorted(xs)")
    assert got["weaken:2:length"].endswith("len(result) == len(sorted(xs))")
    assert got["drop-all"] == "def postcondition(xs, result):\n    return True"
    for body in got.values():
        compile(body, "<spec>", "exec")


def test_python_weakening_of_garbage_is_empty() -> None:
    assert python_weakenings("def postcondition(:", parse_type("Int")) == []
    assert python_weakenings("x = 1", parse_type("Int")) == []


# ---------------------------------------------------------------------- Lean templates

SIG = Signature.from_json({
    "name": "sumTo",
    "parameters": [{"param_name": "xs", "param_type": "List Nat"},
                   {"param_name": "k", "param_type": "Nat"}],
    "return_type": "List Nat",
})


def lean_task() -> Task:
    lean = LeanSections(
        precond="k ≤ xs.length",
        code_aux="def keepAux (n : Nat) : Nat := n",
        code="match xs with\n| [] => []\n| x :: t => x :: sumTo t k (by sorry)",
        postcond="result.length = xs.length ∧ ∀ i < k, result[i]! = xs[i]!",
    )
    return Task(id="t", description="d", signature=SIG, sections={"lean": lean})


def test_lean_templates_have_the_exact_signature_and_rename_recursion() -> None:
    templates = lean_templates(lean_task())
    strategies = {t.strategy for t in templates}
    assert strategies == {"constant-return", "input-echo", "trivial-synthesis",
                          "malicious-deletion", "edge-case", "near-miss"}
    header = "def sumTo (xs : List Nat) (k : Nat) (h_precond : sumTo_precond (xs) (k)) : List Nat :="
    for tpl in templates:
        mains = [ln for ln in tpl.code.splitlines() if ln.startswith("def sumTo ")]
        assert mains == [header], tpl.code
    near = next(t for t in templates if t.detail == "reverse")
    assert "def sumTo_vs_ref (xs : List Nat) (k : Nat) (h_precond" in near.code
    assert "x :: sumTo_vs_ref t k (by sorry)" in near.code  # GT recursion renamed
    # the backend replaces code_aux together with the code: wrappers carry it
    assert near.code.startswith("def keepAux (n : Nat) : Nat := n")
    assert all("keepAux" not in t.code for t in templates if t.strategy != "near-miss"
               and t.strategy != "edge-case")
    assert near.code.rstrip().endswith("r.reverse")


def test_lean_string_templates_avoid_the_form_that_crashes_wasm_lean() -> None:
    """``String.ofList (s.toList.drop 1)`` (or ``.asString``), compiled on the WASM Lean,
    takes the process down: on the full VERINA run it stopped 26 files and cost 41
    session restarts. The templates drop a string's first character another way."""
    sig = Signature.from_json({
        "name": "clean", "parameters": [{"param_name": "s", "param_type": "String"}],
        "return_type": "String"})
    task = Task(id="t", description="d", signature=sig,
                sections={"lean": LeanSections(code='s.push \'!\'', postcond="True")})
    templates = lean_templates(task)
    drops = [t for t in templates if "drop" in t.detail]
    assert {t.strategy for t in drops} >= {"malicious-deletion", "near-miss"}
    for tpl in templates:
        assert not re.search(r"\.drop 1\)\.asString|String\.ofList \(.*\.drop 1\)", tpl.code), \
            tpl.code
        if "drop" in tpl.detail:
            assert re.search(r"String\.join \(\([rs]\.toList\.drop 1\)\.map toString\)",
                             tpl.code), tpl.code


def test_offline_lean_adversaries_are_screened_for_safety() -> None:
    result = OfflineProvider(0).adversaries(lean_task(), Spec(id="s"))
    # the GT code uses `sorry`, so wrappers around it are rejected; plain strategies pass
    assert result.rejected and all("sorry" in r for r in result.rejected)
    assert result.implementations
    assert all(untrusted_problem(i.code, "lean") is None for i in result.implementations)
    assert all(i.target_spec == "s" and i.origin == "offline" for i in result.implementations)


@pytest.mark.parametrize("code", [
    "axiom cheat : False", "def f := sorry", "@[implemented_by g] def f := 1",
    "instance : BEq Nat := ⟨fun _ _ => true⟩", "#eval 1", "open Nat in\ndef f := 1",
    "unsafe def f := 1", "partial def f : Nat := f", "def f : IO Unit := pure ()",
    "set_option maxRecDepth 10 in def f := 1", "macro \"x\" : term => `(1)",
])
def test_lean_safety_rejects(code: str) -> None:
    assert untrusted_problem(code, "lean") is not None


def test_lean_safety_accepts_plain_code() -> None:
    code = ('@[reducible] def f (xs : List Nat) : Nat :=\n  -- no sorry here\n'
            '  let s := "axiom"\n  xs.length + s.length')
    assert untrusted_problem(code, "lean") is None


# ---------------------------------------------------------------------- Python templates


def test_python_perturbations_change_the_value() -> None:
    for type_text, value in [("Nat", 0), ("Nat", 5), ("Int", -3), ("Bool", True),
                             ("List Int", [1, 2, 3]), ("String", "ab"), ("Char", "a"),
                             ("Option Nat", 4), ("Int × Int", (1, 1)), ("UInt8", 255)]:
        for label, expr in py_perturbations(parse_type(type_text), "r"):
            changed = eval(expr, {"r": value})  # the expressions are our own templates
            if label == "swap" and value == (1, 1):
                assert changed == value  # swapping equal components changes nothing
                continue
            assert changed != value, (type_text, label)


def test_offline_python_adversaries_on_the_bundled_benchmark(bundled_dir) -> None:
    from veriscale.backends.registry import make_backend

    tasks, _ = load_benchmark(bundled_dir)
    backend = make_backend("python")
    try:
        for task in tasks:
            result = OfflineProvider(3).adversaries(task, Spec(id="s"))
            assert result.implementations and not result.rejected, task.id
            for impl in result.implementations:
                module = ast.parse(impl.code)
                fn = [n for n in module.body
                      if isinstance(n, ast.FunctionDef) and n.name == task.signature.name]
                assert len(fn) == 1, (task.id, impl.code)
                assert [a.arg for a in fn[0].args.args] == list(task.signature.names)
                assert backend.compile(task, impl) is None, (task.id, impl.strategy)
    finally:
        backend.close()


# ---------------------------------------------------------------------- determinism


def test_offline_provider_is_deterministic(bundled_dir) -> None:
    tasks, _ = load_benchmark(bundled_dir)

    def snapshot(seed: int) -> list:
        p = OfflineProvider(seed)
        out = []
        for task in tasks:
            specs = p.specifications(task, p.decompose(task)).specs
            advs = p.adversaries(task, specs[0]).implementations
            seeds = list(p.seed_inputs(task, 20))
            out.append(([s.id for s in specs], [a.id for a in advs], seeds))
        return out

    first = snapshot(5)
    assert first == snapshot(5)
    assert [x[:2] for x in first] == [x[:2] for x in snapshot(6)]  # ids do not depend on seed
    for (_, _, seeds), task in zip(first, tasks, strict=True):
        own = {t.input for t in task.tests} | set(task.reject_inputs)
        assert seeds and not own & {inp for inp, _ in seeds}
        assert {prov for _, prov in seeds} == {"seed:offline"}


def test_flawed_specs_of_every_bundled_task_compile(bundled_dir) -> None:
    from veriscale.backends.registry import make_backend

    tasks, _ = load_benchmark(bundled_dir)
    backend = make_backend("python")
    try:
        for task in tasks:
            specs = flawed_specs(task)
            assert any(s.origin == "offline:drop-all" for s in specs), task.id
            assert len({s.id for s in specs}) == len(specs)
            for spec in specs:
                assert spec.precond is None and re.match(r"spec-[0-9a-f]{16}$", spec.id)
                assert backend.compile(task, spec=spec) is None, (task.id, spec.origin)
    finally:
        backend.close()


def test_offline_decomposition_uses_description_sections() -> None:
    task = Task(id="t", signature=SIG, description=(
        "-----Description-----\nSum.\n-----Input-----\nxs: numbers\n-----Output-----\nA list."))
    d = offline_decomposition(task)
    assert "xs: numbers" in d.input_model and "A list." in d.output_model
    assert d.origin == "offline"
