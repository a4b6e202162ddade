"""Which OS isolation is in force: ``--sandbox auto|os|none``, detection, one warning.

Why one place: every runner of untrusted code (Python sandbox workers, Lean,
coqc) must agree on whether it is isolated, and the user must be told once,
clearly, when it is not. ``auto`` isolates when bubblewrap works and says so
when it does not; ``os`` refuses to run untrusted code unisolated; ``none``
turns OS isolation off on purpose (still warned about).

There is no ``os.unshare`` fallback: a sound one needs a read-only remount of
the whole tree, a private /tmp, a new pid namespace with an init and uid
mapping, which is bubblewrap re-implemented; without bwrap we say "none".
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

MODES = ("auto", "os", "none")
ENV_VAR = "VERISCALE_SANDBOX"
SANDBOX_UID = 65534  # nobody


class IsolationUnavailable(RuntimeError):
    """``--sandbox os`` was asked for and this machine cannot isolate."""


@dataclass(frozen=True)
class IsolationInfo:
    """The isolation in force: ``kind`` is ``bwrap`` or ``none``; ``reason`` says why not."""

    mode: str
    kind: str
    reason: str = ""
    bwrap: str = ""

    @property
    def isolated(self) -> bool:
        return self.kind == "bwrap"

    def describe(self) -> str:
        if self.isolated:
            return ("bubblewrap (user, pid, network, ipc, mount namespaces; no network; "
                    f"read-only root; private /tmp; uid {SANDBOX_UID}; dies with its parent)")
        return f"none ({self.reason})"

    def to_json(self) -> dict[str, object]:
        return {"mode": self.mode, "kind": self.kind, "isolated": self.isolated,
                "reason": self.reason, "description": self.describe()}


@functools.cache
def probe_bwrap() -> tuple[str, str]:
    """(path to a working ``bwrap``, "") or ("", why it cannot be used).

    Runs bwrap once with every namespace the sandbox asks for, since an
    installed bwrap may still be refused (no user namespaces, AppArmor policy).
    """
    exe = shutil.which("bwrap")
    if not exe:
        return "", "bubblewrap (bwrap) is not installed; `apt-get install bubblewrap`"
    cmd = [exe, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid",
           str(SANDBOX_UID), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
           "--tmpfs", "/tmp", "--die-with-parent", "--new-session", "true"]
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", f"bwrap failed to start: {exc}"
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return "", f"bwrap cannot create namespaces here: {tail[-1] if tail else done.returncode}"
    return exe, ""


REFUSAL = ("refusing to run model-written code without OS isolation: {why}. Install "
           "bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`), or pass "
           "--sandbox none to run it unisolated on purpose")


def resolve(mode: str | None = None, *, untrusted: bool = False) -> IsolationInfo:
    """The isolation for ``mode`` (default: ``$VERISCALE_SANDBOX`` or ``auto``).

    ``untrusted``: the code to run was written by a model (``evaluate --solutions``,
    an LLM's adversaries): ``auto`` then refuses as ``os`` does, since the static
    screens are a convenience, not a boundary; only ``none``, said on purpose, runs
    such code unisolated."""
    mode = (mode or os.environ.get(ENV_VAR) or "auto").strip().lower()
    if mode not in MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}; choose one of {', '.join(MODES)}")
    if mode == "none":
        return IsolationInfo(mode, "none", "OS isolation turned off (--sandbox none)")
    exe, why = probe_bwrap()
    if exe:
        return IsolationInfo(mode, "bwrap", bwrap=exe)
    if mode == "os":
        raise IsolationUnavailable(
            f"--sandbox os: refusing to run untrusted code without OS isolation: {why}")
    if untrusted:
        raise IsolationUnavailable(REFUSAL.format(why=why))
    return IsolationInfo(mode, "none", why)


_lock = threading.Lock()
_current: IsolationInfo | None = None
_warned: set[str] = set()


def configure(mode: str | None, *, untrusted: bool = False) -> IsolationInfo:
    """Set the process-wide isolation (the CLI's ``--sandbox``); warns once if none.
    ``untrusted``: as :func:`resolve`."""
    global _current
    info = resolve(mode, untrusted=untrusted)
    with _lock:
        _current = info
    warn_if_unisolated(info)
    return info


@contextlib.contextmanager
def using(mode: str | None) -> Iterator[IsolationInfo]:
    """Temporarily set the process-wide isolation (tests; an embedding caller)."""
    global _current
    with _lock:
        before = _current
    info = configure(mode)
    try:
        yield info
    finally:
        with _lock:
            _current = before


def current() -> IsolationInfo:
    """The process-wide isolation (resolved from the environment on first use)."""
    global _current
    with _lock:
        info = _current
    if info is None:
        info = configure(None)
    return info


def warn_if_unisolated(info: IsolationInfo) -> None:
    """One loud line on stderr per process and reason, when untrusted code runs unisolated."""
    if info.isolated:
        return
    with _lock:
        if info.reason in _warned:
            return
        _warned.add(info.reason)
    sys.stderr.write(
        "veriscale: WARNING: untrusted code runs WITHOUT OS isolation: "
        f"{info.reason}. The static screens are a convenience, not a boundary (bubblewrap "
        "plus seccomp is): rlimits and a seccomp filter remain. Use --sandbox os to refuse "
        "instead.\n")
    sys.stderr.flush()
