"""One Lean process and what it said: ``lean --json`` messages, parsed, and a run of a
command with its limits (wall time, CPU, a stall clock) that keeps partial output.

A timeout or crash is a *result* (with whatever messages arrived before it), never
an exception: the caller turns the missing messages into UNKNOWN verdicts, so
one bad file costs one chunk, never the run, and never counts as a pass.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from veriscale.backends import isolation

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class LeanMessage:
    """One ``lean --json`` message; lines are 1-based, columns 0-based (Lean's own)."""

    severity: str  # "information" | "warning" | "error"
    line: int
    column: int
    end_line: int
    end_column: int
    text: str
    kind: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


@dataclass
class LeanProcessResult:
    messages: list[LeanMessage]
    returncode: int | None  # None when killed for the timeout
    timed_out: bool = False
    seconds: float = 0.0
    stderr: str = ""
    other_output: list[str] = field(default_factory=list)  # non-JSON, non-debug stdout
    served: bool = False  # by a Lean session (no process of its own), see session.py

    @property
    def crashed(self) -> bool:
        """Lean ended abnormally: signal, or non-zero exit with no error message to explain it."""
        if self.timed_out or self.returncode is None:
            return False
        if self.returncode < 0:
            return True
        return self.returncode != 0 and not any(m.is_error for m in self.messages)

    @property
    def failure(self) -> str:
        """Why messages may be missing: "" for a normal end, else "timeout" or "crash: ..."."""
        if self.timed_out:
            return "timeout"
        if self.crashed:
            return f"crash: exit {self.returncode} {self.last_words}".strip()
        return ""

    @property
    def last_words(self) -> str:
        """The last telling line Lean (or the node running WASM Lean) wrote on its way
        down: node ends an uncaught error with its version banner, which says nothing
        ("Node.js v26.12.1" was the cause shown for 25 stops of the VERINA run)."""
        return last_words(self.stderr.splitlines() or list(self.other_output))


_NODE_BANNER = re.compile(r"^Node\.js v\d+(\.\d+)*$")


def last_words(lines: list[str]) -> str:
    """The last line of a dying Lean's output that says something: not blank, not the
    WASM launcher's ``[DEBUG`` lines, not node's stack frames or version banner."""
    for line in reversed(lines):
        line = line.strip()
        if line and not line.startswith(("[DEBUG", "at ")) and not _NODE_BANNER.match(line):
            return line
    return ""


def _message_from_json(obj: dict) -> LeanMessage | None:
    if not isinstance(obj, dict) or "severity" not in obj or "data" not in obj:
        return None
    pos = obj.get("pos") or {}
    end = obj.get("endPos") or pos
    line = int(pos.get("line", 0) or 0)
    return LeanMessage(
        severity=str(obj["severity"]),
        line=line,
        column=int(pos.get("column", 0) or 0),
        end_line=int(end.get("line", line) or line),
        end_column=int(end.get("column", 0) or 0),
        text=str(obj["data"]),
        kind=str(obj.get("kind", "")),
    )


def message_line(line: str) -> LeanMessage | None:
    """The message one stripped output line holds, if it is one of Lean's JSON messages."""
    if not (line.startswith("{") and line.endswith("}")):
        return None
    try:
        return _message_from_json(json.loads(line))
    except (json.JSONDecodeError, TypeError, ValueError):
        return None


def parse_messages(stdout: str) -> tuple[list[LeanMessage], list[str]]:
    """Lean's JSON message lines, and the other non-debug lines (kept for crash reports).

    The WASM build also prints ``[DEBUG:...]`` lines, the file's contents and the
    list of loaded ``.olean`` files; everything that is not a JSON message is
    dropped here.
    """
    messages: list[LeanMessage] = []
    other: list[str] = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line or line.startswith("[DEBUG"):
            continue
        msg = message_line(line)
        if msg is not None:
            messages.append(msg)
            continue
        if line.endswith(".olean"):
            continue
        other.append(line)
    return messages, other[-20:]


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by ``pid`` and all its descendants
    (bubblewrap, node, node's threads), read from /proc; 0 where it cannot be read."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total, todo, seen = 0.0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            total += sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
            for task in Path(f"/proc/{p}/task").iterdir():
                kids = (task / "children").read_text().split()
                todo.extend(int(k) for k in kids)
        except (OSError, ValueError, IndexError):
            continue
    return total


def tell_line(on_line: Callable[[int], None] | None, line: int) -> None:
    """Tell a progress display how far Lean's messages got; a display must never break
    a Lean run."""
    if on_line is None:
        return
    try:
        on_line(line)
    except Exception:
        log.debug("on_line callback failed", exc_info=True)


START_CPU_SECONDS = 120.0
"""CPU seconds a Lean process may use for its start (imports, the compiled-evaluation
prelude) before the stall clock counts (:class:`_Reader`)."""


class _Reader:
    """``Popen.communicate`` that also tells ``on_line`` how far Lean's messages got,
    and notices a Lean that has used ``stall_seconds`` of CPU since its latest message
    (or since its start, beyond :data:`START_CPU_SECONDS`; compiled evaluation cannot be
    interrupted from inside: a check
    that runs away holds the whole file; CPU, not wall time, so that a busy machine
    stops nothing)."""

    def __init__(self, proc: subprocess.Popen, on_line: Callable[[int], None] | None,
                 stall_seconds: float | None = None) -> None:
        self.proc = proc
        self.on_line = on_line
        self.stall_seconds = stall_seconds
        self.messages = 0  # Lean messages read so far (the poll compares, not each message)
        self.out: list[bytes] = []
        self.err: list[bytes] = []
        self.furthest = 0
        self.threads = [threading.Thread(target=self._stdout, daemon=True),
                        threading.Thread(target=self._stderr, daemon=True)]
        for t in self.threads:
            t.start()

    def _stdout(self) -> None:
        for chunk in iter(self.proc.stdout.readline, b""):
            self.out.append(chunk)
            msg = message_line(chunk.decode("utf-8", "replace").strip())
            if msg is not None:
                self.messages += 1
            if msg is not None and msg.line > self.furthest:
                self.furthest = msg.line
                tell_line(self.on_line, msg.line)

    def _stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read(65536), b""):
            self.err.append(chunk)

    def communicate(self, timeout: float | None) -> tuple[bytes, bytes]:
        """Both streams to their end; raises ``TimeoutExpired`` as ``Popen`` does, also
        when Lean stalls (the readers stay attached, so a second call after the kill
        gets everything). Lean's CPU is read every 2 s of the poll, not per message."""
        deadline = None if timeout is None else time.monotonic() + timeout
        seen = 0  # messages at the last poll, and Lean's CPU seconds when they changed
        # Before the first message the clock runs from the start, with the start's own
        # allowance on top (the imports: about 20 CPU s for WASM's compiled mode), so a
        # runaway first check is stopped too (native Lean prints nothing before it).
        last: float = START_CPU_SECONDS
        while True:
            step = 2.0 if self.stall_seconds else None
            if deadline is not None:
                step = max(0.0, min(step or deadline, deadline - time.monotonic()))
            try:
                self.proc.wait(timeout=step)
                break
            except subprocess.TimeoutExpired:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
                if not self.stall_seconds:
                    continue
                cpu = tree_cpu_seconds(self.proc.pid)
                if self.messages != seen:
                    seen, last = self.messages, cpu
                elif cpu - last > self.stall_seconds:
                    raise
        for t in self.threads:
            t.join()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return b"".join(self.out), b"".join(self.err)


def _decode(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def run_command(
    cmd: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None,
    timeout: float,
    memory_mb: int | None = None,
    cpu_seconds: float | None = None,
    stack_mb: int | None = None,
    on_line: Callable[[int], None] | None = None,
    stall_seconds: float | None = None,
) -> LeanProcessResult:
    """Run one Lean command; on timeout kill its whole process group and keep partial output.

    ``timeout`` is wall-clock seconds; ``cpu_seconds`` (optional) limits the CPU time
    of the process itself (``RLIMIT_CPU``), which a busy machine does not run down:
    hitting it counts as a timeout too. ``stack_mb`` sets ``RLIMIT_STACK``.
    ``on_line`` (optional) is told the furthest source line a message has reached,
    each time it grows, while Lean runs (Lean reports each command as it finishes;
    a file of thousands of checks otherwise shows no progress for many minutes).
    """
    start = time.monotonic()
    try:  # OS isolation, rlimits, own process group, dies with us
        proc = isolation.spawn(list(cmd), cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE,
                               limits=isolation.ProcessLimits(memory_mb=memory_mb,
                                                              cpu_seconds=cpu_seconds,
                                                              stack_mb=stack_mb))
    except OSError as exc:
        return LeanProcessResult([], 127, stderr=f"cannot start {cmd[0]}: {exc}",
                         seconds=time.monotonic() - start)
    timed_out = False
    reader = None if on_line is None and not stall_seconds \
        else _Reader(proc, on_line, stall_seconds)
    talk = proc.communicate if reader is None else reader.communicate
    try:
        out, err = talk(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = talk(timeout=None)
    cpu_signals = (signal.SIGXCPU, signal.SIGKILL)  # soft, then hard RLIMIT_CPU
    if cpu_seconds and proc.returncode is not None and time.monotonic() - start >= cpu_seconds \
            and (-proc.returncode in cpu_signals or proc.returncode - 128 in cpu_signals):
        timed_out = True  # the CPU limit (directly, or through bubblewrap), not a crash
    messages, other = parse_messages(_decode(out))
    return LeanProcessResult(
        messages=messages,
        returncode=None if timed_out else proc.returncode,
        timed_out=timed_out,
        seconds=time.monotonic() - start,
        stderr=_decode(err)[-4000:],
        other_output=other,
    )
