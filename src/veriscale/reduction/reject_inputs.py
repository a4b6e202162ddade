"""Boundary-preserving reduction of unexpected (reject) inputs (paper §3.2).

This reproduces the authors' released selection (``reduce_unexpected_inputs.py``
of the VeriScale repository) *exactly*: given the same reject inputs it keeps the
same inputs in the same order. Replaying that code on VerinaPlus reproduces the
released VerinaLite ``reject_inputs.json`` for all 189 tasks, so matching it
keeps our Lite suites comparable with theirs.

Because of that, the algorithm works on what they worked on: rows of a VERINA
``reject_inputs.json`` (``{"input": {"param": json_value}}``, extra keys are
carried along but ignored), and it inspects the VERINA-JSON values the way
their code does, quirks included:

* a *numeric scalar* is a JSON int (not a bool) or a string matching
  ``[+-]?\\d+`` after stripping whitespace (so a ``String`` parameter whose text
  is ``"12"`` counts as a number);
* a *sequence literal* is a JSON list or a string ``[..]`` / ``#[..]``, split
  naively on commas, so nested lists and char lists become ``seq:mixed`` with a
  comma-count length;
* only numeric sequences and numeric scalars produce critical buckets; strings,
  chars, floats and bools produce none.

Stages, in order: ``keep_all`` (≤ budget unique inputs: all of them, by
priority), ``critical_boundary`` (per critical bucket in priority order, the
bucket's best row unless it was already taken), ``diversity_fill`` (one
representative per (shape, features) signature, by priority) and
``fallback_fill`` (the rest by priority). The result lists the critical rows
sorted by priority, then the diversity rows, then the fallback rows.

Use :func:`reduce_reject_inputs` on rows, or :func:`reduce_canonical_inputs`
on canonical :data:`Input` tuples (encoded with ``Signature.encode_input``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from veriscale.benchmark.model import Input, Signature

KEEP_REJECT_INPUTS_PER_TASK = 50
KEEP_PER_CRITICAL_BUCKET = 1

STAGE_KEEP_ALL = "keep_all"
STAGE_CRITICAL = "critical_boundary"
STAGE_DIVERSITY = "diversity_fill"
STAGE_FALLBACK = "fallback_fill"

#: Kind priority of critical buckets (lower is more critical), as released.
CRITICAL_BUCKET_PRIORITY: dict[str, int] = {
    "empty_seq": 0,
    "seq_lengths_mismatch": 1,
    "index_negative": 2,
    "index_zero": 3,
    "scalar_negative": 4,
    "scalar_zero": 5,
    "seq_contains_zero": 6,
    "seq_contains_negative": 7,
    "seq_has_duplicate": 8,
    "seq_unsorted": 9,
    "singleton_seq": 10,
}
UNKNOWN_PRIORITY = 100
"""Priority of an unknown bucket kind, and the critical rank of a row with no bucket."""

INDEX_LIKE_NAMES = frozenset(
    {"i", "j", "k", "idx", "index", "pos", "position", "left", "right", "start", "end"}
)
LARGE_ABS = 10**6

_INT_TEXT = re.compile(r"[+-]?\d+")


def canonical_json(value: Any) -> str:
    """The released code's ``stable_json``: sorted keys, compact, non-ASCII kept.

    Used for deduplication and as the last priority key. ``ensure_ascii=False``
    matters: it changes the code-point order of inputs holding non-ASCII text.
    """
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------- values


def parse_numeric(value: Any) -> int | None:
    """A JSON int (not bool) or an integer-looking string, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if _INT_TEXT.fullmatch(text):
            return int(text)
    return None


def parse_sequence_literal(value: Any) -> list[Any] | None:
    """A JSON list as is; a ``[..]``/``#[..]`` string split naively on commas."""
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("#[") and text.endswith("]"):
        body = text[2:-1].strip()
    elif text.startswith("[") and text.endswith("]"):
        body = text[1:-1].strip()
    else:
        return None
    if not body:
        return []
    return [part.strip() for part in body.split(",")]


def parse_numeric_sequence(value: Any) -> list[int] | None:
    """A sequence literal whose every item is a numeric scalar, else None."""
    items = parse_sequence_literal(value)
    if items is None:
        return None
    numbers: list[int] = []
    for item in items:
        number = parse_numeric(item)
        if number is None:
            return None
        numbers.append(number)
    return numbers


def value_kind_and_length(value: Any) -> tuple[str, int | None]:
    """(kind, length) with kind in bool, scalar:int, seq:int, seq:mixed, string, unknown."""
    if isinstance(value, bool):
        return "bool", None
    if parse_numeric(value) is not None:
        return "scalar:int", None
    numbers = parse_numeric_sequence(value)
    if numbers is not None:
        return "seq:int", len(numbers)
    items = parse_sequence_literal(value)
    if items is not None:
        return "seq:mixed", len(items)
    if isinstance(value, str):
        return "string", len(value)
    return "unknown", None


def length_bucket(length: int | None) -> str:
    if length is None:
        return "len=NA"
    if length <= 3:
        return f"len={length}"
    if length <= 5:
        return "len=4-5"
    if length <= 10:
        return "len=6-10"
    return "len=>10"


def collect_numbers(value: Any) -> list[int]:
    """Every number in a value, recursing into JSON lists and objects only.

    A string that is not a numeric scalar or numeric sequence literal (e.g.
    ``"[[1, 2]]"``) contributes nothing, as in the released code.
    """
    number = parse_numeric(value)
    if number is not None:
        return [number]
    numbers = parse_numeric_sequence(value)
    if numbers is not None:
        return numbers
    if isinstance(value, dict):
        return [n for item in value.values() for n in collect_numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in collect_numbers(item)]
    return []


# --------------------------------------------------------------------------- signatures


def is_index_like(name: str) -> bool:
    lower = name.lower()
    return lower in INDEX_LIKE_NAMES or lower.endswith("idx") or lower.endswith("index")


def bucket_sort_key(bucket: str) -> tuple[int, str]:
    """Bucket ids are ``kind:param`` (or a bare kind): by kind priority, then id."""
    kind = bucket.split(":", 1)[0]
    return (CRITICAL_BUCKET_PRIORITY.get(kind, UNKNOWN_PRIORITY), bucket)


def input_shape(inp: Mapping[str, Any]) -> str:
    """``name=kind:lenbucket`` per parameter, sorted by name, joined by ``|``."""
    parts = []
    for name in sorted(inp):
        kind, length = value_kind_and_length(inp[name])
        parts.append(f"{name}={kind}:{length_bucket(length)}")
    return "|".join(parts)


def input_features(inp: Mapping[str, Any]) -> tuple[str, ...]:
    """Sorted structural features: per numeric sequence, and over all numbers."""
    features: set[str] = set()
    seq_lengths: list[int] = []
    for name, value in inp.items():
        nums = parse_numeric_sequence(value)
        if nums is not None:
            seq_lengths.append(len(nums))
            distinct = len(set(nums))
            if len(nums) == 0:
                features.add(f"{name}:empty_seq")
            if len(nums) == 1:
                features.add(f"{name}:singleton_seq")
            if len(nums) > 1 and distinct < len(nums):
                features.add(f"{name}:has_duplicate")
            if nums and distinct == 1:
                features.add(f"{name}:all_same")
            if len(nums) > 1 and nums == sorted(nums):
                features.add(f"{name}:sorted_asc")
            if len(nums) > 1 and nums == sorted(nums, reverse=True):
                features.add(f"{name}:sorted_desc")
        numbers = collect_numbers(value)
        if 0 in numbers:
            features.add("has_zero")
        if 1 in numbers:
            features.add("has_one")
        if -1 in numbers:
            features.add("has_minus_one")
        if any(n < 0 for n in numbers):
            features.add("has_negative")
        if any(abs(n) >= LARGE_ABS for n in numbers):
            features.add("has_large_abs")
    if len(seq_lengths) >= 2:
        features.add("seq_lengths_match" if len(set(seq_lengths)) == 1 else "seq_lengths_mismatch")
    return tuple(sorted(features))


def critical_buckets(inp: Mapping[str, Any]) -> tuple[str, ...]:
    """The critical boundary buckets an input falls in, most critical first."""
    buckets: set[str] = set()
    seq_lengths: list[int] = []
    for name, value in inp.items():
        nums = parse_numeric_sequence(value)
        if nums is not None:
            seq_lengths.append(len(nums))
            if len(nums) == 0:
                buckets.add(f"empty_seq:{name}")
            if len(nums) == 1:
                buckets.add(f"singleton_seq:{name}")
            if 0 in nums:
                buckets.add(f"seq_contains_zero:{name}")
            if any(n < 0 for n in nums):
                buckets.add(f"seq_contains_negative:{name}")
            if len(nums) > 1 and len(set(nums)) < len(nums):
                buckets.add(f"seq_has_duplicate:{name}")
            if len(nums) > 1 and nums != sorted(nums):
                buckets.add(f"seq_unsorted:{name}")
        scalar = parse_numeric(value)
        if scalar is not None:
            prefix = "index" if is_index_like(name) else "scalar"
            if scalar < 0:
                buckets.add(f"{prefix}_negative:{name}")
            if scalar == 0:
                buckets.add(f"{prefix}_zero:{name}")
    if len(seq_lengths) >= 2 and len(set(seq_lengths)) > 1:
        buckets.add("seq_lengths_mismatch")
    return tuple(sorted(buckets, key=bucket_sort_key))


def input_size(inp: Mapping[str, Any]) -> int:
    """Sum of sequence/string lengths, 1 for anything without a length."""
    total = 0
    for value in inp.values():
        _, length = value_kind_and_length(value)
        total += length if length is not None else 1
    return total


@dataclass(frozen=True)
class InputSignature:
    """What the reduction sees of one input."""

    input_shape: str
    input_features: tuple[str, ...]
    critical_buckets: tuple[str, ...]

    @property
    def diversity_key(self) -> tuple[str, tuple[str, ...]]:
        return (self.input_shape, self.input_features)

    @property
    def critical_rank(self) -> int:
        if not self.critical_buckets:
            return UNKNOWN_PRIORITY
        return min(bucket_sort_key(b)[0] for b in self.critical_buckets)

    def to_json(self) -> dict[str, Any]:
        return {
            "input_shape": self.input_shape,
            "input_features": list(self.input_features),
            "critical_buckets": list(self.critical_buckets),
        }


def input_signature(inp: Mapping[str, Any]) -> InputSignature:
    return InputSignature(input_shape(inp), input_features(inp), critical_buckets(inp))


def row_priority(inp: Mapping[str, Any]) -> tuple[int, int, int, str]:
    """Ascending is better: most critical, smallest, most feature-rich, then text.

    The released code's last key is ``stable_json(row)``: of the row
    ``{"input": ...}``, or (when re-sorting the critical picks) of the row with
    its metadata, whose first sorted key is also ``input``. Complete JSON
    objects are never strict prefixes of one another, so both orders equal the
    order of ``canonical_json(input)`` used here — for released-form rows. Rows
    with extra keys are ordered by their input alone, so metadata never changes
    a selection.
    """
    sig = input_signature(inp)
    return (
        sig.critical_rank,
        input_size(inp),
        -(len(sig.input_features) + len(sig.critical_buckets)),
        canonical_json(inp),
    )


# --------------------------------------------------------------------------- reduction


@dataclass(frozen=True)
class RejectSelection:
    """Why one input was kept: its stage, the bucket that picked it, its signature.

    ``index`` is the position of the (first occurrence of the) input in the rows
    given to :func:`reduce_reject_inputs`. ``bucket`` is the critical bucket id
    for ``critical_boundary``, the diversity key as canonical JSON for
    ``diversity_fill``, and ``""`` otherwise (as in the released log).
    """

    index: int
    stage: str
    bucket: str
    signature: InputSignature
    input: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "input": dict(self.input),
            "stage": self.stage,
            "signature": self.signature.to_json(),
        }
        if self.bucket:
            out["bucket"] = self.bucket
        return out


@dataclass
class ReductionResult:
    """The kept rows (as given) in the released order, with one log entry each."""

    selected: list[dict[str, Any]]
    log: list[RejectSelection]
    raw_count: int
    unique_count: int
    budget: int
    skipped: list[int] = field(default_factory=list)  # rows without a dict "input"

    @property
    def indices(self) -> list[int]:
        return [entry.index for entry in self.log]

    @property
    def stage_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for entry in self.log:
            counts[entry.stage] = counts.get(entry.stage, 0) + 1
        return counts

    def summary(self) -> dict[str, Any]:
        return {
            "raw_count": self.raw_count,
            "unique_count": self.unique_count,
            "kept_count": len(self.selected),
            "budget": self.budget,
            "stage_counts": self.stage_counts,
            "skipped": list(self.skipped),
        }

    def log_dict(self) -> dict[str, Any]:
        """JSON-ready summary plus the per-row log (stage, bucket, signature)."""
        return {**self.summary(), "selection": [entry.to_json() for entry in self.log]}


@dataclass(frozen=True)
class _Row:
    index: int
    row: Mapping[str, Any]
    input: Mapping[str, Any]
    key: str
    signature: InputSignature
    priority: tuple[int, int, int, str]


def _make_row(index: int, row: Mapping[str, Any]) -> _Row:
    inp = row["input"]
    return _Row(index, row, inp, canonical_json(inp), input_signature(inp), row_priority(inp))


def _dedup(rows: Sequence[Any]) -> tuple[list[_Row], list[int]]:
    """Unique rows by canonical input JSON (first occurrence wins).

    Rows that are not ``{"input": {...}}`` are skipped, as the released loader
    drops them.
    """
    seen: set[str] = set()
    unique: list[_Row] = []
    skipped: list[int] = []
    for index, raw in enumerate(rows):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("input"), Mapping):
            skipped.append(index)
            continue
        row = _make_row(index, raw)
        if row.key in seen:
            continue
        seen.add(row.key)
        unique.append(row)
    return unique, skipped


def _critical_stage(rows: list[_Row], keep_per_bucket: int) -> list[tuple[_Row, str]]:
    """Per bucket (priority order): its best ``keep_per_bucket`` rows, minus taken ones.

    As released, a bucket whose best row was already taken by an earlier bucket
    does not fall through to its second-best row.
    """
    members: dict[str, list[_Row]] = {}
    for row in rows:
        for bucket in row.signature.critical_buckets:
            members.setdefault(bucket, []).append(row)
    picked: list[tuple[_Row, str]] = []
    taken: set[str] = set()
    for bucket in sorted(members, key=bucket_sort_key):
        best = sorted(members[bucket], key=lambda r: r.priority)[:keep_per_bucket]
        for row in best:
            if row.key in taken:
                continue
            taken.add(row.key)
            picked.append((row, bucket))
    picked.sort(key=lambda item: item[0].priority)
    return picked


def _diversity_stage(rows: list[_Row], taken: set[str]) -> list[tuple[_Row, str]]:
    """One representative (best priority) per diversity key, in priority order."""
    groups: dict[tuple[str, tuple[str, ...]], _Row] = {}
    for row in rows:
        if row.key in taken:
            continue
        key = row.signature.diversity_key
        current = groups.get(key)
        if current is None or row.priority < current.priority:
            groups[key] = row
    reps = sorted(groups.items(), key=lambda item: item[1].priority)
    return [(row, canonical_json([key[0], list(key[1])])) for key, row in reps]


def reduce_reject_inputs(
    rows: Sequence[Mapping[str, Any]],
    budget: int = KEEP_REJECT_INPUTS_PER_TASK,
    keep_per_bucket: int = KEEP_PER_CRITICAL_BUCKET,
) -> ReductionResult:
    """Keep at most ``budget`` reject inputs, the released way, in the released order.

    ``rows`` are ``{"input": {"param": json_value}, ...}`` as in a VERINA
    ``reject_inputs.json``; the kept rows come back as given. Exact duplicate
    inputs (by canonical JSON) count once; rows without a dict ``input`` are
    skipped and reported in ``skipped``.
    """
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    if keep_per_bucket < 1:
        raise ValueError(f"keep_per_bucket must be >= 1, got {keep_per_bucket}")
    unique, skipped = _dedup(rows)

    def result(chosen: list[tuple[_Row, str, str]]) -> ReductionResult:
        return ReductionResult(
            selected=[dict(row.row) for row, _, _ in chosen],
            log=[RejectSelection(row.index, stage, bucket, row.signature, row.input)
                 for row, stage, bucket in chosen],
            raw_count=len(rows),
            unique_count=len(unique),
            budget=budget,
            skipped=skipped,
        )

    if len(unique) <= budget:
        ordered = sorted(unique, key=lambda r: r.priority)
        return result([(row, STAGE_KEEP_ALL, "") for row in ordered])

    chosen = [(row, STAGE_CRITICAL, bucket) for row, bucket in _critical_stage(unique, keep_per_bucket)]
    if len(chosen) >= budget:
        return result(chosen[:budget])

    taken = {row.key for row, _, _ in chosen}
    for row, bucket in _diversity_stage(unique, taken):
        if len(chosen) >= budget:
            break
        chosen.append((row, STAGE_DIVERSITY, bucket))
        taken.add(row.key)
    for row in sorted(unique, key=lambda r: r.priority):
        if len(chosen) >= budget:
            break
        if row.key in taken:
            continue
        chosen.append((row, STAGE_FALLBACK, ""))
        taken.add(row.key)
    return result(chosen)


def reduce_canonical_inputs(
    signature: Signature,
    inputs: Sequence[Input],
    budget: int = KEEP_REJECT_INPUTS_PER_TASK,
    keep_per_bucket: int = KEEP_PER_CRITICAL_BUCKET,
) -> tuple[list[Input], ReductionResult]:
    """Reduce canonical inputs by their VERINA-JSON encoding (what the authors saw).

    Returns the kept canonical inputs in the released order, and the full result.
    Canonical inputs that encode to the same JSON count once.
    """
    encoded = [{"input": signature.encode_input(inp)} for inp in inputs]
    res = reduce_reject_inputs(encoded, budget=budget, keep_per_bucket=keep_per_bucket)
    return [inputs[i] for i in res.indices], res
