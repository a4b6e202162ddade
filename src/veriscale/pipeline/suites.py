"""Assemble the Plus suite from stage artifacts and reduce it to Lite (paper §3.2).

Plus keeps every original row (with its original unexpected outputs, merged
with the new ones: the authors' step 5 discarded them), every new expected
pair, every original reject input and every new unexpected input. Lite applies
the two reductions of :mod:`veriscale.reduction` to Plus.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriscale.artifacts import UnexpectedArtifact
from veriscale.benchmark.model import ExpectedPair, Input, Signature, Task
from veriscale.pipeline.config import ReductionSettings
from veriscale.values.inputs import input_key, param_types, value_key


@dataclass
class KillData:
    """Which adversaries each expected input kills (from the persisted kill matrix)."""

    kills: dict[Input, set[str]] = field(default_factory=dict)
    records: dict[Input, int] = field(default_factory=dict)


def kill_data(signature: Signature, record: UnexpectedArtifact) -> KillData:
    """Kill sets per expected input from the persisted kill matrix (cells marked ``killed``)."""
    kill = KillData()
    for inp, adversary in record.kills(signature):
        kill.kills.setdefault(inp, set()).add(adversary)
        kill.records[inp] = kill.records.get(inp, 0) + 1
    return kill


def _merge(values: list[Any], more: list[Any], expected: Any,
           key: Callable[[Any], Any] = lambda v: v) -> list[Any]:
    """``values`` and those of ``more`` not among them and not ``expected``, compared by
    ``key`` (a NaN output is one output)."""
    out = list(values)
    seen = {key(v) for v in out} | {key(expected)}
    for v in more:
        if key(v) not in seen:
            seen.add(key(v))
            out.append(v)
    return out


def contradicted_rows(task: Task, mismatches: dict[Input, Any], gt_rejected: dict[Input, Any],
                      precondition_rejects: set[Input],
                      show: Callable[[Any], str] = repr) -> dict[Input, str]:
    """The original rows the ground truth definitely contradicts, with why: the
    reference gives another output (``mismatches`` and ``gt_rejected``: input -> the
    reference's output), the GT postcondition rejects the row's own expected output
    (``gt_rejected`` where the reference's output is the row's), or the GT
    precondition rejects the row's input. A suite that kept such a row would fail
    its own ground truth; an UNKNOWN is no contradiction. ``show`` writes a value
    in the task's language."""
    out: dict[Input, str] = {}
    for t in task.tests:
        if t.input in out:
            continue
        ref = mismatches.get(t.input, gt_rejected.get(t.input, t.expected))
        if ref != t.expected:
            out[t.input] = f"the reference gives {show(ref)}, the row expects {show(t.expected)}"
        elif t.input in gt_rejected:
            out[t.input] = "the ground-truth postcondition rejects the row's expected output"
        elif t.input in precondition_rejects:
            out[t.input] = "the ground-truth precondition rejects the row's input"
    return out


def assemble_plus(
    task: Task,
    pairs: list[tuple[Input, Any, str]],
    unexpected_outputs: dict[Input, list[Any]],
    unexpected_inputs: list[Input],
    keep_nonkilling: bool = True,
    contradicted: dict[Input, str] | None = None,
) -> Task:
    """The Plus version of ``task`` (a copy; the input task is not changed); the
    original rows in ``contradicted`` (:func:`contradicted_rows`) are left out, their
    inputs kept as the ground truth classified them (a pair with the reference's
    output, or an unexpected input)."""
    plus = copy.copy(task)
    # inputs compared by their duplicate key: a NaN is one input however often it comes
    # (Python's nan != nan let verina_basic_63's [NaN, 1.0] into Plus twice)
    key = input_key(param_types(task.signature))
    out_key = value_key(task.signature.return_type)
    outputs_of = {key(i): outs for i, outs in unexpected_outputs.items()}
    left_out = {key(i) for i in (contradicted or {})}
    rows: list[ExpectedPair] = []
    seen: set[Any] = set()
    for t in task.tests:
        k = key(t.input)
        if k in seen:  # the original benchmark may repeat an input
            continue
        if k in left_out:
            continue  # its input may come back as what the ground truth says it is
        seen.add(k)
        new = outputs_of.get(k, [])
        rows.append(ExpectedPair(t.input, t.expected,
                                _merge(t.unexpected, new, t.expected, out_key), "original"))
    for inp, expected, provenance in pairs:
        k = key(inp)
        if k in seen:
            continue
        seen.add(k)
        unexpected = _merge([], outputs_of.get(k, []), expected, out_key)
        if unexpected or keep_nonkilling:
            rows.append(ExpectedPair(inp, expected, unexpected, provenance))
    rejects: list[Input] = []
    seen_rejects: set[Any] = set()
    for r in list(task.reject_inputs) + list(unexpected_inputs):
        k = key(r)
        if k not in seen_rejects and k not in seen:
            seen_rejects.add(k)
            rejects.append(r)
    plus.tests = rows
    plus.reject_inputs = rejects
    return plus


def reduce_to_lite(
    plus: Task, kill_data: KillData, settings: ReductionSettings
) -> tuple[Task, dict[str, Any]]:
    """Lite = adversary-killing reduction of pairs + boundary-preserving reduction of rejects.

    ``settings`` is the run's ``[reduction]`` section, so ``veriscale run`` and
    ``veriscale reduce`` cannot disagree on a budget or a default.
    """
    from veriscale.reduction.pairs import PairRow, reduce_pairs
    from veriscale.reduction.reject_inputs import reduce_canonical_inputs

    rows = [
        PairRow(
            case_index=i,
            kills=frozenset(kill_data.kills.get(t.input, set())),
            record_count=kill_data.records.get(t.input, 0),
            original=t.provenance == "original",
        )
        for i, t in enumerate(plus.tests)
    ]
    pair_result = reduce_pairs(rows, budget=settings.max_pairs,
                               keep_original=settings.keep_original)
    kept, reject_result = reduce_canonical_inputs(
        plus.signature, plus.reject_inputs, budget=settings.max_reject_inputs,
        keep_per_bucket=settings.keep_per_critical_bucket)
    lite = copy.copy(plus)
    lite.tests = [plus.tests[i] for i in pair_result.selected]
    lite.reject_inputs = kept
    log = {"pairs": pair_result.log_dict(), "reject_inputs": reject_result.log_dict()}
    return lite, log


def write_suite(final: Path, tasks: list[Task]) -> Path:
    """Write ``tasks`` as a suite folder at ``final``, each in its own format.

    Everything goes to a staging sibling first and is swapped in only when
    every task was written, so a failed write leaves the previous suite whole.
    """
    import shutil

    from veriscale.backends.language import plugin_for
    from veriscale.rundir import replace_dir_atomic

    final = Path(final)
    staging = final.with_name(f".{final.name}.staging")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    try:
        for task in tasks:
            plugin_for(task).write_task_dir(task, staging / task.id)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    replace_dir_atomic(staging, final)
    return final
