"""Run an LLM-bound stage across tasks concurrently, whatever the backend.

LLM answers take seconds each; asked one task at a time, a 189-task run spends
hours waiting. :func:`llm_task_map` runs the per-task stage function for several
tasks at once (``concurrency`` threads; the client's semaphore still bounds the
requests in flight for the whole run). A backend that is not known to be
thread-safe is wrapped in :class:`SerialBackend`, so its calls still happen one
at a time: each task's results depend only on its own calls, never on timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from veriscale.llm.config import load_llm_config

T = TypeVar("T")
R = TypeVar("R")


class SerialBackend:
    """A backend proxy that lets one thread in at a time (every method, one lock)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return value(*args, **kwargs)

        return call


def llm_workers(llm: Any) -> int:
    """How many tasks an LLM-bound stage may run at once (1: offline or serial)."""
    try:
        config = load_llm_config(llm)
    except Exception:
        return 1
    return 1 if config.offline else config.concurrency


def llm_task_map(
    fn: Callable[[T, Any], R], tasks: Sequence[T], backend: Any, workers: int
) -> list[R | BaseException]:
    """``fn(task, backend)`` for every task, ``workers`` at a time, results in task order;
    an exception is returned in its task's place (one bad task never stops the others)."""
    shared = SerialBackend(backend) if backend is not None else None

    def one(task: T) -> R | BaseException:
        try:
            return fn(task, shared)
        except Exception as exc:
            return exc

    if workers <= 1 or len(tasks) <= 1:
        return [one(t) for t in tasks]
    with ThreadPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
        return list(pool.map(one, tasks))
