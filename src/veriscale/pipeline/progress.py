"""What a run shows while it works: a bar per stage, a second bar of prover files and
checks, plain lines where the console is not a terminal, and each stage's summary."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from veriscale.backends.causes import VERDICT_UNKNOWN_PREFIX


def stage_bars(console: Console) -> Progress:
    """The bars of one stage (tasks, then the oracle's files and checks), gone when done."""
    return Progress(
        TextColumn("[bold]{task.fields[label]:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


class FileProgress:
    """The second bar of a stage: prover files and checks done of those planned so far.

    Totals grow as rounds are packed (a stage's later rounds depend on earlier
    answers), so the time-left estimate is for the work known at that moment.
    Checks count as a prover gets past them, inside a running file where it
    reports as it goes (Lean), else when the file finishes. Where the console is
    not a terminal (a log file, CI) no bar is drawn, so progress prints a plain
    line instead, at most one per ``plain_every`` seconds (and always the stage's
    last file).
    """

    def __init__(self, progress: Progress, stage: str = "", plain_every: float = 30.0) -> None:
        self.progress = progress
        self.stage = stage
        self.files_total = 0
        self.files_done = 0
        self.checks_total = 0
        self.checks_done = 0
        self.task: TaskID | None = None
        self.label = "  oracle"  # the backend's name, once hooked
        self.plain_every = plain_every
        self._started = time.monotonic()
        self._last_line = self._started
        self._lock = threading.Lock()

    def update(self, event: str, files: int, checks: int) -> None:
        with self._lock:
            if self.task is None:
                self.task = self.progress.add_task("", total=0, label=self.label)
            if event == "planned":
                self.files_total += files
                self.checks_total += checks
                self.progress.update(self.task, total=self.checks_total)
            else:  # "done" (a file and its last checks) or "checks" (inside a running file)
                self.files_done += files
                self.checks_done += checks
                self.progress.update(self.task, advance=checks)
                self._plain_line(finished=event == "done")
            self.progress.update(
                self.task, description=f"checks; files {self.files_done}/{self.files_total}")

    def _plain_line(self, finished: bool) -> None:
        console = self.progress.console
        now = time.monotonic()
        last = finished and self.files_done >= self.files_total
        if console.is_terminal or (now - self._last_line < self.plain_every and not last):
            return
        self._last_line = now
        elapsed = now - self._started
        left = (elapsed * (self.checks_total - self.checks_done) / self.checks_done
                if self.checks_done else 0.0)
        where = f"{self.stage}: " if self.stage else ""
        console.print(f"  {where}{self.label.strip()} files "
                      f"{self.files_done}/{self.files_total}, checks {self.checks_done:,}/"
                      f"{self.checks_total:,}, {_clock(elapsed)} elapsed, about "
                      f"{_clock(left)} left", soft_wrap=True, highlight=False)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"


def print_stage_summary(console: Console, title: str, totals: Mapping[str, int],
                        oracle: Mapping[str, Any]) -> None:
    """A finished stage: its title, its counts, and the oracle's processes, checks and
    unknown verdicts by cause."""
    # The title goes on its own line: as a table title it wraps to the width
    # of the two narrow columns when the output is not a terminal.
    console.print(f"[bold]{escape(title)}[/]", soft_wrap=True)
    table = Table(show_header=False, box=None)
    table.add_column("count", no_wrap=True)
    table.add_column("total", justify="right", no_wrap=True)
    for key, value in totals.items():
        table.add_row(key.replace("_", " "), str(value))
    if oracle.get("checks"):
        table.add_row("oracle processes", str(int(oracle["processes"])))
        table.add_row("oracle checks", str(int(oracle["checks"])))
    for key, value in oracle.items():
        if key.startswith(VERDICT_UNKNOWN_PREFIX):  # verdicts by cause: "unknown gt postcondition: …"
            table.add_row(key, str(int(value)))
    console.print(table)
