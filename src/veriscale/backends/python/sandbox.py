"""Sandboxed execution of untrusted Python: a pool of reusable worker processes.

Why processes: candidate solutions, LLM-written adversaries and specs can hang,
crash the interpreter, exhaust memory or call ``os._exit``; none of that may
take the run down. Each worker is a separate interpreter (no site packages, a
clean environment with only ``PATH``/``LANG``, a fresh temporary cwd, rlimits on
address space, file size and cores, optional CPU) that loads a code module once
(keyed by source hash) and then evaluates many calls, streamed one reply frame
per item so that a timeout or a crash costs exactly one item.

Time limits are two-level: the worker raises inside user code on SIGALRM
(cheap, the worker survives), and the parent kills the whole process group when
an item overruns its hard deadline (user code that swallows the alarm, long C
calls), then restarts the worker for the remaining items.

Isolation is process-level, not a security boundary against a determined
attacker: code that slips past :func:`check_untrusted_python` can still read
files the user can read. The static check plus restricted builtins and imports
are the first line; limits and process isolation keep the run alive.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriscale.backends.python import worker as worker_module
from veriscale.backends.python.worker import HEADER, MAX_MODULES, SAFE_MODULES, encode_value

WORKER_SCRIPT = Path(worker_module.__file__).resolve()

# ---------------------------------------------------------------------------
# static check


BANNED_NAMES = frozenset(
    {
        "open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars",
        "getattr", "setattr", "delattr", "breakpoint", "input", "help", "exit", "quit",
        "memoryview", "__builtins__", "__loader__", "__spec__", "__build_class__",
    }
)
ALLOWED_DUNDER_ATTRS = frozenset({"__init__", "__name__", "__doc__"})
BANNED_ATTRS = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "ag_frame", "ag_code",
        "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "tb_frame", "tb_next",
        "co_code", "func_globals", "mro", "modules", "system", "popen",
    }
)


@functools.cache
def module_escape_attrs() -> frozenset[str]:
    """Attribute names through which an allowed module reaches a disallowed one
    (``typing.sys``, ``random._os``, ``dataclasses.builtins``...).

    Computed from the allowed modules themselves, so a new Python version's
    imports are covered; attribute access by these names is rejected whatever
    the base expression, since aliases are easy to hide from a static check.
    """
    import importlib
    import types

    banned: set[str] = set()
    for name in sorted(SAFE_MODULES):
        try:
            mod = importlib.import_module(name)
        except ImportError:  # pragma: no cover - all are stdlib
            continue
        for attr, value in vars(mod).items():
            if (isinstance(value, types.ModuleType)
                    and value.__name__.split(".")[0] not in SAFE_MODULES):
                banned.add(attr)
    return frozenset(banned)



def check_untrusted_python(source: str) -> str | None:
    """Why ``source`` must not run (``None`` when it passes).

    Rejects syntax errors, imports outside the pure-computation allow-list,
    I/O and reflection builtins, dunder attribute access (the classic
    ``().__class__.__bases__`` escapes) and frame/code introspection. This is a
    first filter; the sandbox stays safe for code that slips past it.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"syntax: {exc.msg} (line {exc.lineno})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"syntax: {type(exc).__name__}: {exc}"
    for node in ast.walk(tree):
        why = _check_node(node)
        if why:
            line = getattr(node, "lineno", "?")
            return f"unsafe: {why} (line {line})"
    return None


def _check_node(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top not in SAFE_MODULES:
                return f"import of {alias.name!r} is not allowed"
    elif isinstance(node, ast.ImportFrom):
        top = (node.module or "").split(".")[0]
        if node.level or top not in SAFE_MODULES:
            return f"import from {node.module or '.'!r} is not allowed"
        for alias in node.names:
            if alias.name.startswith("_") or alias.name in module_escape_attrs():
                return f"import of {alias.name!r} from {node.module!r} is not allowed"
    elif isinstance(node, ast.Name):
        if node.id in BANNED_NAMES:
            return f"use of {node.id!r} is not allowed"
        if node.id.startswith("__") and node.id.endswith("__") and node.id != "__name__":
            return f"use of {node.id!r} is not allowed"
    elif isinstance(node, ast.Attribute):
        attr = node.attr
        if attr.startswith("__") and attr not in ALLOWED_DUNDER_ATTRS:
            return f"access to attribute {attr!r} is not allowed"
        if attr in BANNED_ATTRS or attr in module_escape_attrs():
            return f"access to attribute {attr!r} is not allowed"
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        bad = [n for n in node.names if n.startswith("__")]
        if bad:
            return f"declaration of {bad[0]!r} is not allowed"
    return None


# ---------------------------------------------------------------------------
# results and limits


@dataclass(frozen=True)
class CallResult:
    """One item's result: the native value when ``ok``, else the failure text
    (``timeout``, ``memory``, ``exit: ...``, ``crash: ...``, ``error: ...``,
    ``ill_typed: ...``, ``compile: ...``, ``output_limit: ...``)."""

    ok: bool
    value: Any = None
    error: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class SandboxLimits:
    timeout: float = 2.0  # per item (soft in the worker, hard = timeout + grace in the parent)
    batch_timeout: float | None = None  # per round trip; None: 10 x timeout, at least 10 s
    load_timeout: float = 5.0  # executing a module's top level
    memory_mb: int = 512  # RLIMIT_AS of each worker
    cpu_seconds: float | None = None  # optional per-item CPU budget (SIGXCPU kills)
    max_output_bytes: int = 32 * 1024 * 1024
    recursion_limit: int = 10000

    @property
    def grace(self) -> float:
        return max(0.5, 0.5 * self.timeout)

    @property
    def effective_batch_timeout(self) -> float:
        return self.batch_timeout or max(10.0, 10 * self.timeout)


@dataclass
class SandboxStats:
    processes: int = 0
    restarts: int = 0
    round_trips: int = 0
    items: int = 0
    loads: int = 0
    extra: dict[str, int] = field(default_factory=dict)


def module_key(source: str, restricted: bool) -> str:
    return hashlib.sha256(f"{int(restricted)}\0{source}".encode()).hexdigest()


def clean_env() -> dict[str, str]:
    """The whole environment a worker sees: nothing inherited, no secrets."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",  # string-set iteration order in user code is reproducible
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }


def _untag(v: Any, depth: int = 0) -> Any:
    """Wire form → native Python; raises ValueError on any shape the worker never sends."""
    if depth > 5000:
        raise ValueError("value nested too deeply")
    if isinstance(v, list):
        return [_untag(x, depth + 1) for x in v]
    if isinstance(v, dict):
        if set(v) == {"t"} and isinstance(v["t"], list):
            return tuple(_untag(x, depth + 1) for x in v["t"])
        if set(v) == {"x"} and isinstance(v["x"], str):
            return int(v["x"], 16)
        raise ValueError("unexpected object in worker reply")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise ValueError(f"unexpected {type(v).__name__} in worker reply")


# ---------------------------------------------------------------------------
# one worker process, seen from the parent


class _Dead(Exception):
    """The worker is gone (EOF, broken pipe) or spoke garbage; ``reason`` is the item failure."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Late(Exception):
    """No complete reply before the deadline."""


class WorkerProcess:
    """A live worker subprocess and the parent's end of its two pipes."""

    def __init__(self, limits: SandboxLimits, stats: SandboxStats) -> None:
        self.limits = limits
        self.stats = stats
        self.proc: subprocess.Popen[bytes] | None = None
        self.tmpdir: str | None = None
        self.req_w = -1
        self.resp_r = -1
        self.buf = bytearray()
        self.loaded: OrderedDict[str, None] = OrderedDict()
        self.started = 0

    # -- lifecycle --------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        self.tmpdir = tempfile.mkdtemp(prefix="veriscale-worker-")
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-s", "-S", "-P", "-B", str(WORKER_SCRIPT), str(req_r),
                 str(resp_w)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(req_r, resp_w), cwd=self.tmpdir, env=clean_env(),
                start_new_session=True,
            )
        finally:
            os.close(req_r)
            os.close(resp_w)
        self.req_w, self.resp_r = req_w, resp_r
        self.buf = bytearray()
        self.loaded = OrderedDict()
        self.stats.processes += 1
        self.started += 1
        cfg = {
            "memory_mb": self.limits.memory_mb, "cpu_seconds": self.limits.cpu_seconds,
            "fsize_mb": 16, "recursion_limit": self.limits.recursion_limit,
            "max_output_bytes": self.limits.max_output_bytes,
        }
        try:
            self._send(cfg)
            ready = self._recv(time.monotonic() + 30.0)
        except (_Dead, _Late) as exc:
            self.kill()
            raise RuntimeError(f"sandbox worker failed to start: {exc}") from exc
        if not (isinstance(ready, dict) and ready.get("ready")):
            self.kill()
            raise RuntimeError("sandbox worker failed to start: bad handshake")

    def kill(self) -> None:
        """Kill the worker's whole process group and release its pipes and directory."""
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL always lands
                self.proc.wait(timeout=5)
        for fd in (self.req_w, self.resp_r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.req_w = self.resp_r = -1
        self.proc = None
        self.loaded = OrderedDict()
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None

    def stop(self) -> None:
        if self.alive:
            try:
                self._send({"op": "quit"})
                assert self.proc is not None
                self.proc.wait(timeout=1)
            except (OSError, _Dead, subprocess.TimeoutExpired):
                pass
        self.kill()

    def ensure_started(self) -> None:
        if not self.alive:
            if self.started:
                self.stats.restarts += 1
            self.kill()
            self.start()

    # -- framing ------------------------------------------------------------

    def _send(self, obj: Any) -> None:
        body = json.dumps(obj).encode("utf-8")
        data = memoryview(HEADER.pack(len(body)) + body)
        try:
            while data:
                n = os.write(self.req_w, data)
                data = data[n:]
        except OSError as exc:
            raise _Dead(self._death_reason()) from exc

    def _recv(self, deadline: float) -> Any:
        limit = self.limits.max_output_bytes + 4096
        while True:
            if len(self.buf) >= HEADER.size:
                (size,) = HEADER.unpack(self.buf[: HEADER.size])
                if size > limit:
                    raise _Dead("crash: protocol violation (oversized frame)")
                if len(self.buf) >= HEADER.size + size:
                    body = bytes(self.buf[HEADER.size : HEADER.size + size])
                    del self.buf[: HEADER.size + size]
                    try:
                        return json.loads(body)
                    except (ValueError, RecursionError) as exc:
                        raise _Dead("crash: protocol violation (unreadable frame)") from exc
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Late
            ready, _, _ = select.select([self.resp_r], [], [], remaining)
            if not ready:
                raise _Late
            chunk = os.read(self.resp_r, 1 << 20)
            if not chunk:
                raise _Dead(self._death_reason())
            self.buf.extend(chunk)

    def _death_reason(self) -> str:
        """Failure text for a worker that stopped talking: its exit status or signal."""
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "crash: worker closed its protocol channel"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            if name == "SIGXCPU":
                return "timeout"
            return f"crash: killed by signal {name}"
        return f"exit: worker exited with status {code}"

    # -- operations -----------------------------------------------------------

    def load(self, key: str, source: str, restricted: bool) -> str | None:
        """Load a module unless loaded; ``None`` or the ``compile: ...`` failure."""
        if key in self.loaded:
            self.loaded.move_to_end(key, last=True)
            return None
        self.ensure_started()
        self.stats.loads += 1
        self._send({"op": "load", "key": key, "source": source, "restricted": restricted,
                    "timeout": self.limits.load_timeout})
        try:
            reply = self._recv(time.monotonic() + self.limits.load_timeout + self.limits.grace)
        except _Late:
            self.kill()
            return "compile: timeout while executing the module"
        except _Dead as exc:
            self.kill()
            return f"compile: {exc.reason}"
        if not isinstance(reply, dict) or "ok" not in reply:
            self.kill()
            return "compile: crash: protocol violation"
        if not reply["ok"]:
            return str(reply.get("error", "compile: failed"))
        self.loaded[key] = None
        while len(self.loaded) > MAX_MODULES:  # mirrors the worker's FIFO eviction
            self.loaded.popitem(last=False)
        return None

    def _drain(self, n: int, deadline: float) -> None:
        """Read and drop ``n`` pending replies (kill the worker if they do not come)."""
        try:
            for _ in range(n):
                self._recv(deadline)
        except (_Dead, _Late):
            self.kill()

    def probe(self, key: str, funcs: Sequence[str]) -> str | None:
        """``None`` when the loaded module defines a callable among ``funcs``."""
        try:
            self._send({"op": "probe", "key": key, "funcs": list(funcs)})
            reply = self._recv(time.monotonic() + 5.0)
        except (_Dead, _Late) as exc:
            self.kill()
            return f"compile: crash: worker failed while probing ({type(exc).__name__})"
        if not isinstance(reply, dict) or not isinstance(reply.get("defined"), (str, type(None))):
            self.kill()
            return "compile: crash: protocol violation"
        if reply["defined"] is None:
            return f"compile: no function {' or '.join(funcs)} defined"
        return None

    def call_batch(
        self, key: str, funcs: Sequence[str], batch: Sequence[list[Any]],
    ) -> tuple[list[CallResult], str | None]:
        """Send one round trip; return the results received in order and, if the
        batch stopped early, why (``"item"``: the item after the results failed
        hard and is included as a failure; ``"batch"``: the batch deadline hit;
        ``"reload"``: the worker no longer holds the module)."""
        lim = self.limits
        self.stats.round_trips += 1
        results: list[CallResult] = []
        try:
            self._send({"op": "call", "key": key, "funcs": list(funcs),
                        "items": list(batch),
                        "timeout": lim.timeout})
        except _Dead as exc:
            self.kill()
            return [CallResult(False, error=exc.reason)], "item"
        start = time.monotonic()
        batch_deadline = start + lim.effective_batch_timeout if len(batch) > 1 else float("inf")
        for i in range(len(batch)):
            item_deadline = time.monotonic() + lim.timeout + lim.grace
            try:
                reply = self._recv(min(item_deadline, batch_deadline))
            except _Late:
                self.kill()
                if time.monotonic() >= item_deadline or len(batch) == 1:
                    results.append(CallResult(False, error="timeout", seconds=lim.timeout))
                    return results, "item"
                return results, "batch"
            except _Dead as exc:
                self.kill()
                results.append(CallResult(False, error=exc.reason))
                return results, "item"
            parsed = _parse_item(reply, i)
            if parsed is None:
                self.kill()
                results.append(CallResult(False, error="crash: protocol violation"))
                return results, "item"
            if parsed.error == "missing_module":
                # The worker evicted the module (mirror out of sync): reload, then
                # continue from this item. Later replies of this batch say the same.
                self._drain(len(batch) - i - 1, item_deadline)
                self.loaded.pop(key, None)
                return results, "reload"
            results.append(parsed)
        return results, None


def _parse_item(reply: Any, index: int) -> CallResult | None:
    if not isinstance(reply, dict) or reply.get("i") != index:
        return None
    seconds = reply.get("seconds", 0.0)
    seconds = float(seconds) if isinstance(seconds, (int, float)) else 0.0
    if reply.get("ok") is True:
        try:
            return CallResult(True, _untag(reply.get("value")), seconds=seconds)
        except (ValueError, RecursionError):
            return None
    error = reply.get("error")
    if reply.get("ok") is False and isinstance(error, str):
        return CallResult(False, error=error, seconds=seconds)
    return None


# ---------------------------------------------------------------------------
# the pool


class Sandbox:
    """A pool of ``workers`` worker processes evaluating calls in batches.

    ``call_many`` splits items into chunks of ``batch_size`` (one round trip
    each) spread over the pool; results come back in input order. Workers start
    lazily and are reused across calls and modules.
    """

    def __init__(self, workers: int = 2, limits: SandboxLimits | None = None,
                 batch_size: int = 64) -> None:
        self.limits = limits or SandboxLimits()
        self.batch_size = max(1, batch_size)
        self.stats = SandboxStats()
        self._workers = [WorkerProcess(self.limits, self.stats) for _ in range(max(1, workers))]
        self._idle: queue.LifoQueue[WorkerProcess] = queue.LifoQueue()  # warm workers first
        for w in self._workers:
            self._idle.put(w)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._load_errors: dict[str, str] = {}
        self._closed = False

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for w in self._workers:
            w.stop()

    def load_error(self, source: str, restricted: bool, funcs: Sequence[str] = ()) -> str | None:
        """Load ``source`` in a worker; ``None`` when it loads and defines one of ``funcs``."""
        key = module_key(source, restricted)
        w = self._idle.get()
        try:
            err = self._load(w, key, source, restricted)
            if err is None and funcs:
                err = w.probe(key, funcs)
            return err
        except RuntimeError as exc:
            return f"compile: crash: {exc}"
        finally:
            self._idle.put(w)

    def _load(self, w: WorkerProcess, key: str, source: str, restricted: bool) -> str | None:
        with self._lock:
            cached = self._load_errors.get(key)
        if cached is not None:
            return cached
        w.ensure_started()
        err = w.load(key, source, restricted)
        if err is not None:
            with self._lock:
                self._load_errors[key] = err
        return err

    def call_many(
        self, source: str, funcs: Sequence[str], items: Sequence[Sequence[Any]], *,
        restricted: bool = True,
    ) -> list[CallResult]:
        """Call the first defined function of ``funcs`` in module ``source`` on each
        item (positional native arguments); never raises for a bad item."""
        if self._closed:
            raise RuntimeError("sandbox is closed")
        if not items:
            return []
        key = module_key(source, restricted)
        out: list[CallResult | None] = [None] * len(items)
        wire: list[list[Any]] = [[] for _ in items]
        for k, args in enumerate(items):
            try:
                wire[k] = [encode_value(a) for a in args]
            except (ValueError, TypeError, RecursionError) as exc:
                out[k] = CallResult(False, error=f"ill_typed: input has no wire form: {exc}")
        todo = [k for k in range(len(items)) if out[k] is None]
        chunks = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]

        def work(chunk: list[int]) -> None:
            w = self._idle.get()
            try:
                for idx, res in zip(chunk, self._run_chunk(w, key, source, restricted, funcs,
                                                           [wire[k] for k in chunk]),
                                    strict=True):
                    out[idx] = res
            finally:
                self._idle.put(w)

        if len(chunks) == 1 or len(self._workers) == 1:
            for chunk in chunks:
                work(chunk)
        else:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=len(self._workers),
                                                    thread_name_prefix="veriscale-sandbox")
            for fut in [self._executor.submit(work, c) for c in chunks]:
                fut.result()
        self.stats.items += len(items)
        return [r if r is not None else CallResult(False, error="crash: no result") for r in out]

    def _run_chunk(
        self, w: WorkerProcess, key: str, source: str, restricted: bool,
        funcs: Sequence[str], items: list[list[Any]],
    ) -> list[CallResult]:
        """All items of one chunk; after a hard failure the worker restarts and the
        remaining items continue (individually after a batch-deadline overrun)."""
        results: list[CallResult] = []
        single = False
        reloads = 0
        while len(results) < len(items):
            try:
                err = self._load(w, key, source, restricted)
            except RuntimeError as exc:
                err = f"crash: {exc}"
            if err is not None:
                results.extend(CallResult(False, error=err)
                               for _ in range(len(items) - len(results)))
                break
            pending = items[len(results):]
            batch = pending[:1] if single else pending
            got, stop = w.call_batch(key, funcs, batch)
            results.extend(got)
            if stop == "batch":
                single = True
            elif stop == "reload":
                reloads += 1
                if reloads > 2:
                    w.kill()
                    results.extend(CallResult(False, error="crash: worker keeps losing the module")
                                   for _ in range(len(items) - len(results)))
        return results
