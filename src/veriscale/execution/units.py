"""The units of remote work, as module-level functions over picklable payloads.

* :func:`run_sandbox_batch` — one sandbox batch (Python backend): one module,
  one function, up to ``batch_size`` argument lists, one round trip.
* :func:`run_prover_file` — one prover file: any picklable runner with
  ``run_text(name, text)`` (a runner that keeps its own scratch folders, as
  ``coqc`` wants) or ``run_file(path)`` + ``work_dir()`` (the Lean runners),
  and optionally ``on_worker()``.

They hold no driver state: everything a unit needs travels in its payload, and
on a remote worker the runner is first made ready *there* (``on_worker()``:
find or install the prover on that node), so nothing is assumed from the
driver's machine. A node that lacks a runner raises :class:`RetryableUnitError`
naming the node (Ray may place the retry elsewhere); when retries run out the
executor reports it as an ``infrastructure:`` failure of that unit's checks.
"""

from __future__ import annotations

import atexit
import contextlib
import socket
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veriscale.execution.base import Executor, Resources, UnitFailure

if TYPE_CHECKING:
    from veriscale.backends.python.sandbox import CallResult, Sandbox, SandboxLimits

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


# ---------------------------------------------------------------- sandbox batches


@dataclass(frozen=True)
class SandboxBatch:
    """One round trip of the Python sandbox: call ``funcs`` of ``source`` on each item."""

    limits: SandboxLimits
    source: str
    funcs: tuple[str, ...]
    items: tuple[tuple[Any, ...], ...]
    restricted: bool
    seed: int = 0  # the run seed: `random` inside is seeded from it, as locally
    sandbox: str | None = None  # the driver's --sandbox mode, honoured on the node
    fresh: bool = False  # each item in a fresh child (Sandbox.call_many)


_sandboxes: dict[Any, Sandbox] = {}
_sandboxes_lock = threading.Lock()


def _close_sandboxes() -> None:
    with _sandboxes_lock:
        for sb in _sandboxes.values():
            with contextlib.suppress(Exception):
                sb.close()
        _sandboxes.clear()


def _sandbox_for(limits: SandboxLimits, seed: int = 0, sandbox: str | None = None) -> Sandbox:
    """This process's warm sandbox for ``limits`` (one worker: one unit holds one CPU)."""
    from veriscale.backends import isolation
    from veriscale.backends.python.sandbox import Sandbox

    with _sandboxes_lock:
        key = (limits, seed, sandbox)
        sb = _sandboxes.get(key)
        if sb is None:
            if not _sandboxes:
                atexit.register(_close_sandboxes)
            info = isolation.resolve(sandbox) if sandbox else None  # "os" raises here
            sb = _sandboxes[key] = Sandbox(workers=1, limits=limits, batch_size=1 << 30,
                                           isolation_info=info, seed=seed)
        return sb


def run_sandbox_batch(batch: SandboxBatch) -> list[CallResult]:
    """The results of one batch, in item order (a bad item fails alone, as locally)."""
    try:
        sandbox = _sandbox_for(batch.limits, batch.seed, batch.sandbox)
    except RuntimeError as exc:  # no OS isolation on this node under --sandbox os
        raise RetryableUnitError(f"node {node_name()}: {exc}") from exc
    try:
        return sandbox.call_many(batch.source, list(batch.funcs),
                                 [list(a) for a in batch.items], restricted=batch.restricted,
                                 fresh=batch.fresh)
    except RuntimeError as exc:  # the sandbox itself could not work here
        raise RetryableUnitError(f"node {node_name()}: Python sandbox failed: {exc}") from exc


WORKER_MB = 256
"""Memory a Ray worker process takes besides the child it runs (declared on top)."""


def process_resources(memory_mb: int) -> Resources:
    """One CPU; a child's address-space cap plus the Ray worker's own footprint."""
    return Resources(cpus=1.0, memory_mb=int(memory_mb) + WORKER_MB)


def sandbox_resources(limits: SandboxLimits) -> Resources:
    """What one sandbox batch needs: one worker child under its memory cap."""
    return process_resources(limits.memory_mb)


def call_many_on(executor: Executor, limits: SandboxLimits, batch_size: int, source: str,
                 funcs: Sequence[str], items: Sequence[Sequence[Any]], restricted: bool,
                 seed: int = 0, sandbox: str | None = None,
                 fresh: bool = False) -> list[CallResult]:
    """``Sandbox.call_many`` with each batch of ``batch_size`` items a unit of ``executor``.

    ``candidate_seconds`` holds per batch, from the moment the batch starts on its
    worker, as in a local ``call_many`` of those items. A wall deadline shared by
    all of a candidate's batches was tried and dropped: the time a batch waits in
    the cluster's queue behind other tasks' batches spends such a budget, so Ray
    would cut candidates that the local run does not.
    """
    from veriscale.backends.python.sandbox import CallResult

    if not items:
        return []
    size = max(1, batch_size)
    chunks = [tuple(tuple(a) for a in items[i : i + size]) for i in range(0, len(items), size)]
    payloads = [SandboxBatch(limits, source, tuple(funcs), c, restricted, seed, sandbox, fresh)
                for c in chunks]
    got = executor.map(run_sandbox_batch, payloads, resources=sandbox_resources(limits))
    out: list[CallResult] = []
    for chunk, res in zip(chunks, got, strict=True):
        if isinstance(res, UnitFailure):
            out.extend(CallResult(False, error=res.error) for _ in chunk)
        elif not isinstance(res, list) or len(res) != len(chunk):
            out.extend(CallResult(False, error="infrastructure: sandbox batch returned "
                                  f"{len(res) if isinstance(res, list) else 'no'} results "
                                  f"for {len(chunk)} items") for _ in chunk)
        else:
            out.extend(res)
    return out


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
