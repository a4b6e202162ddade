"""A seccomp-BPF filter for the process that runs one candidate.

Why a filter on top of bubblewrap: when VeriScale runs as root (containers, CI),
the user namespace maps the sandbox's uid 65534 to host root, and the kernel
never enforces ``RLIMIT_NPROC`` for host root; a fork bomb or a ``fork`` +
``setsid`` child would go unchecked. The filter refuses (``EPERM``) the system
calls a pure computation never needs: new processes and threads, ``exec``,
sockets, signalling or tracing other processes, SysV IPC, POSIX message queues and
``memfd_create`` (memory one candidate could leave for a later one), opening files
for writing and
changing the file tree, new namespaces/mounts, io_uring (which would bypass the
filter), ``open_by_handle_at``. It works with or without bubblewrap, so even
``--sandbox none`` keeps candidates from spawning, networking or writing files.

The program is assembled here (pure, tested) and installed in the sandbox
child by the worker script with two ``prctl`` calls.
"""

from __future__ import annotations

import platform
import struct

# seccomp_data offsets and return values (linux/seccomp.h, linux/filter.h)
_NR, _ARCH, _ARGS = 0, 4, 16
RET_KILL_PROCESS = 0x80000000
RET_ERRNO_EPERM = 0x00050000 | 1
RET_ALLOW = 0x7FFF0000
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_X32_BIT = 0x40000000
# O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND (same on x86_64 and aarch64)
WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000


# name -> number, for the architectures we know; a syscall absent on one is omitted.
_X86_64 = {
    "fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "execve": 59, "execveat": 322,
    "socket": 41, "socketpair": 53, "kill": 62, "tkill": 200, "tgkill": 234,
    "pidfd_send_signal": 424, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "creat": 85, "openat2": 437, "unlink": 87, "unlinkat": 263, "rename": 82,
    "renameat": 264, "renameat2": 316, "mkdir": 83, "mkdirat": 258, "rmdir": 84,
    "link": 86, "linkat": 265, "symlink": 88, "symlinkat": 266, "truncate": 76,
    "chmod": 90, "fchmodat": 268, "chown": 92, "fchownat": 260, "lchown": 94,
    "mknod": 133, "mknodat": 259, "mount": 165, "umount2": 166, "unshare": 272,
    "setns": 308, "pivot_root": 155, "chroot": 161, "bpf": 321, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "perf_event_open": 298,
    "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249,
    "name_to_handle_at": 303, "open_by_handle_at": 304,
    # memory and queues shared between processes (a channel from one candidate to a
    # later one: a SysV segment outlives its creator)
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65,
    "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70,
    "msgctl": 71, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
    "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "memfd_create": 319,
    "memfd_secret": 447,
}
_X86_64_OPEN = {"open": (2, 1), "openat": (257, 2)}  # name -> (number, index of flags)
_AARCH64 = {
    "clone": 220, "clone3": 435, "execve": 221, "execveat": 281, "socket": 198,
    "socketpair": 199, "kill": 129, "tkill": 130, "tgkill": 131, "pidfd_send_signal": 424,
    "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "ptrace": 117,
    "process_vm_readv": 270, "process_vm_writev": 271, "openat2": 437, "unlinkat": 35,
    "renameat": 38, "renameat2": 276, "mkdirat": 34, "linkat": 37, "symlinkat": 36,
    "truncate": 45, "fchmodat": 53, "fchownat": 54, "mknodat": 33, "mount": 40,
    "umount2": 39, "unshare": 97, "setns": 268, "pivot_root": 41, "chroot": 51, "bpf": 280,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217,
    "request_key": 218, "name_to_handle_at": 264, "open_by_handle_at": 265,
    "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183,
    "mq_notify": 184, "mq_getsetattr": 185, "msgget": 186, "msgctl": 187, "msgrcv": 188,
    "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193,
    "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "memfd_create": 279,
    "memfd_secret": 447,
}
_AARCH64_OPEN = {"openat": (56, 2)}

ARCHES = {
    "x86_64": (0xC000003E, _X86_64, _X86_64_OPEN, True),
    "aarch64": (0xC00000B7, _AARCH64, _AARCH64_OPEN, False),
}


def _insn(code: int, k: int, jt: int | str = 0, jf: int | str = 0) -> tuple:
    return (code, jt, jf, k)


def assemble(insns: list[tuple]) -> bytes:
    """``struct sock_filter[]``; symbolic jump targets ("deny", "allow") resolved."""
    labels = {"allow": len(insns), "deny": len(insns) + 1}
    out = bytearray()
    full = [*insns, _insn(_RET, RET_ALLOW), _insn(_RET, RET_ERRNO_EPERM)]
    for pos, (code, jt, jf, k) in enumerate(full):
        def rel(t: int | str, pos: int = pos) -> int:
            if isinstance(t, int):
                return t
            off = labels[t] - pos - 1
            if not 0 <= off <= 255:
                raise ValueError("seccomp program too long for a jump")
            return off
        out += struct.pack("=HBBI", code, rel(jt), rel(jf), k)
    return bytes(out)


def build_filter(machine: str | None = None) -> bytes | None:
    """The candidate filter for ``machine`` (default: this one), ``None`` if unknown."""
    machine = machine or platform.machine()
    if machine not in ARCHES:
        return None
    arch, denied, opens, has_x32 = ARCHES[machine]
    insns = [_insn(_LD_W_ABS, _ARCH), _insn(_JEQ, arch, 1, 0),
             _insn(_RET, RET_KILL_PROCESS), _insn(_LD_W_ABS, _NR)]
    if has_x32:
        insns.append(_insn(_JGE, _X32_BIT, "deny", 0))
    for nr in sorted(set(denied.values())):
        insns.append(_insn(_JEQ, nr, "deny", 0))
    for nr, flags_arg in sorted(opens.values()):
        # accumulator holds nr until an open matches; then the flags decide
        insns += [_insn(_JEQ, nr, 0, 2), _insn(_LD_W_ABS, _ARGS + 8 * flags_arg),
                  _insn(_JSET, WRITE_FLAGS, "deny", "allow")]
    return assemble(insns)


def denied_syscalls(machine: str | None = None) -> list[str]:
    """Names the filter refuses (for messages and docs)."""
    machine = machine or platform.machine()
    if machine not in ARCHES:
        return []
    _, denied, opens, _ = ARCHES[machine]
    return sorted(denied) + [f"{name}(write)" for name in sorted(opens)]
