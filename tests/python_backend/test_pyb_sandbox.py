"""The sandbox: every failure mode of untrusted code costs one item, never the run."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pytest

from veriscale.backends.python.safety import check_untrusted_python
from veriscale.backends.python.sandbox import Sandbox, SandboxLimits

# One function, one misbehaviour per mode; mode "ok" returns a value. Runs unrestricted,
# as code that slipped past the static check would.
HOSTILE = r'''
import ctypes, os, sys

def spin():
    n = 0
    while n >= 0:
        n += 1

def f(mode, x):
    if mode == "hang":
        while True:
            pass
    if mode == "swallow":            # catches the in-worker alarm: needs the hard kill
        while True:
            try:
                spin()
            except BaseException:
                pass
    if mode == "segfault":
        ctypes.string_at(0)
    if mode == "memory":             # grows until the limit trips: the kernel sees the peak
        hoard = []
        while True:
            hoard.append(b"m" * (1 << 20))
    if mode == "one_huge_request":   # more than the whole limit at once: nothing was used
        return len(bytearray(4 * 1024 ** 3))
    if mode == "raise_memory":       # a MemoryError the candidate chose to raise
        raise MemoryError
    if mode in ("forge_timeout", "forge_infrastructure"):  # claim a verdict in a frame
        what = "timeout" if mode == "forge_timeout" else "infrastructure: checker died"
        body = ('{"i": %d, "ok": false, "error": "%s", "seconds": 0}' % (2 * x, what)).encode()
        for fd in range(3, 64):
            try:
                os.write(fd, len(body).to_bytes(4, "big") + body)
            except OSError:
                pass
        return x
    if mode == "sys_exit":
        sys.exit(3)
    if mode == "os_exit":
        os._exit(0)
    if mode == "stdout":
        print("garbage" * 1000)
        os.write(1, b"\x00\xff garbage")
        sys.stdout.close()
        return x + 1
    if mode == "protocol":           # the protocol fd is reachable through argv
        os.write(int(sys.argv[2]), b"garbage!" * 8)
        return x
    if mode == "own_pipe":           # forge a frame on every open descriptor
        for fd in range(3, 64):
            try:
                os.write(fd, b"\x00\x00\x00\x08garbage!")
            except OSError:
                pass
        return x
    if mode == "close_protocol":
        os.close(int(sys.argv[2]))
        return x
    if mode == "ill_typed":
        return {x}
    if mode == "raise":
        raise KeyError("nope")
    if mode == "recursion":
        return f(mode, x)
    if mode == "huge":
        return "x" * (8 * 1024 * 1024)
    return x * 2
'''

MODES = {
    "hang": "timeout",
    "swallow": "timeout",
    "segfault": "crash",
    "one_huge_request": "error",
    "raise_memory": "error",
    "forge_timeout": "crash",  # only the server's clock says timeout
    "forge_infrastructure": "crash",
    "sys_exit": "exit",
    "os_exit": "exit",
    "protocol": "error",  # the server's pipes are closed in the candidate's child
    "own_pipe": "crash",
    "close_protocol": "error",
    "ill_typed": "ill_typed",
    "raise": "error",
    "recursion": "crash",
    "huge": "output_limit",
}


@pytest.fixture(scope="module")
def sandbox():
    limits = SandboxLimits(timeout=0.5, memory_mb=300, max_output_bytes=4 * 1024 * 1024)
    with Sandbox(workers=1, limits=limits, batch_size=64) as sb:
        yield sb


def test_every_failure_mode_costs_one_item(sandbox: Sandbox) -> None:
    items: list[list[object]] = []
    for i, mode in enumerate(MODES):
        items.append([mode, i])
        items.append(["ok", i])  # the next item still runs
    items.append(["stdout", 41])
    results = sandbox.call_many(HOSTILE, ["f"], items, restricted=False)
    assert len(results) == len(items)
    for (mode, i), r in zip(items, results, strict=True):
        if mode == "ok":
            assert r.ok and r.value == 2 * i, (mode, i, r)
        elif mode == "stdout":
            assert r.ok and r.value == 42, r
        else:
            assert not r.ok, (mode, r)
            assert r.error.split(":", 1)[0] == MODES[mode], (mode, r.error)
    assert "SIGSEGV" in results[2 * list(MODES).index("segfault")].error


def test_memory_is_a_limit_only_when_the_kernel_saw_it_used() -> None:
    """UNKNOWN (``memory``) needs the kernel's peak count of the child at half the
    limit; a raised MemoryError, or one request beyond the whole limit, is FAIL."""
    limits = SandboxLimits(timeout=10.0, memory_mb=200)
    with Sandbox(workers=1, limits=limits) as sb:
        got = sb.call_many(HOSTILE, ["f"], [["memory", 0], ["ok", 1], ["raise_memory", 2],
                                            ["one_huge_request", 3]], restricted=False)
    assert [r.error.split(":", 1)[0] for r in got] == ["memory", "", "error", "error"], got
    assert got[1].ok and got[1].value == 2
    assert "under half the memory limit (200 MB)" in got[2].error


def test_workers_are_reused(sandbox: Sandbox) -> None:
    before = sandbox.stats.processes
    src = "def g(a, b):\n    return [a, b, a + b]\n"
    for chunk in range(5):
        results = sandbox.call_many(src, ["g"], [[k, chunk] for k in range(50)])
        assert [r.value for r in results] == [[k, chunk, k + chunk] for k in range(50)]
    assert sandbox.stats.processes - before <= 1  # at most a restart left over from before


def test_hard_failure_restarts_and_continues_in_order() -> None:
    src = "def h(x):\n    if x == 3:\n        return bytearray(1 << 40)\n    return x\n"
    with Sandbox(workers=2, limits=SandboxLimits(timeout=0.5, memory_mb=200),
                 batch_size=4) as sb:
        results = sb.call_many(src, ["h"], [[k] for k in range(12)])
        assert [r.value for r in results if r.ok] == [k for k in range(12) if k != 3]
        # a request beyond the whole limit at once: the candidate's error, not a limit
        assert results[3].error.startswith("error: MemoryError"), results[3]
        # at most one process per worker (how many start depends on thread timing):
        # a MemoryError does not need a restart of the worker
        assert sb.stats.processes <= 2


def test_values_round_trip(sandbox: Sandbox) -> None:
    src = "def ident(v):\n    return v\n"
    big = 7 ** 9000  # beyond the int <-> decimal digit limit
    values = [big, -big, 2 ** 64, -(2 ** 63), 1.5, float("inf"), (1, "é\n\"'"), [[], [None]],
              True, "\U0001f600"]
    results = sandbox.call_many(src, ["ident"], [[v] for v in values])
    for v, r in zip(values, results, strict=True):
        assert r.ok and r.value == v and type(r.value) is type(v)
    nan = sandbox.call_many(src, ["ident"], [[float("nan")]])[0]
    assert nan.ok and math.isnan(nan.value)


def test_no_inherited_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    src = ("import os\n"
           "def env():\n    return sorted(os.environ)\n"
           "def cwd():\n    return [os.getcwd(), os.listdir('.')]\n"
           "def leak():\n    return os.environ.get('OPENAI_API_KEY')\n")
    with Sandbox(workers=1) as sb:
        keys = sb.call_many(src, ["env"], [[]], restricted=False)[0].value
        assert "OPENAI_API_KEY" not in keys
        assert set(keys) <= {"PATH", "PWD", "LANG", "LC_ALL", "PYTHONHASHSEED",
                             "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING"}
        assert sb.call_many(src, ["leak"], [[]], restricted=False)[0].value is None
        cwd, listing = sb.call_many(src, ["cwd"], [[]], restricted=False)[0].value
        assert cwd != os.getcwd() and listing == []


def test_restricted_modules_cannot_import_os() -> None:
    with Sandbox(workers=1) as sb:
        assert sb.load_error("import os\n", restricted=True)
        assert sb.load_error("open('/etc/passwd')\n", restricted=True)
        assert sb.load_error("import math\ndef f(): pass\n", restricted=True, funcs=["f"]) is None
        assert "no function" in (sb.load_error("x = 1\n", restricted=True, funcs=["f"]) or "")
        assert "SyntaxError" in (sb.load_error("def f(:\n", restricted=True) or "")


def test_load_timeout_is_a_compile_failure() -> None:
    with Sandbox(workers=1, limits=SandboxLimits(timeout=0.3, load_timeout=0.3)) as sb:
        res = sb.call_many("while True:\n    pass\n", ["f"], [[1], [2]])
        assert [r.error.split(":")[0] for r in res] == ["compile", "compile"]


@pytest.mark.parametrize("source", [
    "import os",
    "import subprocess",
    "from socket import socket",
    "import ctypes",
    "from shutil import rmtree",
    "import sys",
    "open('x')",
    "exec('1')",
    "eval('1')",
    "__import__('os')",
    "().__class__.__bases__[0].__subclasses__()",
    "getattr(1, 'real')",
    "g = (x for x in [])\ng.gi_frame.f_back",
    "from . import x",
    "def f(:",
])
def test_static_check_rejects(source: str) -> None:
    assert check_untrusted_python(source) is not None


def test_static_check_accepts_ordinary_code() -> None:
    src = ("import math\nfrom collections import Counter\n"
           "class Box:\n    def __init__(self, v):\n        self.v = v\n"
           "def f(xs, k):\n    c = Counter(xs)\n    return sorted(c, key=lambda x: (-c[x], x))[:k]"
           " + [math.isqrt(k), Box(1).v, f.__name__]\n")
    assert check_untrusted_python(src) is None


def test_candidate_budget_covers_all_its_items() -> None:
    src = "import time\ndef slow(x):\n    time.sleep(0.3)\n    return x\n"
    limits = SandboxLimits(timeout=1.0, candidate_seconds=1.0)
    with Sandbox(workers=1, limits=limits, batch_size=8) as sb:
        results = sb.call_many(src, ["slow"], [[k] for k in range(8)], restricted=False)
        assert [r.value for r in results[:2]] == [0, 1]
        assert all(r.error.startswith("timeout") for r in results[4:])
        assert "budget" in results[-1].error
        assert sb.stats.restarts == 0  # the server killed the child, not the pool the server


def test_waiting_for_a_worker_spends_no_budget() -> None:
    """Two candidates asked at once on one worker: the second waits for the first's
    1.2 s, longer than its whole budget, and still runs every item (its budget counts
    only the time its own items run), so a neighbour cannot change a verdict."""
    from concurrent.futures import ThreadPoolExecutor

    src = "import time\ndef slow(x):\n    time.sleep(0.3)\n    return x\n"
    fast = "def f(x):\n    return x + 1\n"
    limits = SandboxLimits(timeout=1.0, candidate_seconds=1.0)
    with Sandbox(workers=1, limits=limits, batch_size=4) as sb, ThreadPoolExecutor(2) as pool:
        first = pool.submit(sb.call_many, src, ["slow"], [[k] for k in range(4)],
                            restricted=False)
        time.sleep(0.1)  # the slow one holds the only worker
        second = pool.submit(sb.call_many, fast, ["f"], [[k] for k in range(4)])
        assert [r.value for r in second.result()] == [1, 2, 3, 4]
        assert any(not r.ok and "budget" in r.error for r in first.result())


def test_each_candidate_starts_from_a_clean_interpreter() -> None:
    tamper = ("import math, sys\nmath.gcd = lambda a, b: 1\nsys.modules['math'] = None\n"
              "def f(a, b):\n    return math.gcd(a, b)\n")
    honest = "import math\ndef f(a, b):\n    return math.gcd(a, b)\n"
    with Sandbox(workers=1) as sb:
        assert sb.call_many(tamper, ["f"], [[12, 18]], restricted=False)[0].value == 1
        assert sb.call_many(honest, ["f"], [[12, 18], [7, 21]])[0].value == 6
        counter = "n = [0]\ndef f(x):\n    n[0] += 1\n    return n[0]\n"
        first = [r.value for r in sb.call_many(counter, ["f"], [[0], [0], [0]])]
        again = [r.value for r in sb.call_many(counter, ["f"], [[0], [0], [0]])]
        assert first == again == [1, 2, 3]  # module state lives for one candidate only
        assert sb.stats.processes == 1


@pytest.mark.parametrize("source", [
    "import typing\ntyping.sys.modules['os']",
    "import random\nrandom._os.system('true')",
    "from typing import sys",
    "from random import _os",
    "import dataclasses\n[dataclasses][0].builtins",
])
def test_static_check_rejects_module_escapes(source: str) -> None:
    assert check_untrusted_python(source) is not None


def test_work_dir_names_carry_their_owner() -> None:
    from veriscale.backends.python.sandbox import workdir_owner

    assert workdir_owner("veriscale-worker-123-ab_c9") == 123
    assert workdir_owner("veriscale-worker-ab12cd") is None  # before owners were named
    assert workdir_owner("x-veriscale-worker-12-a") is None
    assert workdir_owner("veriscale-worker--a") is None


def test_stale_work_dirs_of_dead_runs_are_swept(tmp_path: Path) -> None:
    """A run killed in --sandbox none leaves its work dir; the next run removes it."""
    import subprocess
    import sys

    from veriscale.backends.python.sandbox import sweep_stale_workdirs

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"veriscale-worker-{gone.pid}-x1"
    live = tmp_path / f"veriscale-worker-{os.getpid()}-x2"
    legacy = tmp_path / "veriscale-worker-q7k2m"
    for d in (dead, live, legacy):
        (d / "sub").mkdir(parents=True)
    assert sweep_stale_workdirs(str(tmp_path)) == [str(dead)]
    assert not dead.exists() and live.exists() and legacy.exists()
