"""Sandboxed execution of untrusted Python: a pool of isolated fork servers.

Why processes: candidate solutions, LLM-written adversaries and specs can hang,
crash the interpreter, exhaust memory, call ``os._exit`` or try to escape; none
of that may take the run down, touch the host, or reach another candidate. Each
pool worker is a pristine interpreter (``worker.py``) started through
:func:`veriscale.backends.isolation.spawn`: under bubblewrap when isolation is in
force (no network, read-only minimal root, private /tmp, uid 65534, dies with
us), in a clean environment, with rlimits. It forks one child per candidate
request, so every candidate starts from a clean interpreter; the child runs
under a seccomp filter and a CPU limit, and a per-item deadline and a
per-candidate wall-clock budget (across all its tests) are enforced by SIGKILL.

One result is capped (``max_output_bytes``) in the child, again in the server
and again here, so no candidate can grow the evaluator's memory.

The static screen (safety.py: :func:`check_untrusted_python`) and restricted builtins stay
as a first filter only.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import queue
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriscale.backends import isolation
from veriscale.backends.isolation import IsolationInfo, Mounts, ProcessLimits
from veriscale.backends.python import worker as worker_module
from veriscale.backends.python.worker import HEADER, encode_value

WORKER_SCRIPT = Path(worker_module.__file__).resolve()

# ---------------------------------------------------------------------------
# results and limits


@dataclass(frozen=True)
class CallResult:
    """One item's result: the native value when ``ok``, else the failure text
    (``timeout``, ``memory``, ``exit: ...``, ``crash: ...``, ``error: ...``,
    ``ill_typed: ...``, ``compile: ...``, ``output_limit: ...``,
    ``infrastructure: ...``)."""

    ok: bool
    value: Any = None
    error: str = ""
    seconds: float = 0.0
    arcs: tuple[tuple[int, int], ...] | None = None  # asked with ``trace`` (coverage)


@dataclass(frozen=True)
class SandboxLimits:
    timeout: float = 2.0  # per item: the server kills the child at timeout + grace
    candidate_seconds: float = 60.0  # one candidate's budget: the time its items run, summed
    load_timeout: float = 5.0  # executing a module's top level
    memory_mb: int = 512  # RLIMIT_AS of each worker and its children
    cpu_seconds: float | None = None  # optional per-item CPU budget (SIGXCPU kills)
    max_output_bytes: int = 1024 * 1024  # one encoded result
    recursion_limit: int = 10000
    fsize_mb: int = 16
    tmp_mb: int = 64  # size of the private /tmp under bubblewrap

    @property
    def grace(self) -> float:
        return max(0.5, 0.5 * self.timeout)

    @property
    def reply_deadline(self) -> float:
        """How long the parent waits for any frame before declaring the worker lost
        (the server itself enforces the item and load deadlines well before)."""
        return max(self.timeout, self.load_timeout) + 2 * self.grace + 10.0


@dataclass
class SandboxStats:
    processes: int = 0
    restarts: int = 0
    round_trips: int = 0
    items: int = 0
    loads: int = 0
    extra: dict[str, int] = field(default_factory=dict)


REFERENCE_FACTOR = 20.0
REFERENCE_FLOOR = 0.25


def follow_reference(reference_seconds: float | None, limits: SandboxLimits) -> float | None:
    """How long to wait for a mutant of the reference on an input the reference ran in
    ``reference_seconds``: twenty times that, at least a quarter second, never more than
    the configured limit, plus the same proportional grace. A loop is caught in a
    fraction of a second, not at the limit; an honest slower variant has room (a
    timeout is UNKNOWN, never a FAIL). ``None`` (the reference's time is not known):
    the configured limit."""
    if reference_seconds is None or reference_seconds < 0:
        return None
    limit = min(limits.timeout, max(REFERENCE_FLOOR, REFERENCE_FACTOR * reference_seconds))
    return limit + max(0.1, 0.5 * limit)


def module_key(source: str, restricted: bool) -> str:
    return hashlib.sha256(f"{int(restricted)}\0{source}".encode()).hexdigest()


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from the run seed, the candidate and (for items) its input."""
    text = "\0".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


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


ISOLATED_CWD = "/tmp/.veriscale-cwd"
"""The worker's working directory under bubblewrap (made empty in its private /tmp)."""


def python_paths() -> list[str]:
    """What the worker interpreter needs to see: its executable and standard library."""
    exe = os.path.realpath(sys.executable)
    return [os.path.dirname(exe), os.path.realpath(sys.base_prefix)]


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
# one worker process (a fork server), seen from the parent


class _Dead(Exception):
    """The worker is gone (EOF, broken pipe) or spoke garbage; ``reason`` is the failure."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Late(Exception):
    """No complete frame before the deadline."""


@dataclass
class RunReply:
    """What one ``run`` request gave: item results in order, or the module's load error;
    ``lost`` says why the worker was lost part way (the remaining items have no result)."""

    results: list[CallResult]
    load_error: str | None = None
    lost: str | None = None


WORKDIR_PREFIX = "veriscale-worker-"


def workdir_owner(name: str) -> int | None:
    """The pid in a work dir name ``veriscale-worker-<pid>-<random>``, else None."""
    head, _, rest = name.partition(WORKDIR_PREFIX)
    pid, sep, _ = rest.partition("-")
    return int(pid) if not head and sep and pid.isdigit() else None


def sweep_stale_workdirs(root: str | None = None) -> list[str]:
    """Remove the work dirs of unisolated workers whose VeriScale process is gone.

    A killed run cannot remove its own (SIGKILL runs no handler), so the next
    one does. A dir whose pid is alive is kept, whoever that pid is now.
    """
    root = root or tempfile.gettempdir()
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            pid = workdir_owner(entry.name)
            if pid is None or not entry.is_dir(follow_symlinks=False) or _pid_alive(pid):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


@functools.cache
def _swept_once() -> None:
    sweep_stale_workdirs()


class WorkerProcess:
    """A live fork server and the parent's end of its two pipes."""

    def __init__(self, limits: SandboxLimits, stats: SandboxStats,
                 isolation_info: IsolationInfo) -> None:
        self.limits = limits
        self.stats = stats
        self.isolation = isolation_info
        self.proc: subprocess.Popen[bytes] | None = None
        self.tmpdir: str | None = None
        self.req_w = -1
        self.resp_r = -1
        self.buf = bytearray()
        self.started = 0
        self.seccomp = False

    # -- lifecycle --------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        lim = self.limits
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        argv = [os.path.realpath(sys.executable), "-s", "-S", "-P", "-B", str(WORKER_SCRIPT),
                str(req_r), str(resp_w)]
        if self.isolation.isolated:
            # an empty directory of the private /tmp: /tmp itself would list the
            # folders of bound paths (a checkout under /tmp holding the worker)
            cwd = ISOLATED_CWD
        else:
            _swept_once()
            self.tmpdir = tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
            cwd = self.tmpdir
        mounts = Mounts(minimal=True, ro=(*python_paths(), str(WORKER_SCRIPT)),
                        tmp_size_mb=lim.tmp_mb, dirs=(ISOLATED_CWD,))
        try:
            self.proc = isolation.spawn(
                argv, cwd=cwd, env=clean_env(), isolation=self.isolation, mounts=mounts,
                limits=ProcessLimits(fsize_mb=lim.fsize_mb), pass_fds=(req_r, resp_w))
        except OSError as exc:
            os.close(req_w)
            os.close(resp_r)
            raise RuntimeError(f"sandbox worker failed to start: {exc}") from exc
        finally:
            os.close(req_r)
            os.close(resp_w)
        self.req_w, self.resp_r = req_w, resp_r
        self.buf = bytearray()
        self.stats.processes += 1
        self.started += 1
        program = isolation.build_filter()
        cfg = {
            "memory_mb": lim.memory_mb, "fsize_mb": lim.fsize_mb,
            "recursion_limit": lim.recursion_limit, "max_output_bytes": lim.max_output_bytes,
            "seccomp": program.hex() if program else "", "nproc": 0,
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
        self.seccomp = bool(ready.get("seccomp"))

    def kill(self) -> None:
        """Kill the worker's process group (and, under bwrap, its pid namespace)."""
        if self.proc is not None:
            isolation.kill_group(self.proc)
        for fd in (self.req_w, self.resp_r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.req_w = self.resp_r = -1
        self.proc = None
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
            raise _Dead("worker closed its request pipe") from exc

    def _recv(self, deadline: float) -> Any:
        limit = self.limits.max_output_bytes + 4096
        while True:
            if len(self.buf) >= HEADER.size:
                (size,) = HEADER.unpack(self.buf[: HEADER.size])
                if size > limit:
                    raise _Dead("protocol violation (oversized frame)")
                if len(self.buf) >= HEADER.size + size:
                    body = bytes(self.buf[HEADER.size : HEADER.size + size])
                    del self.buf[: HEADER.size + size]
                    try:
                        return json.loads(body)
                    except (ValueError, RecursionError) as exc:
                        raise _Dead("protocol violation (unreadable frame)") from exc
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Late
            ready, _, _ = select.select([self.resp_r], [], [], remaining)
            if not ready:
                raise _Late
            chunk = os.read(self.resp_r, 1 << 20)
            if not chunk:
                raise _Dead("worker exited")
            self.buf.extend(chunk)

    # -- the one operation ----------------------------------------------------

    def run(self, source: str, restricted: bool, funcs: Sequence[str],
            items: Sequence[list[Any]], seeds: Sequence[int], seed: int,
            budget: float, fresh: bool = False,
            waits: Sequence[float | None] | None = None, trace: bool = False) -> RunReply:
        """One candidate module on ``items`` in a fresh child of this server (with
        ``fresh``, a fresh child, and module, for each item; with ``waits``, how long
        the server waits for each item, where shorter than the limit)."""
        lim = self.limits
        self.stats.round_trips += 1
        self.stats.loads += 1
        reply = RunReply([])
        try:
            self._send({"op": "run", "source": source, "restricted": restricted,
                        "funcs": list(funcs), "items": list(items), "seeds": list(seeds),
                        "seed": seed, "timeout": lim.timeout, "load_timeout": lim.load_timeout,
                        "budget": budget, "cpu_seconds": lim.cpu_seconds, "fresh": fresh,
                        "waits": list(waits) if waits is not None else None,
                        "trace": trace})
            while True:
                frame = self._recv(time.monotonic() + lim.reply_deadline)
                if not isinstance(frame, dict):
                    raise _Dead("protocol violation (not an object)")
                if frame.get("done") is True:
                    return reply
                if isinstance(frame.get("load_error"), str):
                    reply.load_error = frame["load_error"]
                    continue
                parsed = _parse_item(frame, len(reply.results))
                if parsed is None:
                    raise _Dead("protocol violation (bad item frame)")
                reply.results.append(parsed)
        except _Late:
            reply.lost = "sandbox worker stopped responding"
        except _Dead as exc:
            reply.lost = f"sandbox worker lost: {exc.reason}"
        self.kill()
        return reply


def _parse_item(reply: Any, index: int) -> CallResult | None:
    if not isinstance(reply, dict) or reply.get("i") != index:
        return None
    seconds = reply.get("seconds", 0.0)
    seconds = float(seconds) if isinstance(seconds, (int, float)) else 0.0
    if reply.get("ok") is True:
        arcs = reply.get("arcs")
        if arcs is not None:
            if not (isinstance(arcs, list) and all(
                    isinstance(a, list) and len(a) == 2 and all(type(n) is int for n in a)
                    for a in arcs)):
                return None
            arcs = tuple((a[0], a[1]) for a in arcs)
        try:
            return CallResult(True, _untag(reply.get("value")), seconds=seconds, arcs=arcs)
        except (ValueError, RecursionError):
            return None
    error = reply.get("error")
    if reply.get("ok") is False and isinstance(error, str):
        return CallResult(False, error=error[:2000], seconds=seconds)
    return None


# ---------------------------------------------------------------------------
# the pool


class _Budget:
    """One candidate's time budget over all its items, spent only while one of its
    chunks runs on a worker: waiting for a worker that another candidate holds costs
    it nothing, so candidates evaluated side by side cannot change each other's
    verdicts."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._spent = 0.0
        self._lock = threading.Lock()

    def left(self) -> float:
        with self._lock:
            return self.seconds - self._spent

    def spend(self, seconds: float) -> None:
        with self._lock:
            self._spent += max(0.0, seconds)


class Sandbox:
    """A pool of ``workers`` fork servers evaluating candidates.

    ``call_many`` runs one candidate module on its items: the items are split into
    chunks of ``batch_size`` spread over the pool (each chunk in a fresh child),
    all under one wall-clock budget; results come back in input order.
    """

    def __init__(self, workers: int = 2, limits: SandboxLimits | None = None,
                 batch_size: int = 64, isolation_info: IsolationInfo | None = None,
                 seed: int = 0) -> None:
        self.limits = limits or SandboxLimits()
        self.batch_size = max(1, batch_size)
        self.stats = SandboxStats()
        self.isolation = isolation_info if isolation_info is not None else isolation.current()
        isolation.warn_if_unisolated(self.isolation)
        self.seed = seed
        self._workers = [WorkerProcess(self.limits, self.stats, self.isolation)
                         for _ in range(max(1, workers))]
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

    def describe(self) -> dict[str, Any]:
        """The isolation in force, for manifests and ``--json`` output."""
        out = self.isolation.to_json()
        out["seccomp"] = bool(isolation.build_filter())
        out["candidate_seconds"] = self.limits.candidate_seconds
        out["max_output_bytes"] = self.limits.max_output_bytes
        return out

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for w in self._workers:
            w.stop()

    def load_error(self, source: str, restricted: bool, funcs: Sequence[str] = ()) -> str | None:
        """Load ``source`` in a fresh child; ``None`` when it loads and defines one of ``funcs``
        (any callable when ``funcs`` is empty)."""
        key = module_key(source, restricted)
        with self._lock:
            cached = self._load_errors.get(key + "\0" + "\0".join(funcs))
        if cached is not None:
            return cached
        w = self._idle.get()
        try:
            for _attempt in range(2):
                try:
                    w.ensure_started()
                except RuntimeError as exc:
                    return f"infrastructure: {exc}"
                reply = w.run(source, restricted, list(funcs) or ["__veriscale_any__"], [], [],
                              derive_seed(self.seed, key), self.limits.candidate_seconds)
                if reply.lost is None:
                    break
            else:
                return f"infrastructure: {reply.lost}"
            err = reply.load_error
            if err is not None and not funcs and "no function" in err:
                err = None
            if err is not None and "timeout" not in err:
                with self._lock:
                    self._load_errors[key + "\0" + "\0".join(funcs)] = err
            return err
        finally:
            self._idle.put(w)

    @property
    def worker_count(self) -> int:
        return len(self._workers)

    def call_many(
        self, source: str, funcs: Sequence[str], items: Sequence[Sequence[Any]], *,
        restricted: bool = True, fresh: bool = False,
        waits: Sequence[float | None] | None = None, trace: bool = False,
    ) -> list[CallResult]:
        """Call the first defined function of ``funcs`` in module ``source`` on each
        item (positional native arguments); never raises for a bad item.

        ``fresh``: each item in a new child that loads the module anew, so nothing
        the module remembers from one item reaches the next (a specification must
        not tell the answer key from the adversaries by the order it sees them).
        ``waits``: per item, how long to wait for it (``None``: the limit); only a
        wait shorter than ``timeout`` and its grace is kept (see :func:`follow_reference`).
        ``trace``: each result carries the line arcs its call ran (``CallResult.arcs``)."""
        if self._closed:
            raise RuntimeError("sandbox is closed")
        if not items:
            return []
        key = module_key(source, restricted)
        budget = _Budget(self.limits.candidate_seconds)
        out: list[CallResult | None] = [None] * len(items)
        wire: list[list[Any]] = [[] for _ in items]
        seeds: list[int] = [0] * len(items)
        for k, args in enumerate(items):
            try:
                wire[k] = [encode_value(a) for a in args]
            except (ValueError, TypeError, RecursionError) as exc:
                out[k] = CallResult(False, error=f"ill_typed: input has no wire form: {exc}")
                continue
            seeds[k] = derive_seed(self.seed, key, json.dumps(wire[k]))
        todo = [k for k in range(len(items)) if out[k] is None]
        chunks = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]
        cand_seed = derive_seed(self.seed, key)

        def work(chunk: list[int]) -> None:
            w = self._idle.get()
            try:
                got = self._run_chunk(w, source, restricted, funcs, [wire[k] for k in chunk],
                                      [seeds[k] for k in chunk], cand_seed, budget, fresh,
                                      None if waits is None else [waits[k] for k in chunk],
                                      trace)
                for idx, res in zip(chunk, got, strict=True):
                    out[idx] = res
            finally:
                self._idle.put(w)

        if len(chunks) == 1 or len(self._workers) == 1:
            for chunk in chunks:
                work(chunk)
        else:
            with self._lock:  # candidates may be asked side by side
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(
                        max_workers=len(self._workers), thread_name_prefix="veriscale-sandbox")
            for fut in [self._executor.submit(work, c) for c in chunks]:
                fut.result()
        self.stats.items += len(items)
        return [r if r is not None else CallResult(False, error="infrastructure: no result")
                for r in out]

    def _run_chunk(
        self, w: WorkerProcess, source: str, restricted: bool, funcs: Sequence[str],
        items: list[list[Any]], seeds: list[int], cand_seed: int, budget: _Budget,
        fresh: bool = False, waits: list[float | None] | None = None, trace: bool = False,
    ) -> list[CallResult]:
        """All items of one chunk; a lost worker is restarted and the remaining items
        retried once, then what still has no result is an infrastructure failure."""
        results: list[CallResult] = []
        key = module_key(source, restricted) + "\0" + "\0".join(funcs)
        losses = 0

        def fill(error: str) -> None:
            results.extend(CallResult(False, error=error)
                           for _ in range(len(items) - len(results)))

        while len(results) < len(items):
            with self._lock:
                cached = self._load_errors.get(key)
            if cached is not None:
                fill(cached)
                break
            left = budget.left()
            if left <= 0:
                fill(f"timeout: the candidate's time budget "
                     f"({self.limits.candidate_seconds:g} s for all its tests) is spent")
                break
            try:
                w.ensure_started()
            except RuntimeError as exc:
                fill(f"infrastructure: {exc}")
                break
            done = len(results)
            began = time.monotonic()
            try:
                reply = w.run(source, restricted, funcs, items[done:], seeds[done:], cand_seed,
                              left, fresh, None if waits is None else waits[done:], trace)
            finally:
                budget.spend(time.monotonic() - began)
            results.extend(reply.results)
            if reply.load_error is not None:
                if "timeout" not in reply.load_error:
                    with self._lock:
                        self._load_errors[key] = reply.load_error
                fill(reply.load_error)
                break
            if reply.lost is not None:
                losses += 1
                if losses >= 2:
                    fill(f"infrastructure: {reply.lost}")
                    break
        return results
