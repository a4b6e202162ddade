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
    out, _ = F.load_task_dir(tmp_path / "out" / "inc")
    assert out is not None and [c.input for c in out.tests] == [(0,)]
