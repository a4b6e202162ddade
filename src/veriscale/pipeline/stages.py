"""The expansion stages of paper §3.1, one function each, over one task.

Each stage takes what the previous stages stored (plain JSON, values in the
neutral form of values/record.py) and returns what it stores, so the
orchestrator can persist it, skip it on resume, and print a summary. The oracle
is always reached through the backend interface; the LLM through a provider
(offline or OpenAI-compatible).

    candidates  originals + seeds (LLM or offline) + type-aware mutation
    classify    syntax filter, then GT precondition: expected / unexpected / unknown
    outputs     the reference implementation on expected inputs → expected pairs
    adversaries flawed specifications and adversarial implementations
    unexpected  adversaries run on expected inputs → kill matrix, unexpected outputs
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from veriscale.artifacts import ClassifyArtifact
from veriscale.backends import dispatch
from veriscale.backends.base import Backend, Label, OutputTester, Verdict, hint, reasons_of
from veriscale.backends.causes import cause_counts, unknown_cause
from veriscale.benchmark.model import Input, Task
from veriscale.pipeline.config import RunConfig
from veriscale.values.types import is_modelled


@dataclass
class CandidateInput:
    input: Input
    provenance: str


def encode_candidates(task: Task, items: list[CandidateInput]) -> list[dict[str, Any]]:
    sig = task.signature
    return [{"input": sig.dump_input(c.input), "provenance": c.provenance} for c in items]


def decode_candidates(task: Task, rows: list[dict[str, Any]]) -> list[CandidateInput]:
    sig = task.signature
    return [CandidateInput(sig.load_input(r["input"]), r["provenance"]) for r in rows]


def dedup(items: list[CandidateInput]) -> list[CandidateInput]:
    """First occurrence wins, so originals keep their provenance."""
    seen: set[Input] = set()
    out: list[CandidateInput] = []
    for c in items:
        if c.input not in seen:
            seen.add(c.input)
            out.append(c)
    return out


# ------------------------------------------------------------------ candidates


def _language_filter(task: Task) -> Any:
    """The language plug-in's test of which seeds and mutants it can evaluate."""
    from veriscale.backends.language import plugin_for

    plugin = plugin_for(task)
    return lambda inp: plugin.input_ok(task, inp)


def stage_candidates(task: Task, config: RunConfig, provider: Any) -> dict[str, Any]:
    """Seed pool (originals, then LLM/offline seeds), then mutation of every seed."""
    from veriscale.expansion.mutation import MutationConfig, mutate_inputs, task_seed

    originals = [CandidateInput(t.input, "original:test") for t in task.tests]
    originals += [CandidateInput(r, "original:reject") for r in task.reject_inputs]
    seeds: list[CandidateInput] = []
    seed_errors: list[str] = []
    llm_parts: list[dict[str, Any]] = []
    n = config.seeds.candidates_per_round
    for round_index in range(config.seeds.rounds):
        try:
            proposed = provider.seed_inputs(task, n, round_index=round_index)
        except Exception as exc:  # a provider failure loses the seeds, not the task
            seed_errors.append(f"{type(exc).__name__}: {exc}")
            continue
        seed_errors.extend(str(i) for i in getattr(proposed, "issues", []))
        llm_parts.append(getattr(proposed, "llm", None) or {})
        for item in proposed:
            inp, prov = item if isinstance(item, tuple) and len(item) == 2 else (item, "seed")
            seeds.append(CandidateInput(tuple(inp), str(prov)))
    accept = _language_filter(task)  # e.g. Coq: unary nat within a bound, ASCII text
    seeds = [c for c in seeds if accept(c.input)]
    pool = dedup(originals + seeds)

    mcfg = MutationConfig(
        max_mutations_per_input=config.mutation.max_mutations_per_input,
        multi_step_size=config.mutation.multi_step_size,
        ingredient_prob=config.mutation.ingredient_prob,
        seed=task_seed(config.seed, task.id),  # independent streams per task
    )
    mutants = mutate_inputs(task.signature, [c.input for c in pool], mcfg, accept)
    everything = dedup(pool + [CandidateInput(m, "mutation") for m in mutants])
    capped = everything[: config.mutation.max_candidates_per_task]
    counts = Counter(c.provenance.split(":")[0] for c in capped)
    return {
        "candidates": encode_candidates(task, capped),
        "counts": {
            "original": len(originals),
            "seeds": len(seeds),
            "mutants": len(mutants),
            "total": len(capped),
            "dropped_by_cap": len(everything) - len(capped),
            "by_provenance": dict(sorted(counts.items())),
        },
        "errors": seed_errors,
        "llm": _merge_llm(llm_parts),
    }


def _merge_llm(parts: list[dict[str, Any]]) -> dict[str, Any]:
    from veriscale.llm.provider import merge_accounting

    return merge_accounting(parts)


# ------------------------------------------------------------------ classify


def _originals_again(cands: list[CandidateInput], unknown: list[str | None],
                     ask: Callable[[list[Input]], Sequence[Any]]) -> list[tuple[int, Any]]:
    """The benchmark's own inputs that a backend skipped because *other* checks of
    the task ran over their limits (``unknown``: each candidate's UNKNOWN reason,
    None where it was answered), asked again on their own: the original test inputs
    are always classified and run, whatever happened to the other candidates.
    Returns (index, new answer) pairs."""
    again = [i for i, (c, why) in enumerate(zip(cands, unknown, strict=True))
             if why is not None and c.provenance.startswith("original")
             and unknown_cause(why) == "skipped after timeouts"]
    if not again:
        return []
    return list(zip(again, ask([cands[i].input for i in again]), strict=True))


def stage_classify(task: Task, candidates: list[CandidateInput], backend: Backend) -> ClassifyArtifact:
    """Syntax filter, then the GT precondition decides; undecided inputs are dropped.

    A backend whose ``classify`` also runs the syntax filter
    (``classify_checks_syntax``: Lean, where each round is a process start) is
    asked once; its ``syntax``-stage answers are the filter's rejections.
    """
    inputs = [c.input for c in candidates]
    if hint(backend, "classify_checks_syntax"):
        both = dispatch.one(backend, "classify", task, inputs)
        problems = [v.detail or "ill_typed" if v.stage == "syntax" else None for v in both]
        kept = [v for v in both if v.stage != "syntax"]
    else:
        problems = dispatch.one(backend, "check_inputs", task, inputs)
        kept = None
    wellformed = [c for c, why in zip(candidates, problems, strict=True) if why is None]
    rejected = [
        {"input": task.signature.dump_input(c.input), "reason": why}
        for c, why in zip(candidates, problems, strict=True)
        if why is not None
    ]
    if kept is not None:
        verdicts = kept
    else:
        verdicts = dispatch.one(backend, "classify", task, [c.input for c in wellformed])
    verdicts = list(verdicts)
    for i, v in _originals_again(wellformed, [
            None if v.label is not Label.UNKNOWN else v.detail for v in verdicts],
            lambda inputs: dispatch.one(backend, "classify", task, inputs)):
        verdicts[i] = v
    buckets: dict[str, list[dict[str, Any]]] = {"expected": [], "unexpected": [], "unknown": []}
    # buckets by label; stored as expected / unexpected / unknown *inputs*
    stages: Counter[str] = Counter()
    for cand, verdict in zip(wellformed, verdicts, strict=True):
        row = encode_candidates(task, [cand])[0]
        if verdict.label is Label.UNKNOWN:
            row["detail"] = verdict.detail
        buckets[verdict.label.value].append(row)
        stages[f"{verdict.label.value}:{verdict.stage}"] += 1
    return ClassifyArtifact(
        expected_inputs=buckets["expected"],
        unexpected_inputs=buckets["unexpected"],
        unknown_inputs=buckets["unknown"],
        syntax_rejected=rejected,
        counts={
            "candidates": len(candidates),
            "syntax_rejected": len(rejected),
            "expected_inputs": len(buckets["expected"]),
            "unexpected_inputs": len(buckets["unexpected"]),
            "unknown_inputs": len(buckets["unknown"]),
            **cause_counts("unknown", [r.get("detail", "") for r in buckets["unknown"]]),
            "by_stage": dict(sorted(stages.items())),
        },
    )


# ------------------------------------------------------------------ outputs


def _mismatches_in_backend(task: Task, backend: Backend, mismatches: list[dict[str, Any]],
                           pairs: list[tuple[Input, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The reference mismatches that hold in the task's own language, and how many
    it could not settle.

    A value of a type not modelled here travels as its notation, and two notations
    of one value differ (Lean prints ``{ entries := [...] }`` for the row's
    ``⟨[...]⟩``), so a textual difference proves nothing: such a mismatch is asked
    of the backend's own ``==`` (VERINA's code test), and one it cannot settle is
    not a mismatch (an unknown never contradicts a row). Modelled values compare
    exactly here.
    """
    if not mismatches or is_modelled(task.signature.return_type):
        return mismatches, 0
    if not isinstance(backend, OutputTester):
        return [], len(mismatches)
    equal = dispatch.one(backend, "test_outputs", task, None, pairs)
    kept = [m for m, o in zip(mismatches, equal, strict=True) if o.ok and o.value is False]
    unsettled = sum(1 for o in equal if not o.ok or not isinstance(o.value, bool))
    return kept, unsettled


def stage_outputs(task: Task, expected: list[CandidateInput], backend: Backend,
                  check_postcondition: bool = True) -> dict[str, Any]:
    """Run the reference on every expected input; failures are recorded, not kept.

    With ``check_postcondition`` the GT postcondition is asked about every
    (input, reference output) pair, and a pair it rejects is not kept but listed
    (``gt_rejected``): the task's own code and specification disagree there, so
    the pair would fail a correct specification. VERINA's Coq track has such
    tasks (a precondition translated without one of the Lean conjuncts admits
    inputs the postcondition was never meant for). An undecided verdict keeps
    the pair: the reference's output is the expected output by definition.
    """
    sig = task.signature
    outcomes = list(dispatch.one(backend, "run", task, None, [c.input for c in expected]))
    for i, o in _originals_again(expected, [None if o.ok else o.error or "" for o in outcomes],
                                 lambda inputs: dispatch.one(backend, "run", task, None, inputs)):
        outcomes[i] = o
    pairs: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    original_expected = {t.input: t.expected for t in task.tests}
    mismatches: list[dict[str, Any]] = []
    mismatch_pairs: list[tuple[Input, Any]] = []  # (input, the row's expected output)
    gt_rejected: list[dict[str, Any]] = []
    verdicts: list[Verdict | None] = [None] * len(expected)
    why: list[str] = [""] * len(expected)  # why the GT postcondition left a pair undecided
    if check_postcondition:
        ok = [i for i, out in enumerate(outcomes) if out.ok]
        got = dispatch.one(backend, "postcondition_holds", task, None,
                           [(expected[i].input, outcomes[i].value) for i in ok])
        for i, v, reason in zip(ok, got, reasons_of(got), strict=True):
            verdicts[i], why[i] = v, reason
    for cand, out, verdict in zip(expected, outcomes, verdicts, strict=True):
        enc = sig.dump_input(cand.input)
        if not out.ok:
            failures.append({"input": enc, "error": out.error})
            continue
        if verdict is Verdict.FALSE:
            gt_rejected.append({"input": enc, "reference": sig.dump_output(out.value),
                                "provenance": cand.provenance})
            continue
        if cand.input in original_expected and original_expected[cand.input] != out.value:
            mismatches.append(
                {
                    "input": enc,
                    "benchmark": sig.dump_output(original_expected[cand.input]),
                    "reference": sig.dump_output(out.value),
                }
            )
            mismatch_pairs.append((cand.input, original_expected[cand.input]))
        pairs.append(
            {"input": enc, "expected": sig.dump_output(out.value), "provenance": cand.provenance}
        )
    mismatches, unsettled = _mismatches_in_backend(task, backend, mismatches, mismatch_pairs)
    undecided_why = [w for v, w in zip(verdicts, why, strict=True)
                     if v not in (None, Verdict.TRUE, Verdict.FALSE)]
    undecided = len(undecided_why)
    return {
        "pairs": pairs,
        "failures": failures,
        "reference_mismatches": mismatches,
        "gt_rejected": gt_rejected,
        "counts": {
            "expected_inputs": len(expected),
            "pairs": len(pairs),
            "failures": len(failures),
            **cause_counts("failed", [f["error"] or "" for f in failures]),
            "reference_mismatches": len(mismatches),
            **({"reference_mismatches_unsettled": unsettled} if unsettled else {}),
            **({"gt_rejected": len(gt_rejected), "gt_postcondition_unknown": undecided,
                **cause_counts("gt_postcondition_unknown", undecided_why)}
               if check_postcondition else {}),
        },
    }
