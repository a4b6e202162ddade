"""The ground-truth audit's finding logic on synthetic stage records."""

from __future__ import annotations

from veriscale.artifacts import OutputsArtifact, UnexpectedArtifact
from veriscale.benchmark.model import ExpectedPair, Signature, Task
from veriscale.pipeline.audit import audit_json, several_answers, speak_witness, task_findings

SIG = Signature.from_json({"name": "f", "parameters": [
    {"param_name": "xs", "param_type": "List Int"}], "return_type": "Int"})


def task(description: str = "Return the largest element.") -> Task:
    return Task("t", description, SIG, tests=[ExpectedPair(([1, 2],), 2, [1])])


def test_each_kind_of_evidence_is_a_finding_with_its_smallest_witness() -> None:
    outputs = OutputsArtifact(
        gt_rejected=[{"input": {"xs": "[5, 6, 7]"}, "reference": "7"},
                     {"input": {"xs": "[3]"}, "reference": "3"}],
        failures=[{"input": {"xs": "[]"}, "error": "crash: panic: head of an empty list"},
                  {"input": {"xs": "[9, 9]"}, "error": "ill_typed: a string"},
                  {"input": {"xs": "[1, 1, 1]"}, "error": "timeout: 2.0 s"},
                  {"input": {"xs": "[4]"}, "error": "infrastructure: Lean stopped"},
                  {"input": {"xs": "[8]"}, "error": "compile: Unknown constant"}])
    unexpected = UnexpectedArtifact(
        gt_accepts=[{"input": {"xs": "[10, 20, 30]"}, "reference": "30", "other": "20"},
                    {"input": {"xs": "[1, 2]"}, "reference": "2", "other": "1"}],
        counts={"discarded_gt_accepts": 7})
    contradicted = [{"input": {"xs": "[1, 2]"}, "why": "the reference gives 2, the row expects 3"}]
    found, costs = task_findings(task(), outputs, unexpected, contradicted, "python", [
        {"input": {"xs": "[1, 2]"}, "reference": "2", "other": "1"}])
    got = {f.kind: f for f in found}
    assert got["postcondition_rejects_reference"].witness == {"input": {"xs": "[3]"},
                                                              "reference": "3"}
    assert got["postcondition_rejects_reference"].count == 2
    crash = got["reference_fails_on_valid_input"]
    assert crash.count == 2 and crash.witness["input"] == {"xs": "[]"}
    assert costs == {"timeout": 1}  # a timeout is a cost; a checker's failure is neither
    assert got["postcondition_accepts_other_output"].count == 7
    assert got["postcondition_accepts_other_output"].witness["other"] == "1"
    assert got["test_expected_rejected"].count == 1
    assert got["unexpected_output_accepted"].verdict_source == "python"
    assert speak_witness(task(), {"input": {"xs": "[3]"}, "reference": "3"}) == {
        "input": {"xs": "[3]"}, "reference": "3"}


def test_unknowns_are_never_findings() -> None:
    outputs = OutputsArtifact(failures=[{"input": {"xs": "[1]"}, "error": "unknown: stuck"}],
                              counts={"gt_postcondition_unknown": 5})
    found, costs = task_findings(task(), outputs, UnexpectedArtifact(counts={
        "discarded_gt_unknown": 9}), [], "lean (wasm)")
    assert found == [] and costs == {}


def test_several_answer_tasks_rank_last_and_a_maintainer_can_accept_them() -> None:
    assert several_answers("Return any index of the maximum.")
    assert several_answers("The combinations may be returned in any order.")
    assert not several_answers("Return the index of the first maximum.")
    outputs = OutputsArtifact(gt_rejected=[{"input": {"xs": "[1]"}, "reference": "1"}])
    unexpected = UnexpectedArtifact(gt_accepts=[
        {"input": {"xs": "[1, 2]"}, "reference": "2", "other": "1"}],
        counts={"discarded_gt_accepts": 1})
    a, _ = task_findings(task("Return any index of the maximum."), OutputsArtifact(),
                         unexpected, [], "python")
    b, _ = task_findings(Task("u", "Sum.", SIG), outputs, None, [], "python")
    data = audit_json(a + b, {}, [], 2)
    assert [f["task"] for f in data["findings"]] == ["u", "t"]
    assert data["findings"][1]["several_answers"] is True
    assert data["tasks_flagged_by_kind"] == {"postcondition_rejects_reference": 1,
                                             "postcondition_accepts_other_output": 1}
    quiet = audit_json(a + b, {}, ["t"], 2)
    assert [f["task"] for f in quiet["findings"]] == ["u"]
    assert [f["task"] for f in quiet["accepted_multiple"]] == ["t"]
