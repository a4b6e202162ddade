"""The executor's vocabulary: units' resources, their failures, the :class:`Executor`
protocol, and :class:`LocalExecutor` (the package's ``__init__`` picks one)."""

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
