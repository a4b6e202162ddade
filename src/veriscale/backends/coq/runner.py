"""Running ``coqc`` on one file: the one place a Coq process is started.

Every ``coqc`` is started by :func:`veriscale.backends.isolation.spawn`: under
bubblewrap when isolation is in force, in its own process group, dying with us,
under an address-space and CPU limit, and a wall-clock limit (the group is
killed on timeout). What a
run returns is its stdout, stderr, exit status and whether a limit hit, so that
the backend can map answers back to checks and blame the check that was
running when the process died.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from veriscale.backends import isolation


@dataclass(frozen=True)
class CoqRun:
    stdout: str
    stderr: str
    returncode: int
    timed_out: bool
    seconds: float

    @property
    def memory_exhausted(self) -> bool:
        text = self.stderr.lower()
        return self.returncode in (-signal.SIGABRT, -signal.SIGKILL, 134, 137) or \
            "out of memory" in text or "stack overflow" in text


class CoqUnavailable(RuntimeError):
    """No ``coqc`` could be found."""


def find_coqc(coqc: str = "coqc") -> str:
    path = shutil.which(coqc)
    if path is None:
        raise CoqUnavailable(f"{coqc!r} is not on PATH (apt-get install coq)")
    return path


@functools.lru_cache(maxsize=8)
def coqc_version(coqc: str = "coqc") -> str:
    """``coqc --version`` in one line, or ``"<coqc> (version unknown)"``: another Coq
    may answer a check otherwise, so the oracle cache and remote nodes compare it."""
    try:
        out = subprocess.run([find_coqc(coqc), "--version"], capture_output=True, text=True,
                             timeout=30).stdout
        return " ".join(out.split()[:6])
    except (OSError, RuntimeError, subprocess.SubprocessError):
        return f"{coqc} (version unknown)"


def spawn_coqc(coqc: str, source: str, *, timeout: float, memory_mb: int) -> CoqRun:
    """Compile ``source`` with ``coqc`` in a fresh temporary folder, under limits."""
    with tempfile.TemporaryDirectory(prefix="veriscale-coq-") as tmp:
        path = Path(tmp) / "Check.v"
        path.write_text(source, encoding="utf-8")
        start = time.perf_counter()
        # OS isolation, rlimits, own process group, dies with us
        proc = isolation.spawn(
            [coqc, "-q", "-w", "-all", path.name], cwd=tmp, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env={**os.environ, "LC_ALL": "C.UTF-8"},
            limits=isolation.ProcessLimits(memory_mb=memory_mb, cpu_seconds=int(timeout) + 1),
        )
        timed_out = False
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        return CoqRun(out.decode("utf-8", "surrogateescape"),
                      err.decode("utf-8", "surrogateescape"), proc.returncode, timed_out,
                      time.perf_counter() - start)


@dataclass(frozen=True)
class CoqcFile:
    """``coqc`` as a picklable runner of one file, for a remote executor's unit.

    It carries names and limits only: ``coqc`` (and QuickChick, when the file
    needs it) is looked up on the node that runs the file, not on the driver,
    so a node without them fails the unit rather than the candidate.
    """

    coqc: str
    timeout: float
    memory_mb: int
    quickchick: bool = False  # the file imports QuickChick
    name: str = "coqc"

    @classmethod
    def for_source(cls, source: str, coqc: str, timeout: float, memory_mb: int) -> CoqcFile:
        return cls(coqc, timeout, memory_mb, "From QuickChick Require" in source)

    def on_worker(self) -> CoqcFile:
        """Raise, naming what is missing, when this node cannot run the file."""
        find_coqc(self.coqc)
        if self.quickchick and not quickchick_available(self.coqc):
            raise CoqUnavailable("QuickChick is not installed for this coqc "
                                 "(apt-get install libcoq-quickchick)")
        return self

    def identity(self) -> str:
        return coqc_version(self.coqc)

    def run_text(self, name: str, text: str) -> CoqRun:
        return spawn_coqc(find_coqc(self.coqc), text, timeout=self.timeout,
                          memory_mb=self.memory_mb)


_QUICKCHICK: dict[str, bool] = {}


def quickchick_available(coqc: str = "coqc") -> bool:
    """Is libcoq-quickchick installed for this ``coqc`` (``user-contrib/QuickChick``)?"""
    if coqc not in _QUICKCHICK:
        import subprocess
        from pathlib import Path

        try:
            where = subprocess.run([find_coqc(coqc), "-where"], capture_output=True, text=True,
                                   timeout=30).stdout.strip()
            _QUICKCHICK[coqc] = (Path(where) / "user-contrib" / "QuickChick").is_dir()
        except (OSError, RuntimeError, subprocess.SubprocessError):
            _QUICKCHICK[coqc] = False
    return _QUICKCHICK[coqc]
