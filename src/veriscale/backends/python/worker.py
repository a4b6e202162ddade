"""The sandbox worker: a fork server that runs each candidate in a fresh child.

Executed as a *script* by :mod:`veriscale.backends.python.sandbox`
(``python -s -S -P -B worker.py REQ_FD RESP_FD``), under bubblewrap when
isolation is in force, in a clean environment; it depends on the standard
library only. The server imports the allowed modules once (warm start), then
never runs untrusted code itself: every ``run`` request (one candidate module
and its inputs) is served by a forked child that loads the module, evaluates
the items and exits. Nothing a candidate does (``math.gcd = ...``, patching this
file's functions, ``sys.modules`` edits) outlives its child, so it cannot reach
another candidate's verdict or the ground truth's.

The child drops the server's pipes, gets rlimits (CPU for the candidate's whole
budget, no new processes) and a seccomp filter (no fork/exec/socket/kill, no
file writes; built by ``veriscale.backends.isolation.seccomp``) before any user
code runs, and talks to the server over its own pipe; the server checks every
frame (size first, then shape) before relaying it, enforces per-item and
per-candidate deadlines with SIGKILL, and reforks for the remaining items after
a child dies, so a hang or crash costs exactly one item.

Values travel as *tagged* JSON: lists are JSON arrays, tuples ``{"t": [...]}``,
integers beyond 64 bits ``{"x": "<hex>"}``, floats use JSON's ``NaN``/``Infinity``.
Only exact built-in types are accepted from user code, so encoding a result
never runs user-defined methods.

Requests and replies (length-prefixed JSON frames):

- first frame: config ``{"memory_mb", "fsize_mb", "recursion_limit",
  "max_output_bytes", "seccomp": hex or "", "nproc"}`` → ``{"ready": true, ...}``;
- ``{"op": "run", "source", "restricted", "funcs", "items", "seeds", "seed",
  "timeout", "load_timeout", "budget", "cpu_seconds", "waits"}`` → one frame per item,
  ``{"i": k, "ok": true, "value": ..., "seconds": s}`` or ``{"i": k, "ok": false,
  "error": "...", "seconds": s}``, or a single ``{"load_error": "compile: ..."}``;
  then ``{"done": true}``. With no items, the module is loaded and probed only.
  ``waits`` (optional, one per item, or null for the default): how long the server
  waits for that item's frame, in place of ``timeout`` and its grace.
  ``trace`` (optional): each ok frame also carries ``"arcs"``, the line arcs the call
  ran in the module, as coverage.py records them (``[from, to]``, negative: entering
  or leaving a function), for the coverage of the ground truth by a suite.
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import json
import math
import os
import select
import signal
import struct
import sys
import time
from typing import Any

# Modules untrusted code may import: pure computation, no I/O, no process or
# interpreter control. Shared with the static checker in ``sandbox.py``.
SAFE_MODULES = frozenset(
    {
        "math", "cmath", "itertools", "functools", "collections", "heapq", "bisect",
        "re", "string", "operator", "fractions", "decimal", "statistics", "typing",
        "dataclasses", "copy", "enum", "numbers", "random", "array", "abc",
        "unicodedata", "__future__", "textwrap", "difflib",
    }
)

# Builtins removed from the namespace of untrusted modules (defence in depth:
# the static check rejects them first, the OS sandbox is the real boundary).
UNSAFE_BUILTINS = (
    "open", "exec", "eval", "compile", "input", "breakpoint", "help", "exit", "quit",
    "globals", "locals", "vars", "memoryview", "getattr", "setattr", "delattr",
)

# The failures a candidate's process may report for one of its items (a raised
# exception, a crash it saw, a result it could not send); anything else in its
# frame (``infrastructure``, ``unknown``, ...) would be the candidate choosing a
# verdict. ``memory`` is checked by the server (Server._items); a ``timeout`` only
# the server's own clock says.
CHILD_KINDS = frozenset({"error", "crash", "exit", "ill_typed", "output_limit", "memory"})

HEADER = struct.Struct(">I")
SMALL_INT = 1 << 63
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
PR_SET_DUMPABLE, PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 4, 1, 36


class _Deadline(BaseException):
    """Raised by SIGALRM when executing a module's top level exceeds its time limit."""


class _Unsupported(TypeError):
    """A user value that has no wire form (set, dict, custom object...)."""


class _TooBig(Exception):
    """A result larger than the output limit (detected while encoding)."""


def encode_value(v: Any, depth: int = 0, budget: list[int] | None = None) -> Any:
    """Tagged-JSON form of a native value; exact built-in types only.

    ``budget`` (a one-element list of remaining bytes, roughly) stops the encoding
    of an oversized result early instead of building all of it.
    """
    if depth > 2000:
        raise _Unsupported("value is nested too deeply")
    if budget is not None:
        budget[0] -= 2
        if budget[0] < 0:
            raise _TooBig
    tv = type(v)
    if v is None or tv is bool:
        return v
    if tv is str:
        if budget is not None:
            budget[0] -= len(v)
            if budget[0] < 0:
                raise _TooBig
        return v
    if tv is int:
        if -SMALL_INT < v < SMALL_INT:
            return v
        if budget is not None:
            budget[0] -= v.bit_length() // 4
            if budget[0] < 0:
                raise _TooBig
        return {"x": hex(v)}
    if tv is float:
        return v
    if tv is list:
        return [encode_value(x, depth + 1, budget) for x in v]
    if tv is tuple:
        return {"t": [encode_value(x, depth + 1, budget) for x in v]}
    raise _Unsupported(f"unsupported result type {tv.__name__}")


def decode_value(v: Any) -> Any:
    """Inverse of :func:`encode_value` (used on the inputs the parent sends)."""
    if isinstance(v, list):
        return [decode_value(x) for x in v]
    if isinstance(v, dict):
        if "t" in v:
            return tuple(decode_value(x) for x in v["t"])
        if "x" in v:
            return int(v["x"], 16)
        raise ValueError(f"bad tagged value {v!r}")
    return v


class Channel:
    """Length-prefixed JSON frames over two raw file descriptors."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfd = rfd
        self.wfd = wfd

    def _read_exact(self, n: int) -> bytes:
        chunks = []
        while n > 0:
            chunk = os.read(self.rfd, min(n, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def recv(self) -> Any:
        (size,) = HEADER.unpack(self._read_exact(HEADER.size))
        return json.loads(self._read_exact(size))

    def send_bytes(self, body: bytes) -> None:
        view = memoryview(HEADER.pack(len(body)) + body)
        while view:
            written = os.write(self.wfd, view)
            view = view[written:]

    def send(self, obj: Any) -> None:
        self.send_bytes(json.dumps(obj).encode("utf-8"))


def _setlim(which: int, soft: int, hard: int | None = None) -> None:
    import resource

    with contextlib.suppress(ValueError, OSError):
        _, cur_hard = resource.getrlimit(which)
        hard = soft if hard is None else hard
        if cur_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, cur_hard), min(hard, cur_hard)
        resource.setrlimit(which, (soft, hard))


def apply_limits(cfg: dict[str, Any]) -> None:
    """Memory, file-size and core limits of the server (its children inherit them)."""
    import resource

    if cfg.get("memory_mb"):
        _setlim(resource.RLIMIT_AS, int(cfg["memory_mb"]) * 1024 * 1024)
    _setlim(resource.RLIMIT_FSIZE, int(cfg.get("fsize_mb", 16)) * 1024 * 1024)
    _setlim(resource.RLIMIT_CORE, 0)


def _prctl(*args: int) -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fn = libc.prctl
    fn.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    fn.restype = ctypes.c_int
    padded = [*args, 0, 0, 0, 0][:5]
    return int(fn(*padded))


def install_seccomp(program: bytes) -> None:
    """Install a ``struct sock_filter[]`` program (after ``no_new_privs``); raises on refusal."""
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(program, len(program))
    prog = SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if _prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog)) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def _restricted_import(name: str, globals: Any = None, locals: Any = None,
                       fromlist: Any = (), level: int = 0) -> Any:
    if level != 0 or name.split(".")[0] not in SAFE_MODULES:
        raise ImportError(f"import of {name!r} is not allowed in the sandbox")
    if any(str(n).startswith("_") for n in fromlist or ()):
        raise ImportError(f"import of private names from {name!r} is not allowed in the sandbox")
    return builtins.__import__(name, globals, locals, fromlist, level)


def restricted_builtins() -> dict[str, Any]:
    table = dict(vars(builtins))
    for name in UNSAFE_BUILTINS:
        table.pop(name, None)
    table["__import__"] = _restricted_import
    return table


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Deadline


def _arm(seconds: float) -> None:
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))


def _disarm() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


def _cpu_guard(cpu_seconds: float | None) -> None:
    """Per-item CPU budget: soft RLIMIT_CPU moved to current usage + budget."""
    if not cpu_seconds:
        return
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    now = used.ru_utime + used.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(now + cpu_seconds)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _reset_std_streams() -> None:
    """User prints go to /dev/null (the protocol is elsewhere)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or getattr(stream, "closed", True) or not hasattr(stream, "write"):
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115


def describe_failure(exc: BaseException) -> str:
    """The failure text of one item; the prefix before ``:`` is its kind."""
    if isinstance(exc, _Deadline):
        return "timeout"
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, RecursionError):
        return "crash: recursion: maximum recursion depth exceeded"
    if isinstance(exc, SystemExit):
        return f"exit: sys.exit({str(exc.code)[:100]!r})"
    try:
        text = str(exc)
    except BaseException:  # a user exception whose __str__ fails or lies
        text = "<unprintable>"
    if len(text) > 300:
        text = text[:300] + "..."
    return f"error: {type(exc).__name__}: {text}"


# ---------------------------------------------------------------------------
# deterministic randomness (per candidate, per item)


def _det_stream(seed: int) -> Any:
    import hashlib

    state = [0]

    def urandom(n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            state[0] += 1
            out += hashlib.sha256(f"{seed}:{state[0]}".encode()).digest()
        return bytes(out[:n])

    return urandom


def seed_random(seed: int) -> None:
    """Seed ``random`` and make its entropy sources (``Random()``, ``seed()``,
    ``SystemRandom``) deterministic functions of ``seed``."""
    import random

    urandom = _det_stream(seed)
    random._urandom = urandom  # type: ignore[attr-defined]  # SystemRandom draws from it

    def det_seed(self: Any, a: Any = None, version: int = 2) -> None:
        if a is None:
            a = int.from_bytes(urandom(32), "big")
        _ORIG_SEED(self, a, version)

    random.Random.seed = det_seed  # type: ignore[method-assign]
    random.seed = random._inst.seed  # type: ignore[attr-defined]
    random.seed(seed)


_ORIG_SEED: Any = None


# ---------------------------------------------------------------------------
# the child: one candidate


def _child(cfg: dict[str, Any], req: dict[str, Any], start_at: int, end: int, wfd: int,
           server: Channel) -> None:
    """Load the candidate module and evaluate items ``start_at:end``; never returns."""
    import resource

    try:
        for fd in (server.rfd, server.wfd):
            with contextlib.suppress(OSError):
                os.close(fd)
        out = Channel(-1, wfd)
        _reset_std_streams()
        budget = float(req.get("budget") or 60.0)
        _setlim(resource.RLIMIT_CPU, math.ceil(budget) + 1, math.ceil(budget) + 2)
        if cfg.get("nproc") is not None:
            _setlim(resource.RLIMIT_NPROC, int(cfg["nproc"]))
        program = bytes.fromhex(cfg.get("seccomp") or "")
        if program:
            install_seccomp(program)
        sys.setrecursionlimit(int(cfg.get("recursion_limit", 10000)))
        seed_random(int(req.get("seed", 0)))
        ns: dict[str, Any] = {"__name__": "__veriscale_module__"}
        ns["__builtins__"] = restricted_builtins() if req.get("restricted") else builtins
        try:
            code = compile(req["source"], "<candidate>", "exec")
        except BaseException as exc:
            text = describe_failure(exc).split(": ", 1)[-1]
            out.send({"load_error": f"compile: {text}"})
            return
        try:
            _arm(float(req.get("load_timeout", 5.0)))
            try:
                exec(code, ns)
            finally:
                _disarm()
        except BaseException as exc:
            out.send({"load_error": f"compile: {describe_failure(exc)}"})
            return
        fn = None
        for name in req["funcs"]:
            cand = ns.get(name)
            if callable(cand):
                fn = cand
                break
        if fn is None:
            out.send({"load_error": f"compile: no function {' or '.join(req['funcs'])} defined"})
            return
        out.send({"loaded": True})
        items, seeds = req["items"], req.get("seeds") or []
        timeout = float(req.get("timeout", 2.0))
        limit = int(cfg.get("max_output_bytes", 1 << 20))
        trace = bool(req.get("trace"))
        for k in range(start_at, end):
            seed_random(int(seeds[k]) if k < len(seeds) else k)
            out.send_bytes(_one(k, fn, items[k], timeout, req.get("cpu_seconds"), limit,
                                trace))
    except BaseException:  # the server reports the missing frames
        pass
    finally:
        os._exit(0)


_RESUME = dis.opmap.get("RESUME")  # 3.11+: every (re)entry of a frame starts with it
_PUSH_EXC_INFO = dis.opmap.get("PUSH_EXC_INFO")  # 3.11+: an exception handler's entry
_LASTI_IS_YIELD = sys.version_info[:2] != (3, 13)  # f_lasti at a yield, not past it


def _arc_tracer(arcs: set[tuple[int, int]]) -> Any:
    """A ``sys.settrace`` function recording the arcs run in the module's code, as
    coverage.py's own Python tracer records them: ``(-first line, line)`` on entering
    a function, ``(line, next line)``, ``(line, -first line)`` on a real return (not a
    generator's yield); a resumed generator goes on from its line."""
    def call(frame: Any, event: str, arg: Any) -> Any:
        if event != "call" or frame.f_code.co_filename != "<candidate>":
            return None
        code = frame.f_code
        raw = code.co_code  # read once per frame, not on every line event
        first = code.co_firstlineno
        fresh = frame.f_lasti < 0 if _RESUME is None \
            else raw[frame.f_lasti + 1] == 0  # RESUME 0: a call, not a resume
        last = [-first if fresh else frame.f_lineno]

        def local(frame: Any, event: str, arg: Any) -> Any:
            at = frame.f_lasti
            if event == "line":
                if _PUSH_EXC_INFO is not None and 0 <= at < len(raw) \
                        and raw[at] == _PUSH_EXC_INFO:
                    return local  # coverage.py records no line here
                arcs.add((last[0], frame.f_lineno))
                last[0] = frame.f_lineno
            elif event == "return":
                if _RESUME is None or at + 2 == len(raw):
                    real = True
                else:
                    real = raw[at + 2 if _LASTI_IS_YIELD else at] != _RESUME
                if real:
                    arcs.add((last[0], -first))
            return local
        return local
    return call


def _one(i: int, fn: Any, raw: list[Any], timeout: float, cpu: float | None,
         limit: int, trace: bool = False) -> bytes:
    start = time.perf_counter()
    arcs: set[tuple[int, int]] = set()
    try:
        args = decode_value(raw)
        _reset_std_streams()
        _cpu_guard(cpu)
        # No alarm of its own: an item's time limit is the server's clock alone (a
        # timeout the child reported would be the candidate's word, see Server._items).
        if trace:
            sys.settrace(_arc_tracer(arcs))
        try:
            result = fn(*args)
        finally:
            if trace:
                sys.settrace(None)
        value = encode_value(result, budget=[limit])
        reply = {"i": i, "ok": True, "value": value, "seconds": time.perf_counter() - start}
        if trace:
            reply["arcs"] = sorted(arcs)
        body = json.dumps(reply).encode("utf-8")
    except _Unsupported as exc:
        return _error(i, f"ill_typed: {exc}", start)
    except _TooBig:
        return _error(i, f"output_limit: result larger than {limit} bytes", start)
    except RecursionError:
        return _error(i, "crash: recursion: maximum recursion depth exceeded", start)
    except BaseException as exc:
        return _error(i, describe_failure(exc), start)
    if len(body) > limit:
        return _error(i, f"output_limit: result of {len(body)} bytes (limit {limit})", start)
    return body


def _error(i: int, error: str, start: float) -> bytes:
    return json.dumps({"i": i, "ok": False, "error": error,
                       "seconds": time.perf_counter() - start}).encode("utf-8")


# ---------------------------------------------------------------------------
# the server


def _status_text(status: int) -> str:
    """Failure text of a child that ended before sending its item's frame."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "timeout"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"crash: killed by signal {name}"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return f"exit: the candidate ended its process (status {code})"


class Server:
    """The pristine process: forks one child per candidate request."""

    def __init__(self, channel: Channel, cfg: dict[str, Any]) -> None:
        self.channel = channel
        self.cfg = cfg
        self.limit = int(cfg.get("max_output_bytes", 1 << 20))
        self.sweep = not cfg.get("seccomp")  # without the filter, children may fork

    def _read(self, rfd: int, buf: bytearray, deadline: float) -> tuple[str, bytes | int]:
        """("frame", body) | ("eof", 0) | ("late", 0) | ("big", size)."""
        while True:
            if len(buf) >= HEADER.size:
                (size,) = HEADER.unpack(buf[: HEADER.size])
                if size > self.limit + 4096:
                    return "big", size
                if len(buf) >= HEADER.size + size:
                    body = bytes(buf[HEADER.size: HEADER.size + size])
                    del buf[: HEADER.size + size]
                    return "frame", body
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "late", 0
            ready, _, _ = select.select([rfd], [], [], remaining)
            if not ready:
                return "late", 0
            chunk = os.read(rfd, 1 << 20)
            if not chunk:
                return "eof", 0
            buf.extend(chunk)

    def _end_child(self, pid: int, patience: float = 0.0, rusage: bool = False) -> int:
        """Reap ``pid`` (killing it after ``patience`` seconds); its wait status, or
        with ``rusage`` its peak resident memory in kB as the kernel counted it."""
        end = time.monotonic() + patience
        status, peak = 0, 0
        try:
            while True:
                done, status, usage = os.wait4(pid, os.WNOHANG)
                if done:
                    peak = usage.ru_maxrss
                    break
                if time.monotonic() >= end:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    _, status, usage = os.wait4(pid, 0)
                    peak = usage.ru_maxrss
                    break
                time.sleep(0.001)
        except ChildProcessError:  # already reaped
            pass
        self._reap_strays()
        return peak if rusage else status

    def _reap_strays(self) -> None:
        """Kill and reap processes a child left behind (we are their subreaper)."""
        if self.sweep:
            me = str(os.getpid())
            for _ in range(5):
                found = False
                for entry in os.listdir("/proc"):
                    if not entry.isdigit():
                        continue
                    try:
                        with open(f"/proc/{entry}/stat", "rb") as fh:
                            stat = fh.read().rsplit(b")", 1)[1].split()
                    except OSError:
                        continue
                    if stat[1].decode() == me:
                        found = True
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(int(entry), signal.SIGKILL)
                if not found:
                    break
                time.sleep(0.002)
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return

    def run(self, req: dict[str, Any]) -> None:
        items = req["items"]
        n = len(items)
        timeout = float(req.get("timeout", 2.0))
        load_timeout = float(req.get("load_timeout", 5.0))
        grace = max(0.5, 0.5 * timeout)
        given = req.get("waits")
        given = given if isinstance(given, list) and len(given) == n else [None] * n
        waits = [float(w) if isinstance(w, (int, float)) and 0 < w <= timeout + grace
                 else timeout + grace for w in given]
        budget = float(req.get("budget") or 60.0)
        deadline = time.monotonic() + budget
        send = self.channel.send
        fresh = bool(req.get("fresh"))  # one child per item: no state outlives an item
        pos = 0
        first = True
        while first or pos < n:
            first = False
            if time.monotonic() >= deadline:
                self._budget_spent(pos, n, budget)
                break
            rfd, wfd = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                os.close(rfd)
                _child(self.cfg, req, pos, min(n, pos + 1) if fresh else n, wfd, self.channel)
            os.close(wfd)
            buf = bytearray()
            try:
                what, got = self._read(rfd, buf, min(deadline,
                                                      time.monotonic() + load_timeout + grace))
                reply = _parse(got) if what == "frame" else None
                if what == "eof":
                    text = _status_text(self._end_child(pid, 1.0))
                    send({"load_error": f"compile: {text}"})
                    break
                if what == "late":
                    send({"load_error": "compile: timeout while executing the module"})
                    break
                if not isinstance(reply, dict) or not (reply.get("loaded") is True
                                                       or isinstance(reply.get("load_error"),
                                                                     str)):
                    send({"load_error": "compile: crash: protocol violation"})
                    break
                if "load_error" in reply:
                    send({"load_error": str(reply["load_error"])[:2000]})
                    break
                pos = self._items(rfd, buf, pid, pos, min(n, pos + 1) if fresh else n,
                                  waits, deadline, budget)
            finally:
                os.close(rfd)
                self._end_child(pid)
        send({"done": True})

    def _items(self, rfd: int, buf: bytearray, pid: int, pos: int, n: int,
               waits: list[float], deadline: float, budget: float) -> int:
        """Relay the child's item frames from ``pos``; the next position to run.

        A frame is the candidate's own word (its process can write any frame), so
        it may claim only what a return could: a value, or a failure of the
        candidate's own kinds (:data:`CHILD_KINDS`). A timeout is this server's clock
        running out (the item's wait: ``timeout`` + grace unless the request gave one
        no longer; the child sets no alarm of its own), and a
        claimed ``memory`` stands only when the kernel saw the child's peak memory
        reach half the limit; otherwise it is the candidate's raised exception.
        """
        while pos < n:
            what, got = self._read(rfd, buf, min(deadline, time.monotonic() + waits[pos]))
            if what == "frame":
                assert isinstance(got, bytes)
                reply = _parse(got)
                if not (isinstance(reply, dict) and reply.get("i") == pos
                        and isinstance(reply.get("ok"), bool)):
                    self._item_error(pos, "crash: protocol violation")
                    return pos + 1
                if reply["ok"]:
                    self.channel.send_bytes(got)
                    pos += 1
                    continue
                error = reply.get("error")
                kind = error.split(":", 1)[0].strip() if isinstance(error, str) else ""
                if kind not in CHILD_KINDS:
                    self._item_error(pos, "crash: protocol violation (a failure the candidate "
                                          "cannot have)")
                    return pos + 1
                if kind == "memory":
                    self._item_error(pos, self._memory_claim(pid))
                    return pos + 1
                self.channel.send_bytes(got)
                pos += 1
                continue
            if what == "big":
                self._item_error(pos, f"output_limit: result of {got} bytes "
                                      f"(limit {self.limit})")
                return pos + 1
            if what == "eof":
                self._item_error(pos, _status_text(self._end_child(pid, 1.0)))
                return pos + 1
            # late
            if time.monotonic() >= deadline:
                self._budget_spent(pos, n, budget)
                return n
            self._item_error(pos, "timeout")
            return pos + 1
        return pos

    def _memory_claim(self, pid: int) -> str:
        """Stop the child that reported a MemoryError; ``memory`` (a limit, UNKNOWN)
        when the kernel saw its peak resident memory reach half the limit, else the
        candidate's own error (``raise MemoryError``, or one request for more than
        the whole limit at once)."""
        peak_kb = self._end_child(pid, 0.0, rusage=True)
        limit_mb = int(self.cfg.get("memory_mb") or 0)
        if limit_mb and peak_kb * 1024 >= limit_mb * 1024 * 1024 // 2:
            return "memory"
        return (f"error: MemoryError with a peak of {peak_kb // 1024} MB, under half the "
                f"memory limit ({limit_mb} MB)")

    def _item_error(self, i: int, error: str) -> None:
        self.channel.send({"i": i, "ok": False, "error": error, "seconds": 0.0})

    def _budget_spent(self, pos: int, n: int, budget: float) -> None:
        for k in range(pos, n):
            self._item_error(k, f"timeout: the candidate's time budget ({budget:g} s "
                                "for all its tests) is spent")

    def serve(self) -> None:
        while True:
            try:
                req = self.channel.recv()
            except EOFError:
                return
            op = req.get("op")
            if op == "run":
                self.run(req)
            elif op == "ping":
                self.channel.send({"ok": True})
            elif op == "quit":
                return
            else:
                self.channel.send({"error": f"unknown op {op!r}"})


def _parse(body: bytes | int) -> Any:
    if not isinstance(body, bytes):
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _warm_up() -> None:
    """Import what children use, once, so each fork starts warm."""
    global _ORIG_SEED
    import ctypes  # noqa: F401  - seccomp installation in children
    import hashlib  # noqa: F401
    import importlib
    import resource  # noqa: F401

    for name in sorted(SAFE_MODULES):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    import random

    _ORIG_SEED = random.Random.seed


def main(argv: list[str]) -> int:
    rfd, wfd = int(argv[1]), int(argv[2])
    channel = Channel(rfd, wfd)
    cfg = channel.recv()
    apply_limits(cfg)
    with contextlib.suppress(Exception):
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _prctl(PR_SET_DUMPABLE, 0)  # children of the same uid cannot ptrace or read our memory
        _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of a child come back to us
    signal.signal(signal.SIGALRM, _on_alarm)
    _reset_std_streams()
    _warm_up()
    channel.send({"ready": True, "pid": os.getpid(), "seccomp": bool(cfg.get("seccomp"))})
    Server(channel, cfg).serve()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (EOFError, BrokenPipeError, OSError):
        sys.exit(3)
