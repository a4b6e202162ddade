"""Built-in flawed candidates, to measure a suite's discriminative power.

A strong suite rejects (scores not PASS) every flawed candidate and accepts the
ground truth. We derive flawed candidates from the ground truth itself:

* code mutants of the reference implementation — Python: AST-level (arithmetic
  operator swaps, comparison flips ``<``↔``<=``, integer constants and slice
  bounds ±1, negated conditions, ``and``↔``or``, ``all``↔``any``/``min``↔``max``,
  a dropped statement in a branch, perturbed return values); Lean:
  textual on the code body (``<``↔``≤``, ``+``↔``-``, ``0``↔``1``, ``&&``↔``||``,
  ``true``↔``false``, an ``if`` condition forced to ``true``/``false``, which
  drops a branch). Comments and literals are never touched.
* specification mutants of the GT pre/postcondition — dropped top-level
  conjuncts (and, in Python, dropped guard statements), weakened comparisons
  (``<``→``<=``, Python ``all``→``any``), flipped bounds (``<``↔``>``), and ``True``.

Generation is deterministic: sites are enumerated in source order and, above
``max_per_kind`` mutants, a subset is drawn with ``random.Random`` seeded from
the seed and the task id. Mutants identical to the ground truth (after
normalisation) or to each other are dropped; syntactically broken Python
mutants are dropped here and the harness drops any mutant the backend refuses
to compile, so a broken mutant is never counted as "detected".

This module is the language-neutral driver; each language plug-in makes its own
mutants (``veriscale.backends.<language>.mutants``, reached through ``plugin_for``).

Caveat: a mutant can be *equivalent* (behave like the ground truth on every
input). Such a mutant is reported as "not detected", so the detection rate is a
lower bound on a suite's true power.
"""

from __future__ import annotations

from dataclasses import dataclass

from veriscale.backends.sampling import DEFAULT_MAX_PER_KIND
from veriscale.benchmark.model import Implementation, Spec, Task
from veriscale.evaluation.solutions import Submission

KINDS = ("code", "precond", "postcond")


@dataclass(frozen=True)
class FlawedCandidate:
    """One flawed candidate: which part of the GT it alters, and how."""

    task_id: str
    kind: str  # "code" | "precond" | "postcond"
    operator: str
    index: int
    candidate: Submission

    @property
    def id(self) -> str:
        return f"{self.task_id}:{self.kind}:{self.index}:{self.operator}"

    @property
    def metric(self) -> str:
        """The metric that must not be PASS for the mutant to count as detected."""
        return {"code": "code", "precond": "precond_sound_complete",
                "postcond": "postcond_sound_complete"}[self.kind]


# --------------------------------------------------------------------------- GT candidates


def gt_candidate(task: Task, sample: int = 0) -> Submission:
    """The ground truth as a candidate (code and both spec halves): the control."""
    from veriscale.backends.language import plugin_for

    code, (pre, post, pre_aux, post_aux) = plugin_for(task).ground_truth(task)
    impl = Implementation(code, id=f"{task.id}:gt", origin="ground_truth")
    spec = Spec(pre, post, pre_aux, post_aux, id=f"{task.id}:gt", origin="ground_truth")
    return Submission(task.id, sample, impl, spec)


# --------------------------------------------------------------------------- all mutants


def task_mutants(task: Task, max_per_kind: int = DEFAULT_MAX_PER_KIND,
                 seed: int = 0) -> list[FlawedCandidate]:
    """Every built-in flawed candidate of one task (code, precondition, postcondition)."""
    out: list[FlawedCandidate] = []
    gt = gt_candidate(task)
    assert gt.spec is not None
    from veriscale.backends.language import plugin_for

    plugin = plugin_for(task)
    code = plugin.code_mutants(task, max_per_kind, seed)
    pre = plugin.spec_mutants(task, "precond", max_per_kind, seed)
    post = plugin.spec_mutants(task, "postcond", max_per_kind, seed)
    for i, (op, text) in enumerate(code):
        impl = Implementation(text, id=f"{task.id}:code:{i}", strategy=op, origin="mutant")
        out.append(FlawedCandidate(task.id, "code", op, i, Submission(task.id, i, impl=impl)))
    for i, (op, text) in enumerate(pre):
        spec = Spec(precond=text, postcond=None, precond_aux=gt.spec.precond_aux,
                    id=f"{task.id}:precond:{i}", origin="mutant")
        out.append(FlawedCandidate(task.id, "precond", op, i, Submission(task.id, i, spec=spec)))
    for i, (op, text) in enumerate(post):
        spec = Spec(precond=None, postcond=text, postcond_aux=gt.spec.postcond_aux,
                    id=f"{task.id}:postcond:{i}", origin="mutant")
        out.append(FlawedCandidate(task.id, "postcond", op, i, Submission(task.id, i, spec=spec)))
    return out


def solution_lines(mutants: list[FlawedCandidate]) -> list[dict[str, object]]:
    """The flawed candidates as solutions-file lines (one sample each, numbered per task
    in order): a weak model to score beside real ones. A code mutant is a complete
    definition (``definition``); a spec mutant keeps the ground truth's aux text."""
    lines: list[dict[str, object]] = []
    samples: dict[str, int] = {}
    for m in mutants:
        sample = samples.get(m.task_id, 0)
        samples[m.task_id] = sample + 1
        line: dict[str, object] = {"task_id": m.task_id, "sample": sample, "mutant": m.id}
        impl, spec = m.candidate.impl, m.candidate.spec
        if impl is not None:
            line["definition"] = impl.code
        if spec is not None:
            if spec.precond is not None:
                line.update(precond=spec.precond, precond_aux=spec.precond_aux)
            if spec.postcond is not None:
                line.update(postcond=spec.postcond, postcond_aux=spec.postcond_aux)
        lines.append(line)
    return lines
