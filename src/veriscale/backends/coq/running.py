"""Running checks in ``coqc`` files: bounded files in parallel, a file run again after
its first error until every check has an answer or a located failure, and the memory
of checks that ran out of time (so a larger one of the same context is not run again).

A mixin of :class:`~veriscale.backends.coq.backend.CoqBackend`: it uses the backend's
limits, statistics and lock through ``self``.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from veriscale.backends.base import BackendStats, ProgressHook, notify_progress
from veriscale.backends.coq.files import (
    SHARED_UNIT,
    SKIPPED,
    TIMED_OUT,
    Check,
    Unit,
    error_line,
    read_answers,
    render_file,
)
from veriscale.backends.coq.runner import CoqcFile, CoqRun, find_coqc, spawn_coqc
from veriscale.backends.stops import StopMemory, StopStore
from veriscale.execution import Executor, UnitFailure, is_remote
from veriscale.execution.units import ProverFile, process_resources, run_prover_file


class FileRunning:
    """Execution of check files for the Coq backend (see the module docstring)."""

    # the backend's, set by its constructor
    coqc: str
    timeout: float
    check_timeout: int
    memory_mb: int
    workers: int
    max_checks: int
    max_units: int
    timeout_budget: int
    share_literals: bool
    executor: Executor | None
    stats: BackendStats
    progress: ProgressHook | None
    _timed_out: StopMemory[bool]
    _lock: threading.Lock

    def _spawn(self, source: str) -> CoqRun | UnitFailure:
        if is_remote(self.executor):  # one file, one unit; coqc is found on its node
            assert self.executor is not None
            runner = CoqcFile.for_source(source, self.coqc, self.timeout, self.memory_mb)
            job = ProverFile(runner, "Check.v", source, toolchain=runner.identity())
            got = self.executor.map(run_prover_file, [job],
                                    resources=process_resources(self.memory_mb))[0]
            if isinstance(got, UnitFailure):
                return got
            run = got
        else:
            run = spawn_coqc(find_coqc(self.coqc), source, timeout=self.timeout,
                             memory_mb=self.memory_mb)
        with self._lock:
            self.stats.processes += 1
            self.stats.seconds += run.seconds
        return run

    def keep_stops(self, store: StopStore, namespace: str) -> None:
        """Keep the memory of timed-out checks in ``store`` (see
        :data:`~veriscale.backends.base.StopsHook`), under the check limit that made them."""
        self._timed_out.keep_in(store, f"{namespace}|check {self.check_timeout} s")

    def _remember_timeout(self, unit: Unit, check: Check) -> None:
        """The smallest check of this context and head that ran out of its time: no
        larger one of them is run again in any later file (see :meth:`_skip_timed_out`)."""
        self._timed_out.remember((unit.context, check.head), len(check.expr), True)

    def _skip_timed_out(self, units: list[Unit]) -> None:
        """Answer UNKNOWN (timeout), without running them, the checks no smaller than one
        of the same context and head that ran out of its time in an earlier file: a
        specification that enumerates every subsequence costs its strikes once, not in
        every file that holds more of its checks."""
        if not self._timed_out:
            return
        skipped = 0
        for u in units:
            for c in u.checks:
                if c.answer is None and c.error is None \
                        and self._timed_out.covering((u.context, c.head), len(c.expr)):
                    c.error = ("timeout", "not run: a check of this context no larger than "
                                          f"it exceeded its {self.check_timeout} s limit")
                    skipped += 1
        if skipped:
            with self._lock:
                self.stats.extra["skipped"] += skipped

    def _run_file(self, units: list[Unit]) -> None:
        self._skip_timed_out(units)
        pending = [(u, idx) for u in units
                   if (idx := [i for i, c in enumerate(u.checks)
                               if c.answer is None and c.error is None])]
        first = True
        share = self.share_literals
        while pending:
            if not first:
                with self._lock:
                    self.stats.extra["reruns"] += 1
            first = False
            view = [Unit(u.context, [u.checks[i] for i in idx], u.trusted, u.requires,
                         u.strikes) for u, idx in pending]
            nonce = secrets.token_hex(6)
            source, spans = render_file(view, nonce, self.check_timeout, self.timeout_budget,
                                        share)
            run = self._spawn(source)
            if isinstance(run, UnitFailure):  # not checked at all: UNKNOWN, not the candidate's
                detail = run.error.removeprefix("infrastructure:").strip()
                for v in view:
                    for c in v.checks:
                        if c.answer is None and c.error is None:
                            c.error = ("infrastructure", detail)
                return
            answers = read_answers(run.stdout, nonce)
            order = [(ui, ci) for ui, u in enumerate(view) for ci in range(len(u.checks))]
            skipped = 0
            for n, (ui, ci) in enumerate(order):
                check, got = view[ui].checks[ci], answers.get(n)
                if got == TIMED_OUT:
                    check.error = ("timeout", f"the check exceeded its {self.check_timeout} s "
                                              "limit")
                    pending[ui][0].strikes += 1
                    self._remember_timeout(pending[ui][0], check)
                elif got == SKIPPED:
                    check.error = ("timeout", f"not run: {self.timeout_budget} smaller checks "
                                              "of this context exceeded their limits")
                    skipped += 1
                elif got is not None:
                    check.answer = got
            if skipped:
                with self._lock:
                    self.stats.extra["skipped"] += skipped
            unanswered = [(ui, ci) for n, (ui, ci) in enumerate(order) if n not in answers]
            if not unanswered and run.returncode == 0 and not run.timed_out:
                return
            line, message = error_line(run.stderr)
            blame: tuple[int, int | None] | None = None
            kind = "error"
            if run.timed_out:
                kind, message = "timeout", f"coqc exceeded {self.timeout:g} s"
            elif run.memory_exhausted or "Out of memory" in message:
                kind, message = "memory", f"coqc exhausted its {self.memory_mb} MB " + message
            elif "Timeout!" in message:
                kind = "timeout"
            if line is not None and not run.timed_out:
                for lo, hi, ui, ci in spans:
                    if lo <= line <= hi:
                        blame = (ui, ci)
                        break
            if blame is not None and blame[0] == SHARED_UNIT:
                # no check's fault (a literal of ours did not elaborate there): the
                # same checks again, each with its literals in place
                share = False
                continue
            if blame is None:
                if not unanswered:
                    return
                ui, ci = unanswered[0]
                blame = (ui, None if ci == 0 and kind == "error" else ci)
            ui, ci = blame
            if ci is None:  # the context itself failed: every remaining check of the unit
                for c in view[ui].checks:
                    if c.answer is None and c.error is None:
                        c.error = ("context", message) if kind == "error" else (kind, message)
            else:
                view[ui].checks[ci].error = (kind, message)
                # A timeout spends the unit's budget. So does exhausted memory in a
                # candidate's unit: each costs a whole process, and a flawed spec that
                # builds a huge unary nat exhausts it on every test (14 processes for one
                # mutant). In the ground truth's unit it is that check's own UNKNOWN (a
                # few inputs near 2^31 in unary arithmetic): it never skips the other
                # inputs, original test inputs among them.
                if kind == "timeout" or (kind == "memory" and not view[ui].trusted):
                    pending[ui][0].strikes += 1
                if kind == "timeout":
                    self._remember_timeout(pending[ui][0], view[ui].checks[ci])
            # run again whatever is still unanswered and not blamed
            nxt = []
            for (u, idx), v in zip(pending, view, strict=True):
                left = [i for i, c in zip(idx, v.checks, strict=True)
                        if c.answer is None and c.error is None]
                if left:
                    nxt.append((u, left))
            pending = nxt

    def execute(self, units: Sequence[Unit],
                on_file: Callable[[list[Unit]], None] | None = None) -> None:
        """Answer every check of ``units`` (in files of bounded size, in parallel);
        ``on_file`` is told the units of each file once it is done (a unit is never
        split over files, so they are answered).

        A unit's checks run smallest first, so that when a context's checks start
        to exceed their limits (a specification building a unary ``nat`` from a
        long list of digits), the ones skipped after ``timeout_budget`` strikes are
        the larger ones (see :func:`check_tactic`).
        """
        given = [u for u in units if u.checks]
        units = [Unit(u.context, sorted(u.checks, key=lambda c: len(c.expr)), u.trusted,
                      u.requires) for u in given]
        origin = {id(copy): u for copy, u in zip(units, given, strict=True)}
        files: list[list[Unit]] = []
        current: list[Unit] = []
        size = 0
        for u in units:
            if current and (size + len(u.checks) > self.max_checks
                            or len(current) >= self.max_units):
                files.append(current)
                current, size = [], 0
            current.append(u)
            size += len(u.checks)
        if current:
            files.append(current)
        planned = sum(len(u.checks) for u in units)
        with self._lock:
            self.stats.checks += planned
            self.stats.extra["coqc_files"] += len(files)
        notify_progress(self.progress, "planned", len(files), planned)

        def run(f: list[Unit]) -> None:
            self._run_file(f)
            notify_progress(self.progress, "done", 1, sum(len(u.checks) for u in f))
            if on_file is not None:
                on_file([origin[id(u)] for u in f])

        width = self.executor.width(self.workers, len(files)) if self.executor else self.workers
        if len(files) == 1 or width == 1:
            for f in files:
                run(f)
        else:
            with ThreadPoolExecutor(width) as pool:
                list(pool.map(run, files))

