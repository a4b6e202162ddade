"""What Lean's messages say: each check's output read as the answer of its kind.

A check's messages (errors, infos, the values ``#eval`` printed) become a verdict, a
classification, an outcome or a reason; a batch's single message is split into its
checks' answers. Pure functions: the files that produce the messages are
:mod:`veriscale.backends.lean.backend`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from veriscale.backends.base import (
    Classification,
    Label,
    Outcome,
    Verdict,
)
from veriscale.backends.lean import batching, render
from veriscale.backends.lean import data as data_route
from veriscale.backends.lean.process import LeanMessage
from veriscale.benchmark.verina import notation


@dataclass
class CheckOutput:
    """What Lean said about one check, with the context needed to explain an unknown."""

    messages: list[LeanMessage]
    failure: str = ""  # "timeout" / "infrastructure: ..." when the check got no answer
    definition_errors: list[str] = field(default_factory=list)
    header_errors: list[str] = field(default_factory=list)
    dropped_imports: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [m.text for m in self.messages if m.is_error]

    @property
    def infos(self) -> list[str]:
        return [m.text.strip() for m in self.messages if m.severity == "information"]

    def missing_reason(self) -> str:
        """Why there is no answer: the process, the definitions, or the imports."""
        if self.failure:
            return self.failure
        return self.context_reason() or "no result message"

    def context_reason(self) -> str:
        parts = []
        if self.header_errors:
            parts.append("file header failed: " + first_line(self.header_errors[0]))
        if self.definition_errors:
            parts.append("definitions failed to elaborate: " + first_line(self.definition_errors[0]))
        if self.dropped_imports and (self.definition_errors or self.errors):
            parts.append("imports unavailable here: " + ", ".join(self.dropped_imports))
        return "; ".join(parts)


def first_line(text: str, limit: int = 200) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def exceeded_heartbeats(out: CheckOutput) -> bool:
    """Did this check stop at its heartbeat budget (and nothing else go wrong)?"""
    return not out.failure and any(m.is_error and error_reason(m.text) == "maxHeartbeats"
                                   for m in out.messages)


_LIMITS = ("maxHeartbeats", "maximum recursion depth")  # Lean's budgets, not the input's fault


def error_reason(text: str) -> str:
    """A short, countable reason for a Lean error."""
    low = text.lower()
    if "heartbeats" in low:  # first: instance synthesis can run out of them too
        return "maxHeartbeats"
    if "failed to synthesize" in low and "decidable" in low:
        return "no Decidable instance"
    if "maximum recursion depth" in low:
        return "maximum recursion depth"
    if "unknown identifier" in low or "unknown constant" in low:
        return "unknown identifier: " + first_line(text)
    return "error: " + first_line(text)


PANIC = "panic"
"""The reason of a check whose evaluation printed before its result (compiled mode: a
``panic!``, ``get!`` out of bounds, ``head!`` of an empty list). The evaluated code
then returns ``default``, which is never taken for its answer: code that panicked
failed (its FAIL), a proposition that panicked is asked of the kernel."""


def runtime_output(out: CheckOutput) -> str | None:
    """What the evaluated code printed besides its result, if anything.

    A value or ``decide`` check prints exactly one information message, its result
    (last). Compiled code that panics prints the panic first, then returns ``default``.
    """
    infos = out.infos
    if len(infos) > 1 and not out.errors:
        return first_line(" | ".join(infos[:-1]), 200)
    return None


def bool_answer(out: CheckOutput) -> tuple[bool | None, str]:
    """``true``/``false`` from ``#reduce decide``/``#eval! decide``; else None and why."""
    printed = runtime_output(out)
    if printed is not None:
        return None, f"{PANIC}: {printed}"
    if out.errors:
        reason = error_reason(out.errors[0])
        extra = out.context_reason()
        return None, f"{reason} ({extra})" if extra else reason
    for text in out.infos:
        if text in ("true", "Bool.true"):
            return True, ""
        if text in ("false", "Bool.false"):
            return False, ""
    if out.infos:
        return None, "stuck reduction: " + first_line(out.infos[0], 120)
    return None, out.missing_reason()


def check_answer(out: CheckOutput) -> str | None:
    """``#check`` succeeded (None) or why not: a budget Lean ran out of says
    nothing about the input's type, so it is ``unknown``, not ``ill_typed``."""
    if out.errors:
        reason = error_reason(out.errors[0])
        if reason in _LIMITS:
            return "unknown: " + reason
        return "ill_typed: " + first_line(out.errors[0])
    if not out.infos:
        return "unknown: " + out.missing_reason()
    return None


def verina_plausible_answer(out: CheckOutput) -> str:
    """VERINA's reading of one Plausible example (``metrics.py``): ``counterexample``
    on "Found a counter-example!", ``none`` on "Unable to find a counter-example"
    or "no goals to be solved" (simp closed it), else ``unknown`` ("Gave up" too)."""
    texts = [m.text for m in out.messages]
    if any("Found a counter-example" in t for t in texts):
        return "counterexample"
    if any("Unable to find a counter-example" in t or "no goals to be solved" in t
           for t in texts):
        return "none"
    return "unknown"


def plausible_verdict(pos: str, neg: str) -> Verdict:
    """What VERINA's stage 2 says about ``P`` from Plausible on ``P`` and on ``¬P``."""
    if pos == "counterexample":
        return Verdict.ERROR if neg == "counterexample" else Verdict.FALSE
    if neg == "counterexample":
        return Verdict.TRUE
    if pos == "none":
        return Verdict.UNREFUTED if neg == "none" else Verdict.PLAUSIBLY_TRUE
    return Verdict.PLAUSIBLY_FALSE if neg == "none" else Verdict.UNKNOWN


def plausible_answer(out: CheckOutput) -> str:
    """``counterexample``, ``none`` (no counter-example found) or ``unknown``."""
    texts = [m.text for m in out.messages]
    if any("Found a counter-example" in t for t in texts):
        return "counterexample"
    if any(("Unable to find a counter-example" in t or "no goals to be solved" in t
            or "Gave up" in t) for t in texts):
        return "none"
    if out.messages and not out.errors:
        return "none"
    return "unknown"


# Lean errors that a missing import (Mathlib names, instances, notation) can cause.
_MISSING_NAME = re.compile(
    r"unknown (identifier|constant|namespace|attribute|tactic)|failed to synthesize"
    r"|unexpected token '[^']*[^\x00-\x7f][^']*'")


def broken_definitions(out: CheckOutput, limit: int = 200) -> str:
    """Definitions failed: the candidate's fault (``compile``), unless this Lean lacks
    imports the file asked for and the error is one a missing import can cause (an
    unknown name, a missing instance, an unknown non-ASCII token: Mathlib notation),
    when nobody can tell (``unsupported``). A plain syntax error is always the
    candidate's."""
    first = first_line(out.definition_errors[0], limit)
    if out.dropped_imports and any(_MISSING_NAME.search(e) for e in out.definition_errors):
        return f"unsupported: imports unavailable here ({', '.join(out.dropped_imports)}): {first}"
    return "compile: " + first


def batch_answers(messages: Sequence[LeanMessage], first: int, n: int,
                   checked: bool = False) -> list[tuple[LeanMessage, ...] | None]:
    """Each term's answer from a batched ``#eval!`` (``checked``: ``#check``s, as one
    silent ``example``, which Lean is known to have got past) whose
    ``n`` terms start on line ``first``, one a line: its printed result, as the message
    a single check would print; its own elaboration errors (the list was then not
    evaluated); ``()``: ask again in a batch (another term failed); ``None``: ask again
    on its own (the batch failed as a whole: an error outside the terms, a panic,
    anything unexpected). A ``#check`` term without an error of its own elaborated:
    it is answered whatever the others did. Warnings are dropped, as a single check's
    reading ignores them."""
    errors = [m for m in messages if m.is_error]
    infos = [m for m in messages if m.severity == "information"]
    if checked:  # silent where it elaborated (the caller knows Lean got past it)
        ok = LeanMessage("information", first, 0, first, 0, "(checked in a batch)")
    if errors:
        own: dict[int, list[LeanMessage]] = {}
        for m in errors:
            if not first <= m.line < first + n:
                return [None] * n
            own.setdefault(m.line - first, []).append(m)
        again: tuple[LeanMessage, ...] = (ok,) if checked else ()
        return [tuple(own[k]) if k in own else again for k in range(n)]
    if checked:
        return [(ok,)] * n
    parts = batching.split_list(infos[0].text) if len(infos) == 1 else None
    if parts is None or len(parts) != n:
        return [None] * n
    m = infos[0]
    return [(LeanMessage("information", m.line, m.column, m.end_line, m.end_column, t),)
            for t in parts]


def data_failed(messages: Sequence[LeanMessage]) -> bool:
    """Whether a data batch's decoding failed (:data:`data.PRELUDE` panics so)."""
    return any(data_route.FAILED in m.text for m in messages)


USES_SORRY = re.compile(r"declaration uses .sorry.")
"""Lean's warning on a definition whose value holds a proof hole. No definition may:
whatever elaborated to it (``sorry``, ``admit``, the ``stop`` tactic, a macro of a
library's) the screen may not know by name, so the elaborator's own word decides."""



def kernel_answer(pos: CheckOutput, neg: CheckOutput) -> bool | None:
    """``P`` / ``¬P`` by ``decide +kernel``: which one elaborated cleanly, if exactly one."""

    def proved(out: CheckOutput) -> bool:
        return (not out.failure and not out.errors
                and not any("sorry" in m.text for m in out.messages))

    p, n = proved(pos), proved(neg)
    return None if p == n else p


def classify_answer(outs: list[CheckOutput]) -> tuple[bool | None, str]:
    """(syntax check, decision) → the decision, or ``ill_typed`` when the input is."""
    check, decision = outs
    why = check_answer(check)
    if why is not None and why.startswith("ill_typed"):
        return None, why
    return bool_answer(decision)


def classify_decision_answer(out: CheckOutput) -> tuple[bool | None, str]:
    """The decision of a classification asked without the syntax filter: an error of
    its own term that is no budget, no missing ``Decidable`` instance and no missing
    name is the input failing to elaborate (``ill_typed``), as the filter's ``#check``
    would have said; through a batch helper, which holds the ``decide``, a term's error
    can only be its literals'."""
    if (out.errors and runtime_output(out) is None and not out.definition_errors
            and error_reason(out.errors[0]).startswith("error: ")):
        return None, "ill_typed: " + first_line(out.errors[0])
    return bool_answer(out)


def compile_answer(out: CheckOutput) -> str | None:
    if out.definition_errors:
        return broken_definitions(out, 500)
    if out.errors:
        return "compile: " + first_line(out.errors[0], 500)
    if not out.infos:
        return "unknown: " + out.missing_reason()
    return None


def command_kind(command: str) -> str:
    """``#reduce decide (F_precond``, ``#reduce (F`` ...: which function a check evaluates."""
    head = render.PROBE.sub("", command.split("\n", 1)[0], count=1)
    words = head.replace("(", " ( ").split()
    for k, word in enumerate(words):
        if word not in ("#reduce", "#eval!", "#check", "decide", "(", "example", ":", "¬"):
            return " ".join(words[: k + 1])
    return head


def protocol_answer(op: str, raw: Any) -> Any:
    """What the protocol returns for one item of ``op``, from its plan's answer."""
    if op in ("precondition_holds", "postcondition_holds"):
        # A proposition has an answer wherever it panicked in compiled code (Lean's
        # logic gives `a[i]!` out of bounds a value); the kernel was asked it
        # (kernel_route), and one it could not decide either is UNKNOWN, not the
        # specification's ERROR.
        return Verdict.of(raw[0])
    if op == "classify":
        return classification(*raw)
    return raw


def classification(b: bool | None, why: str) -> Classification:
    if b is None:
        stage = "syntax" if why.startswith("ill_typed") else "decide"
        return Classification(Label.UNKNOWN, stage, why)
    return Classification(Label.EXPECTED if b else Label.UNEXPECTED, "decide")


def equality_outcome(out: CheckOutput) -> Outcome:
    """``Outcome(True, value=bool)`` from a printed ``==``; failures say why."""
    b, why = bool_answer(out)
    if b is not None:
        return Outcome(True, value=b)
    if why.startswith(PANIC + ":"):  # the code under test failed: its FAIL
        return Outcome(False, error="crash: " + why)
    if out.definition_errors:
        return Outcome(False, error=broken_definitions(out))
    if out.failure == "timeout":
        return Outcome(False, error="timeout")
    if out.failure:
        return Outcome(False, error=out.failure)
    return Outcome(False, error="unknown: " + why)


def value_outcome(out: CheckOutput, ret: Any, kernel: bool) -> Outcome:
    """The printed value of a call, parsed by type; failures say why."""
    printed = runtime_output(out)
    if printed is not None:  # the code failed (its ``default`` result is not its answer)
        return Outcome(False, error=f"crash: {PANIC}: {printed}")
    if out.errors:
        if out.definition_errors:
            return Outcome(False, error=broken_definitions(out))
        reason = error_reason(out.errors[0])
        if reason.startswith(("error:", "unknown identifier")):
            return Outcome(False, error="compile: " + reason)  # the call did not elaborate
        return Outcome(False, error="unknown: " + reason)
    if not out.infos:
        reason = out.missing_reason()
        if out.failure == "timeout":
            return Outcome(False, error="timeout")
        if out.failure:
            return Outcome(False, error=out.failure)
        if out.definition_errors:
            return Outcome(False, error=broken_definitions(out))
        return Outcome(False, error="unknown: " + reason)
    text = out.infos[-1]
    if kernel and render.has_float(ret):  # Float and opaque types: no comparable normal form
        return Outcome(False, error="unknown: kernel mode cannot evaluate a value of type "
                       f"{ret}: {first_line(text, 80)}")
    if "sorry" in text:
        return Outcome(False, error="unknown: result depends on sorry: " + first_line(text, 120))
    try:
        if kernel:
            _, shown = render.projection(ret, "x")
            value = render.unproject(ret, notation.parse(shown, text))
        else:
            value = notation.parse(ret, text)
    except Exception as exc:
        if out.definition_errors:  # e.g. a library name this Lean lacks: the code is broken
            return Outcome(False, error=broken_definitions(out))
        stuck = kernel and not render.has_float(ret)
        what = "stuck reduction" if stuck else "unparsable output"
        return Outcome(False, error=f"unknown: {what}: {first_line(text, 120)} ({exc})")
    return Outcome(True, value=value)
