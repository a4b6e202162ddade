"""The one way VeriScale starts a child process that may run untrusted code.

Every child (Python sandbox workers, ``lean``, ``coqc``) is started here so that
it (1) runs under bubblewrap when isolation is in force, (2) has rlimits, (3) is
the leader of its own process group, so one ``killpg`` ends it and its children,
and (4) dies with VeriScale whatever kills it: ``PR_SET_PDEATHSIG`` (SIGKILL)
in the child, ``--die-with-parent`` inside bubblewrap, and bubblewrap's pid
namespace, whose processes the kernel kills when its first process ends.

``PR_SET_PDEATHSIG`` fires when the *thread* that forked the child ends, not
the process; children are therefore forked by one long-lived spawner thread,
never by a short-lived worker thread of a pool.

bubblewrap arms ``--die-with-parent`` only late in its set-up, in both of its
processes: a VeriScale killed in those milliseconds left the sandbox running, or
left its inner process blocked for ever on a signal from an outer one that had
died with us (both seen here, about one spawn in seven on a loaded machine).
So bubblewrap itself is not given ``PR_SET_PDEATHSIG``: it always finishes its
set-up. Inside the sandbox the command is started by a shell that first forks a
*lifeline* watcher: it blocks on the read end of a pipe whose only write end
this process holds, and when the pipe closes (VeriScale is gone, however it
died) it kills every process of the sandbox's pid namespace, and bubblewrap
exits with them. Once its set-up is done, bubblewrap's own ``--die-with-parent``
also holds, and ``kill_group`` (a timeout) still ends a sandbox at any point.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veriscale.backends.isolation.policy import SANDBOX_UID, IsolationInfo, current

PR_SET_PDEATHSIG = 1

try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _prctl = _libc.prctl
    _prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                       ctypes.c_ulong]
    _prctl.restype = ctypes.c_int
except (OSError, AttributeError):  # pragma: no cover - not Linux
    _prctl = None


@dataclass(frozen=True)
class ProcessLimits:
    """rlimits of the child (``None``: inherited). Memory and file size in MB."""

    memory_mb: int | None = None
    cpu_seconds: float | None = None
    fsize_mb: int | None = None
    nproc: int | None = None
    nofile: int | None = None
    stack_mb: int | None = None  # RLIMIT_STACK: how far the main thread's stack may grow
    core: bool = False


@dataclass(frozen=True)
class Mounts:
    """What an isolated child sees of the file system.

    ``minimal``: only ``/usr`` (and the root links into it), a fresh /dev, /proc
    and /tmp, plus ``ro`` paths: no host configuration, homes or data. Otherwise
    (tools such as Lean) the whole root read-only with a fresh /tmp and ``hide``
    paths covered by empty directories. ``rw`` paths are writable, at the same place.
    ``dirs``: empty directories made in the private /tmp (a working directory that
    lists nothing, wherever the bound paths sit).
    """

    minimal: bool = False
    ro: tuple[str, ...] = ()
    rw: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    tmp_size_mb: int = 64


def _rlimit_setters(limits: ProcessLimits) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    if limits.memory_mb:
        out.append((resource.RLIMIT_AS, int(limits.memory_mb) * 1024 * 1024))
    if limits.cpu_seconds:
        out.append((resource.RLIMIT_CPU, max(1, int(limits.cpu_seconds + 0.999))))
    if limits.fsize_mb:
        out.append((resource.RLIMIT_FSIZE, int(limits.fsize_mb) * 1024 * 1024))
    if limits.nproc is not None:
        out.append((resource.RLIMIT_NPROC, int(limits.nproc)))
    if limits.nofile:
        out.append((resource.RLIMIT_NOFILE, int(limits.nofile)))
    if limits.stack_mb:
        out.append((resource.RLIMIT_STACK, int(limits.stack_mb) * 1024 * 1024))
    if not limits.core:
        out.append((resource.RLIMIT_CORE, 0))
    return out


def _preexec(limits: ProcessLimits, parent: int, pdeathsig: bool = True
             ) -> Callable[[], None]:
    setters = _rlimit_setters(limits)

    def apply() -> None:  # in the child, between fork and exec: no allocation-heavy work
        if _prctl is not None and pdeathsig:
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect, or before exec
            os._exit(1)
        for which, value in setters:
            with contextlib.suppress(ValueError, OSError):
                _, hard = resource.getrlimit(which)
                if hard != resource.RLIM_INFINITY:
                    value = min(value, hard)
                resource.setrlimit(which, (value, value if which != resource.RLIMIT_CPU
                                           else value + 1))

    return apply


# ---------------------------------------------------------------------------
# bubblewrap command line


def _root_links() -> list[str]:
    """Recreate the root's links into /usr (merged-/usr systems) or bind the real dirs."""
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _outermost(paths: Iterable[str]) -> list[str]:
    """Existing absolute paths, without those inside another of them (bind once)."""
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)})
    out: list[str] = []
    for p in real:
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out.append(p)
    return out


# The watcher: reopen the lifeline through /proc (dash redirects only fds 0-9), wait
# for it to close, then SIGKILL everything in the pid namespace but pid 1 (bubblewrap,
# which exits when its command does). It never runs outside bubblewrap's pid namespace,
# where ``kill -1`` would reach every process of the user.
_LIFELINE_SCRIPT = ('{ exec 3</proc/self/fd/"$1" || exit 0; read -r _ <&3; kill -KILL -1; } '
                    '</dev/null >/dev/null 2>&1 & shift; exec "$@"')


class _Lifeline:
    """A pipe whose write end only this process holds, made again after a fork."""

    def __init__(self) -> None:
        self._pid = -1
        self._read = self._write = -1
        self._lock = threading.Lock()

    def read_end(self) -> int:
        with self._lock:
            if self._pid != os.getpid():  # new process (fork): its own lifeline
                r, w = os.pipe()  # both close-on-exec: no child ever holds the write end
                self._pid, self._read, self._write = os.getpid(), r, w
            return self._read


_LIFELINE = _Lifeline()


def bwrap_argv(bwrap: str, argv: Sequence[str], *, cwd: str, mounts: Mounts,
               lifeline: int | None = None) -> list[str]:
    """The full ``bwrap ... -- argv`` command line for one isolated child.

    With ``lifeline`` (a pipe's read end passed to the child), ``argv`` runs under
    the watcher described in the module docstring.
    """
    args = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_UID), "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--hostname", "veriscale-sandbox"]
    if mounts.minimal:
        args += ["--ro-bind", "/usr", "/usr", *_root_links()]
    else:
        args += ["--ro-bind", "/", "/"]
    args += ["--dev", "/dev", "--proc", "/proc",
             "--size", str(int(mounts.tmp_size_mb) * 1024 * 1024), "--tmpfs", "/tmp"]
    for hidden in mounts.hide:
        if os.path.isdir(hidden):
            args += ["--tmpfs", hidden]
    usr = ("/usr/",) if mounts.minimal else ()
    for p in _outermost(mounts.ro):
        if not (mounts.minimal and p.startswith(usr)):
            args += ["--ro-bind", p, p]
    for p in _outermost(mounts.rw):
        args += ["--bind", p, p]
    for d in mounts.dirs:
        args += ["--dir", d]
    args += ["--chdir", cwd, "--"]
    if lifeline is not None:
        args += ["/bin/sh", "-c", _LIFELINE_SCRIPT, "veriscale-lifeline", str(lifeline)]
    return [*args, *argv]


def tmp_paths_mentioned(argv: Sequence[str], env: Mapping[str, str] | None) -> list[str]:
    """Top-level /tmp entries a command names (argv, ``PATH``-like env values).

    A tool's files under /tmp (the WASM Lean install, a Lean work dir) would be
    hidden by the sandbox's private /tmp; these are bound back read-only.
    """
    words = list(argv)
    for value in (env or {}).values():
        words += value.split(os.pathsep)
    out: list[str] = []
    for w in words:
        if not w.startswith("/tmp/"):
            continue
        top = "/tmp/" + w[len("/tmp/"):].split("/", 1)[0]
        if top not in out and os.path.exists(top):
            out.append(top)
    return out


def interpreter_paths() -> list[str]:
    """This Python's own installation where it lives under /tmp (a virtual environment
    in a checkout there): exactly its prefix, not the /tmp entry that holds it. A tool
    written in Python (a test's fake ``lean``) runs with it; nothing else of the
    checkout is bound."""
    paths = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix),
             os.path.dirname(os.path.realpath(sys.executable))}
    return sorted(p for p in paths if p.startswith("/tmp/"))


def tool_mounts(argv: Sequence[str], cwd: str | os.PathLike[str],
                env: Mapping[str, str] | None, *, rw: Sequence[str] = (),
                hide: Sequence[str] = ()) -> Mounts:
    """Mounts for a prover (lean, coqc): read-only host, private /tmp, writable ``cwd``."""
    return Mounts(minimal=False, ro=(*tmp_paths_mentioned(argv, env), *interpreter_paths()),
                  rw=(os.fspath(cwd), *rw), hide=tuple(hide))


# ---------------------------------------------------------------------------
# spawning


class _Spawner:
    """One daemon thread that forks every child (see the module docstring)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = (
            queue.SimpleQueue())
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def call(self, fn: Callable[[], Any]) -> Any:
        if threading.current_thread() is self._thread:
            return fn()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="veriscale-spawner",
                                                daemon=True)
                self._thread.start()
        fut: Future[Any] = Future()
        self._queue.put((fn, fut))
        return fut.result()

    def _loop(self) -> None:
        while True:
            fn, fut = self._queue.get()
            try:
                fut.set_result(fn())
            except BaseException as exc:  # handed to the caller
                fut.set_exception(exc)


_SPAWNER = _Spawner()


def _check_executable(program: str, env: Mapping[str, str] | None, cwd: str) -> None:
    """Raise ``FileNotFoundError`` like ``Popen`` would for a program that cannot run."""
    import shutil

    if os.sep in program:
        path = program if os.path.isabs(program) else os.path.join(cwd, program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return
    else:
        search = (env or os.environ).get("PATH", os.defpath)
        if shutil.which(program, path=search):
            return
    raise FileNotFoundError(2, "No such file or directory", program)


def spawn(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    isolation: IsolationInfo | None = None,
    mounts: Mounts | None = None,
    limits: ProcessLimits | None = None,
    stdin: Any = subprocess.DEVNULL,
    stdout: Any = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    """Start ``argv``: isolated when ``isolation`` (default: the process-wide one) says
    so, in its own session and process group, with ``limits``, dying with us.

    ``mounts`` defaults to :func:`tool_mounts` (read-only host, writable ``cwd``).
    Raises ``OSError`` when the program cannot be started.
    """
    info = isolation if isolation is not None else current()
    cwd = os.fspath(cwd)
    cmd = list(argv)
    fds = tuple(pass_fds)
    host_cwd = cwd
    if info.isolated:
        # the child's cwd may exist only inside the sandbox (``Mounts.dirs``)
        host_cwd = cwd if os.path.isdir(cwd) else "/"
        _check_executable(cmd[0], env, cwd)  # bwrap would only report it as exit status 1
        m = mounts if mounts is not None else tool_mounts(argv, cwd, env)
        lifeline = _LIFELINE.read_end()
        cmd = bwrap_argv(info.bwrap, cmd, cwd=cwd, mounts=m, lifeline=lifeline)
        fds += (lifeline,)
    # bubblewrap must finish its set-up whatever happens to us (module docstring)
    preexec = _preexec(limits or ProcessLimits(), os.getpid(), pdeathsig=not info.isolated)

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            cmd, cwd=host_cwd, env=dict(env) if env is not None else None, stdin=stdin,
            stdout=stdout, stderr=stderr, pass_fds=fds, start_new_session=True,
            preexec_fn=preexec,
        )

    proc: subprocess.Popen[bytes] = _SPAWNER.call(start)
    return proc


def kill_group(proc: subprocess.Popen[Any], wait: float = 5.0) -> None:
    """SIGKILL ``proc``'s process group (it leads one, see :func:`spawn`) and reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=wait)


@dataclass
class Completed:
    """What :func:`run` returns: ``returncode`` is ``None`` when killed for the timeout."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    error: str = ""  # why the program could not start


def run(argv: Sequence[str], *, cwd: str | os.PathLike[str], timeout: float,
        env: Mapping[str, str] | None = None, isolation: IsolationInfo | None = None,
        mounts: Mounts | None = None, limits: ProcessLimits | None = None,
        input: bytes | None = None) -> Completed:
    """Run a prover-like tool to completion under :func:`spawn`; for runners (coqc...)."""
    try:
        proc = spawn(argv, cwd=cwd, env=env, isolation=isolation, mounts=mounts,
                     limits=limits,
                     stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        return Completed(127, b"", b"", False, error=f"cannot start {argv[0]}: {exc}")
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        return Completed(None, out or b"", err or b"", True)
    except BaseException:
        kill_group(proc)
        raise
    return Completed(proc.returncode, out or b"", err or b"", False)
