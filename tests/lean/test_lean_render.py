"""File rendering and message attribution (no Lean)."""

from __future__ import annotations

import pytest

from veriscale.backends.base import Implementation, Spec
from veriscale.backends.lean import render
from veriscale.backends.lean.process import LeanMessage
from veriscale.backends.lean.sections import LeanSections
from veriscale.benchmark.model import Signature, Task
from veriscale.benchmark.verina import notation
from veriscale.values import Some, parse_type


def _task(ret: str = "String", params: tuple[tuple[str, str], ...] = (("s", "String"),),
          imports: str = "") -> Task:
    sig = Signature.from_json({
        "name": "f", "parameters": [{"param_name": n, "param_type": t} for n, t in params],
        "return_type": ret})
    lean = LeanSections(solution_imports=imports, task_aux="def helper := 1",
                        precond="  s.length > 0", code="  s ++ \"!\"",
                        postcond="  result = s ++ \"!\"")
    return Task("verina_toy-1", "toy", sig, sections={"lean": lean})


def test_definitions_follow_verina_template() -> None:
    text = render.Variant(_task()).definitions()
    assert "def helper := 1" in text
    assert "@[reducible, simp]\ndef f_precond (s : String) : Prop :=\n  s.length > 0" in text
    assert "def f (s : String) (h_precond : f_precond (s)) : String :=\n  s ++ \"!\"" in text
    assert ("def f_postcond (s : String) (result : String) (h_precond : f_precond (s)) : Prop :="
            in text)


def test_candidates_replace_the_right_sections() -> None:
    spec = Spec(precond="s ≠ \"\"", postcond=None, precond_aux="def aux2 := 2")
    text = render.Variant(_task(), spec=spec).definitions()
    assert "s ≠ \"\"" in text and "def aux2 := 2" in text and "s.length > 0" not in text
    assert "def f (s" not in text  # specs are checked without code
    # VERINA checks a candidate precondition without any postcondition, and a
    # candidate's spec helpers are made reducible for decide
    assert "result = s ++" not in text and "@[reducible, simp] def aux2" in text
    with_post = render.Variant(_task(), spec=Spec(precond=None, postcond="True")).definitions()
    assert "s.length > 0" in with_post  # the GT precondition is used when none is given
    impl = Implementation("def f (s : String) : String := s")
    v = render.Variant(_task(), impl=impl)
    assert "def f (s : String) : String := s" in v.definitions()
    assert "_postcond" not in v.definitions() and not v.code_needs_proof()
    assert render.Variant(_task()).code_needs_proof()


def test_impl_takes_precond_reads_the_main_definition() -> None:
    t = _task()
    assert render.impl_takes_precond(t, "def g := 1\ndef f (s : String) (h : f_precond s) : String := s")
    assert not render.impl_takes_precond(t, "def f_precond_like := 1\ndef f (s : String) : String := s")


def test_terms_are_escape_safe() -> None:
    t = _task(params=(("s", "String"), ("n", "Int"), ("c", "Char")))
    term = render.precond_term(t, ('a"b\n\\', -3, "'"))
    assert term == 'f_precond "a\\"b\\n\\\\" (-3) \'\\\'\''
    assert render.postcond_term(_task(), ("x",), "x!") == 'f_postcond "x" "x!" (by sorry)'
    assert render.call_term(_task(), ("x",), True) == 'f "x" (by sorry)'
    with pytest.raises(ValueError):
        render.args_text(t, ("only one",))


def test_opaque_values_cannot_inject_commands() -> None:
    from veriscale.values import OpaqueValue

    t = _task(params=(("m", "Map Int Int"),))
    assert render.args_text(t, (OpaqueValue("Map.empty"),)) == "Map.empty"
    with pytest.raises(ValueError, match="rejected"):
        render.args_text(t, (OpaqueValue("Map.empty)\n#exit"),))


@pytest.mark.parametrize(("ty", "value", "reduced"), [
    ("String", "héllo\"", "[104, 233, 108, 108, 111, 34]"),
    ("Char", "é", "233"),
    ("List String", ("ab", ""), "[[97, 98], []]"),
    ("Array Char", ("x", "y"), "[120, 121]"),
    ("Option Char", Some("z"), "some 122"),
    ("Option String", None, "none"),
    ("String × Int", ("a", -2), "([97], Int.negSucc 1)"),
    ("List (Char × Nat)", (("a", 2),), "[(97, 2)]"),
    ("Array Int", (1, -1), "{ toList := [Int.ofNat 1, Int.negSucc 0] }"),
    ("UInt8 × UInt8", (255, 0), "(255, 0)"),
])
def test_projection_round_trip(ty: str, value: object, reduced: str) -> None:
    t = parse_type(ty)
    term, shown = render.projection(t, "e")
    assert "e" in term
    assert render.unproject(t, notation.parse(shown, reduced)) == value


def test_layout_ranges_and_attribution() -> None:
    a, b = _task(), _task(imports="import Mathlib\nimport Std.Data.HashMap")
    units = [render.Unit(render.namespace_for(a.id, 0), render.Variant(a), ["#check (1)", "#check (2)"]),
             render.Unit(render.namespace_for(b.id, 1), render.Variant(b), ["#check (\n  3)"])]
    lay = render.layout_file(units, kernel=True, max_heartbeats=123)
    lines = lay.text.splitlines()
    assert lines[0] == "import Std.Data.HashMap" and lay.dropped_imports == ["Mathlib"]
    assert "set_option maxHeartbeats 123" in lines  # maxErrors: the runner's command line
    assert lines.count("noncomputable section") == 2
    assert "namespace VS_verina_toy_1_0" in lines
    (s1, e1), (s2, _) = lay.checks[0]
    assert lines[s1 - 1] == "#check (1)" and s1 == e1 and lines[s2 - 1] == "#check (2)"
    s3, e3 = lay.checks[1][0]
    assert e3 == s3 + 1
    d0 = lay.definitions[0]
    msgs = [LeanMessage("information", s2, 0, s2, 1, "two"),
            LeanMessage("error", e3, 2, e3, 3, "bad three"),
            LeanMessage("error", d0[0] + 1, 0, d0[0] + 1, 1, "def err"),
            LeanMessage("error", 1, 0, 1, 1, "header err"),
            LeanMessage("information", lay.sentinels[1], 0, lay.sentinels[1], 1, "ok"),
            LeanMessage("error", lay.spans[1][1], 0, lay.spans[1][1], 1, "bad end")]
    att = render.attribute(lay, msgs)
    assert [m.text for m in att.checks[0][1]] == ["two"] and att.checks[0][0] == []
    assert [m.text for m in att.checks[1][0]] == ["bad three"]
    assert [m.text for m in att.definitions[0]] == ["def err"]
    assert [m.text for m in att.definitions[1]] == ["bad end"]
    assert [m.text for m in att.header] == ["header err"]
    assert att.sentinel_seen == [False, True]
    compiled = render.layout_file(units, kernel=False, max_heartbeats=1,
                                  allow_import=lambda m: True)
    assert "noncomputable section" not in compiled.text and "import Mathlib" in compiled.text


def test_a_file_splits_into_its_base_and_the_rest() -> None:
    """A Lean session runs a file's base once (imports, options, the runner's prelude)
    and then only the rest; a file's compatibility definitions are not in its base."""
    from veriscale.backends.lean import session

    a = _task()
    units = [render.Unit(render.namespace_for(a.id, 0), render.Variant(a), ["#check (1)"])]
    lay = render.layout_file(units, kernel=False, max_heartbeats=1, prelude="def vsP := 1",
                             local_prelude="def vsCompat := 2", imports=("Lean",))
    base, base_lines, rest = session.split_base(lay.text)  # type: ignore[misc]
    assert base.startswith("import Lean\n") and "def vsP := 1" in base
    assert "vsCompat" not in base and rest.startswith("\ndef vsCompat := 2")
    # the rest, after as many blank lines as the base took, keeps every line's number
    served = ("\n" * base_lines + rest).splitlines()
    assert served[lay.checks[0][0][0] - 1] == "#check (1)"
    assert served[lay.ready - 1] == render.SENTINEL
    assert session.split_base("import Lean\n#check (1)\n") is None
    kernel = render.layout_file(units, kernel=True, max_heartbeats=1)
    assert session.BASE_END in kernel.text and session.split_base(kernel.text) is None
    other = render.layout_file(units, kernel=False, max_heartbeats=1, prelude="def vsP := 1",
                               local_prelude="", imports=("Lean",))
    assert session.split_base(other.text)[0] == base  # type: ignore[index]


def test_a_std_submodule_does_not_change_a_base_that_imports_std() -> None:
    """``import Std`` (the runner's, in compiled mode) covers a task's ``import
    Std.Data.HashSet``: the file's base stays the one of every other file, so a Lean
    session serves it instead of starting a new one. Without ``Std`` it is imported."""
    from veriscale.backends.lean import session

    plain, hashed = _task(), _task(imports="import Std.Data.HashSet")
    def base(task: object, imports: tuple[str, ...]) -> str:
        units = [render.Unit(render.namespace_for(task.id, 0), render.Variant(task),  # type: ignore[attr-defined]
                             ["#check (1)"])]
        lay = render.layout_file(units, kernel=False, max_heartbeats=1, imports=imports)
        return session.split_base(lay.text)[0]  # type: ignore[index]

    assert base(hashed, ("Lean", "Std")) == base(plain, ("Lean", "Std"))
    assert "import Std.Data.HashSet" in base(hashed, ("Lean",))
    assert render.covered_import("Std.Data.HashMap", ("Lean", "Std"))
    assert not render.covered_import("Std.Data.HashMap", ("Lean",))
    assert not render.covered_import("Stdx.Foo", ("Std",))


def test_commands_by_mode() -> None:
    assert render.decide_command("P 1", True) == "#reduce decide (P 1)"
    assert render.decide_command("P 1", False) == "#eval! decide (P 1)"
    assert render.value_command("f 1", parse_type("Int"), True) == "#reduce f 1"
    assert render.value_command("f 1", parse_type("Int"), False) == "#eval! (f 1)"
    assert "Char.toNat" in render.value_command("f 1", parse_type("String"), True)
    text = render.plausible_command("¬ (f_postcond 1 2 (by sorry))", "f_postcond", postcond=True)
    assert text.startswith("example : ¬ (") and "randomSeed := some 42" in text
    assert "simp (config := { failIfUnchanged := false }) [*]" in text
