"""Which tasks a run served badly: the one policy, so that no task starves silently.

A task is *degraded* when its Plus holds fewer expected pairs than its original suite
(the expansion lost ground it started with: reference failures, timeouts that skipped
inputs), or when more than :data:`UNKNOWN_SHARE` of its candidate inputs stayed
unknown (the GT precondition could not be decided for them: they never become tests).
A degraded task's suites are still written, and the run's exit status is unchanged
(0 when no task failed): its suites are usable, only weaker than they should be. It is
named with the cause in the console summary, ``manifest.json`` (``degraded``) and
``report.md``, for the user to decide.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNKNOWN_SHARE = 0.2


def degraded_causes(original_pairs: int, plus_pairs: int,
                    classify_counts: Mapping[str, Any]) -> list[str]:
    """Why a task is degraded (empty: it is not), from its figures."""
    causes: list[str] = []
    if plus_pairs < original_pairs:
        causes.append(f"Plus has {plus_pairs} expected pairs, fewer than the original "
                      f"suite's {original_pairs}")
    candidates = int(classify_counts.get("candidates") or 0)
    unknown = int(classify_counts.get("unknown_inputs") or 0)
    if candidates and unknown > UNKNOWN_SHARE * candidates:
        why = sorted(((k.split(": ", 1)[1], v) for k, v in classify_counts.items()
                      if k.startswith("unknown: ") and isinstance(v, int)),
                     key=lambda kv: -kv[1])
        causes.append(f"{unknown} of {candidates} candidate inputs "
                      f"({100 * unknown / candidates:.0f} %) unknown to the GT precondition"
                      + (f" ({', '.join(f'{c} {n}' for c, n in why[:3])})" if why else ""))
    return causes
