"""The Lean backend: every oracle question answered by batched Lean files.

Each operation turns its items into Lean commands (one per item), packs the
commands of one or *several* tasks into few files (``render.layout_file``), runs
each file once (``runner``), and maps each message back to its item by line.
The authors ran one Lean process per check (up to ten per candidate input);
here one process answers up to ``chunk_size`` checks of up to
``tasks_per_file`` tasks.

Two evaluation modes:

* ``kernel`` (a runner without compiled evaluation; compiled mode's fallback for
  checks that take Lean down): ``#reduce decide (P)``
  prints ``true``/``false``; ``#reduce`` of a call prints a normal form, with
  Strings/Chars projected to code points (``render.projection``).
* ``compiled`` (default on native and on WASM with its compiled-evaluation
  prelude): ``#eval! decide (P)`` and ``#eval! call``
  with ``format.width`` so large that no value is ever wrapped or truncated.

Classification stage 1 asks ``decide (P)`` once per input: it prints the
boolean, so upstream's second process for ``decide (¬P)`` (needed there only
because ``#guard`` cannot tell "false" from "error") would add nothing. Stage 2
(Plausible on ``P`` and ``¬P``) runs only where Plausible is importable (a native
Lake project); elsewhere undecided inputs stay UNKNOWN and the detail says so.

Unknown is never promoted: a check with no clean ``true``/``false`` (stuck
reduction, no ``Decidable`` instance, heartbeats, timeout, crash) is UNKNOWN
with the reason. Batch API, for packing many tasks into one file (what makes
WASM usable: each Lean start costs the import of ``Init``)::

    backend.classify_many([(task, inputs), ...])
    backend.run_many([(task, impl_or_None, inputs), ...])
    backend.precondition_holds_many([(task, spec_or_None, inputs), ...])
    backend.postcondition_holds_many([(task, spec_or_None, pairs), ...])
    backend.check_inputs_many([(task, inputs), ...])
    backend.compile_many([(task, impl_or_None, spec_or_None), ...])
    backend.evaluate_many([("classify", (task, inputs)), ("run", (task, None, inputs)), ...])

``evaluate_many`` mixes operations: checks of the same task (and the same
candidate) share one namespace and one elaboration of its definitions.
"""

from __future__ import annotations

import copy
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriscale.backends.base import (
    AnswersHook,
    BackendStats,
    Classification,
    FailureKind,
    Implementation,
    Label,
    Outcome,
    ProgressHook,
    Spec,
    Verdict,
    Verdicts,
    notify_answers,
    notify_progress,
)
from veriscale.backends.lean import compat, render
from veriscale.backends.lean import data as data_route
from veriscale.backends.lean.files import (
    balanced_size,
    default_workers,
    file_limits,
    tiers,
)
from veriscale.backends.lean.messages import (
    USES_SORRY,
    CheckOutput,
    batch_answers,
    bool_answer,
    check_answer,
    classify_answer,
    classify_decision_answer,
    command_kind,
    compile_answer,
    data_failed,
    equality_outcome,
    exceeded_heartbeats,
    kernel_answer,
    plausible_answer,
    plausible_verdict,
    protocol_answer,
    value_outcome,
    verina_plausible_answer,
)
from veriscale.backends.lean.plans import (
    EarlyAnswers,
    LiveCount,
    OnFile,
    Plan,
    Slot,
    cmd_slot,
    done_slot,
    tell,
)
from veriscale.backends.lean.process import LeanMessage, LeanProcessResult
from veriscale.backends.lean.runner import LeanRunner, make_runner
from veriscale.backends.lean.safety import check_imports, check_untrusted_lean
from veriscale.backends.lean.sections import lean_sections
from veriscale.backends.stops import StopMemory, StopStore
from veriscale.benchmark.model import Input, Task
from veriscale.execution import Executor, LocalExecutor, Resources, UnitFailure, is_remote
from veriscale.execution.units import ProverFile, run_prover_file

log = logging.getLogger(__name__)

LEAN_UNIT = Resources(cpus=1.0, memory_mb=4096)
KERNEL_SAMPLE = 2  # crashed checks of a request asked of the kernel before its others
"""What one Lean file needs on a node: one core; the WASM module peaks near 4 GB."""







@dataclass(frozen=True)
class _Stop:
    """Where a file's Lean stopped (a crash or a timeout): on a check of ``unit``
    (its variant's key); ``culprit`` is that check and its answer when it ran alone
    (not in a batch); ``kind`` and ``size`` (the length of its command) are set when
    the function's checks no smaller than it are skipped from now on."""

    unit: tuple[str, ...]
    timed_out: bool
    failure: str
    blind: bool  # before Lean got past its start (the header's sentinel)
    culprit: tuple[tuple[int, int], CheckOutput] | None = None
    kind: str = ""
    size: int | None = None


@dataclass
class _KernelAsks:
    """Stuck checks put to the kernel: where each is, its kind, and its two examples."""

    where: list[tuple[int, int]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    jobs: list[tuple[render.Variant, list[str]]] = field(default_factory=list)




class LeanBackend:
    """The Backend protocol over Lean (native or WASM), batched; see the module doc."""

    name = "lean"
    classify_checks_syntax = True  # classify's answers include the syntax filter's
    coverage_unavailable = ("Lean runs the reference by compiled evaluation (#eval) or "
                            "kernel reduction, and neither reports which lines ran")

    def __init__(
        self,
        runner: str | LeanRunner = "auto",
        *,
        lean_path: str | None = None,
        project_dir: str | Path | None = None,
        timeout: float | None = None,
        workers: int | None = None,
        mode: str = "auto",
        cache_dir: str | Path | None = None,
        chunk_size: int | None = None,
        tasks_per_file: int | None = None,
        max_heartbeats: int = 400000,
        probe_heartbeats: int | None = None,
        heartbeat_retries: int = 2,
        heartbeat_step: int = 8,
        memory_mb: int | None = None,
        work_dir: str | Path | None = None,
        plausible: bool | None = None,
        keep_files: bool = False,
        crash_retries: int = 2,
        executor: Executor | None = None,
        batch_size: int | None = None,
        check_seconds: float | None = 60.0,
        timeout_retries: int = 6,
        kernel_fallback: bool = True,
        helpers: bool = True,
        data: bool = True,
        sessions: bool | None = None,
        **other: Any,
    ) -> None:
        if isinstance(runner, LeanRunner):
            self.runner = runner
        else:
            self.runner = make_runner(
                runner, lean_path=lean_path,
                project_dir=Path(project_dir) if project_dir else None,
                timeout=timeout, memory_mb=memory_mb,
                cache_dir=Path(cache_dir) if cache_dir else None,
                work_dir=Path(work_dir) if work_dir else None, plausible=plausible,
            )
        if sessions is not None:  # None: the runner's default (WASM: on)
            self.runner.sessions = bool(sessions)
        if mode not in ("auto", "kernel", "compiled"):
            raise ValueError(f"unknown Lean mode {mode!r}; choose auto, kernel or compiled")
        if mode == "auto":  # compiled wherever the runner can (WASM: with its prelude)
            mode = "compiled" if self.runner.supports_compiled else "kernel"
        if mode == "compiled" and not self.runner.supports_compiled:
            raise ValueError(f"the {self.runner.name} Lean runner supports kernel mode only")
        self.mode = mode
        # compiled mode: checks asked together in one #eval! of a list (render.BATCH_SIZE)
        self.batch_size = 1 if mode == "kernel" else max(1, int(batch_size or render.BATCH_SIZE))
        if mode == "compiled" and check_seconds:
            # Heartbeats do not bound compiled evaluation (an exponential specification
            # ran for minutes): a file whose Lean uses this many CPU seconds without a
            # message is stopped, and the check it was on is a timeout (UNKNOWN) while
            # the rest go on in a new file.
            self.runner.stall_seconds = float(check_seconds)
        limits = file_limits(self.runner.name, self.runner.sessions)
        self.chunk_size = int(chunk_size or limits.checks)
        self.tasks_per_file = int(tasks_per_file or limits.units)
        self.file_limits = limits
        self.workers = max(1, int(workers or default_workers(limits.peak_mb)))
        self.runner.session_size = self.workers
        self.default_cell_budget = limits.cell_budget
        self.max_heartbeats = int(max_heartbeats)
        # Checks first run under a small heartbeat budget; the few of a unit that
        # exceed it scout larger ones (see _execute). 0: one round at the full budget.
        # 2000 of 400000 (measured on WASM): a 60-element list literal's #check needs
        # more than 250; ordinary checks of 20 VERINA tasks fit 2000; a stuck one
        # costs about 0.4 ms per heartbeat.
        # Compiled mode: no probe by default. Heartbeats bound elaboration there, not
        # the evaluation, so no check gets stuck spending them; a probe would only add
        # the ladder's rounds (a Lean start each: about 30 s on WASM with the prelude).
        if probe_heartbeats is None:
            probe_heartbeats = self.max_heartbeats // 200 if mode == "kernel" else 0
        self.probe_heartbeats = int(probe_heartbeats)
        self.heartbeat_retries = max(0, int(heartbeat_retries))
        self.heartbeat_step = max(2, int(heartbeat_step))
        self.keep_files = keep_files
        self.crash_retries = int(crash_retries)
        self.timeout_retries = int(timeout_retries)
        self.kernel_fallback = bool(kernel_fallback)  # compiled mode: crashes go to the kernel
        # compiled mode: a batch through one helper definition (render.helper_batch);
        # the (unit, kind of check) whose helper did not elaborate go term by term
        self.helpers = bool(helpers)
        self._no_helper: set[tuple[Any, ...]] = set()
        # compiled mode with Lean's JSON at hand: a helper batch's values go as one
        # string decoded when it runs (backends/lean/data.py), not as literals to
        # elaborate and compile; (unit, kind of check) where that failed keep literals
        self.data = bool(data) and self.helpers and mode == "compiled" \
            and "Lean" in self.runner.compiled_imports
        self._no_data: set[tuple[Any, ...]] = set()
        # (unit, kind of check) → the smallest size that stopped Lean, whether by a
        # timeout, and why: larger checks of that function are not asked again
        self._stopped: StopMemory[tuple[bool, str]] = StopMemory()  # (timed out, failure)
        # Where each Lean file runs: here (default) or as one unit of a remote executor.
        self.executor: Executor = executor or LocalExecutor()
        self.stats = BackendStats()
        self.stats.extra.update(runner=self.runner.name, mode=self.mode, files=0, timeouts=0,
                                crashes=0)
        ignored = sorted(k for k, v in other.items() if v is not None)
        if ignored:
            self.stats.extra["ignored_options"] = ignored
        self._counter = 0
        self._lock = threading.Lock()
        self._running = 0  # Lean files running now, and since when at that count
        self._running_since = time.monotonic()
        self.compat: dict[str, set[str]] = {}  # task id → compatibility names it needed
        self._kernel_backend: LeanBackend | None = None  # the kernel fallback's (see _kernel)
        self._stop_store: tuple[StopStore, str] | None = None  # see keep_stops
        self.progress: ProgressHook | None = None  # set by a progress display
        self.on_answers: AnswersHook | None = None  # set by the oracle cache

    def _notify(self, event: str, files: int, checks: int) -> None:
        notify_progress(self.progress, event, files, checks)

    @property
    def kernel(self) -> bool:
        return self.mode == "kernel"

    def keep_stops(self, store: StopStore, namespace: str) -> None:
        """Keep the stop memory (this backend's and its kernel fallback's) in ``store``
        (see :data:`~veriscale.backends.base.StopsHook`); the namespace adds what makes a
        stop: the mode and the limits."""
        self._stop_store = (store, namespace)
        self._stopped.keep_in(store, f"{namespace}|{self.mode}|check seconds "
                                     f"{self.runner.stall_seconds}|heartbeats "
                                     f"{self.max_heartbeats}|memory {self.runner.memory_mb}")
        if self._kernel_backend is not None:
            self._kernel_backend.keep_stops(store, namespace)

    def close(self) -> None:
        """End the runner's Lean sessions (the processes that served this backend's files),
        and the kernel fallback's."""
        self.runner.close_sessions()
        if self._kernel_backend is not None:
            self._kernel_backend.close()

    def __enter__(self) -> LeanBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ execution

    def _allow_import(self, module: str) -> bool:
        return self.runner.accepts_mathlib or render.is_core_import(module)

    def _heartbeat_levels(self) -> list[int]:
        """The budgets a check may be given, smallest first: the probe, then ×
        ``heartbeat_step`` until ``max_heartbeats`` (always the last)."""
        levels = [self.probe_heartbeats]
        while levels[-1] * self.heartbeat_step < self.max_heartbeats:
            levels.append(levels[-1] * self.heartbeat_step)
        return [*levels, self.max_heartbeats]

    def _execute(self, jobs: Sequence[tuple[render.Variant, list[str]]],
                 _fallback: bool = False,
                 on_file: OnFile | None = None) -> list[list[CheckOutput]]:
        """Run every job's commands; one :class:`CheckOutput` per command, in order.

        With a heartbeat probe, every command first runs under ``probe_heartbeats``.
        Of those that exceed it, the ``heartbeat_retries`` smallest of each unit (the
        scouts) run again under larger budgets of :meth:`_heartbeat_levels` (see
        :meth:`_climb`). If they all fit one, the unit's other such checks follow under
        it; if one does not fit even ``max_heartbeats``, the others stay UNKNOWN
        (``maxHeartbeats``). A specification that enumerates up to a huge ``Nat``
        input (``List.range k``) exhausts any budget: on WASM each such check took
        minutes at the full budget, and one task had 200 of them in its classify.
        ``on_file`` is told the outputs each file of the first round, and each later
        round, leaves final.
        """
        probe = (not _fallback and 0 < self.probe_heartbeats < self.max_heartbeats)
        if not probe:
            return self._execute_round(jobs, _fallback, on_file=on_file)
        levels = self._heartbeat_levels()

        final = self._execute_round(
            [(v, [render.probed(c, levels[0]) for c in cmds]) for v, cmds in jobs], _fallback=True,
            on_file=on_file)
        asked: set[tuple[int, int]] = set()  # checks the kernel was asked already
        counts = self._climb(jobs, final, levels, on_file, asked)
        with self._lock:
            hp = self.stats.extra.setdefault(
                "heartbeat_probe",
                {"exceeded": 0, "retried": 0, "decided_on_retry": 0, "rounds": 0})
            for k, v in counts.items():
                hp[k] += v  # rounds: each a Lean process at least
        if self.kernel:
            self._kernel_decide(jobs, final, on_file, asked)
        return final

    def _climb(self, jobs: Sequence[tuple[render.Variant, list[str]]],
               final: list[list[CheckOutput]], levels: list[int],
               on_file: OnFile | None,
               asked: set[tuple[int, int]]) -> dict[str, int]:
        """The heartbeat ladder after the probe round (see :meth:`_execute`): retry the
        checks of ``final`` that exceeded ``levels[0]``, in place; returns its counts.

        In kernel mode each of its rounds also carries the kernel round's questions
        (:meth:`_kernel_decide`) for the checks stuck so far, added to ``asked``: a
        Lean start saved wherever a batch has both (on the 20 VERINA tasks of issue
        14, both stages with a kernel round had ladder rounds before it).

        Each waiting check knows the largest budget it exceeded. Where the runner's
        costs are measured (:class:`FileLimits`; WASM, where a Lean start counts 30 s
        and a check stuck under 16,000 heartbeats 6 s), a unit's scouts try every larger
        budget in one round, and its other checks go with them under the next budget
        while, all stuck and spread over the workers, they would lengthen the round by
        less than a Lean start (what a round of their own would cost each worker); such
        a round that could cost more than a start is spread over the workers. Elsewhere
        (native: starts are cheap) scouts climb one budget per round and the others wait.
        """
        top = len(levels) - 1
        r = self.heartbeat_retries
        limits = self.file_limits
        measured = limits.measured

        def cost(sends: list[tuple[tuple[int, int], int]]) -> float:
            return sum(limits.stuck_seconds(levels[lv]) for _, lv in sends)

        def command(at: tuple[int, int], lv: int) -> tuple[render.Variant, list[str]]:
            (ji, ci), budget = at, levels[lv]
            cmd = jobs[ji][1][ci]
            return jobs[ji][0], [cmd if budget >= self.max_heartbeats else render.probed(cmd, budget)]

        # per unit: [check, lo] shortest command first; the budget its scouts all fit
        waiting: dict[tuple[str, ...], list[list[Any]]] = {}
        for ji, (variant, cmds) in enumerate(jobs):
            for ci in range(len(cmds)):
                if exceeded_heartbeats(final[ji][ci]):
                    waiting.setdefault(variant.key, []).append([(ji, ci), 0])
        for ws in waiting.values():
            ws.sort(key=lambda w: (len(jobs[w[0][0]][1][w[0][1]]), w[0]))
        counts = {"exceeded": sum(len(ws) for ws in waiting.values()), "retried": 0,
                  "decided_on_retry": 0, "rounds": 0}
        fit: dict[tuple[str, ...], int] = {}
        while True:
            sends: list[tuple[tuple[int, int], int]] = []
            scouting: dict[tuple[str, ...], list[tuple[int, int]]] = {}
            spare = limits.start_seconds * self.workers
            for unit, ws in waiting.items():
                if unit in fit:  # its scouts fit: the others follow under that budget
                    bulk = [(w[0], fit[unit]) for w in ws if w[1] < fit[unit]]
                    del fit[unit]
                    if bulk:
                        sends += bulk
                        continue
                if not (r and ws):
                    continue
                scouts = ws[:r]
                scouting[unit] = [w[0] for w in scouts]
                if measured:
                    sends += [(w[0], lv) for w in scouts for lv in range(w[1] + 1, top + 1)]
                else:
                    lv = max(w[1] for w in scouts) + 1
                    sends += [(w[0], lv) for w in scouts]
                # the others go with the scouts while, all stuck and spread over the
                # workers, they would lengthen this round by no more than the Lean start
                # that waiting for the scouts costs (on the 20 VERINA tasks, a round of
                # its own followed for 85 checks that all fit the next budget)
                rest = [(w[0], w[1] + 1) for w in ws[r:]]
                if rest and measured and (dear := cost(rest)) <= spare:
                    spare -= dear
                    sends += rest
            if not sends:
                return counts
            counts["rounds"] += 1
            # Where, all stuck, the round would cost more than a Lean start, it uses
            # every worker (the other cores idle during it otherwise).
            spread = measured and cost(sends) > limits.start_seconds
            ladder = [command(at, lv) for at, lv in sends]
            stuck = self._kernel_asks(jobs, final, asked) if self.kernel else _KernelAsks()
            outs = self._execute_round(ladder + stuck.jobs, _fallback=True,
                                       split=1 if spread else None)
            if stuck.where:
                self._kernel_settle(stuck, outs[len(ladder):], final, on_file)
                outs = outs[:len(ladder)]
            fitted: dict[tuple[int, int], int] = {}
            tried: dict[tuple[int, int], int] = {}
            # a check's sends are in rising budgets: the last one it exceeded is kept
            for (at, lv), (out,) in zip(sends, outs, strict=True):
                tried[at] = lv
                if exceeded_heartbeats(out):
                    if at not in fitted:
                        final[at[0]][at[1]] = out
                elif lv < fitted.get(at, top + 1):
                    fitted[at] = lv
                    final[at[0]][at[1]] = out
            counts["retried"] += len(sends)  # commands: a scout may try several budgets
            counts["decided_on_retry"] += len(fitted)
            tell(on_file, [(at, final[at[0]][at[1]]) for at in sorted(fitted)])
            for unit, ws in waiting.items():
                for w in ws:
                    if w[0] in tried and w[0] not in fitted:
                        w[1] = tried[w[0]]
                scouts = scouting.get(unit, [])
                if scouts and all(at in fitted for at in scouts):
                    fit[unit] = max(fitted[at] for at in scouts)
                # a scout that exceeded the full budget: the others would too
                gave_up = any(at not in fitted and tried[at] == top for at in scouts)
                waiting[unit] = [] if gave_up else [w for w in ws
                                                     if w[0] not in fitted and w[1] < top]

    def _execute_round(self, jobs: Sequence[tuple[render.Variant, list[str]]],
                       _fallback: bool = False,
                       split: int | None = None,
                       on_file: OnFile | None = None) -> list[list[CheckOutput]]:
        """One round of files; ``split``: the fewest checks a file needs before the
        round is spread over the workers (default: the runner's ``split_checks``);
        ``on_file``: told each file's outputs as it finishes, in file order."""
        results: list[list[CheckOutput | None]] = [[None] * len(cmds) for _, cmds in jobs]
        # One unit per distinct variant: checks of one task share its definitions.
        unit_of: dict[tuple[str, ...], int] = {}
        unit_variants: list[render.Variant] = []
        unit_checks: list[list[tuple[int, int, str]]] = []  # (job, index, command)
        for ji, (variant, cmds) in enumerate(jobs):
            if not cmds:
                continue
            u = unit_of.setdefault(variant.key, len(unit_variants))
            if u == len(unit_variants):
                unit_variants.append(variant)
                unit_checks.append([])
            unit_checks[u].extend((ji, ci, c) for ci, c in enumerate(cmds))
        files = self._pack(unit_variants, unit_checks, split)
        if files:
            self._notify("planned", len(files), sum(len(i) for f in files for _, i in f))
            width = self.executor.width(self.workers, len(files))
            with ThreadPoolExecutor(max_workers=width) as pool:
                for outs in pool.map(self._run_file, files):
                    for (ji, ci), out in outs:
                        results[ji][ci] = out
                    tell(on_file, outs)
        final: list[list[CheckOutput]] = []
        for row in results:
            final.append([o if o is not None else CheckOutput([], "infrastructure: not run")
                      for o in row])
        if self.kernel and not _fallback:
            self._kernel_decide(jobs, final, on_file)
        return final

    def _kernel_decide(self, jobs: Sequence[tuple[render.Variant, list[str]]],
                       final: list[list[CheckOutput]],
                       on_file: OnFile | None = None,
                       asked: set[tuple[int, int]] | None = None) -> None:
        """Ask the kernel itself where a boolean ``#reduce`` got stuck (one more round):
        ``decide`` of a pre/postcondition, an ``==`` code test, a call returning ``Bool``
        (:func:`render.kernel_prop`; code over ``Array`` gets stuck in ``#reduce``).

        Each stuck ``P`` becomes two examples, ``P`` and ``¬P`` by ``decide +kernel``,
        next to the same definitions; the one that elaborates is the answer. An
        example that needed ``sorry``, or neither elaborating, leaves it unknown.
        Checks in ``asked`` were asked in a heartbeat-ladder round already.
        """
        stuck = self._kernel_asks(jobs, final, set() if asked is None else asked)
        if not stuck.where:
            return
        with self._lock:
            self._kernel_stats()["rounds"] += 1  # rounds of its own: a Lean start each
        self._kernel_settle(stuck, self._execute_round(stuck.jobs, _fallback=True), final,
                            on_file)

    def _kernel_stats(self) -> dict[str, int]:
        """``backend_stats.kernel_decide`` (the caller holds the lock)."""
        return self.stats.extra.setdefault("kernel_decide", {"asked": 0, "decided": 0, "rounds": 0})

    def _kernel_asks(self, jobs: Sequence[tuple[render.Variant, list[str]]],
                     final: list[list[CheckOutput]],
                     asked: set[tuple[int, int]]) -> _KernelAsks:
        """The kernel's questions for the checks of ``final`` stuck now and not in
        ``asked`` (which they join)."""
        stuck = _KernelAsks()
        for ji, (variant, cmds) in enumerate(jobs):
            sig = variant.task.signature
            bool_call = sig.name if str(sig.return_type) == "Bool" else None
            for ci, cmd in enumerate(cmds):
                if (ji, ci) in asked:
                    continue
                prop = render.kernel_prop(cmd, bool_call)
                if prop is None:
                    continue
                answer, why = bool_answer(final[ji][ci])
                if answer is None and why.startswith("stuck reduction"):
                    asked.add((ji, ci))
                    stuck.where.append((ji, ci))
                    stuck.kinds.append(render.kernel_check_kind(cmd))
                    stuck.jobs.append((variant, [render.kernel_decide_command(prop, True),
                                                 render.kernel_decide_command(prop, False)]))
        return stuck

    def _kernel_settle(self, stuck: _KernelAsks, outs: list[list[CheckOutput]],
                       final: list[list[CheckOutput]], on_file: OnFile | None) -> None:
        """Read the kernel's answers to ``stuck`` (``outs``, in its order) into ``final``."""
        decided = 0
        by_kind: dict[str, list[int]] = {}
        for (ji, ci), kind, (pos, neg) in zip(stuck.where, stuck.kinds, outs, strict=True):
            got = kernel_answer(pos, neg)
            counts = by_kind.setdefault(kind, [0, 0])
            counts[0] += 1
            if got is not None:
                counts[1] += 1
                decided += 1
                old = final[ji][ci]
                final[ji][ci] = CheckOutput(
                    [LeanMessage("information", 0, 0, 0, 0, "true" if got else "false")],
                    "", old.definition_errors, old.header_errors, old.dropped_imports)
        tell(on_file, [((ji, ci), final[ji][ci]) for ji, ci in stuck.where])
        with self._lock:
            kd = self._kernel_stats()
            kd["asked"] += len(stuck.where)
            kd["decided"] += decided
            per = self.stats.extra.setdefault("kernel_decide_by_check", {})
            for kind, (asked, got) in sorted(by_kind.items()):
                row = per.setdefault(kind, {"asked": 0, "decided": 0})
                row["asked"] += asked
                row["decided"] += got

    def _pack(
        self, variants: list[render.Variant], checks: list[list[tuple[int, int, str]]],
        split: int | None = None,
    ) -> list[list[tuple[render.Variant, list[tuple[int, int, str]]]]]:
        """Split units into pieces of at most ``chunk_size`` checks, and pieces into files.

        Units keep their order and each unit's checks go smallest first (by the length
        of the command; deterministic files). A check that takes Lean down (a reference
        that exhausts WASM's 4 GB on a huge input) then comes after its unit's smaller
        ones, and what it costs its unit (the same kind of check after it is not asked
        again) falls on the larger ones. A file holds at most
        ``tasks_per_file`` pieces and ``chunk_size`` checks in total. When a
        round needs several files, they get equal shares (``balanced_size``),
        so parallel workers finish together instead of one waiting on a remainder.
        """
        checks = [sorted(items, key=lambda item: len(item[2])) for items in checks]
        variants, checks = tiers(variants, checks)
        total = sum(len(items) for items in checks)
        limit = balanced_size(total, self.chunk_size, self.workers,
                              self.file_limits.split_checks if split is None else split)
        files: list[list[tuple[render.Variant, list[tuple[int, int, str]]]]] = []
        current: list[tuple[render.Variant, list[tuple[int, int, str]]]] = []
        size = 0
        for variant, items in zip(variants, checks, strict=True):
            at = 0
            while at < len(items):
                if size >= limit or len(current) >= self.tasks_per_file:
                    files.append(current)
                    current, size = [], 0
                # a unit may continue in the next file (its definitions are repeated there)
                take = min(limit - size, len(items) - at)
                current.append((variant, items[at : at + take]))
                size += take
                at += take
        if current:
            files.append(current)
        return files

    def _next_name(self) -> str:
        with self._lock:
            self._counter += 1
            return f"vs_{os.getpid()}_{id(self) & 0xFFFF:x}_{self._counter}.lean"

    def _run_file(
        self, pieces: list[tuple[render.Variant, list[tuple[int, int, str]]]]
    ) -> list[tuple[tuple[int, int], CheckOutput]]:
        """Run one file; if Lean stops early or times out, retry the checks it never reached.

        Lean can die mid-file with an ordinary exit status (the WASM module's
        memory cap, a stack overflow in some reduction), so "finished" means
        "the last unit's sentinel printed". The first unreached check is the
        likely culprit: it is reported (a crash as ``infrastructure``, a timeout
        as ``timeout``), and the checks after it go to a new file without it, so
        one bad check costs one check, not the chunk. A stop is blamed on its
        unit alone (each unit has ``crash_retries`` of them), and that unit goes
        last in the next file: a task whose checks keep stopping Lean (a huge
        literal in a reduction) costs its own checks only, never another
        candidate's. What a unit still had unreached when its retries ran out is
        ``infrastructure: ... (not retried)``: UNKNOWN, never the candidate's FAIL.
        """
        outs: list[tuple[tuple[int, int], CheckOutput]] = []
        live = LiveCount(sum(len(items) for _, items in pieces), self._notify)
        try:
            self._run_attempts(pieces, outs, live)
        finally:
            self._notify("done", 1, live.rest())
        return outs

    def _run_attempts(
        self, pieces: list[tuple[render.Variant, list[tuple[int, int, str]]]],
        outs: list[tuple[tuple[int, int], CheckOutput]], live: LiveCount | None = None,
    ) -> None:
        """Run ``pieces`` until every check has an answer (see :meth:`_run_file`).

        A stop (a crash, or a check over its time: compiled mode's ``check_seconds``)
        is blamed on the unit Lean was on, never on the file: each unit may stop Lean
        ``crash_retries`` times (``timeout_retries`` for timeouts) before its unreached
        checks are given up, and the other units' checks always go on. A check that
        stopped Lean also costs its function's checks that are no smaller (the length
        of the command: a larger input of an exponential specification, or of a
        reference that fills WASM's 4 GB, runs away too), in every later file of this
        backend (:meth:`_skip_stopped`). Only stops before Lean got past its start (Lean
        itself failing) count against the file: ``crash_retries`` of them in a row end
        it."""
        stops: dict[tuple[tuple[str, ...], bool], int] = {}  # per (unit, timed out)
        blind = 0  # stops in a row before Lean got past its start
        single: set[tuple[int, int]] = set()  # checks a batch failed: asked one by one
        literal: set[tuple[int, int]] = set()  # checks a data batch failed: as literals
        while pieces:
            pieces = self._skip_stopped(pieces, outs)
            if not pieces:
                break
            done, rest, stop = self._run_once(pieces, live, single, literal)
            outs.extend(done)
            if stop is None:
                pieces = rest  # units retried with compatibility names
                continue
            if stop.culprit is not None:
                outs.append(stop.culprit)
                self._remember_stop(stop)
            blind = blind + 1 if stop.blind else 0
            key = (stop.unit, stop.timed_out)
            stops[key] = stops.get(key, 0) + 1
            budget = self.timeout_retries if stop.timed_out else self.crash_retries
            out_of_budget = blind > self.crash_retries or stops[key] > budget
            if out_of_budget:
                why = stop.failure
                if stop.timed_out:
                    why = f"timeout: not run: {stops[key]} checks before it ran over their time"
                elif not why.startswith("infrastructure"):
                    why = f"infrastructure: {why}"
                gone = [(v, items) for v, items in rest
                        if blind > self.crash_retries or v.key == stop.unit]
                rest = [piece for piece in rest if not any(piece is g for g in gone)]
                outs.extend(((ji, idx), CheckOutput([], f"{why} (not retried)"))
                            for _, items in gone for ji, idx, _ in items)
            pieces = rest  # unreached checks

    def _remember_stop(self, stop: _Stop) -> None:
        """Keep the smallest check of each function that stopped Lean (see
        :meth:`_skip_stopped`)."""
        if stop.size is None:
            return
        self._stopped.remember((stop.unit, stop.kind), stop.size, (stop.timed_out, stop.failure))

    def _skip_stopped(self, pieces: list[tuple[render.Variant, list[tuple[int, int, str]]]],
                      outs: list[tuple[tuple[int, int], CheckOutput]],
                      ) -> list[tuple[render.Variant, list[tuple[int, int, str]]]]:
        """``pieces`` without the checks of a function no smaller than one of its checks
        that stopped Lean (each answered: UNKNOWN, with the stop's cause, so a crash
        still goes to the kernel fallback); a unit's others smallest first."""
        if not self._stopped:
            return pieces
        out: list[tuple[render.Variant, list[tuple[int, int, str]]]] = []
        for v, items in pieces:
            keep = []
            for item in items:
                why = self._stopped.covering((v.key, command_kind(item[2])), len(item[2]))
                if why is None:
                    keep.append(item)
                elif why[0]:
                    outs.append((item[:2], CheckOutput(
                        [], "timeout: not run: a check of this function no larger than it "
                            "ran over its time")))
                else:
                    outs.append((item[:2], CheckOutput(
                        [], f"{why[1]} (skipped: a check of this function no larger "
                            "than it stopped Lean)")))
            if len(keep) < len(items):
                keep.sort(key=lambda item: len(item[2]))
            if keep:
                out.append((v, keep))
        return out

    def _file_timeout(self, checks: int) -> float | None:
        """The runner's timeout, stretched for a file larger than it was sized for."""
        sized_for = self.file_limits.timeout_checks
        if not sized_for or checks <= sized_for:
            return None
        return self.runner.timeout * checks / sized_for

    def _compat_for(self, pieces: Sequence[tuple[render.Variant, Any]]) -> str:
        with self._lock:
            names = set().union(*(self.compat.get(v.task.id, set()) for v, _ in pieces))
        return compat.definitions(names)

    def _needs_compat(self, task: Task, errors: list[str]) -> bool:
        """Record compatibility names ``errors`` ask for; True if any is new for ``task``."""
        wanted = compat.needed(errors)
        with self._lock:
            have = self.compat.setdefault(task.id, set())
            new = wanted - have
            if not new:
                if not have:
                    del self.compat[task.id]
                return False
            have |= new
            self.stats.extra["compat"] = {t: sorted(n) for t, n in sorted(self.compat.items())}
        log.warning("%s: adding compatibility definitions for %s", task.id, ", ".join(sorted(new)))
        return True

    def _groups(self, items: list[tuple[int, int, str]], single: set[tuple[int, int]]
                ) -> list[list[int]]:
        """``items`` (of one unit) as the checks each Lean command answers: in compiled
        mode, up to ``batch_size`` batchable checks of one :func:`render.batch_key`
        become one command (classification alternates a syntax check and a decision,
        so a batch gathers its checks from the whole unit; each command is independent
        of the others, so their order is free); a check in ``single`` never joins one."""
        groups: list[list[int]] = []
        open_: dict[tuple[int, str, str], list[int]] = {}
        for k, (ji, idx, command) in enumerate(items):
            key = None if self.batch_size < 2 or (ji, idx) in single \
                else render.batch_key(command)
            if key is None:
                groups.append([k])
                continue
            group = open_.get(key)
            if group is None or len(group) >= self.batch_size:
                group = open_[key] = []
                groups.append(group)
            group.append(k)
        return groups

    def _helper_key(self, variant: render.Variant, command: str) -> tuple[Any, ...]:
        return (variant.key, render.batch_key(command))

    def _batch(self, variant: render.Variant, commands: list[str], index: int,
               literal: bool = False) -> tuple[str, int, int | None, bool]:
        """One command for a batch of checks: (text, line of its first term, number of
        lines of its helper definition, None without one; whether its values go as
        data). Through a helper (:func:`render.helper_batch`) unless that failed before
        for this unit and kind of check; its values as data unless ``literal`` or that
        failed before likewise."""
        key = self._helper_key(variant, commands[0])
        if self.helpers and key not in self._no_helper:
            made = render.helper_batch(commands, self.max_heartbeats, variant.task.signature,
                                       index, data=self.data and not literal
                                       and key not in self._no_data)
            if made is not None:
                return made[0], made[1], 2, made[2]
        text, offset = render.batch_command(commands, self.max_heartbeats)
        return text, offset, None, False

    def _run_once(
        self, pieces: list[tuple[render.Variant, list[tuple[int, int, str]]]],
        live: LiveCount | None = None,
        single: set[tuple[int, int]] | None = None,
        literal: set[tuple[int, int]] | None = None,
    ) -> tuple[list[tuple[tuple[int, int], CheckOutput]],
               list[tuple[render.Variant, list[tuple[int, int, str]]]],
               tuple[tuple[int, int], CheckOutput] | None]:
        """Run ``pieces`` in one file: the checks answered, those to ask again, and
        the check that stopped Lean (if one did). Checks of a batch that gave no clean
        answer are asked again, each on its own (they join ``single``); checks of a batch
        whose values went as data and gave no clean answer are asked again in a batch of
        literals (they join ``literal``)."""
        single = set() if single is None else single
        literal = set() if literal is None else literal
        grouped = [self._groups(items, single) for _, items in pieces]
        batches = [[self._batch(v, [items[k][2] for k in g], gi,
                                any(items[k][:2] in literal for k in g))
                    if len(g) > 1 else None
                    for gi, g in enumerate(groups)]
                   for (v, items), groups in zip(pieces, grouped, strict=True)]
        units = [
            render.Unit(render.namespace_for(v.task.id, i), v,
                        [items[g[0]][2] if b is None else b[0]
                         for g, b in zip(groups, batches[i], strict=True)])
            for i, ((v, items), groups) in enumerate(zip(pieces, grouped, strict=True))
        ]
        # A kernel-mode file imports only what its tasks do, unless a Lean session serves
        # it: the session's loop is Lean's frontend, which needs Lean and (on WASM) the
        # compiled-evaluation prelude in the base. (The real-Lean tests compare kernel
        # and compiled answers; compiled mode has always had both.)
        served = self.runner.sessions
        prelude = "" if self.kernel and not served else self.runner.compiled_prelude()
        if self.data:
            prelude = "\n\n".join(p for p in (prelude, data_route.PRELUDE) if p)
        layout = render.layout_file(units, kernel=self.kernel, max_heartbeats=self.max_heartbeats,
                                    allow_import=self._allow_import, prelude=prelude,
                                    local_prelude=self._compat_for(pieces),
                                    imports=() if self.kernel and not served
                                    else self.runner.compiled_imports)
        name = self._next_name()  # the unit writes the file wherever it runs
        start = time.monotonic()
        on_line = None
        if live is not None and not is_remote(self.executor):
            on_line = live.attempt(sorted(lines[0] for ui, unit in enumerate(layout.checks)
                                          for gi, lines in enumerate(unit)
                                          for _ in grouped[ui][gi]))
        self._concurrency(+1)
        try:
            got = self.executor.map(
                run_prover_file, [ProverFile(self.runner, name, layout.text, self.keep_files,
                                             toolchain=self.runner.identity(),
                                             timeout=self._file_timeout(
                                                 sum(len(i) for _, i in pieces)),
                                             on_line=on_line)],
                resources=LEAN_UNIT)[0]
        finally:
            self._concurrency(-1)
        if isinstance(got, UnitFailure):  # the runner or its worker failed: no answers
            log.error("Lean file %s not checked: %s", name, got.error)
            failed = LeanProcessResult([], None, stderr=got.error)
            self._account(failed, sum(len(items) for _, items in pieces),
                          time.monotonic() - start, crashed=True)
            return ([((ji, idx), CheckOutput([], got.error, [], [], layout.dropped_imports))
                     for _, items in pieces for ji, idx, _ in items], [], None)
        result = got
        att = render.attribute(layout, result.messages)

        def answer_line(ui: int, gi: int) -> int:
            """Where the check's answer is printed. A batch's helper definition comes
            first and prints too (its ``sorry`` warning): Lean past the helper has not
            yet answered the batch."""
            batch = batches[ui][gi]
            helper_lines = 0 if batch is None else batch[2] or 0
            return layout.checks[ui][gi][0] + helper_lines

        # A timeout or a crash leaves later checks unreached; both are retried.
        stopped = result.timed_out or not att.sentinel_seen[-1]
        if result.timed_out:
            frontier = max((m.line for m in result.messages), default=0)
            failure = "timeout"
        elif stopped:
            frontier = max((m.line for m in result.messages), default=0)
            tail = (result.stderr.strip().splitlines() or result.other_output or [""])[-1]
            failure = ("infrastructure: Lean stopped after line "
                       f"{frontier} of {len(layout.text.splitlines())}"
                       f" (exit {result.returncode}) {tail[:200]}").strip()
        else:
            frontier, failure = 0, result.failure
            if failure.startswith("crash"):  # Lean died: the checker failed, not the candidate
                failure = "infrastructure: Lean " + failure
        self._account(result, sum(len(items) for _, items in pieces), time.monotonic() - start,
                      crashed=stopped and not result.timed_out)
        log.info("Lean file %s: %d checks of %d units, %.0fs, %s", name,
                 sum(len(i) for _, i in pieces), len(pieces), result.seconds,
                 failure or f"exit {result.returncode}")
        header_errors = [m.text for m in att.header if m.is_error]
        done: list[tuple[tuple[int, int], CheckOutput]] = []
        rest: list[tuple[render.Variant, list[tuple[int, int, str]]]] = []
        culprit: tuple[tuple[int, int], CheckOutput] | None = None
        culprit_kind: tuple[int, str] | None = None
        unbatched = rebatched = 0
        batch_blamed = False  # Lean stopped in a batch: its checks go singly, no culprit
        for ui, (variant, items) in enumerate(pieces):
            def_errors = [m.text if m.is_error else f"error: {m.text}"
                          for m in att.definitions[ui] if m.is_error or USES_SORRY.search(m.text)]
            own = set(variant.imports())  # another unit's missing imports are not this one's
            dropped = [m for m in layout.dropped_imports if m in own]
            if def_errors and self._needs_compat(variant.task, def_errors):
                rest.append((variant, list(items)))  # again, with the missing names defined
                continue
            left: list[tuple[int, int, str]] = []
            for gi, group in enumerate(grouped[ui]):
                first_line_of_check = layout.checks[ui][gi][0]
                messages = att.checks[ui][gi]
                if len(group) > 1:  # a batch: split its answer, or ask its checks singly
                    unreached = stopped and answer_line(ui, gi) > frontier
                    if unreached and (culprit is not None or batch_blamed):
                        left += [items[k] for k in group]  # unreached, not suspect
                        continue
                    batch_blamed = batch_blamed or unreached
                    offset = batches[ui][gi][1]  # type: ignore[index]
                    helper = batches[ui][gi][2]  # type: ignore[index]
                    as_data = batches[ui][gi][3]  # type: ignore[index]
                    answers = [None] * len(group) if unreached else batch_answers(
                        messages, first_line_of_check + offset, len(group),
                        checked=(render.batch_key(items[group[0]][2]) or (0, "", ""))[1]
                        == "check")
                    if helper is not None and any(
                            m.is_error and m.line < first_line_of_check + helper
                            for m in messages):
                        # the helper did not elaborate (no instance over free variables):
                        # the same checks again, batched term by term
                        with self._lock:
                            self._no_helper.add(self._helper_key(variant, items[group[0]][2]))
                        answers = [()] * len(group)
                    elif as_data and not unreached and (
                            (erred := any(m.is_error for m in messages))
                            or data_failed(messages)):
                        # the values as data did not reach the helper (an error of the
                        # batch, a decoding that failed): again as literals, which say
                        # which check it was; an error keeps this unit's kind on literals.
                        # (A check that panicked leaves the others unclean too: asked
                        # singly, as a batch of literals would be.)
                        if erred:
                            with self._lock:
                                self._no_data.add(self._helper_key(variant,
                                                                   items[group[0]][2]))
                        literal.update(items[k][:2] for k in group)
                        answers = [()] * len(group)
                    for k, answer in zip(group, answers, strict=True):
                        ji, idx, _ = items[k]
                        if answer is None:  # ask again, on its own
                            single.add((ji, idx))
                            left.append(items[k])
                            unbatched += 1
                        elif answer == ():  # ask again, in a batch without the failed terms
                            left.append(items[k])
                            rebatched += 1
                        else:
                            done.append(((ji, idx), CheckOutput(list(answer), "", def_errors,
                                                                header_errors, dropped)))
                    continue
                item = items[group[0]]
                ji, idx, command = item
                if stopped and first_line_of_check > frontier:
                    if batch_blamed:
                        left.append(item)
                    elif culprit is None:
                        culprit = ((ji, idx), CheckOutput([], failure, def_errors, header_errors,
                                                          dropped))
                        culprit_kind = (ui, command_kind(command))
                    elif culprit_kind == (ui, command_kind(command)) \
                            and self._skips_alike(culprit_kind[1], False) \
                            and (not result.timed_out or "decide" not in culprit_kind[1]):
                        # The same implementation on another input would most likely
                        # take Lean down again (see _skips_alike), so it is not retried.
                        what = "timed out" if result.timed_out else "crashed Lean"
                        done.append(((ji, idx), CheckOutput(
                            [], f"{failure} (skipped: the same kind of check {what})",
                            def_errors, header_errors, dropped)))
                    else:
                        left.append(item)
                    continue
                done.append(((ji, idx), CheckOutput(messages, failure if not stopped
                                                    else "", def_errors, header_errors,
                                                    dropped)))
            if left:
                rest.append((variant, left))
        if unbatched or rebatched:
            with self._lock:
                for key, n in (("unbatched", unbatched), ("rebatched", rebatched)):
                    self.stats.extra[key] = self.stats.extra.get(key, 0) + n
        if not stopped:
            return done, rest, None
        # which task's check Lean was on (a slow run is diagnosed by these)
        at = next(((ui, gi) for ui, unit in enumerate(layout.checks)
                   for gi in range(len(unit)) if answer_line(ui, gi) > frontier), None)
        if at is not None:
            ui, gi = at
            command = pieces[ui][1][grouped[ui][gi][0]][2]
            log.info("Lean file %s stopped (%s) on a check of %s: %s, %d characters%s",
                     name, failure.split(":")[0], pieces[ui][0].task.id,
                     command_kind(command), len(command),
                     f" (a batch of {len(grouped[ui][gi])})" if len(grouped[ui][gi]) > 1 else "")
        # blamed: the unit of the check Lean was on (a crash after the last check: the last)
        suspect = pieces[culprit_kind[0] if culprit_kind is not None
                         else at[0] if at is not None else len(pieces) - 1][0]
        # The unit that stopped Lean goes last in the retry: if another of its checks
        # stops Lean again, every other unit's checks are answered first, so one task's
        # crash never leaves another task's checks unknown.
        rest.sort(key=lambda piece: piece[0] is suspect)
        size = kind = None
        if culprit is not None and culprit_kind is not None \
                and self._skips_alike(culprit_kind[1], result.timed_out):
            command = next(c for v, items in pieces for ji, idx, c in items
                           if (ji, idx) == culprit[0])
            size, kind = len(command), culprit_kind[1]
        return done, rest, _Stop(suspect.key, result.timed_out, failure,
                                 blind=not att.ready, culprit=culprit,
                                 kind=kind or "", size=size)

    def _skips_alike(self, kind: str, timed_out: bool) -> bool:
        """Does a check of ``kind`` that stopped Lean cost its function's checks that
        are no smaller? Always after a timeout; after a crash, unless it is a decision
        that the kernel is not asked next (kernel mode, or no kernel fallback): the same
        implementation on a larger input (reference code is what fills memory) would
        most likely take Lean down again, and in compiled mode the kernel is asked
        instead."""
        return timed_out or "decide" not in kind or not (self.kernel or not self.kernel_fallback)

    def _concurrency(self, step: int) -> None:
        """Count wall seconds by how many Lean files ran at once
        (``backend_stats.concurrency``: were both cores busy?)."""
        with self._lock:
            now = time.monotonic()
            if self._running:
                per = self.stats.extra.setdefault("concurrency", {})
                key = str(self._running)
                per[key] = round(per.get(key, 0.0) + now - self._running_since, 3)
            self._running += step
            self._running_since = now

    def _account(self, result: LeanProcessResult, checks: int, seconds: float, crashed: bool) -> None:
        with self._lock:
            self._account_locked(result, checks, seconds, crashed)

    def _account_locked(self, result: LeanProcessResult, checks: int, seconds: float,
                        crashed: bool) -> None:
        self.stats.processes += 1  # files (with sessions, some served: see served_files)
        self.stats.checks += checks
        if self.runner.sessions:
            self._count_served_locked(int(result.served))
        self.stats.seconds += seconds
        self.stats.extra["files"] += 1
        if result.timed_out:
            self.stats.extra["timeouts"] += 1
        elif result.crashed or crashed:
            self.stats.extra["crashes"] += 1

    def _count_served_locked(self, served: int) -> None:
        """Add ``served`` files a Lean session served, and count every session started for
        this backend, its kernel fallback's included (base.prover_processes)."""
        extra = self.stats.extra
        extra["served_files"] = extra.get("served_files", 0) + served
        kernel = self._kernel_backend
        extra["session_starts"] = self.runner.session_starts() + (
            0 if kernel is None else kernel.runner.session_starts())

    def _run_plans(self, plans: Sequence[Plan],
                   early: Callable[[list[tuple[int, int, Any]]], None] | None = None
                   ) -> list[list[Any]]:
        """Each plan's answers; ``early`` is told ``(plan, item, answer)`` as files and
        rounds settle items, before the batch ends (see :class:`EarlyAnswers`)."""
        live = [pi for pi, p in enumerate(plans) if p.variant is not None and p.commands]
        jobs = [(plans[pi].variant, plans[pi].commands) for pi in live]
        on_file = None if early is None else EarlyAnswers(plans, live, early).on_file
        outs = iter(self._execute(jobs, on_file=on_file))
        answers: list[list[Any]] = []
        for p in plans:
            got = next(outs) if p.variant is not None and p.commands else []
            answers.append([p.answer(s, got) for s in p.slots])
        return answers

    # ------------------------------------------------------------ plan builders

    def _plan_items(
        self, variant: render.Variant | None, items: Sequence[Any],
        command: Callable[[Any], str], finish: Callable[[CheckOutput], Any],
        on_bad: Callable[[str], Any],
    ) -> Plan:
        commands: list[str] = []
        slots: list[Slot] = []
        for item in items:
            try:
                text = command(item)
            except Exception as exc:  # an ill-typed value: that item fails, not the call
                slots.append(done_slot(on_bad(f"ill_typed: {exc}")))
                continue
            slots.append(cmd_slot(len(commands)))
            commands.append(text)
        return Plan(variant, commands, slots, finish)

    def _lean_task(self, task: Task) -> str | None:
        """``unsupported: ...`` when the task cannot be checked in Lean at all."""
        if lean_sections(task) is None:
            return f"unsupported: {task.id}: task has no Lean sections"
        return None

    def _spec_problem(self, spec: Spec | None, task: Task | None = None) -> str | None:
        """``compile: ...`` (the screen rejects it) or ``unsupported: ...`` (its imports
        are missing here), else ``None``."""
        if spec is None:
            return None
        for name, body in (("precondition", spec.precond), ("postcondition", spec.postcond)):
            if body is not None and not body.strip():  # VERINA renders `:=` with nothing
                return f"compile: empty {name} (an empty body does not compile in VERINA)"
        for name, text, kind in (("precond", spec.precond, "term"),
                                 ("postcond", spec.postcond, "term"),
                                 ("precond_aux", spec.precond_aux, "commands"),
                                 ("postcond_aux", spec.postcond_aux, "commands")):
            if text:
                why = check_untrusted_lean(text, kind)
                if why:
                    return f"compile: spec {name}: {why}"
        why = _imports_problem(spec.imports, task)
        if why:
            return f"compile: spec imports: {why}"
        bad = [m for m in render.import_lines(spec.imports) if not self._allow_import(m)]
        if bad:
            return f"unsupported: spec imports unavailable here: {', '.join(bad)}"
        return None

    def _plan_check_inputs(self, task: Task, inputs: Sequence[Input]) -> Plan:
        bad = self._lean_task(task)
        if bad:
            return Plan(None, [], [done_slot(bad) for _ in inputs], check_answer)
        return self._plan_items(
            render.Variant(task), inputs,
            lambda inp: render.check_command(render.precond_term(task, inp)),
            check_answer, lambda why: why)

    def _plan_decide(self, task: Task, spec: Spec | None, inputs: Sequence[Input]) -> Plan:
        problem = self._lean_task(task) or self._spec_problem(spec, task)
        variant = None if problem else render.Variant(task, spec=spec)
        plan = self._plan_items(
            variant, inputs,
            lambda inp: render.decide_command(render.precond_term(task, inp), self.kernel),
            bool_answer, lambda why: (None, why))
        if problem:
            plan.slots = [done_slot((None, problem)) for _ in inputs]
            plan.commands = []
        return plan

    def _plan_classify(self, task: Task, inputs: Sequence[Input]) -> Plan:
        """Syntax filter and ``decide`` in one file: two commands per input.

        The ``#check`` tells an ill-typed input (its error sits on the check's
        own lines) from an undecidable one, so classification costs one Lean
        round instead of two.
        """
        problem = self._lean_task(task)
        if problem:
            return Plan(None, [], [done_slot((None, problem)) for _ in inputs], bool_answer)
        commands: list[str] = []
        slots: list[Slot] = []
        # Compiled mode with batch helpers: the decision alone, whose term's elaboration
        # error says the input is ill-typed (classify_decision_answer); the syntax
        # filter's #check was half the checks of a classification and, over all 189
        # VERINA tasks (103,269 candidates), rejected none.
        folded = not self.kernel and self.helpers and self.batch_size > 1
        for inp in inputs:
            try:
                term = render.precond_term(task, inp)
            except Exception as exc:  # an ill-typed value: that input fails, not the call
                slots.append(done_slot((None, f"ill_typed: {exc}")))
                continue
            if folded:
                slots.append(("cmd", len(commands)))
                commands.append(render.decide_command(term, self.kernel))
                continue
            slots.append(("cmds", (len(commands), len(commands) + 1)))
            commands += [render.check_command(term), render.decide_command(term, self.kernel)]
        return Plan(render.Variant(task), commands, slots,
                     classify_decision_answer if folded else bool_answer, classify_answer)

    def _plan_post(
        self, task: Task, spec: Spec | None, pairs: Sequence[tuple[Input, Any]]
    ) -> Plan:
        problem = self._lean_task(task) or self._spec_problem(spec, task)
        variant = None if problem else render.Variant(task, spec=spec)
        plan = self._plan_items(
            variant, pairs,
            lambda pair: render.decide_command(render.postcond_term(task, pair[0], pair[1], self.kernel),
                                               self.kernel),
            bool_answer, lambda why: (None, why))
        if problem:
            plan.slots = [done_slot((None, problem)) for _ in pairs]
            plan.commands = []
        return plan

    def _plan_run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]) -> Plan:
        problem = self._lean_task(task) or _impl_problem(impl, task)
        ret = task.signature.return_type
        if problem:
            return Plan(None, [], [done_slot(Outcome(False, error=problem)) for _ in inputs],
                         lambda o: None)
        variant = render.Variant(task, impl=impl)
        with_proof = variant.code_needs_proof()
        kernel = self.kernel

        def finish(out: CheckOutput) -> Outcome:
            got = value_outcome(out, ret, kernel)
            if impl is None and got.kind is FailureKind.COMPILE:
                # The ground truth builds where it was written: here, this Lean cannot
                # run it (another version, a missing library), which says nothing of it.
                return Outcome(False, error="unsupported: the reference does not build here: "
                               + got.error.split(":", 1)[1].strip())
            return got

        return self._plan_items(
            variant, inputs,
            lambda inp: render.value_command(render.call_term(task, inp, with_proof, kernel), ret,
                                               kernel),
            finish, lambda why: Outcome(False, error=why))

    def _plan_test(self, task: Task, impl: Implementation | None,
                   pairs: Sequence[tuple[Input, Any]]) -> Plan:
        """Code tests compared in Lean, as VERINA's ``#guard F args == expected``."""
        problem = self._lean_task(task) or _impl_problem(impl, task)
        if problem:
            return Plan(None, [], [done_slot(Outcome(False, error=problem)) for _ in pairs],
                         lambda o: None)
        variant = render.Variant(task, impl=impl)
        with_proof = variant.code_needs_proof()
        ret = task.signature.return_type
        kernel = self.kernel

        def command(pair: tuple[Input, Any]) -> str:
            call = render.call_term(task, pair[0], with_proof, kernel)
            return render.equality_command(call, render.value_text(ret, pair[1]), kernel)

        return self._plan_items(variant, pairs, command, equality_outcome,
                                lambda why: Outcome(False, error=why))

    def _plan_plausible(self, task: Task, inputs: Sequence[Input]) -> Plan:
        """Two examples per input, ``P`` and ``¬P``, as upstream's stage 2."""
        name = f"{task.signature.name}_precond"
        cmds: list[str] = []
        for inp in inputs:
            term = render.precond_term(task, inp)
            cmds.append(render.plausible_command(f"({term})", name, postcond=False))
            cmds.append(render.plausible_command(f"¬ ({term})", name, postcond=False))
        return Plan(render.Variant(task), cmds, [cmd_slot(i) for i in range(len(cmds))],
                     plausible_answer)

    # ------------------------------------------------------------ batch operations

    def evaluate_many(self, requests: Sequence[tuple[str, tuple[Any, ...]]]) -> list[list[Any]]:
        """Answer requests of mixed kinds in as few Lean files as possible.

        ``requests`` are ``(operation, args)`` with the protocol's arguments, e.g.
        ``("classify", (task, inputs))``; the answers are what the protocol
        method would return, one list per request.
        """
        builders = self._builders()
        plans = []
        for op, args in requests:
            if op not in builders:
                raise ValueError(f"unknown operation {op!r}; choose {', '.join(builders)}")
            plans.append(builders[op](*args))
        early = None
        if self.on_answers is not None:
            hook = self.on_answers

            def early(told: list[tuple[int, int, Any]]) -> None:
                notify_answers(hook, [(requests[ri][1], i, protocol_answer(requests[ri][0], a))
                                      for ri, i, a in told])

        answers = self._run_plans(plans, early)
        if not self.kernel and self.kernel_fallback:
            self._ask_the_kernel(requests, answers, early)
        out: list[list[Any]] = []
        undecided: list[tuple[int, Task, list[int]]] = []
        open_specs: list[tuple[int, list[int]]] = []
        for ri, ((op, args), ans) in enumerate(zip(requests, answers, strict=True)):
            out.append([protocol_answer(op, a) for a in ans])
            if op in ("precondition_holds", "postcondition_holds"):
                todo = [i for i, (b, why) in enumerate(ans)
                        if b is None and not why.startswith(("ill_typed", "compile",
                                                             "unsupported"))]
                if args[1] is not None and todo and lean_sections(args[0]) is not None:
                    open_specs.append((ri, todo))
            elif op == "classify":
                todo = [i for i, (b, why) in enumerate(ans)
                        if b is None and not why.startswith("ill_typed") and lean_sections(args[0]) is not None]
                if todo:
                    undecided.append((ri, args[0], todo))
        if undecided:
            self._plausible_stage(undecided, requests, out)
        if open_specs and self.runner.supports_plausible:
            self._spec_plausible_stage(open_specs, requests, out)
        with self._lock:
            for ri, ((op, args), ans, got) in enumerate(zip(requests, answers, out, strict=True)):
                if op in ("precondition_holds", "postcondition_holds"):
                    unknown = [v is Verdict.UNKNOWN for v in got]
                    why = [w if u else "" for (_, w), u in zip(ans, unknown, strict=True)]
                    self.stats.count_unknowns(op, args[1], [
                        w for w, u in zip(why, unknown, strict=True) if u])
                    out[ri] = Verdicts(got, why)
        return out

    def _builders(self) -> dict[str, Callable[..., Plan]]:
        """Each operation's plan builder (in this backend's mode)."""
        return {
            "check_inputs": self._plan_check_inputs,
            "classify": self._plan_classify,
            "precondition_holds": self._plan_decide,
            "postcondition_holds": self._plan_post,
            "run": self._plan_run,
            "test_outputs": self._plan_test,
            "compile": self._plan_compile,
        }

    def _ask_the_kernel(self, requests: Sequence[tuple[str, tuple[Any, ...]]],
                        answers: list[list[Any]],
                        early: Callable[[list[tuple[int, int, Any]]], None] | None) -> None:
        """Ask kernel reduction what compiled evaluation could not answer because it
        took Lean down (on WASM, string code of verina_advanced_71's postcondition
        stops the process), in place in ``answers``. Kernel mode is the other faithful
        route (the real-Lean tests show both agree wherever both decide); what it
        cannot decide either keeps compiled mode's reason."""
        def crashed(raw: Any) -> bool:
            why = raw.error if isinstance(raw, Outcome) else raw[1] if isinstance(raw, tuple) \
                else ""
            return (not isinstance(raw, Outcome) or not raw.ok) and isinstance(why, str) \
                and why.startswith("infrastructure: Lean stopped")

        where: list[tuple[int, list[int]]] = []
        for ri, ((op, _), ans) in enumerate(zip(requests, answers, strict=True)):
            idx = [i for i, raw in enumerate(ans) if crashed(raw)] if op != "compile" else []
            if idx:
                items = requests[ri][1][-1]
                # smallest first: the ones kernel reduction is likeliest to finish
                where.append((ri, sorted(idx, key=lambda i, items=items: len(repr(items[i])))))
        if not where:
            return
        # Rounds of growing size, smallest checks first: 2 of each request's crashed
        # checks, then the next 4, 8, ... (2, not 8: a function the kernel cannot
        # finish either costs its first round's checks the whole heartbeat ladder,
        # about 90 s each on WASM; 8 of them held files for 676 s and 733 s on the 189
        # VERINA tasks). A request goes on to its next round only
        # where the kernel decided at least half of this one; the rest keep compiled
        # mode's reason instead of climbing the heartbeat ladder one by one. One small
        # check decided says little about the long ones: verina_advanced_27's string
        # LCS decided its shortest and held a Lean process for 20 min on the rest, and
        # verina_advanced_3's all-subsequences postcondition decided its smallest
        # pairs and then spent more than 16 min per file on the large ones. Nor does it go
        # on where a check of the round ran out of the full heartbeat budget: the next
        # round's checks are no smaller, and each round's scouts would climb the whole
        # ladder again (verina_advanced_52's precondition enumerates up to k = 2^32:
        # four minutes a round).
        given_up = 0
        size = KERNEL_SAMPLE
        while where:
            decided, exhausted = self._kernel_round(requests, answers, early,
                                                    [(ri, idx[:size]) for ri, idx in where])
            going: list[tuple[int, list[int]]] = []
            for ri, idx in where:
                left = idx[size:]
                if not left:
                    continue
                if 2 * decided.get(ri, 0) >= size and ri not in exhausted:
                    going.append((ri, left))
                else:
                    given_up += len(left)
            where, size = going, 2 * size
        if given_up:
            with self._lock:
                row = self.stats.extra["kernel_fallback"]  # made by the first round
                row["not_asked"] = row.get("not_asked", 0) + given_up

    def _kernel_round(self, requests: Sequence[tuple[str, tuple[Any, ...]]],
                      answers: list[list[Any]],
                      early: Callable[[list[tuple[int, int, Any]]], None] | None,
                      where: list[tuple[int, list[int]]]) -> tuple[dict[int, int], set[int]]:
        """One kernel-reduction round over ``where`` (request, item indices), in place
        in ``answers``; per request, how many of its checks it decided, and the requests
        where one ran out of the full heartbeat budget."""
        kernel = self._kernel()
        before = (kernel.stats.processes, kernel.stats.checks, kernel.stats.seconds,
                  kernel.stats.extra.get("served_files", 0))
        builders = kernel._builders()
        kplans = []
        for ri, idx in where:
            op, args = requests[ri]
            kplans.append(builders[op](*args[:-1], [args[-1][i] for i in idx]))
        got = kernel._run_plans(kplans)
        decided = 0
        decided_in: dict[int, int] = {}
        exhausted: set[int] = set()
        told: list[tuple[int, int, Any]] = []
        for (ri, idx), kans in zip(where, got, strict=True):
            for i, raw in zip(idx, kans, strict=True):
                ok = raw.ok or not raw.inconclusive if isinstance(raw, Outcome) \
                    else raw[0] is not None or str(raw[1]).startswith("ill_typed")
                why = raw.error if isinstance(raw, Outcome) else raw[1]
                if not ok and "maxHeartbeats" in str(why or ""):
                    exhausted.add(ri)
                if ok:
                    answers[ri][i] = raw
                    decided += 1
                    decided_in[ri] = decided_in.get(ri, 0) + 1
                    told.append((ri, i, raw))
        if early is not None and told:
            early(told)
        with self._lock:
            ks = kernel.stats
            processes = ks.processes - before[0]
            self.stats.processes += processes
            self.stats.checks += ks.checks - before[1]
            self.stats.seconds += ks.seconds - before[2]
            if self.runner.sessions:  # the kernel's served files are among those processes
                self._count_served_locked(ks.extra.get("served_files", 0) - before[3])
            row = self.stats.extra.setdefault(
                "kernel_fallback", {"asked": 0, "decided": 0, "rounds": 0, "files": 0})
            row["asked"] += sum(len(idx) for _, idx in where)
            row["decided"] += decided
            row["rounds"] += 1
            # how the processes above split: compiled files are ``files``, these are not
            row["files"] += processes
        return decided_in, exhausted

    def _kernel(self) -> LeanBackend:
        """The kernel-mode backend the fallback asks, one for this backend's life (its
        Lean sessions and stop memory serve every round); with this backend's
        compatibility names."""
        with self._lock:
            if self._kernel_backend is None:
                kernel = LeanBackend(copy.copy(self.runner), mode="kernel", workers=self.workers,
                                     executor=self.executor, max_heartbeats=self.max_heartbeats,
                                     crash_retries=self.crash_retries)
                kernel.runner.stall_seconds = None  # heartbeats bound kernel reduction
                if self._stop_store is not None:
                    kernel.keep_stops(*self._stop_store)
                self._kernel_backend = kernel
            self._kernel_backend.compat = {k: set(v) for k, v in self.compat.items()}
            return self._kernel_backend

    @property
    def plausible_unavailable(self) -> str:
        """Why VERINA's Plausible stage cannot run here ("" when it can)."""
        if self.runner.supports_plausible:
            return ""
        return f"Plausible is not available on the {self.runner.name} runner"

    def _spec_plausible_stage(self, open_specs: list[tuple[int, list[int]]],
                              requests: Sequence[tuple[str, tuple[Any, ...]]],
                              out: list[list[Any]]) -> None:
        """VERINA's stage 2 for candidate specs: Plausible on the claim and on its
        negation, with VERINA's parameters, where decide gave no answer."""
        plans = []
        for ri, todo in open_specs:
            op, (task, spec, items) = requests[ri]
            post = op == "postcondition_holds"
            name = f"{task.signature.name}_{'postcond' if post else 'precond'}"
            cmds: list[str] = []
            slots: list[Slot] = []
            for i in todo:
                try:
                    term = (render.postcond_term(task, items[i][0], items[i][1]) if post
                            else render.precond_term(task, items[i]))
                except Exception as exc:  # an ill-typed item stays unknown
                    slots += [done_slot(f"ill_typed: {exc}")] * 2
                    continue
                for prop in (f"({term})", f"¬ ({term})"):
                    slots.append(cmd_slot(len(cmds)))
                    cmds.append(render.plausible_command(prop, name, postcond=post))
            plans.append(Plan(render.Variant(task, spec=spec), cmds, slots,
                               verina_plausible_answer))
        answers = self._run_plans(plans)
        for (ri, todo), ans in zip(open_specs, answers, strict=True):
            for k, i in enumerate(todo):
                out[ri][i] = plausible_verdict(ans[2 * k], ans[2 * k + 1])

    def _plausible_stage(
        self, undecided: list[tuple[int, Task, list[int]]],
        requests: Sequence[tuple[str, tuple[Any, ...]]], out: list[list[Any]],
    ) -> None:
        """Stage 2 on inputs decide left open; where Plausible is missing, say so."""
        if not self.runner.supports_plausible:
            for ri, _task, todo in undecided:
                for i in todo:
                    c = out[ri][i]
                    out[ri][i] = Classification(
                        Label.UNKNOWN, "decide",
                        f"{c.detail}; plausible stage skipped: Plausible is not available "
                        f"on the {self.runner.name} runner")
            return
        plans = []
        for ri, task, todo in undecided:
            inputs = requests[ri][1][1]
            plans.append(self._plan_plausible(task, [inputs[i] for i in todo]))
        answers = self._run_plans(plans)
        for (ri, _task, todo), ans in zip(undecided, answers, strict=True):
            for k, i in enumerate(todo):
                pos, neg = ans[2 * k], ans[2 * k + 1]
                if neg == "counterexample" and pos != "counterexample":
                    out[ri][i] = Classification(Label.EXPECTED, "plausible")
                elif pos == "counterexample" and neg != "counterexample":
                    out[ri][i] = Classification(Label.UNEXPECTED, "plausible")
                else:
                    out[ri][i] = Classification(
                        Label.UNKNOWN, "plausible",
                        f"{out[ri][i].detail}; plausible: P {pos}, not-P {neg}")

    def test_outputs(self, task: Task, impl: Implementation | None,
                     pairs: Sequence[tuple[Input, Any]]) -> list[Outcome]:
        """Per (input, expected): ``Outcome(True, value=<equal?>)`` with the equality
        decided by Lean's ``==`` (VERINA's code tests), or why there is no answer."""
        return self.evaluate_many([("test_outputs", (task, impl, pairs))])[0]

    def test_outputs_many(
        self, jobs: Sequence[tuple[Task, Implementation | None, Sequence[tuple[Input, Any]]]]
    ) -> list[list[Outcome]]:
        return self.evaluate_many([("test_outputs", j) for j in jobs])

    def check_inputs_many(self, jobs: Sequence[tuple[Task, Sequence[Input]]]
                          ) -> list[list[str | None]]:
        return self.evaluate_many([("check_inputs", j) for j in jobs])

    def classify_many(self, jobs: Sequence[tuple[Task, Sequence[Input]]]
                      ) -> list[list[Classification]]:
        return self.evaluate_many([("classify", j) for j in jobs])

    def run_many(self, jobs: Sequence[tuple[Task, Implementation | None, Sequence[Input]]]
                 ) -> list[list[Outcome]]:
        return self.evaluate_many([("run", j) for j in jobs])

    def precondition_holds_many(self, jobs: Sequence[tuple[Task, Spec | None, Sequence[Input]]]
                                ) -> list[list[Verdict]]:
        return self.evaluate_many([("precondition_holds", j) for j in jobs])

    def postcondition_holds_many(
        self, jobs: Sequence[tuple[Task, Spec | None, Sequence[tuple[Input, Any]]]]
    ) -> list[list[Verdict]]:
        return self.evaluate_many([("postcondition_holds", j) for j in jobs])

    # ------------------------------------------------------------ the protocol

    def check_inputs(self, task: Task, inputs: Sequence[Input]) -> list[str | None]:
        return self.evaluate_many([("check_inputs", (task, inputs))])[0]

    def classify(self, task: Task, inputs: Sequence[Input]) -> list[Classification]:
        return self.evaluate_many([("classify", (task, inputs))])[0]

    def run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]
            ) -> list[Outcome]:
        return self.evaluate_many([("run", (task, impl, inputs))])[0]

    def precondition_holds(self, task: Task, spec: Spec | None, inputs: Sequence[Input]
                           ) -> list[Verdict]:
        return self.evaluate_many([("precondition_holds", (task, spec, inputs))])[0]

    def postcondition_holds(self, task: Task, spec: Spec | None,
                            pairs: Sequence[tuple[Input, Any]]) -> list[Verdict]:
        return self.evaluate_many([("postcondition_holds", (task, spec, pairs))])[0]

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        """``None`` when the code/spec elaborates next to the task's definitions."""
        return self.compile_many([(task, impl, spec)])[0]

    def compile_many(
        self, jobs: Sequence[tuple[Task, Implementation | None, Spec | None]]
    ) -> list[str | None]:
        """Compile many candidates at once (one file for all of them, chunk limits allowing)."""
        return [r[0] for r in self.evaluate_many([("compile", j) for j in jobs])]

    def _plan_compile(self, task: Task, impl: Implementation | None = None,
                      spec: Spec | None = None) -> Plan:
        problem = (self._lean_task(task) or self._spec_problem(spec, task)
                   or _impl_problem(impl, task))
        if problem:
            return Plan(None, [], [done_slot(problem)], compile_answer)
        variant = render.Variant(task, spec=spec, impl=impl)
        # `#check @main`: proves the unit was reached, fails if the definition was not added.
        return Plan(variant, [render.check_command("@" + _main_name(variant))], [cmd_slot(0)],
                     compile_answer)


def _impl_problem(impl: Implementation | None, task: Task) -> str | None:
    """``compile: ...`` when the screen refuses a candidate implementation or its imports."""
    if impl is None:
        return None
    why = check_untrusted_lean(impl.code) or _imports_problem(impl.imports, task)
    return f"compile: {why}" if why else None


def _imports_problem(imports: str, task: Task | None) -> str | None:
    """A candidate's ``imports`` may name the task's own modules, Mathlib, Std,
    Batteries and Plausible only."""
    if not imports.strip():
        return None
    own: list[str] = []
    if task is not None and lean_sections(task) is not None:
        own = render.import_lines(lean_sections(task).task_imports + "\n" + lean_sections(task).solution_imports)
    return check_imports(imports, own)









def _main_name(variant: render.Variant) -> str:
    name = variant.task.signature.name
    if variant.spec is not None:
        return f"{name}_postcond" if variant.spec.postcond is not None else f"{name}_precond"
    return name


