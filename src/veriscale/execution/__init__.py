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

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

P = TypeVar("P")
R = TypeVar("R")

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Resources:
    """What one unit needs on a node, so a scheduler does not overcommit it."""

    cpus: float = 1.0
    memory_mb: int | None = None


@dataclass(frozen=True)
class UnitFailure:
    """A unit that produced no result; ``error`` starts with ``infrastructure:``."""

    error: str


ONE_CPU = Resources()


def infrastructure(detail: str) -> UnitFailure:
    return UnitFailure(detail if detail.startswith("infrastructure:")
                       else f"infrastructure: {detail}")


@runtime_checkable
class Executor(Protocol):
    name: str
    remote: bool  # payloads leave this process (so functions must not rely on driver state)

    def map(self, fn: Callable[[P], R], payloads: Sequence[P], *,
            resources: Resources = ..., parallelism: int | None = None
            ) -> list[R | UnitFailure]: ...

    def width(self, local: int, units: int) -> int:
        """How many units a backend should keep in flight at once."""
        ...

    def describe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class UnitCounts:
    """Units run and units failed, for the manifest (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.units = 0
        self.failures = 0

    def add(self, results: Sequence[Any]) -> None:
        with self._lock:
            self.units += len(results)
            self.failures += sum(isinstance(r, UnitFailure) for r in results)

    def to_dict(self) -> dict[str, int]:
        return {"units": self.units, "failed_units": self.failures}


class LocalExecutor:
    """Units run in this process: inline for one, else on up to ``parallelism`` threads."""

    name = "local"
    remote = False

    def __init__(self) -> None:
        self.counts = UnitCounts()

    def map(self, fn: Callable[[P], R], payloads: Sequence[P], *,
            resources: Resources = ONE_CPU, parallelism: int | None = None
            ) -> list[R | UnitFailure]:
        def one(payload: P) -> R | UnitFailure:
            try:
                return fn(payload)
            except Exception as exc:  # one broken unit never stops the others
                return infrastructure(f"{type(exc).__name__}: {exc}")

        width = max(1, min(parallelism or os.cpu_count() or 1, len(payloads)))
        if width == 1:
            out = [one(p) for p in payloads]
        else:
            with ThreadPoolExecutor(max_workers=width, thread_name_prefix="veriscale-unit") as pool:
                out = list(pool.map(one, payloads))
        self.counts.add(out)
        return out

    def width(self, local: int, units: int) -> int:
        return max(1, min(local, units))

    def describe(self) -> dict[str, Any]:
        return {"executor": "local", **self.counts.to_dict()}

    def close(self) -> None:
        pass


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
