"""VERINA scoring semantics, as pure functions over backend verdicts.

CodeGen: a candidate must compile against the ground-truth precondition, then
every expected pair must hold (``candidate(input) == expected``). One test is
PASS, FAIL or UNKNOWN; the task is FAIL if any test fails, else UNKNOWN if any
is unknown, else PASS.

Deliberate difference from VERINA: VERINA scores a *timed-out* code test file as
all PASS (the timeout text holds no markers). Here a timeout is never a pass.
Which failures are the candidate's fault is decided in one place,
:attr:`veriscale.backends.base.FailureKind.inconclusive`:

=========================  =========  ========================================
outcome                    verdict    why
=========================  =========  ========================================
ok, equal value            PASS
ok, other value            FAIL       wrong answer
``timeout``, ``memory``    UNKNOWN    a resource limit the supervisor saw trip
                                      (its clock; the kernel's peak memory
                                      count); never PASS
``infrastructure``,        UNKNOWN    the checker could not run the check (the
``unsupported``,                      prover died, a worker was lost, this
``unknown``                           backend cannot evaluate it)
``crash``, ``error``,      FAIL       the candidate raised (whatever the
``exit``, ``ill_typed``,              class: a raised ``MemoryError`` is
``output_limit``                      ``error``) or panicked on a valid input,
                                      exited, or returned a value of the wrong
                                      type or too large to bring back
``compile``                FAIL       the candidate does not build
=========================  =========  ========================================

SpecGen: per test the backend gives TRUE / FALSE / UNKNOWN / ERROR (decide
first; the Lean backend runs VERINA's Plausible stage on what decide left open,
answering PLAUSIBLY_TRUE / PLAUSIBLY_FALSE / UNREFUTED when Plausible found no
counter-example: VERINA's default ``use_plausible_pass`` counts that as PASS
where the claim was wanted, and a counter-example to the negation as PASS too).
ERROR means the specification raised or answered a non-boolean: a
specification is a total function, so that is FAIL whichever answer was
wanted, never an abstention that the upper bound could turn into PASS.

* precondition soundness: every test input satisfies the candidate precondition;
* precondition completeness: every reject (unexpected) input violates it;
* postcondition completeness: every expected output is accepted;
* postcondition soundness: every unexpected output is rejected.

Bounds, as in VERINA's ``summary.py``:

* lower bound: UNKNOWN counts as not passing (the property is PASS only when all
  of its tests pass);
* upper bound (VERINA's ``overestimate``): a spec property is also PASS when at
  least one of its tests passed and none failed. A property whose tests are all
  UNKNOWN stays UNKNOWN even in the upper bound. Deliberate difference from
  VERINA: an UNKNOWN because the candidate's own check ran out of its budget
  (time, heartbeats, recursion depth, memory: ``causes.BUDGET_CAUSES``) is not
  lifted; that property's upper bound stays UNKNOWN. The upper bound is for what
  the checker cannot decide (no ``Decidable`` instance, stuck reduction, a prover
  that failed); a budget is something a candidate can exhaust on purpose (a
  deliberately slow ``decide``, or an exponential search on every input but one),
  and it must not buy the upper-bound PASS. A slow but correct specification keeps
  UNKNOWN, never FAIL.
* zero tests = PASS in both bounds (VERINA: e.g. precondition completeness of a
  task without reject inputs). This is what makes weak suites over-reward weak
  specifications, and why the expanded suites matter.
* A specification that does not compile is FAIL for soundness and completeness.
* Code is never upgraded: its upper bound equals its lower bound (VERINA).

Aggregates (VERINA ``extract_score``): ``X_sound_complete`` = sound and complete;
``precond_postcond`` = both sound-and-complete; ``code_spec`` = code and
``precond_postcond``. Each aggregate is computed per bound.
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from veriscale.backends.base import Outcome, Verdict
from veriscale.values import ValueType, values_equal


class Score(enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    UNKNOWN = "UNKNOWN"


METRICS_CODE = ("code",)
METRICS_PRECOND = ("precond_sound", "precond_complete", "precond_sound_complete")
METRICS_POSTCOND = ("postcond_sound", "postcond_complete", "postcond_sound_complete")
METRICS_COMBINED = ("precond_postcond", "code_spec")
ALL_METRICS = METRICS_CODE + METRICS_PRECOND + METRICS_POSTCOND + METRICS_COMBINED


def combine(scores: Iterable[Score]) -> Score:
    """FAIL if any FAIL, else UNKNOWN if any UNKNOWN, else PASS (also for none)."""
    seen = set(scores)
    if Score.FAIL in seen:
        return Score.FAIL
    if Score.UNKNOWN in seen:
        return Score.UNKNOWN
    return Score.PASS


def code_test_score(outcome: Outcome, expected: Any, return_type: ValueType) -> Score:
    """One code test: run outcome vs. the expected output (see the module table)."""
    if outcome.ok:
        return Score.PASS if values_equal(return_type, outcome.value, expected) else Score.FAIL
    return Score.UNKNOWN if outcome.inconclusive else Score.FAIL


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _host_paths() -> list[str]:
    """Paths that name this machine's layout (home, working and temp directories)."""
    paths = {os.path.expanduser("~"), tempfile.gettempdir(),
             os.path.realpath(tempfile.gettempdir())}
    with contextlib.suppress(OSError):  # the working directory may be gone
        paths.add(os.getcwd())
    return sorted((p for p in paths if len(p) > 1), key=len, reverse=True)


def report_text(text: str, limit: int = 200) -> str:
    """A candidate's failure message as it may appear in a report: one line, at most
    ``limit`` characters, control characters dropped and the host's own paths
    replaced, so a report carries what the candidate said, not what the host is."""
    line = " ".join(_CONTROL.sub(" ", str(text)).split())
    for path in _host_paths():
        line = line.replace(path, "<host>")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def must_hold(verdict: Verdict) -> Score:
    """A test whose property must be true (sound precondition, complete postcondition)."""
    return {Verdict.TRUE: Score.PASS, Verdict.FALSE: Score.FAIL, Verdict.ERROR: Score.FAIL,
            Verdict.PLAUSIBLY_TRUE: Score.PASS, Verdict.UNREFUTED: Score.PASS,
            }.get(verdict, Score.UNKNOWN)


def must_fail(verdict: Verdict) -> Score:
    """A test whose property must be false (complete precondition, sound postcondition)."""
    return {Verdict.FALSE: Score.PASS, Verdict.TRUE: Score.FAIL, Verdict.ERROR: Score.FAIL,
            Verdict.PLAUSIBLY_FALSE: Score.PASS, Verdict.UNREFUTED: Score.PASS,
            }.get(verdict, Score.UNKNOWN)


@dataclass(frozen=True)
class Tally:
    """Counts of per-test scores for one property."""

    passed: int = 0
    failed: int = 0
    unknown: int = 0
    spent: int = 0  # of the unknown: the candidate's check ran out of its budget

    @classmethod
    def of(cls, scores: Iterable[Score], spent: Iterable[bool] = ()) -> Tally:
        """Count ``scores``; ``spent`` flags, test by test, an UNKNOWN that ran out of
        its budget (see the module's upper bound)."""
        p = f = u = b = 0
        for s, out in itertools.zip_longest(scores, spent, fillvalue=False):
            if s is Score.PASS:
                p += 1
            elif s is Score.FAIL:
                f += 1
            elif s is not False:
                u += 1
                b += bool(out)
        return cls(p, f, u, b)

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.passed + other.passed, self.failed + other.failed,
                     self.unknown + other.unknown, self.spent + other.spent)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.unknown

    def to_json(self) -> dict[str, int]:
        return {"pass": self.passed, "fail": self.failed, "unknown": self.unknown,
                **({"unknown_budget": self.spent} if self.spent else {})}


@dataclass(frozen=True)
class Bounded:
    """A score under both readings of UNKNOWN."""

    lower: Score
    upper: Score

    @classmethod
    def exact(cls, s: Score) -> Bounded:
        return cls(s, s)

    def get(self, bound: str) -> Score:
        return self.lower if bound == "lower" else self.upper

    def to_json(self) -> dict[str, str]:
        return {"lower": self.lower.value, "upper": self.upper.value}


FAILED = Bounded.exact(Score.FAIL)


def lower_bound(tally: Tally) -> Score:
    """Unknown counts as not holding; zero tests = PASS."""
    if tally.failed:
        return Score.FAIL
    if tally.unknown:
        return Score.UNKNOWN
    return Score.PASS


def upper_bound(tally: Tally) -> Score:
    """VERINA's overestimate: PASS when something passed and nothing failed (or no
    tests), unless an UNKNOWN ran out of its budget (the module's difference)."""
    low = lower_bound(tally)
    if low is Score.UNKNOWN and tally.passed > 0 and not tally.spent:
        return Score.PASS
    return low


def spec_property(tally: Tally, compiled: bool = True) -> Bounded:
    """One spec property (e.g. precondition soundness) with both bounds."""
    if not compiled:
        return FAILED
    return Bounded(lower_bound(tally), upper_bound(tally))


def code_property(tally: Tally, compiled: bool = True) -> Bounded:
    """The code score; code UNKNOWN is never upgraded, so both bounds agree."""
    if not compiled:
        return FAILED
    return Bounded.exact(lower_bound(tally))


def both(*parts: Bounded) -> Bounded:
    """Conjunction of bounded scores, bound by bound."""
    return Bounded(combine(p.lower for p in parts), combine(p.upper for p in parts))


def aggregate(metrics: Mapping[str, Bounded]) -> dict[str, Bounded]:
    """Add VERINA's derived metrics to whichever base metrics were evaluated.

    ``precond_postcond`` needs both spec halves and ``code_spec`` needs code too;
    a derived metric is absent when one of its parts was not evaluated.
    """
    out = dict(metrics)
    for side in ("precond", "postcond"):
        s, c = out.get(f"{side}_sound"), out.get(f"{side}_complete")
        if s is not None and c is not None:
            out[f"{side}_sound_complete"] = both(s, c)
    pre, post = out.get("precond_sound_complete"), out.get("postcond_sound_complete")
    if pre is not None and post is not None:
        out["precond_postcond"] = both(pre, post)
        if "code" in out:
            out["code_spec"] = both(out["code"], out["precond_postcond"])
    return {m: out[m] for m in ALL_METRICS if m in out}


def compared_test_score(outcome: Outcome) -> Score:
    """One code test compared by the backend in its own language (Lean's ``==``, as
    VERINA's ``#guard``): the outcome's value is whether the output equals the
    expected one; failures read as in :func:`code_test_score`."""
    if outcome.ok:
        return Score.PASS if outcome.value is True else Score.FAIL
    return Score.UNKNOWN if outcome.inconclusive else Score.FAIL


def code_tests(
    outcomes: Sequence[Outcome], expected: Sequence[Any], return_type: ValueType,
    compared: bool = False,
) -> list[Score]:
    """Per-test code scores; lengths must match (one outcome per expected pair).
    ``compared``: the outcomes are the backend's own equality verdicts."""
    if len(outcomes) != len(expected):
        raise ValueError(f"{len(outcomes)} outcomes for {len(expected)} tests")
    if compared:
        return [compared_test_score(o) for o in outcomes]
    return [code_test_score(o, e, return_type) for o, e in zip(outcomes, expected, strict=True)]
