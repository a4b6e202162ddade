"""OS isolation of untrusted code: bubblewrap, rlimits, death with the parent.

Use :func:`configure` once (the CLI's ``--sandbox auto|os|none``), then start
every child through :func:`spawn` (or :func:`run` for a prover that runs to
completion). :func:`current` says which isolation is in force, for stderr, the
manifest and ``--json`` output.
"""

from veriscale.backends.isolation.policy import (
    ENV_VAR,
    MODES,
    SANDBOX_UID,
    IsolationInfo,
    IsolationUnavailable,
    configure,
    current,
    probe_bwrap,
    resolve,
    using,
    warn_if_unisolated,
)
from veriscale.backends.isolation.process import (
    Completed,
    Mounts,
    ProcessLimits,
    bwrap_argv,
    kill_group,
    run,
    spawn,
    tool_mounts,
)
from veriscale.backends.isolation.seccomp import build_filter, denied_syscalls

__all__ = [
    "ENV_VAR", "MODES", "SANDBOX_UID", "Completed", "IsolationInfo", "IsolationUnavailable",
    "Mounts", "ProcessLimits", "build_filter", "bwrap_argv", "configure", "current",
    "denied_syscalls", "kill_group", "probe_bwrap", "resolve", "run", "spawn",
    "tool_mounts", "using", "warn_if_unisolated",
]
