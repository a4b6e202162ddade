"""A suite's discriminative power: how many flawed candidates (mutants of the ground
truth, :mod:`veriscale.evaluation.mutants`) it rejects, scored by the same harness that
scores model outputs (:mod:`veriscale.evaluation.harness`), in rounds that stop early
once a mutant is definitely caught."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from veriscale.backends import dispatch
from veriscale.backends.base import Backend, FailureKind, settled
from veriscale.benchmark.model import Task
from veriscale.evaluation.harness import BatchTimes, SampleResult, evaluate_batch, task_groups
from veriscale.evaluation.scoring import (
    Bounded,
    Score,
    Tally,
    aggregate,
    code_property,
    spec_property,
)


@dataclass(frozen=True)
class MutantVerdict:
    """How one suite scored one flawed candidate on the metric that should reject it."""

    mutant_id: str
    task_id: str
    kind: str
    operator: str
    score: Bounded

    @property
    def detected(self) -> bool:
        """Not PASS under the lower bound (unknown counts as not passing)."""
        return self.score.lower is not Score.PASS

    @property
    def detected_definitely(self) -> bool:
        """FAIL even under the upper bound: the suite has evidence against it. A code
        UNKNOWN (a timeout, say) keeps both bounds UNKNOWN and is no such evidence."""
        return self.score.upper is Score.FAIL


@dataclass
class SuitePower:
    """One suite's discriminative power over the shared pool of flawed candidates."""

    suite: str
    verdicts: list[MutantVerdict] = field(default_factory=list)
    gt_problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    code_seconds: float = 0.0
    spec_seconds: float = 0.0
    cut_by_timeouts: int = 0  # mutants whose remaining tests stayed UNKNOWN after timeouts

    def rates(self) -> dict[str, dict[str, float | int]]:
        """Per kind (and ``all``): total, detected (lower), detected (upper), shares."""
        out: dict[str, dict[str, float | int]] = {}
        kinds = sorted({v.kind for v in self.verdicts}, key=("code", "precond", "postcond").index)
        for kind in [*kinds, "all"]:
            vs = [v for v in self.verdicts if kind in ("all", v.kind)]
            n = len(vs)
            d = sum(v.detected for v in vs)
            dd = sum(v.detected_definitely for v in vs)
            out[kind] = {"mutants": n, "detected": d, "detected_definitely": dd,
                         "rate": d / n if n else 0.0, "rate_definite": dd / n if n else 0.0}
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "rates": self.rates(),
            "gt_problems": list(self.gt_problems),
            "seconds": round(self.seconds, 3),
            "code_seconds": round(self.code_seconds, 3),
            "spec_seconds": round(self.spec_seconds, 3),
            "cut_by_timeouts": self.cut_by_timeouts,
            "undetected": [v.mutant_id for v in self.verdicts if not v.detected],
            "not_definitely_detected": [v.mutant_id for v in self.verdicts
                                        if not v.detected_definitely],
        }


@dataclass
class PowerReport:
    suites: list[SuitePower]
    generated: int = 0
    discarded: list[str] = field(default_factory=list)  # mutant id: reason
    seed: int = 0
    max_per_kind: int = 0
    backend: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "seed": self.seed,
            "max_per_kind": self.max_per_kind,
            "mutants_generated": self.generated,
            "mutants_discarded": self.discarded,
            "suites": [s.to_json() for s in self.suites],
            "caveat": "equivalent mutants (indistinguishable from the ground truth) count as "
                      "not detected, so detection rates are lower bounds on true power",
        }


def usable_mutants(backend: Backend, tasks: Sequence[Task], max_per_kind: int, seed: int,
                   ) -> tuple[list[Any], list[str]]:
    """The mutant pool of ``tasks`` minus those the backend refuses to compile.

    A mutant that does not build would be "detected" by any suite, so it says
    nothing about the suite: it is discarded with its reason. One batched
    compile call checks the whole pool; one whose check said nothing about it (a
    timeout under load, a checker that failed) is asked once more, and discarded
    as unjudged only when that fails too: the checker's failure is not the
    mutant's, and a pool that shrinks with the machine's load is not the same
    pool on every suite and every run.
    """
    from veriscale.evaluation.mutants import task_mutants

    pool: list[tuple[Task, Any]] = []
    discarded: list[str] = []
    for task in tasks:
        try:
            pool.extend((task, m) for m in task_mutants(task, max_per_kind, seed))
        except Exception as exc:  # one bad task never stops the run
            discarded.append(f"{task.id}: generation failed: {exc}")
    answers = dispatch.compile_many(backend, [(t, m.candidate.impl, m.candidate.spec)
                                              for t, m in pool])
    again = [i for i, err in enumerate(answers) if not settled(err, FailureKind.COMPILE)]
    for i, err in zip(again, dispatch.compile_many(backend, [
            (pool[i][0], pool[i][1].candidate.impl, pool[i][1].candidate.spec) for i in again]),
            strict=True):
        answers[i] = err if settled(err, FailureKind.COMPILE) else f"not judged (asked twice): {err}"
    keep = []
    for (_, m), err in zip(pool, answers, strict=True):
        if err is None:
            keep.append(m)
        else:
            discarded.append(f"{m.id}: {(str(err).splitlines() or [''])[0][:160]}")
    return keep, discarded


def _gt_problems(task: Task, gt: SampleResult) -> list[str]:
    out = []
    for metric in ("code", "precond_sound_complete", "postcond_sound_complete"):
        got = gt.metrics.get(metric)
        if got is None or got.lower is not Score.PASS:
            tallies = {k: v.to_json() for k, v in gt.tallies.items()}
            err = "; ".join(f"{k}: {v[:200]}" for k, v in gt.errors.items())
            out.append(f"{task.id}: ground truth scores {got.lower.value if got else 'nothing'}"
                       f" on {metric} (tests {tallies}{'; ' + err if err else ''})")
    return out


MUTANT_PROPERTIES = {
    "code": ("code",),
    "precond": ("precond_sound", "precond_complete"),
    "postcond": ("postcond_sound", "postcond_complete"),
}
EARLY_STOP_ROUNDS = (1, 4, 16, 64)
"""Tests per round when scoring mutants: a mutant leaves at its first definite FAIL,
so most mutants cost a test or a few; the last round takes every remaining test."""


def round_slices(n: int, sizes: Sequence[int] = EARLY_STOP_ROUNDS) -> list[tuple[int, int]]:
    """Consecutive ``(start, end)`` slices of ``n`` items: ``sizes``, then the rest."""
    out: list[tuple[int, int]] = []
    at = 0
    for size in sizes:
        if at >= n:
            break
        out.append((at, min(n, at + max(1, size))))
        at = out[-1][1]
    if at < n:
        out.append((at, n))
    return out


def _slice(task: Task, tests: tuple[int, int], rejects: tuple[int, int]) -> Task:
    return replace(task, tests=task.tests[tests[0]:tests[1]],
                   reject_inputs=task.reject_inputs[rejects[0]:rejects[1]])


DEFAULT_MUTANT_TIMEOUTS = 2
"""Timed-out tests after which a mutant's remaining tests are UNKNOWN instead of run.

A looping mutant would otherwise pay the per-test time limit on every test of
a large suite. A timeout is inconclusive (UNKNOWN, never the mutant's FAIL), so
the lower-bound verdict ("detected") is already settled by the first one; the
cut can only hide a later definite FAIL, so the definite share of a cut mutant
is a lower bound (the report counts cut mutants)."""


def score_mutants(
    backend: Backend,
    items: Sequence[tuple[Task, Any]],
    *,
    times: BatchTimes | None = None,
    early_stop: bool = True,
    rounds: Sequence[int] = EARLY_STOP_ROUNDS,
    max_timeouts: int = DEFAULT_MUTANT_TIMEOUTS,
    cut: list[int] | None = None,
) -> list[Bounded]:
    """Each mutant's score on the metric that must reject it, stopping at its first FAIL.

    One definite FAIL settles both bounds of the metric (FAIL is final under
    ``combine``), so the tests a mutant would still run cannot change its
    verdict; a mutant without a FAIL runs every test, so PASS and UNKNOWN are
    exactly what the whole suite gives. Tests run in rounds of growing size,
    each round one batched call for all mutants still undecided.

    With ``early_stop``, a mutant whose tests timed out ``max_timeouts`` times
    (0: never) stops too: its remaining tests count as UNKNOWN, which keeps its
    lower bound exact (:data:`DEFAULT_MUTANT_TIMEOUTS`). The indices of such
    mutants are appended to ``cut``.
    """
    sizes = rounds if early_stop else ()
    tallies: list[dict[str, Tally]] = [{} for _ in items]
    timeouts = [0] * len(items)
    schedules = [_schedule(len(t.tests), len(t.reject_inputs), sizes) for t, _ in items]
    live = list(range(len(items)))
    step = 0
    while live:
        batch: list[int] = [i for i in live if step < len(schedules[i])]
        if not batch:
            break
        sliced = [(_slice(items[i][0], *schedules[i][step]), items[i][1].candidate)
                  for i in batch]
        scored = evaluate_batch(backend, sliced, skip_compile=True, times=times)
        for i, r in zip(batch, scored, strict=True):
            timeouts[i] += sum(r.timeouts.values())
            for name in MUTANT_PROPERTIES[items[i][1].kind]:
                got = r.tallies.get(name)
                if got is not None:
                    tallies[i][name] = tallies[i].get(name, Tally()) + got
        live = []
        for i in batch:
            if any(t.failed for t in tallies[i].values()):
                continue
            if early_stop and max_timeouts > 0 and timeouts[i] >= max_timeouts \
                    and step + 1 < len(schedules[i]):
                _rest_unknown(items[i], tallies[i])
                if cut is not None:
                    cut.append(i)
                continue
            live.append(i)
        step += 1
    scores: list[Bounded] = []
    for (_, m), tally in zip(items, tallies, strict=True):
        metrics: dict[str, Bounded] = {}
        for name in MUTANT_PROPERTIES[m.kind]:
            t = tally.get(name, Tally())
            metrics[name] = code_property(t) if name == "code" else spec_property(t)
        scores.append(aggregate(metrics).get(m.metric, Bounded.exact(Score.UNKNOWN)))
    return scores


def _rest_unknown(item: tuple[Task, Any], tally: dict[str, Tally]) -> None:
    """Count the tests a cut mutant did not run as UNKNOWN (timeouts are code's only)."""
    task, m = item
    totals = {"code": len(task.tests), "precond_sound": len(task.tests),
              "precond_complete": len(task.reject_inputs), "postcond_complete": len(task.tests),
              "postcond_sound": sum(len(t.unexpected) for t in task.tests)}
    for name in MUTANT_PROPERTIES[m.kind]:
        have = tally.get(name, Tally())
        left = totals[name] - have.total
        if left > 0:
            tally[name] = have + Tally(unknown=left)


def _rounds_for(backend: Backend) -> Sequence[int]:
    """Fewer, larger rounds where each round costs process starts (Lean files)."""
    return (16,) if callable(getattr(backend, "evaluate_many", None)) else EARLY_STOP_ROUNDS


def _schedule(tests: int, rejects: int, sizes: Sequence[int]
              ) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Per round, the slice of tests and the slice of reject inputs (at least one round)."""
    a, b = round_slices(tests, sizes), round_slices(rejects, sizes)
    n = max(len(a), len(b), 1)
    a += [(tests, tests)] * (n - len(a))
    b += [(rejects, rejects)] * (n - len(b))
    return list(zip(a, b, strict=True))



def discriminative_power(
    backend: Backend,
    suites: Sequence[tuple[str, Sequence[Task]]],
    *,
    max_per_kind: int = 20,
    seed: int = 0,
    tasks_per_batch: int | None = None,
    progress: Callable[[str], None] | None = None,
    early_stop: bool = True,
    max_timeouts: int = DEFAULT_MUTANT_TIMEOUTS,
) -> PowerReport:
    """Score the same flawed candidates (from the first suite's GT) and the GT on each suite.

    Mutants are compile-checked once; on each suite they are scored without
    recompiling (stopping at each one's first definite FAIL, or after ``max_timeouts``
    timed-out tests, :func:`score_mutants`),
    the GT candidates (the control) with compiling and on every test.

    By default every task of a suite shares each round's backend calls: a
    round of a few tasks leaves a prover file or two, and the other cores idle.
    ``tasks_per_batch`` bounds a group where memory must be.
    """
    from veriscale.evaluation.mutants import gt_candidate

    if not suites:
        raise ValueError("no suites given")
    ids = [sorted(t.id for t in tasks) for _, tasks in suites]
    for (name, _), these in zip(suites[1:], ids[1:], strict=True):
        if these != ids[0]:
            a, b = set(ids[0]), set(these)
            raise ValueError(
                f"suite {name} has other task ids than {suites[0][0]}: "
                f"missing {sorted(a - b)[:5]}, extra {sorted(b - a)[:5]}")
    pool, discarded = usable_mutants(backend, list(suites[0][1]), max_per_kind, seed)
    report = PowerReport([], len(pool) + len(discarded), discarded, seed, max_per_kind,
                         getattr(backend, "name", "?"))
    by_task: dict[str, list[Any]] = {}
    for m in pool:
        by_task.setdefault(m.task_id, []).append(m)
    for name, tasks in suites:
        sp = SuitePower(name)
        times = BatchTimes()
        t0 = time.perf_counter()
        for group in task_groups(tasks, tasks_per_batch or len(tasks)):
            gts = evaluate_batch(backend, [(t, gt_candidate(t)) for t in group], times=times)
            for task, gt in zip(group, gts, strict=True):
                sp.gt_problems.extend(_gt_problems(task, gt))
            ms = [(t, m) for t in group for m in by_task.get(t.id, [])]
            cut: list[int] = []
            scores = score_mutants(backend, ms, times=times, early_stop=early_stop,
                                   rounds=_rounds_for(backend), max_timeouts=max_timeouts,
                                   cut=cut)
            sp.cut_by_timeouts += len(cut)
            for (_, m), score in zip(ms, scores, strict=True):
                sp.verdicts.append(MutantVerdict(m.id, m.task_id, m.kind, m.operator, score))
        sp.seconds = time.perf_counter() - t0
        sp.code_seconds, sp.spec_seconds = times.code_seconds, times.spec_seconds
        report.suites.append(sp)
        if progress is not None:
            progress(name)
    return report
