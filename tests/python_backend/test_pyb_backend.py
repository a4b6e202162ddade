"""PythonBackend operations on a small Python-spec task."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veriscale.backends.base import Backend, Implementation, Label, Spec, Verdict
from veriscale.backends.python.backend import PythonBackend
from veriscale.backends.python.format import load_task_dir
from veriscale.backends.registry import make_backend
from veriscale.benchmark.model import Task


@pytest.fixture(scope="module")
def backend():
    with PythonBackend(workers=1, timeout=0.5, memory_mb=300) as b:
        yield b


@pytest.fixture()
def task(task_dir: Path) -> Task:
    t, issues = load_task_dir(task_dir)
    assert t is not None and not issues
    return t


def test_protocol_and_registry() -> None:
    b = make_backend("python", workers=1, runner="wasm")
    try:
        assert isinstance(b, Backend) and b.name == "python"
        assert b.stats.extra["ignored_options"] == ["runner"]
    finally:
        b.close()


def test_check_inputs(backend: PythonBackend, task: Task) -> None:
    got = backend.check_inputs(task, [((1, 2), 3), ((1,), -1), ((1,),), ([1], 2), ((True,), 0)])
    assert got[0] is None
    assert "k" in got[1] and "negative" in got[1]
    assert got[2].startswith("arity")
    assert got[3] is not None and got[4] is not None


def test_classify(backend: PythonBackend, task: Task) -> None:
    labels = backend.classify(task, [((1, 2), 0), ((), 0), ((1,), -5)])
    assert [c.label for c in labels] == [Label.EXPECTED, Label.UNEXPECTED, Label.UNKNOWN]
    assert labels[0].stage == "exec" and labels[2].stage == "syntax"


def test_classify_error_is_unknown(backend: PythonBackend, task_dir: Path) -> None:
    src = (task_dir / "task.py").read_text().replace(
        "return len(xs) > 0", "return 1 / (len(xs) - 1) > 0 if len(xs) != 2 else 'yes'")
    (task_dir / "task.py").write_text(src)
    t, _ = load_task_dir(task_dir)
    assert t is not None
    labels = backend.classify(t, [((1,), 0), ((1, 2), 0), ((1, 2, 3), 0)])
    assert labels[0].label == Label.UNKNOWN and "ZeroDivisionError" in labels[0].detail
    assert labels[1].label == Label.UNKNOWN and "str" in labels[1].detail
    assert labels[2].label == Label.EXPECTED


def test_run_reference_and_candidates(backend: PythonBackend, task: Task) -> None:
    inputs = [((1, 5, 3), 2), ((-4,), 0), ((10 ** 30, 1), 1)]
    ref = backend.run(task, None, inputs)
    assert [o.value for o in ref] == [7, -4, 10 ** 30 + 1]
    # a candidate uses the signature name and may use the task's aux helpers
    cand = Implementation("def maxPlusK(xs, k):\n    return min(shift(xs, k))\n", id="min")
    assert [o.value for o in backend.run(task, cand, inputs)] == [3, -4, 2]
    # `reference` is accepted too
    cand2 = Implementation("def reference(xs, k):\n    return xs[0]\n")
    assert [o.value for o in backend.run(task, cand2, inputs)] == [1, -4, 10 ** 30]
    # ill-typed results are failures, not values
    bad = Implementation("def maxPlusK(xs, k):\n    return [True, 'a', 1.5][k]\n")
    outs = backend.run(task, bad, [((1,), 0), ((1,), 1), ((1,), 2), ((1,), 9)])
    assert [o.failure_kind for o in outs] == ["ill_typed", "ill_typed", "ill_typed", "error"]
    # unsafe candidates never run
    evil = Implementation("import os\ndef maxPlusK(xs, k):\n    return os.getpid()\n")
    assert all(o.error.startswith("compile: unsafe") for o in backend.run(task, evil, inputs))
    # a hang costs its item only
    hang = Implementation("def maxPlusK(xs, k):\n    while k == 0:\n        pass\n    return k\n")
    assert [o.error or o.value for o in backend.run(task, hang, [((1,), 1), ((1,), 0),
                                                                  ((1,), 2)])] == [1, "timeout", 2]


def test_pre_and_postconditions(backend: PythonBackend, task: Task) -> None:
    pre = backend.precondition_holds(task, None, [((1,), 0), ((), 0)])
    assert pre == [Verdict.TRUE, Verdict.FALSE]
    post = backend.postcondition_holds(task, None, [(((1, 5), 2), 7), (((1, 5), 2), 6),
                                                    (((1, 5), 2), "7")])
    assert post == [Verdict.TRUE, Verdict.FALSE, Verdict.UNKNOWN]
    weak = Spec(postcond="def postcondition(xs, k, result):\n    return result >= max(xs)\n",
                precond="def precondition(xs, k):\n    return 7\n")
    assert backend.postcondition_holds(task, weak, [(((1, 5), 2), 6), (((1, 5), 2), 0)]) == [
        Verdict.TRUE, Verdict.FALSE]
    # answering 7 is not an answer: a specification is total, so it is wrong (ERROR)
    assert backend.precondition_holds(task, weak, [((1,), 0)]) == [Verdict.ERROR]
    assert "int, not bool" in backend.spec_error(task, weak, "pre")
    # a spec that only replaces the postcondition keeps the GT precondition
    assert backend.precondition_holds(task, Spec(postcond="x"), [((), 0)]) == [Verdict.FALSE]
    unsafe = Spec(postcond="def postcondition(xs, k, result):\n    return eval('True')\n")
    assert backend.postcondition_holds(task, unsafe, [(((1,), 0), 1)]) == [Verdict.UNKNOWN]


def test_unknown_verdicts_are_counted_by_cause(task: Task) -> None:
    with PythonBackend(workers=1) as b:
        b.postcondition_holds(task, None, [(((1, 5), 2), 7), (((1, 5), 2), "7")])
        unsafe = Spec(postcond="def postcondition(xs, k, result):\n    return eval('True')\n")
        b.postcondition_holds(task, unsafe, [(((1,), 0), 1), (((1,), 0), 2)])
        assert b.stats.unknowns == {"gt postcondition: ill_typed": 1,
                                    "spec postcondition: unsafe": 2}


def test_compile(backend: PythonBackend, task: Task) -> None:
    assert backend.compile(task) is None
    assert backend.compile(task, Implementation("def maxPlusK(xs, k):\n    return 0\n")) is None
    assert "syntax" in (backend.compile(task, Implementation("def maxPlusK(:\n")) or "")
    assert "unsafe" in (backend.compile(task, Implementation("import socket\n")) or "")
    assert "no function" in (backend.compile(task, Implementation("def other(): pass\n")) or "")
    assert "ZeroDivisionError" in (backend.compile(task, Implementation("x = 1 / 0\n")) or "")
    spec = Spec(precond="def precondition(xs, k):\n    return True\n",
                postcond="def postcond(xs, k, result):\n    return True\n")
    assert "postcondition" in (backend.compile(task, spec=spec) or "")


def test_stats(task: Task) -> None:
    with PythonBackend(workers=1) as b:
        for _ in range(3):
            b.run(task, None, [((1, 2), k) for k in range(20)])
        assert b.stats.processes == 1
        assert b.stats.checks == 60
        assert b.stats.seconds > 0


def test_a_looping_mutant_waits_as_long_as_the_reference_takes(task: Task) -> None:
    """A mutant of the reference is waited for as long as the reference took on that
    input (times twenty, a quarter second at least), not the configured limit; a
    candidate from anywhere else keeps the limit. The 30 s limit makes the difference
    plain without timing anything finely."""
    import time

    loop = "def maxPlusK(xs, k):\n    while xs:\n        pass\n    return 0\n"
    inputs = [((1, 2), 3), ((5,), 0)]
    with PythonBackend(workers=1, timeout=30.0, candidate_seconds=120.0) as b:
        start = time.monotonic()
        got = b.run(task, Implementation(loop, origin="mutant"), inputs)
        assert [o.error for o in got] == ["timeout", "timeout"]  # UNKNOWN, never a FAIL
        assert time.monotonic() - start < 15.0
        # the reference was timed on both inputs, once
        assert len(b._reference_seconds) == 2
        ok = b.run(task, Implementation("def maxPlusK(xs, k):\n    return max(xs) + k\n",
                                        origin="mutant"), inputs)
        assert [o.value for o in ok] == [5, 5] and len(b._reference_seconds) == 2
        assert b._waits(task, "llm:m", ["reference"], [[[1, 2], 3]], {}) is None


@given(st.floats(0, 100), st.floats(0, 100), st.floats(0.01, 60))
def test_following_the_reference_never_waits_longer_than_the_limit(
        a: float, b: float, timeout: float) -> None:
    from veriscale.backends.python.sandbox import SandboxLimits, follow_reference

    lim = SandboxLimits(timeout=timeout)
    wa, wb = follow_reference(a, lim), follow_reference(b, lim)
    assert wa is not None and wb is not None
    assert 0 < wa <= lim.timeout + lim.grace  # the server's own wait
    assert (wa <= wb) == (a <= b) or wa == wb  # a slower reference never waits less
    assert follow_reference(None, lim) is None
