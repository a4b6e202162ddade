"""A request's plan: the Lean commands it needs and how their outputs make its answers.

Each item of a request is a slot: answered by one command's output, by several, or
known before Lean runs (a bad input, a refused candidate). :class:`EarlyAnswers`
hands items on as soon as the files that decide them are done;
:class:`LiveCount` counts checks for a progress display as Lean's messages arrive.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from veriscale.backends.lean import render
from veriscale.backends.lean.messages import CheckOutput, exceeded_heartbeats

log = logging.getLogger(__name__)


Slot = tuple[str, Any]  # ("cmd", i), ("cmds", (i, j, ...)) or ("done", known result)


@dataclass
class Plan:
    """One request turned into commands for one unit, and how to read their answers.

    An item answered by one command has a ``("cmd", i)`` slot read by ``finish``;
    an item answered by several (classification: the syntax check and the
    decision, in one file) has ``("cmds", (i, j))`` read by ``finish_multi``.
    """

    variant: render.Variant | None
    commands: list[str]
    slots: list[Slot]
    finish: Callable[[CheckOutput], Any]
    finish_multi: Callable[[list[CheckOutput]], Any] | None = None

    def answer(self, slot: Slot, got: list[CheckOutput]) -> Any:
        kind, value = slot
        if kind == "done":
            return value
        if kind == "cmds":
            assert self.finish_multi is not None
            return self.finish_multi([got[i] for i in value])
        return self.finish(got[value])


def cmd_slot(i: int) -> tuple[str, int]:
    return ("cmd", i)


def done_slot(result: Any) -> tuple[str, Any]:
    return ("done", result)



OnFile = Callable[[list[tuple[tuple[int, int], CheckOutput]]], None]
"""Told ``((job, command), output)`` of the outputs a file or a round has made final."""


class EarlyAnswers:
    """Which items of a batch are final once their first-round files are done.

    Later rounds only revisit checks that gave no answer: the heartbeat ladder (a
    check over its budget), the kernel round (a stuck reduction), Plausible (an
    undecided input). So once an item's commands have all come back, none over its
    budget, a conclusive answer of it is final (the oracle cache keeps those:
    :data:`~veriscale.backends.base.AnswersHook`). The ladder's and the kernel
    round's answers are told as each round ends; an item is told again when one of
    its outputs changed.
    """

    def __init__(self, plans: Sequence[Plan], live: list[int],
                 tell: Callable[[list[tuple[int, int, Any]]], None]) -> None:
        self.plans = plans
        self.live = live  # job index → plan index
        self.tell = tell
        self.got: list[list[CheckOutput | None]] = [[None] * len(plans[pi].commands)
                                                     for pi in live]
        self.slots_of: dict[tuple[int, int], list[int]] = {}  # (job, command) → items
        for ji, pi in enumerate(live):
            for si, slot in enumerate(plans[pi].slots):
                for ci in slot_commands(slot):
                    self.slots_of.setdefault((ji, ci), []).append(si)
        self.told: dict[tuple[int, int], tuple[int, ...]] = {}  # item → the outputs told

    def on_file(self, outs: list[tuple[tuple[int, int], CheckOutput]]) -> None:
        for (ji, ci), out in outs:
            self.got[ji][ci] = out
        told: list[tuple[int, int, Any]] = []
        for (ji, ci), _ in outs:
            pi, row = self.live[ji], self.got[ji]
            for si in self.slots_of.get((ji, ci), ()):
                slot = self.plans[pi].slots[si]
                cmds = slot_commands(slot)
                seen = tuple(id(row[c]) for c in cmds)
                if self.told.get((pi, si)) == seen or any(
                        row[c] is None or exceeded_heartbeats(row[c])  # type: ignore[arg-type]
                        for c in cmds):
                    continue  # told as it is already, or not final yet
                self.told[(pi, si)] = seen
                told.append((pi, si, self.plans[pi].answer(slot, row)))  # type: ignore[arg-type]
        if told:
            self.tell(told)


def tell(on_file: OnFile | None, outs: list[tuple[tuple[int, int], CheckOutput]]) -> None:
    """Give ``on_file`` outputs that are final; early answers are a saving, never a
    failure of the round."""
    if on_file is None or not outs:
        return
    try:
        on_file(outs)
    except Exception:
        log.warning("telling early answers failed", exc_info=True)


def slot_commands(slot: Slot) -> list[int]:
    kind, value = slot
    return [value] if kind == "cmd" else list(value) if kind == "cmds" else []


class LiveCount:
    """The checks of one file that Lean has got past while it still runs.

    Lean reports each command as it finishes, so the furthest line it has reported
    says how many of the file's checks are behind it. The display hears of them as
    ``("checks", 0, n)``; the file's ``("done", 1, n)`` then brings the rest (a file
    retried after a crash never counts a check twice, nor more than it holds).
    """

    def __init__(self, planned: int, notify: Callable[[str, int, int], None]) -> None:
        self.planned = planned
        self.reported = 0
        self.notify = notify
        self._lock = threading.Lock()

    def attempt(self, first_lines: list[int]) -> Callable[[int], None]:
        """The ``on_line`` of one Lean process over a file whose checks start on
        ``first_lines`` (sorted)."""
        passed = 0

        def on_line(line: int) -> None:
            nonlocal passed
            now = bisect.bisect_right(first_lines, line)  # checks starting at or above it
            with self._lock:
                more = min(now - passed, self.planned - self.reported)
                if more <= 0:
                    return
                passed = now
                self.reported += more
            self.notify("checks", 0, more)

        return on_line

    def rest(self) -> int:
        with self._lock:
            left, self.reported = self.planned - self.reported, self.planned
        return left
