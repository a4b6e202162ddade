"""Adversarial synthesis of unexpected outputs (paper §3.1), through the Backend protocol only.

Two steps, each one pipeline stage:

1. :func:`generate_adversaries` — decomposition → flawed specifications →
   adversarial implementations (LLM or offline provider), each spec and each
   adversary screened with ``backend.compile``.
2. :func:`synthesize_unexpected` / :func:`synthesize` — every compiled adversary
   is run on every expected input (one batched call); the outcomes form the
   **kill matrix**, which is persisted (the authors lost theirs). An output
   becomes an *unexpected output* only if it differs from the expected output
   **and the GT postcondition rejects it** — the authors kept every differing
   output, so for tasks with several valid outputs their "unexpected" outputs
   could be correct. Outputs the GT postcondition accepts or cannot decide are
   counted, not kept. For each kept output we record which flawed
   specifications accepted it.

The decision of what to keep is made by small pure functions
(:func:`outputs_differ`, :func:`decide`), tested directly.
"""

from __future__ import annotations

import enum
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from veriscale.backends import dispatch
from veriscale.backends.base import Backend, Outcome, Verdict, hint, reasons_of
from veriscale.backends.causes import cause_counts
from veriscale.benchmark.model import Implementation, Input, Signature, Spec, Task
from veriscale.values import ValueType, values_equal

# ====================================================================== config


class AdversarySettings(BaseModel):
    """The ``[adversaries]`` section of the run config (:mod:`veriscale.pipeline.config`)."""

    model_config = ConfigDict(extra="forbid")

    max_adver_impl: int = Field(5, ge=1, description="adversaries per flawed specification")
    max_specs: int = Field(8, ge=0, description="flawed specifications per task")
    check_flawed_specs: bool = Field(
        False,
        description="record which flawed specs accept each kept output (one more oracle "
        "round, not needed by the default suites; implied by require_flawed_acceptance)",
    )
    max_cells: int | None = Field(
        None,
        ge=0,
        description="(expected input, adversary) cells run per task, sampled with the seed "
        "(the authors sampled 3000); 0 runs every cell; unset: the backend's default "
        "(3000 on WASM Lean and on Coq, every cell on native Lean and Python)",
    )
    require_flawed_acceptance: bool = Field(
        False,
        description="keep an unexpected output only if some flawed spec accepted it "
        "(the paper's filter); off by default: the GT-postcondition check already "
        "guarantees the output is wrong",
    )
    """Off because the GT postcondition's rejection already proves the output wrong;
    demanding acceptance by a flawed spec ties the suite to whichever generated specs
    happened to compile, and drops near-miss outputs that are exactly the realistic
    mistakes a candidate spec must reject. The acceptance is recorded either way."""


# ====================================================================== pure decisions


class Decision(enum.Enum):
    FAILED = "failed"  # the adversary crashed, timed out or returned an ill-typed value
    SAME = "same"  # equal to the expected output: not a kill
    KEEP = "keep"  # differs and the GT postcondition rejects it: an unexpected output
    GT_ACCEPTS = "gt_accepts"  # differs but is a valid output (several valid outputs)
    GT_UNKNOWN = "gt_unknown"  # differs, and the GT postcondition could not decide
    NO_FLAWED_ACCEPTANCE = "no_flawed_acceptance"  # rejected by GT, no flawed spec accepted it


def outputs_differ(t: ValueType, output: Any, expected: Any) -> bool:
    """Lean ``==`` semantics on canonical values (a NaN differs from everything)."""
    return not values_equal(t, output, expected)


def adversary_settings(settings: Any) -> AdversarySettings:
    """The run's ``[adversaries]`` section (a mapping with its TOML names is read as one)."""
    if isinstance(settings, AdversarySettings):
        return settings
    return AdversarySettings.model_validate(dict(settings or {}))


def decide(gt: Verdict, flawed_accepts: int, require_flawed: bool) -> Decision:
    """What to do with an output that differs from the expected one."""
    if gt is Verdict.TRUE:
        return Decision.GT_ACCEPTS
    if gt is not Verdict.FALSE:
        return Decision.GT_UNKNOWN
    if require_flawed and flawed_accepts == 0:
        return Decision.NO_FLAWED_ACCEPTANCE
    return Decision.KEEP


def sample_cells(rows: int, cols: int, budget: int, seed: int) -> list[list[int]]:
    """Which rows each adversary (column) runs on: every cell, or ``budget`` cells.

    The authors sampled 3000 (expected input, adversary) pairs per task; the
    sample here is uniform over the grid without replacement, seeded per task,
    so a rerun runs the same cells. Rows are returned sorted, per column.
    """
    if budget <= 0 or rows * cols <= budget:
        return [list(range(rows)) for _ in range(cols)]
    picked = sorted(random.Random(seed).sample(range(rows * cols), budget))
    out: list[list[int]] = [[] for _ in range(cols)]
    for cell in picked:
        out[cell % cols].append(cell // cols)
    for col in out:
        col.sort()
    return out


def value_key(sig: Signature, value: Any) -> str:
    """A deterministic sort/dedup key of an output: its VERINA JSON text."""
    try:
        return json.dumps(sig.encode_output(value), sort_keys=True, ensure_ascii=False)
    except Exception:
        return repr(value)


# ====================================================================== backend helpers


def compile_all(
    backend: Backend, task: Task, *, impls: Sequence[Implementation] = (),
    specs: Sequence[Spec] = (),
) -> tuple[list[str | None], list[str | None]]:
    """``compile`` for each adversary and each spec, in one dispatched batch."""
    jobs = [(task, i, None) for i in impls] + [(task, None, s) for s in specs]
    out = dispatch.compile_many(backend, jobs)
    return out[: len(impls)], out[len(impls) :]


# ====================================================================== result


@dataclass(frozen=True)
class KillCell:
    row: int
    adversary: str
    outcome: Outcome
    decision: Decision

    @property
    def killed(self) -> bool:
        return self.decision is Decision.KEEP


@dataclass
class AdversaryRecord:
    impl: Implementation
    compile_error: str | None = None
    kills: int = 0  # rows on which it produced a kept unexpected output

    @property
    def compiled(self) -> bool:
        return self.compile_error is None


@dataclass
class AdversarialResult:
    task_id: str
    signature: Signature
    inputs: list[Input]
    expected: list[Any]
    adversaries: list[AdversaryRecord]
    spec_ids: list[str]
    cells: list[KillCell] = field(default_factory=list)
    unexpected: list[list[Any]] = field(default_factory=list)  # per row, sorted, distinct
    accepted_by: dict[tuple[int, str], list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    spec_acceptance: dict[str, int] = field(default_factory=dict)  # GT-rejected outputs accepted
    vacuous_specs: list[str] = field(default_factory=list)  # accepted every GT-rejected output
    # (row, other output) that differ from the reference's and that the GT postcondition
    # accepts: the smallest few, the witnesses of an under-specified postcondition
    gt_accepts: list[tuple[int, Any]] = field(default_factory=list)

    def kill_matrix_json(self) -> list[dict[str, Any]]:
        """One record per (input, compiled adversary): output (the records' neutral form) or failure."""
        sig = self.signature
        encoded = [sig.dump_input(inp) for inp in self.inputs]
        out = []
        for cell in self.cells:
            rec: dict[str, Any] = {"input": encoded[cell.row], "adversary": cell.adversary}
            if cell.outcome.ok:
                try:
                    rec["output"] = sig.dump_output(cell.outcome.value)
                except Exception as exc:
                    rec["failure"] = f"unencodable: {exc}"
            else:
                rec["failure"] = cell.outcome.error or "failure"
            rec["decision"] = cell.decision.value
            rec["killed"] = cell.killed
            out.append(rec)
        return out

    def to_json(self) -> dict[str, Any]:
        sig = self.signature
        rows = []
        for k, (inp, exp) in enumerate(zip(self.inputs, self.expected, strict=True)):
            values = self.unexpected[k] if k < len(self.unexpected) else []
            rows.append({
                "input": sig.dump_input(inp),
                "expected": sig.dump_output(exp),
                "unexpected": [sig.dump_output(v) for v in values],
                "accepted_by": [self.accepted_by.get((k, value_key(sig, v)), []) for v in values],
            })
        return {
            "task": self.task_id,
            "adversaries": [
                {"id": a.impl.id, "strategy": a.impl.strategy, "origin": a.impl.origin,
                 "target_spec": a.impl.target_spec, "compiled": a.compiled,
                 "compile_error": a.compile_error, "kills": a.kills}
                for a in self.adversaries
            ],
            "specs": self.spec_ids,
            "spec_acceptance": dict(self.spec_acceptance),
            "vacuous_specs": list(self.vacuous_specs),
            "rows": rows,
            "kill_matrix": self.kill_matrix_json(),
            "gt_accepts": [{"input": sig.dump_input(self.inputs[r]),
                            "reference": sig.dump_output(self.expected[r]),
                            "other": sig.dump_output(v)} for r, v in self.gt_accepts],
            "counts": dict(self.counts),
        }


WITNESSES = 5
"""Witnesses kept per task and kind (the smallest: what a maintainer reads first)."""


def witness_size(value: Any) -> tuple[int, float]:
    """(elements, magnitude) of a value: fewest elements first, then smallest values."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        parts = [witness_size(v) for v in value]
        return (sum(p[0] for p in parts) + 1, sum(p[1] for p in parts))
    if isinstance(value, str):
        return (len(value) + 1, float(sum(map(ord, value))))
    if isinstance(value, bool):
        return (1, float(value))
    if isinstance(value, (int, float)):
        return (1, abs(float(value)))
    return (1, 0.0)


def smallest_witnesses(items: Sequence[Any], key: Callable[[Any], Any],
                       keep: int = WITNESSES) -> list[Any]:
    """The ``keep`` smallest of ``items`` by :func:`witness_size` of ``key(item)``."""
    return sorted(items, key=lambda w: witness_size(key(w)))[:keep]


# ====================================================================== the stage


def synthesize(
    task: Task,
    pairs: Sequence[tuple[Input, Any]],
    adversaries: Sequence[Implementation],
    backend: Backend,
    *,
    specs: Sequence[Spec] = (),
    config: AdversarySettings | None = None,
    screened: Mapping[str, str | None] | None = None,
    seed: int = 0,
) -> AdversarialResult:
    """Run adversaries on expected pairs, build the kill matrix, keep GT-rejected outputs.

    ``screened`` maps adversary ids to an earlier ``compile`` result (``None`` =
    compiled); adversaries not in it are compiled here.
    """
    cfg = adversary_settings(config)
    sig = task.signature
    ret = sig.return_type
    inputs = [tuple(i) for i, _ in pairs]
    expected = [e for _, e in pairs]

    # -- screen
    unique: list[Implementation] = []
    seen_ids: set[str] = set()
    for impl in adversaries:
        if impl.id not in seen_ids:
            seen_ids.add(impl.id)
            unique.append(impl)
    known = dict(screened or {})
    todo = [i for i in unique if i.id not in known]
    if todo:
        errors, _ = compile_all(backend, task, impls=todo)
        known.update({i.id: e for i, e in zip(todo, errors, strict=True)})
    records = [AdversaryRecord(i, known.get(i.id)) for i in unique]
    compiled = [r for r in records if r.compiled]
    result = AdversarialResult(task.id, sig, inputs, expected, records, [s.id for s in specs])
    result.unexpected = [[] for _ in inputs]

    # -- run every compiled adversary on its sampled expected inputs (one batched call)
    budget = (cfg.max_cells if cfg.max_cells is not None
              else hint(backend, "default_cell_budget"))
    rows_of = sample_cells(len(inputs), len(compiled), budget, seed)
    outcomes: list[list[tuple[int, Outcome]]] = [[] for _ in compiled]
    jobs = [(c, rows) for c, rows in enumerate(rows_of) if rows]
    if inputs and jobs:
        raw = dispatch.many(backend, "run", [(task, compiled[c].impl, [inputs[r] for r in rows])
                                             for c, rows in jobs])
        for (c, rows), got in zip(jobs, raw, strict=True):
            outcomes[c] = list(zip(rows, got, strict=True))

    # -- distinct differing outputs per row, in first-seen order
    candidates: dict[tuple[int, str], Any] = {}
    for col in outcomes:
        for row, out in col:
            if out.ok and outputs_differ(ret, out.value, expected[row]):
                candidates.setdefault((row, value_key(sig, out.value)), out.value)
    keys = list(candidates)

    # -- GT postcondition on every candidate
    gt: dict[tuple[int, str], Verdict] = {}
    gt_why: dict[tuple[int, str], str] = {}  # why the GT postcondition left one undecided
    if keys:
        verdicts = dispatch.one(backend, "postcondition_holds", task, None,
                                [(inputs[r], candidates[(r, k)]) for r, k in keys])
        gt = dict(zip(keys, verdicts, strict=True))
        gt_why = dict(zip(keys, reasons_of(verdicts), strict=True))

    # -- flawed specifications on the GT-rejected candidates
    rejected = [key for key in keys if gt[key] is Verdict.FALSE]
    accepted: dict[tuple[int, str], list[str]] = {key: [] for key in rejected}
    if rejected and specs and (cfg.check_flawed_specs or cfg.require_flawed_acceptance):
        batch = [(inputs[r], candidates[(r, k)]) for r, k in rejected]
        per_spec = dispatch.many(backend, "postcondition_holds", [(task, s, batch) for s in specs])
        for spec, verdicts in zip(specs, per_spec, strict=True):
            for key, v in zip(rejected, verdicts, strict=True):
                if v is Verdict.TRUE:
                    accepted[key].append(spec.id)

    # A spec that accepts every GT-rejected output (e.g. "all constraints dropped")
    # says nothing about any one of them; the counts below single it out.
    vacuous = {
        sid for sid in (s.id for s in specs)
        if rejected and all(sid in accepted[key] for key in rejected)
    }
    result.vacuous_specs = sorted(vacuous)
    decisions = {
        key: decide(gt[key], len(accepted.get(key, [])), cfg.require_flawed_acceptance)
        for key in keys
    }

    # -- the kill matrix and the kept outputs
    for rec, col in zip(compiled, outcomes, strict=True):
        killed_rows = set()
        for row, out in col:
            if not out.ok:
                d = Decision.FAILED
            elif not outputs_differ(ret, out.value, expected[row]):
                d = Decision.SAME
            else:
                d = decisions[(row, value_key(sig, out.value))]
            result.cells.append(KillCell(row, rec.impl.id, out, d))
            if d is Decision.KEEP:
                killed_rows.add(row)
        rec.kills = len(killed_rows)
    for (row, k), d in sorted(decisions.items()):
        if d is Decision.KEEP:
            result.unexpected[row].append(candidates[(row, k)])
            result.accepted_by[(row, k)] = accepted.get((row, k), [])

    result.gt_accepts = smallest_witnesses(
        [(r, candidates[(r, k)]) for (r, k), d in decisions.items()
         if d is Decision.GT_ACCEPTS], lambda w: (inputs[w[0]], w[1]))
    tally = {d: sum(1 for x in decisions.values() if x is d) for d in Decision}
    cell_tally = {d: sum(1 for c in result.cells if c.decision is d) for d in Decision}
    kept = tally[Decision.KEEP]
    result.counts = {
        "adversaries_tried": len(records),
        "adversaries_compiled": len(compiled),
        "adversaries_killing": sum(1 for r in compiled if r.kills),
        "expected_pairs": len(inputs),
        "cells_possible": len(inputs) * len(compiled),
        "cells": len(result.cells),
        "cells_failed": cell_tally[Decision.FAILED],
        "cells_same": cell_tally[Decision.SAME],
        "cells_killed": cell_tally[Decision.KEEP],
        **cause_counts("cells failed", [c.outcome.error or "" for c in result.cells
                                        if c.decision is Decision.FAILED]),
        "distinct_differing_outputs": len(keys),
        "unexpected_kept": kept,
        "discarded_gt_accepts": tally[Decision.GT_ACCEPTS],
        "discarded_gt_unknown": tally[Decision.GT_UNKNOWN],
        **cause_counts("discarded_gt_unknown", [gt_why.get(key, "") for key, d
                                                in decisions.items()
                                                if d is Decision.GT_UNKNOWN]),
        "discarded_no_flawed_acceptance": tally[Decision.NO_FLAWED_ACCEPTANCE],
        "kept_also_accepted_by_flawed_spec": sum(
            1 for key, d in decisions.items() if d is Decision.KEEP and accepted.get(key)
        ),
        "kept_accepted_by_nonvacuous_flawed_spec": sum(
            1 for key, d in decisions.items()
            if d is Decision.KEEP and set(accepted.get(key, [])) - vacuous
        ),
        "rows_with_unexpected": sum(1 for u in result.unexpected if u),
    }
    result.spec_acceptance = {
        s.id: sum(1 for key in rejected if s.id in accepted[key]) for s in specs
    }
    return result


# ====================================================================== pipeline stages


def generate_adversaries(
    task: Task, provider: Any, backend: Backend, settings: AdversarySettings | None = None
) -> dict[str, Any]:
    """Stage *adversaries*: decomposition, flawed specs, adversaries, all compile-screened.

    Returns the JSON artifact that :func:`synthesize_unexpected` reads.
    """
    from veriscale.llm.results import impl_to_json, spec_to_json

    cfg = adversary_settings(settings)
    issues: list[str] = []
    decomposition = provider.decompose(task)
    spec_result = provider.specifications(task, decomposition)
    issues.extend(spec_result.issues)
    specs = list(spec_result.specs)[: cfg.max_specs]
    _, spec_errors = compile_all(backend, task, specs=specs)
    good_specs = [s for s, e in zip(specs, spec_errors, strict=True) if e is None]
    # With no usable flawed spec the red team games the GT postcondition itself.
    targets = good_specs or [Spec(id="gt", origin="gt")]
    mapper = getattr(provider, "map", None) or (lambda fn, xs: [fn(x) for x in xs])

    def red_team(spec: Spec) -> Any:
        try:
            return provider.adversaries(task, spec, cfg.max_adver_impl)
        except Exception as exc:  # a provider failure loses this spec's adversaries only
            from veriscale.llm.results import AdversaryResult

            return AdversaryResult(issues=[f"{task.id}: redteam: {type(exc).__name__}: {exc}"])

    impls: list[Implementation] = []
    rejected: list[str] = []
    seen: set[str] = set()
    redteam_llm: list[dict[str, Any]] = []
    for res in mapper(red_team, targets):
        issues.extend(res.issues)
        # one answer rejected for each spec that asked it is one entry, not one per spec
        rejected.extend(r for r in res.rejected if r not in rejected)
        redteam_llm.append(getattr(res, "llm", None) or {})
        for impl in res.implementations:
            if impl.id not in seen:
                seen.add(impl.id)
                impls.append(impl)
    impl_errors, _ = compile_all(backend, task, impls=impls)
    return {
        "decomposition": {
            "input": decomposition.input_model,
            "output": decomposition.output_model,
            "origin": decomposition.origin,
        },
        "specs": [
            {**spec_to_json(s), "compile_error": e}
            for s, e in zip(specs, spec_errors, strict=True)
        ],
        "adversaries": [
            {**impl_to_json(i), "compile_error": e}
            for i, e in zip(impls, impl_errors, strict=True)
        ],
        "issues": issues,
        "rejected": rejected,
        "llm": _llm_accounting(getattr(spec_result, "llm", None) or {}, redteam_llm),
        "counts": {
            "specs_proposed": len(spec_result.specs),
            "specs_compiled": len(good_specs),
            "adversaries_tried": len(impls),
            "adversaries_compiled": sum(1 for e in impl_errors if e is None),
            "adversaries_rejected_unsafe_or_malformed": len(rejected),
            "issues": len(issues),
        },
    }


def _llm_accounting(spec: dict[str, Any], redteam: list[dict[str, Any]]) -> dict[str, Any]:
    from veriscale.llm.provider import merge_accounting

    return {"spec": spec, "redteam": merge_accounting(redteam)} if spec or any(redteam) else {}


def synthesize_unexpected(
    task: Task,
    pairs: Sequence[tuple[Input, Any]],
    artifact: Mapping[str, Any],
    backend: Backend,
    settings: AdversarySettings | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """Stage *unexpected*: :func:`synthesize` over the adversaries stage's artifact.

    ``seed`` (per task) chooses the sampled cells when a cell budget applies.
    """
    from veriscale.llm.results import impl_from_json, spec_from_json

    cfg = adversary_settings(settings)
    impls = [impl_from_json(a) for a in artifact.get("adversaries", [])]
    screened = {a["id"]: a.get("compile_error") for a in artifact.get("adversaries", [])}
    specs = [
        spec_from_json(s) for s in artifact.get("specs", [])
        if s.get("compile_error") is None and s.get("postcond") is not None
    ]
    result = synthesize(task, pairs, impls, backend, specs=specs, config=cfg, screened=screened,
                        seed=seed or 0)
    return result.to_json()
