"""Why a check stayed unknown or a run failed, as a few countable causes.

Backends explain an unknown in free text (Lean: "no Decidable instance",
"stuck reduction: ...", "maxHeartbeats", a timeout, Lean dying); stages count
those texts by cause so that a run's summary says what blocked how many
checks, per stage.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

UNKNOWN_CAUSES = (
    ("no Decidable instance", ("no decidable", "failed to synthesize")),
    ("maxHeartbeats", ("heartbeats",)),
    ("maximum recursion depth", ("maximum recursion depth",)),
    ("stuck reduction", ("stuck reduction",)),
    ("depends on sorry", ("sorry",)),
    ("skipped after timeouts", ("smaller checks of this context", "ran over their time",
                                "ran over its time")),
    ("timeout", ("timeout", "timed out")),
    ("memory", ("memory:", "exhausted its")),
    ("unknown identifier", ("unknown identifier", "unknown constant")),
    ("imports unavailable", ("imports unavailable",)),
    ("nat above the bound", ("above the bound",)),
    ("no reduction to a value", ("did not reduce", "do not reduce")),
    ("Prop-valued specification", ("prop-valued",)),
    ("unsupported", ("unsupported",)),
    ("checker failed", ("infrastructure", "not run", "no result message")),
    ("panic", ("panic:",)),
    ("candidate crashed", ("crash",)),
)


VERDICT_UNKNOWN_PREFIX = "unknown "
"""How a stage's oracle figures name UNKNOWN verdicts by cause: ``unknown gt
postcondition: stuck reduction`` (:meth:`~veriscale.backends.base.BackendStats.count_unknowns`)."""


def unknown_cause(detail: str) -> str:
    """A short, countable cause for an unknown verdict or a failed run (first match wins)."""
    low = (detail or "").lower()
    for cause, words in UNKNOWN_CAUSES:
        if any(w in low for w in words):
            return cause
    head = low.split(":", 1)[0].strip()
    return head or "other"


def cause_counts(prefix: str, details: list[str]) -> dict[str, int]:
    """``{"<prefix>: <cause>": n}``, flat so that the stage summary can total it."""
    counts = Counter(unknown_cause(d) for d in details)
    return {f"{prefix}: {cause}": n for cause, n in sorted(counts.items())}


NO_REASON = "no reason given"

BUDGET_CAUSES = frozenset({"maxHeartbeats", "timeout", "skipped after timeouts", "memory",
                           "maximum recursion depth"})
"""Causes that mean a check ran out of the budget it was given: the candidate's own
cost, which a candidate can raise at will (a deliberately slow ``decide``)."""


def spent_its_budget(detail: str) -> bool:
    """Whether an UNKNOWN's reason is a budget its check ran out of."""
    return unknown_cause(detail) in BUDGET_CAUSES


def tally_causes(counts: dict[str, int], reasons: Iterable[str]) -> None:
    """Add each reason's cause to ``counts`` (an empty reason: :data:`NO_REASON`)."""
    for why in reasons:
        cause = unknown_cause(why) if why else NO_REASON
        counts[cause] = counts.get(cause, 0) + 1
