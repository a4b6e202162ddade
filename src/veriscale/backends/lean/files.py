"""How large a Lean file is, and in what order its checks go.

A Lean start is dear on WASM (the import of ``Init``) and one process is capped at
4 GB, so checks are packed into few large files, balanced over the workers, each
unit's smallest first and every unit's longest last (:func:`tiers`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from veriscale.backends.lean import render


@dataclass(frozen=True)
class FileLimits:
    """How much one Lean file may hold on a runner, and what that costs in memory.

    ``checks`` and ``units`` bound a file; ``peak_mb`` is the measured peak
    resident memory of one process at those limits (benchmarks/bench_lean_files.py),
    used to decide how many processes fit in memory at once.
    """

    checks: int
    units: int
    peak_mb: int
    cell_budget: int = 0  # default (expected input, adversary) cells per task; 0 = all
    timeout_checks: int = 0
    """The file size the runner's ``timeout`` is meant for; a larger file gets
    proportionally longer (0: every file gets ``timeout``)."""
    split_checks: int = 1000
    """A round is spread over the workers only in files of at least this many checks
    (each more file costs one more Lean start)."""
    start_seconds: float = 0.0
    """What one more Lean file costs before its first check (the import of ``Init``)."""
    heartbeat_ms: float = 0.0
    """What a check that runs out of its budget costs per heartbeat (0: not measured,
    so every climb of the heartbeat probe's budgets goes through scouts)."""

    @property
    def measured(self) -> bool:
        """Are both costs known (WASM)? Only then does the heartbeat ladder weigh them."""
        return bool(self.start_seconds and self.heartbeat_ms)

    def stuck_seconds(self, heartbeats: int) -> float:
        """What one check costs if it runs out of ``heartbeats``."""
        return heartbeats * self.heartbeat_ms / 1000


# WASM: 32-bit memory (4 GB) caps a process; each command costs about 0.03 s. A file
# starts with the import of Init: 110-120 s alone (200-310 s of wall time on a busy
# 2-core machine) until the launcher (wasm_setup.LAUNCHER_NAME) removed emscripten's
# dlsym scan from it; now about 12 s alone, at the same 3.6 GB of resident memory.
# start_seconds is that start on a shared machine. Files stay large for memory's
# sake: 20,000 commands ran at 3.7 GB, once the runner gave node's stacks room
# (runner.WasmRunner.stack_mb). A round is spread over the workers from 500 checks
# (about 15 s of checks, the price of a start). The timeout (2,400 CPU seconds) was
# sized for files of 2,400 checks, about 1 s each under the probe's heartbeat budget.
# Native: no cap, but smaller files spread over more cores.
FILE_LIMITS = {
    "wasm": FileLimits(checks=12000, units=100, peak_mb=4300, cell_budget=3000,
                       timeout_checks=2400, split_checks=500, start_seconds=30,
                       heartbeat_ms=0.4),
    "native": FileLimits(checks=300, units=8, peak_mb=2000),
}


SESSION_CHECKS, SESSION_SPLIT, SESSION_START = 4000, 100, 1.0
"""Files served by a Lean session (:mod:`session`): one more file costs about a second,
not a start, so a round is spread over the workers from 100 checks, and files stay
smaller (finer progress and balance; a served file's memory is freed after it)."""


def file_limits(runner: str, sessions: bool = False) -> FileLimits:
    limits = FILE_LIMITS.get(runner, FILE_LIMITS["native"])
    if not sessions:
        return limits
    return replace(limits, checks=min(limits.checks, SESSION_CHECKS),
                   split_checks=min(limits.split_checks, SESSION_SPLIT),
                   start_seconds=SESSION_START)


def balanced_size(total: int, cap: int, workers: int = 1, split: int = 1) -> int:
    """The per-file size that splits ``total`` checks into the fewest files of at most
    ``cap``, and into at least ``workers`` files where each still holds ``split``
    checks (so no worker idles beside one long file). Past ``workers`` files, their
    number is a multiple of ``workers``: three files on two workers leave one core
    idle for a whole file; four smaller ones cost one more Lean start and a quarter
    less wall time."""
    if total <= 0:
        return max(1, cap)
    workers = max(1, workers)
    files = max(-(-total // max(1, cap)), min(workers, total // max(1, split)))
    if files > workers:
        files = -(-files // workers) * workers
    size = -(-total // files)
    if files <= workers and -(-total // size) < files:
        # rounding up lost a file (4 checks for 3 workers: 2 files of 2): smaller ones
        size = max(1, total // files)
    return size


def default_workers(peak_mb: int, cpus: int | None = None, memory_mb: int | None = None) -> int:
    """As many Lean processes at once as there are cores, and as fit in memory; never fewer than one."""
    cpus = cpus if cpus is not None else (os.cpu_count() or 1)
    if memory_mb is None:
        try:
            memory_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
        except (ValueError, OSError, AttributeError):
            memory_mb = 0
    fit = memory_mb // peak_mb if memory_mb and peak_mb else cpus
    return max(1, min(cpus, fit))


LARGE_SHARE = 0.1
"""The share of a round's checks (the longest commands) that go after every unit's
others (:func:`tiers`)."""


def tiers(variants: list[render.Variant], checks: list[list[tuple[int, int, str]]]
           ) -> tuple[list[render.Variant], list[list[tuple[int, int, str]]]]:
    """Units with their checks (smallest first) as two tiers: every unit's checks up to
    the round's longest tenth, then every unit's longest ones (the unit again, its
    definitions repeated). Units run one after another in a file, so one unit's huge
    input that takes Lean down used to leave every later unit's small checks for a
    new file; now it comes after them."""
    lengths = sorted(len(item[2]) for items in checks for item in items)
    if len(variants) < 2 or not lengths:
        return variants, checks
    cut = lengths[min(len(lengths) - 1, int(len(lengths) * (1 - LARGE_SHARE)))]
    small = [[item for item in items if len(item[2]) < cut] for items in checks]
    large = [[item for item in items if len(item[2]) >= cut] for items in checks]
    out_v: list[render.Variant] = []
    out_c: list[list[tuple[int, int, str]]] = []
    for tier in (small, large):
        for variant, items in zip(variants, tier, strict=True):
            if items:
                out_v.append(variant)
                out_c.append(items)
    return out_v, out_c
