"""The pipeline's own pieces: config, atomic run-directory writes, oracle cache, Plus assembly."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from veriscale.artifacts import SCHEMA_VERSION, ArtifactError, ClassifyArtifact, OutputsArtifact
from veriscale.backends.base import (
    BackendStats,
    Classification,
    Label,
    Outcome,
    Verdict,
)
from veriscale.backends.cache import CachingBackend, OracleCache
from veriscale.benchmark.model import ExpectedPair, Signature, Task
from veriscale.pipeline.config import RunConfig, load_config
from veriscale.pipeline.suites import assemble_plus, contradicted_rows
from veriscale.rundir import RunDir, write_json_atomic


def make_task() -> Task:
    sig = Signature.from_json(
        {"name": "f", "parameters": [{"param_name": "x", "param_type": "Int"}],
         "return_type": "Int"}
    )
    return Task("t1", "double x", sig, tests=[ExpectedPair((1,), 2, [3])], reject_inputs=[(-1,)])


class CountingBackend:
    """A real (if simple) oracle: precondition x >= 0, reference 2x; counts calls."""

    name = "counting"

    def __init__(self) -> None:
        self.stats = BackendStats()
        self.calls: list[tuple[str, int]] = []

    def check_inputs(self, task, inputs):
        self.calls.append(("check", len(inputs)))
        return [None for _ in inputs]

    def classify(self, task, inputs):
        self.calls.append(("classify", len(inputs)))
        return [
            Classification(Label.EXPECTED if x[0] >= 0 else Label.UNEXPECTED, "exec")
            if x[0] != 99 else Classification(Label.UNKNOWN, "exec", "undecided")
            for x in inputs
        ]

    def run(self, task, impl, inputs):
        self.calls.append(("run", len(inputs)))
        return [Outcome(True, 2 * x[0]) if x[0] != 7 else Outcome(False, error="timeout")
                for x in inputs]

    def precondition_holds(self, task, spec, inputs):
        return [Verdict.of(x[0] >= 0) for x in inputs]

    def postcondition_holds(self, task, spec, pairs):
        self.calls.append(("post", len(pairs)))
        return [Verdict.of(out == 2 * x[0]) for x, out in pairs]

    def compile(self, task, impl=None, spec=None):
        return None

    def close(self):
        pass


def test_config_defaults_follow_table_3():
    cfg = RunConfig()
    assert cfg.seeds.candidates_per_round == 40
    assert cfg.mutation.max_mutations_per_input == 15
    assert cfg.mutation.multi_step_size == 5
    assert cfg.mutation.ingredient_prob == 0.3
    assert cfg.adversaries.max_adver_impl == 5
    assert cfg.reduction.max_reject_inputs == 50
    assert cfg.reduction.max_pairs == 50
    assert cfg.reduction.keep_per_critical_bucket == 1


def test_config_file_and_overrides(tmp_path: Path):
    path = tmp_path / "c.toml"
    path.write_text('seed = 7\n[mutation]\nmax_mutations_per_input = 3\n')
    cfg = load_config(path, seed=11)
    assert cfg.seed == 11 and cfg.mutation.max_mutations_per_input == 3
    assert cfg.fingerprint("mutation") != RunConfig().fingerprint("mutation")
    bad = tmp_path / "bad.toml"
    bad.write_text("[mutation]\nmax_mutations = 3\n")
    with pytest.raises(ValueError, match="max_mutations"):
        load_config(bad)


def test_atomic_write_leaves_no_temp_files(tmp_path: Path):
    target = tmp_path / "a" / "x.json"
    write_json_atomic(target, {"k": [1, 2]})
    write_json_atomic(target, {"k": [3]})
    assert json.loads(target.read_text()) == {"k": [3]}
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]


def test_artifacts_are_keyed_by_fingerprint(tmp_path: Path):
    rd = RunDir(tmp_path)
    record = ClassifyArtifact(unexpected_inputs=[{"input": {"x": 1}, "provenance": "seed"}])
    rd.save_artifact("t1", "classify", "fp1", record)
    for reader in (rd, RunDir(tmp_path)):  # the record held in memory, and its file
        assert reader.load_artifact("t1", "classify", "fp1") == record
        assert reader.load_artifact("t1", "classify", "fp2") is None
    rd.artifact_path("t1", "outputs").write_text("{half")
    assert rd.load_artifact("t1", "outputs", "fp1") is None


def test_a_saved_record_is_held_and_decoded_once(tmp_path: Path, monkeypatch):
    files_read: Counter[int] = Counter()  # record files read and parsed, per run directory
    envelope = RunDir._envelope

    def counted(self, *args):
        files_read[id(self)] += 1
        return envelope(self, *args)

    monkeypatch.setattr(RunDir, "_envelope", counted)
    rd = RunDir(tmp_path)
    record = ClassifyArtifact(expected_inputs=[{"input": {"x": 1}, "provenance": "seed"}])
    rd.save_artifact("t1", "classify", "fp", record)
    assert rd.load_artifact("t1", "classify", "fp") is record
    assert rd.read_artifact("t1", "classify") is record and files_read[id(rd)] == 0
    calls = []

    def decode(rows):
        calls.append(1)
        return [r["input"]["x"] for r in rows]

    for _ in range(3):  # however many stages read it
        assert rd.load_artifact("t1", "classify", "fp").decoded("expected_inputs", decode) == [1]
    assert calls == [1]
    assert "_decoded" not in record.to_json()  # the decoded view is never saved
    # past the budget a record is read from its file, as before; forget lets go
    small = RunDir(tmp_path, hold_bytes=0)
    assert small.load_artifact("t1", "classify", "fp") == record and files_read[id(small)] == 1
    assert small.load_artifact("t1", "classify", "fp") == record and files_read[id(small)] == 2
    rd.forget("classify")
    assert rd.load_artifact("t1", "classify", "fp") == record and files_read[id(rd)] == 1
    assert rd.load_artifact("t1", "classify", "fp") is not record and files_read[id(rd)] == 1


def test_cache_serves_repeats_and_batches_misses(tmp_path: Path):
    task = make_task()
    inner = CountingBackend()
    cache = OracleCache(tmp_path / "oracle.sqlite")
    backend = CachingBackend(inner, cache)
    first = backend.classify(task, [(1,), (-2,), (99,)])
    assert [c.label for c in first] == [Label.EXPECTED, Label.UNEXPECTED, Label.UNKNOWN]
    again = backend.classify(task, [(1,), (-2,), (99,), (5,)])
    assert again[:3] == first
    # unknowns are not cached (they may be the machine's fault); new items batch together
    assert inner.calls == [("classify", 3), ("classify", 2)]
    outs = backend.run(task, None, [(3,), (7,)])
    assert outs[0] == Outcome(True, 6) and not outs[1].ok
    backend.run(task, None, [(3,), (7,)])
    assert inner.calls[-1] == ("run", 1)  # the timeout is retried, the value is not
    cache.close()
    reopened = CachingBackend(CountingBackend(), OracleCache(tmp_path / "oracle.sqlite"))
    assert reopened.classify(task, [(1,)]) == [first[0]]
    assert reopened.inner.calls == []


def test_a_backend_that_answers_differently_now_is_served_none_of_its_old_answers(
        tmp_path: Path):
    """A backend raises its ``answer_revision`` when some check gets another answer
    (Lean: a proposition that panicked is asked of the kernel); the cache then
    serves none of what the older revision answered."""
    task = make_task()
    CachingBackend(CountingBackend(), OracleCache(tmp_path / "o.sqlite")).classify(task, [(1,)])

    class Revised(CountingBackend):
        answer_revision = 2

    revised = CachingBackend(Revised(), OracleCache(tmp_path / "o.sqlite"))
    revised.classify(task, [(1,)])
    assert revised.inner.calls == [("classify", 1)]
    again = CachingBackend(Revised(), OracleCache(tmp_path / "o.sqlite"))
    again.classify(task, [(1,)])
    assert again.inner.calls == []


def test_cache_keeps_one_round_classification(tmp_path: Path):
    """Behind the cache, a backend whose classify includes the syntax filter is still
    asked once per classify stage (one Lean round, not a syntax round first)."""
    from veriscale.pipeline.stages import CandidateInput, stage_classify

    class OneRound(CountingBackend):
        classify_checks_syntax = True

    inner = OneRound()
    backend = CachingBackend(inner, OracleCache(tmp_path / "oracle.sqlite"))
    assert backend.classify_checks_syntax and not CachingBackend(
        CountingBackend(), OracleCache(tmp_path / "other.sqlite")).classify_checks_syntax
    got = stage_classify(make_task(), [CandidateInput((1,), "t"), CandidateInput((-2,), "t")],
                         backend)
    assert inner.calls == [("classify", 2)]
    assert got.counts["expected_inputs"] == got.counts["unexpected_inputs"] == 1


def test_wrappers_pass_on_every_backend_hint(tmp_path: Path):
    """The oracle cache and the coalescing proxy hide no hint of the backend they
    wrap: a lost ``default_cell_budget`` ran every adversary cell on WASM Lean."""
    from veriscale.backends.base import HINTS, hint
    from veriscale.backends.coalesce import CoalescingProxy

    declared = {"classify_checks_syntax": True, "default_cell_budget": 3000,
                "plausible_unavailable": "no plausible here", "side_by_side": 2,
                "coverage_unavailable": "no coverage here", "answer_revision": 7}
    assert set(declared) == set(HINTS)
    Hinted = type("Hinted", (CountingBackend,), dict(declared))
    cached = CachingBackend(Hinted(), OracleCache(tmp_path / "oracle.sqlite"))
    plain = CachingBackend(CountingBackend(), OracleCache(tmp_path / "other.sqlite"))
    for wrapper in (cached, CoalescingProxy(None, cached)):  # type: ignore[arg-type]
        assert {n: hint(wrapper, n) for n in HINTS} == declared
    assert {n: hint(plain, n) for n in HINTS} == HINTS
    with pytest.raises(AttributeError):
        cached.no_such_attribute  # noqa: B018


def test_coq_backend_samples_cells_by_default():
    from veriscale.backends.base import hint
    from veriscale.backends.coq.backend import CoqBackend

    assert hint(CoqBackend(), "default_cell_budget") == 3000
    assert hint(CoqBackend(cell_budget=0), "default_cell_budget") == 0


def test_assemble_plus_keeps_original_rows_and_merges():
    task = make_task()
    pairs = [((1,), 2, "original:test"), ((5,), 10, "mutation"), ((6,), 12, "seed")]
    plus = assemble_plus(task, pairs, {(1,): [4, 3], (5,): [11]}, [(-3,), (-1,)],
                         keep_nonkilling=False)
    assert [t.input for t in plus.tests] == [(1,), (5,)]
    assert plus.tests[0].unexpected == [3, 4]  # original first, then new, no duplicates
    assert plus.tests[0].provenance == "original"
    assert plus.reject_inputs == [(-1,), (-3,)]
    full = assemble_plus(task, pairs, {}, [], keep_nonkilling=True)
    assert [t.input for t in full.tests] == [(1,), (5,), (6,)]
    assert task.tests[0].unexpected == [3]  # the input task is not changed


def test_a_nan_is_one_input_and_one_output_in_plus():
    """Python's nan != nan (and each NaN read from a record is a new object) must not
    put one input into Plus twice (the full Lean run's verina_basic_63 had its
    [NaN, 1.0] reject input twice) nor list a NaN unexpected output twice."""
    sig = Signature.from_json(
        {"name": "f", "parameters": [{"param_name": "x", "param_type": "Float"}],
         "return_type": "Float"})

    def nan() -> float:
        return float("nan") * 1.0  # a new object each time

    task = Task("fl", "half", sig, tests=[ExpectedPair((nan(),), nan(), [1.0])],
                reject_inputs=[(nan(),)])
    plus = assemble_plus(task, [((nan(),), nan(), "mutation"), ((2.0,), 1.0, "seed")],
                         {(nan(),): [nan(), 0.0, nan()], (2.0,): [nan(), nan()]},
                         [(nan(),), (-0.0,), (0.0,)])
    assert len(plus.tests) == 2
    assert plus.tests[0].unexpected[0] == 1.0 and plus.tests[0].unexpected[1:] == [0.0]
    assert len(plus.tests[1].unexpected) == 1  # one NaN
    assert [str(r[0]) for r in plus.reject_inputs] == ["-0.0", "0.0"]  # the NaN is a test


def test_rows_the_ground_truth_contradicts_are_left_out_and_said_why():
    sig = make_task().signature
    task = Task("t1", "double x", sig, tests=[
        ExpectedPair((1,), 2, [3]), ExpectedPair((2,), 5, [4]), ExpectedPair((3,), 6, []),
        ExpectedPair((4,), 8, []), ExpectedPair((-2,), -4, []), ExpectedPair((6,), 12, [])],
        reject_inputs=[(-1,)])
    bad = contradicted_rows(task, {(2,): 4}, {(3,): 6, (4,): 7}, {(-2,), (-1,)},
                            show=lambda v: f"<{v}>")
    assert bad == {
        (2,): "the reference gives <4>, the row expects <5>",
        (3,): "the ground-truth postcondition rejects the row's expected output",
        (4,): "the reference gives <7>, the row expects <8>",
        (-2,): "the ground-truth precondition rejects the row's input",
    }
    plus = assemble_plus(task, [((2,), 4, "original"), ((7,), 14, "seed")], {}, [(-1,)],
                         contradicted=bad)
    # the contradicted original rows are gone; their inputs come back as the ground
    # truth has them: (2,) with the reference's output, -2 as an unexpected input
    assert [(t.input, t.expected, t.provenance) for t in plus.tests] == [
        ((1,), 2, "original"), ((6,), 12, "original"), ((2,), 4, "original"), ((7,), 14, "seed")]
    assert plus.reject_inputs == [(-1,)]
    plus = assemble_plus(task, [], {}, [(-1,), (-2,)], contradicted=bad)
    assert plus.reject_inputs == [(-1,), (-2,)]
    assert contradicted_rows(task, {}, {}, set()) == {}  # an UNKNOWN contradicts nothing


def test_unreadable_or_misshapen_artifacts_are_recomputed_not_fatal(tmp_path: Path):
    rd = RunDir(tmp_path)
    rd.save_artifact("t1", "outputs", "fp", OutputsArtifact())
    assert rd.load_artifact("t1", "outputs", "fp") == OutputsArtifact()
    rd = RunDir(tmp_path)  # what a later run finds on disk
    rd.artifact_path("t1", "outputs").write_bytes(b'{"data": "\xff"}')  # not UTF-8
    assert rd.load_artifact("t1", "outputs", "fp") is None
    doc = {"stage": "outputs", "task": "t1", "version": SCHEMA_VERSION, "fingerprint": "fp",
           "data": {"pairs": [{"input": "not an object"}]}}
    rd.artifact_path("t1", "outputs").write_text(json.dumps(doc))
    assert rd.load_artifact("t1", "outputs", "fp") is None
    with pytest.raises(ArtifactError, match=r"outputs.json: pairs\[0\]"):
        OutputsArtifact.from_json(doc["data"])
    doc["version"] = SCHEMA_VERSION - 1  # an older schema: recomputed
    doc["data"] = OutputsArtifact().to_json()
    rd.artifact_path("t1", "outputs").write_text(json.dumps(doc))
    assert rd.load_artifact("t1", "outputs", "fp") is None


def test_outputs_drop_pairs_the_gt_postcondition_rejects():
    """A pair whose reference output the task's own postcondition rejects is listed,
    not kept (it would fail a correct specification); undecided verdicts keep it."""
    from veriscale.pipeline.stages import CandidateInput, stage_outputs

    class Inconsistent(CountingBackend):
        def postcondition_holds(self, task, spec, pairs):
            self.calls.append(("post", len(pairs)))
            return [Verdict.FALSE if x[0] == 3 else Verdict.UNKNOWN if x[0] == 4
                    else Verdict.TRUE for x, _ in pairs]

    inputs = [CandidateInput((x,), "mutation") for x in (1, 3, 4, 7)]
    backend = Inconsistent()
    got = stage_outputs(make_task(), inputs, backend)
    assert [p["input"] for p in got["pairs"]] == [{"x": 1}, {"x": 4}]
    assert got["gt_rejected"] == [{"input": {"x": 3}, "reference": 6,
                                   "provenance": "mutation"}]
    assert got["counts"]["gt_rejected"] == 1 and got["counts"]["gt_postcondition_unknown"] == 1
    assert ("post", 3) in backend.calls  # the failed run (7) is not asked about
    off = stage_outputs(make_task(), inputs, Inconsistent(), check_postcondition=False)
    assert len(off["pairs"]) == 3 and "gt_rejected" not in off["counts"]


def test_stage_backend_figures_carry_unknown_verdicts_by_cause() -> None:
    """A stage's oracle figures include why verdicts stayed UNKNOWN (a Verdict has no
    reason; the backend counts them)."""
    from veriscale.backends.base import BackendStats
    from veriscale.pipeline.run import _stats_of

    class Inner:
        name = "toy"

        def __init__(self) -> None:
            self.stats = BackendStats(processes=2, checks=10)

    inner = Inner()
    inner.stats.count_unknowns("postcondition_holds", None, ["stuck reduction: Decidable.rec"])
    assert _stats_of(inner) == {"processes": 2, "checks": 10, "seconds": 0.0,
                                "unknown gt postcondition: stuck reduction": 1}


def test_the_benchmarks_own_inputs_are_asked_again_when_others_spent_the_budget():
    """A backend skips a task's larger checks once smaller ones ran over their limits;
    an original input among the skipped is asked again on its own (classified and
    run), a seed or mutant is not."""
    from veriscale.pipeline.stages import CandidateInput, stage_classify, stage_outputs

    skipped = "timeout: not run: 3 smaller checks of this context exceeded their limits"

    class Budgeted(CountingBackend):
        def classify(self, task, inputs):
            self.calls.append(("classify", len(inputs)))
            if len(inputs) > 1:
                return [Classification(Label.UNKNOWN, "exec", skipped) for _ in inputs]
            return super().classify(task, inputs)

        def run(self, task, impl, inputs):
            self.calls.append(("run", len(inputs)))
            if len(inputs) > 1:
                return [Outcome(False, error=skipped) for _ in inputs]
            return [Outcome(True, 2 * x[0]) for x in inputs]

    cands = [CandidateInput((5,), "mutation"), CandidateInput((1,), "original:test"),
             CandidateInput((6,), "seed")]
    backend = Budgeted()
    got = stage_classify(make_task(), cands, backend)
    assert [r["input"] for r in got.expected_inputs] == [{"x": 1}]
    assert len(got.unknown_inputs) == 2 and ("classify", 1) in backend.calls
    out = stage_outputs(make_task(), cands, backend, check_postcondition=False)
    assert [p["input"] for p in out["pairs"]] == [{"x": 1}]
    assert len(out["failures"]) == 2 and ("run", 1) in backend.calls


def test_a_notation_that_differs_is_a_mismatch_only_when_the_backend_says_so():
    """A value of an unmodelled type travels as its notation; the reference may print
    another notation of the same value (Lean's ``{ entries := [1] }`` for the row's
    ``⟨[1]⟩``). Such a mismatch is settled by the backend's own ``==``; an unsettled
    one contradicts no row; a backend that cannot compare settles none."""
    from veriscale.pipeline.stages import CandidateInput, stage_outputs
    from veriscale.values.value import OpaqueValue

    sig = Signature.from_json(
        {"name": "f", "parameters": [{"param_name": "x", "param_type": "Nat"}],
         "return_type": "Box"})

    def box(n: int, style: str) -> OpaqueValue:
        return OpaqueValue(f"⟨[{n}]⟩" if style == "row" else f"{{ entries := [{n}] }}")

    # row 1: same value, other notation; row 2: another value; row 3: == cannot decide
    task = Task("box", "box x", sig, tests=[ExpectedPair((1,), box(1, "row"), []),
                                            ExpectedPair((2,), box(5, "row"), []),
                                            ExpectedPair((3,), box(3, "row"), [])])

    class Printer(CountingBackend):
        def run(self, task, impl, inputs):
            return [Outcome(True, box(x[0], "printed")) for x in inputs]

    class Comparer(Printer):
        def test_outputs(self, task, impl, pairs):
            self.calls.append(("test_outputs", len(pairs)))
            out = []
            for x, want in pairs:
                if x[0] == 3:
                    out.append(Outcome(False, error="infrastructure: lean crashed"))
                else:
                    out.append(Outcome(True, want.text == f"⟨[{x[0]}]⟩"))
            return out

    inputs = [CandidateInput((x,), "original:test") for x in (1, 2, 3)]
    backend = Comparer()
    got = stage_outputs(task, inputs, backend, check_postcondition=False)
    assert [m["input"] for m in got["reference_mismatches"]] == [{"x": 2}]
    assert got["counts"]["reference_mismatches"] == 1
    assert got["counts"]["reference_mismatches_unsettled"] == 1
    assert ("test_outputs", 3) in backend.calls  # one call for all of them
    assert len(got["pairs"]) == 3  # the reference's outputs are the pairs either way
    blind = stage_outputs(task, inputs, Printer(), check_postcondition=False)
    assert blind["reference_mismatches"] == []
    assert blind["counts"]["reference_mismatches_unsettled"] == 3


    class Asked(CountingBackend):  # a modelled type compares here, exactly
        def test_outputs(self, task, impl, pairs):
            raise AssertionError("a modelled value needs no backend comparison")

    wrong_row = Task("t1", "double x", make_task().signature, tests=[ExpectedPair((1,), 3, [])])
    plain = stage_outputs(wrong_row, [CandidateInput((1,), "original:test")], Asked(),
                          check_postcondition=False)
    assert plain["counts"]["reference_mismatches"] == 1
    assert "reference_mismatches_unsettled" not in plain["counts"]
