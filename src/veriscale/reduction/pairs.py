"""Adversary-killing reduction of expected pairs (paper §3.2).

Every adversary is a mutant; a pair *kills* an adversary when the adversary's
output on the pair's input differs from the expected output (and is rejected
by the GT postcondition). The reduction keeps every adversary that the full
suite kills killed, then spends the rest of the budget on the strongest pairs.
It follows the authors' released ``reduce_pairs.py``:

1. **Set cover.** The universe is every adversary killed by some row. Repeat:
   among the rows that newly cover something, take the one with the largest
   ``(|newly covered|, |killed|, -case_index)`` — so ties go to the lowest
   case index. *All* cover rows are kept even beyond the budget
   (``set_cover_exceeds_budget`` says so): losing a killed adversary would
   weaken the suite, which is what the reduction promises not to do.
2. **Fill.** ``max(0, budget - kept)`` more rows, from the rest, sorted by
   ``(-|killed|, -record_count, case_index)`` (``supplemental_top_k``).
3. The kept rows are returned sorted by ``case_index``; each keeps its payload
   (its unexpected outputs) whole.

Unlike the released VerinaLite — which afterwards re-added every original
VERINA row outside the algorithm — the rows are part of the algorithm here:
``keep_original=True`` (the default, :data:`KEEP_ORIGINAL`) first keeps every row whose provenance is
``"original"`` (reason ``original``, their kills count as covered), then runs
the set cover for what they leave uncovered, then fills the *remaining*
budget. The budget includes the original rows; if they alone exceed it, all
are kept and ``original_exceeds_budget`` is set. (``original`` rows are those
whose ``PairRow.original`` is true, i.e. whose provenance is ``"original"``.)

Everything is deterministic and independent of the order of ``rows``: the
only tie-break is ``case_index``, which must be unique.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

MAX_PAIRS_PER_TASK = 50
KEEP_ORIGINAL = True
"""The one default of ``keep_original`` (the released VerinaLite holds every original row)."""

REASON_ORIGINAL = "original"
REASON_SET_COVER = "set_cover"
REASON_FILL = "supplemental_top_k"

PROVENANCE_ORIGINAL = "original"
"""The ``ExpectedPair.provenance`` of a row of the original benchmark."""


class PairRow(NamedTuple):
    """One expected pair as the reduction sees it.

    ``kills``: ids of the adversaries this pair kills. ``record_count``: how many
    kill records (adversary, unexpected output) the pair produced, counting
    repeats — the authors' second fill key (``map_record_count``).
    ``original``: the row comes from the original benchmark (for ``keep_original``).
    """

    case_index: int
    kills: frozenset[str]
    record_count: int = 0
    payload: Any = None
    original: bool = False


@dataclass(frozen=True)
class PairSelection:
    """Why one row was kept, in selection order (1-based)."""

    case_index: int
    reason: str
    selection_order: int
    newly_covered: tuple[str, ...]
    kill_count: int
    record_count: int

    def to_json(self) -> dict[str, Any]:
        return {
            "case_index": self.case_index,
            "reason": self.reason,
            "selection_order": self.selection_order,
            "newly_covered": list(self.newly_covered),
            "kill_count": self.kill_count,
            "record_count": self.record_count,
        }


@dataclass
class PairReductionResult:
    """Kept rows (sorted by case_index) and the log of how they were chosen."""

    rows: list[PairRow]
    log: list[PairSelection]
    budget: int
    universe_size: int
    uncovered: tuple[str, ...] = ()
    set_cover_count: int = 0
    original_count: int = 0
    set_cover_exceeds_budget: bool = False
    original_exceeds_budget: bool = False
    candidate_count: int = 0
    reasons: dict[int, str] = field(default_factory=dict)

    @property
    def selected(self) -> list[int]:
        """Kept case indices, ascending."""
        return [row.case_index for row in self.rows]

    @property
    def killed(self) -> frozenset[str]:
        return frozenset().union(*(row.kills for row in self.rows))

    def summary(self) -> dict[str, Any]:
        return {
            "candidate_count": self.candidate_count,
            "kept_count": len(self.rows),
            "selected": self.selected,
            "budget": self.budget,
            "universe_size": self.universe_size,
            "covered_count": len(self.killed),
            "uncovered": list(self.uncovered),
            "original_count": self.original_count,
            "set_cover_count": self.set_cover_count,
            "supplemental_count": len(self.rows) - self.set_cover_count - self.original_count,
            "set_cover_exceeds_budget": self.set_cover_exceeds_budget,
            "original_exceeds_budget": self.original_exceeds_budget,
        }

    def log_dict(self) -> dict[str, Any]:
        """JSON-ready summary plus the selection log, in selection order."""
        return {**self.summary(), "selection": [entry.to_json() for entry in self.log]}


def _normalise(rows: Iterable[PairRow | tuple[Any, ...]]) -> list[PairRow]:
    out: list[PairRow] = []
    seen: set[int] = set()
    for raw in rows:
        row = raw if isinstance(raw, PairRow) else PairRow(*raw)
        if isinstance(row.case_index, bool) or not isinstance(row.case_index, int):
            raise TypeError(f"case_index must be an int, got {row.case_index!r}")
        if row.case_index in seen:
            raise ValueError(f"duplicate case_index {row.case_index}")
        seen.add(row.case_index)
        out.append(row._replace(kills=frozenset(row.kills), record_count=int(row.record_count)))
    out.sort(key=lambda r: r.case_index)
    return out


def greedy_set_cover(
    rows: Sequence[PairRow], covered: frozenset[str] = frozenset()
) -> list[tuple[PairRow, frozenset[str]]]:
    """Greedy cover of every adversary killed by ``rows`` and not yet ``covered``.

    Returns (row, newly covered ids) in selection order. The key
    ``(|new|, |kills|, -case_index)`` is total because case indices are unique,
    so the result does not depend on the order of ``rows``.
    """
    done = set(covered)
    universe = set().union(*(r.kills for r in rows)) if rows else set()
    remaining = list(rows)
    picked: list[tuple[PairRow, frozenset[str]]] = []
    while not universe <= done:
        best: PairRow | None = None
        best_key: tuple[int, int, int] | None = None
        for row in remaining:
            new = len(row.kills - done)
            if not new:
                continue
            key = (new, len(row.kills), -row.case_index)
            if best_key is None or key > best_key:
                best, best_key = row, key
        if best is None:  # cannot happen: every uncovered id is killed by some row
            break
        newly = frozenset(best.kills - done)
        picked.append((best, newly))
        done |= newly
        remaining = [r for r in remaining if r.case_index != best.case_index]
    return picked


def fill_order_key(row: PairRow) -> tuple[int, int, int]:
    """Strongest first: most adversaries killed, most kill records, lowest index."""
    return (-len(row.kills), -row.record_count, row.case_index)


def reduce_pairs(
    rows: Iterable[PairRow | tuple[Any, ...]],
    budget: int = MAX_PAIRS_PER_TASK,
    keep_original: bool = KEEP_ORIGINAL,
) -> PairReductionResult:
    """Keep every killed adversary killed, then fill up to ``budget`` pairs.

    ``rows`` are :class:`PairRow` or plain tuples
    ``(case_index, kills, record_count, payload[, original])``.
    """
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    candidates = _normalise(rows)
    universe = frozenset().union(*(r.kills for r in candidates)) if candidates else frozenset()

    log: list[PairSelection] = []
    kept: dict[int, PairRow] = {}

    def keep(row: PairRow, reason: str, newly: Iterable[str]) -> None:
        kept[row.case_index] = row
        log.append(
            PairSelection(
                row.case_index, reason, len(log) + 1, tuple(sorted(newly)),
                len(row.kills), row.record_count,
            )
        )

    covered: frozenset[str] = frozenset()
    originals: list[PairRow] = []
    if keep_original:
        originals = [r for r in candidates if r.original]
        for row in originals:
            keep(row, REASON_ORIGINAL, row.kills - covered)
            covered |= row.kills

    rest = [r for r in candidates if r.case_index not in kept]
    cover = greedy_set_cover(rest, covered)
    for row, newly in cover:
        keep(row, REASON_SET_COVER, newly)
        covered |= newly

    room = max(0, budget - len(kept))
    fill = sorted((r for r in candidates if r.case_index not in kept), key=fill_order_key)
    for row in fill[:room]:
        keep(row, REASON_FILL, ())

    final = sorted(kept.values(), key=lambda r: r.case_index)
    return PairReductionResult(
        rows=final,
        log=log,
        budget=budget,
        universe_size=len(universe),
        uncovered=tuple(sorted(universe - covered)),
        set_cover_count=len(cover),
        original_count=len(originals),
        set_cover_exceeds_budget=len(originals) + len(cover) > budget,
        original_exceeds_budget=len(originals) > budget,
        candidate_count=len(candidates),
        reasons={entry.case_index: entry.reason for entry in log},
    )


def pair_rows(
    tests: Sequence[Any],
    kills: Sequence[Iterable[str]],
    record_counts: Sequence[int] | None = None,
) -> list[PairRow]:
    """Rows for :func:`reduce_pairs` from a suite's test cases and their kill sets.

    ``tests[i]`` becomes case ``i`` with payload ``tests[i]``; it is an original
    row when ``tests[i].provenance == "original"`` (``ExpectedPair`` has one).
    ``record_counts[i]`` defaults to the number of unexpected outputs of the
    test, the closest thing to the authors' per-input record count.
    """
    if len(kills) != len(tests):
        raise ValueError(f"{len(tests)} tests but {len(kills)} kill sets")
    if record_counts is not None and len(record_counts) != len(tests):
        raise ValueError(f"{len(tests)} tests but {len(record_counts)} record counts")
    rows = []
    for i, (test, killed) in enumerate(zip(tests, kills, strict=True)):
        if record_counts is not None:
            records = int(record_counts[i])
        else:
            records = len(getattr(test, "unexpected", ()) or ())
        original = getattr(test, "provenance", "") == PROVENANCE_ORIGINAL
        rows.append(PairRow(i, frozenset(killed), records, test, original))
    return rows
