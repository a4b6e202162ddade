"""The sandbox worker: runs untrusted Python in its own process.

This file is executed as a *script* by :mod:`veriscale.backends.python.sandbox`
(``python -s -S -P worker.py REQ_FD RESP_FD``), in a clean environment and a
fresh temporary directory. It must therefore depend on the standard library
only. The parent talks to it over two dedicated pipes with length-prefixed JSON
frames, never over stdout/stderr, so whatever the untrusted code prints cannot
corrupt the protocol; and the parent never unpickles anything the worker sends.

Values travel as *tagged* JSON: lists are JSON arrays, tuples are ``{"t": [...]}``,
integers beyond 64 bits are ``{"x": "<hex>"}`` (hex is exempt from Python's
int-to-decimal digit limit), floats use JSON's ``NaN``/``Infinity`` extension.
Only exact built-in types are accepted from user code, so encoding a result
never runs user-defined methods.

Requests and replies:

- first frame: config ``{"memory_mb", "cpu_seconds", "fsize_mb", "recursion_limit",
  "max_output_bytes"}`` → ``{"ready": true, "pid": ...}`` after the limits are set;
- ``{"op": "load", "key", "source", "restricted", "timeout"}`` →
  ``{"ok": true}`` or ``{"ok": false, "error": "compile: ..."}``;
- ``{"op": "call", "key", "funcs": [name, ...], "items": [[arg, ...], ...],
  "timeout"}`` → one frame per item, in order:
  ``{"i": k, "ok": true, "value": ..., "seconds": s}`` or
  ``{"i": k, "ok": false, "error": "...", "seconds": s}``.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import math
import os
import signal
import struct
import sys
import time
from collections import OrderedDict
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
# the static check rejects them first, process isolation is the real boundary).
UNSAFE_BUILTINS = (
    "open", "exec", "eval", "compile", "input", "breakpoint", "help", "exit", "quit",
    "globals", "locals", "vars", "memoryview",
)

MAX_MODULES = 64
HEADER = struct.Struct(">I")
SMALL_INT = 1 << 63


class _Deadline(BaseException):
    """Raised by SIGALRM inside user code when an item exceeds its time limit."""


class _Unsupported(TypeError):
    """A user value that has no wire form (set, dict, custom object...)."""


def encode_value(v: Any, depth: int = 0) -> Any:
    """Tagged-JSON form of a native value; exact built-in types only."""
    if depth > 2000:
        raise _Unsupported("value is nested too deeply")
    tv = type(v)
    if v is None or tv is bool or tv is str:
        return v
    if tv is int:
        return v if -SMALL_INT < v < SMALL_INT else {"x": hex(v)}
    if tv is float:
        return v
    if tv is list:
        return [encode_value(x, depth + 1) for x in v]
    if tv is tuple:
        return {"t": [encode_value(x, depth + 1) for x in v]}
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
        data = HEADER.pack(len(body)) + body
        view = memoryview(data)
        while view:
            written = os.write(self.wfd, view)
            view = view[written:]

    def send(self, obj: Any) -> None:
        self.send_bytes(json.dumps(obj).encode("utf-8"))


def apply_limits(cfg: dict[str, Any]) -> None:
    """Memory, file-size, core and (optional) CPU limits, before any user code runs."""
    import resource

    def setlim(which: int, soft: int) -> None:
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):  # pragma: no cover - platform dependent
            pass

    if cfg.get("memory_mb"):
        setlim(resource.RLIMIT_AS, int(cfg["memory_mb"]) * 1024 * 1024)
    setlim(resource.RLIMIT_FSIZE, int(cfg.get("fsize_mb", 16)) * 1024 * 1024)
    setlim(resource.RLIMIT_CORE, 0)
    sys.setrecursionlimit(int(cfg.get("recursion_limit", 10000)))


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
    """User prints go to /dev/null (the protocol is elsewhere); a stream that user
    code closed or replaced is reopened so the next item's prints still work."""
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
        return f"crash: recursion: {exc}"
    if isinstance(exc, SystemExit):
        return f"exit: sys.exit({exc.code!r})"
    text = str(exc)
    if len(text) > 300:
        text = text[:300] + "..."
    return f"error: {type(exc).__name__}: {text}"


class Worker:
    """State of one worker process: loaded modules and limits."""

    def __init__(self, channel: Channel, cfg: dict[str, Any]) -> None:
        self.channel = channel
        self.cfg = cfg
        self.modules: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.max_output = int(cfg.get("max_output_bytes", 32 * 1024 * 1024))

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        key = req["key"]
        ns: dict[str, Any] = {"__name__": "__veriscale_module__"}
        ns["__builtins__"] = restricted_builtins() if req.get("restricted") else builtins
        try:
            code = compile(req["source"], "<candidate>", "exec")
        except BaseException as exc:
            return {"ok": False, "error": f"compile: {type(exc).__name__}: {exc}"}
        try:
            _cpu_guard(self.cfg.get("cpu_seconds"))
            try:
                _arm(float(req.get("timeout", 5.0)))
                exec(code, ns)
            finally:
                _disarm()
        except BaseException as exc:
            return {"ok": False, "error": f"compile: {describe_failure(exc)}"}
        self.modules[key] = ns
        while len(self.modules) > MAX_MODULES:
            self.modules.popitem(last=False)
        return {"ok": True}

    def call(self, req: dict[str, Any]) -> None:
        ns = self.modules.get(req["key"])
        if ns is not None:
            self.modules.move_to_end(req["key"])  # LRU, mirrored by the parent
        items = req["items"]
        timeout = float(req.get("timeout", 2.0))
        fn = None
        if ns is not None:
            for name in req["funcs"]:
                cand = ns.get(name)
                if callable(cand):
                    fn = cand
                    break
        for i, raw in enumerate(items):
            if ns is None:
                self.channel.send({"i": i, "ok": False, "error": "missing_module"})
                continue
            if fn is None:
                wanted = " or ".join(req["funcs"])
                self.channel.send(
                    {"i": i, "ok": False, "error": f"compile: no function {wanted} defined"})
                continue
            self.channel.send_bytes(self._one(i, fn, raw, timeout))

    def _one(self, i: int, fn: Any, raw: list[Any], timeout: float) -> bytes:
        start = time.perf_counter()
        try:
            args = decode_value(raw)
            _reset_std_streams()
            if "random" in sys.modules:
                sys.modules["random"].seed(0)  # adversaries that use random stay deterministic
            _cpu_guard(self.cfg.get("cpu_seconds"))
            try:
                _arm(timeout)
                result = fn(*args)
            finally:
                _disarm()
            value = encode_value(result)
            body = json.dumps(
                {"i": i, "ok": True, "value": value,
                 "seconds": time.perf_counter() - start}).encode("utf-8")
        except _Unsupported as exc:
            return self._error(i, f"ill_typed: {exc}", start)
        except RecursionError:
            return self._error(i, "crash: recursion: maximum recursion depth exceeded", start)
        except BaseException as exc:
            return self._error(i, describe_failure(exc), start)
        if len(body) > self.max_output:
            return self._error(i, f"output_limit: result of {len(body)} bytes", start)
        return body

    @staticmethod
    def _error(i: int, error: str, start: float) -> bytes:
        return json.dumps(
            {"i": i, "ok": False, "error": error,
             "seconds": time.perf_counter() - start}).encode("utf-8")

    def serve(self) -> None:
        while True:
            try:
                req = self.channel.recv()
            except EOFError:
                return
            op = req.get("op")
            if op == "load":
                self.channel.send(self.load(req))
            elif op == "call":
                self.call(req)
            elif op == "probe":
                ns = self.modules.get(req["key"]) or {}
                if ns:
                    self.modules.move_to_end(req["key"])
                found = next((n for n in req["funcs"] if callable(ns.get(n))), None)
                self.channel.send({"defined": found})
            elif op == "ping":
                self.channel.send({"ok": True})
            elif op == "quit":
                return
            else:
                self.channel.send({"ok": False, "error": f"unknown op {op!r}"})


def main(argv: list[str]) -> int:
    rfd, wfd = int(argv[1]), int(argv[2])
    channel = Channel(rfd, wfd)
    cfg = channel.recv()
    apply_limits(cfg)
    signal.signal(signal.SIGALRM, _on_alarm)
    _reset_std_streams()
    channel.send({"ready": True, "pid": os.getpid()})
    Worker(channel, cfg).serve()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (EOFError, BrokenPipeError, OSError):
        sys.exit(3)
