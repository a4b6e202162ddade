"""The deterministic offline provider: no endpoint, same roles, same result types.

* seeds: type-directed boundary inputs (``veriscale.values.boundaries``);
* decomposition: the description's own Input / Output sections;
* flawed specifications: the GT postcondition with top-level conjuncts dropped
  (one spec per dropped conjunct, and all of them), equalities on ``result``
  weakened (the plug-in's ``weakened_postconditions``);
* adversaries: the red-team strategies and near-miss perturbations of the
  reference (the plug-in's ``adversary_templates``).

Everything depends only on the task and the seed, so two runs agree exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from veriscale.backends.answers import adversary_id, spec_id
from veriscale.backends.base import Implementation, Spec
from veriscale.backends.language import language_of, plugin_for
from veriscale.backends.screen import untrusted_problem
from veriscale.benchmark.model import Task
from veriscale.llm.client import UsageLedger
from veriscale.llm.parsers import Decomposition
from veriscale.llm.results import AdversaryResult, SeedResult, SpecResult

OFFLINE = "offline"

T = TypeVar("T")
R = TypeVar("R")


def offline_decomposition(task: Task) -> Decomposition:
    """The description's ``-----Input-----`` / ``-----Output-----`` sections (VERINA style)."""
    text = task.description
    inp = re.search(r"-+\s*Input\s*-+\s*\n(.*?)(?=\n-+\s*\w[\w ]*-+|\Z)", text, re.S | re.I)
    out = re.search(r"-+\s*Output\s*-+\s*\n(.*?)(?=\n-+\s*\w[\w ]*-+|\Z)", text, re.S | re.I)
    sig = task.signature
    params = ", ".join(f"{p.name} : {p.type_text}" for p in sig.params)
    input_model = inp.group(1).strip() if inp else ""
    output_model = out.group(1).strip() if out else ""
    return Decomposition(
        input_model=f"a. {params}\nb. {input_model or 'as described'}",
        output_model=f"a. res1 : {sig.return_text}\nb. {output_model or 'as described'}",
        origin=OFFLINE,
    )


def flawed_specs(task: Task) -> list[Spec]:
    """Weakened GT postconditions; the precondition stays the GT one (``None``)."""
    plugin = plugin_for(task)
    weakenings = plugin.weakened_postconditions(task)
    post_aux = plugin.ground_truth(task)[1][3] if weakenings else ""
    specs = [Spec(postcond=w.body, postcond_aux=post_aux, origin=f"{OFFLINE}:{w.label}")
             for w in weakenings]
    out = []
    for s in specs:
        out.append(Spec(precond=s.precond, postcond=s.postcond, precond_aux=s.precond_aux,
                        postcond_aux=s.postcond_aux, imports=s.imports, id=spec_id(s),
                        origin=s.origin))
    return out


def offline_adversaries(task: Task, target_spec: str = "") -> AdversaryResult:
    """Every offline adversary of ``task`` (deduplicated by code, screened for safety)."""
    lang = language_of(task)
    result = AdversaryResult()
    seen: set[str] = set()
    for tpl in plugin_for(task).adversary_templates(task):
        ident = adversary_id(tpl.code)
        if ident in seen:
            continue
        seen.add(ident)
        why = untrusted_problem(tpl.code, lang)
        if why:
            result.rejected.append(f"{task.id}: offline {tpl.strategy}:{tpl.detail}: {why}")
            continue
        result.implementations.append(
            Implementation(code=tpl.code, id=ident, strategy=f"{tpl.strategy}:{tpl.detail}",
                           origin=OFFLINE, target_spec=target_spec)
        )
    return result


class OfflineProvider:
    """The provider used when no endpoint is configured (see :mod:`veriscale.llm.provider`)."""

    name = OFFLINE

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.usage = UsageLedger()  # stays empty: no requests, no tokens, no cost

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        return [fn(x) for x in items]

    def seed_inputs(self, task: Task, n: int, *, round_index: int = 0) -> SeedResult:
        """Boundary inputs not already among the task's own tests and reject inputs."""
        from veriscale.values.boundaries import offline_seeds

        result = SeedResult()
        own = {t.input for t in task.tests} | set(task.reject_inputs)
        try:
            proposed = offline_seeds(task, n, self.seed + round_index)
        except Exception as exc:  # an unexpected type must cost the seeds, not the task
            result.issues.append(f"{task.id}: seeds: offline generator failed: {exc}")
            return result
        for inp in proposed:
            if inp not in own:
                result.add(tuple(inp), "seed:offline")
        return result

    def decompose(self, task: Task) -> Decomposition:
        return offline_decomposition(task)

    def specifications(self, task: Task, decomposition: Decomposition | None = None) -> SpecResult:
        specs = flawed_specs(task)
        issues = [] if specs else [f"{task.id}: spec: the GT postcondition yields no weakening"]
        return SpecResult(specs=specs, issues=issues)

    def adversaries(self, task: Task, spec: Spec, n: int | None = None) -> AdversaryResult:
        """Offline adversaries do not depend on the spec: the same set for every spec,
        tagged with it; callers deduplicate by id. ``n`` is ignored (not an LLM quota)."""
        return offline_adversaries(task, spec.id)
