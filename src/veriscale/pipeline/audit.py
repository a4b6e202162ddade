"""The ground-truth audit: where a task's own code and specification disagree with
each other or with its tests, shown with the smallest witness.

The expansion stages already meet the evidence: an adversary's output that differs
from the reference's and that the GT postcondition accepts (an under-specified
postcondition), a reference output the GT postcondition rejects, a reference that
crashes on an input its precondition admits, a benchmark row the ground truth
contradicts. :func:`task_findings` turns a task's stage records into findings.
Only definite verdicts make a finding: an UNKNOWN never does, and a reference that
runs out of time is a cost (``costs``), not a defect.

Some tasks allow several answers ("return any index of the maximum"): their
findings are kept, marked ``several_answers`` where the description says so, and
ranked below the others; a maintainer who judged a task silences it with
``accept_multiple``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from veriscale.backends.base import FailureKind
from veriscale.benchmark.model import Task
from veriscale.expansion.adversarial import smallest_witnesses

KINDS = ("postcondition_rejects_reference", "reference_fails_on_valid_input",
         "test_expected_rejected", "unexpected_output_accepted",
         "postcondition_accepts_other_output")
"""Finding kinds, most serious first (the order of the report)."""

_SEVERAL = re.compile(
    r"\bany\s+(?:of\s+(?:them|the)\b|valid\b|one\b|index\b|position\b|order\b|consistent\b"
    r"|such\b|correct\b)|\bin\s+any\s+order\b|\bnot\s+(?:necessarily\s+)?unique\b"
    r"|\bmultiple\s+(?:valid|correct)\b|\bany\s+\w+\s+(?:that|which)\s+(?:satisf|meet)",
    re.I)


_DEFECTS = frozenset({FailureKind.CRASH, FailureKind.ERROR, FailureKind.ILL_TYPED,
                      FailureKind.EXIT})
"""What a reference does on an input its precondition admits that is its own defect (a
reference that does not build here, or a checker that failed, is neither)."""


def several_answers(description: str) -> bool:
    """Whether a task's description allows several answers (its own words say so)."""
    return bool(_SEVERAL.search(description or ""))


@dataclass
class Finding:
    task: str
    kind: str
    witness: dict[str, Any]
    count: int
    verdict_source: str
    several_answers: bool = False
    witnesses: list[dict[str, Any]] = field(default_factory=list)  # the smallest few

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "kind": self.kind, "witness": self.witness,
                "count": self.count, "verdict_source": self.verdict_source,
                "several_answers": self.several_answers, "witnesses": self.witnesses}


def _values(task: Task, witness: dict[str, Any]) -> Any:
    """A witness's values decoded (its size is theirs, not their text's)."""
    sig = task.signature
    try:
        out: list[Any] = [sig.load_input(witness["input"])]
        out += [sig.load_output(witness[k]) for k in ("reference", "other") if k in witness]
        return out
    except Exception:  # undecodable: sized by its text
        return [witness.get(k) for k in ("input", "reference", "other")]


def _finding(task: Task, kind: str, witnesses: Sequence[dict[str, Any]], count: int,
             source: str) -> Finding | None:
    if not witnesses or count <= 0:
        return None
    ordered = smallest_witnesses(list(witnesses), lambda w: _values(task, w),
                                 keep=len(witnesses))
    return Finding(task.id, kind, ordered[0], count, source,
                   several_answers(task.description), ordered[:5])


def task_findings(task: Task, outputs: Any, unexpected: Any | None,
                  contradicted: Sequence[dict[str, Any]], source: str,
                  unexpected_accepted: Sequence[dict[str, Any]] = ()) -> tuple[
                      list[Finding], dict[str, int]]:
    """A task's findings from its stage records (``outputs`` and ``unexpected``
    artifacts), the original rows the ground truth contradicts (``contradicted``,
    with a ``why``) and the original unexpected outputs its postcondition accepts;
    and its costs (reference runs that ran out of a budget), by cause."""
    found: list[Finding | None] = []
    rejected = list(outputs.gt_rejected)
    found.append(_finding(task, "postcondition_rejects_reference",
                          [{"input": g["input"], "reference": g["reference"]} for g in rejected],
                          len(rejected), source))
    crashes, costs = [], {}
    for f in outputs.failures:
        error = str(f.get("error") or "")
        kind = FailureKind.of_error(error)
        if kind in _DEFECTS:
            crashes.append({"input": f["input"], "error": error[:300]})
        elif kind in (FailureKind.TIMEOUT, FailureKind.MEMORY):  # a cost, never a defect
            costs[kind.value] = costs.get(kind.value, 0) + 1
    found.append(_finding(task, "reference_fails_on_valid_input", crashes, len(crashes), source))
    found.append(_finding(task, "test_expected_rejected", list(contradicted), len(contradicted), source))
    found.append(_finding(task, "unexpected_output_accepted", list(unexpected_accepted),
                          len(unexpected_accepted), source))
    if unexpected is not None:
        witnesses = list(getattr(unexpected, "gt_accepts", []) or [])
        count = int((unexpected.counts or {}).get("discarded_gt_accepts", len(witnesses)))
        found.append(_finding(task, "postcondition_accepts_other_output", witnesses, count, source))
    return [f for f in found if f is not None], costs


def speak_witness(task: Task, witness: dict[str, Any]) -> dict[str, Any]:
    """A witness whose values are in the records' encoding (``input``, ``reference``,
    ``other``), with each value written as the task's own language writes it."""
    from veriscale.backends.language import show_value

    sig = task.signature
    out = dict(witness)
    try:
        if isinstance(witness.get("input"), dict):
            values = sig.load_input(witness["input"])
            out["input"] = {p.name: show_value(task, p.type, v)
                            for p, v in zip(sig.params, values, strict=True)}
        for key in ("reference", "other"):
            if key in witness:
                out[key] = show_value(task, sig.return_type, sig.load_output(witness[key]))
    except Exception:  # a value the task cannot read back is shown as recorded
        return dict(witness)
    return out


def rank(findings: Iterable[Finding]) -> list[Finding]:
    """Tasks with one answer first, then by kind (most serious first), then task."""
    return sorted(findings, key=lambda f: (f.several_answers, KINDS.index(f.kind), f.task))


def audit_json(findings: Sequence[Finding], costs: dict[str, dict[str, int]],
               accepted: Sequence[str], tasks: int) -> dict[str, Any]:
    """``audit.json``: findings ranked, those of tasks a maintainer accepted apart."""
    keep = [f for f in findings if f.task not in accepted]
    silenced = [f for f in findings if f.task in accepted]
    by_kind: dict[str, int] = {}
    for f in keep:
        by_kind[f.kind] = by_kind.get(f.kind, 0) + 1
    return {
        "tasks": tasks,
        "tasks_flagged": len({f.task for f in keep}),
        "tasks_flagged_by_kind": dict(sorted(by_kind.items(), key=lambda kv: KINDS.index(kv[0]))),
        "findings": [f.to_json() for f in rank(keep)],
        "accepted_multiple": [f.to_json() for f in rank(silenced)],
        "costs": {t: c for t, c in sorted(costs.items()) if c},
    }
