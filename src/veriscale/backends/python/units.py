"""The Python sandbox's unit of remote work: one batch of calls, one round trip.

:func:`call_many_on` is ``Sandbox.call_many`` with each batch of items a unit of an
:class:`~veriscale.execution.Executor` (local pool or Ray); the unit,
:func:`run_sandbox_batch`, holds no driver state (see :mod:`veriscale.execution.units`).
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from veriscale.backends import isolation
from veriscale.backends.python.sandbox import CallResult, Sandbox, SandboxLimits
from veriscale.execution.base import Executor, Resources, UnitFailure
from veriscale.execution.units import RetryableUnitError, node_name, process_resources


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
