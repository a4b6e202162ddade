"""What a long command is doing, on a terminal and in a log alike.

``rich``'s status spinner draws nothing where the console is not a terminal (a
log file, CI, ``nohup``), so a command that runs for twenty minutes said nothing
there. :class:`Status` is the spinner on a terminal and, elsewhere, a plain line
every ``every`` seconds with the latest text and the time elapsed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from veriscale.backends.base import progress_owner


class Status:
    """``with Status(console, "evaluating") as s: ... s.update("3/10 tasks")``."""

    def __init__(self, console: Console, text: str, every: float = 30.0) -> None:
        self.console = console
        self.text = text
        self.every = every
        self._spinner: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.monotonic()

    def update(self, text: str) -> None:
        self.text = text
        if self._spinner is not None:
            self._spinner.update(escape(text))

    def line(self) -> str:
        """The plain line: the latest text and the time elapsed."""
        minutes, secs = divmod(round(time.monotonic() - self._started), 60)
        return f"  {self.text}, {minutes}:{secs:02d} elapsed"

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            self.console.print(escape(self.line()), soft_wrap=True, highlight=False)

    def __enter__(self) -> Status:
        self._started = time.monotonic()
        if self.console.is_terminal:
            self._spinner = self.console.status(escape(self.text))
            self._spinner.__enter__()
        else:
            self._thread = threading.Thread(target=self._beat, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._spinner is not None:
            self._spinner.__exit__(*exc)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)


def hook_backend(backend: Any, status: Status, what: str) -> Callable[[], None]:
    """Let a backend that reports its prover files (Lean, Coq) update ``status``
    with files and checks done; returns the call that unhooks it."""
    inner = progress_owner(backend)
    if inner is None:
        return lambda: None
    counts = {"files": 0, "files_done": 0, "checks": 0, "checks_done": 0}
    lock = threading.Lock()
    before = inner.progress

    def update(event: str, files: int, checks: int) -> None:
        with lock:
            if event == "planned":
                counts["files"] += files
                counts["checks"] += checks
            else:
                counts["files_done"] += files
                counts["checks_done"] += checks
            status.update(f"{what}: {getattr(inner, 'name', 'oracle')} files "
                          f"{counts['files_done']}/{counts['files']}, checks "
                          f"{counts['checks_done']:,}/{counts['checks']:,}")

    inner.progress = update

    def unhook() -> None:
        inner.progress = before

    return unhook
