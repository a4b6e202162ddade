"""The one way stages reach a backend: one result per item, failures as values.

Every stage, the evaluation harness, ``verify`` and the coalescer send their
oracle calls here as :data:`~veriscale.backends.base.Request` lists. A backend
with the batch capability (:class:`~veriscale.backends.base.BatchBackend`)
gets them all in one ``evaluate_many``; any other backend gets one protocol
call per request, several at once where it says it can (the ``side_by_side``
hint). Whatever the backend does (raise, return too few or too many answers),
each request comes back with exactly one result per item, and
a backend failure is an ``infrastructure:`` failure value for those items
(UNKNOWN, never the candidate's FAIL), so no caller needs its own ``except``
or length check.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from veriscale.backends.base import (
    OPERATIONS,
    Backend,
    BatchBackend,
    Classification,
    Label,
    Outcome,
    Request,
    Verdict,
    Verdicts,
    hint,
)


def item_count(op: str, args: tuple[Any, ...]) -> int:
    """How many results a request must yield (``compile``: one)."""
    if op == "compile":
        return 1
    return len(args[-1])


def failure_values(op: str, n: int, why: str) -> list[Any]:
    """``n`` results that say "the checker could not answer" in ``op``'s result type."""
    message = why if why.startswith("infrastructure:") else f"infrastructure: {why}"
    if op == "check_inputs" or op == "compile":
        return [message] * n
    if op == "classify":
        return [Classification(Label.UNKNOWN, "infrastructure", message)] * n
    if op in ("run", "test_outputs"):
        return [Outcome(False, None, message)] * n
    return Verdicts([Verdict.UNKNOWN] * n, [message] * n)


def _checked(op: str, args: tuple[Any, ...], answer: Any) -> list[Any]:
    n = item_count(op, args)
    try:
        values = list(answer)
        if isinstance(answer, Verdicts):  # keep why each UNKNOWN is unknown
            values = Verdicts(values, answer.reasons)
    except TypeError:
        return failure_values(op, n, f"backend returned {type(answer).__name__} for {op}")
    if len(values) != n:
        return failure_values(op, n, f"backend returned {len(values)} results for {n} items "
                                     f"in {op}")
    return values


def _describe(exc: BaseException) -> str:
    return f"backend raised {type(exc).__name__}: {exc}"


def _single(backend: Backend, op: str, args: tuple[Any, ...]) -> list[Any]:
    try:
        if isinstance(backend, BatchBackend):
            answers = backend.evaluate_many([(op, args)])
            return _checked(op, args, answers[0] if len(answers) == 1 else answers)
        answer = getattr(backend, op)(*args)
        return _checked(op, args, [answer] if op == "compile" else answer)
    except Exception as exc:
        return failure_values(op, item_count(op, args), _describe(exc))


def answer(backend: Backend, requests: Sequence[Request]) -> list[list[Any]]:
    """One result list per request, each exactly as long as its items.

    A batch that raises or answers the wrong number of requests is retried one
    request at a time, so one poisoned request fails only its own items.
    """
    requests = list(requests)
    for op, _ in requests:
        if op not in OPERATIONS:
            raise ValueError(f"unknown operation {op!r}; choose {', '.join(OPERATIONS)}")
    asked = [i for i, (op, args) in enumerate(requests) if item_count(op, args)]
    if len(asked) < len(requests):  # a request without items needs no backend
        out: list[list[Any]] = [[] for _ in requests]
        for i, got in zip(asked, answer(backend, [requests[i] for i in asked]), strict=True):
            out[i] = got
        return out
    if not requests:
        return []
    if isinstance(backend, BatchBackend) and len(requests) > 1:
        try:
            answers = list(backend.evaluate_many(requests))
        except Exception:
            answers = None  # retried one by one below, so the culprit is isolated
        if answers is not None and len(answers) == len(requests):
            return [_checked(op, args, a) for (op, args), a in zip(requests, answers, strict=True)]
    width = min(len(requests), hint(backend, "side_by_side"))
    if width > 1:
        # one candidate's few tests fill one sandbox worker; its neighbours fill the rest
        with ThreadPoolExecutor(max_workers=width, thread_name_prefix="veriscale-requests") as p:
            return list(p.map(lambda r: _single(backend, *r), requests))
    return [_single(backend, op, args) for op, args in requests]


def many(backend: Backend, op: str, jobs: Sequence[tuple[Any, ...]]) -> list[list[Any]]:
    """One result list per job of one operation (``compile``: see :func:`compile_many`)."""
    return answer(backend, [(op, tuple(job)) for job in jobs])


def one(backend: Backend, op: str, *args: Any) -> list[Any]:
    """The results of one protocol call."""
    return answer(backend, [(op, args)])[0]


def compile_many(backend: Backend, jobs: Sequence[tuple[Any, ...]]) -> list[str | None]:
    """``None`` per accepted candidate, else the error (``infrastructure:`` when the
    backend itself failed: the candidate is then unjudged, not rejected)."""
    return [r[0] for r in many(backend, "compile", jobs)]
