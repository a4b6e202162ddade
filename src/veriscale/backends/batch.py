"""Many tasks per backend call, where the backend can do it.

The protocol methods take one task. A backend whose unit of cost is a process
start (WASM Lean: about two minutes) can do far better when many tasks share
one call; such a backend offers ``<op>_many(jobs)`` taking a list of
per-task argument tuples. These helpers use it when present and fall back to
one protocol call per job, so stages never care which backend they hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from veriscale.backends.base import (
    Backend,
    Classification,
    Implementation,
    Outcome,
    Spec,
    Verdict,
)
from veriscale.benchmark.model import Input, Task


def many(backend: Backend, op: str, jobs: Sequence[tuple[Any, ...]]) -> list[list[Any]]:
    """One answer list per job: ``<op>_many`` when the backend has it, else one call per job."""
    batched = getattr(backend, f"{op}_many", None)
    if callable(batched) and len(jobs) > 1:
        return [list(r) for r in batched(list(jobs))]
    method = getattr(backend, op)
    return [list(method(*job)) for job in jobs]


def check_inputs_many(
    backend: Backend, jobs: Sequence[tuple[Task, Sequence[Input]]]
) -> list[list[str | None]]:
    return many(backend, "check_inputs", jobs)


def classify_many(
    backend: Backend, jobs: Sequence[tuple[Task, Sequence[Input]]]
) -> list[list[Classification]]:
    return many(backend, "classify", jobs)


def run_many(
    backend: Backend, jobs: Sequence[tuple[Task, Implementation | None, Sequence[Input]]]
) -> list[list[Outcome]]:
    return many(backend, "run", jobs)


def postcondition_holds_many(
    backend: Backend, jobs: Sequence[tuple[Task, Spec | None, Sequence[tuple[Input, Any]]]]
) -> list[list[Verdict]]:
    return many(backend, "postcondition_holds", jobs)


def precondition_holds_many(
    backend: Backend, jobs: Sequence[tuple[Task, Spec | None, Sequence[Input]]]
) -> list[list[Verdict]]:
    return many(backend, "precondition_holds", jobs)
