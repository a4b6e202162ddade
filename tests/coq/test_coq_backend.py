"""The Coq backend on real coqc, on small tasks of our own."""

from __future__ import annotations

import pytest
from coq_paths import needs_coqc

from veriscale.backends.base import Implementation, Label, Spec, Verdict
from veriscale.backends.coq import format as F
from veriscale.backends.coq.backend import CoqBackend
from veriscale.backends.coq.files import big_nat_literal, hoist_requires
from veriscale.backends.coq.safety import screen, screen_term
from veriscale.backends.coq.sections import coq_sections
from veriscale.benchmark.model import ExpectedPair, Task

pytestmark = [pytest.mark.coq]

IMPORTS = "Require Import ZArith.\nRequire Import List.\nImport ListNotations.\nOpen Scope Z_scope."


def make_task(name="inc", params=(("x", "Z"),), ret="Z", precond="0 <=? x",
              code="x + 1", postcond="result =? x + 1", code_aux="") -> Task:
    sig = F.coq_signature({"name": name, "return_type": ret, "parameters": [
        {"param_name": n, "param_type": t} for n, t in params]})
    sections = F.CoqSections(task_imports=IMPORTS, precond=precond, code=code, code_aux=code_aux,
                             postcond=postcond)
    sections.source = F.render_task_v(sig, sections)
    sections = F.parse_coq_sections(sections.source)
    return Task(id=name, description="", signature=sig, sections={"coq": sections},
                tests=[ExpectedPair((3,), 4, [5])], reject_inputs=[(-1,)])


@pytest.fixture
def backend():
    b = CoqBackend(workers=1, timeout=120, check_timeout=5)
    yield b
    b.close()


def test_screen_refuses_what_could_cheat_or_escape():
    assert screen("Definition f (x : Z) : Z := x.") is None
    assert screen("Require Import ZArith.\nFixpoint g (n : nat) : nat := n.") is None
    for bad in ("Axiom cheat : False.", "Lemma l : 1 = 1. Proof. admit. Admitted.",
                "Parameter p : nat.", "Unset Guard Checking.", "Declare ML Module \"x\".",
                "Load evil.", "Redirect \"f\" Print nat.", "Drop.",
                "#[bypass_check(guard)] Fixpoint f (n : nat) : nat := f n.",
                "Extraction Language OCaml.", "Require Import Foo.Bar.",
                "Notation \"'true'\" := false.", "Compute 1.", "End M.",
                "Definition f := 1. Module M."):
        assert screen(bad) is not None, bad
    assert screen_term("x + 1") is None
    assert screen_term("x. Axiom a : False") is not None
    # no candidate names the checker's modules (another candidate's, the ground truth's)
    for bad in ("Definition f (a b : Z) : Z := VsqU0.f a b.", "Definition g := vsqL1.L0."):
        assert "checker's own modules" in (screen(bad) or ""), bad
    assert "checker's own modules" in (screen_term("VsqU3_1.f x") or "")


def test_units_sit_in_modules_no_candidate_can_name():
    """Each unit's module carries the file's nonce (unguessable, per file): a
    candidate that slipped a qualified name past the screen still names nothing."""
    from veriscale.backends.coq.files import Check, Unit, render_file

    units = [Unit("Definition f (x : nat) : nat := x.", [Check("f 1")], trusted=False),
             Unit("Definition f (x : nat) : nat := 2 * x.", [Check("f 1")], trusted=True)]
    text, _ = render_file(units, "a1b2c3d4e5f6", 5)
    assert "Module VsqUa1b2c3d4e5f6_0." in text and "End VsqUa1b2c3d4e5f6_1." in text
    assert "Module VsqU0." not in text and "Module VsqU1." not in text
    assert screen_term("x.\nDefinition y := 0") is not None


def test_units_of_one_task_share_their_imports_in_an_enclosing_module():
    """Import ZArith costs about 26 ms: a task's imports are made once for the run of
    its units, in a module that encloses theirs, and each unit keeps the rest."""
    from veriscale.backends.coq.files import Check, Unit, import_prefix, render_file

    ctx = "Import ZArith.\nImport List.\n\nOpen Scope Z_scope.\nDefinition f := 1.\n"
    assert import_prefix(ctx) == (("Import ZArith.", "Import List.", "Open Scope Z_scope."),
                                  "Definition f := 1.")
    assert import_prefix("Definition g := 2.\nImport ZArith.") == \
        ((), "Definition g := 2.\nImport ZArith.")
    units = [Unit(ctx, [Check("f")], True), Unit(ctx.replace("1", "2"), [Check("f")], False),
             Unit("Definition f := 3.", [Check("f")], False)]
    text, spans = render_file(units, "n0nce", 5)
    assert text.count("Import ZArith.") == 1 and text.count("Module VsqGn0nce_0.") == 1
    assert text.index("Module VsqGn0nce_0.") < text.index("Module VsqUn0nce_1.") \
        < text.index("End VsqGn0nce_0.") < text.index("Module VsqUn0nce_2.")
    first, last, ui, ci = spans[0]
    assert last == first + 2
    assert (ui, ci) == (0, None) and text.splitlines()[first - 1] == "Import ZArith."


@needs_coqc
def test_shared_imports_give_each_unit_its_own_answers_and_its_own_failure():
    from veriscale.backends.coq.files import Unit, applied

    b = CoqBackend(workers=1, check_timeout=5)
    ctx = ("Require Import ZArith List.\nOpen Scope Z_scope.\n"
           "Definition vsq_fn (l : list Z) : Z := fold_left Z.add l 0.")
    lit = (("[(1)%Z; (2)%Z]", "list Z"),)
    units = [Unit(ctx, [applied("vsq_fn", lit)], True),
             Unit(ctx.replace("Z.add", "Z.max"), [applied("vsq_fn", lit)], False),
             Unit(ctx.replace("Z.add", "Nat.add"), [applied("vsq_fn", lit)], False),
             Unit(ctx.replace("Z.add", "Z.mul"), [applied("vsq_fn", lit)], False)]
    b.execute(units)
    assert [c.answer for u in units for c in u.checks] == ["3", "2", None, "0"]
    assert units[2].checks[0].error is not None and units[2].checks[0].error[0] == "context"


def test_requires_are_hoisted_and_imports_stay():
    reqs, rest = hoist_requires("(* c. *)\nRequire Import ZArith.\nFrom Coq Require Lia.\n"
                                "Definition f := 1.")
    assert reqs == ["Require ZArith.", "From Coq Require Lia."]
    assert "Import ZArith." in rest and "Require" not in rest and "Definition f" in rest


def test_big_nat_literals_are_found():
    assert big_nat_literal("(0 <? n)%nat && (n <? 9007199254740992)%nat", 1000) == \
        9007199254740992
    assert big_nat_literal("x <? 9007199254740992", 1000) is None


@needs_coqc
def test_ground_truth_checks(backend):
    task = make_task()
    cls = backend.classify(task, [(3,), (-1,)])
    assert [c.label for c in cls] == [Label.EXPECTED, Label.UNEXPECTED]
    assert backend.run(task, None, [(3,), (-7,)])[0].value == 4
    assert backend.postcondition_holds(task, None, [((3,), 4), ((3,), 5)]) == \
        [Verdict.TRUE, Verdict.FALSE]
    assert backend.compile(task) is None


@needs_coqc
def test_one_failing_check_never_hides_another(backend):
    task = make_task(name="half", params=(("n", "nat"),), ret="nat", precond="true",
                     code="Nat.div n 2", postcond="Nat.eqb result (Nat.div n 2)")
    slow = Implementation("Definition half (n : nat) : nat := if Nat.eqb n 7 then "
                          "Nat.pow 3 40 else Nat.div n 2.", id="slow")
    out = backend.run(task, slow, [(4,), (7,), (10,)])
    assert out[0].value == 2 and out[2].value == 5
    assert not out[1].ok and out[1].failure_kind in ("timeout", "memory")


LOOP = ("Definition half (n : nat) : nat := if Nat.leb 7 n then "
        "Z.to_nat (Z.iter 1000000000000 (fun z => z) 0%Z) else Nat.div n 2.")


def half_task():
    return make_task(name="half", params=(("n", "nat"),), ret="nat", precond="true",
                     code="Nat.div n 2", postcond="Nat.eqb result (Nat.div n 2)")


@needs_coqc
def test_a_looping_check_costs_its_own_limit_in_the_same_file():
    b = CoqBackend(workers=1, check_timeout=1)
    out = b.run(half_task(), Implementation(LOOP, id="loop"), [(7,), (4,), (8,), (10,)])
    assert [o.failure_kind for o in (out[0], out[2])] == ["timeout", "timeout"]
    assert "1 s limit" in out[0].error
    assert out[1].value == 2 and out[3].failure_kind == "timeout"
    assert b.stats.processes == 1 and b.stats.extra["reruns"] == 0


@needs_coqc
def test_a_context_past_its_timeout_budget_skips_its_larger_checks_as_unknown():
    b = CoqBackend(workers=1, check_timeout=3, timeout_budget=2)
    task = half_task()
    loop = Implementation(LOOP, id="loop")
    fine = Implementation("Definition half (n : nat) : nat := Nat.div n 2.", id="fine")
    inputs = [(n,) for n in (200, 3, 100, 7, 9, 12, 1000, 15)]
    looped, ok = b.run_many([(task, loop, inputs), (task, fine, inputs)])
    # smallest first: 3 answers, 7 and 9 time out, the larger ones are skipped
    assert looped[1].value == 1
    assert [looped[i].failure_kind for i in (3, 4)] == ["timeout", "timeout"]
    assert "3 s limit" in looped[3].error
    assert all(looped[i].failure_kind == "timeout" and "not run" in looped[i].error
               for i in (0, 2, 5, 6, 7))
    assert [o.value for o in ok] == [n // 2 for (n,) in inputs]
    assert b.stats.processes == 1 and b.stats.extra["skipped"] == 5


@needs_coqc
def test_a_check_that_ran_out_of_time_skips_its_larger_ones_in_later_files():
    """Once a check of a context ran out of its time, no larger check of it is run again
    (UNKNOWN at once, no coqc); smaller ones still run, and another context is untouched."""
    b = CoqBackend(workers=1, check_timeout=1)
    task = half_task()
    loop = Implementation(LOOP, id="loop")
    (first,) = b.run(task, loop, [(10,)])
    assert first.failure_kind == "timeout" and "1 s limit" in first.error
    before = b.stats.processes
    (larger,) = b.run(task, loop, [(100,)])
    assert larger.failure_kind == "timeout" and "no larger than it" in larger.error
    assert b.stats.processes == before  # answered without running coqc
    smaller, equal = b.run(task, loop, [(4,), (12,)])  # size: the check's text
    assert smaller.value == 2 and equal.failure_kind == "timeout"
    fine = Implementation("Definition half (n : nat) : nat := Nat.div n 2.", id="fine")
    assert [o.value for o in b.run(task, fine, [(100,)])] == [50]


@needs_coqc
def test_candidates_compile_screen_and_fail_as_candidates(backend):
    task = make_task()
    good = Implementation("Definition inc (x : Z) : Z := x + 2.")
    assert backend.run(task, good, [(1,)])[0].value == 3
    bad = Implementation("Definition inc (x : Z) : Z := x +.")
    [o] = backend.run(task, bad, [(1,)])
    assert not o.ok and o.failure_kind == "compile"
    cheat = Implementation("Axiom inc : Z -> Z.")
    [o] = backend.run(task, cheat, [(1,)])
    assert o.failure_kind == "compile" and "Axiom" in o.error
    assert backend.compile(task, impl=bad) is not None
    weak = Spec(postcond="true")
    assert backend.postcondition_holds(task, weak, [((3,), 5)]) == [Verdict.TRUE]
    assert backend.precondition_holds(task, Spec(precond="x <? 0"), [(3,)]) == [Verdict.FALSE]
    assert backend.compile(task, spec=Spec(postcond="result =? undefined_thing")) is not None


@needs_coqc
def test_a_specification_made_opaque_is_its_error_not_unknown(backend):
    """A bool closed with Qed does not reduce under Compute: a candidate that built
    its answer so chose not to answer, which is its ERROR (FAIL), never UNKNOWN."""
    task = make_task()
    sly = Spec(postcond="if opaque_yes then true else false",
               postcond_aux="Lemma opaque_yes : bool.\nProof. exact true. Qed.")
    [v] = backend.postcondition_holds(task, sly, [((3,), 5)])
    assert v is Verdict.ERROR
    got = backend.postcondition_holds(task, sly, [((3,), 5)])
    assert "opaque_yes" in got.reasons[0] and "Qed" in got.reasons[0]
    honest = Spec(postcond="if yes then true else false",
                  postcond_aux="Definition yes : bool := true.")
    assert backend.postcondition_holds(task, honest, [((3,), 5)]) == [Verdict.TRUE]


@needs_coqc
def test_printed_lines_cannot_forge_an_answer(backend):
    """idtac in a candidate's term prints when its definition is elaborated; answers
    are read between the file's secret-nonce markers, so what it prints is no answer."""
    task = make_task()
    forger = Spec(postcond="fake",
                  postcond_aux='Definition fake : bool := ltac:(idtac "true"; '
                               'idtac "= true : bool"; exact false).')
    assert backend.postcondition_holds(task, forger, [((3,), 4), ((3,), 5)]) == [
        Verdict.FALSE, Verdict.FALSE]


def test_opaque_names_are_what_the_text_closes_with_qed():
    from veriscale.backends.coq.safety import opaque_names
    text = ("Lemma a : bool. Proof. exact true. Qed.\nDefinition b : bool. exact true. Defined.\n"
            "(* Lemma c : bool. Qed. *) Local Definition d : nat. exact 1. Qed.")
    assert opaque_names(text) == {"a", "d"}


@needs_coqc
def test_nat_above_the_bound_is_not_evaluated():
    b = CoqBackend(nat_bound=1000)
    task = make_task(name="idn", params=(("n", "nat"),), ret="nat", precond="true", code="n",
                     postcond="Nat.eqb result n")
    [c, small] = b.classify(task, [(10**9,), (5,)])
    assert c.label == Label.UNKNOWN and "bound" in c.detail
    assert small.label == Label.EXPECTED
    [o] = b.run(task, None, [(10**9,)])
    assert o.failure_kind == "unsupported"


@needs_coqc
def test_many_tasks_share_one_file(backend):
    tasks = [make_task(name=f"inc{i}", code=f"x + {i}", postcond=f"result =? x + {i}")
             for i in range(5)]
    before = backend.stats.processes
    answers = backend.evaluate_many([("run", (t, None, [(1,), (2,)])) for t in tasks])
    assert [[o.value for o in a] for a in answers] == [[1 + i, 2 + i] for i in range(5)]
    assert backend.stats.processes - before == 1


@needs_coqc
def test_coqc_files_drive_the_progress_display(backend):
    events: list[tuple[str, int, int]] = []
    backend.progress = lambda *e: events.append(e)
    tasks = [make_task(name=f"inc{i}", code=f"x + {i}") for i in range(3)]
    backend.max_units = 2  # three task contexts: two files
    backend.evaluate_many([("run", (t, None, [(1,), (2,)])) for t in tasks])
    assert events[0] == ("planned", 2, 6)
    assert sorted(events[1:]) == [("done", 1, 2), ("done", 1, 4)]


@needs_coqc
def test_each_coqc_file_tells_its_answers_before_the_batch_returns(backend, tmp_path):
    """The oracle cache stores a file's conclusive answers as it finishes (a run
    killed mid-stage keeps them), and they are the answers the batch returns."""
    from veriscale.backends.cache import OracleCache, with_cache

    tasks = [make_task(name=f"inc{i}", code=f"x + {i}") for i in range(3)]
    backend.max_units = 2  # three task contexts: two files
    told: list[list[tuple]] = []
    cache = OracleCache(tmp_path / "oracle.sqlite")
    wrapped = with_cache(backend, cache)
    store = backend.on_answers
    backend.on_answers = lambda batch: (told.append(batch), store(batch))
    requests = [("run", (t, None, [(1,), (2,)])) for t in tasks] + [
        ("classify", (tasks[0], [(3,), (-1,)])),
        ("postcondition_holds", (tasks[1], None, [((3,), 4), ((3,), 9)]))]
    answers = wrapped.answer(requests)
    assert len(told) == backend.stats.extra["coqc_files"] >= 2  # one call per file
    early = {(id(args), i): v for batch in told for args, i, v in batch}
    assert len(early) == 10
    for (_, args), got in zip(requests, answers, strict=True):
        assert [early[(id(args), i)] for i in range(len(got))] == got
    fresh = with_cache(CoqBackend(workers=1), OracleCache(tmp_path / "oracle.sqlite"))
    assert fresh.answer(requests) == answers and fresh.cache.misses == 0


@needs_coqc
def test_prop_precondition_is_decided_by_quickchick(backend):
    from veriscale.backends.coq.runner import quickchick_available

    if not quickchick_available():
        pytest.skip("libcoq-quickchick is not installed")
    task = make_task(name="small", precond="(0 <= x)%Z /\\ (x < 10)%Z")
    coq = coq_sections(task)
    assert coq is not None
    coq.source = coq.source.replace("Definition small_precond (x : Z) : bool",
                                    "Definition small_precond (x : Z) : Prop")
    task = F.with_sections(task)
    cls = backend.classify(task, [(3,), (12,)])
    assert [c.label for c in cls] == [Label.EXPECTED, Label.UNEXPECTED]
    assert {c.stage for c in cls} == {"quickchick"}


@needs_coqc
def test_the_oracle_cache_knows_which_coqc_answered():
    from veriscale.backends.cache import oracle_identity

    ident = oracle_identity(CoqBackend())
    assert "Coq" in ident and "version" in ident
    assert f"answers r{CoqBackend.answer_revision}" in ident


def test_literals_several_checks_pass_are_defined_once():
    from veriscale.backends.coq.files import SHARED_UNIT, Unit, applied, render_file

    long, short = ("[(1)%Z; (2)%Z; (3)%Z]", "list Z"), ("(7)%Z", "Z")
    units = [Unit("Definition f (l : list Z) (z : Z) : Z := z.",
                  [applied("vsq_fn", (long, short)), applied("vsq_fn", (("[]", "list Z"), short))],
                  True),
             Unit("Definition g (l : list Z) (z : Z) : Z := z.",
                  [applied("vsq_fn", (long, short)),
                   applied("vsq_fn", (("[(4)%Z; (5)%Z; (6)%Z]", "list Z"), short))], False),
             Unit("Definition h (o : nat) : nat := o.", [applied("vsq_fn", (("Foo.c", None),)),
                                                         applied("vsq_fn", (("Foo.c", None),))],
                  False)]
    text, spans = render_file(units, "n0nce", 5)
    assert text.count("Definition L") == 1  # only the long literal used twice, and typed
    assert "Definition L0 : list Z := [(1)%Z; (2)%Z; (3)%Z]." in text
    assert text.count("vsq_fn VsqLn0nce.L0 (7)%Z") == 2 and "vsq_fn [(4)%Z" in text
    assert text.count("vsq_fn Foo.c") == 2  # no standard type: left in place
    assert spans[0][2] == SHARED_UNIT
    plain, plain_spans = render_file(units, "n0nce", 5, share=False)
    assert "VsqL" not in plain and all(ui != SHARED_UNIT for _, _, ui, _ in plain_spans)


@needs_coqc
def test_shared_literals_give_the_same_answers_and_a_bad_one_blames_no_check():
    from veriscale.backends.coq.files import Check, Unit, applied

    b = CoqBackend(workers=1, check_timeout=5)
    long = "[(1)%Z; (2)%Z; (30)%Z]"
    ctx = ("Require Import ZArith List.\nOpen Scope Z_scope.\n"
           "Definition vsq_fn (l : list Z) : Z := fold_left Z.add l 0.")
    units = [Unit(ctx, [applied("vsq_fn", ((long, "list Z"),)) for _ in range(3)], False),
             Unit(ctx.replace("Z.add", "Z.max"), [applied("vsq_fn", ((long, "list Z"),))], False)]
    b.execute(units)
    assert [c.answer for u in units for c in u.checks] == ["33", "33", "33", "30"]
    assert b.stats.extra["reruns"] == 0
    # a literal whose stated type is wrong fails in the shared module: the checks run
    # again with it in place, and none is blamed for it
    wrong = [Unit(ctx, [applied("vsq_fn", ((long, "list nat"),)) for _ in range(2)]
                  + [Check("vsq_fn [(5)%Z]")], False)]
    b.execute(wrong)
    assert [c.answer for c in wrong[0].checks] == ["33", "33", "5"]
    assert all(c.error is None for c in wrong[0].checks) and b.stats.extra["reruns"] == 1


@needs_coqc
def test_non_ascii_text_is_not_evaluated(backend):
    """Coq's string is bytes: "é" would reach Coq as two characters, so it is unknown."""
    sig = F.coq_signature({"name": "echo", "return_type": "string", "parameters": [
        {"param_name": "s", "param_type": "string"}]})
    sections = F.CoqSections(task_imports="Require Import String.\nOpen Scope string_scope.",
                             precond="true", code="s", postcond="String.eqb result s")
    sections = F.parse_coq_sections(F.render_task_v(sig, sections))
    task = Task(id="echo", description="", signature=sig, sections={"coq": sections}, tests=[],
                reject_inputs=[])
    out = backend.run(task, None, [("abc",), ("é",)])
    assert out[0].value == "abc"
    assert not out[1].ok and out[1].inconclusive and "non-ASCII" in out[1].error
    before = dict(backend.stats.unknowns)
    assert backend.postcondition_holds(task, None, [(("abc",), "abc"), (("abc",), "ü")]) == \
        [Verdict.TRUE, Verdict.UNKNOWN]
    counted = {k: n - before.get(k, 0) for k, n in backend.stats.unknowns.items()}
    assert {k: n for k, n in counted.items() if n} == {"gt postcondition: unsupported": 1}
    assert backend.check_inputs(task, [("é",)]) == [None]  # not ill-typed: unsupported


@needs_coqc
def test_check_literals_of_nat_are_the_same_values(tmp_path):
    """A check file writes nat as decimal digits computed by the VM (far cheaper for
    Coq to elaborate than unary ``%nat``); both forms reduce to the same value."""
    import random
    import subprocess

    from veriscale.backends.coq.files import CHECK_LIBS
    from veriscale.backends.coq.literal import NAT_DIGITS_SCOPE, to_coq
    from veriscale.values import parse_type
    from veriscale.values.value import Some

    rng = random.Random(7)
    t = parse_type("List (Nat × Option Nat)")
    values = [tuple((rng.choice([0, 1, 9, 10, 255, 5001, 5002, rng.randrange(20000)]),
                     rng.choice([None, Some(rng.randrange(300))]))
                    for _ in range(rng.randrange(4)))
              for _ in range(30)]
    fast = [to_coq(t, v, in_check=True) for v in values]
    assert all("%nat" not in x for x in fast) and any("of_num_uint" in x for x in fast)
    # a context's open scopes must not change how they read
    lines = [f"Require {CHECK_LIBS}.", NAT_DIGITS_SCOPE, "Import Coq.Lists.List.ListNotations.",
             "Open Scope list_scope.", "Open Scope Z_scope."]
    lines += [f"Check (eq_refl : {a} = {to_coq(t, v)})."
              for a, v in zip(fast, values, strict=True)]
    (tmp_path / "Same.v").write_text("\n".join(lines) + "\n")
    proc = subprocess.run(["coqc", "-q", "Same.v"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


@needs_coqc
def test_memory_exhaustion_in_the_ground_truth_skips_no_other_input():
    """Inputs that exhaust coqc's memory (unary arithmetic near 3^40) in the ground
    truth's unit are each their own UNKNOWN; they never spend the unit's budget, so every
    other input, after however many of them, is still run (verina_basic_95 lost its
    original tests so). A small memory limit and a generous time limit: the memory limit
    trips first however busy the machine is (at 2048 MB and 5 s, a loaded machine hit the
    time limit first)."""
    task = make_task(name="half", params=(("n", "nat"),), ret="nat", precond="true",
                     code="if Nat.eqb n 7 then Nat.pow 3 40 else Nat.div n 2",
                     postcond="Nat.eqb result (Nat.div n 2)")
    backend = CoqBackend(workers=1, timeout=300, check_timeout=60, memory_mb=768)
    try:
        out = backend.run(task, None, [(7,)] * 4 + [(4,), (10,)])
    finally:
        backend.close()
    assert {o.failure_kind for o in out[:4]} == {"memory"}, out[:4]
    assert [o.value for o in out[4:]] == [2, 5]


@needs_coqc
def test_memory_exhaustion_in_a_candidate_spends_its_budget():
    """A candidate's exhausted memory is a strike like a timeout: each costs a whole coqc
    process, and a flawed spec building a huge unary nat exhausts it on every test. After
    the budget, its remaining checks are UNKNOWN (not run), never its FAIL."""
    task = make_task(name="half", params=(("n", "nat"),), ret="nat", precond="true",
                     code="Nat.div n 2", postcond="Nat.eqb result (Nat.div n 2)")
    big = Implementation("Definition half (n : nat) : nat := if Nat.eqb n 7 then "
                         "Nat.pow 3 40 else Nat.div n 2.", id="big")
    backend = CoqBackend(workers=1, timeout=300, check_timeout=60, memory_mb=768,
                         timeout_budget=3)
    try:
        out = backend.run(task, big, [(7,)] * 5 + [(4,)])
    finally:
        backend.close()
    kinds = [o.failure_kind for o in out]
    assert kinds[:3] == ["memory"] * 3, out
    assert kinds[3:] == ["timeout"] * 3 and all("not run" in o.error for o in out[3:]), out
    assert backend.stats.processes == 4  # three that ran out of memory, one that skipped
