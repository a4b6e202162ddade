"""Unknowns and failures counted by cause, per stage."""

from __future__ import annotations

from veriscale.backends.causes import cause_counts, unknown_cause


def test_lean_reasons_map_to_few_causes() -> None:
    assert unknown_cause("no Decidable instance; plausible stage skipped") == "no Decidable instance"
    assert unknown_cause("stuck reduction: Decidable.rec ...") == "stuck reduction"
    assert unknown_cause("unknown: maxHeartbeats") == "maxHeartbeats"
    assert unknown_cause("timeout") == "timeout"
    assert unknown_cause("infrastructure: Lean stopped after line 9") == "checker failed"
    assert unknown_cause("crash: ZeroDivisionError") == "candidate crashed"
    assert unknown_cause("unknown: result depends on sorry: x") == "depends on sorry"
    assert unknown_cause("compile: type mismatch") == "compile"
    assert unknown_cause("") == "other"


def test_cause_counts_are_flat_and_sorted() -> None:
    got = cause_counts("unknown", ["timeout", "stuck reduction: a", "stuck reduction: b"])
    assert got == {"unknown: stuck reduction": 2, "unknown: timeout": 1}
    assert list(got) == sorted(got)
