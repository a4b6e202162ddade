"""Cross-task batching without changing stage code.

A backend whose unit of cost is a process start (WASM Lean: the import of
``Init``, 12 s alone, more on a busy machine) wants every check of every task in
as few files as possible, but stages are written one task at a time.
:func:`coalesced_map` runs the per-task function for all tasks in threads, each
holding a proxy backend; whenever every live thread is waiting on the oracle,
the proxies' pending requests go to the real backend as one ``evaluate_many``
call, and each thread gets its answers.
The per-task code stays a plain sequence of backend calls, and its results do
not depend on thread timing: each request is answered on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from veriscale.backends import dispatch
from veriscale.backends.base import HINTS, BackendStats, BatchBackend, hint

T = TypeVar("T")
R = TypeVar("R")

def can_coalesce(backend: Any) -> bool:
    """Only a backend with the batch capability gains from one call for many tasks."""
    return isinstance(backend, BatchBackend)


@dataclass
class _Pending:
    requests: list[tuple[str, tuple[Any, ...]]]
    done: threading.Event = field(default_factory=threading.Event)
    answers: list[list[Any]] | None = None
    error: BaseException | None = None


class _Hub:
    """Counts live and waiting workers; flushes when all live workers wait."""

    def __init__(self, inner: Any, workers: int) -> None:
        self.inner = inner
        self.cond = threading.Condition()
        self.live = workers
        self.queue: list[_Pending] = []
        self.flushes = 0

    def submit(self, requests: list[tuple[str, tuple[Any, ...]]]) -> list[list[Any]]:
        pending = _Pending(requests)
        with self.cond:
            self.queue.append(pending)
            self.cond.notify_all()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error
        assert pending.answers is not None
        return pending.answers

    def retire(self) -> None:
        with self.cond:
            self.live -= 1
            self.cond.notify_all()

    def serve(self) -> None:
        """Coordinator loop: runs in the calling thread until every worker retired."""
        while True:
            with self.cond:
                while self.live > 0 and len(self.queue) < self.live:
                    self.cond.wait()
                if self.live == 0 and not self.queue:
                    return
                batch, self.queue = self.queue, []
            self._flush(batch)

    def _flush(self, batch: list[_Pending]) -> None:
        requests = [r for p in batch for r in p.requests]
        self.flushes += 1
        try:
            # one answer per request, failures as values (a poisoned request fails alone)
            answers = dispatch.answer(self.inner, requests)
        except BaseException as exc:  # e.g. an unknown operation: the callers' bug, raised
            for p in batch:
                p.error = exc
                p.done.set()
            return
        pos = 0
        for p in batch:
            p.answers = answers[pos : pos + len(p.requests)]
            pos += len(p.requests)
            p.done.set()


class CoalescingProxy:
    """What each per-task thread sees: the backend protocol, answered through the hub."""

    def __init__(self, hub: _Hub, inner: Any) -> None:
        self._hub = hub
        self._inner = inner
        self.name = inner.name

    @property
    def stats(self) -> BackendStats:
        return self._inner.stats

    def __getattr__(self, name: str) -> Any:
        """The inner backend's hints (:data:`~veriscale.backends.base.HINTS`)."""
        if name in HINTS:
            return hint(self._inner, name)
        raise AttributeError(name)

    def evaluate_many(self, requests: Sequence[tuple[str, tuple[Any, ...]]]) -> list[list[Any]]:
        return self._hub.submit(list(requests))

    def _one(self, op: str, *args: Any) -> list[Any]:
        return self._hub.submit([(op, args)])[0]

    def check_inputs(self, task, inputs):
        return self._one("check_inputs", task, inputs)

    def classify(self, task, inputs):
        return self._one("classify", task, inputs)

    def run(self, task, impl, inputs):
        return self._one("run", task, impl, inputs)

    def precondition_holds(self, task, spec, inputs):
        return self._one("precondition_holds", task, spec, inputs)

    def postcondition_holds(self, task, spec, pairs):
        return self._one("postcondition_holds", task, spec, pairs)

    def compile(self, task, impl=None, spec=None):
        return self._one("compile", task, impl, spec)[0]

    def close(self) -> None:  # the real backend is closed by its owner
        pass


def coalesced_map(
    backend: Any, fn: Callable[[T, Any], R], items: Sequence[T]
) -> list[R | BaseException]:
    """``[fn(item, backend) for item in items]`` with the oracle calls of all items batched.

    Each result is the function's return value or the exception it raised.
    Without ``evaluate_many`` on the backend, items simply run one after another.
    """
    if not can_coalesce(backend) or len(items) <= 1:
        out: list[R | BaseException] = []
        for item in items:
            try:
                out.append(fn(item, backend))
            except Exception as exc:
                out.append(exc)
        return out
    hub = _Hub(backend, len(items))
    results: list[Any] = [None] * len(items)

    def work(i: int, item: T) -> None:
        try:
            results[i] = fn(item, CoalescingProxy(hub, backend))
        except BaseException as exc:
            results[i] = exc
        finally:
            hub.retire()

    threads = [threading.Thread(target=work, args=(i, it), daemon=True)
               for i, it in enumerate(items)]
    for t in threads:
        t.start()
    hub.serve()
    for t in threads:
        t.join()
    return results
