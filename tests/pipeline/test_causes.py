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


def test_coq_reasons_map_to_their_own_causes() -> None:
    assert unknown_cause("unsupported: nat value 10 in the output is above the bound 5 "
                         "(not evaluated)") == "nat above the bound"
    assert unknown_cause("unsupported: the specification did not reduce to true/false "
                         "under Compute: Rge_dec") == "no reduction to a value"
    assert unknown_cause("timeout: the check exceeded its 10 s limit") == "timeout"
    assert unknown_cause("timeout: not run: 3 smaller checks of this context exceeded "
                         "their limits") == "skipped after timeouts"
    assert unknown_cause("memory: coqc exhausted its 2048 MB") == "memory"
    assert unknown_cause("unsupported: Prop-valued postcondition with no bool _dec twin"
                         ) == "Prop-valued specification"
    assert unknown_cause("unsupported: spec imports unavailable here: Mathlib") == \
        "imports unavailable"
