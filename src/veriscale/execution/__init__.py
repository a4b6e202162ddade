"""Where oracle work runs: in this process's pools, or on a Ray cluster.

Backends already batch their work into independent units (one prover file,
one sandbox batch); an :class:`Executor` runs such units. ``map`` takes a
module-level function and picklable payloads, returns one result per payload
in payload order, and never raises for a payload: a unit that cannot be run
(its worker lost too often, its node lacking a runner) comes back as a
:class:`UnitFailure` whose ``error`` is an ``infrastructure: ...`` outcome, so
the backend answers UNKNOWN for that unit's checks and the run goes on.

Two implementations: :class:`LocalExecutor` (the default: today's behaviour,
threads in this process, with the backends' own warm worker pools) and
:class:`veriscale.execution.ray_executor.RayExecutor` (``pip install
'veriscale[ray]'``). The run directory, the oracle cache and LLM calls stay on
the driver either way; only the units travel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from veriscale.execution.base import (
    EXECUTORS,
    ONE_CPU,
    Executor,
    LocalExecutor,
    Resources,
    UnitCounts,
    UnitFailure,
    infrastructure,
)

P = TypeVar("P")
R = TypeVar("R")

__all__ = ["EXECUTORS", "ONE_CPU", "Executor", "LocalExecutor", "Resources", "UnitCounts",
           "UnitFailure", "concurrent_map", "infrastructure", "is_remote", "make_executor"]


def make_executor(kind: str = "local", *, address: str | None = None,
                  max_retries: int = 3, memory_mb: int | None = None) -> Executor:
    """An executor by name; ``ray`` needs the ``[ray]`` extra (a clear error otherwise)."""
    if kind == "local":
        return LocalExecutor()
    if kind == "ray":
        from veriscale.execution.ray_executor import RayExecutor

        return RayExecutor(address=address, max_retries=max_retries, memory_mb=memory_mb)
    raise ValueError(f"unknown executor {kind!r}; choose {' or '.join(EXECUTORS)}")


def is_remote(executor: Executor | None) -> bool:
    return executor is not None and executor.remote


def concurrent_map(backend: Any, fn: Callable[[P, Any], R], items: Sequence[P], width: int
                   ) -> list[R | BaseException]:
    """``[fn(item, backend) for item in items]`` with up to ``width`` items at once.

    For a backend whose units run remotely but which cannot batch across tasks:
    the driver only waits, so several tasks keep the cluster busy. Each result is
    the function's value or the exception it raised; order is the items' order.
    """
    def one(item: P) -> R | BaseException:
        try:
            return fn(item, backend)
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(max_workers=max(1, min(width, len(items))),
                            thread_name_prefix="veriscale-task") as pool:
        return list(pool.map(one, items))
