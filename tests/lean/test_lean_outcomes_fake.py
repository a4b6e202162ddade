"""Batched Lean files that time out or crash never blame candidates that did not run.

Uses the fake ``lean`` of ``test_lean_backend_fake`` plus two triggers: a line
holding ``HANG`` sleeps past the timeout, one holding ``DIE`` exits quietly.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_lean_backend_fake import FAKE, _backend, _task

from tool_scripts import python_script
from veriscale.backends import isolation
from veriscale.backends.base import Implementation, Outcome
from veriscale.evaluation.harness import evaluate
from veriscale.evaluation.scoring import Score
from veriscale.evaluation.solutions import Submission

LOOP = "    for i, line in enumerate(lines, 1):\n"
TRIGGERS = LOOP + """        if "HANG" in line:
            time.sleep(60)
        if "DIE" in line:
            sys.exit(1)
"""


@pytest.fixture()
def fake(tmp_path: Path) -> Iterator[Path]:
    """The fake answers line by line, so a trigger keeps the messages before it."""
    log = tmp_path / "calls.log"
    exe = tmp_path / "lean"
    assert LOOP in FAKE
    python_script(exe, f"LOG = {str(log)!r}\n" + FAKE.replace(LOOP, TRIGGERS))
    with isolation.using("none"):  # the fake writes its call log outside its work dir
        yield exe


def _impl(body: str) -> Implementation:
    return Implementation(f"def F (x : Int) (h_precond : F_precond x) : Int := {body}")


def test_a_hanging_candidate_does_not_fail_the_others(fake: Path, tmp_path: Path) -> None:
    be = _backend(fake, tmp_path, timeout=3)
    task = _task()
    good, slow = _impl("2 * x"), _impl("2 * x  -- HANG")
    got = be.compile_many([(task, good, None), (task, slow, None), (task, good, None)])
    # The slow candidate is unknown (timeout); the one after it was retried alone.
    assert got[0] is None and got[2] is None, got
    assert got[1] is not None and not got[1].startswith("compile"), got


def test_a_crash_is_infrastructure_and_unknown(fake: Path, tmp_path: Path) -> None:
    be = _backend(fake, tmp_path, crash_retries=0)
    task = _task()
    outs = be.run(task, _impl("2 * x  -- DIE"), [(1,), (2,)])
    assert all(isinstance(o, Outcome) and o.inconclusive for o in outs), outs
    assert all(o.error.startswith("infrastructure") for o in outs)
    rep = evaluate(be, [task], {task.id: [Submission(task.id, 0, _impl("2 * x  -- DIE"))]})
    sample = rep.tasks[0].samples[0]
    assert sample.metrics["code"].lower is Score.UNKNOWN, sample


def test_a_crashing_candidate_costs_only_its_own_checks(fake: Path, tmp_path: Path) -> None:
    """A stop is blamed on the unit Lean was on: with no retries at all, a candidate
    that takes Lean down leaves the other candidate of its file answered."""
    be = _backend(fake, tmp_path, crash_retries=0)
    task = _task()
    for first, second in ((_impl("2 * x  -- DIE"), _impl("2 * x")),
                          (_impl("2 * x"), _impl("2 * x  -- DIE"))):
        got = be.evaluate_many([("run", (task, first, [(1,), (2,)])),
                                ("run", (task, second, [(1,), (2,)]))])
        bad, good = (got[0], got[1]) if "DIE" in first.code else (got[1], got[0])
        assert all(o.inconclusive and o.error.startswith("infrastructure") for o in bad), bad
        assert [o.ok for o in good] == [True, True], good


def test_a_batch_that_stops_lean_is_blamed_not_the_unit_after_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A batch's helper definition prints (its ``sorry`` warning) before the batch runs:
    Lean stopped past the helper was still on the batch, not on the next unit (in the
    full VERINA run, a runaway batch of verina_basic_7 was logged, and charged, as a
    stop of verina_basic_8's ``myMin``)."""
    from test_lean_backend_fake import FAKE as PLAIN

    log, exe = tmp_path / "calls.log", tmp_path / "lean"
    python_script(exe, f"LOG = {str(log)!r}\n" + PLAIN)
    with isolation.using("none"), caplog.at_level("INFO", "veriscale.backends.lean"):
        be = _backend(exe, tmp_path, crash_retries=0, kernel_fallback=False)
        a, b = be.run_many([(_task("toy_a"), None, [(x,) for x in [77, *range(10, 20)]]),
                            (_task("toy_b"), None, [(x,) for x in range(20, 40)])])
    stops = [r.getMessage() for r in caplog.records if "stopped (" in r.getMessage()]
    assert stops and all("on a check of toy_a" in m for m in stops), stops
    assert [o.value for o in b] == [2 * x for x in range(20, 40)], b
    assert any(o.inconclusive for o in a), a


def test_a_hanging_first_candidate_does_not_fail_the_next(fake: Path, tmp_path: Path) -> None:
    be = _backend(fake, tmp_path, timeout=3)
    task = _task()
    got = be.compile_many([(task, _impl("2 * x  -- HANG"), None), (task, _impl("2 * x"), None)])
    assert got[0] is not None and not got[0].startswith("compile") and got[1] is None, got


@pytest.mark.parametrize(("error", "kind"), [
    ("unexpected token '#check'; expected term", "compile"),
    ("unknown identifier 'Finset.sum'", "unsupported"),
    ("failed to synthesize\n  Fintype α", "unsupported"),
    ("unexpected token '∑'; expected term", "unsupported"),
    ("type mismatch\n  a\nhas type Int", "compile"),
])
def test_a_syntax_error_is_the_candidates_even_without_mathlib(error: str, kind: str) -> None:
    """With Mathlib dropped, only errors a missing import can explain are unsupported."""
    from veriscale.backends.lean.messages import CheckOutput, broken_definitions

    out = CheckOutput([], definition_errors=[error], dropped_imports=["Mathlib"])
    assert broken_definitions(out).split(":", 1)[0] == kind
    # With every import available, any definition error is the candidate's.
    out = CheckOutput([], definition_errors=[error])
    assert broken_definitions(out).startswith("compile")
