"""Run ``lean --json FILE`` (native or WebAssembly), as a process of its own or served
by a Lean session (:mod:`session`).

Both runners speak the same command line and return a :class:`process.LeanProcessResult`
(a timeout or crash is a result, never an exception).
"""

from __future__ import annotations

import copy
import logging
import os
import resource
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from veriscale.backends.lean import compiled_eval, session, wasm_setup
from veriscale.backends.lean.process import LeanProcessResult, run_command

log = logging.getLogger(__name__)

WORKER_PRELOAD = Path(__file__).with_name("wasm_threads.cjs")
"""Loaded into node before ``lean.js``: gives Lean's threads ``worker_stack_mb`` of stack."""
WORKER_STACK_ENV = "VERISCALE_LEAN_WORKER_STACK_MB"

# Lean stops a file at its 100th error (``maxErrors``, read from the command line:
# a ``set_option`` in the file does not reach the frontend's count). A file of
# thousands of checks has more: ill-typed candidates, checks over the heartbeat probe.
LEAN_OPTIONS = ("-DmaxErrors=1000000",)


_POOL_LOCK = threading.Lock()

WALL_PER_CPU = 8.0
"""Wall-clock backstop of a CPU-limited Lean file, in multiples of its CPU limit: on a
shared machine a file can get an eighth of a core and still finish; a process that
hangs without using CPU is still stopped."""


class LeanRunner:
    """What the backend needs from a runner: a place for files and ``lean --json FILE``."""

    name = "lean"
    supports_compiled = True
    supports_plausible = False
    accepts_mathlib = False

    cpu_timeout = False
    """``timeout`` limits the Lean process's CPU seconds (with a wall-clock backstop of
    :data:`WALL_PER_CPU` times as long) instead of wall-clock seconds."""

    sessions = False
    """Serve files that have a base (:data:`session.BASE_END`) from long-lived Lean
    processes (:mod:`session`): one Lean start per base and worker, not one per file."""

    def __init__(self, *, timeout: float, memory_mb: int | None, work_dir: Path | None) -> None:
        self.timeout = float(timeout)
        self.memory_mb = memory_mb
        self._work_dir = Path(work_dir) if work_dir else None
        self._pool: session.SessionPool | None = None
        self._ended_starts = 0  # session starts of pools already closed
        self.session_size = 2  # Lean sessions kept: the backend sets its worker count

    def __getstate__(self) -> dict[str, object]:
        # a copy (another backend's, a remote worker's) starts sessions of its own, and
        # counts only those (a count copied along was counted twice)
        state = dict(self.__dict__)
        state["_pool"] = None
        state["_ended_starts"] = 0
        return state

    def close_sessions(self) -> None:
        """End this runner's idle Lean sessions (a running one ends when its file does)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            self._ended_starts += pool.starts
            pool.close()

    def session_starts(self) -> int:
        """Lean processes this runner started as sessions, over its life."""
        return self._ended_starts + (0 if self._pool is None else self._pool.starts)

    def work_dir(self) -> Path:
        if self._work_dir is None:
            self._work_dir = Path(tempfile.mkdtemp(prefix="veriscale-lean-"))
        self._work_dir.mkdir(parents=True, exist_ok=True)
        return self._work_dir

    def command(self, file: Path) -> tuple[list[str], Path, dict[str, str]]:
        raise NotImplementedError

    stack_mb: int | None = None
    """``RLIMIT_STACK`` of the Lean process (``None``: inherited)."""

    stall_seconds: float | None = None
    """A file whose Lean uses this many CPU seconds without a message (before its first:
    beyond its start's allowance, :data:`START_CPU_SECONDS`),
    is stopped as timed out (set by the backend in compiled mode; None: no such limit)."""

    compiled_imports: tuple[str, ...] = ()
    """Modules a compiled-mode file imports before anything else (see :meth:`compiled_prelude`)."""

    def compiled_prelude(self) -> str:
        """Lean text a compiled-mode file needs after its imports for ``#eval`` to work."""
        return ""

    def run_file(self, file: Path, timeout: float | None = None,
                 on_line: Callable[[int], None] | None = None) -> LeanProcessResult:
        """Run ``file``; ``timeout`` (default: the runner's) for this file alone;
        ``on_line``: see :func:`run_command`."""
        limit = self.timeout if timeout is None else float(timeout)
        wall, cpu = (limit * WALL_PER_CPU, limit) if self.cpu_timeout else (limit, None)
        if self.sessions:
            with _POOL_LOCK:
                if self._pool is None:
                    self._pool = session.SessionPool(self.session_size)
            got = session.run_in_session(self, self._pool, Path(file), cpu_limit=cpu or limit,
                                         wall_limit=wall, stall=self.stall_seconds,
                                         on_line=on_line)
            if got is not None:
                return got
        cmd, cwd, env = self.command(Path(file))
        return run_command(cmd, cwd=cwd, env=env, timeout=wall, memory_mb=self.memory_mb,
                           cpu_seconds=cpu, stack_mb=self.stack_mb, on_line=on_line,
                           stall_seconds=self.stall_seconds)

    def identity(self) -> str:
        """Distinguishes runners in result caches (a different Lean may answer differently)."""
        return self.name

    def on_worker(self) -> LeanRunner:
        """This runner made ready on the node of a remote worker (raise if it cannot be)."""
        return self


class NativeRunner(LeanRunner):
    """``lean`` from PATH (or ``lean_path``), or ``lake env lean`` inside ``project_dir``.

    A Lake project is where Mathlib and Plausible live; without one only core
    Lean (Init/Std/Lean) is importable.
    """

    name = "native"

    def __init__(
        self,
        *,
        lean_path: str | None = None,
        project_dir: Path | None = None,
        lake_path: str | None = None,
        timeout: float = 300.0,
        memory_mb: int | None = 20480,
        work_dir: Path | None = None,
        plausible: bool | None = None,
    ) -> None:
        super().__init__(timeout=timeout, memory_mb=memory_mb, work_dir=work_dir)
        self.lean_path = lean_path or "lean"
        self.project_dir = Path(project_dir) if project_dir else None
        self.lake_path = lake_path or "lake"
        self.accepts_mathlib = self.project_dir is not None
        self.supports_plausible = self.project_dir is not None if plausible is None else plausible

    def command(self, file: Path) -> tuple[list[str], Path, dict[str, str]]:
        env = dict(os.environ)
        if self.project_dir is not None:
            return ([self.lake_path, "env", self.lean_path, *LEAN_OPTIONS, "--json",
                     str(file.resolve())], self.project_dir, env)
        return [self.lean_path, *LEAN_OPTIONS, "--json", str(file.resolve())], file.parent, env

    def available(self) -> bool:
        exe = self.lake_path if self.project_dir else self.lean_path
        return shutil.which(exe) is not None or Path(exe).is_file()

    def on_worker(self) -> NativeRunner:
        exe = self.lake_path if self.project_dir else self.lean_path
        if not self.available():
            raise FileNotFoundError(f"no {exe} on PATH")
        if self.project_dir is not None and not self.project_dir.is_dir():
            raise FileNotFoundError(f"no Lean project at {self.project_dir}")
        return self

    def identity(self) -> str:
        return f"native:{self.lean_path}:{self.project_dir or ''}"


class WasmRunner(LeanRunner):
    """Lean 4 compiled to WebAssembly, run by Node 26 (see ``shared/lean/WASM.md``).

    The module mounts only /tmp and /home, so files, the working directory and
    ``LEAN_PATH`` must live there. Installs itself on first use.
    """

    name = "wasm"
    supports_compiled = True  # with the prelude of compiled_eval
    compiled_imports = compiled_eval.IMPORTS
    supports_plausible = False
    accepts_mathlib = False
    cpu_timeout = True  # a 2-core machine shared with other work must not time files out
    sessions = True  # a start is about 20 CPU s: paid once per worker, not per file

    # lean.js recurses once per command, on node's main thread and in a worker
    # (measured: a file of about 3,600 commands overflowed node's default 984 KB
    # main stack; with 7 MB there, one of 5,800 overflowed a worker's default 4 MB;
    # with both raised, 20,000 commands ran, at the same 3.7 GB of memory).
    stack_mb = 64
    """``RLIMIT_STACK``: how far node's main thread may grow (V8 is told three quarters)."""
    worker_stack_mb = 256
    """Stack of each of Lean's threads (node Workers; reserved, touched only as used)."""

    def __init__(
        self,
        *,
        cache_dir: Path | None = None,
        timeout: float = 2400.0,
        memory_mb: int | None = None,  # V8 reserves large virtual ranges: RLIMIT_AS breaks it
        work_dir: Path | None = None,
        auto_install: bool = True,
    ) -> None:
        if work_dir is not None and not wasm_setup.is_visible(Path(work_dir)):
            raise ValueError(f"{work_dir}: the WASM Lean only sees /tmp and /home")
        super().__init__(timeout=timeout, memory_mb=memory_mb, work_dir=work_dir)
        self.cache_dir = Path(cache_dir) if cache_dir else wasm_setup.default_cache_dir()
        self._cache_dir_given = Path(cache_dir) if cache_dir else None
        self.auto_install = auto_install
        self._install: wasm_setup.WasmInstall | None = None

    def work_dir(self) -> Path:
        if self._work_dir is None:
            self._work_dir = Path(tempfile.mkdtemp(prefix="veriscale-lean-", dir="/tmp"))
        return super().work_dir()

    def install(self) -> wasm_setup.WasmInstall:
        if self._install is None:
            inst = wasm_setup.WasmInstall(Path(os.path.abspath(self.cache_dir)))
            if not inst.complete:
                if not self.auto_install:
                    raise wasm_setup.WasmSetupError(
                        f"WASM Lean not installed in {inst.root}: run `veriscale lean setup --wasm`"
                    )
                log.warning("WASM Lean not found in %s: installing it now (npm)", inst.root)
            # returns at once when complete; adds the launcher to an older install
            self._install = wasm_setup.install_wasm(inst.root)
        return self._install

    def on_worker(self) -> WasmRunner:
        """A copy that finds (or installs) the WASM Lean on this node, not the driver's."""
        mine = copy.copy(self)
        mine._install = None
        mine._work_dir = None
        mine.cache_dir = getattr(self, "_cache_dir_given", None) or wasm_setup.default_cache_dir()
        mine.install()
        return mine

    def command(self, file: Path) -> tuple[list[str], Path, dict[str, str]]:
        file = Path(os.path.abspath(file))
        if not wasm_setup.is_visible(file):
            raise ValueError(f"{file}: the WASM Lean only sees /tmp and /home")
        inst = self.install()
        env = dict(os.environ)
        env["LEAN_PATH"] = str(wasm_setup.find_lean_path(inst.lib_dir))
        env[WORKER_STACK_ENV] = str(self.worker_stack_mb)
        node_flags = [f"--stack-size={self.v8_stack_kb()}", "--require", str(WORKER_PRELOAD)]
        return ([str(inst.node), *node_flags, str(inst.launcher), *LEAN_OPTIONS, "--json",
                 file.name], file.parent, env)

    def v8_stack_kb(self) -> int:
        """node's ``--stack-size``: inside the stack the process will get (past it, node
        would segfault instead of reporting the overflow)."""
        hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
        room = self.stack_mb * 1024
        if hard != resource.RLIM_INFINITY:
            room = min(room, hard // 1024)
        return max(984, room * 3 // 4)

    def run_file(self, file: Path, timeout: float | None = None,
                 on_line: Callable[[int], None] | None = None) -> LeanProcessResult:
        """Run ``file`` (copied under /tmp first if the module could not see it)."""
        copy: Path | None = None
        if not wasm_setup.is_visible(Path(file)):
            copy = self.work_dir() / Path(file).name
            shutil.copyfile(file, copy)
        try:
            return super().run_file(copy or file, timeout, on_line)
        except wasm_setup.WasmSetupError as exc:  # a result, not an exception
            return LeanProcessResult([], 127, stderr=str(exc))
        finally:
            if copy is not None:
                copy.unlink(missing_ok=True)

    def compiled_prelude(self) -> str:
        return compiled_eval.prelude()

    def identity(self) -> str:
        return f"wasm:{wasm_setup.version_key()}"


def make_runner(
    kind: str = "auto",
    *,
    lean_path: str | None = None,
    project_dir: Path | None = None,
    timeout: float | None = None,
    memory_mb: int | None = None,
    cache_dir: Path | None = None,
    work_dir: Path | None = None,
    plausible: bool | None = None,
) -> LeanRunner:
    """``auto``: native when a Lean (or a Lake project) is configured or on PATH, else WASM."""
    if kind not in ("auto", "native", "wasm"):
        raise ValueError(f"unknown Lean runner {kind!r}; choose auto, native or wasm")
    if kind == "auto":
        native_exe = lean_path or ("lake" if project_dir else "lean")
        found = shutil.which(native_exe) is not None or Path(native_exe).is_file()
        kind = "native" if (project_dir or lean_path or found) else "wasm"
    if kind == "native":
        return NativeRunner(
            lean_path=lean_path, project_dir=project_dir,
            timeout=timeout if timeout is not None else 300.0,
            memory_mb=memory_mb if memory_mb is not None else 20480,
            work_dir=work_dir, plausible=plausible,
        )
    return WasmRunner(
        cache_dir=cache_dir, timeout=timeout if timeout is not None else 2400.0,
        memory_mb=memory_mb, work_dir=work_dir,
    )
