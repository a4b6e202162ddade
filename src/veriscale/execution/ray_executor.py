"""The Ray executor: each unit is one Ray task with declared resources.

Ray does the distributed part (scheduling by CPUs and memory, retrying a task
whose worker died); this module only submits units and turns what Ray raises
after its retries into an ``infrastructure:`` :class:`UnitFailure`. Results are
gathered in payload order, so the caller sees exactly what the local executor
would have returned.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from veriscale.execution.base import ONE_CPU, Resources, UnitCounts, UnitFailure, infrastructure
from veriscale.execution.units import RetryableUnitError, UnitError, mark_worker, node_name

P = TypeVar("P")
R = TypeVar("R")

MAX_IN_FLIGHT = 256  # driver threads a backend may block on Ray results at once

INSTALL_HINT = "the Ray executor needs Ray: pip install 'veriscale[ray]'"


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


def veriscale_unit(fn: Callable[[Any], Any], payload: Any, driver_version: str) -> Any:
    """What a Ray worker runs: a version check, then the unit's module-level function."""
    from veriscale import __version__

    mark_worker()
    if driver_version != __version__:
        raise UnitError(f"node {node_name()}: veriscale {__version__} is installed here but "
                        f"the driver runs {driver_version}; install the same version on "
                        "every node")
    return fn(payload)


def _describe(exc: BaseException, attempts: int) -> str:
    import ray.exceptions as rex

    if isinstance(exc, rex.RayTaskError):
        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
        text = str(cause).strip().splitlines()
        return f"{type(cause).__name__}: {text[-1] if text else ''}"
    if isinstance(exc, rex.WorkerCrashedError | rex.NodeDiedError | rex.LocalRayletDiedError):
        return f"Ray worker lost {attempts} time(s): {type(exc).__name__}"
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first[:300]}"


class RayExecutor:
    """Units as Ray tasks on the cluster at ``address`` (``RAY_ADDRESS``, else a local Ray).

    Connects lazily (the first ``map``), so resumed stages that need no oracle
    never start Ray. A Ray this process did not start (``ray.init`` by the
    caller) is used as it is and left running on ``close``.
    """

    name = "ray"
    remote = True

    def __init__(self, address: str | None = None, max_retries: int = 3,
                 memory_mb: int | None = None) -> None:
        try:
            import ray  # noqa: F401
        except ImportError as exc:
            raise RayUnavailable(INSTALL_HINT) from exc
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.max_retries = max(0, int(max_retries))
        self.memory_mb = memory_mb
        self.counts = UnitCounts()
        self._owns = False
        self._lock = threading.Lock()
        self._remote: Any = None
        self._nodes: list[dict[str, float]] | None = None
        self._stop = threading.Event()

    def _ensure(self) -> Any:
        import ray

        with self._lock:
            if not ray.is_initialized():
                kwargs: dict[str, Any] = {"log_to_driver": False}
                if self.address is None:
                    kwargs["include_dashboard"] = False
                try:
                    self._init_in_keeper(address=self.address, **kwargs)
                except Exception as exc:
                    where = self.address or "a new local instance"
                    raise RayUnavailable(f"cannot start or reach Ray at {where}: {exc}") from exc
                self._owns = True
            if self._remote is None:
                self._remote = ray.remote(veriscale_unit)
            if self._nodes is None:
                self._nodes = [dict(n.get("Resources", {})) for n in ray.nodes() if n.get("Alive")]
            return self._remote

    def _init_in_keeper(self, **kwargs: Any) -> None:
        """``ray.init`` on a thread that lives until ``close``.

        Ray starts its daemons (GCS, raylet) with a parent-death signal, which
        Linux sends when the *thread* that started them exits: started from a
        pool thread, the local cluster would die with that thread.
        """
        import ray

        started = threading.Event()
        failure: list[BaseException] = []

        def keeper() -> None:
            try:
                ray.init(**kwargs)
            except BaseException as exc:
                failure.append(exc)
            started.set()
            self._stop.wait()

        self._stop.clear()
        threading.Thread(target=keeper, name="veriscale-ray", daemon=True).start()
        started.wait()
        if failure:
            raise failure[0]

    def _infeasible(self, cpus: float, memory_mb: int | None) -> str | None:
        """Why no node could ever run such a unit (Ray would wait for one forever)."""
        nodes = self._nodes or []
        need_mem = (memory_mb or 0) * 1024 * 1024
        if any(n.get("CPU", 0) >= cpus and n.get("memory", 0) >= need_mem for n in nodes):
            return None
        best = max(((n.get("CPU", 0), n.get("memory", 0) / 2**20) for n in nodes), default=(0, 0))
        return (f"no node of the Ray cluster offers {cpus:g} CPU and {memory_mb or 0} MB of "
                f"memory for one unit (largest node: {best[0]:g} CPU, {best[1]:.0f} MB)")

    def map(self, fn: Callable[[P], R], payloads: Sequence[P], *,
            resources: Resources = ONE_CPU, parallelism: int | None = None
            ) -> list[R | UnitFailure]:
        if not payloads:
            return []
        import ray
        import ray.exceptions as rex

        from veriscale import __version__

        remote = self._ensure()
        memory_mb = self.memory_mb or resources.memory_mb
        why = self._infeasible(resources.cpus, memory_mb)
        if why:
            failed: list[R | UnitFailure] = [infrastructure(why) for _ in payloads]
            self.counts.add(failed)
            return failed
        options: dict[str, Any] = {
            "num_cpus": resources.cpus,
            "max_retries": self.max_retries,
            "retry_exceptions": [RetryableUnitError],
        }
        if memory_mb:
            options["memory"] = int(memory_mb) * 1024 * 1024
        task = remote.options(**options)
        refs = [task.remote(fn, p, __version__) for p in payloads]
        out: list[R | UnitFailure] = []
        for ref in refs:
            try:
                out.append(ray.get(ref))
            except rex.RayError as exc:
                out.append(infrastructure(
                    f"ray: {getattr(fn, '__name__', 'unit')} failed after "
                    f"{self.max_retries + 1} attempt(s): {_describe(exc, self.max_retries + 1)}"))
        self.counts.add(out)
        return out

    def width(self, local: int, units: int) -> int:
        return max(1, min(units, MAX_IN_FLIGHT))

    def describe(self) -> dict[str, Any]:
        return {"executor": "ray", "address": self.address or "local",
                "max_retries": self.max_retries, **self.counts.to_dict()}

    def close(self) -> None:
        if self._owns:
            import ray

            ray.shutdown()
            self._stop.set()
            self._owns = False
            self._remote = None
            self._nodes = None
