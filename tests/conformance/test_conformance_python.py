"""Hostile conformance suite, Python part: hostile and tricky candidates run for real.

Every candidate goes through the evaluator (``evaluate_candidate`` on a Python
backend) with the static screen OFF, as code that slipped past it would: what
holds here is the OS sandbox (bubblewrap, a fresh child per candidate, seccomp,
rlimits, output caps). Each case states the verdict it must get (lower bound of
the ``code`` metric) and the failure kinds of its tests; module-level checks
state what must not happen on the host: no file written outside the sandbox, no
host text or secret in any report, no connection to a host socket, no process
left behind, no cross-candidate contamination, no forged results, bounded
evaluator memory. Cases that need bubblewrap (reading host files is possible
without it) skip with the reason where it is absent; CI has it.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from veriscale.backends import isolation
from veriscale.backends.base import Implementation, Verdict
from veriscale.backends.python.backend import PythonBackend
from veriscale.backends.python.format import load_task_dir, new_task_dir
from veriscale.backends.python.safety import check_untrusted_python
from veriscale.backends.python.sandbox import WORKER_SCRIPT
from veriscale.benchmark.model import Spec, Task
from veriscale.evaluation.harness import evaluate_candidate
from veriscale.evaluation.solutions import Submission

BWRAP = isolation.resolve("auto")
needs_bwrap = pytest.mark.skipif(not BWRAP.isolated, reason=f"no bubblewrap: {BWRAP.reason}")
SECRET = "sk-veriscale-conformance-4242"

TASK_PY = '''\
# veriscale: aux
import math

# veriscale: precondition
def precondition(a, b):
    return a > 0 and b > 0

# veriscale: reference
def reference(a, b):
    return math.gcd(a, b)

# veriscale: postcondition
def postcondition(a, b, result):
    return (result > 0 and a % result == 0 and b % result == 0
            and math.gcd(a // result, b // result) == 1)
'''
TESTS = [
    {"input": {"a": 12, "b": 18}, "expected": 6, "unexpected": [3, 12]},
    {"input": {"a": 7, "b": 21}, "expected": 7, "unexpected": [1]},
    {"input": {"a": 17, "b": 5}, "expected": 1, "unexpected": [5]},
    {"input": {"a": 100, "b": 75}, "expected": 25, "unexpected": [5, 75]},
]

# A candidate that slipped past the screen reaches the real builtins and os:
ESCAPE = "import operator\n_bi = operator.attrgetter('__self__')(len)\n_os = _bi.__import__('os')\n"
HONEST = "import math\ndef gcd2(a, b):\n    return math.gcd(a, b)\n"
WRONG = "def gcd2(a, b):\n    return min(a, b)\n"


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    verdicts: frozenset[str]  # allowed lower-bound verdicts of the code metric
    kinds: frozenset[str] = frozenset()  # allowed failure kinds of the code tests ("ok" = ran)
    bwrap: bool = False


def case(name: str, code: str, verdicts: str = "FAIL", kinds: str = "",
         bwrap: bool = False) -> Case:
    return Case(name, code, frozenset(verdicts.split("|")),
                frozenset(k for k in kinds.split("|") if k), bwrap)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """Host-side traps: a directory to write into, a listening socket, a secret."""
    trap = tmp_path_factory.mktemp("host-trap")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(conn)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    os.environ["VERISCALE_CONFORMANCE_SECRET"] = SECRET
    try:
        yield {"trap": trap, "port": listener.getsockname()[1], "accepted": accepted}
    finally:
        os.environ.pop("VERISCALE_CONFORMANCE_SECRET", None)
        stop.set()
        thread.join(2)
        listener.close()


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    d = new_task_dir(tmp_path_factory.mktemp("bench"), "gcd2", "gcd2",
                     [("a", "Nat"), ("b", "Nat")], "Nat", TASK_PY, tests=TESTS, rejects=[])
    t, issues = load_task_dir(d)
    assert t is not None and not issues
    return t


@pytest.fixture(scope="module")
def backend(host: dict[str, object]) -> Iterator[PythonBackend]:
    with PythonBackend(workers=2, timeout=1.0, candidate_seconds=6.0, memory_mb=400,
                       check_safety=False, sandbox="auto") as b:
        yield b


def _cases(trap: str, port: int) -> list[Case]:
    w = f"{trap}/pwned"
    return [
        case("honest", HONEST, "PASS", "ok"),
        case("wrong_answer", WRONG, "FAIL", "ok"),
        case("attrgetter_os_of_random",
             f"import operator, random\n_os = operator.attrgetter('_os')(random)\n"
             f"def gcd2(a, b):\n    _os.system('id > {w}-random')\n    return 1\n", "FAIL"),
        case("attrgetter_self_of_len_open",
             f"{ESCAPE}def gcd2(a, b):\n    _bi.open('{w}-open', 'w').write('x')\n    return 1\n",
             "FAIL", "error"),
        case("formatter_get_field",
             "import string\n_bi = string.Formatter().get_field('0.__self__', [len], {})[0]\n"
             f"def gcd2(a, b):\n    _bi.open('{w}-fmt', 'w').write('x')\n    return a\n",
             "FAIL", "error"),
        case("get_type_hints_string_annotation",
             "import typing, operator\n"
             "def _g(x: \"operator.attrgetter('__self__')(len).__import__('socket')\"): pass\n"
             "_socket = typing.get_type_hints(_g)['x']\n"
             f"def gcd2(a, b):\n    s = _socket.socket()\n    s.connect(('127.0.0.1', {port}))\n"
             "    return 1\n", "FAIL", "error"),
        case("read_etc_passwd_into_message",
             f"{ESCAPE}def gcd2(a, b):\n    raise ValueError(_bi.open('/etc/passwd').read())\n",
             "FAIL", "error", bwrap=True),
        case("proc_ppid_cmdline_test_json",
             f"{ESCAPE}json = _bi.__import__('json')\n"
             "def gcd2(a, b):\n"
             "    for pid in _os.listdir('/proc'):\n"
             "        try:\n"
             "            words = _bi.open(f'/proc/{pid}/cmdline').read().split('\\0')\n"
             "        except OSError:\n"
             "            continue\n"
             "        for w in words:\n"
             "            p = w.rstrip('/') + '/gcd2/test.json'\n"
             "            if _os.path.exists(p):\n"
             "                for t in json.load(_bi.open(p)):\n"
             "                    if t['input'] == {'a': a, 'b': b}:\n"
             "                        return t['expected']\n"
             "    return 0\n", "FAIL", "ok", bwrap=True),
        case("patch_worker_internals",
             f"{ESCAPE}import math\n_main = _bi.__import__('__main__')\n"
             "for _name in ('_one', 'Server', 'Channel', 'encode_value'):\n"
             "    if hasattr(_main, _name):\n"
             "        setattr(_main, _name, None)\n"
             "def gcd2(a, b):\n    return 0\n", "FAIL"),
        case("math_gcd_monkeypatch",
             "import math\nmath.gcd = lambda a, b: 1\ndef gcd2(a, b):\n    return math.gcd(a, b)\n",
             "FAIL", "ok"),
        case("sys_modules_tampering",
             f"{ESCAPE}_sys = _bi.__import__('sys')\n"
             "class _Fake:\n    gcd = staticmethod(lambda a, b: 1)\n"
             "_sys.modules['math'] = _Fake()\n"
             "def gcd2(a, b):\n    return 1\n", "FAIL", "ok"),
        case("fork_setsid_children",
             f"{ESCAPE}_time = _bi.__import__('time')\n"
             "def gcd2(a, b):\n"
             "    for _ in range(3):\n"
             "        if _os.fork() == 0:\n"
             "            _os.setsid()\n"
             "            _time.sleep(600)\n"
             "    return a\n", "FAIL", "error"),
        case("fork_bomb", f"{ESCAPE}def gcd2(a, b):\n    while True:\n        _os.fork()\n",
             "FAIL", "error"),
        case("threads", f"{ESCAPE}_th = _bi.__import__('threading')\n"
             "def gcd2(a, b):\n    _th.Thread(target=lambda: None).start()\n    return 1\n",
             "FAIL", "error"),
        case("subprocess_id", f"{ESCAPE}_sp = _bi.__import__('subprocess')\n"
             "def gcd2(a, b):\n    return len(_sp.run(['id'], capture_output=True).stdout)\n",
             "FAIL", "error"),
        case("exec_shell", f"{ESCAPE}def gcd2(a, b):\n    _os.execv('/bin/sh', ['sh', '-c', "
             f"'echo x > {w}-exec'])\n", "FAIL", "error"),
        case("socket_to_host", f"{ESCAPE}_s = _bi.__import__('socket')\n"
             f"def gcd2(a, b):\n    c = _s.create_connection(('127.0.0.1', {port}), 1)\n"
             "    return 1\n", "FAIL", "error"),
        case("write_files_everywhere",
             f"{ESCAPE}def gcd2(a, b):\n"
             f"    for p in ('{w}-any', 'pwned-cwd', '/tmp/veriscale-pwned', '/root/pwned'):\n"
             "        try:\n"
             "            _bi.open(p, 'w').write('x')\n"
             "        except OSError:\n"
             "            pass\n"
             "    return 1\n", "FAIL", "ok"),
        case("kill_the_server", f"{ESCAPE}_sig = _bi.__import__('signal')\n"
             "def gcd2(a, b):\n    _os.kill(_os.getppid(), _sig.SIGKILL)\n    return 1\n",
             "FAIL", "error"),
        case("ptrace_server_memory",
             f"{ESCAPE}def gcd2(a, b):\n"
             "    return len(_bi.open(f'/proc/{_os.getppid()}/mem', 'rb').read(16))\n",
             "FAIL", "error"),
        case("read_secret_env", f"{ESCAPE}def gcd2(a, b):\n"
             "    raise KeyError(_os.environ.get('VERISCALE_CONFORMANCE_SECRET', 'none'))\n",
             "FAIL", "error"),
        case("huge_list_output", "def gcd2(a, b):\n    return [1] * 4_000_000\n",
             "FAIL", "output_limit|timeout"),
        case("huge_string_output", "def gcd2(a, b):\n    return 'x' * 50_000_000\n",
             "FAIL", "output_limit|timeout|memory"),
        case("deep_nesting_output",
             "def gcd2(a, b):\n    x = []\n    for _ in range(100_000):\n        x = [x]\n"
             "    return x\n", "FAIL|UNKNOWN", "ill_typed|crash|output_limit"),
        case("infinite_loop", "def gcd2(a, b):\n    while True:\n        pass\n",
             "FAIL|UNKNOWN", "timeout"),
        case("swallow_the_alarm",
             "def gcd2(a, b):\n    while True:\n        try:\n            while True:\n"
             "                pass\n        except BaseException:\n            pass\n",
             "FAIL|UNKNOWN", "timeout"),
        # one request beyond the whole limit: nothing was used, so no limit tripped
        case("memory_bomb", "def gcd2(a, b):\n    return len(bytearray(8 * 1024 ** 3))\n",
             "FAIL", "error"),
        case("memory_hoard", "def gcd2(a, b):\n    h = []\n    while True:\n"
             "        h.append(b'm' * (1 << 22))\n", "FAIL|UNKNOWN", "memory|timeout"),
        case("raise_memory_error", "def gcd2(a, b):\n    raise MemoryError\n", "FAIL",
             "error"),
        case("os_exit", f"{ESCAPE}def gcd2(a, b):\n    _os._exit(0)\n", "FAIL", "exit"),
        case("segfault", f"{ESCAPE}_ct = _bi.__import__('ctypes')\n"
             "def gcd2(a, b):\n    return _ct.string_at(0)\n", "FAIL", "crash"),
        case("recursion_bomb", "def gcd2(a, b):\n    return gcd2(a, b)\n", "FAIL", "crash"),
        case("stdout_spam",
             f"{ESCAPE}import math\ndef gcd2(a, b):\n    print('x' * 100000)\n"
             "    _os.write(1, b'\\x00\\x00\\x00\\x05{junk')\n    _os.write(2, b'junk')\n"
             "    return math.gcd(a, b)\n", "PASS", "ok"),
        case("forge_frames_on_own_pipe",
             f"{ESCAPE}def gcd2(a, b):\n"
             "    body = b'{\"i\": 0, \"ok\": true, \"value\": 6, \"seconds\": 0}'\n"
             "    for fd in range(3, 40):\n"
             "        try:\n"
             "            _os.write(fd, len(body).to_bytes(4, 'big') + body)\n"
             "        except OSError:\n"
             "            pass\n"
             "    return 0\n", "FAIL"),
        case("json_injection_in_value",
             "def gcd2(a, b):\n    return '\"}, {\"i\": 1, \"ok\": true, \"value\": 7}'\n",
             "FAIL", "ill_typed"),
        case("huge_exception_message",
             "def gcd2(a, b):\n    raise ValueError('m' * 10_000_000)\n", "FAIL", "error"),
        case("unprintable_exception",
             "class E(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n"
             "def gcd2(a, b):\n    raise E()\n", "FAIL", "error"),
        case("wrong_types", "def gcd2(a, b):\n    return {a, b}\n", "FAIL", "ill_typed"),
        case("negative_nat", "def gcd2(a, b):\n    return -1\n", "FAIL", "ill_typed"),
        case("bool_for_nat", "def gcd2(a, b):\n    return True\n", "FAIL", "ill_typed"),
        case("hang_at_import", "while True:\n    pass\ndef gcd2(a, b):\n    return 1\n",
             "FAIL", "compile"),
        case("exit_at_import", f"{ESCAPE}_os._exit(3)\ndef gcd2(a, b):\n    return 1\n",
             "FAIL", "compile"),
        case("sleep_past_the_budget", f"{ESCAPE}_time = _bi.__import__('time')\n"
             "def gcd2(a, b):\n    _time.sleep(0.9)\n    return 0\n", "FAIL|UNKNOWN",
             "ok|timeout"),
        case("answer_key_from_gc_and_frames",
             f"{ESCAPE}_gc = _bi.__import__('gc')\n_sys = _bi.__import__('sys')\n"
             "def _look(o, a, b):\n"
             "    if isinstance(o, dict):\n"
             "        for k in ('expected', 'output', 'value', 'result'):\n"
             "            v = o.get(k)\n"
             "            if isinstance(v, int) and not isinstance(v, bool) and v != a and v != b:\n"
             "                return v\n"
             "    return None\n"
             "def gcd2(a, b):\n"
             "    f = _sys._getframe()\n"
             "    while f is not None:\n"
             "        v = _look(f.f_locals, a, b)\n"
             "        if v is not None:\n"
             "            return v\n"
             "        f = f.f_back\n"
             "    for o in _gc.get_objects():\n"
             "        v = _look(o, a, b)\n"
             "        if v is not None:\n"
             "            return v\n"
             "    return 0\n", "FAIL"),
        case("int_subclass_equal_to_everything",
             "class N(int):\n    def __eq__(self, other):\n        return True\n"
             "    __hash__ = int.__hash__\n"
             "def gcd2(a, b):\n    return N(0)\n", "FAIL"),
        case("generator_result", "def gcd2(a, b):\n    yield a\n", "FAIL", "ill_typed"),
        case("ignore_every_signal_then_loop",
             f"{ESCAPE}_sig = _bi.__import__('signal')\n"
             "def gcd2(a, b):\n"
             "    for s in range(1, 32):\n"
             "        try:\n"
             "            _sig.signal(s, _sig.SIG_IGN)\n"
             "        except (OSError, ValueError, RuntimeError):\n"
             "            pass\n"
             "    while True:\n"
             "        pass\n", "FAIL|UNKNOWN", "timeout"),
        case("patch_builtins_json_and_pickle",
             f"{ESCAPE}_json = _bi.__import__('json')\n_pickle = _bi.__import__('pickle')\n"
             "_bi.isinstance = lambda *a: True\n_bi.len = lambda *a: 0\n"
             "_json.dumps = lambda *a, **k: '{\"ok\": true, \"value\": 6}'\n"
             "_json.loads = lambda *a, **k: {'ok': True, 'value': 6}\n"
             "_pickle.dumps = lambda *a, **k: b''\n"
             "def gcd2(a, b):\n    return 0\n", "FAIL"),
        case("exception_whose_repr_hangs",
             "class E(Exception):\n"
             "    def __str__(self):\n        while True:\n            pass\n"
             "    __repr__ = __str__\n"
             "def gcd2(a, b):\n    raise E()\n", "FAIL|UNKNOWN", "error|timeout"),
        case("finalizer_writes_at_exit",
             f"{ESCAPE}class _D:\n    def __del__(self):\n"
             f"        _bi.open('{w}-del', 'w').write('x')\n_keep = _D()\n"
             "def gcd2(a, b):\n    return 0\n", "FAIL", "ok"),
    ]


def _kinds(backend: PythonBackend, task: Task, code: str) -> set[str]:
    outs = backend.run(task, Implementation(code), [t.input for t in task.tests])
    return {o.error.split(":", 1)[0] if o.error else "ok" for o in outs}


def _verdict(backend: PythonBackend, task: Task, name: str, code: str) -> tuple[str, str]:
    res = evaluate_candidate(backend, task,
                             Submission(task.id, 0, impl=Implementation(code, id=name)))
    return res.metrics["code"].get("lower").value, json.dumps(res.to_json())


def test_there_are_enough_cases() -> None:
    cases = _cases("/x", 1)
    assert len(cases) >= 30
    assert len({c.name for c in cases}) == len(cases)


@pytest.mark.parametrize("name", [c.name for c in _cases("/x", 1)])
def test_hostile_candidate(name: str, backend: PythonBackend, task: Task,
                           host: dict[str, object]) -> None:
    trap, port = Path(str(host["trap"])), int(str(host["port"]))
    c = next(c for c in _cases(str(trap), port) if c.name == name)
    if c.bwrap and not backend.sandbox.isolation.isolated:
        pytest.skip(f"needs bubblewrap: {backend.sandbox.isolation.reason}")
    verdict, report = _verdict(backend, task, c.name, c.code)
    assert verdict in c.verdicts, (c.name, verdict, report)
    if c.kinds:
        kinds = _kinds(backend, task, c.code)
        assert kinds <= c.kinds, (c.name, kinds)
    # nothing happened on the host
    assert list(trap.iterdir()) == [], c.name
    assert not Path("/tmp/veriscale-pwned").exists()
    assert host["accepted"] == [], c.name
    assert SECRET not in report
    if backend.sandbox.isolation.isolated:
        assert Path("/etc/passwd").read_text()[:12] not in report
    assert len(report) < 20_000  # messages are cut short
    # and the next, honest candidate is untouched
    assert _verdict(backend, task, "honest-after", HONEST)[0] == "PASS", c.name


def test_no_contamination_of_others_or_the_ground_truth(backend: PythonBackend,
                                                        task: Task) -> None:
    tamper = ("import math\nmath.gcd = lambda a, b: 1\n"
              "def gcd2(a, b):\n    return math.gcd(a, b)\n")
    pairs = [(t.input, t.expected) for t in task.tests]
    wrong = [(t.input, t.unexpected[0]) for t in task.tests]
    for _ in range(3):
        assert _verdict(backend, task, "tamper", tamper)[0] == "FAIL"
        assert _verdict(backend, task, "honest", HONEST)[0] == "PASS"
        assert _verdict(backend, task, "wrong", WRONG)[0] == "FAIL"
        assert backend.postcondition_holds(task, None, pairs) == [Verdict.TRUE] * len(pairs)
        assert backend.postcondition_holds(task, None, wrong) == [Verdict.FALSE] * len(wrong)
        assert [o.value for o in backend.run(task, None, [t.input for t in task.tests])] == [
            t.expected for t in task.tests]


def test_forged_results_do_not_reach_the_next_candidate(backend: PythonBackend,
                                                        task: Task) -> None:
    forger = (f"{ESCAPE}import math, json\n_main = _bi.__import__('__main__')\n"
              "def _forge(i, fn, raw, *rest):\n"
              "    value = math.gcd(*raw)\n"
              "    return json.dumps({'i': i, 'ok': True, 'value': value, 'seconds': 0}).encode()\n"
              "_main._one = _forge\n"
              "def gcd2(a, b):\n    return 0\n")
    # the forger may forge its own results (as if it computed them), never another's
    _verdict(backend, task, "forger", forger)
    assert _verdict(backend, task, "wrong", WRONG)[0] == "FAIL"


LEAKS = ("/tmp/leak", "/dev/shm/leak", "/var/tmp/leak", "/dev/mqueue/leak", "leak")
WRITER = (f"{ESCAPE}_s = _bi.__import__('socket')\n_keep = []\nimport math\n"
          "def gcd2(a, b):\n"
          f"    for p in {LEAKS!r}:\n"
          "        try:\n            _bi.open(p, 'w').write('x')\n"
          "        except OSError:\n            pass\n"
          "    try:\n"
          "        s = _s.socket(_s.AF_UNIX, _s.SOCK_STREAM)\n"
          "        s.bind('\\0veriscale-leak')\n        s.listen(1)\n        _keep.append(s)\n"
          "    except OSError:\n        pass\n"
          "    return math.gcd(a, b)\n")
READER = (f"{ESCAPE}_s = _bi.__import__('socket')\nimport math\n"
          "def gcd2(a, b):\n"
          f"    seen = [p for p in {LEAKS!r} if _os.path.exists(p)]\n"
          "    try:\n"
          "        s = _s.socket(_s.AF_UNIX, _s.SOCK_STREAM)\n"
          "        s.connect('\\0veriscale-leak')\n        seen.append('abstract socket')\n"
          "    except OSError:\n        pass\n"
          "    if seen:\n        raise ValueError('saw ' + ', '.join(seen))\n"
          "    return math.gcd(a, b)\n")


@needs_bwrap
def test_candidates_share_no_files_shm_queues_or_sockets(backend: PythonBackend,
                                                         task: Task) -> None:
    """What one candidate leaves in /tmp, /dev/shm, its cwd or an abstract unix
    socket, the next candidate (same workers) does not find: the reader would fail
    if it saw any of them."""
    for _ in range(2):
        assert _verdict(backend, task, "writer", WRITER)[0] == "PASS"
        verdict, report = _verdict(backend, task, "reader", READER)
        assert verdict == "PASS", report
    assert not Path("/tmp/leak").exists()


GT_POST = ("import math\n"
           "def postcondition(a, b, result):\n"
           "    return (result > 0 and a % result == 0 and b % result == 0\n"
           "            and math.gcd(a // result, b // result) == 1)\n")


def _spec_verdicts(backend: PythonBackend, task: Task, name: str,
                   post: str) -> dict[str, str]:
    res = evaluate_candidate(backend, task, Submission(task.id, 0, spec=Spec(
        postcond=post, id=name)))
    return {m: res.metrics[m].get("lower").value for m in ("postcond_sound",
                                                           "postcond_complete")}


def test_a_specification_cannot_tell_the_answer_key_by_remembering(
        backend: PythonBackend, task: Task) -> None:
    """Expected pairs come before unexpected ones for the same input: a spec that
    says True the first time it sees an input and False after would pass both
    properties if its memory outlived an item. Each item gets a fresh module."""
    rememberer = ("_seen = []\n"
                  "def postcondition(a, b, result):\n"
                  "    if (a, b) in _seen:\n"
                  "        return False\n"
                  "    _seen.append((a, b))\n"
                  "    return True\n")
    got = _spec_verdicts(backend, task, "rememberer", rememberer)
    assert got == {"postcond_sound": "FAIL", "postcond_complete": "PASS"}, got
    counter = ("_calls = [0]\n"
               "def postcondition(a, b, result):\n"
               "    _calls[0] += 1\n"
               "    return _calls[0] == 1\n")
    pairs = [(t.input, t.expected) for t in task.tests] * 3
    assert backend.postcondition_holds(task, Spec(postcond=counter), pairs) == [
        Verdict.TRUE] * len(pairs)
    assert _spec_verdicts(backend, task, "gt", GT_POST) == {
        "postcond_sound": "PASS", "postcond_complete": "PASS"}


@pytest.mark.parametrize(("name", "body"), [
    ("raise_memory_error", "    raise MemoryError\n"),
    ("raise_recursion_error", "    raise RecursionError('deep')\n"),
    ("recurse_for_real", "    return postcondition(a, b, result)\n"),
    ("answer_a_huge_string", "    return 'x' * 3_000_000\n"),
    ("answer_a_set", "    return {a}\n"),
    ("raise_a_timeout_of_its_own", "    raise TimeoutError('slow')\n"),
])
def test_a_specification_cannot_choose_unknown(name: str, body: str, backend: PythonBackend,
                                               task: Task) -> None:
    """What a candidate raised or returned is its FAIL, never UNKNOWN: UNKNOWN (and
    with it the upper bound's PASS) comes only from what the supervisor saw."""
    post = f"def postcondition(a, b, result):\n{body}"
    got = _spec_verdicts(backend, task, name, post)
    assert got == {"postcond_sound": "FAIL", "postcond_complete": "FAIL"}, (name, got)


def test_a_specification_cannot_buy_the_upper_bound_with_its_own_slowness(
        backend: PythonBackend, task: Task) -> None:
    """A spec that answers one test and runs out of time on the rest is UNKNOWN in
    both bounds: a budget the candidate exhausted lifts nothing (VERINA's upper
    bound would say PASS)."""
    stall = ("def postcondition(a, b, result):\n"
             "    if (a, b) == (12, 18):\n"
             "        return result == 6\n"
             "    while True:\n"
             "        pass\n")
    res = evaluate_candidate(backend, task, Submission(task.id, 0, spec=Spec(
        postcond=stall, id="stall")))
    m = res.metrics["postcond_complete"]
    assert (m.lower.value, m.upper.value) == ("UNKNOWN", "UNKNOWN"), res.to_json()
    assert res.tallies["postcond_complete"].spent == len(task.tests) - 1
    assert "timeout" in res.unknown_causes["postcond"]


def test_random_is_deterministic_per_candidate(task: Task) -> None:
    code = ("import random\n"
            "def gcd2(a, b):\n"
            "    random.seed()\n"
            "    r = random.Random()\n"
            "    s = random.SystemRandom()\n"
            "    return int(random.random() * 1000 + r.random() * 10 + s.random()) % 7 + 1\n")
    reports = []
    for _ in range(2):
        with PythonBackend(workers=2, check_safety=False, seed=7) as b:
            outs = b.run(task, Implementation(code), [t.input for t in task.tests] * 3)
            reports.append([o.value for o in outs])
    assert reports[0] == reports[1]
    assert reports[0][:4] == reports[0][4:8]  # the same input gives the same draw


def test_nothing_is_left_behind(task: Task) -> None:
    code = (f"{ESCAPE}_time = _bi.__import__('time')\n"
            "def gcd2(a, b):\n"
            "    try:\n        if _os.fork() == 0:\n            _os.setsid()\n"
            "            _time.sleep(600)\n    except OSError:\n        pass\n"
            "    while True:\n        pass\n")
    before = set(_processes_running(str(WORKER_SCRIPT)))  # the module's backend
    with PythonBackend(workers=2, timeout=0.5, check_safety=False) as b:
        b.run(task, Implementation(code), [t.input for t in task.tests])
        assert set(_processes_running(str(WORKER_SCRIPT))) - before  # it did run
    # The kernel kills the rest of a sandbox's pid namespace once its init is gone, but
    # not before close() returns: on a loaded machine a process may still be listed for
    # a moment. A survivor (the child sleeps 600 s) outlasts any wait here.
    deadline = time.monotonic() + 10
    while set(_processes_running(str(WORKER_SCRIPT))) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(_processes_running(str(WORKER_SCRIPT))) <= before


def test_evaluator_memory_stays_bounded(backend: PythonBackend, task: Task) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for size in (4_000_000, 340_000):  # far beyond, and just under, the result cap
        code = f"def gcd2(a, b):\n    return [1] * {size}\n"
        backend.run(task, Implementation(code), [t.input for t in task.tests] * 10)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 200


def test_the_screen_rejects_the_listed_escapes() -> None:
    escapes = [
        "import operator, random\nx = operator.attrgetter('_os')(random)\n",
        "import operator\nx = operator.attrgetter('__self__')(len)\n",
        "import string\nx = string.Formatter().get_field('0.__self__', [len], {})\n",
        "import typing\ndef g(x: \"__import__('os')\"): pass\ntyping.get_type_hints(g)\n",
        "import operator\nx = operator.methodcaller('__reduce__')\n",
        "import functools\n@functools.singledispatch\ndef f(x): pass\n@f.register\n"
        "def _(x: \"operator.attrgetter('os')(random)\"): pass\n",
        "def g(x: list['int']) -> 'int':\n    return 1\n",
        "class A:\n    x: 'eval(1)'\n",
    ]
    for src in escapes:
        assert check_untrusted_python(src) is not None, src


@needs_bwrap
def test_sandbox_os_refuses_without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    from veriscale.backends.isolation import policy

    monkeypatch.setattr(policy, "probe_bwrap", lambda: ("", "bwrap is not installed"))
    with pytest.raises(isolation.IsolationUnavailable):
        policy.resolve("os")
    assert policy.resolve("auto").kind == "none"
    assert policy.resolve("none").reason


def _processes_running(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmd:
            found.append(int(entry))
    return found
