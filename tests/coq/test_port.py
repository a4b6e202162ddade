"""``veriscale port``: signatures modulo the type mapping, and the audit on real coqc."""

from __future__ import annotations

import pytest
from coq_paths import needs_coqc
from test_coq_backend import make_task

from veriscale.backends.coq import format as F
from veriscale.benchmark.model import ExpectedPair, Param, Signature, Task
from veriscale.port import carry, port_suite, signature_difference
from veriscale.values import parse_type


def lean_task(params, ret) -> Task:
    sig = Signature("f", tuple(Param(n, parse_type(t), t) for n, t in params), parse_type(ret),
                    ret)
    return Task(id="t", description="", signature=sig)


def test_signatures_match_modulo_the_type_mapping():
    coq = make_task(name="f", params=(("a", "(list Z)"),), ret="nat", precond="true", code="0%nat",
                    postcond="true")
    assert signature_difference(lean_task([("a", "Array Int")], "Nat"), coq) is None
    assert "return type" in signature_difference(lean_task([("a", "Array Int")], "Int"), coq)
    assert signature_difference(lean_task([("a", "List Nat")], "Nat"), coq) is not None


def test_values_the_target_cannot_hold_are_not_carried():
    coq = make_task(name="f", params=(("c", "ascii"),), ret="bool", precond="true", code="true",
                    postcond="true")
    src = lean_task([("c", "Char")], "Bool")
    src.tests = [ExpectedPair(("a",), True), ExpectedPair(("\u0101",), True)]
    ported, lost = carry(src, coq)
    assert [c.input for c in ported.tests] == [("a",)] and len(lost) == 1


@needs_coqc
@pytest.mark.coq
def test_rows_where_the_ground_truths_disagree_are_reported_and_left_out(tmp_path):
    source = make_task()  # inc: x + 1
    source.tests = [ExpectedPair((3,), 4, [5]), ExpectedPair((0,), 1, [7])]
    target = make_task(code="if Z.eqb x 3 then 9 else x + 1",
                       postcond="if Z.eqb x 3 then result =? 9 else result =? x + 1")
    target.tests = []
    F.write_task_dir(source, tmp_path / "suite" / "inc")
    F.write_task_dir(target, tmp_path / "tasks" / "inc")
    report = port_suite(tmp_path / "suite", tmp_path / "tasks", tmp_path / "out", "coq")
    assert report.carried == {"pairs": 2, "unexpected": 2, "rejects": 1}
    assert {f.row for f in report.findings} == {"test[0]"}
    assert report.kept["pairs"] == 1
    audit = report.to_json()["audit_findings"]
    assert {(f["task"], f["language"], f["kind"]) for f in audit} == {
        ("inc", "coq", "twin_specs_disagree")}  # both sides Coq here
    assert audit[0]["witness"]["row"] == "test[0]"
    out, _ = F.load_task_dir(tmp_path / "out" / "inc")
    assert out is not None and [c.input for c in out.tests] == [(0,)]


@needs_coqc
@pytest.mark.coq
def test_port_takes_tasks_leaves_out_undecided_rows_and_speaks_coq(tmp_path):
    """--tasks limits the port; a row the target cannot decide (a nat above the
    bound) is left out and counted by cause; messages write values as Coq does."""
    from veriscale.cli import main

    source = make_task(name="idn", params=(("n", "nat"),), ret="nat", precond="true",
                       code="n", postcond="Nat.eqb result n")
    source.tests = [ExpectedPair((5,), 5, [6]), ExpectedPair((10**9,), 10**9, []),
                    ExpectedPair((2,), 3, [])]
    source.reject_inputs = []
    target = make_task(name="idn", params=(("n", "nat"),), ret="nat", precond="true",
                       code="n", postcond="Nat.eqb result n")
    target.tests, target.reject_inputs = [], []
    other = make_task(name="other")
    for where, t in (("suite", source), ("tasks", target), ("tasks", other), ("suite", other)):
        F.write_task_dir(t, tmp_path / where / t.id)
    report = port_suite(tmp_path / "suite", tmp_path / "tasks", tmp_path / "out", "coq",
                        tasks=["idn"])
    assert report.tasks == 1 and report.ported_tasks == 1
    assert report.dropped_undecided == {"idn": {"nat above the bound": 1}}
    assert "reference returned 2%nat, suite expects 3%nat" in [f.detail for f in report.findings]
    out, _ = F.load_task_dir(tmp_path / "out" / "idn")
    assert out is not None and [c.input for c in out.tests] == [(5,)]
    with pytest.raises(ValueError, match="no task nope"):
        port_suite(tmp_path / "suite", tmp_path / "tasks", None, "coq", tasks=["nope"])
    from click.testing import CliRunner
    res = CliRunner().invoke(main, ["port", str(tmp_path / "suite"), "--onto",
                                    str(tmp_path / "tasks"), "--tasks", "idn"])
    assert res.exit_code == 1, res.output
    assert "1 of 1 tasks carried" in res.output and "nat above the bound 1" in res.output
