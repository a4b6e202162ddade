"""The units of remote work, as module-level functions over picklable payloads.

* :func:`run_prover_file` — one prover file: any picklable runner with
  ``run_text(name, text)`` (a runner that keeps its own scratch folders, as
  ``coqc`` wants) or ``run_file(path)`` + ``work_dir()`` (the Lean runners),
  and optionally ``on_worker()``.

(A language's own units, such as the Python sandbox's batches, live in its plug-in.)
They hold no driver state: everything a unit needs travels in its payload, and
on a remote worker the runner is first made ready *there* (``on_worker()``:
find or install the prover on that node), so nothing is assumed from the
driver's machine. A node that lacks a runner raises :class:`RetryableUnitError`
naming the node (Ray may place the retry elsewhere); when retries run out the
executor reports it as an ``infrastructure:`` failure of that unit's checks.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriscale.execution.base import Resources

_ON_WORKER = False


class UnitError(RuntimeError):
    """A unit cannot run on this node (not retried)."""


class RetryableUnitError(UnitError):
    """A unit cannot run on this node now (a runner missing, a setup failure): retried."""


def mark_worker() -> None:
    """Called by a remote executor in its worker process before the first unit."""
    global _ON_WORKER
    _ON_WORKER = True


def on_worker() -> bool:
    return _ON_WORKER


def node_name() -> str:
    """``host (ip)`` of the node this process runs on, for error messages."""
    host = socket.gethostname()
    try:
        import ray

        if ray.is_initialized():
            return f"{host} ({ray.util.get_node_ip_address()})"
    except Exception:  # Ray absent or not connected: the host name alone
        pass
    return host


WORKER_MB = 256
"""Memory a Ray worker process takes besides the child it runs (declared on top)."""


def process_resources(memory_mb: int) -> Resources:
    """One CPU; a child's address-space cap plus the Ray worker's own footprint."""
    return Resources(cpus=1.0, memory_mb=int(memory_mb) + WORKER_MB)


# ---------------------------------------------------------------- prover files


@dataclass(frozen=True)
class ProverFile:
    """One prover file: its text, its name, and the (picklable) runner that checks it."""

    runner: Any
    name: str
    text: str
    keep: bool = False  # leave the file in the runner's work directory (local runs only)
    toolchain: str = ""
    """The driver's ``runner.identity()`` (what the oracle cache files answers under);
    a node whose runner says otherwise refuses the unit."""
    timeout: float | None = None  # this file's limit (None: the runner's own)
    on_line: Callable[[int], None] | None = field(default=None, compare=False)
    """Told how far the prover's messages got while it runs (live progress); local
    runs only: a remote unit reports when it is done."""


def _ready_runner(runner: Any, toolchain: str = "") -> Any:
    """On a remote worker: the runner found or installed on this node, or why not.

    A node with another version of the prover would answer under the driver's name
    in the oracle cache, so its runner's identity must be ``toolchain``."""
    prepare = getattr(runner, "on_worker", None)
    name = getattr(runner, "name", type(runner).__name__)
    try:
        ready = runner if prepare is None else prepare()
        here = ready.identity() if toolchain and hasattr(ready, "identity") else toolchain
    except Exception as exc:
        raise RetryableUnitError(
            f"node {node_name()}: the {name} runner is not available here: {exc}") from exc
    if here != toolchain:
        raise UnitError(f"node {node_name()}: the {name} runner here is {here!r} but the "
                        f"driver's is {toolchain!r}; install the same on every node")
    return ready


def run_prover_file(job: ProverFile) -> Any:
    """Write the file, run the prover on it, return the runner's result."""
    if callable(getattr(job.runner, "run_text", None)):
        runner = _ready_runner(job.runner, job.toolchain) if on_worker() else job.runner
        return runner.run_text(job.name, job.text)
    if not on_worker():
        path = Path(job.runner.work_dir()) / job.name
        path.write_text(job.text, encoding="utf-8")
        try:
            return job.runner.run_file(path, timeout=job.timeout, on_line=job.on_line)
        finally:
            if not job.keep:
                with contextlib.suppress(OSError):
                    path.unlink()
    runner = _ready_runner(job.runner, job.toolchain)
    with tempfile.TemporaryDirectory(prefix="veriscale-unit-") as tmp:
        path = Path(tmp) / job.name
        path.write_text(job.text, encoding="utf-8")
        return runner.run_file(path, timeout=job.timeout)
