"""Kernel reduction where compiled evaluation or ``#reduce`` could not answer.

Two routes, both to Lean's kernel, both faithful (the real-Lean tests compare them
with compiled evaluation wherever both decide): a boolean ``#reduce`` that got stuck,
and a compiled ``decide`` of a pre/postcondition that panicked, become ``decide
+kernel`` of ``P`` and of ``¬P`` (:meth:`KernelRoute._kernel_decide`),
and a check that took compiled Lean down is asked of a kernel-mode backend, in rounds
of growing size (:meth:`KernelRoute._ask_the_kernel`). A part of
:class:`~veriscale.backends.lean.backend.LeanBackend`.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from veriscale.backends.base import Outcome
from veriscale.backends.lean import render
from veriscale.backends.lean.messages import PANIC, CheckOutput, bool_answer, kernel_answer
from veriscale.backends.lean.plans import OnFile, tell
from veriscale.backends.lean.process import LeanMessage

log = logging.getLogger(__name__)

OUT_OF_MEMORY = "out of memory"
"""Lean's panic when a check filled its memory (WASM's 4 GB): such a check is not
asked of the kernel, whose reduction of the same computation needs more memory and
time, not less (on the 189 VERINA tasks, kernel files of such checks ran 5 to 12
minutes and decided almost nothing)."""

KERNEL_SAMPLE = 2  # crashed checks of a request asked of the kernel before its others


@dataclass
class KernelAsks:
    """Stuck checks put to the kernel: where each is, its kind, and its two examples."""

    where: list[tuple[int, int]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    jobs: list[tuple[render.Variant, list[str]]] = field(default_factory=list)


def _function_key(op: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """What a request asks about: an operation on one task's ground truth (``None``)
    or on one candidate (its object), whatever slice of the items it carries."""
    return (op, args[0].id, id(args[1]) if len(args) > 2 else None)


class KernelRoute:
    """The kernel routes of :class:`~veriscale.backends.lean.backend.LeanBackend`."""

    def _kernel_decide(self, jobs: Sequence[tuple[render.Variant, list[str]]],
                       final: list[list[CheckOutput]],
                       on_file: OnFile | None = None,
                       asked: set[tuple[int, int]] | None = None) -> None:
        """Ask the kernel itself where a boolean ``#reduce`` got stuck (one more round):
        ``decide`` of a pre/postcondition, an ``==`` code test, a call returning ``Bool``
        (:func:`render.kernel_prop`; code over ``Array`` gets stuck in ``#reduce``);
        and where compiled ``decide`` of a pre/postcondition panicked. Lean's logic
        gives ``a[i]!`` out of bounds a value (``default``), so such a proposition has
        an answer (verina_basic_72's postcondition reads ``result[a.size]!`` of an
        empty ``result``); the kernel gives it. Code that panics is not asked: that is
        the code's own failure.

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
                     asked: set[tuple[int, int]]) -> KernelAsks:
        """The kernel's questions for the checks of ``final`` stuck now and not in
        ``asked`` (which they join)."""
        stuck = KernelAsks()
        for ji, (variant, cmds) in enumerate(jobs):
            sig = variant.task.signature
            bool_call = sig.name if str(sig.return_type) == "Bool" else None
            for ci, cmd in enumerate(cmds):
                if (ji, ci) in asked:
                    continue
                answer, why = bool_answer(final[ji][ci])
                if answer is not None:
                    continue
                if why.startswith("stuck reduction"):
                    prop, kind = render.kernel_prop(cmd, bool_call), render.kernel_check_kind(cmd)
                elif why.startswith(PANIC + ":"):  # a proposition's, never code's (its FAIL)
                    prop, kind = render.panicked_prop(cmd), "decide after a panic"
                else:
                    continue
                if prop is not None:
                    asked.add((ji, ci))
                    stuck.where.append((ji, ci))
                    stuck.kinds.append(kind)
                    stuck.jobs.append((variant, [render.kernel_decide_command(prop, True),
                                                 render.kernel_decide_command(prop, False)]))
        return stuck

    def _kernel_settle(self, stuck: KernelAsks, outs: list[list[CheckOutput]],
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

    def _ask_the_kernel(self, requests: Sequence[tuple[str, tuple[Any, ...]]],
                        answers: list[list[Any]],
                        early: Callable[[list[tuple[int, int, Any]]], None] | None) -> None:
        """Ask kernel reduction what compiled evaluation could not answer because it
        took Lean down (on WASM, string code of verina_advanced_71's postcondition
        stops the process), in place in ``answers``. Kernel mode is the other faithful
        route (the real-Lean tests show both agree wherever both decide); what it
        cannot decide either keeps compiled mode's reason."""
        def crashed(raw: Any) -> str:
            why = raw.error if isinstance(raw, Outcome) else raw[1] if isinstance(raw, tuple) \
                else ""
            if (isinstance(raw, Outcome) and raw.ok) or not isinstance(why, str) \
                    or not why.startswith("infrastructure: Lean stopped"):
                return ""
            return "memory" if OUT_OF_MEMORY in why else "crash"

        # One queue per function asked about (an operation on one task's ground truth
        # or one candidate), over all its requests: the outputs stage splits a task's
        # inputs over several requests, and a sample per request asked the kernel 24
        # checks of verina_advanced_27's string LCS at once (693 s for one file).
        queues: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
        out_of_memory = 0
        for ri, ((op, args), ans) in enumerate(zip(requests, answers, strict=True)):
            kinds = [crashed(raw) for raw in ans] if op != "compile" else []
            out_of_memory += kinds.count("memory")
            queue = queues.setdefault(_function_key(op, args), [])
            queue += [(ri, i) for i, kind in enumerate(kinds) if kind == "crash"]
        # smallest first: the ones kernel reduction is likeliest to finish
        waiting = [sorted(q, key=lambda c: len(repr(requests[c[0]][1][-1][c[1]])))
                   for q in queues.values() if q]
        if out_of_memory:
            with self._lock:
                row = self._fallback_row()
                row["out_of_memory"] = row.get("out_of_memory", 0) + out_of_memory
        if not waiting:
            return
        # Rounds of growing size, smallest checks first: 2 of each function's crashed
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
        # four minutes a round). A function goes on or stops as one, however many
        # requests its checks came in.
        # One Lean of each kind at a time: this backend's idle sessions end before the
        # kernel's start, and the kernel's when its rounds are done (each WASM Lean
        # holds about 4.5 GB: two idle kernel sessions beside two compiled ones held 18
        # GB of a 24 GB machine during the VERINA run).
        self.runner.close_sessions()
        given_up = 0
        size = KERNEL_SAMPLE
        try:
            while waiting:
                by_request: dict[int, list[int]] = {}
                for queue in waiting:
                    for ri, i in queue[:size]:
                        by_request.setdefault(ri, []).append(i)
                decided, exhausted = self._kernel_round(requests, answers, early,
                                                        list(by_request.items()))
                going: list[list[tuple[int, int]]] = []
                for queue in waiting:
                    asked, left = queue[:size], queue[size:]
                    if not left:
                        continue
                    got = len(decided.intersection(asked))
                    if 2 * got >= len(asked) and not {ri for ri, _ in asked} & exhausted:
                        going.append(left)
                    else:
                        given_up += len(left)
                waiting, size = going, 2 * size
        finally:
            if self._kernel_backend is not None:
                self._kernel_backend.runner.close_sessions()
        if given_up:
            with self._lock:
                row = self._fallback_row()
                row["not_asked"] = row.get("not_asked", 0) + given_up

    def _fallback_row(self) -> dict[str, int]:
        """``backend_stats.kernel_fallback`` (the caller holds the lock): checks asked
        and decided, rounds, the kernel's files, and the crashed checks not asked
        (``not_asked``: their request's rounds stopped; ``out_of_memory``)."""
        return self.stats.extra.setdefault(
            "kernel_fallback", {"asked": 0, "decided": 0, "rounds": 0, "files": 0})

    def _kernel_round(self, requests: Sequence[tuple[str, tuple[Any, ...]]],
                      answers: list[list[Any]],
                      early: Callable[[list[tuple[int, int, Any]]], None] | None,
                      where: list[tuple[int, list[int]]]
                      ) -> tuple[set[tuple[int, int]], set[int]]:
        """One kernel-reduction round over ``where`` (request, item indices), in place
        in ``answers``; the (request, item) it decided, and the requests where one ran
        out of the full heartbeat budget."""
        kernel = self._kernel()
        before = (kernel.stats.processes, kernel.stats.checks, kernel.stats.seconds,
                  kernel.stats.extra.get("served_files", 0))
        builders = kernel._builders()
        kplans = []
        for ri, idx in where:
            op, args = requests[ri]
            kplans.append(builders[op](*args[:-1], [args[-1][i] for i in idx]))
        got = kernel._run_plans(kplans)
        decided_in: set[tuple[int, int]] = set()
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
                    decided_in.add((ri, i))
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
            row = self._fallback_row()
            row["asked"] += sum(len(idx) for _, idx in where)
            row["decided"] += len(decided_in)
            row["rounds"] += 1
            # how the processes above split: compiled files are ``files``, these are not
            row["files"] += processes
        return decided_in, exhausted

    def _kernel(self) -> Any:
        """The kernel-mode backend the fallback asks, one for this backend's life (its
        Lean sessions and stop memory serve every round); with this backend's
        compatibility names."""
        with self._lock:
            if self._kernel_backend is None:
                kernel = type(self)(copy.copy(self.runner), mode="kernel", workers=self.workers,
                                     executor=self.executor, max_heartbeats=self.max_heartbeats,
                                     crash_retries=self.crash_retries)
                kernel.runner.stall_seconds = None  # heartbeats bound kernel reduction
                if self._stop_store is not None:
                    kernel.keep_stops(*self._stop_store)
                self._kernel_backend = kernel
            self._kernel_backend.compat = {k: set(v) for k, v in self.compat.items()}
            return self._kernel_backend
