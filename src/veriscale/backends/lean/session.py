"""One long-lived Lean process that checks many files: a Lean start paid once, not per file.

A WASM Lean file pays about 20 CPU seconds before its first check (the start of
``lean.wasm``, the imports, the compiled-evaluation prelude); in the 189-task VERINA
run that was 56 % of all Lean CPU. A *session* pays it once: its file is a file's
*base* (everything up to :data:`BASE_END`: imports, options, the runner's prelude)
followed by :data:`LOOP`, the tool's own command, which then serves files one after
another. Each served file is elaborated from the environment after the base, so
nothing one file declares is visible to the next (a file of several units shares one
process today already; a session shares nothing more than that across files).

The protocol (both sides are here):

* the driver writes a file's text, its base lines blanked (so Lean reports the file's
  own line numbers), to ``NAME`` in the work directory, and the line ``NAME`` to the
  session's request file;
* Lean elaborates it command by command, writing each command's messages (Lean's own
  JSON, as ``lean --json`` prints them) to the session's answer file as it finishes,
  then ``--VS-DONE NAME``. Messages are JSON lines: nothing a check prints can look
  like the end marker.

A file that stops Lean (a crash, a stall, over its CPU time) ends the session: the
driver kills it, returns what arrived (as :func:`process.run_command` does for a file),
and the next file starts a new one. (Files, not pipes: the WASM build's stdin reads
end at once, and Lean captures a command's own standard output.)
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from veriscale.backends import isolation
from veriscale.backends.lean.process import (
    START_CPU_SECONDS,
    LeanMessage,
    LeanProcessResult,
    last_words,
    message_line,
    parse_messages,
    tell_line,
    tree_cpu_seconds,
)


class LeanRunner(Protocol):
    """What a session needs of its runner (:class:`runner.LeanRunner`)."""

    memory_mb: int | None
    stack_mb: int | None

    def work_dir(self) -> Path: ...

    def command(self, file: Path) -> tuple[list[str], Path, dict[str, str]]: ...

log = logging.getLogger(__name__)

BASE_END = "-- veriscale: the base of a Lean session ends here"
"""The line after a file's base (:func:`render.layout_file` writes it): a file whose
base a session already ran is served by that session."""

READY = "--VS-READY"
DONE = "--VS-DONE "
QUIT = "--VS-QUIT"

LOOP = """
open Lean Elab Command in
run_cmd do
  let env0 ← getEnv
  -- every message of a command is in its state when it ends (none in background tasks)
  let opts := Elab.async.set (← getOptions) false
  let requests ← IO.FS.Handle.mk "{requests}" .read
  let answers ← IO.FS.Handle.mk "{answers}" .append
  let say (s : String) : IO Unit := do answers.putStrLn s; answers.flush
  say "{ready}"
  let mut pending := ""
  repeat
    let part ← requests.getLine
    if part.isEmpty then
      IO.sleep 2
      continue
    pending := pending ++ part
    unless pending.endsWith "\\n" do continue
    let name := pending.replace "\\n" ""
    pending := ""
    if name == "{quit}" then break
    let text ← IO.FS.readFile name
    let ctx : Frontend.Context := {{ inputCtx := Parser.mkInputContext text name }}
    let mut st : Frontend.State :=
      {{ commandState := {{ Command.mkState env0 {{}} opts with infoState := {{ enabled := false }} }},
        parserState := {{}}, cmdPos := 0 }}
    -- Frontend.processCommand's parse, then its elaboration, each command's messages
    -- as it ends (processCommand itself, run command by command, loses parse errors)
    repeat
      let scope := st.commandState.scopes.head!
      let pmctx : Parser.ParserModuleContext :=
        {{ env := st.commandState.env, options := scope.opts,
          currNamespace := scope.currNamespace, openDecls := scope.openDecls }}
      st := {{ st with cmdPos := st.parserState.pos }}
      let (cmd, ps, parsed) := Parser.parseCommand ctx.inputCtx pmctx st.parserState {{}}
      for m in parsed.toList do
        say (← m.toJson).compress
      st := {{ st with parserState := ps }}
      let ((), next) ← ((Frontend.elabCommandAtFrontend cmd).run ctx).run st
      st := next
      for m in st.commandState.messages.toList do
        say (← m.toJson).compress
      st := {{ st with commandState := {{ st.commandState with messages := {{}} }} }}
      if Parser.isTerminalCommand cmd then break
    say s!"{done}{{name}}"
"""
"""The session's last command (the tool's text, never a candidate's; a ``.format``
template)."""


def split_base(text: str) -> tuple[str, int, str] | None:
    """(base, its number of lines with the marker, the rest) of a file a session can
    serve: one that has a base, and a base that imports ``Lean`` (the loop is Lean's
    frontend; the backend gives a file that a session will serve that import, in
    kernel mode too)."""
    marker = f"\n{BASE_END}\n"
    at = text.find(marker)
    if at < 0 or not re.search(r"^import Lean$", text[:at], re.M):
        return None
    base = text[: at + 1]
    return base, base.count("\n") + 1, text[at + len(marker):]


_IDS = itertools.count(1)


class LeanSession:
    """One Lean process serving files of one base (see the module docstring)."""

    def __init__(self, runner: LeanRunner, base: str) -> None:
        self.runner = runner
        self.base = base
        work = Path(runner.work_dir())
        stem = f"vs_session_{os.getpid()}_{next(_IDS)}"
        self.requests = work / f"{stem}.requests"
        self.answers = work / f"{stem}.answers"
        self.file = work / f"{stem}.lean"
        self.requests.write_text("")
        self.answers.write_text("")
        self.file.write_text(base + "\n" + LOOP.format(
            requests=self.requests.name, answers=self.answers.name, ready=READY,
            done=DONE, quit=QUIT), encoding="utf-8")
        self.proc: subprocess.Popen[bytes] | None = None
        self.header: list[LeanMessage] = []  # the base's messages: every file's header
        self._stderr: list[bytes] = []
        self._stdout: list[bytes] = []
        self._partial = ""
        self.start_seconds = 0.0
        self.timed_out = False

    # ---------------------------------------------------------------- process

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _drain(self, stream: Any, into: list[bytes], keep: int) -> None:
        for chunk in iter(lambda: stream.read(65536), b""):
            into.append(chunk)
            while len(into) > keep:
                into.pop(0)

    def start(self, cpu_limit: float, wall_limit: float) -> str:
        """Start Lean and wait until it serves: "" when it does, else why not."""
        cmd, cwd, env = self.runner.command(self.file)
        t0 = time.monotonic()
        try:
            self.proc = isolation.spawn(
                cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                limits=isolation.ProcessLimits(memory_mb=self.runner.memory_mb,
                                               stack_mb=self.runner.stack_mb))
        except OSError as exc:
            return f"cannot start {cmd[0]}: {exc}"
        for stream, into, keep in ((self.proc.stdout, self._stdout, 4096),
                                   (self.proc.stderr, self._stderr, 64)):
            threading.Thread(target=self._drain, args=(stream, into, keep), daemon=True).start()
        self._answers = self.answers.open("r", encoding="utf-8", errors="replace")
        why = ""
        for line in self._lines(cpu_limit, wall_limit, None):
            if line is None:
                why = "start"
                break
            if line == READY:
                break
        else:
            why = "start"
        self.start_seconds = time.monotonic() - t0
        if why:
            return self._why_stopped("Lean session did not start")
        time.sleep(0.1)  # the base's messages were printed before READY: let them be read
        self.header = parse_messages(b"".join(self._stdout).decode("utf-8", "replace"))[0]
        return ""

    def _why_stopped(self, what: str) -> str:
        said = last_words(b"".join(self._stderr).decode("utf-8", "replace").splitlines())
        rc = None if self.proc is None else self.proc.poll()
        return f"{what} (exit {rc}) {said[:200]}".strip()

    def _lines(self, cpu_limit: float, wall_limit: float,
               stall: float | None) -> Any:
        """The answer file's lines as they come; ``None`` once (and then stop) when Lean
        died, used ``cpu_limit`` CPU seconds, ``stall`` of them without a line, or
        ``wall_limit`` wall seconds."""
        assert self.proc is not None
        cpu0 = last = tree_cpu_seconds(self.proc.pid)
        wall_end = time.monotonic() + wall_limit
        next_poll = time.monotonic() + 1.0
        self.timed_out = False
        while True:
            got = self._answers.readline()
            if got:
                self._partial += got
                if not self._partial.endswith("\n"):
                    continue
                line, self._partial = self._partial.rstrip("\n"), ""
                if stall is not None:
                    last = tree_cpu_seconds(self.proc.pid) if line.startswith("{") else last
                yield line
                continue
            if self.proc.poll() is not None:
                yield None
                return
            now = time.monotonic()
            if now >= wall_end:
                self.timed_out = True
                yield None
                return
            if now >= next_poll:
                next_poll = now + 1.0
                cpu = tree_cpu_seconds(self.proc.pid)
                if cpu - cpu0 > cpu_limit or (stall is not None and cpu - last > stall):
                    self.timed_out = True
                    yield None
                    return
            time.sleep(0.005)

    def close(self) -> None:
        """Ask Lean to end, then make sure it has; remove the session's files."""
        if self.proc is not None:
            if self.proc.poll() is None:
                with contextlib.suppress(OSError), self.requests.open("a") as feed:
                    feed.write(QUIT + "\n")
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=2)
            isolation.kill_group(self.proc)
            with contextlib.suppress(Exception):
                self._answers.close()
        for path in (self.requests, self.answers, self.file):
            with contextlib.suppress(OSError):
                path.unlink()

    # ---------------------------------------------------------------- one file

    def check(self, name: str, rest: str, base_lines: int, *, cpu_limit: float,
              wall_limit: float, stall: float | None,
              on_line: Callable[[int], None] | None = None) -> LeanProcessResult:
        """Serve one file (its text after the base): its messages, as a file run gives them."""
        work = Path(self.runner.work_dir())
        chunk = work / name
        chunk.write_text("\n" * base_lines + rest, encoding="utf-8")
        t0 = time.monotonic()
        messages: list[LeanMessage] = list(self.header)
        furthest = 0
        finished = False
        try:
            with self.requests.open("a", encoding="utf-8") as feed:
                feed.write(name + "\n")
            for line in self._lines(cpu_limit, wall_limit, stall):
                if line is None:
                    break
                if line == DONE + name:
                    finished = True
                    break
                msg = message_line(line)
                if msg is None:  # not Lean's: the protocol broke; this session is done
                    log.warning("Lean session %s: unexpected line %r", self.file.name, line[:200])
                    break
                messages.append(msg)
                if msg.line > furthest:
                    furthest = msg.line
                    tell_line(on_line, msg.line)
        finally:
            with contextlib.suppress(OSError):
                chunk.unlink()
        seconds = time.monotonic() - t0
        if finished:
            return LeanProcessResult(messages, 0, seconds=seconds, served=True)
        assert self.proc is not None
        why = self._why_stopped("Lean session stopped")
        rc = self.proc.poll()  # None: alive, stopped by the driver (limit or broken protocol)
        isolation.kill_group(self.proc)
        if self.timed_out:
            return LeanProcessResult(messages, None, timed_out=True, seconds=seconds,
                                     stderr=why, served=True)
        return LeanProcessResult(messages, -9 if rc is None else rc, seconds=seconds,
                                 stderr=why, served=True)


class SessionPool:
    """The idle sessions of one runner, by base; at most ``size`` Lean processes kept."""

    def __init__(self, size: int = 2) -> None:
        self.size = max(1, size)
        self._idle: list[LeanSession] = []
        self._lock = threading.Lock()
        self.starts = 0

    def start(self, runner: LeanRunner, base: str) -> LeanSession:
        """A new session of ``base`` (not yet started), counted."""
        with self._lock:
            self.starts += 1
        return LeanSession(runner, base)

    def take(self, base: str) -> LeanSession | None:
        with self._lock:
            for i, s in enumerate(self._idle):
                if s.base == base and s.alive:
                    return self._idle.pop(i)
        return None

    def give(self, session: LeanSession) -> None:
        if not session.alive:
            session.close()
            return
        with self._lock:
            self._idle.append(session)
            extra = self._idle[: max(0, len(self._idle) - self.size)]
            del self._idle[: len(extra)]
        for s in extra:  # the least recently used go
            s.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for s in idle:
            s.close()


def run_in_session(runner: LeanRunner, pool: SessionPool, file: Path, *, cpu_limit: float,
                   wall_limit: float, stall: float | None,
                   on_line: Callable[[int], None] | None) -> LeanProcessResult | None:
    """Run ``file`` in a session of its base (started if none is idle); None if the file
    has no base (then it runs as a file of its own)."""
    text = Path(file).read_text(encoding="utf-8")
    parts = split_base(text)
    if parts is None:
        return None
    base, base_lines, rest = parts
    session = pool.take(base)
    started = 0.0
    if session is None:
        session = pool.start(runner, base)
        why = session.start(START_CPU_SECONDS + (stall or cpu_limit), wall_limit)
        started = session.start_seconds
        log.info("Lean session %s: started in %.0fs%s", session.file.name, started,
                 f", {why}" if why else "")
        if why:
            session.close()
            return LeanProcessResult(list(session.header), None if session.timed_out else
                                     session.proc.poll() if session.proc else 127,
                                     timed_out=session.timed_out, seconds=started, stderr=why)
    try:
        result = session.check(Path(file).name + ".served", rest, base_lines,
                               cpu_limit=cpu_limit, wall_limit=wall_limit, stall=stall,
                               on_line=on_line)
    finally:
        pool.give(session)
    result.seconds += started
    return result
